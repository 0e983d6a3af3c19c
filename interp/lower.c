/* lower.c: under construction */
typedef int lower_placeholder_;
