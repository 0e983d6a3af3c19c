/* cli_run.c: under construction */
typedef int cli_run_placeholder_;
