/*
** bisect.h: where does a partitioned run start to differ? Both programs
** are lowered keeping every value (lower_opts.keep_values) and run the
** same step from the same values; then, in program order, each value of
** the partitioned program is put back together on device 0 (its pieces
** gathered, partial sums added up over their partial axes) and compared
** with the reference's by the relative error ||a - b|| / ||b||. The first
** value over the tolerance is where the plan, the lowering or a collective
** went wrong: the report names it with its op, source place, sharding and
** the collective that made it.
*/
#ifndef interp_drive_bisect_h
#define interp_drive_bisect_h

#include "interp/drive/drive.h"
#include "interp/drive/progfile.h"
#include "util/json.h"
#include "util/strbuf.h"

#define BISECT_TOLERANCE 1e-4     /* f32: far above rounding, far below a wrong sum */
#define BISECT_TOLERANCE_F64 1e-9 /* a model all in f64: rounding is ~1e-15, f32 arithmetic ~1e-7 */
#define BISECT_TOLERANCE_LOW 5e-2 /* some values in bf16 or f16: each rounds to 2^-8 (2^-11), and the
                                     pieces of a split sum, rounded on each device before they are
                                     added, differ from one device's by a few of those; a sum left
                                     undone on 2 ranks is off by about half */
/* The most steps a bisection runs (the compared one the last): the steps
** before it only carry the values there, and a plan that is wrong shows
** in the first few. More is refused before anything runs. */
#define BISECT_MAX_STEPS 1000

typedef struct bisect_row {
  int value;                /* the value (an id of the description) */
  double error;             /* relative error; INFINITY where one side is not finite and the other is */
  double own;               /* a bf16 or f16 run's: the one-device value's own error, its distance
                               from the same step in f32 (-1: not measured); over the tolerance,
                               an error at most DRIVE_NOISE times it is no mismatch */
} bisect_row;

typedef struct bisect_result {
  double tolerance;
  long step;                /* the step compared (from 1) */
  bisect_row *rows;         /* every value compared, in program order */
  int nrows;
  int first;                /* the row of the first error over the tolerance, -1: none */
  int worst;                /* the row of the largest error, -1: nothing compared */
  int missing;              /* values of the first program the reference does not keep */
  int within_noise;         /* values over the tolerance but within the precision's own error */
  int twin;                 /* that error was measured (a bf16 or f16 run against its f32 twin) */
  const char *ref;          /* what the reference was ("the one-device program", a file) */
} bisect_result;

/* 0, or -1 with why in err when steps is more than BISECT_MAX_STEPS. */
int  bisect_steps_ok(long steps, char *err, size_t errlen);
/* The partitioned run against the one-device program: every device of
** r's world calls it with its drive (lowered from the IR with
** keep_values, started) and desc, the description of r's program. Device
** 0 lowers and runs the reference from the same params and data files.
** Both run steps - 1 steps, then the compared one; the result is on
** device 0. Collective. */
int  bisect_run(drive *r, const progfile *desc, const char *params, const char *data, long steps, double tol,
                bisect_result *res, char *err, size_t errlen);
/* Two saved programs, each run on threads of this process (one a device,
** at most 64); values matched by name, b the reference. */
int  bisect_files(const progfile *a, const progfile *b, const char *params, const char *data, long steps, double tol,
                  bisect_result *res, char *err, size_t errlen);
/* ||a - b|| / ||b|| over n elements of type t (||a - b|| where b is 0;
** equal non-finite entries agree, others make it infinite). */
double bisect_error(rt_dtype t, const void *a, const void *b, int64_t n);
/* "made by all_reduce over {model}" for value v of the described program. */
void bisect_made_by(strbuf *b, const progfile *desc, int v);
void bisect_report(strbuf *b, const bisect_result *res, const progfile *desc);
void bisect_json(json *j, const bisect_result *res, const progfile *desc);
void bisect_free(bisect_result *res);

#endif
