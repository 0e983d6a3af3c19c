/* cir_parse.c: under construction */
typedef int cir_parse_placeholder_;
