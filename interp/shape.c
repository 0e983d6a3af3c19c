/* shape.c: under construction */
typedef int shape_placeholder_;
