/*
** prog.c: building per-device programs, name tables, and the text
** listing that `carve lower` prints.
*/
#include "runtime/prog.h"
#include "util/mem.h"
#include "util/strbuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ORDER RT_OP */
static const char *const op_names[] = {
  "fill", "copy", "ew", "transpose", "gemm", "reduce", "reduce_max_grad",
  "softmax", "log_softmax", "softmax_grad", "log_softmax_grad",
  "layernorm", "layernorm_grad", "gather_rows", "scatter_rows", "xent", "xent_grad", "xent_proj", "xent_sumexp",
  "causal_mask", "block_copy", "shard_slice", "iota", "const",
  "adam", "sgd", "attention", "attention_grad", "attn_block", "attn_finish", "attn_block_grad", "gather", "scatter",
  "fused", "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send", "recv",
};
_Static_assert(sizeof op_names / sizeof op_names[0] == RT_NOPS, "ORDER RT_OP: op_names");

/* ORDER RT_EWFN */
static const char *const ewfn_names[] = {
  "neg", "exp", "log", "sqrt", "rsqrt", "tanh", "relu", "gelu", "gelu_tanh",
  "sigmoid", "silu", "affine",
  "add", "sub", "mul", "div", "max", "min", "ge",
  "relu_grad", "gelu_grad", "gelu_tanh_grad", "silu_grad", "axpy", "axpby",
  "adam_denom", "abs", "sign", "erf", "erfc", "log1p", "expm1", "sin", "cos", "floor", "ceil", "round", "round_afz", "tan", "cbrt",
  "popcnt", "clz", "not", "bitcast", "convert", "pow", "and", "or", "xor", "rem", "atan2", "shl", "shra", "shrl",
  "cmp_eq", "cmp_ne", "cmp_lt", "cmp_le", "cmp_gt", "cmp_ge", "select",
};
_Static_assert(sizeof ewfn_names / sizeof ewfn_names[0] == RT_NEWFN, "ORDER RT_EWFN: ewfn_names");

static const struct { const char *name; size_t size; } dtypes[] = {   /* ORDER RT_DTYPE */
  {"f32", 4}, {"i32", 4}, {"bf16", 2}, {"f16", 2}, {"f64", 8}, {"i64", 8}, {"i1", 1}, {"i8", 1}, {"ui8", 1},
  {"i16", 2}, {"ui16", 2}, {"ui32", 4},
};
_Static_assert(sizeof dtypes / sizeof dtypes[0] == RT_NDTYPES, "ORDER RT_DTYPE: dtypes");

size_t rt_dtype_size(rt_dtype t) { return (unsigned)t < RT_NDTYPES ? dtypes[t].size : 4; }
const char *rt_dtype_name(rt_dtype t) { return (unsigned)t < RT_NDTYPES ? dtypes[t].name : "?"; }

size_t rt_buf_bytes(const rt_prog *p, int b) {
  if (b < 0 || b >= p->nbufs) return 0;
  return (size_t)p->bufs[b].nelem * rt_dtype_size(p->bufs[b].dtype);
}

int64_t rt_coll_bytes_of(int64_t in_elems, int64_t out_elems, size_t elem) {
  return (in_elems > out_elems ? in_elems : out_elems) * (int64_t)elem;
}

int64_t rt_coll_bytes(const rt_prog *p, const rt_instr *x) {
  if (x->op == RT_RECV) return (int64_t)rt_buf_bytes(p, x->out);
  return rt_coll_bytes_of(p->bufs[x->in[0]].nelem, p->bufs[x->out].nelem, rt_dtype_size(p->bufs[x->out].dtype));
}

double rt_instr_elems(const rt_prog *p, const rt_instr *x) {
  double out = (double)p->bufs[x->out].nelem, in0 = x->in[0] >= 0 ? (double)p->bufs[x->in[0]].nelem : 0;
  if (x->op == RT_GATHER_ROWS || x->op == RT_GATHER) return out;
  if (x->op == RT_XENT && rt_xent_split(x)) return (double)x->outer;    /* a logit a row: the statistics came before */
  if (x->op == RT_SCATTER) return out + (x->in[2] >= 0 ? (double)p->bufs[x->in[2]].nelem : 0);   /* copied, then updated */
  if (x->op == RT_SCATTER_ROWS) return out + (x->in[1] >= 0 ? (double)p->bufs[x->in[1]].nelem : 0);   /* zeroed, then added to */
  return out > in0 ? out : in0;
}

double rt_instr_rows(const rt_instr *x) {
  switch (x->op) {
  case RT_SOFTMAX: case RT_LOG_SOFTMAX: case RT_SOFTMAX_GRAD: case RT_LOG_SOFTMAX_GRAD:
  case RT_LAYERNORM: case RT_LAYERNORM_GRAD: case RT_XENT: case RT_XENT_GRAD: case RT_XENT_PROJ: case RT_XENT_SUMEXP:
    return (double)x->outer;
  default: return 0;
  }
}

double rt_alpha(const rt_instr *x) { return (float)x->value == x->alpha ? x->value : (double)x->alpha; }

int rt_op_has_f64(rt_op op) {
  switch (op) {
  case RT_SOFTMAX: case RT_LOG_SOFTMAX: case RT_SOFTMAX_GRAD: case RT_LOG_SOFTMAX_GRAD:
  case RT_LAYERNORM: case RT_LAYERNORM_GRAD: case RT_XENT: case RT_XENT_GRAD: case RT_XENT_SUMEXP: case RT_CAUSAL_MASK:
  case RT_REDUCE_MAX_GRAD: case RT_SCATTER_ROWS: case RT_ATTENTION: case RT_ATTENTION_GRAD:
    return 1;
  default: return 0;
  }
}

int rt_instr_writes_in(const rt_instr *x, int k) {
  if (k < 0 || k >= RT_MAXIN || x->in[k] < 0) return 0;
  switch (x->op) {
  case RT_ADAM: return k == 2 || k == 3;
  case RT_SGD: return k == 2;
  case RT_XENT_GRAD: return k == 3;
  case RT_XENT_PROJ: return k >= 4;
  case RT_EW: return k == 3;
  case RT_ATTN_BLOCK: return k == 3 || k == 4;
  case RT_ATTN_FINISH: return k == 3;
  case RT_ATTN_BLOCK_GRAD: return k == 6 || k == 7;
  default: return 0;
  }
}

int rt_instr_writes(const rt_instr *x, int b) {
  if (x->out == b) return 1;
  for (int k = 0; k < RT_MAXIN; k++) if (x->in[k] == b && rt_instr_writes_in(x, k)) return 1;
  return 0;
}

int rt_is_collective(rt_op op) {
  return op == RT_ALL_REDUCE || op == RT_ALL_GATHER || op == RT_REDUCE_SCATTER || op == RT_ALL_TO_ALL || op == RT_SEND ||
         op == RT_RECV;
}

int rt_prog_stage(const rt_prog *p, int device) {
  if (p->stage_axis < 0 || p->stage_axis >= p->mesh_rank) return 0;
  int64_t below = 1;
  for (int i = p->stage_axis + 1; i < p->mesh_rank; i++) below *= p->mesh[i];
  return (int)((device / below) % p->mesh[p->stage_axis]);
}

int rt_stage_holds(const rt_prog *p, int stage, int b) {
  return b >= 0 && b < p->nbufs && (!p->bufs[b].stages || (stage < 64 && (p->bufs[b].stages >> stage & 1)));
}

int rt_stage_runs(const rt_instr *x, int stage) { return !x->stages || (stage < 64 && (x->stages >> stage & 1)); }

/* n elements of src in a new array of the capacity grow_for expects */
static void *copy_array(const void *src, int n, size_t elem) {
  size_t cap = 16;
  while (cap < (size_t)n) cap *= 2;
  void *a = mem_alloc(cap * elem);
  if (n) memcpy(a, src, (size_t)n * elem);
  return a;
}

void rt_prog_copy_stage(const rt_prog *p, int stage, rt_prog *out) {
  *out = *p;
  arena_init(&out->mem);
  out->bufs = copy_array(p->bufs, p->nbufs, sizeof *p->bufs);
  out->instrs = copy_array(p->instrs, p->ninstrs, sizeof *p->instrs);
  out->groups = copy_array(p->groups, p->ngroups, sizeof *p->groups);
  rt_prog_keep_stage(out, stage);
}

void rt_prog_keep_stage(rt_prog *p, int stage) {
  int n = 0;
  for (int i = 0; i < p->ninstrs; i++)
    if (rt_stage_runs(&p->instrs[i], stage)) p->instrs[n++] = p->instrs[i];
  p->ninstrs = n;
  rt_prog_finish(p);
}

const char *rt_op_name(rt_op op) {
  return (unsigned)op < RT_NOPS ? op_names[op] : "?";
}

const char *rt_coll_name(const rt_instr *x) {
  if (x->op == RT_ALL_REDUCE && x->fn == RT_RMAX) return "all_reduce(max)";
  if (x->op == RT_ALL_REDUCE && x->fn == RT_RMIN) return "all_reduce(min)";
  return rt_op_name((rt_op)x->op);
}

int rt_xent_split(const rt_instr *x) {
  return (x->op == RT_XENT || x->op == RT_XENT_GRAD) && x->in[4] >= 0 && x->n2 > 0;
}

const char *rt_ewfn_name(rt_ewfn fn) {
  return (unsigned)fn < RT_NEWFN ? ewfn_names[fn] : "?";
}

int rt_ewfn_arity(rt_ewfn fn) {
  if (fn <= RT_AFFINE || fn == RT_ADAM_DENOM || (fn >= RT_ABS && fn <= RT_CONVERT)) return 1;
  if (fn == RT_SELECT) return 3;
  if (fn < RT_NEWFN) return 2;
  return 0;
}

int rt_fused_fn(int fn, int last) {
  if (fn < RT_ABS) return 1;
  return fn == RT_SELECT || (!last && fn >= RT_CMP_EQ && fn <= RT_CMP_GE);
}

int rt_strides_dense(int rank, const int64_t *shape, const int64_t *stride) {
  int64_t step = 1;
  for (int d = rank - 1; d >= 0; d--) {
    if (shape[d] != 1 && stride[d] != step) return 0;
    step *= shape[d];
  }
  return 1;
}

int rt_merge_dims(int rank, const int64_t *shape, int n, const int64_t (*st)[RT_MAXRANK], int64_t *shp,
                  int64_t (*mst)[RT_MAXRANK]) {
  int r = 0;
  for (int k = 0; k < n; k++) memset(mst[k], 0, sizeof mst[k]);
  for (int d = 0; d < rank && d < RT_MAXRANK; d++) {
    int64_t s = shape[d];
    if (s == 0) return 0;
    if (s == 1) continue;
    int merge = r > 0;
    for (int k = 0; k < n && merge; k++)
      if (mst[k][r - 1] != st[k][d] * s) merge = 0;
    if (merge) {
      shp[r - 1] *= s;
      for (int k = 0; k < n; k++) mst[k][r - 1] = st[k][d];
    } else {
      shp[r] = s;
      for (int k = 0; k < n; k++) mst[k][r] = st[k][d];
      r++;
    }
  }
  if (r == 0) shp[r++] = 1;
  return r;
}

int rt_ew_dense(const rt_instr *x, int k) {
  if (x->rank > RT_MAXRANK || k < 0) return 0;
  if (x->op == RT_FUSED) return x->data && k < x->nin && k < RT_MAXIN && rt_strides_dense(x->rank, x->shape, ((const rt_fused *)x->data)->stride[k]);
  return x->op == RT_EW && k < 3 && rt_strides_dense(x->rank, x->shape, x->stride[k]);   /* stride[3] */
}

/* ---- builders ---- */

void rt_prog_init(rt_prog *p) {
  memset(p, 0, sizeof *p);
  arena_init(&p->mem);
  p->stage_axis = -1;
}

void rt_prog_free(rt_prog *p) {
  free(p->bufs);
  free(p->instrs);
  free(p->groups);
  arena_free(&p->mem);
  memset(p, 0, sizeof *p);
}

/* The arrays (heap memory, so that growing frees the old copy) keep no
   capacity field: capacity is a function of the count (16, then
   doubling), so growth happens when the count reaches it. */
static void *grow_for(void *arr, int count, size_t elem) {
  if (count == 0) return mem_alloc(16 * elem);
  if (count >= 16 && (count & (count - 1)) == 0) return mem_realloc(arr, (size_t)count * 2 * elem);
  return arr;
}

int rt_prog_buf(rt_prog *p, const char *name, rt_dtype t, int rank, const int64_t *shape, rt_bufkind kind) {
  p->bufs = grow_for(p->bufs, p->nbufs, sizeof *p->bufs);
  int id = p->nbufs++;
  rt_buf *b = &p->bufs[id];
  memset(b, 0, sizeof *b);
  b->name = name ? arena_strndup(&p->mem, name, strlen(name)) : arena_printf(&p->mem, "t%d", id);
  b->dtype = t;
  b->kind = kind;
  if (rank < 0) rank = 0;
  if (rank > RT_MAXRANK) rank = RT_MAXRANK;
  b->rank = rank;
  b->nelem = 1;
  for (int d = 0; d < rank; d++) {
    b->shape[d] = b->global_shape[d] = shape[d];
    b->nelem *= shape[d];
  }
  for (int d = 0; d < RT_MAXRANK; d++) b->dim_group[d] = -1;
  b->last_use = -1;
  b->carry_from = -1;
  return id;
}

rt_instr rt_instr_new(rt_op op, int out) {
  rt_instr ins;
  memset(&ins, 0, sizeof ins);
  ins.op = (uint8_t)op;
  ins.out = out;
  for (int i = 0; i < RT_MAXIN; i++) ins.in[i] = -1;
  ins.group = -1;
  ins.src = -1;
  return ins;
}

rt_instr *rt_prog_emit(rt_prog *p, rt_op op, int out) {
  p->instrs = grow_for(p->instrs, p->ninstrs, sizeof *p->instrs);
  rt_instr *ins = &p->instrs[p->ninstrs++];
  *ins = rt_instr_new(op, out);
  return ins;
}

int rt_prog_group(rt_prog *p, int naxes, const int *axes) {
  if (naxes < 0) naxes = 0;
  if (naxes > RT_MAXRANK) naxes = RT_MAXRANK;
  for (int g = 0; g < p->ngroups; g++)     /* the same axes: the same group */
    if (p->groups[g].naxes == naxes && (naxes == 0 || !memcmp(p->groups[g].axes, axes, naxes * sizeof *axes)))
      return g;
  p->groups = grow_for(p->groups, p->ngroups, sizeof *p->groups);
  rt_group *gr = &p->groups[p->ngroups];
  memset(gr, 0, sizeof *gr);
  gr->naxes = naxes;
  for (int i = 0; i < naxes; i++) gr->axes[i] = axes[i];
  return p->ngroups++;
}

void rt_prog_finish(rt_prog *p) {
  for (int b = 0; b < p->nbufs; b++) p->bufs[b].last_use = -1;
  for (int i = 0; i < p->ninstrs; i++) {
    rt_instr *ins = &p->instrs[i];
    for (int k = 0; k < RT_MAXIN; k++)
      if (ins->in[k] >= 0 && ins->in[k] < p->nbufs) p->bufs[ins->in[k]].last_use = i;
    if (ins->out >= 0 && ins->out < p->nbufs) ins->nelem = p->bufs[ins->out].nelem;
    rt_instr_dtypes(p, ins);
  }
}

void rt_instr_dtypes(const rt_prog *p, rt_instr *ins) {
  ins->odt = (uint8_t)(ins->out >= 0 && ins->out < p->nbufs ? p->bufs[ins->out].dtype : RT_F32);
  for (int k = 0; k < RT_MAXIN; k++)
    ins->idt[k] = (uint8_t)(ins->in[k] >= 0 && ins->in[k] < p->nbufs ? p->bufs[ins->in[k]].dtype : RT_F32);
}

/* ---- listing ---- */

static void put_bytes(FILE *f, double bytes) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) { bytes /= 1024; u++; }
  if (u == 0) fprintf(f, "%.0f B", bytes);
  else fprintf(f, "%.1f %s", bytes, unit[u]);
}

static void put_dims(FILE *f, int rank, const int64_t *shape, const char *sep) {
  for (int d = 0; d < rank; d++) fprintf(f, "%s%" PRId64, d ? sep : "", shape[d]);
}

static void put_group(FILE *f, const rt_prog *p, int g) {
  fputc('{', f);
  if (g >= 0 && g < p->ngroups) {
    for (int i = 0; i < p->groups[g].naxes; i++) {
      int ax = p->groups[g].axes[i];
      const char *nm = ax >= 0 && ax < RT_MAXRANK ? p->axis_names[ax] : NULL;
      if (i) fputs(", ", f);
      if (nm) fputs(nm, f); else fprintf(f, "axis%d", ax);
    }
  }
  fputc('}', f);
}



static void put_ins(FILE *f, const rt_instr *ins) {
  for (int k = 0; k < RT_MAXIN; k++) {
    int last = RT_MAXIN - 1;
    while (last >= 0 && ins->in[last] < 0) last--;
    if (k > last) break;
    fputs(k ? ", " : " ", f);
    if (ins->in[k] < 0) fputc('-', f); else fprintf(f, "b%d", ins->in[k]);
  }
}

/* The bracketed attributes of one instruction. */
/* "[window 1x3; u: i0 x1; x0 from index 0 of i1, clamped]" */
static void put_index(FILE *f, const rt_prog *p, const rt_instr *ins) {
  const rt_index *ix = ins->data;
  int rx = p->bufs[ins->in[0]].rank, ru = p->bufs[ins->op == RT_GATHER ? ins->out : ins->in[2]].rank;
  if (!ix) return;
  fputs("   [window ", f);
  put_dims(f, rx, ix->window, "x");
  fputs("; result dims:", f);
  for (int u = 0; u < ru; u++) {
    if (ix->u_idim[u] >= 0) fprintf(f, " i%d", ix->u_idim[u]);
    else fprintf(f, " x%d", ix->u_xdim[u]);
  }
  fputs("; starts:", f);
  for (int k = 0; k < ix->ncomp; k++) fprintf(f, " x%d", ix->comp_dim[k]);
  for (int d = 0; d < rx; d++) if (ix->x_idim[d] >= 0) fprintf(f, "; x%d batched with i%d", d, ix->x_idim[d]);
  static const char *const comb[] = {"replace", "add", "mul", "max", "min"};   /* ORDER RT_IX_ */
  if (ins->op == RT_SCATTER) fprintf(f, "; %s, %s", ix->combine < 5 ? comb[ix->combine] : "?", ix->other_bounds ? "starts clamped" : "outside skipped");
  else fprintf(f, "; %s", ix->other_bounds ? "outside gives zeros" : "starts clamped");
  fputc(']', f);
}

static void put_attrs(FILE *f, const rt_prog *p, const rt_instr *ins) {
  switch (ins->op) {
  case RT_GATHER: case RT_SCATTER: put_index(f, p, ins); break;
  case RT_EW: {
    fputs("   [", f);
    put_dims(f, ins->rank, ins->shape, "x");
    int ar = rt_ewfn_arity((rt_ewfn)ins->fn);
    for (int k = 0; k < ar && k < 3; k++) {
      int64_t want = 1, contig = 1;
      for (int d = ins->rank - 1; d >= 0; d--) {
        if (ins->shape[d] != 1 && ins->stride[k][d] != want) contig = 0;
        want *= ins->shape[d];
      }
      if (!contig) {
        fprintf(f, "; b%d strides (", ins->in[k]);
        put_dims(f, ins->rank, ins->stride[k], ",");
        fputc(')', f);
      }
    }
    if (ins->fn == RT_AFFINE || ins->fn == RT_ADAM_DENOM) fprintf(f, "; alpha %g, beta %g", ins->alpha, ins->beta);
    if (ins->fn == RT_AXPY) fprintf(f, "; alpha %g", ins->alpha);
    if (ins->fn == RT_AXPBY) fprintf(f, "; alpha %g, beta %g", ins->alpha, ins->beta);
    if (ins->fn >= RT_CMP_EQ && ins->fn <= RT_CMP_GE && ins->mode == RT_CMP_TOTAL) fputs("; total order", f);
    if (ins->in[3] >= 0) fprintf(f, "; and the sums of its rows into b%d", ins->in[3]);
    fputc(']', f);
    break;
  }
  case RT_FUSED: {              /* "[8x128: s0 = mul(b3, b3); out = affine(s0; alpha 0.5, beta 1)]" */
    const rt_fused *fu = ins->data;
    fputs(ins->rank ? "   [" : "   [scalar", f);
    put_dims(f, ins->rank, ins->shape, "x");
    for (int k = 0; fu && k < ins->nin && k < RT_MAXIN; k++)
      if (!rt_strides_dense(ins->rank, ins->shape, fu->stride[k])) {
        fprintf(f, "; b%d strides (", ins->in[k]);
        put_dims(f, ins->rank, fu->stride[k], ",");
        fputc(')', f);
      }
    for (int j = 0; fu && j < fu->nsteps && j < RT_FUSE_MAXSTEPS; j++) {
      const rt_fstep *s = &fu->step[j];
      int ar = rt_ewfn_arity((rt_ewfn)s->fn);
      if (j == fu->nsteps - 1 && !(ins->mode & RT_FUSED_REDUCE)) fputs(": out = ", f);
      else fprintf(f, "%ss%d = ", j ? "; " : ": ", j);
      fprintf(f, "%s(", rt_ewfn_name((rt_ewfn)s->fn));
      for (int a = 0; a < ar && a < 3; a++) {
        int g = s->arg[a];
        if (g >= 0) fprintf(f, "%ss%d", a ? ", " : "", g);
        else fprintf(f, "%sb%d", a ? ", " : "", -1 - g < ins->nin ? ins->in[-1 - g] : -1);
      }
      if (s->fn == RT_AFFINE || s->fn == RT_ADAM_DENOM || s->fn == RT_AXPBY) fprintf(f, "; alpha %g, beta %g", s->alpha, s->beta);
      if (s->fn == RT_AXPY) fprintf(f, "; alpha %g", s->alpha);
      fputc(')', f);
    }
    if (fu && ins->mode & RT_FUSED_REDUCE) {   /* ": out = sum(s0 as 512x128x1) over 128 times 0.0078125" */
      fprintf(f, ": out = %s(s%d as %" PRId64 "x%" PRId64 "x%" PRId64 ") over %" PRId64, ins->fn == RT_RMAX ? "max" : ins->fn == RT_RMIN ? "min" : "sum",
              fu->nsteps - 1, ins->outer, ins->n, ins->inner, ins->n);
      if (ins->fn == RT_RSUM && ins->alpha != 1.0f) fprintf(f, " times %g", ins->alpha);
    }
    fputc(']', f);
    break;
  }
  case RT_TRANSPOSE: {
    int8_t perm[RT_MAXRANK];
    int64_t pv[RT_MAXRANK];
    memcpy(perm, ins->perm, sizeof perm);
    for (int d = 0; d < ins->rank; d++) pv[d] = perm[d];
    fputs("   [", f);
    put_dims(f, ins->rank, ins->shape, "x");
    fputs(", perm (", f);
    put_dims(f, ins->rank, pv, ",");
    fputs(")]", f);
    break;
  }
  case RT_GEMM:
    fprintf(f, "   [batch %" PRId64 ", %" PRId64 "x%" PRId64 "x%" PRId64 ", %c%c",
            ins->batch, ins->m, ins->n, ins->k, ins->transa ? 't' : 'n', ins->transb ? 't' : 'n');
    if (ins->batch > 1)
      fprintf(f, ", strides %" PRId64 "/%" PRId64 "/%" PRId64, ins->stride_a, ins->stride_b, ins->stride_c);
    if (ins->alpha != 1.0f) fprintf(f, ", alpha %g", ins->alpha);
    if (ins->beta != 0.0f) fprintf(f, ", beta %g", ins->beta);
    fputc(']', f);
    break;
  case RT_REDUCE: case RT_REDUCE_MAX_GRAD: case RT_SHARD_SLICE: case RT_IOTA:
    fprintf(f, "   [%" PRId64 "x%" PRId64 "x%" PRId64, ins->outer, ins->n, ins->inner);
    if (ins->op == RT_REDUCE && ins->fn == RT_RSUM && ins->alpha != 1.0f) fprintf(f, ", alpha %g", ins->alpha);
    fputc(']', f);
    break;
  case RT_BLOCK_COPY: {
    int64_t m = ins->m > 0 ? ins->m : ins->n;
    fprintf(f, "   [%" PRId64 "x%" PRId64 "x%" PRId64 ": rows %" PRId64 "..%" PRId64 " -> %" PRId64 "..%" PRId64
            " of %" PRId64 "]", ins->outer, m, ins->inner, ins->k, ins->k + ins->n, ins->off, ins->off + ins->n, ins->n2);
    break;
  }
  case RT_SOFTMAX: case RT_LOG_SOFTMAX: case RT_SOFTMAX_GRAD: case RT_LOG_SOFTMAX_GRAD:
    fprintf(f, "   [%" PRId64 " rows of %" PRId64 "]", ins->outer, ins->n);
    break;
  case RT_LAYERNORM: case RT_LAYERNORM_GRAD:
    fprintf(f, "   [%" PRId64 " rows of %" PRId64 ", eps %g%s%s]", ins->outer, ins->n, ins->alpha,
            ins->mode & RT_LN_RMS ? ", root mean square" : "",
            ins->op == RT_LAYERNORM_GRAD && ins->mode & RT_LN_GAMMA ? ", gamma's gradient: sum of dy * xhat" : "");
    break;
  case RT_GATHER_ROWS: case RT_SCATTER_ROWS:
    fprintf(f, "   [%" PRId64 " ids, rows %" PRId64 "..%" PRId64 " of %" PRId64 ", width %" PRId64 "%s]",
            ins->outer, ins->off, ins->off + ins->n, ins->n2, ins->inner,
            ins->op == RT_SCATTER_ROWS && ins->beta != 0.0f ? ", added to out" : "");
    break;
  case RT_XENT: case RT_XENT_GRAD:
    fprintf(f, "   [%" PRId64 " rows of %" PRId64, ins->outer, ins->n);
    if (rt_xent_split(ins)) fprintf(f, " of %" PRId64 " classes; max b%d, sums of exp b%d", ins->n2, ins->in[4], ins->in[5]);
    fprintf(f, ", alpha %g", ins->alpha);
    if (ins->op == RT_XENT_GRAD && ins->in[3] >= 0) fprintf(f, "; and the loss into b%d, alpha %g", ins->in[3], ins->beta);
    fputc(']', f);
    break;
  case RT_XENT_SUMEXP:
    fprintf(f, "   [%" PRId64 " rows of %" PRId64 "]", ins->outer, ins->n);
    break;
  case RT_XENT_PROJ:
    fprintf(f, "   [%" PRId64 " rows of %" PRId64 " by %" PRId64 " classes, %s, %" PRId64 " rows at a time; alpha %g;"
            " the loss into b%d, alpha %g; dw into b%d%s; scratch b%d]", ins->outer, ins->k, ins->n,
            ins->transb ? "w [classes, k]" : "w [k, classes]", ins->inner, ins->alpha, ins->in[4], ins->beta, ins->in[5],
            ins->mode ? ", added" : "", ins->in[6]);
    break;
  case RT_ATTENTION: case RT_ATTENTION_GRAD:
    fprintf(f, "   [%" PRId64 "x%" PRId64 "x%" PRId64 ", scale %g%s", ins->outer, ins->m, ins->k, ins->alpha,
            ins->fn ? ", causal" : "");
    if (ins->mode) {              /* the operands laid out [b, s, heads, dk] */
      static const char *const nm[] = {"q", "k", "v", "dy", "out"};
      fprintf(f, ";");
      for (int b = 0; b < 5; b++) if (ins->mode & (1 << b)) fprintf(f, " %s", nm[b]);
      fprintf(f, " by %" PRId64 " heads", ins->n2);
    }
    fputc(']', f);
    break;
  case RT_CAUSAL_MASK:
    fprintf(f, "   [%" PRId64 "x%" PRId64 "x%" PRId64 ", off %" PRId64 ", fill %g]",
            ins->outer, ins->m, ins->n, ins->off, ins->alpha);
    break;
  case RT_ADAM: {                /* the hyperparameters exactly, as --train gave them */
    char n[5][NUM_LEN];
    fprintf(f, "   [lr %s, betas %s %s, eps %s, %s %s%s]", num_float(n[0], ins->alpha), num_double(n[1], ins->hyper[0]),
            num_double(n[2], ins->hyper[1]), num_double(n[3], ins->hyper[2]),
            ins->mode & RT_ADAM_DECOUPLED ? "p scaled by" : "weight decay", num_double(n[4], ins->hyper[3]),
            ins->mode & RT_ADAM_DECOUPLED ? " first" : "");
    break;
  }
  case RT_SGD: {
    char n[3][NUM_LEN];
    fprintf(f, "   [lr %s, momentum %s, weight decay %s]", num_float(n[0], ins->alpha), num_double(n[1], ins->hyper[0]),
            num_double(n[2], ins->hyper[1]));
    break;
  }
  default:
    break;
  }
  (void)p;
}

static const char *bname(const rt_prog *p, int b) {
  return b >= 0 && b < p->nbufs ? p->bufs[b].name : "?";
}

char *rt_prog_dump(const rt_prog *p, arena *a) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) mem_oom();
  static const char *const kind[] = {"temp", "input", "output"};
  if (p->mesh_rank > 0) {
    fputs("mesh", f);
    for (int i = 0; i < p->mesh_rank; i++)
      fprintf(f, " %s=%" PRId64, p->axis_names[i] ? p->axis_names[i] : "?", p->mesh[i]);
    fputc('\n', f);
  }
  fprintf(f, "buffers (%d):\n", p->nbufs);
  for (int b = 0; b < p->nbufs; b++) {
    const rt_buf *bf = &p->bufs[b];
    fprintf(f, "  b%d %s %s[", b, bf->name, rt_dtype_name(bf->dtype));
    put_dims(f, bf->rank, bf->shape, ",");
    fprintf(f, "] %s", (unsigned)bf->kind < 3 ? kind[bf->kind] : "?");
    int sharded = 0;
    for (int d = 0; d < bf->rank; d++) sharded |= bf->global_shape[d] != bf->shape[d];
    if (sharded) {
      fputs(" of [", f);
      put_dims(f, bf->rank, bf->global_shape, ",");
      fputc(']', f);
    }
    if (bf->carry_from >= 0) fprintf(f, " carry <- b%d", bf->carry_from);
    fputc('\n', f);
  }
  fprintf(f, "program (%d instructions):\n", p->ninstrs);
  for (int i = 0; i < p->ninstrs; i++) {
    const rt_instr *ins = &p->instrs[i];
    fprintf(f, "%4d  ", i);
    if (ins->stages) {
      fputs("[stage", f);
      for (int s = 0; s < 64; s++) if (ins->stages >> s & 1) fprintf(f, " %d", s);
      fputs("]  ", f);
    }
    if (ins->op == RT_SEND || ins->op == RT_RECV) {
      fprintf(f, ins->op == RT_SEND ? "send b%d to stage %" PRId64 : "b%d = recv from stage %" PRId64,
              ins->op == RT_SEND ? ins->in[0] : ins->out, ins->n2);
      fprintf(f, " (tag %" PRId64 ", ", ins->off);
      put_bytes(f, (double)rt_buf_bytes(p, ins->op == RT_SEND ? ins->in[0] : ins->out));
      fputc(')', f);
    } else if (rt_is_collective((rt_op)ins->op)) {
      size_t by = rt_buf_bytes(p, ins->out), bi = rt_buf_bytes(p, ins->in[0]);
      fprintf(f, "%s b%d <- b%d over ", rt_coll_name(ins), ins->out, ins->in[0]);
      put_group(f, p, ins->group);
      fputs(" (", f);
      put_bytes(f, (double)(by > bi ? by : bi));
      fputc(')', f);
      if (ins->op == RT_ALL_TO_ALL) fprintf(f, "   [split %d, concat %d]", ins->split_dim, ins->concat_dim);
    } else {
      const char *nm = rt_op_name((rt_op)ins->op);
      char tmp[32];
      if (ins->op == RT_EW) nm = rt_ewfn_name((rt_ewfn)ins->fn);
      else if (ins->op == RT_REDUCE) nm = ins->fn == RT_RMAX ? "reduce_max" : ins->fn == RT_RMIN ? "reduce_min" : "reduce_sum";
      if (ins->op == RT_FILL) {
        int f32 = ins->out < 0 || ins->out >= p->nbufs || p->bufs[ins->out].dtype == RT_F32;
        char n[NUM_LEN];
        snprintf(tmp, sizeof tmp, "fill %s", f32 ? num_float(n, ins->alpha) : num_double(n, ins->value));
        nm = tmp;
      }
      fprintf(f, "b%d = %s", ins->out, nm);
      put_ins(f, ins);
      if (ins->op == RT_SHARD_SLICE || ((ins->op == RT_GATHER_ROWS || ins->op == RT_SCATTER_ROWS || ins->op == RT_CAUSAL_MASK) &&
          ins->group >= 0) || rt_xent_split(ins)) {
        fputs(" over ", f);
        put_group(f, p, ins->group);
      }
      put_attrs(f, p, ins);
    }
    /* names last, so that the columns above stay short */
    fprintf(f, "   # %s", bname(p, ins->out));
    int any = 0;
    for (int k = 0; k < RT_MAXIN; k++) {
      if (ins->in[k] < 0) continue;
      fprintf(f, "%s%s", any ? ", " : " <- ", bname(p, ins->in[k]));
      any = 1;
    }
    fputc('\n', f);
  }
  fclose(f);
  char *out = arena_strndup(a, text, len);
  free(text);
  return out;
}
