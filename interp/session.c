/* session.c: under construction */
typedef int session_placeholder_;
