/* init.c: under construction */
typedef int init_placeholder_;
