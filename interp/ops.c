/* ops.c: under construction */
typedef int ops_placeholder_;
