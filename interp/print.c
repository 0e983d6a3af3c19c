/* print.c: under construction */
typedef int print_placeholder_;
