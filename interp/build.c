/* build.c: under construction */
typedef int build_placeholder_;
