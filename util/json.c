/* json.c: under construction */
typedef int json_placeholder_;
