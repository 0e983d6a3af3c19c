/*
** bisect.c: the first value where a partitioned run differs.
*/
#include "interp/drive/bisect.h"
#include "util/mem.h"
#include "runtime/comm_local.h"
#include "runtime/dtype.h"
#include "runtime/mesh.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ||a - b|| / ||b|| of a (type ta) and b (type tb) */
static double error_of(rt_dtype ta, const void *a, rt_dtype tb, const void *b, int64_t n) {
  double num = 0, den = 0;
  int bad = 0;
  for (int64_t k = 0; k < n; k++) {
    double x = rt_dtype_isfloat(ta) ? rt_load_f(ta, a, k) : (double)rt_load_i(ta, a, k);
    double y = rt_dtype_isfloat(tb) ? rt_load_f(tb, b, k) : (double)rt_load_i(tb, b, k);
    if (!isfinite(x) || !isfinite(y)) {       /* -inf of a causal mask on both sides agrees */
      if (x != y && !(isnan(x) && isnan(y))) bad = 1;
      continue;
    }
    num += (x - y) * (x - y);
    den += y * y;
  }
  if (bad) return INFINITY;
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

double bisect_error(rt_dtype t, const void *a, const void *b, int64_t n) { return error_of(t, a, t, b, n); }

void bisect_free(bisect_result *res) {
  free(res->rows);
  memset(res, 0, sizeof *res);
}

int bisect_steps_ok(long steps, char *err, size_t errlen) {
  if (steps <= BISECT_MAX_STEPS) return 0;
  return diag_errbuf(err, errlen, "--steps %ld: a bisection runs at most %d steps (the last is the one compared); compare an "
                     "earlier step: a plan that is wrong differs within the first few", steps, BISECT_MAX_STEPS);
}

static void start_result(bisect_result *res, double tol, long steps, const char *ref) {
  memset(res, 0, sizeof *res);
  res->tolerance = tol > 0 ? tol : BISECT_TOLERANCE;
  res->step = steps < 1 ? 1 : steps;
  res->first = res->worst = -1;
  res->ref = ref;
}

static void add_row(bisect_result *res, int value, double e, double own, int *cap) {
  if (res->nrows == *cap) {
    *cap = *cap ? *cap * 2 : 256;
    res->rows = mem_realloc(res->rows, sizeof *res->rows * (size_t)*cap);
  }
  res->rows[res->nrows] = (bisect_row){value, e, own};
  if (!(e <= res->tolerance) && e <= DRIVE_NOISE * own) res->within_noise++;
  else if (res->first < 0 && !(e <= res->tolerance)) res->first = res->nrows;
  if (res->worst < 0 || e > res->rows[res->worst].error) res->worst = res->nrows;
  res->nrows++;
}

/* Is value v of this program compared: an op's kept value, and from the
** second step on the leaves too (they carry what earlier steps made). */
static int compared(const progfile *f, const rt_prog *p, const lower_result *lr, int v, long steps) {
  int b = v < lr->nvals ? lr->buf_of[v] : -1;
  if (b < 0 || (!rt_dtype_isfloat(p->bufs[b].dtype) && p->bufs[b].dtype != RT_I32)) return 0;
  if (f->leaves[v].name) return steps > 1 && p->bufs[b].kind == RT_BUF_INPUT;
  return p->bufs[b].kind == RT_BUF_OUTPUT;
}

/* One run of the program; the earlier steps carry their new values on. */
static int run_steps(rt_exec *e, long steps, char *err, size_t errlen) {
  for (long s = 0; s < steps; s++) {
    if (rt_exec_run(e, err, errlen) < 0) return -1;
    if (s + 1 < steps) rt_exec_carry(e);
  }
  return 0;
}

int bisect_run(drive *r, const progfile *desc, const char *params, const char *data, long steps, double tol,
               bisect_result *res, char *err, size_t errlen) {
  start_result(res, tol, steps, "the one-device program");
  if (steps < 1) steps = 1;
  if (bisect_steps_ok(steps, err, errlen) < 0) return -1;   /* the same on every rank: no one waits */
  const ir_graph *g = r->g;
  drive one, wide;
  memset(&one, 0, sizeof one);
  memset(&wide, 0, sizeof wide);
  int rc = 0, cap = 0, twin = 0;
  char msg[256] = "";
  if (!g) return diag_errbuf(err, errlen, "bisecting a run needs the IR of its program");
  if (r->w->rank == 0) {           /* the reference, on device 0 alone, first */
    diag d;
    diag_init(&d);
    lower_opts lo = {1, 0};
    if (drive_lower_opts(&one, g, NULL, &lo, &d) < 0) rc = diag_errbuf(msg, sizeof msg, "lowering the one-device program failed");
    if (rc == 0) rc = drive_start(&one, r->be, NULL, rt_world_single(), params, data, msg, sizeof msg);
    if (rc == 0) rc = run_steps(one.e, steps, msg, sizeof msg);
    if (rc == 0 && ir_computes_low(g)) {   /* its f32 twin: the precision's own error in each value */
      char e2[256];
      lo.widen = 1;
      twin = drive_lower_opts(&wide, g, NULL, &lo, &d) == 0 && drive_start(&wide, r->be, NULL, rt_world_single(), params, data, e2, sizeof e2) == 0 &&
             run_steps(wide.e, steps, e2, sizeof e2) == 0;
    }
    diag_free(&d);
  }
  res->twin = twin;
  if (r->w->agree(r->w->impl, rc, msg, err, errlen) < 0 || run_steps(r->e, steps, err, errlen) < 0) {
    drive_free(&wide);
    drive_free(&one);
    return -1;
  }
  /* every device takes part in every gather, in program order */
  for (int v = 0; v < g->nvals && rc == 0; v++) {
    if (!compared(desc, &r->prog, &r->lr, v, steps)) continue;
    void *full;
    rc = drive_gather(r, v, &full, err, errlen);
    if (r->w->rank == 0 && rc == 0) {
      int ob = one.lr.buf_of[v];
      if (ob < 0 || (one.prog.bufs[ob].kind != RT_BUF_OUTPUT && one.prog.bufs[ob].kind != RT_BUF_INPUT)) res->missing++;
      else {
        const rt_buf *rb = &one.prog.bufs[ob];
        size_t bytes = (size_t)rb->nelem * rt_dtype_size(rb->dtype);
        void *ref = mem_alloc(bytes + 1);
        rc = rt_exec_get(one.e, ob, ref, bytes, err, errlen);
        double e = rc == 0 ? bisect_error(rb->dtype, full, ref, rb->nelem) : 0, own = -1;
        int wb = twin && !(e <= res->tolerance) ? wide.lr.buf_of[v] : -1;
        if (wb >= 0 && wide.prog.bufs[wb].nelem == rb->nelem) {
          const rt_buf *wr = &wide.prog.bufs[wb];
          void *c = mem_alloc((size_t)wr->nelem * rt_dtype_size(wr->dtype) + 1);
          char e2[256];
          if (rt_exec_get(wide.e, wb, c, (size_t)wr->nelem * rt_dtype_size(wr->dtype), e2, sizeof e2) == 0)
            own = error_of(rb->dtype, ref, wr->dtype, c, rb->nelem);
          free(c);
        }
        if (rc == 0) add_row(res, v, e, own, &cap);
        free(ref);
      }
    }
    free(full);
  }
  drive_free(&wide);
  drive_free(&one);
  return rc;
}

/* ---- two saved programs ---- */

typedef struct collect {
  const progfile *f;
  rt_local *l;
  const char *params, *data;
  long steps;
  void **full;              /* by value: its whole tensor after the step (device 0) */
  char err[64][256];
} collect;

static int collect_device(int dev, void *arg) {
  collect *c = arg;
  const progfile *f = c->f;
  drive r;
  drive_adopt(&r, &f->prog, &f->lr, f->leaves);
  int rc = drive_start(&r, rt_backend_cpu(), rt_local_comm(c->l, dev), rt_local_world(c->l, dev), c->params, c->data, c->err[dev], sizeof c->err[dev]);
  if (rc == 0) rc = run_steps(r.e, c->steps, c->err[dev], sizeof c->err[dev]);
  for (int v = 0; v < f->nvals && rc == 0; v++) {
    if (!compared(f, &f->prog, &f->lr, v, c->steps)) continue;
    void *full;
    rc = drive_gather(&r, v, &full, c->err[dev], sizeof c->err[dev]);
    if (dev == 0) c->full[v] = full;
  }
  drive_free(&r);
  return rc;
}

/* Every device of f runs in this process: together they must fit the
** machine (drive_start checks one device), before any allocates. */
static int fits_in_process(const progfile *f, char *err, size_t errlen) {
  double have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  rt_exec *e = rt_exec_new(&f->prog, rt_backend_cpu(), NULL);
  double ndev = rt_mesh_devices(&f->prog), need = (double)rt_exec_need(e) * ndev;
  rt_exec_free(e);
  if (have <= 0 || need <= have) return 0;
  return diag_errbuf(err, errlen, "bisect runs the %.0f devices of model '%s' in this process, and together they need %.1f GiB; this "
                     "machine has %.1f GiB: bisect the run itself (carve run --bisect under mpirun), or a smaller model",
                     ndev, f->model, need / 1073741824.0, have / 1073741824.0);
}

/* Run f and keep every compared value whole; NULL with err on failure. */
static void **collect_all(const progfile *f, const char *params, const char *data, long steps, char *err, size_t errlen) {
  collect *c = mem_calloc(1, sizeof *c);
  c->f = f;
  c->params = params;
  c->data = data;
  c->steps = steps;
  c->full = mem_calloc((size_t)f->nvals + 1, sizeof *c->full);
  c->l = rt_local_new(&f->prog);
  void **out = c->full;
  if (c->l && fits_in_process(f, err, errlen) < 0) {
    free(out);
    out = NULL;
  } else if (!c->l) {
    diag_errbuf(err, errlen, "the program of model '%s' runs on %d devices; bisect runs saved programs in one process, on at most 64",
                f->model, rt_mesh_devices(&f->prog));
    free(out);
    out = NULL;
  } else if (rt_local_run(c->l, collect_device, c) != 0) {
    for (int i = 0; i < rt_local_devices(c->l); i++)
      if (c->err[i][0]) { diag_errbuf(err, errlen, "device %d: %s", i, c->err[i]); break; }
    for (int v = 0; v < f->nvals; v++) free(out[v]);
    free(out);
    out = NULL;
  }
  rt_local_free(c->l);
  free(c);
  return out;
}

typedef struct named { const char *name; int v; } named;

static int by_name(const void *x, const void *y) { return strcmp(((const named *)x)->name, ((const named *)y)->name); }

int bisect_files(const progfile *a, const progfile *b, const char *params, const char *data, long steps, double tol,
                 bisect_result *res, char *err, size_t errlen) {
  start_result(res, tol, steps, "the second program");
  if (steps < 1) steps = 1;
  if (bisect_steps_ok(steps, err, errlen) < 0) return -1;
  void **fb = collect_all(b, params, data, steps, err, errlen);
  if (!fb) return -1;
  void **fa = collect_all(a, params, data, steps, err, errlen);
  if (!fa) { for (int v = 0; v < b->nvals; v++) free(fb[v]); free(fb); return -1; }
  named *idx = mem_alloc(sizeof *idx * (size_t)(b->nvals + 1));
  for (int v = 0; v < b->nvals; v++) idx[v] = (named){b->vals[v].name, v};
  mem_sort(idx, (size_t)b->nvals, sizeof *idx, by_name);
  int cap = 0;
  for (int v = 0; v < a->nvals; v++) {
    if (!fa[v]) continue;
    named key = {a->vals[v].name, -1}, *hit = bsearch(&key, idx, (size_t)b->nvals, sizeof *idx, by_name);
    const rt_buf *ba = &a->prog.bufs[a->lr.buf_of[v]];
    const rt_buf *bb = hit && fb[hit->v] ? &b->prog.bufs[b->lr.buf_of[hit->v]] : NULL;
    int same = bb && ba->rank == bb->rank && ba->dtype == bb->dtype;
    for (int i = 0; same && i < ba->rank; i++) same = ba->global_shape[i] == bb->global_shape[i];
    if (!same) { res->missing++; continue; }
    int64_t n = 1;
    for (int i = 0; i < ba->rank; i++) n *= ba->global_shape[i];
    add_row(res, v, bisect_error(ba->dtype, fa[v], fb[hit->v], n), -1, &cap);
  }
  free(idx);
  for (int v = 0; v < a->nvals; v++) free(fa[v]);
  for (int v = 0; v < b->nvals; v++) free(fb[v]);
  free(fa);
  free(fb);
  return 0;
}

/* ---- reports ---- */

static void axes_of_group(strbuf *b, const rt_prog *p, int group) {
  sb_putc(b, '{');
  for (int i = 0; group >= 0 && i < p->groups[group].naxes; i++) sb_printf(b, "%s%s", i ? ", " : "", p->axis_names[p->groups[group].axes[i]]);
  sb_putc(b, '}');
}

static void axes_of_mask(strbuf *b, const rt_prog *p, uint32_t m) {
  sb_putc(b, '{');
  for (int a = 0, k = 0; a < p->mesh_rank; a++) if ((m >> a) & 1) sb_printf(b, "%s%s", k++ ? ", " : "", p->axis_names[a]);
  sb_putc(b, '}');
}

/* The collectives that made v's buffer: from the instruction that last
** writes it back through the collectives of v before it. Returns how many
** (indices in chain, first to last). */
static int made_by(const progfile *f, int v, int *chain, int max) {
  const rt_prog *p = &f->prog;
  int b = v < f->lr.nvals ? f->lr.buf_of[v] : -1, w = -1, n = 0;
  if (b < 0) return 0;
  for (int i = p->ninstrs - 1; i >= 0 && w < 0; i--) if (p->instrs[i].out == b) w = i;
  int rev[16];
  while (w >= 0 && n < 16 && rt_is_collective((rt_op)p->instrs[w].op) && p->instrs[w].src == v) {
    rev[n++] = w;
    int in = p->instrs[w].in[0], prev = -1;
    for (int i = w - 1; i >= 0 && prev < 0; i--) if (p->instrs[i].out == in) prev = i;
    w = prev;
  }
  int k = 0;
  for (int i = n - 1; i >= 0 && k < max; i--) chain[k++] = rev[i];
  return k;
}

void bisect_made_by(strbuf *b, const progfile *desc, int v) {
  int chain[16], n = made_by(desc, v, chain, 16);
  const rt_prog *p = &desc->prog;
  if (n) {
    sb_puts(b, "made by ");
    for (int i = 0; i < n; i++) {
      sb_printf(b, "%s%s over ", i ? ", then " : "", rt_op_name((rt_op)p->instrs[chain[i]].op));
      axes_of_group(b, p, p->instrs[chain[i]].group);
    }
  } else if (desc->vals[v].reduced) {
    /* the plan says the value is reduced where it is made, and nothing in the program does it */
    sb_puts(b, "made by no collective, though the plan reduces it over ");
    axes_of_mask(b, p, desc->vals[v].reduced);
    sb_puts(b, " where it is made");
  } else {
    sb_puts(b, "made by no collective");
  }
}

/* 0.43, 3e-6, 1.4e-5: two digits, short exponents */
static const char *fmt_num(char *buf, size_t n, double e, int digits) {
  if (isinf(e)) { snprintf(buf, n, "inf (one side is not finite)"); return buf; }
  if (e == 0 || e >= 1e-2) { snprintf(buf, n, "%.*g", digits, e); return buf; }
  char m[64];
  snprintf(m, sizeof m, "%.*e", digits - 1, e);
  char *x = strchr(m, 'e');
  *x = 0;
  int ex = atoi(x + 1);
  char *end = m + strlen(m);             /* 1.0 -> 1, 1.40 -> 1.4 */
  if (strchr(m, '.')) { while (end[-1] == '0') *--end = 0; if (end[-1] == '.') *--end = 0; }
  snprintf(buf, n, "%se%d", m, ex);
  return buf;
}

static const char *fmt_err(char *buf, size_t n, double e) { return fmt_num(buf, n, e, 2); }

void bisect_report(strbuf *b, const bisect_result *res, const progfile *desc) {
  char e1[64], e2[64], tl[64];
  fmt_num(tl, sizeof tl, res->tolerance, 3);
  if (res->first >= 0) {
    const bisect_row *row = &res->rows[res->first];
    const pf_value *v = &desc->vals[row->value];
    sb_printf(b, "bisect: first mismatch at '%s' (%s", v->name, *v->op ? v->op : v->kind);
    if (*v->where) sb_printf(b, ", %s", v->where);
    sb_puts(b, ")");
    if (*v->sharding) sb_printf(b, ", sharding %s", v->sharding);
    if (desc->lr.partial && desc->lr.partial[row->value]) {
      sb_puts(b, " partial ");
      axes_of_mask(b, &desc->prog, desc->lr.partial[row->value]);
    }
    sb_puts(b, ", ");
    if (desc->leaves[row->value].name) sb_printf(b, "as step %ld begins: the steps before it already differ", res->step);
    else bisect_made_by(b, desc, row->value);
    sb_printf(b, " (relative error %s, tolerance %s)\n", fmt_err(e1, sizeof e1, row->error), tl);
    if (res->twin && !strncmp(v->name, "adam.", 5))
      sb_puts(b, "  (Adam's update in low precision: an element whose gradient is within rounding of zero steps either way, "
                 "as far as the learning rate; run --check, which leaves such elements out, before taking this for a wrong plan)\n");
    int from = res->first >= 3 ? res->first - 3 : 0;
    if (from < res->first) {
      sb_puts(b, "  the values before it match:\n");
      for (int k = from; k < res->first; k++) {
        const pf_value *u = &desc->vals[res->rows[k].value];
        sb_printf(b, "    %-32s %-14s relative error %s\n", u->name, *u->op ? u->op : u->kind, fmt_err(e1, sizeof e1, res->rows[k].error));
      }
    } else {
      sb_puts(b, "  it is the first value compared\n");
    }
  } else if (res->worst >= 0) {
    sb_printf(b, "bisect: no value differs beyond %s; the largest error is %s at '%s'\n", tl,
              fmt_err(e2, sizeof e2, res->rows[res->worst].error), desc->vals[res->rows[res->worst].value].name);
  } else {
    sb_puts(b, "bisect: no value was compared (lower the programs with --keep-values)\n");
  }
  sb_printf(b, "  (%d value%s of step %ld compared with %s", res->nrows, res->nrows == 1 ? "" : "s", res->step, res->ref);
  if (res->missing) sb_printf(b, "; %d the reference does not keep", res->missing);
  sb_puts(b, ")\n");
  if (res->within_noise)
    sb_printf(b, "  (%d value%s over the tolerance, each at most %d times as far from one device as one device is from the same step "
              "in f32: the precision's own error, not counted)\n", res->within_noise, res->within_noise == 1 ? "" : "s", DRIVE_NOISE);
}

static void json_row(json *j, const bisect_row *row, const progfile *desc) {
  json_obj(j);
  json_key(j, "value"); json_str(j, desc->vals[row->value].name);
  json_key(j, "error"); if (isinf(row->error)) json_str(j, "inf"); else json_num(j, row->error);
  json_end_obj(j);
}

void bisect_json(json *j, const bisect_result *res, const progfile *desc) {
  json_obj(j);
  json_key(j, "tolerance"); json_num(j, res->tolerance);
  json_key(j, "step"); json_int(j, res->step);
  json_key(j, "compared"); json_int(j, res->nrows);
  json_key(j, "missing"); json_int(j, res->missing);
  json_key(j, "within_noise"); json_int(j, res->within_noise);
  json_key(j, "mismatch");
  if (res->first < 0) json_null(j);
  else {
    const bisect_row *row = &res->rows[res->first];
    const pf_value *v = &desc->vals[row->value];
    json_obj(j);
    json_key(j, "value"); json_str(j, v->name);
    json_key(j, "kind"); json_str(j, v->kind);
    json_key(j, "op"); json_str(j, v->op);
    json_key(j, "where"); json_str(j, v->where);
    json_key(j, "sharding"); json_str(j, v->sharding);
    json_key(j, "made_by");
    json_arr(j);
    int chain[16], n = made_by(desc, row->value, chain, 16);
    strbuf t;
    sb_init(&t);
    for (int i = 0; i < n; i++) {
      const rt_instr *x = &desc->prog.instrs[chain[i]];
      json_obj(j);
      json_key(j, "kind"); json_str(j, rt_op_name((rt_op)x->op));
      sb_clear(&t);
      axes_of_group(&t, &desc->prog, x->group);
      json_key(j, "axes"); json_str(j, sb_str(&t));
      json_end_obj(j);
    }
    json_end_arr(j);
    json_key(j, "reduced_by_plan");
    sb_clear(&t);
    if (v->reduced) axes_of_mask(&t, &desc->prog, v->reduced);
    if (v->reduced) json_str(j, sb_str(&t)); else json_null(j);
    sb_free(&t);
    json_key(j, "error"); if (isinf(row->error)) json_str(j, "inf"); else json_num(j, row->error);
    json_end_obj(j);
  }
  json_key(j, "before");
  json_arr(j);
  for (int k = res->first >= 3 ? res->first - 3 : 0; k < res->first; k++) json_row(j, &res->rows[k], desc);
  json_end_arr(j);
  json_key(j, "largest");
  if (res->worst < 0) json_null(j); else json_row(j, &res->rows[res->worst], desc);
  json_end_obj(j);
}
