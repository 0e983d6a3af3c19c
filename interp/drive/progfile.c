/*
** progfile.c: lowered programs to and from text files.
*/
#include "interp/drive/progfile.h"
#include "interp/drive/feed.h"
#include "interp/ir/ops.h"
#include "interp/report/report.h"
#include "runtime/mesh.h"
#include "util/file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PF_VERSION 10  /* 2: value, mode and the bytes of constants; 3: six inputs, hyper of adam and sgd;
                          4: adam reads lr sqrt(1 - beta2^t) / (1 - beta1^t) and eps sqrt(1 - beta2^t);
                          5: an ew may write the sums of its rows (in3), which an older carve
                             would not do: it refuses the version instead;
                          6: eight inputs (xent_proj reads and writes seven buffers);
                          7: gather and scatter, with their index maps; adam's hyper holds the
                             gradient's coefficients (1 - beta1, 1 - beta2) too;
                          8: tensors of rank up to 16: an instruction's shape, strides and perm
                             list 16 entries (8 before);
                          9: fused elementwise steps, with their inputs' strides; the axes whose
                             pieces are dealt zig-zag (a zigzag line after the mesh);
                          10: a pipelined program: its stage axis (a stages line after the mesh),
                              and the stages that hold each buffer and run each instruction */
#define PF_RANK_V7 8   /* the entries of those lists in versions 1 to 7 */

/* What a program file may hold. Everything read is checked against the
** rest of the file before anything uses it (the checksum only says that
** carve wrote it): the mesh against RT_MAX_DEVICES, each buffer's whole
** shape against its piece times the devices of its groups, its elements
** against PF_MAX_ELEMS, each instruction's buffers, group and value, the
** sizes it names against PF_MAX_SIZE (so that the executor's checks of
** them against its buffers cannot overflow), a collective's sizes against
** its buffers (the in-process mesh of bisect trusts them), each value's
** buffer, axes and init. */
#define PF_MAX_ELEMS ((int64_t)1 << 56)     /* elements of one buffer, a piece or whole */
#define PF_MAX_BYTES ((int64_t)1 << 62)     /* bytes of a buffer's pieces on every device; of all buffers */
#define PF_MAX_SIZE ((int64_t)1 << 60)      /* an instruction's sizes and their products */
#define PF_MAX_INIT 1e30                    /* a leaf's init numbers */
#define PF_EDITED "; lower the model again (carve lower -o)"

/* bytes of an RT_CONST's elements: nelem of its output's dtype */
static size_t const_bytes(const rt_prog *p, const rt_instr *x) {
  return x->out >= 0 && x->out < p->nbufs ? (size_t)p->bufs[x->out].nelem * rt_dtype_size(p->bufs[x->out].dtype) : 0;
}

static const char *const bufkinds[] = {"temp", "input", "output"};   /* ORDER rt_bufkind */
static const char *const initkinds[] = {"normal", "zeros", "ones", "uniform", "ints"};   /* ORDER rt_initkind */

/* ---- describing a lowered program ---- */

void progfile_describe(progfile *f, const ir_graph *g, const sh_plan *plan, const rt_prog *prog, const lower_result *lr) {
  memset(f, 0, sizeof *f);
  arena_init(&f->mem);
  f->model = g->name;
  f->train = g->train;
  f->prog = *prog;
  f->lr = *lr;
  f->nvals = g->nvals;
  f->vals = arena_alloc(&f->mem, sizeof *f->vals * (size_t)(g->nvals + 1));
  f->leaves = arena_alloc(&f->mem, sizeof *f->leaves * (size_t)(g->nvals + 1));
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    pf_value *x = &f->vals[i];
    x->name = v->name;
    x->kind = report_kind(v);
    x->op = v->kind == IR_OP ? ir_opinfo_of(v->op)->name : "";
    x->where = v->at.src ? diag_where(&f->mem, v->at) : "";
    x->sharding = plan && v->kind != IR_CONST ? shard_str(plan, i, &f->mem) : "";
    /* (the axes of the program's mesh: a pipeline's microbatch axis, the plan's last, is no device's) */
    if (plan && v->kind == IR_OP && !shard_keeps_partial(plan, i))
      x->reduced = plan->lay[i].partial & (prog->mesh_rank >= 32 ? ~0u : (1u << prog->mesh_rank) - 1);
    if (v->kind == IR_INPUT || v->kind == IR_PARAM || v->kind == IR_STATE) {
      f->leaves[i].name = v->name;
      f->leaves[i].kind = v->kind;
      feed_init(g, v, &f->leaves[i].init);
    }
  }
}

void progfile_free(progfile *f) {
  if (f->owns) { rt_prog_free(&f->prog); lower_result_free(&f->lr); }
  arena_free(&f->mem);
  memset(f, 0, sizeof *f);
}

int progfile_find(const progfile *f, const char *name) {
  for (int i = 0; i < f->nvals; i++) if (f->vals[i].name && !strcmp(f->vals[i].name, name)) return i;
  return -1;
}

/* ---- writing ---- */

/* A checksum of everything before the 'end' line: a file cut short or
** edited by hand is refused rather than run (the executor trusts its
** programs as it trusts the lowering). */
static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 1099511628211ull; }
  return h;
}

static void put_str(strbuf *b, const char *s) {
  sb_putc(b, '"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') { sb_putc(b, '\\'); sb_putc(b, *s); }
    else if (*s == '\n') sb_puts(b, "\\n");
    else sb_putc(b, *s);
  }
  sb_putc(b, '"');
}

static void put_list(strbuf *b, const int64_t *x, int n) {
  if (!n) { sb_putc(b, '-'); return; }
  for (int i = 0; i < n; i++) sb_printf(b, "%s%lld", i ? "," : "", (long long)x[i]);
}

static void put_ilist(strbuf *b, const int32_t *x, int n) {
  int64_t t[RT_MAXRANK];
  for (int i = 0; i < n; i++) t[i] = x[i];
  put_list(b, t, n);
}

static void put_i8(strbuf *b, const char *key, const int8_t *x, int n) {
  int64_t t[RT_MAXRANK];
  for (int i = 0; i < n; i++) t[i] = x[i];
  sb_printf(b, " %s ", key);
  put_list(b, t, n);
}

/* a gather's or scatter's rt_index, after its key */
static void put_index(strbuf *b, const rt_index *ix) {
  sb_printf(b, " index ranks %d,%d,%d xs ", ix->rx, ix->ri, ix->ru);
  put_list(b, ix->xs, ix->rx);
  sb_puts(b, " is ");
  put_list(b, ix->is, ix->ri);
  sb_puts(b, " us ");
  put_list(b, ix->us, ix->ru);
  sb_printf(b, " ivd %d", ix->ivd);
  put_i8(b, "comp", ix->comp_dim, ix->ncomp);
  put_i8(b, "uidim", ix->u_idim, ix->ru);
  put_i8(b, "uxdim", ix->u_xdim, ix->ru);
  put_i8(b, "xidim", ix->x_idim, ix->rx);
  sb_puts(b, " window ");
  put_list(b, ix->window, ix->rx);
  sb_printf(b, " bounds %d combine %d", ix->other_bounds, ix->combine);
}

/* " fused N" and each step "fn arg0 arg1 arg2 alpha beta", then each
** input's strides */
static void put_fused(strbuf *b, const rt_instr *x) {
  const rt_fused *fu = x->data;
  sb_printf(b, " fused %d", fu->nsteps);
  for (int j = 0; j < fu->nsteps; j++) {
    const rt_fstep *s = &fu->step[j];
    sb_printf(b, " %s %d %d %d %.9g %.9g", rt_ewfn_name((rt_ewfn)s->fn), s->arg[0], s->arg[1], s->arg[2], (double)s->alpha, (double)s->beta);
  }
  for (int k = 0; k < x->nin; k++) {
    sb_printf(b, " strides%d ", k);
    put_list(b, fu->stride[k], RT_MAXRANK);
  }
}

static void put_prog(strbuf *b, const rt_prog *p) {
  sb_puts(b, "mesh");
  for (int i = 0; i < p->mesh_rank; i++) sb_printf(b, " %s %lld", p->axis_names[i], (long long)p->mesh[i]);
  sb_putc(b, '\n');
  if (p->zigzag) sb_printf(b, "zigzag %u\n", (unsigned)p->zigzag);
  if (p->stage_axis >= 0) sb_printf(b, "stages %d\n", p->stage_axis);
  for (int g = 0; g < p->ngroups; g++) {
    int64_t ax[RT_MAXRANK];
    for (int i = 0; i < p->groups[g].naxes; i++) ax[i] = p->groups[g].axes[i];
    sb_printf(b, "group %d axes ", g);
    put_list(b, ax, p->groups[g].naxes);
    sb_putc(b, '\n');
  }
  for (int k = 0; k < p->nbufs; k++) {
    const rt_buf *x = &p->bufs[k];
    sb_printf(b, "buf %d name ", k);
    put_str(b, x->name);
    sb_printf(b, " dtype %s kind %s shape ", rt_dtype_name(x->dtype), bufkinds[x->kind]);
    put_list(b, x->shape, x->rank);
    sb_puts(b, " global ");
    put_list(b, x->global_shape, x->rank);
    sb_puts(b, " dims ");
    put_ilist(b, x->dim_group, x->rank);
    sb_printf(b, " carry %d last %d", x->carry_from, x->last_use);
    if (p->stage_axis >= 0) sb_printf(b, " stages %llu", (unsigned long long)x->stages);
    sb_putc(b, '\n');
  }
  for (int k = 0; k < p->ninstrs; k++) {
    const rt_instr *x = &p->instrs[k];
    sb_printf(b, "instr op %s fn ", rt_op_name((rt_op)x->op));
    if (x->op == RT_EW) sb_puts(b, rt_ewfn_name((rt_ewfn)x->fn)); else sb_printf(b, "%d", x->fn);
    sb_printf(b, " rank %d nin %d out %d in ", x->rank, x->nin, x->out);
    put_ilist(b, x->in, RT_MAXIN);
    sb_printf(b, " group %d src %d shape ", x->group, x->src);
    put_list(b, x->shape, RT_MAXRANK);
    for (int s = 0; s < 3; s++) { sb_printf(b, " stride%d ", s); put_list(b, x->stride[s], RT_MAXRANK); }
    int64_t perm[RT_MAXRANK];
    for (int i = 0; i < RT_MAXRANK; i++) perm[i] = x->perm[i];
    sb_puts(b, " perm ");
    put_list(b, perm, RT_MAXRANK);
    sb_printf(b, " outer %lld n %lld inner %lld n2 %lld off %lld batch %lld m %lld k %lld transa %d transb %d split %d concat %d",
              (long long)x->outer, (long long)x->n, (long long)x->inner, (long long)x->n2, (long long)x->off, (long long)x->batch,
              (long long)x->m, (long long)x->k, x->transa, x->transb, x->split_dim, x->concat_dim);
    sb_printf(b, " sa %lld sb %lld sc %lld alpha %.9g beta %.9g nelem %lld", (long long)x->stride_a, (long long)x->stride_b,
              (long long)x->stride_c, (double)x->alpha, (double)x->beta, (long long)x->nelem);
    sb_printf(b, " value %.17g mode %d", x->value, x->mode);
    if (p->stage_axis >= 0) sb_printf(b, " stages %llu", (unsigned long long)x->stages);
    if (x->op == RT_ADAM || x->op == RT_SGD)
      sb_printf(b, " hyper %.17g %.17g %.17g %.17g %.17g %.17g", x->hyper[0], x->hyper[1], x->hyper[2], x->hyper[3], x->hyper[4], x->hyper[5]);
    if ((x->op == RT_GATHER || x->op == RT_SCATTER) && x->data) put_index(b, x->data);
    if (x->op == RT_FUSED && x->data) put_fused(b, x);
    if (x->op == RT_CONST) {            /* the elements' bytes, in hexadecimal */
      const unsigned char *c = x->data;
      size_t n = const_bytes(p, x);
      sb_puts(b, " data ");
      for (size_t i = 0; i < n; i++) sb_printf(b, "%02x", c[i]);
    }
    sb_putc(b, '\n');
  }
}

int progfile_write(const progfile *f, const char *path, char *err, size_t errlen) {
  strbuf b;
  sb_init(&b);
  sb_printf(&b, "carve-program %d\n# a lowered program: carve lower -o writes it, carve bisect reads it\n", PF_VERSION);
  sb_printf(&b, "model %s train %d values %d\n", f->model, f->train, f->nvals);
  put_prog(&b, &f->prog);
  for (int i = 0; i < f->nvals; i++) {
    const pf_value *v = &f->vals[i];
    const drive_leaf *lf = &f->leaves[i];
    sb_printf(&b, "value %d name ", i);
    put_str(&b, v->name);
    sb_printf(&b, " kind %s op ", v->kind);
    put_str(&b, v->op);
    sb_puts(&b, " at ");
    put_str(&b, v->where);
    sb_puts(&b, " sharding ");
    put_str(&b, v->sharding);
    sb_printf(&b, " buf %d partial %u reduced %u", i < f->lr.nvals ? f->lr.buf_of[i] : -1,
              f->lr.partial && i < f->lr.nvals ? f->lr.partial[i] : 0u, v->reduced);
    if (lf->name)
      sb_printf(&b, " leaf %s %s %.17g %.17g %llu", lf->kind == IR_INPUT ? "input" : lf->kind == IR_PARAM ? "param" : "state",
                initkinds[lf->init.kind], lf->init.a, lf->init.b, (unsigned long long)lf->init.seed);
    sb_putc(&b, '\n');
  }
  sb_printf(&b, "end %016llx\n", (unsigned long long)fnv1a(sb_str(&b), b.n));
  int rc = 0;
  if (file_write_atomic(path, sb_str(&b), b.n) < 0) rc = diag_errbuf(err, errlen, "cannot write '%s': %s; check that its folder exists and is writable", path, strerror(errno));
  sb_free(&b);
  return rc;
}

/* ---- reading ---- */

typedef struct rd {
  const diag_src *src;
  const char *p;
  diag *d;
  arena *a;
  int failed;
  int version;    /* the file's */
  int nvals;      /* values the file describes (its model line) */
  int64_t devices, bytes;   /* the mesh's devices; the bytes of the buffers so far */
} rd;

/* a * b into *x; -1 when it overflows or passes lim */
static int mul_within(int64_t a, int64_t b, int64_t lim, int64_t *x) {
  return __builtin_mul_overflow(a, b, x) || *x > lim ? -1 : 0;
}

static int fail(rd *r, const char *at, const char *fmt, const char *what) {
  if (!r->failed) diag_error(r->d, (loc){r->src, (uint32_t)(at - r->src->text)}, fmt, what);
  r->failed = 1;
  return -1;
}

static void blank(rd *r) { while (*r->p == ' ' || *r->p == '\t') r->p++; }

/* the next bare word into buf (at most n-1 characters) */
static int word(rd *r, char *buf, size_t n) {
  blank(r);
  const char *s = r->p;
  while (*r->p && *r->p != ' ' && *r->p != '\t' && *r->p != '\n') r->p++;
  size_t len = (size_t)(r->p - s);
  if (!len) return fail(r, s, "%s", *s == '\n' || !*s ? "the line ends too early" : "expected a word");
  if (len >= n) return fail(r, s, "'%s...' is too long here", arena_strndup(r->a, s, 24));
  memcpy(buf, s, len);
  buf[len] = 0;
  return 0;
}

static int expect(rd *r, const char *kw) {
  blank(r);
  const char *at = r->p;
  char w[64];
  if (word(r, w, sizeof w) < 0) return -1;
  if (strcmp(w, kw)) return fail(r, at, "expected '%s' here", kw);
  return 0;
}

static int integer(rd *r, int64_t *x) {
  blank(r);
  const char *at = r->p;
  char w[64], *end;
  if (word(r, w, sizeof w) < 0) return -1;
  errno = 0;
  long long v = strtoll(w, &end, 10);
  if (*end || errno) return fail(r, at, "'%s' is not a whole number", arena_strndup(r->a, w, strlen(w)));
  *x = v;
  return 0;
}

static int int_in(rd *r, int64_t lo, int64_t hi, int *x) {
  blank(r);
  const char *at = r->p;
  int64_t v;
  if (integer(r, &v) < 0) return -1;
  if (v < lo || v > hi) return fail(r, at, "%s is out of range here", arena_printf(r->a, "%lld", (long long)v));
  *x = (int)v;
  return 0;
}

static int real(rd *r, double *x) {
  blank(r);
  const char *at = r->p;
  char w[64], *end;
  if (word(r, w, sizeof w) < 0) return -1;
  *x = strtod(w, &end);
  if (*end) return fail(r, at, "'%s' is not a number", arena_strndup(r->a, w, strlen(w)));
  return 0;
}

/* "1,2,3" or "-" (empty) into x; n: how many there must be (-1: up to max) */
static int list(rd *r, int64_t *x, int max, int n, int *got) {
  blank(r);
  const char *at = r->p;
  char w[512];
  if (word(r, w, sizeof w) < 0) return -1;
  int k = 0;
  if (strcmp(w, "-")) {
    for (char *s = w; ; ) {
      char *end;
      errno = 0;
      long long v = strtoll(s, &end, 10);
      if (end == s || errno || k == max) return fail(r, at, "'%s' is not a list of numbers here", arena_strndup(r->a, w, strlen(w)));
      x[k++] = v;
      if (!*end) break;
      if (*end != ',') return fail(r, at, "'%s' is not a list of numbers here", arena_strndup(r->a, w, strlen(w)));
      s = end + 1;
    }
  }
  if (n >= 0 && k != n) return fail(r, at, "this list needs %s numbers", arena_printf(r->a, "%d", n));
  if (got) *got = k;
  return 0;
}

static int string(rd *r, const char **out) {
  blank(r);
  const char *at = r->p;
  if (*r->p != '"') return fail(r, at, "%s", "expected a quoted string");
  strbuf b;
  sb_init(&b);
  for (r->p++; *r->p != '"'; r->p++) {
    if (!*r->p || *r->p == '\n') { sb_free(&b); return fail(r, at, "%s", "the string is not closed on its line"); }
    if (*r->p == '\\') {
      r->p++;
      if (*r->p == 'n') sb_putc(&b, '\n');
      else if (*r->p == '"' || *r->p == '\\') sb_putc(&b, *r->p);
      else { sb_free(&b); return fail(r, r->p, "%s", "unknown escape in a string"); }
    } else sb_putc(&b, *r->p);
  }
  r->p++;
  *out = arena_strndup(r->a, sb_str(&b), b.n);
  sb_free(&b);
  return 0;
}

static int end_of_line(rd *r) {
  blank(r);
  if (*r->p == '\n') { r->p++; return 0; }
  if (!*r->p) return 0;
  return fail(r, r->p, "%s", "unexpected text at the end of the line");
}

static int name_index(rd *r, const char *at, const char *w, const char *(*name)(int), int n, const char *what) {
  for (int i = 0; i < n; i++) if (!strcmp(name(i), w)) return i;
  fail(r, at, what, arena_strndup(r->a, w, strlen(w)));
  return -1;
}

static const char *op_name(int i) { return rt_op_name((rt_op)i); }
static const char *fn_name(int i) { return rt_ewfn_name((rt_ewfn)i); }
static const char *dtype_name(int i) { return rt_dtype_name((rt_dtype)i); }
static const char *bufkind_name(int i) { return bufkinds[i]; }
static const char *init_name(int i) { return initkinds[i]; }

/* A buffer's shapes against the mesh (its groups are read): whole, each dim
** is its piece times the devices of the dim's group; no more elements than
** PF_MAX_ELEMS, and every buffer's pieces on every device within
** PF_MAX_BYTES. -1 after saying why, at the list at fault. */
static int buf_fits(rd *r, const rt_prog *p, const char *name, rt_dtype dt, int rank, const int64_t *shape, const int64_t *global,
                    const int64_t *dims, const char *at_shape, const char *at_global, const char *at_dims) {
  int64_t n = 1, whole = 1, bytes;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < -1 || dims[i] >= p->ngroups)
      return fail(r, at_dims, "%s", arena_printf(r->a, "dim %d of buffer '%s' is split by group %lld, which the file does not have" PF_EDITED,
                                                 i, name, (long long)dims[i]));
    int64_t pieces = rt_mesh_group_size(p, (int)dims[i]), want;
    if (shape[i] < 0 || mul_within(n, shape[i], PF_MAX_ELEMS, &n) < 0)
      return fail(r, at_shape, "%s", arena_printf(r->a, "buffer '%s' has a negative size or more than 2^56 elements" PF_EDITED, name));
    if (global[i] < 0 || mul_within(whole, global[i], PF_MAX_ELEMS, &whole) < 0)
      return fail(r, at_global, "%s", arena_printf(r->a, "buffer '%s' has a negative size or more than 2^56 elements whole" PF_EDITED, name));
    if (mul_within(shape[i], pieces, PF_MAX_ELEMS, &want) < 0 || want != global[i])
      return fail(r, at_global, "%s", arena_printf(r->a, "dim %d of buffer '%s' is %lld whole, not its piece of %lld times the %lld "
                                                   "device%s of its group" PF_EDITED, i, name, (long long)global[i],
                                                   (long long)shape[i], (long long)pieces, pieces == 1 ? "" : "s"));
  }
  if (mul_within(n, (int64_t)rt_dtype_size(dt), PF_MAX_BYTES, &bytes) < 0 || mul_within(bytes, r->devices, PF_MAX_BYTES, &bytes) < 0 ||
      __builtin_add_overflow(r->bytes, bytes, &r->bytes) || r->bytes > PF_MAX_BYTES)
    return fail(r, at_shape, "%s", arena_printf(r->a, "with buffer '%s' the program holds more than 2^62 bytes over its devices" PF_EDITED, name));
  return 0;
}

/* " stages MASK" of a pipelined program's buffer or instruction: the
** stages that hold or run it, a bit per stage (0: every one). */
static int read_stages(rd *r, const rt_prog *p, uint64_t *mask) {
  char w[64];
  if (expect(r, "stages") < 0) return -1;
  blank(r);
  const char *at = r->p;
  if (word(r, w, sizeof w) < 0) return -1;
  char *end;
  errno = 0;
  unsigned long long m = strtoull(w, &end, 10);
  int64_t P = p->mesh[p->stage_axis];
  if (*end || errno || w[0] == '-' || (P < 64 && m >> P))
    return fail(r, at, "%s", arena_printf(r->a, "'%s' names stages the mesh does not have (%lld)" PF_EDITED, w, (long long)P));
  *mask = m;
  return 0;
}

static int read_buf(rd *r, rt_prog *p) {
  char w[64];
  const char *name, *at, *at_shape, *at_global, *at_dims;
  int id, rank = 0, n;
  int64_t shape[RT_MAXRANK], global[RT_MAXRANK], dims[RT_MAXRANK];
  if (int_in(r, p->nbufs, p->nbufs, &id) < 0 || expect(r, "name") < 0 || string(r, &name) < 0 || expect(r, "dtype") < 0) return -1;
  blank(r);
  at = r->p;
  if (word(r, w, sizeof w) < 0) return -1;
  int dt = name_index(r, at, w, dtype_name, RT_NDTYPES, "unknown dtype '%s'");
  if (dt < 0 || expect(r, "kind") < 0) return -1;
  blank(r);
  at = r->p;
  if (word(r, w, sizeof w) < 0) return -1;
  int kind = name_index(r, at, w, bufkind_name, 3, "unknown buffer kind '%s'");
  if (kind < 0 || expect(r, "shape") < 0) return -1;
  blank(r);
  at_shape = r->p;
  if (list(r, shape, RT_MAXRANK, -1, &rank) < 0 || expect(r, "global") < 0) return -1;
  blank(r);
  at_global = r->p;
  if (list(r, global, RT_MAXRANK, rank, NULL) < 0 || expect(r, "dims") < 0) return -1;
  blank(r);
  at_dims = r->p;
  if (list(r, dims, RT_MAXRANK, rank, NULL) < 0) return -1;
  int carry, last;
  if (expect(r, "carry") < 0 || int_in(r, -1, INT32_MAX, &carry) < 0 || expect(r, "last") < 0 || int_in(r, -1, INT32_MAX, &last) < 0) return -1;
  if (buf_fits(r, p, name, (rt_dtype)dt, rank, shape, global, dims, at_shape, at_global, at_dims) < 0) return -1;
  n = rt_prog_buf(p, name, (rt_dtype)dt, rank, shape, (rt_bufkind)kind);
  rt_buf *b = &p->bufs[n];
  for (int i = 0; i < rank; i++) { b->global_shape[i] = global[i]; b->dim_group[i] = (int32_t)dims[i]; }
  b->carry_from = carry;
  b->last_use = last;
  if (p->stage_axis >= 0 && read_stages(r, p, &b->stages) < 0) return -1;
  return end_of_line(r);
}

static int hexdigit(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* a list of n small integers into int8s, each in [lo, hi] */
static int i8_list(rd *r, const char *key, int8_t *out, int n, int lo, int hi) {
  int64_t t[RT_MAXRANK];
  blank(r);
  const char *at = r->p;
  if (expect(r, key) < 0 || list(r, t, RT_MAXRANK, n, NULL) < 0) return -1;
  for (int i = 0; i < n; i++) {
    if (t[i] < lo || t[i] > hi) return fail(r, at, "%s", arena_printf(r->a, "'%s' holds %lld, outside %d..%d", key, (long long)t[i], lo, hi));
    out[i] = (int8_t)t[i];
  }
  return 0;
}

/* a gather's or scatter's rt_index (put_index); rt_index_check compares it
** with the buffers before anything runs */
static int read_index(rd *r, rt_prog *p, rt_instr *x) {
  rt_index *ix = arena_alloc(&p->mem, sizeof *ix);
  memset(ix, 0, sizeof *ix);
  int64_t rk[3];
  int ivd, bounds, combine;
  blank(r);
  const char *at = r->p;
  if (expect(r, "index") < 0 || expect(r, "ranks") < 0 || list(r, rk, 3, 3, NULL) < 0) return -1;
  for (int k = 0; k < 3; k++) if (rk[k] < 0 || rk[k] > RT_MAXRANK) return fail(r, at, "%s", "an index map of a rank carve does not hold");
  ix->rx = (int8_t)rk[0]; ix->ri = (int8_t)rk[1]; ix->ru = (int8_t)rk[2];
  if (expect(r, "xs") < 0 || list(r, ix->xs, RT_MAXRANK, ix->rx, NULL) < 0 || expect(r, "is") < 0 || list(r, ix->is, RT_MAXRANK, ix->ri, NULL) < 0 ||
      expect(r, "us") < 0 || list(r, ix->us, RT_MAXRANK, ix->ru, NULL) < 0 || expect(r, "ivd") < 0 || int_in(r, 0, ix->ri, &ivd) < 0) return -1;
  ix->ivd = (int8_t)ivd;
  int ncomp = ivd < ix->ri ? (int)(ix->is[ivd] >= 0 && ix->is[ivd] <= RT_MAXRANK ? ix->is[ivd] : RT_MAXRANK + 1) : 1;
  if (ncomp > RT_MAXRANK) return fail(r, r->p, "%s", "an index with more components than dims");
  ix->ncomp = (int8_t)ncomp;
  if (i8_list(r, "comp", ix->comp_dim, ncomp, 0, RT_MAXRANK - 1) < 0 || i8_list(r, "uidim", ix->u_idim, ix->ru, -1, RT_MAXRANK - 1) < 0 ||
      i8_list(r, "uxdim", ix->u_xdim, ix->ru, -1, RT_MAXRANK - 1) < 0 || i8_list(r, "xidim", ix->x_idim, ix->rx, -1, RT_MAXRANK - 1) < 0)
    return -1;
  if (expect(r, "window") < 0 || list(r, ix->window, RT_MAXRANK, ix->rx, NULL) < 0 || expect(r, "bounds") < 0 || int_in(r, 0, 1, &bounds) < 0 ||
      expect(r, "combine") < 0 || int_in(r, 0, RT_IX_MIN, &combine) < 0) return -1;
  ix->other_bounds = (uint8_t)bounds;
  ix->combine = (uint8_t)combine;
  x->data = ix;
  return 0;
}

/* a fused instruction's steps and strides (put_fused); the executor checks
** the steps against its inputs before anything runs */
static int read_fused(rd *r, rt_prog *p, rt_instr *x) {
  rt_fused *fu = arena_alloc(&p->mem, sizeof *fu);
  memset(fu, 0, sizeof *fu);
  char w[64];
  if (expect(r, "fused") < 0 || int_in(r, 1, RT_FUSE_MAXSTEPS, &fu->nsteps) < 0) return -1;
  for (int j = 0; j < fu->nsteps; j++) {
    rt_fstep *s = &fu->step[j];
    blank(r);
    const char *at = r->p;
    int fn, a[3];
    double al, be;
    if (word(r, w, sizeof w) < 0 || (fn = name_index(r, at, w, fn_name, RT_NEWFN, "unknown elementwise function '%s'")) < 0) return -1;
    for (int k = 0; k < 3; k++) if (int_in(r, -RT_MAXIN, RT_FUSE_MAXSTEPS - 1, &a[k]) < 0) return -1;
    if (real(r, &al) < 0 || real(r, &be) < 0) return -1;
    *s = (rt_fstep){(uint8_t)fn, {(int8_t)a[0], (int8_t)a[1], (int8_t)a[2]}, (float)al, (float)be};
  }
  for (int k = 0; k < x->nin; k++) {
    char key[16];
    snprintf(key, sizeof key, "strides%d", k);
    blank(r);
    const char *at = r->p;
    if (expect(r, key) < 0 || list(r, fu->stride[k], RT_MAXRANK, RT_MAXRANK, NULL) < 0) return -1;
    int64_t span = 0, t;
    for (int d = 0; d < RT_MAXRANK; d++)
      if (fu->stride[k][d] < 0 || mul_within(x->shape[d], fu->stride[k][d], PF_MAX_SIZE, &t) < 0 || (span += t) > PF_MAX_SIZE)
        return fail(r, at, "%s", "the instruction's strides are negative or reach past 2^60" PF_EDITED);
  }
  x->data = fu;
  return 0;
}

static int64_t at_least_1(int64_t x) { return x < 1 ? 1 : x; }

/* The sizes an instruction names, and the products of them the executor
** forms when it checks them against the buffers, within PF_MAX_SIZE. NULL,
** or why not. */
static const char *sizes_fit(const rt_instr *x) {
  const int64_t one[] = {x->outer, x->n, x->inner, x->n2, x->off, x->batch, x->m, x->k, x->stride_a, x->stride_b, x->stride_c, x->nelem};
  for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
    if (one[i] < 0 || one[i] > PF_MAX_SIZE) return "a size of the instruction is negative or more than 2^60";
  int64_t O = at_least_1(x->outer), N = at_least_1(x->n), IN = at_least_1(x->inner), M = at_least_1(x->m), K = at_least_1(x->k);
  const int64_t three[][3] = {{O, N, IN}, {O, M, K}, {O, M, N}, {O, M, IN}, {O, at_least_1(x->n2), IN}};
  int64_t t;
  for (size_t i = 0; i < sizeof three / sizeof three[0]; i++)
    if (mul_within(three[i][0], three[i][1], PF_MAX_SIZE, &t) < 0 || mul_within(t, three[i][2], PF_MAX_SIZE, &t) < 0)
      return "the instruction's sizes multiply to more than 2^60";
  int64_t stride = x->stride_a > x->stride_b ? x->stride_a : x->stride_b;
  if (mul_within(at_least_1(x->batch), x->stride_c > stride ? x->stride_c : stride, PF_MAX_SIZE, &t) < 0)
    return "the instruction's batch and strides multiply to more than 2^60";
  int64_t tot = 1;
  for (int d = 0; d < RT_MAXRANK; d++)
    if (x->shape[d] < 0 || mul_within(tot, at_least_1(x->shape[d]), PF_MAX_SIZE, &tot) < 0)
      return "the instruction's shape is negative or holds more than 2^60 elements";
  for (int s = 0; s < 3; s++) {
    int64_t span = 0;
    for (int d = 0; d < RT_MAXRANK; d++)
      if (x->stride[s][d] < 0 || mul_within(x->shape[d], x->stride[s][d], PF_MAX_SIZE, &t) < 0 || (span += t) > PF_MAX_SIZE)
        return "the instruction's strides are negative or reach past 2^60";
  }
  return NULL;
}

/* A collective's sizes against its buffers, as the MPI communicator checks
** them when it runs; the in-process mesh (bisect) trusts them. NULL, or why not. */
static const char *collective_fits(rd *r, const rt_prog *p, const rt_instr *x) {
  if (x->op == RT_SEND || x->op == RT_RECV) {     /* ring attention's transfers: one buffer, out */
    if (x->group < 0) return "a transfer needs a group";
    if (x->op == RT_SEND ? x->in[0] != x->out : x->in[0] >= 0) return "a send reads its out (in0), a receive reads nothing";
    if (x->n2 < 0 || x->n2 >= rt_mesh_group_size(p, x->group)) return "a transfer's peer is not in its group";
    return NULL;
  }
  if (x->group < 0 || x->in[0] < 0) return "a collective needs a group and an input";
  const rt_buf *bi = &p->bufs[x->in[0]], *bo = &p->bufs[x->out];
  int64_t P = rt_mesh_group_size(p, x->group), view = x->outer * x->n * x->inner, out = bi->nelem;   /* sizes_fit bounds the view */
  if (bi->dtype != bo->dtype) return "a collective's input and output differ in dtype";
  if (x->in[0] == x->out && x->op != RT_ALL_REDUCE) return "the collective reads and writes the same buffer";
  if (view != bi->nelem)
    return arena_printf(r->a, "the collective's view [%lld, %lld, %lld] does not hold its input's %lld elements", (long long)x->outer,
                        (long long)x->n, (long long)x->inner, (long long)bi->nelem);
  if (x->op == RT_ALL_GATHER && mul_within(view, P, PF_MAX_ELEMS, &out) < 0) return "the gathered result holds more than 2^56 elements";
  if (x->op == RT_REDUCE_SCATTER) {
    if (x->n % P) return arena_printf(r->a, "%lld rows do not split into the %lld devices of the group", (long long)x->n, (long long)P);
    out = view / P;
  }
  if (x->op == RT_ALL_TO_ALL) {
    int64_t tot = 1;
    if (x->rank < 1 || x->split_dim < 0 || x->split_dim >= x->rank || x->concat_dim < 0 || x->concat_dim >= x->rank)
      return "an all_to_all's split and concat dims must be dims of its shape";
    for (int d = 0; d < x->rank; d++) {
      if (x->shape[d] < 1) return "an all_to_all's shape has an empty dim";
      tot *= x->shape[d];                 /* sizes_fit bounds the product */
    }
    if (x->shape[x->split_dim] % P || tot != bi->nelem)
      return "an all_to_all's shape does not hold its input, or does not split into the devices of its group";
  }
  if (bo->nelem != out)
    return arena_printf(r->a, "the collective writes %lld elements into a buffer of %lld", (long long)out, (long long)bo->nelem);
  return NULL;
}

static int read_instr(rd *r, rt_prog *p) {
  char w[64];
  blank(r);
  const char *at = r->p;
  if (expect(r, "op") < 0) return -1;
  blank(r);
  at = r->p;
  if (word(r, w, sizeof w) < 0) return -1;
  int op = name_index(r, at, w, op_name, RT_NOPS, "unknown instruction '%s'");
  if (op < 0 || expect(r, "fn") < 0) return -1;
  int fn = 0;
  if (op == RT_EW) {
    blank(r);
    at = r->p;
    if (word(r, w, sizeof w) < 0 || (fn = name_index(r, at, w, fn_name, RT_NEWFN, "unknown elementwise function '%s'")) < 0) return -1;
  } else if (int_in(r, 0, 255, &fn) < 0) return -1;
  int rank, nin, out, group, src, nread;
  int64_t in[RT_MAXIN], shape[RT_MAXRANK], stride[3][RT_MAXRANK], perm[RT_MAXRANK];
  if (expect(r, "rank") < 0 || int_in(r, 0, RT_MAXRANK, &rank) < 0 || expect(r, "nin") < 0 || int_in(r, 0, RT_MAXIN, &nin) < 0) return -1;
  if (expect(r, "out") < 0 || int_in(r, 0, p->nbufs - 1, &out) < 0 || expect(r, "in") < 0 || list(r, in, RT_MAXIN, -1, &nread) < 0) return -1;
  if (nread != 4 && nread != 6 && nread != RT_MAXIN) return fail(r, at, "%s", "an instruction lists 4, 6 or 8 inputs");   /* 4: version 2; 6: versions 3 to 5 */
  for (int k = nread; k < RT_MAXIN; k++) in[k] = -1;
  if (expect(r, "group") < 0 || int_in(r, -1, p->ngroups - 1, &group) < 0 || expect(r, "src") < 0 || int_in(r, -1, r->nvals - 1, &src) < 0) return -1;
  int fixed = r->version < 8 ? PF_RANK_V7 : RT_MAXRANK;   /* the entries of the lists below */
  memset(shape, 0, sizeof shape);
  memset(stride, 0, sizeof stride);
  memset(perm, 0, sizeof perm);
  if (rank > fixed) return fail(r, at, "%s", "an instruction of a rank its file's version does not hold" PF_EDITED);
  if (expect(r, "shape") < 0 || list(r, shape, fixed, fixed, NULL) < 0) return -1;
  static const char *const sk[3] = {"stride0", "stride1", "stride2"};
  for (int s = 0; s < 3; s++) if (expect(r, sk[s]) < 0 || list(r, stride[s], fixed, fixed, NULL) < 0) return -1;
  if (expect(r, "perm") < 0 || list(r, perm, fixed, fixed, NULL) < 0) return -1;
  static const char *const ik[] = {"outer", "n", "inner", "n2", "off", "batch", "m", "k"};
  int64_t iv[8];
  for (int i = 0; i < 8; i++) if (expect(r, ik[i]) < 0 || integer(r, &iv[i]) < 0) return -1;
  int ta, tb, sd, cd;
  if (expect(r, "transa") < 0 || int_in(r, 0, 1, &ta) < 0 || expect(r, "transb") < 0 || int_in(r, 0, 1, &tb) < 0) return -1;
  if (expect(r, "split") < 0 || int_in(r, -1, RT_MAXRANK - 1, &sd) < 0 || expect(r, "concat") < 0 || int_in(r, -1, RT_MAXRANK - 1, &cd) < 0) return -1;
  int64_t sa, sb, sc, nelem;
  double alpha, beta;
  if (expect(r, "sa") < 0 || integer(r, &sa) < 0 || expect(r, "sb") < 0 || integer(r, &sb) < 0 || expect(r, "sc") < 0 || integer(r, &sc) < 0) return -1;
  if (expect(r, "alpha") < 0 || real(r, &alpha) < 0 || expect(r, "beta") < 0 || real(r, &beta) < 0 || expect(r, "nelem") < 0 || integer(r, &nelem) < 0) return -1;
  double value;
  int mode;
  if (expect(r, "value") < 0 || real(r, &value) < 0 || expect(r, "mode") < 0 || int_in(r, 0, 255, &mode) < 0) return -1;
  uint64_t stages = 0;
  if (p->stage_axis >= 0 && read_stages(r, p, &stages) < 0) return -1;
  for (int k = 0; k < RT_MAXIN; k++)
    if (in[k] < -1 || in[k] >= p->nbufs) return fail(r, at, "%s", "an instruction reads a buffer that does not exist");
  for (int i = 0; i < RT_MAXRANK; i++)
    if (perm[i] < 0 || perm[i] >= RT_MAXRANK) return fail(r, at, "%s", "an instruction's perm names a dim carve does not hold" PF_EDITED);
  rt_instr *x = rt_prog_emit(p, (rt_op)op, out);
  x->fn = (uint8_t)fn;
  x->rank = (uint8_t)rank;
  x->nin = (uint8_t)nin;
  for (int k = 0; k < RT_MAXIN; k++) x->in[k] = (int32_t)in[k];
  x->group = group;
  x->src = src;
  for (int i = 0; i < RT_MAXRANK; i++) {
    x->shape[i] = shape[i];
    for (int s = 0; s < 3; s++) x->stride[s][i] = stride[s][i];
    x->perm[i] = (int8_t)perm[i];
  }
  x->outer = iv[0]; x->n = iv[1]; x->inner = iv[2]; x->n2 = iv[3]; x->off = iv[4]; x->batch = iv[5]; x->m = iv[6]; x->k = iv[7];
  x->transa = (int8_t)ta; x->transb = (int8_t)tb; x->split_dim = (int8_t)sd; x->concat_dim = (int8_t)cd;
  x->stride_a = sa; x->stride_b = sb; x->stride_c = sc;
  x->alpha = (float)alpha; x->beta = (float)beta;
  x->nelem = nelem;
  x->value = value;
  x->mode = (uint8_t)mode;
  x->stages = stages;
  rt_instr_dtypes(p, x);
  const char *why = sizes_fit(x);
  if (!why && rt_is_collective((rt_op)op)) why = collective_fits(r, p, x);
  if (why) return fail(r, at, "%s", arena_printf(r->a, "%s" PF_EDITED, why));
  if (op == RT_ADAM && r->version < 4)
    return fail(r, at, "%s", "an adam update of a program file before version 4 reads other scalars; lower the model again (carve lower -o)");
  if (op == RT_ADAM || op == RT_SGD) {
    if (expect(r, "hyper") < 0) return -1;
    for (int k = 0; k < 4; k++) if (real(r, &x->hyper[k]) < 0) return -1;
    if (r->version >= 7) { for (int k = 4; k < 6; k++) if (real(r, &x->hyper[k]) < 0) return -1; }
    else if (op == RT_ADAM) { x->hyper[4] = 1 - x->hyper[0]; x->hyper[5] = 1 - x->hyper[1]; }   /* as the kernel computed them before */
  }
  if (op == RT_GATHER || op == RT_SCATTER) {
    if (read_index(r, p, x) < 0) return -1;
    return end_of_line(r);
  }
  if (op == RT_FUSED) {
    if (r->version < 9) return fail(r, at, "%s", "fused steps in a program file before version 9" PF_EDITED);
    if (read_fused(r, p, x) < 0) return -1;
    return end_of_line(r);
  }
  if (op == RT_CONST) {
    size_t n = const_bytes(p, x);
    if (expect(r, "data") < 0) return -1;
    blank(r);
    at = r->p;
    if (strnlen(r->p, 2 * n) < 2 * n)      /* before allocating what the line cannot hold */
      return fail(r, at, "%s", arena_printf(r->a, "a constant needs %zu bytes in hexadecimal here", n));
    unsigned char *c = arena_alloc(&p->mem, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
      int hi = hexdigit(r->p[0]), lo = hi < 0 ? -1 : hexdigit(r->p[1]);
      if (lo < 0) return fail(r, at, "%s", arena_printf(r->a, "a constant needs %zu bytes in hexadecimal here", n));
      c[i] = (unsigned char)(hi << 4 | lo);
      r->p += 2;
    }
    x->data = c;
  }
  return end_of_line(r);
}

static int read_value(rd *r, progfile *f, int expect_id) {
  int id, buf;
  int64_t partial, reduced;
  char w[64];
  pf_value *v;
  if (int_in(r, expect_id, expect_id, &id) < 0) return -1;
  v = &f->vals[id];
  if (expect(r, "name") < 0 || string(r, &v->name) < 0 || expect(r, "kind") < 0 || word(r, w, sizeof w) < 0) return -1;
  v->kind = arena_strndup(&f->mem, w, strlen(w));
  if (expect(r, "op") < 0 || string(r, &v->op) < 0 || expect(r, "at") < 0 || string(r, &v->where) < 0) return -1;
  if (expect(r, "sharding") < 0 || string(r, &v->sharding) < 0) return -1;
  if (expect(r, "buf") < 0 || int_in(r, -1, f->prog.nbufs - 1, &buf) < 0) return -1;
  blank(r);
  const char *at = r->p;
  if (expect(r, "partial") < 0 || integer(r, &partial) < 0 || expect(r, "reduced") < 0 || integer(r, &reduced) < 0) return -1;
  if (partial < 0 || partial >> f->prog.mesh_rank || reduced < 0 || reduced >> f->prog.mesh_rank)
    return fail(r, at, "%s", "a value's partial or reduced axes are not axes of the mesh" PF_EDITED);
  f->lr.buf_of[id] = buf;
  f->lr.partial[id] = (uint32_t)partial;
  v->reduced = (uint32_t)reduced;
  blank(r);
  if (!strncmp(r->p, "leaf", 4)) {
    drive_leaf *lf = &f->leaves[id];
    uint64_t seed;
    if (expect(r, "leaf") < 0) return -1;
    blank(r);
    at = r->p;
    if (word(r, w, sizeof w) < 0) return -1;
    if (strcmp(w, "input") && strcmp(w, "param") && strcmp(w, "state")) return fail(r, at, "unknown leaf kind '%s'", arena_strndup(r->a, w, strlen(w)));
    lf->kind = !strcmp(w, "input") ? IR_INPUT : !strcmp(w, "param") ? IR_PARAM : IR_STATE;
    blank(r);
    at = r->p;
    if (word(r, w, sizeof w) < 0) return -1;
    int k = name_index(r, at, w, init_name, 5, "unknown init '%s'");
    blank(r);
    const char *at_init = r->p;
    if (k < 0 || real(r, &lf->init.a) < 0 || real(r, &lf->init.b) < 0) return -1;
    if (!(fabs(lf->init.a) <= PF_MAX_INIT && fabs(lf->init.b) <= PF_MAX_INIT) || (k == RT_INIT_INTS && !(lf->init.b >= 1 && lf->init.b <= 2147483648.0)))
      return fail(r, at_init, "%s", "a leaf's init numbers are not finite, or too large" PF_EDITED);
    blank(r);
    at = r->p;
    if (word(r, w, sizeof w) < 0) return -1;
    char *end;
    errno = 0;
    seed = strtoull(w, &end, 10);
    if (*end || errno) return fail(r, at, "'%s' is not a seed", arena_strndup(r->a, w, strlen(w)));
    lf->init.kind = (rt_initkind)k;
    lf->init.seed = seed;
    lf->name = v->name;
  }
  return end_of_line(r);
}

int progfile_read(progfile *f, diag *d, const char *path) {
  memset(f, 0, sizeof *f);
  arena_init(&f->mem);
  rt_prog_init(&f->prog);
  f->owns = 1;
  const diag_src *src = diag_load_file(&f->mem, d, path);
  if (!src) return -1;
  rd r = {src, src->text, d, &f->mem, 0, 0, 0, 1, 0};
  char w[64];
  int version, nvals = 0, train, stage = 0, nextval = 0;
  if (strncmp(r.p, "carve-program ", 14)) return fail(&r, r.p, "%s", "not a carve program file (carve lower -o writes them)");
  r.p += 14;
  if (int_in(&r, 1, 1000000, &version) < 0) return -1;
  r.version = version;
  if (version > PF_VERSION)
    return fail(&r, src->text, "%s", arena_printf(&f->mem, "a program file of version %d; this carve reads version %d", version, PF_VERSION));
  if (end_of_line(&r) < 0) return -1;
  while (*r.p && !r.failed) {
    blank(&r);
    if (*r.p == '#' ) { while (*r.p && *r.p != '\n') r.p++; if (*r.p) r.p++; continue; }
    if (*r.p == '\n') { r.p++; continue; }
    const char *at = r.p;
    if (word(&r, w, sizeof w) < 0) break;
    if (!strcmp(w, "model") && stage == 0) {
      if (word(&r, w, sizeof w) < 0 || expect(&r, "train") < 0 || int_in(&r, 0, 2, &train) < 0 || expect(&r, "values") < 0 ||
          int_in(&r, 0, INT32_MAX / 2, &nvals) < 0 || end_of_line(&r) < 0)
        break;
      if ((size_t)nvals > src->len / 16) {     /* a value's line is longer than that: refused before allocating */
        fail(&r, at, "%s", arena_printf(&f->mem, "the file cannot describe %d values in %zu bytes" PF_EDITED, nvals, src->len));
        break;
      }
      f->model = arena_strndup(&f->mem, w, strlen(w));
      f->train = train;
      f->nvals = r.nvals = nvals;
      f->vals = arena_alloc(&f->mem, sizeof *f->vals * (size_t)(nvals + 1));
      f->leaves = arena_alloc(&f->mem, sizeof *f->leaves * (size_t)(nvals + 1));
      f->lr.nvals = nvals;
      f->lr.buf_of = mem_alloc(sizeof(int) * (size_t)(nvals + 1));
      f->lr.partial = mem_calloc((size_t)nvals + 1, sizeof(uint32_t));
      for (int i = 0; i < nvals; i++) f->lr.buf_of[i] = -1;
      stage = 1;
    } else if (!strcmp(w, "mesh") && stage == 1) {
      while (!r.failed) {
        blank(&r);
        if (*r.p == '\n' || !*r.p) break;
        int size;
        if (f->prog.mesh_rank == RT_MAXRANK) { fail(&r, r.p, "%s", "too many mesh axes"); break; }
        if (word(&r, w, sizeof w) < 0) break;
        blank(&r);
        const char *at_size = r.p;
        if (int_in(&r, 1, RT_MAX_DEVICES, &size) < 0) break;
        if (mul_within(r.devices, size, RT_MAX_DEVICES, &r.devices) < 0) {
          fail(&r, at_size, "%s", arena_printf(&f->mem, "the mesh has more than 2^20 devices (%d), the most carve runs" PF_EDITED, RT_MAX_DEVICES));
          break;
        }
        f->prog.axis_names[f->prog.mesh_rank] = arena_intern_cstr(&f->prog.mem, w);
        f->prog.mesh[f->prog.mesh_rank++] = size;
      }
      if (end_of_line(&r) < 0) break;
      stage = 2;
    } else if (!strcmp(w, "zigzag") && stage == 2 && !f->prog.zigzag && !f->prog.ngroups) {
      int64_t mask;                       /* the axes whose pieces are dealt zig-zag (version 9) */
      blank(&r);
      const char *at_mask = r.p;
      if (integer(&r, &mask) < 0) break;
      if (mask < 1 || mask >= ((int64_t)1 << f->prog.mesh_rank)) {
        fail(&r, at_mask, "%s", "zigzag names axes the mesh does not have" PF_EDITED);
        break;
      }
      f->prog.zigzag = (uint32_t)mask;
      if (end_of_line(&r) < 0) break;
    } else if (!strcmp(w, "stages") && stage == 2 && f->prog.stage_axis < 0 && !f->prog.ngroups && !f->prog.nbufs) {
      int axis;                           /* a pipelined program's stage axis (version 10) */
      blank(&r);
      const char *at_axis = r.p;
      if (version < 10) { fail(&r, at, "%s", "a stages line in a program file before version 10" PF_EDITED); break; }
      if (int_in(&r, 0, f->prog.mesh_rank - 1, &axis) < 0) break;
      if (f->prog.mesh[axis] > 64) { fail(&r, at_axis, "%s", "a pipeline has at most 64 stages" PF_EDITED); break; }
      f->prog.stage_axis = axis;
      if (end_of_line(&r) < 0) break;
    } else if (!strcmp(w, "group") && stage == 2) {
      int id, n;
      int64_t ax[RT_MAXRANK];
      int axes[RT_MAXRANK];
      if (int_in(&r, f->prog.ngroups, f->prog.ngroups, &id) < 0 || expect(&r, "axes") < 0 || list(&r, ax, RT_MAXRANK, -1, &n) < 0) break;
      for (int i = 0; i < n; i++) {
        if (ax[i] < 0 || ax[i] >= f->prog.mesh_rank) { fail(&r, at, "%s", "a group names an axis the mesh does not have"); break; }
        axes[i] = (int)ax[i];
        for (int j = 0; j < i; j++)
          if (axes[j] == axes[i]) { fail(&r, at, "%s", "a group names an axis twice" PF_EDITED); break; }
        if (r.failed) break;
      }
      if (r.failed) break;
      if (rt_prog_group(&f->prog, n, axes) != id) { fail(&r, at, "%s", "the same group twice"); break; }
      if (end_of_line(&r) < 0) break;
    } else if (!strcmp(w, "buf") && stage == 2) {
      if (read_buf(&r, &f->prog) < 0) break;
    } else if (!strcmp(w, "instr") && (stage == 2 || stage == 3)) {
      stage = 3;
      if (read_instr(&r, &f->prog) < 0) break;
    } else if (!strcmp(w, "value") && stage >= 2 && nextval < nvals) {
      stage = 4;
      if (read_value(&r, f, nextval++) < 0) break;
    } else if (!strcmp(w, "end") && stage >= 2) {
      if (nextval != nvals) { fail(&r, at, "%s", arena_printf(&f->mem, "the file describes %d of its %d values", nextval, nvals)); break; }
      blank(&r);
      const char *hat = r.p;
      if (word(&r, w, sizeof w) < 0) break;
      if (strcmp(w, arena_printf(&f->mem, "%016llx", (unsigned long long)fnv1a(src->text, (size_t)(at - src->text))))) {
        fail(&r, hat, "%s", "the checksum does not match: the file was changed or damaged after carve wrote it");
        break;
      }
      if (end_of_line(&r) < 0) break;
      stage = 5;
      break;
    } else {
      fail(&r, at, "'%s' is not expected here", arena_strndup(&f->mem, w, strlen(w)));
      break;
    }
  }
  if (!r.failed && stage != 5) fail(&r, r.p, "%s", "the file ends before its 'end' line (cut short?)");
  if (r.failed) return -1;
  for (int i = 0; i < f->prog.nbufs; i++) {
    int c = f->prog.bufs[i].carry_from;
    if (c < -1 || c >= f->prog.nbufs) return fail(&r, src->text, "%s", "a buffer carries from one that does not exist");
  }
  /* a pipeline's stages: every transfer between them arrives (else running it would hang), said at its instruction */
  char why[512];
  int bad;
  if (rt_prog_check_transfers(&f->prog, &bad, why, sizeof why) < 0) {
    const char *line = src->text;
    for (int k = 0; k <= bad && line; ) {      /* the bad-th instruction's line */
      if (!strncmp(line, "instr ", 6) && k++ == bad) break;
      line = strchr(line, '\n');
      if (line) line++;
    }
    return fail(&r, line ? line : src->text, "%s", arena_printf(&f->mem, "%s" PF_EDITED, why));
  }
  return 0;
}
