/*
** drive.c: one device's part of a run.
*/
#include "interp/drive/drive.h"
#include "util/mem.h"
#include "interp/drive/feed.h"
#include "interp/ir/ops.h"
#include "runtime/dtype.h"
#include "runtime/init.h"
#include "runtime/mesh.h"
#include "runtime/plan.h"
#include "runtime/safet.h"
#include "util/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int drive_lower(drive *r, const ir_graph *g, const sh_plan *plan, diag *d) { return drive_lower_opts(r, g, plan, NULL, d); }

int drive_lower_opts(drive *r, const ir_graph *g, const sh_plan *plan, const lower_opts *o, diag *d) {
  memset(r, 0, sizeof *r);
  r->g = g;
  r->plan = plan;
  if (lower_program_opts(g, plan, o, &r->prog, &r->lr, d) < 0) return -1;
  r->lowered = 1;
  return 0;
}

void drive_free(drive *r) {
  rt_exec_free(r->e);
  if (r->lowered) { lower_result_free(&r->lr); rt_prog_free(&r->prog); }
  else if (r->own_stage) rt_prog_free(&r->prog);
  memset(r, 0, sizeof *r);
}

void drive_adopt(drive *r, const rt_prog *prog, const lower_result *lr, const drive_leaf *leaves) {
  memset(r, 0, sizeof *r);
  r->prog = *prog;           /* borrowed: lowered stays 0, so drive_free leaves them */
  r->lr = *lr;
  r->leaves = leaves;
}

static int is_leaf(const ir_value *v) { return v->kind == IR_INPUT || v->kind == IR_PARAM || v->kind == IR_STATE; }

/* Value i as a leaf to bind: from the IR, or from an adopted program's table. */
static int leaf_of(const drive *r, int i, drive_leaf *out) {
  if (r->g) {
    const ir_value *v = r->g->vals[i];
    if (!is_leaf(v)) return 0;
    out->name = v->name;
    out->kind = v->kind;
    feed_init(r->g, v, &out->init);
    return 1;
  }
  *out = r->leaves[i];
  return out->name != NULL;
}

/* The ids of input id read from --data (this device's piece p of buffer rb,
** at off in the whole) against the table an op looks them up in: the
** first outside it is an error naming the input, the element and the range. */
static int check_ids(const drive *r, int id, const rt_buf *rb, const int64_t *off, const void *p, char *err, size_t errlen) {
  const ir_value *v = r->g->vals[id], *by;
  int64_t bound = feed_id_bound(r->g, v, &by);
  if (!bound || !rt_dtype_isint(rb->dtype)) return 0;
  for (int64_t k = 0; k < rb->nelem; k++) {
    int64_t x = rt_load_i(rb->dtype, p, k);
    if (x >= 0 && x < bound) continue;
    strbuf at;
    sb_init(&at);
    int64_t idx[RT_MAXRANK], rest = k;
    for (int i = rb->rank - 1; i >= 0; i--) { idx[i] = off[i] + rest % rb->shape[i]; rest /= rb->shape[i]; }
    for (int i = 0; i < rb->rank; i++) sb_printf(&at, "%s%lld", i ? ", " : "", (long long)idx[i]);
    sb_puts(&at, "]");
    if (by->at.src) {
      int line, col;
      diag_linecol(by->at.src, by->at.off, &line, &col);
      sb_printf(&at, ", but '%s' (%s:%d:%d)", by->name, by->at.src->name, line, col);
    } else {
      sb_printf(&at, ", but '%s'", by->name);
    }
    int rows = by->op == IR_EMBEDDING || by->op == IR_EMBEDDING_GRAD;
    diag_errbuf(err, errlen, "--data: input '%s' holds %lld at [%s %s %lld %s: give %s in [0, %lld)", v->name, (long long)x,
                sb_str(&at), rows ? "looks it up in a table of" : "reads it as a label of", (long long)bound,
                rows ? "rows" : "classes", rows ? "ids" : "labels", (long long)bound);
    sb_free(&at);
    return -1;
  }
  return 0;
}

/* A piece's half along dim z (a dim dealt zig-zag): half k of piece, as
** rows [k h, (k + 1) h) there, to or from block (h rows along z). */
static void piece_half(char *piece, char *block, int rank, const int64_t *shape, int z, int k, size_t es, int into_piece) {
  int64_t outer = 1, inner = 1, n = shape[z], h = n / 2;
  for (int i = 0; i < z; i++) outer *= shape[i];
  for (int i = z + 1; i < rank; i++) inner *= shape[i];
  size_t run = (size_t)(h * inner) * es;
  for (int64_t o = 0; o < outer; o++) {
    char *at = piece + (size_t)((o * n + k * h) * inner) * es, *b = block + (size_t)o * run;
    if (into_piece) memcpy(at, b, run); else memcpy(b, at, run);
  }
}

/* One leaf's piece: from the file's tensor, or the deterministic init, a
** block at a time (two where a dim is dealt zig-zag). */
static int read_piece(drive *r, int i, const drive_leaf *v, const rt_buf *rb, int b, st_file *src, void *dst, char *err, size_t errlen) {
  int64_t off[2][RT_MAXRANK], shape[RT_MAXRANK];
  int nblk, z;
  rt_mesh_blocks(&r->prog, r->w->rank, b, off, shape, &nblk, &z);
  size_t es = rt_dtype_size(rb->dtype), bytes = (size_t)rb->nelem * es;
  char *half = nblk > 1 ? malloc(bytes / 2 + 1) : NULL;
  if (nblk > 1 && !half) return diag_errbuf(err, errlen, "out of memory for '%s'", v->name);
  int rc = 0;
  for (int k = 0; k < nblk && rc == 0; k++) {
    void *to = nblk > 1 ? (void *)half : dst;
    if (src) {
      rc = st_read_block(src, v->name, rb->dtype, rb->rank, rb->global_shape, off[k], shape, to, err, errlen);
      if (rc == 0 && r->g && v->kind == IR_INPUT) rc = check_ids(r, i, rb, off[k], to, err, errlen);
    } else {
      rt_init_block(&v->init, rb->dtype, rb->rank, rb->global_shape, off[k], shape, to, rt_host_threads());
    }
    if (rc == 0 && nblk > 1) piece_half(dst, half, rb->rank, rb->shape, z, k, es, 1);
  }
  free(half);
  return rc;
}

/* Every leaf's piece on this device: from a file, or the deterministic init. */
static int bind_leaves(drive *r, st_file *params, st_file *data, char *err, size_t errlen) {
  for (int i = 0; i < r->lr.nvals; i++) {
    drive_leaf lf, *v = &lf;
    int b = r->lr.buf_of[i];
    if (b < 0 || !leaf_of(r, i, &lf) || !rt_stage_holds(&r->prog, rt_prog_stage(&r->prog, r->w->rank), b)) continue;
    const rt_buf *rb = &r->prog.bufs[b];
    size_t bytes = (size_t)rb->nelem * rt_dtype_size(rb->dtype);
    /* written in place where the backend's memory is the host's; else through a copy */
    void *dst = rt_exec_input(r->e, b, bytes, err, errlen), *tmp = NULL;
    if (!dst && errlen && err[0]) return -1;
    if (!dst && !(dst = tmp = malloc(bytes ? bytes : 1)))
      return diag_errbuf(err, errlen, "out of memory for '%s' (%zu bytes)", v->name, bytes);
    st_file *src = v->kind == IR_INPUT ? data : params;
    int rc = 0;
    if (v->kind == IR_PARAM && params && !st_find(params, v->name))
      rc = diag_errbuf(err, errlen, "no tensor named '%s' in the --params file; it must hold every parameter", v->name);
    else if (v->kind == IR_INPUT && data && !st_find(data, v->name))
      rc = diag_errbuf(err, errlen, "no tensor named '%s' in the --data file; it must hold every input", v->name);
    else
      rc = read_piece(r, i, v, rb, b, src && st_find(src, v->name) ? src : NULL, dst, err, errlen);
    if (rc == 0 && tmp) rc = rt_exec_set(r->e, b, tmp, bytes, err, errlen);
    free(tmp);
    if (rc) return -1;
  }
  return 0;
}

int drive_memory_short(const rt_prog *p, double need, char *err, size_t errlen) {
  double have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  if (need < 0) {                 /* as the executor will place it */
    rt_memplan m;
    rt_memplan_make(p, &m);
    need = (double)m.block;
    rt_memplan_free(&m);
    for (int b = 0; b < p->nbufs; b++)
      if (p->bufs[b].kind != RT_BUF_TEMP) need += (double)p->bufs[b].nelem * (double)rt_dtype_size(p->bufs[b].dtype);
  }
  if (have <= 0 || need <= have) return 0;
  int top[3] = {-1, -1, -1};
  for (int b = 0; b < p->nbufs; b++) {
    double by = (double)p->bufs[b].nelem * (double)rt_dtype_size(p->bufs[b].dtype);
    for (int k = 0; k < 3; k++) {
      double tk = top[k] < 0 ? -1 : (double)p->bufs[top[k]].nelem * (double)rt_dtype_size(p->bufs[top[k]].dtype);
      if (by > tk) { for (int j = 2; j > k; j--) top[j] = top[j - 1]; top[k] = b; break; }
    }
  }
  strbuf sb;
  sb_init(&sb);
  for (int k = 0; k < 3 && top[k] >= 0; k++) {
    const rt_buf *x = &p->bufs[top[k]];
    sb_printf(&sb, "%s'%s' %.1f GiB", k ? ", " : "", x->name ? x->name : "?",
              (double)x->nelem * (double)rt_dtype_size(x->dtype) / 1073741824.0);
  }
  diag_errbuf(err, errlen, "one device's program needs %.1f GiB but this machine has %.1f GiB (largest: %s); split it over more "
              "devices with a tactic file, or make the model smaller", need / 1073741824.0, have / 1073741824.0, sb_str(&sb));
  sb_free(&sb);
  return 1;
}

/* Every leaf from the safetensors files params and data (either may be NULL), or the init. */
static int bind_files(drive *r, const char *params, const char *data, char *err, size_t errlen) {
  st_file *pf = NULL, *df = NULL;
  int rc = 0;
  if ((params && !(pf = st_open(params, err, errlen))) || (data && !(df = st_open(data, err, errlen)))) rc = -1;
  if (rc == 0) rc = bind_leaves(r, pf, df, err, errlen);
  if (pf) st_close(pf);
  if (df) st_close(df);
  return rc;
}

int drive_start(drive *r, const rt_backend *be, const rt_comm *comm, const rt_world *w,
                const char *params, const char *data, char *err, size_t errlen) {
  r->be = be;
  r->comm = comm;
  r->w = w;
  /* a pipeline stage runs its own instructions (of an adopted program, which is borrowed, a copy);
     the lowering and the program-file reader have checked that every transfer between stages arrives */
  if (r->prog.stage_axis >= 0 && r->lowered) rt_prog_keep_stage(&r->prog, rt_prog_stage(&r->prog, w->rank));
  else if (r->prog.stage_axis >= 0 && !r->own_stage) {
    rt_prog mine;
    rt_prog_copy_stage(&r->prog, rt_prog_stage(&r->prog, w->rank), &mine);
    r->prog = mine;
    r->own_stage = 1;
  }
  r->e = rt_exec_new(&r->prog, be, comm);
  rt_exec_watch(r->e, r->watch);
  if (!be->device_memory && drive_memory_short(&r->prog, (double)rt_exec_need(r->e), err, errlen)) return -1;   /* before allocating */
  return bind_files(r, params, data, err, errlen);
}

int drive_replay(drive *r, long steps, const char *params, const char *data, char *err, size_t errlen) {
  rt_exec_watch(r->e, 1);
  if (bind_files(r, params, data, err, errlen) < 0) return -1;
  double loss;
  for (long s = 0; s < steps; s++) if (drive_step(r, &loss, err, errlen) < 0) return -1;
  return 0;
}

int drive_scalar(drive *r, int id, double *v, char *err, size_t errlen) {
  int b = r->lr.buf_of[id];
  if (b < 0 || r->prog.bufs[b].nelem != 1 || r->prog.bufs[b].dtype != RT_F32)
    return diag_errbuf(err, errlen, "internal error: value %d is no f32 scalar", id);
  float x = 0;
  int rc = rt_exec_get(r->e, b, &x, sizeof x, err, errlen);
  *v = x;
  return rc;
}

int drive_gather(drive *r, int id, void **full, char *err, size_t errlen) {
  *full = NULL;
  int b = r->lr.buf_of[id];
  const rt_buf *rb = &r->prog.bufs[b];
  size_t es = rt_dtype_size(rb->dtype), bytes = (size_t)rb->nelem * es;
  int64_t total = 1;
  for (int i = 0; i < rb->rank; i++) total *= rb->global_shape[i];
  char *mine = mem_calloc(bytes + 1, 1), *all = NULL, *out = NULL;
  /* a pipeline stage holds its own values: the devices of other stages send zeros, unread */
  int rc = rt_stage_holds(&r->prog, rt_prog_stage(&r->prog, r->w->rank), b) ? rt_exec_get(r->e, b, mine, bytes, err, errlen) : 0;
  int n = r->w->size;
  if (r->w->rank == 0) { all = mem_alloc(bytes * (size_t)n + 1); out = mem_alloc((size_t)total * es + 1); }
  /* every device takes part even when its own read failed: no one waits forever */
  if (r->w->gather(r->w->impl, mine, bytes, all) < 0 && rc == 0) rc = diag_errbuf(err, errlen, "gathering '%s' failed", rb->name);
  if (r->w->rank == 0 && rc == 0) {
    /* A partial sum is the sum of the pieces of the devices along its
    ** partial axes; along the other axes that do not split it every device
    ** holds the same piece, so the device at coordinate 0 there stands for all. */
    uint32_t partial = r->lr.partial && r->prog.mesh_rank ? r->lr.partial[id] : 0, split = 0;
    for (int i = 0; i < rb->rank; i++)
      if (rb->dim_group[i] >= 0)
        for (int k = 0; k < r->prog.groups[rb->dim_group[i]].naxes; k++) split |= 1u << r->prog.groups[rb->dim_group[i]].axes[k];
    int sum = partial && rt_dtype_isfloat(rb->dtype);
    double *acc = sum ? mem_calloc((size_t)total + 1, sizeof(double)) : NULL;   /* (summed in f64, stored in the buffer's type) */
    /* devices that hold the same piece must hold the same numbers: a copy
    ** that differs is a wrong result too (drive.differs names the first) */
    char *have = sum ? NULL : mem_calloc((size_t)total + 1, 1);
    int first = 0;          /* a pipeline's: the first stage that holds it stands in for the others */
    while (r->prog.stage_axis >= 0 && first < 63 && !rt_stage_holds(&r->prog, first, b)) first++;
    for (int q = 0; q < n; q++) {
      int stands_in = 1;
      for (int a = 0; a < r->prog.mesh_rank && partial; a++)
        if (!((split | partial) >> a & 1) && rt_mesh_coord(&r->prog, q, a) != (a == r->prog.stage_axis ? first : 0)) stands_in = 0;
      if (!stands_in || !rt_stage_holds(&r->prog, rt_prog_stage(&r->prog, q), b)) continue;
      const char *src = all + (size_t)q * bytes;
      for (int64_t k = 0; k < rb->nelem; k++) {
        int64_t gi = rt_mesh_global_index(&r->prog, q, b, k);
        if (sum) acc[gi] += rt_load_f(rb->dtype, src, k);
        else if (!have[gi]) { memcpy(out + (size_t)gi * es, src + (size_t)k * es, es); have[gi] = 1; }
        else if (memcmp(out + (size_t)gi * es, src + (size_t)k * es, es) && !r->differs) r->differs = rb->name;
      }
    }
    for (int64_t k = 0; sum && k < total; k++) rt_store_f(rb->dtype, out, k, acc[k]);
    free(acc);
    free(have);
    *full = out;
    out = NULL;
  }
  free(out);
  free(all);
  free(mine);
  return rc;
}

int drive_step(drive *r, double *loss, char *err, size_t errlen) {
  *loss = 0;
  if (!r->g) return diag_errbuf(err, errlen, "drive_step needs the IR of the program");
  if (rt_exec_run(r->e, err, errlen) < 0) return -1;
  const ir_value *out = r->g->vals[r->g->outputs[0]];
  int b = r->lr.buf_of[out->id];
  int rc = 0;
  rt_dtype t = r->prog.bufs[b].dtype;
  if (out->shape.rank == 0) {          /* a scalar output is whole on every device */
    double x[1] = {0};
    rc = rt_exec_get(r->e, b, x, rt_dtype_size(t), err, errlen);
    *loss = rt_load_f(t, x, 0);
  } else {
    void *full;
    rc = drive_gather(r, out->id, &full, err, errlen);
    if (full) for (int64_t k = 0; k < ir_nelem(&out->shape); k++) *loss += rt_load_f(t, full, k);
    free(full);
  }
  if (rc == 0) rt_exec_carry(r->e);    /* new values into their leaves (a training step, native or imported) */
  return rc;
}

int drive_output_json(drive *r, int k, char **line, char *err, size_t errlen) {
  *line = NULL;
  const ir_value *v = r->g->vals[r->g->outputs[k]];
  /* a new parameter or state carried into its leaf: after the run the leaf's
     buffer holds it (the carry swaps the two; the output's holds the old) */
  int at = v->id;
  if (v->carry >= 0 && r->lr.buf_of[v->carry] >= 0 &&
      r->prog.bufs[r->lr.buf_of[v->carry]].carry_from == r->lr.buf_of[v->id])
    at = v->carry;
  void *full;
  if (drive_gather(r, at, &full, err, errlen) < 0) return -1;
  if (!full) return 0;
  rt_dtype t = r->prog.bufs[r->lr.buf_of[v->id]].dtype;
  int digits = t == RT_F64 ? 17 : t == RT_BF16 || t == RT_F16 ? 5 : 9;
  json j;
  json_init(&j);
  json_obj(&j);
  json_key(&j, "name"); json_str(&j, v->name);
  json_key(&j, "shape");
  json_arr(&j);
  for (int i = 0; i < v->shape.rank; i++) json_int(&j, v->shape.d[i]);
  json_end_arr(&j);
  json_key(&j, "dtype"); json_str(&j, ir_dtype_name(v->dtype));
  json_key(&j, "values");
  json_arr(&j);
  for (int64_t x = 0; x < ir_nelem(&v->shape); x++) {
    if (t == RT_I1) json_bool(&j, rt_load_i(t, full, x) != 0);
    else if (!rt_dtype_isfloat(t)) json_int(&j, rt_load_i(t, full, x));
    else json_real(&j, rt_load_f(t, full, x), digits);
  }
  json_end_arr(&j);
  json_end_obj(&j);
  *line = strdup(sb_str(&j.out));
  json_free(&j);
  free(full);
  return 0;
}

int drive_checks(drive *r, char *err, size_t errlen) {
  const ir_graph *g = r->g;
  int failed = 0, first = -1, total = 0;
  for (int k = 0; k < g->nouts; k++) {
    const ir_value *v = g->vals[g->outputs[k]];
    if (strncmp(v->name, "check.", 6) || v->dtype != IR_I1 || v->shape.rank != 0) continue;
    void *full;
    if (drive_gather(r, v->id, &full, err, errlen) < 0) return -1;
    if (!full) continue;                     /* not this rank's to read */
    total++;
    if (!rt_load_i(RT_I1, full, 0)) { failed++; if (first < 0) first = v->id; }
    free(full);
  }
  if (!failed) return 0;
  arena a;
  arena_init(&a);
  const ir_value *v = g->vals[first];
  const char *where = v->at.src ? diag_where(&a, v->at) : NULL;
  diag_errbuf(err, errlen, "%s%s%s failed: the result differs from the expected values (%d of %d checks failed; "
              "--print-outputs prints the results)", where ? where : "", where ? ": " : "", v->name, failed, total);
  arena_free(&a);
  return -1;
}

int drive_finite(drive *r, long step, double loss, char *err, size_t errlen) {
  if (isfinite(loss)) return 0;
  const ir_graph *g = r->g;
  const char *what = g->vals[g->outputs[0]]->shape.rank == 0 ? "the loss" : "the sum of the output";
  int i = r->e ? rt_exec_first_nonfinite(r->e) : -1;
  int v = i >= 0 ? r->prog.instrs[i].src : -1;
  if (v < 0 || v >= g->nvals)
    return diag_errbuf(err, errlen, "step %ld: %s is %g; lower the learning rate or look at the inputs, or pass "
                       "--allow-nonfinite to go on", step, what, loss);
  const ir_value *x = g->vals[v];
  arena a;
  arena_init(&a);
  const char *where = x->at.src ? diag_where(&a, x->at) : "made by --train";
  diag_errbuf(err, errlen, "step %ld: %s is %g; the first value of the step to hold a NaN or an Inf%s is '%s' (%s, %s); "
              "lower the learning rate or look at the inputs, or pass --allow-nonfinite to go on",
              step, what, loss, r->w && r->w->size > 1 ? " on this rank" : "", x->name, where, x->kind == IR_OP ? ir_opinfo_of(x->op)->name : "a leaf");
  arena_free(&a);
  return -1;
}

static int saved(const ir_value *v) { return v->kind == IR_PARAM || v->kind == IR_STATE; }

int drive_save(drive *r, const char *path, char *err, size_t errlen) {
  const ir_graph *g = r->g;
  st_out *outs = mem_calloc((size_t)g->nvals + 1, sizeof *outs);
  void **keep = mem_calloc((size_t)g->nvals + 1, sizeof *keep);
  int n = 0, rc = 0;
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    if (!saved(v) || r->lr.buf_of[i] < 0) continue;
    if (drive_gather(r, i, &keep[n], err, errlen) < 0) rc = -1;
    outs[n] = (st_out){v->name, r->prog.bufs[r->lr.buf_of[i]].dtype, v->shape.rank, v->shape.d, keep[n]};
    n++;
  }
  if (r->w->rank == 0 && rc == 0) rc = st_write(path, outs, n, err, errlen);
  for (int i = 0; i < n; i++) free(keep[i]);
  free(keep);
  free(outs);
  return rc;
}

/* ||a - b|| / ||b|| over n elements, those with skip[k] set left out of the difference */
static double rel_norm_error(rt_dtype t, const void *a, const void *b, int64_t n, const char *skip) {
  double num = 0, den = 0;
  for (int64_t k = 0; k < n; k++) {
    double x = rt_load_f(t, a, k), y = rt_load_f(t, b, k);
    if (x == y || (skip && skip[k])) { den += y * y; continue; }       /* equal infinities and NaNs agree too */
    if (x != x && y != y) continue;
    double d = x - y;
    num += d * d;
    den += y * y;
  }
  return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Value v of both runs, on device 0 (*a, *b NULL elsewhere). Collective. */
static int both(drive *r, drive *one, int v, void **a, void **b, rt_dtype *t, char *err, size_t errlen) {
  *b = NULL;
  char e2[256];
  if (drive_gather(r, v, a, e2, sizeof e2) < 0) return diag_errbuf(err, errlen, "%s", e2);
  if (!*a) return 0;
  int ob = one->lr.buf_of[v];
  if (ob < 0) return diag_errbuf(err, errlen, "internal error: the one-device program keeps no '%s'", r->g->vals[v]->name);
  *t = one->prog.bufs[ob].dtype;
  size_t bytes = (size_t)one->prog.bufs[ob].nelem * rt_dtype_size(*t);
  *b = mem_alloc(bytes + 1);
  return rt_exec_get(one->e, ob, *b, bytes, err, errlen);
}

/* Parameter v's first-moment state (-1: none). */
static int first_moment(const drive *r, const ir_value *v) {
  size_t n = strlen(v->name) + 8;
  char *name = mem_alloc(n);
  snprintf(name, n, "adam.m.%s", v->name);
  const ir_value *m = ir_lookup(r->g, name);
  free(name);
  if (!m || m->kind != IR_STATE || ir_nelem(&m->shape) != ir_nelem(&v->shape) || r->lr.buf_of[m->id] < 0) return -1;
  return m->id;
}

/* After a step of the one-device program (one) and of its f32 twin
** (wide): mark in noisy[v] each element of parameter v whose first
** moments differ by more than tol of the f32 one's size. */
static int mark_noisy(const drive *one, const drive *wide, double tol, char **noisy, char *err, size_t errlen) {
  const ir_graph *g = one->g;
  for (int v = 0; v < g->nvals; v++) {
    int m = g->vals[v]->kind == IR_PARAM ? first_moment(one, g->vals[v]) : -1;
    if (m < 0 || wide->lr.buf_of[m] < 0) continue;
    const rt_buf *b = &one->prog.bufs[one->lr.buf_of[m]], *c = &wide->prog.bufs[wide->lr.buf_of[m]];
    if (b->dtype != c->dtype || b->nelem != c->nelem) continue;
    size_t bytes = (size_t)b->nelem * rt_dtype_size(b->dtype);
    char *x = mem_alloc(2 * bytes + 1), *y = x + bytes;
    int rc = rt_exec_get(one->e, one->lr.buf_of[m], x, bytes, err, errlen);
    if (rc == 0) rc = rt_exec_get(wide->e, wide->lr.buf_of[m], y, bytes, err, errlen);
    if (rc == 0 && !noisy[v]) noisy[v] = mem_calloc((size_t)b->nelem + 1, 1);
    for (int64_t i = 0; i < b->nelem && rc == 0; i++) {
      double u = rt_load_f(b->dtype, x, i), w = rt_load_f(b->dtype, y, i);
      if (!(fabs(u - w) <= tol * fabs(w))) noisy[v][i] = 1;
    }
    free(x);
    if (rc < 0) return -1;
  }
  return 0;
}

/* The f32 twin's distance from b, value v of the one-device run: ||b - c|| / ||c|| (-1: the twin keeps no v). */
static double own_error(const drive *wide, int v, rt_dtype t, const void *b, int64_t n) {
  int wb = wide->lr.buf_of[v];
  if (wb < 0 || wide->prog.bufs[wb].nelem != n) return -1;
  rt_dtype ct = wide->prog.bufs[wb].dtype;
  size_t bytes = (size_t)n * rt_dtype_size(ct);
  char *c = mem_alloc(bytes + 1), e2[256];
  double num = 0, den = 0;
  int rc = rt_exec_get(wide->e, wb, c, bytes, e2, sizeof e2);
  for (int64_t k = 0; k < n && rc == 0; k++) {
    double x = rt_load_f(t, b, k), y = rt_load_f(ct, c, k);
    if (x != x || y != y) { rc = -1; break; }
    num += (x - y) * (x - y);
    den += y * y;
  }
  free(c);
  return rc < 0 ? -1 : den > 0 ? sqrt(num / den) : sqrt(num);
}

static char **free_noisy(char **noisy, int n) {
  for (int v = 0; noisy && v < n; v++) free(noisy[v]);
  free(noisy);
  return NULL;
}

/* The elements of parameter a (b on one device) that drive_excuse leaves
** out: noisy, apart by more than the tolerance and by at most the bound. */
static int64_t excused(const drive_excuse *ex, rt_dtype t, const void *a, const void *b, const char *noisy, int64_t n, char *skip) {
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    double x = rt_load_f(t, a, i), y = rt_load_f(t, b, i), d = fabs(x - y);
    skip[i] = noisy[i] && d <= ex->bound && d > ex->tol * fabs(y);
    k += skip[i];
  }
  return k;
}

int drive_check(drive *r, const char *params, const char *data, const double *losses, long steps,
                const drive_excuse *ex, drive_compared *c, char *err, size_t errlen) {
  const ir_graph *g = r->g;
  drive one, wide;
  char **noisy = NULL;        /* parameter -> its elements whose gradient's sign is rounding (device 0) */
  int rc = 0, twin = 0;
  memset(c, 0, sizeof *c);
  c->excuse_bound = ex ? ex->bound : 0;
  if (!g) return diag_errbuf(err, errlen, "drive_check needs the IR of the program");
  memset(&one, 0, sizeof one);
  memset(&wide, 0, sizeof wide);
  if (r->w->rank == 0) {        /* the reference runs on device 0 alone */
    diag d;
    diag_init(&d);
    if (drive_lower(&one, g, NULL, &d) < 0) rc = diag_errbuf(err, errlen, "lowering the one-device program failed");
    diag_free(&d);
    if (rc == 0) rc = drive_start(&one, r->be, NULL, rt_world_single(), params, data, err, errlen);
    if (rc == 0 && ex && ir_computes_low(g)) {   /* the f32 twin: the precision's own error */
      lower_opts wo = {0};
      wo.widen = 1;
      diag_init(&d);
      twin = drive_lower_opts(&wide, g, NULL, &wo, &d) == 0 && drive_start(&wide, r->be, NULL, rt_world_single(), params, data, err, errlen) == 0;
      if (!twin) snprintf(c->no_twin, sizeof c->no_twin, "%s", d.nerrors ? diag_text(&d) : err);
      diag_free(&d);
      if (twin && ex->bound > 0) noisy = mem_calloc((size_t)g->nvals + 1, sizeof *noisy);
    }
    for (long s = 0; s < steps && rc == 0; s++) {
      double l1, l2;
      rc = drive_step(&one, &l1, err, errlen);
      if (rc == 0 && twin && (drive_step(&wide, &l2, err, errlen) < 0 ||
                              (noisy && mark_noisy(&one, &wide, ex->tol, noisy, err, errlen) < 0))) {
        twin = 0;                               /* (without the twin, nothing is left out) */
        snprintf(c->no_twin, sizeof c->no_twin, "%s", err);
        noisy = free_noisy(noisy, g->nvals);
      }
      if (rc == 0) {
        double e = fabs(losses[s] - l1) / (fabs(l1) > 0 ? fabs(l1) : 1);
        if (e > c->worst || isnan(e)) { c->worst = isnan(e) ? INFINITY : e; c->worst_at = NULL; }
        c->steps++;
      }
    }
  }
  /* every device gathers below: all go on, or none (a reference that
  ** failed on device 0 must not leave the others waiting in a gather) */
  char why[512];
  snprintf(why, sizeof why, "%s", rc ? err : "");
  if (r->w->agree(r->w->impl, rc, why, err, errlen) < 0) {
    free_noisy(noisy, g->nvals);
    drive_free(&wide);
    drive_free(&one);
    return -1;
  }
  /* every output that stays an output, and every leaf a step's new value
  ** lands in (parameters, optimizer state, an imported step's arguments):
  ** every device's pieces, compared on device 0 */
  char *cmp = mem_calloc((size_t)g->nvals + 1, 1);
  for (int k = 0; k < g->nouts; k++) {   /* a new value is read in its leaf (carried, or updated in place) */
    const ir_value *v = g->vals[g->outputs[k]];
    if (k == 0 && v->shape.rank == 0 && steps > 0) continue;    /* the loss: each step's, above */
    cmp[v->carry >= 0 ? v->carry : v->id] = 1;
  }
  for (int i = 0; i < g->nvals; i++) if (g->vals[i]->kind == IR_PARAM || g->vals[i]->kind == IR_STATE) cmp[i] = 1;
  for (int i = 0; i < g->nvals && rc == 0; i++) {
    const ir_value *v = g->vals[i];
    if (!cmp[i] || r->lr.buf_of[i] < 0) continue;
    void *full, *ref;
    rt_dtype t = RT_F32;
    rc = both(r, &one, i, &full, &ref, &t, err, errlen);
    if (full && rc == 0) {
      int64_t n = ir_nelem(&v->shape);
      double e = rel_norm_error(t, full, ref, n, NULL);
      if (noisy && noisy[i] && !(e <= ex->tol)) {
        char *skip = mem_alloc((size_t)n + 1);
        int64_t k = excused(ex, t, full, ref, noisy[i], n, skip);
        if (k) {
          e = rel_norm_error(t, full, ref, n, skip);
          c->excused += k;
          if (!c->excused_params++) c->excused_at = v->name;
        }
        free(skip);
      }
      double floor = twin && !(e <= ex->tol) ? own_error(&wide, i, t, ref, n) : -1;
      if (e <= DRIVE_NOISE * floor) {
        c->within_noise++;
        if (e > c->noisiest) { c->noisiest = e; c->noisiest_floor = floor; c->noisiest_at = v->name; }
        e = 0;                                  /* (within the precision's own error: not counted against the tolerance) */
      }
      if (e > c->worst || isnan(e)) { c->worst = isnan(e) ? INFINITY : e; c->worst_at = v->name; }
      if (v->kind == IR_OP) c->outputs++;
      else if (v->kind == IR_STATE) c->states++;
      else if (v->kind == IR_PARAM) c->params++;
      else c->inputs++;
    }
    free(full);
    free(ref);
  }
  free(cmp);
  if (rc == 0 && r->differs) { c->worst = INFINITY; c->worst_at = r->differs; c->copies_differ = 1; }
  free_noisy(noisy, g->nvals);
  drive_free(&wide);
  drive_free(&one);
  return rc;
}

static int by_time(const void *a, const void *b) {
  double x = ((const drive_prof *)a)->seconds, y = ((const drive_prof *)b)->seconds;
  return x > y ? -1 : x < y;
}

int drive_profile(const drive *r, long steps, drive_prof **rows, double *total) {
  const double *sec = rt_exec_seconds(r->e);
  *rows = NULL;
  *total = 0;
  if (!sec || steps < 1) return 0;
  drive_prof *t = mem_calloc((size_t)r->prog.ninstrs + 1, sizeof *t);
  int n = 0;
  for (int i = 0; i < r->prog.ninstrs; i++) {
    const rt_instr *x = &r->prog.instrs[i];
    const char *kind = x->op == RT_EW ? rt_ewfn_name((rt_ewfn)x->fn) : rt_op_name((rt_op)x->op);
    int k;
    for (k = 0; k < n; k++) if (!strcmp(t[k].kind, kind)) break;
    if (k == n) t[n++] = (drive_prof){kind, 0, 0};
    t[k].seconds += sec[i] / (double)steps;
    t[k].count++;
    *total += sec[i] / (double)steps;
  }
  mem_sort(t, (size_t)n, sizeof *t, by_time);
  *rows = t;
  return n;
}
