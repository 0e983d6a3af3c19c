/* exec.c: under construction */
typedef int exec_placeholder_;
