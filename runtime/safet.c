/* safet.c: under construction */
typedef int safet_placeholder_;
