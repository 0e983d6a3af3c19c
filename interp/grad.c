/* grad.c: under construction */
typedef int grad_placeholder_;
