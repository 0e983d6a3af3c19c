/* ir.c: under construction */
typedef int ir_placeholder_;
