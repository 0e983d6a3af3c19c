/* prog.c: under construction */
typedef int prog_placeholder_;
