/*
** randmodel.h: random models for differential tests. A chain of the model
** language's ops (every elementwise kind, matmul and einsum in several
** spellings, reductions over one dim or two, softmax, layer norm,
** reshapes, transposes, broadcasts, concat, slice, the causal mask,
** embedding, cross-entropy, choices, and attention both as the op and
** spelt out), each reading recent values or new parameters and inputs;
** the loss sums the squares of every value no op reads. Used by
** test_partition (against one device, also under carve auto's search),
** test_export (through StableHLO and back) and test_grad (smooth models
** against finite differences). Header-only, like harness.h.
*/
#ifndef tests_randmodel_h
#define tests_randmodel_h

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
/* smooth models only: relu, abs, maximum, minimum, max, min and select
** become smooth ops drawn the same way (finite differences need no kinks) */
static int rm_smooth;
static uint64_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

/* A random test's model count and seed: RANDOM_MODELS (divided by div,
** which smaller tests take) and RANDOM_SEED from the environment, else the
** test's own. */
static int rm_start(int count, int div, uint64_t seed) {
  rng = getenv("RANDOM_SEED") ? strtoull(getenv("RANDOM_SEED"), NULL, 0) : seed;
  if (!rng) rng = 1;                        /* xorshift stays at 0 */
  return getenv("RANDOM_MODELS") ? atoi(getenv("RANDOM_MODELS")) / div : count;
}

/* the model's f32 declarations made f64 (random_model writes no other f32) */
static inline void rm_f64(char *text) {
  for (char *t = text; (t = strstr(t, " : f32[")); t += 7) t[4] = '6', t[5] = '4';
}

typedef struct rval { char name[12]; int rank; int64_t d[4]; } rval;
typedef struct rgen { strbuf decl, body; rval v[160]; int nv, nleaf; char used[160]; } rgen;

static int64_t pick_dim(void) { static const int64_t ds[] = {2, 4, 4, 8, 8, 16, 12}; return ds[next() % 7]; }
static int shape_eq(const rval *a, int rank, const int64_t *d) {
  if (a->rank != rank) return 0;
  for (int i = 0; i < rank; i++) if (a->d[i] != d[i]) return 0;
  return 1;
}
static void shape_str(char *out, size_t n, int rank, const int64_t *d) {
  size_t k = (size_t)snprintf(out, n, "[");
  for (int i = 0; i < rank; i++) k += (size_t)snprintf(out + k, n - k, "%s%lld", i ? ", " : "", (long long)d[i]);
  snprintf(out + k, n - k, "]");
}

/* a new parameter (or input) of this shape */
static int rg_leaf(rgen *r, int rank, const int64_t *d, int param) {
  rval *v = &r->v[r->nv];
  snprintf(v->name, sizeof v->name, "%c%d", param ? 'w' : 'x', r->nleaf++);
  v->rank = rank;
  memcpy(v->d, d, sizeof(int64_t) * (size_t)rank);
  char s[64];
  shape_str(s, sizeof s, rank, d);
  sb_printf(&r->decl, "  %s %s : f32%s%s\n", param ? "param" : "input", v->name, s, param ? " = normal(0.5)" : "");
  return r->nv++;
}
static int rg_rand_leaf(rgen *r, int rank) {
  int64_t d[4];
  for (int i = 0; i < rank; i++) d[i] = pick_dim();
  return rg_leaf(r, rank, d, next() % 3 != 0);
}
/* a recent value of this rank (any rank: -1, or at least -rank - 2 for
** rank < -1), or a new leaf; NULL shape: any */
static int rg_get(rgen *r, int rank, const int64_t *d) {
  if (next() % 7) {
    for (int back = 0, i = r->nv - 1; i >= 0 && back < 6; i--) {
      const rval *v = &r->v[i];
      if (v->rank == 0) continue;           /* ids */
      int ok = d ? shape_eq(v, rank, d) : rank == -1 ? 1 : rank < -1 ? v->rank >= -rank - 2 : v->rank == rank;
      if (!ok) continue;
      if (next() % 3 == 0) { back++; continue; }
      return i;
    }
  }
  if (d) return rg_leaf(r, rank, d, next() % 3 != 0);
  return rg_rand_leaf(r, rank >= 0 ? rank : rank < -1 ? -rank - 2 + (int)(next() % 2) : 1 + (int)(next() % 3));
}
/* v = the op text, of this shape; the operands it names are marked read */
static int rg_emit(rgen *r, int rank, const int64_t *d, const int *reads, int nreads, const char *fmt, ...) {
  rval *v = &r->v[r->nv];
  snprintf(v->name, sizeof v->name, "v%d", r->nv);
  v->rank = rank;
  memcpy(v->d, d, sizeof(int64_t) * (size_t)rank);
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  sb_printf(&r->body, "  %s = %s\n", v->name, text);
  for (int i = 0; i < nreads; i++) r->used[reads[i]] = 1;
  return r->nv++;
}
#define N(i) r->v[i].name

static void rg_step(rgen *r) {
  static const char *const un_all[] = {"neg", "tanh", "relu", "gelu", "gelu_tanh", "sigmoid", "silu", "abs", "erf", "sin", "floor"};
  static const char *const bin_all[] = {"add", "sub", "maximum", "minimum", "add"};
  static const char *const un_smooth[] = {"neg", "tanh", "tanh", "gelu", "gelu_tanh", "sigmoid", "silu", "sigmoid", "erf", "sin", "cos"};
  static const char *const bin_smooth[] = {"add", "sub", "add", "sub", "add"};
  const char *const *un = rm_smooth ? un_smooth : un_all, *const *bin = rm_smooth ? bin_smooth : bin_all;
  int a, b, c;
  int64_t d[4];
  switch (next() % 25) {
  case 0: case 1:
    a = rg_get(r, -1, NULL);
    rg_emit(r, r->v[a].rank, r->v[a].d, &a, 1, "%s(%s)", un[next() % 11], N(a));
    return;
  case 2:
    a = rg_get(r, -1, NULL);
    rg_emit(r, r->v[a].rank, r->v[a].d, &a, 1, "exp(tanh(%s))", N(a));
    return;
  case 3:                                   /* a / (b b + 1) */
    a = rg_get(r, -1, NULL);
    b = rg_get(r, r->v[a].rank, r->v[a].d);
    rg_emit(r, r->v[a].rank, r->v[a].d, (int[]){a, b}, 2, "div(%s, add(mul(%s, %s), 1.0))", N(a), N(b), N(b));
    return;
  case 4: case 5:
    a = rg_get(r, -1, NULL);
    b = rg_get(r, r->v[a].rank, r->v[a].d);
    if (next() % 6 == 0) rg_emit(r, r->v[a].rank, r->v[a].d, (int[]){a, b}, 2, "mul(tanh(%s), %s)", N(a), N(b));   /* bounded */
    else rg_emit(r, r->v[a].rank, r->v[a].d, (int[]){a, b}, 2, "%s(%s, %s)", bin[next() % 5], N(a), N(b));
    return;
  case 6: {                                 /* [.., n] with [n] or [m, n]: trailing dims broadcast */
    a = rg_get(r, -4, NULL);
    int k = next() % 3 ? 1 : 2;
    b = rg_leaf(r, k, r->v[a].d + r->v[a].rank - k, 1);
    rg_emit(r, r->v[a].rank, r->v[a].d, (int[]){a, b}, 2, "%s(%s, %s)", next() % 2 ? "add" : "mul", N(a), N(b));
    return;
  }
  case 7: case 8: {                         /* [.., k] x [k, n] */
    a = rg_get(r, -4, NULL);
    if (r->v[a].rank > 3) a = rg_rand_leaf(r, 2);
    int ra = r->v[a].rank;
    b = rg_leaf(r, 2, (int64_t[]){r->v[a].d[ra - 1], pick_dim()}, next() % 5 != 0);
    memcpy(d, r->v[a].d, sizeof d);
    d[ra - 1] = r->v[b].d[1];
    rg_emit(r, ra, d, (int[]){a, b}, 2, "matmul(%s, %s)", N(a), N(b));
    return;
  }
  case 9: {                                 /* [b, m, k] x [b, k, n] */
    a = rg_get(r, 3, NULL);
    b = rg_get(r, 3, (int64_t[]){r->v[a].d[0], r->v[a].d[2], pick_dim()});
    rg_emit(r, 3, (int64_t[]){r->v[a].d[0], r->v[a].d[1], r->v[b].d[2]}, (int[]){a, b}, 2, "matmul(%s, %s)", N(a), N(b));
    return;
  }
  case 10: {                                /* einsums on [b, s, d] */
    a = rg_get(r, 3, NULL);
    const int64_t *x = r->v[a].d;
    switch (next() % 4) {
    case 0: {
      int64_t h = next() % 2 ? 2 : 4, k = next() % 2 ? 4 : 8;
      b = rg_leaf(r, 3, (int64_t[]){x[2], h, k}, 1);
      rg_emit(r, 4, (int64_t[]){x[0], h, x[1], k}, (int[]){a, b}, 2, "einsum(\"bsd,dhk->bhsk\", %s, %s)", N(a), N(b));
      return;
    }
    case 1:
      b = rg_leaf(r, 2, (int64_t[]){x[2], pick_dim()}, 1);
      rg_emit(r, 3, (int64_t[]){x[0], x[1], r->v[b].d[1]}, (int[]){a, b}, 2, "einsum(\"bsd,de->bse\", %s, %s)", N(a), N(b));
      return;
    case 2:
      b = rg_get(r, 3, x);
      rg_emit(r, 3, (int64_t[]){x[0], x[1], x[1]}, (int[]){a, b}, 2, "einsum(\"bsd,btd->bst\", %s, %s)", N(a), N(b));
      return;
    default:
      b = rg_leaf(r, 2, (int64_t[]){x[2], pick_dim()}, 1);
      rg_emit(r, 3, (int64_t[]){x[0], x[2], r->v[b].d[1]}, (int[]){a, b}, 2, "einsum(\"bsd,de->bde\", %s, %s)", N(a), N(b));
      return;
    }
  }
  case 11: {                                /* one dim reduced, kept or not */
    static const char *const red_all[] = {"sum", "mean", "max", "min", "sum"}, *const red_smooth[] = {"sum", "mean", "sum", "mean", "sum"};
    const char *const *red = rm_smooth ? red_smooth : red_all;
    a = rg_get(r, -4, NULL);
    int ra = r->v[a].rank, k = (int)(next() % (uint64_t)ra), keep = next() % 5 < 2, n = 0;
    for (int i = 0; i < ra; i++) if (i != k) d[n++] = r->v[a].d[i]; else if (keep) d[n++] = 1;
    rg_emit(r, n, d, &a, 1, "%s(%s, dims = [%d]%s)", red[next() % 5], N(a), k, keep ? ", keepdims = true" : "");
    return;
  }
  case 12: {                                /* two dims summed */
    a = rg_get(r, -5, NULL);
    int ra = r->v[a].rank, k1 = (int)(next() % (uint64_t)ra), k2 = (k1 + 1 + (int)(next() % (uint64_t)(ra - 1))) % ra, n = 0;
    if (k1 > k2) { int t = k1; k1 = k2; k2 = t; }
    for (int i = 0; i < ra; i++) if (i != k1 && i != k2) d[n++] = r->v[a].d[i];
    rg_emit(r, n, d, &a, 1, "%s(%s, dims = [%d, %d])", next() % 2 ? "sum" : "mean", N(a), k1, k2);
    return;
  }
  case 13:
    a = rg_get(r, -4, NULL);
    rg_emit(r, r->v[a].rank, r->v[a].d, &a, 1, "%s(%s, dim = %d)", next() % 2 ? "softmax" : "log_softmax", N(a),
            (int)(next() % (uint64_t)r->v[a].rank));
    return;
  case 14: {                                /* over 4 or more: over 2, y is +-1 and its gradient rounding alone */
    a = rg_get(r, -4, NULL);
    if (r->v[a].d[r->v[a].rank - 1] < 4) a = rg_leaf(r, 2, (int64_t[]){pick_dim(), 8}, next() % 2);
    int64_t n = r->v[a].d[r->v[a].rank - 1];
    b = rg_leaf(r, 1, &n, 1);
    c = rg_leaf(r, 1, &n, 1);
    rg_emit(r, r->v[a].rank, r->v[a].d, (int[]){a, b, c}, 3, "layernorm(%s, %s, %s, dim = -1)", N(a), N(b), N(c));
    return;
  }
  case 15: {                                /* two dims merged, or one split in two */
    a = rg_get(r, -4, NULL);
    const rval *x = &r->v[a];
    int n = 0, i = (int)(next() % (uint64_t)x->rank);
    if (x->rank >= 2 && (next() % 2 || x->rank == 4)) {
      if (i == x->rank - 1) i--;
      for (int j = 0; j < x->rank; j++) { if (j == i) { d[n++] = x->d[j] * x->d[j + 1]; j++; } else d[n++] = x->d[j]; }
    } else {
      for (int j = 0; j < x->rank; j++) { if (j == i && x->d[j] % 2 == 0 && x->d[j] > 2) { d[n++] = 2; d[n++] = x->d[j] / 2; } else d[n++] = x->d[j]; }
    }
    char s[64];
    shape_str(s, sizeof s, n, d);
    rg_emit(r, n, d, &a, 1, "reshape(%s, %s)", N(a), s);
    return;
  }
  case 16: {
    a = rg_get(r, -4, NULL);
    int ra = r->v[a].rank, p[4] = {0, 1, 2, 3};
    for (int i = ra - 1; i > 0; i--) { int j = (int)(next() % (uint64_t)(i + 1)), t = p[i]; p[i] = p[j]; p[j] = t; }
    for (int i = 0; i < ra; i++) d[i] = r->v[a].d[p[i]];
    char s[64];
    shape_str(s, sizeof s, ra, (int64_t[]){p[0], p[1], p[2], p[3]});
    rg_emit(r, ra, d, &a, 1, "transpose(%s, %s)", N(a), s);
    return;
  }
  case 17: {
    a = rg_get(r, -1, NULL);
    b = rg_get(r, r->v[a].rank, r->v[a].d);
    int k = (int)(next() % (uint64_t)r->v[a].rank);
    memcpy(d, r->v[a].d, sizeof d);
    d[k] *= 2;
    rg_emit(r, r->v[a].rank, d, (int[]){a, b}, 2, "concat([%s, %s], %d)", N(a), N(b), k);
    return;
  }
  case 18: {
    a = rg_get(r, -1, NULL);
    int k = (int)(next() % (uint64_t)r->v[a].rank);
    int64_t n = r->v[a].d[k];
    if (n < 2) return;
    int64_t st = (int64_t)(next() % (uint64_t)(n - 1)), en = st + 1 + (int64_t)(next() % (uint64_t)(n - st));
    memcpy(d, r->v[a].d, sizeof d);
    d[k] = en - st;
    rg_emit(r, r->v[a].rank, d, &a, 1, "slice(%s, %d, %lld, %lld)", N(a), k, (long long)st, (long long)en);
    return;
  }
  case 19: {                                /* attention, as the op or spelt out (fused or not by the loader) */
    int64_t s = next() % 2 ? 4 : 8, x[4] = {next() % 2 ? 2 : 4, next() % 2 ? 2 : 4, s, next() % 2 ? 4 : 8};
    a = rg_get(r, 4, x);
    b = rg_get(r, 4, x);
    c = rg_get(r, 4, x);
    if (next() % 2) {
      rg_emit(r, 4, x, (int[]){a, b, c}, 3, "attention(%s, %s, %s, causal = %s, scale = %s)", N(a), N(b), N(c),
              next() % 2 ? "true" : "false", next() % 2 ? "0.5" : "0.25");
      return;
    }
    int sc = rg_emit(r, 4, (int64_t[]){x[0], x[1], s, s}, (int[]){a, b}, 2, "mul(einsum(\"bhqd,bhkd->bhqk\", %s, %s), 0.5)", N(a), N(b));
    int causal = next() % 3 != 0;
    int p = rg_emit(r, 4, (int64_t[]){x[0], x[1], s, s}, &sc, 1, "softmax(%s%s%s, dim = -1)", causal ? "causal_mask(" : "", N(sc), causal ? ")" : "");
    rg_emit(r, 4, x, (int[]){p, c}, 2, "einsum(\"bhqk,bhkd->bhqd\", %s, %s)", N(p), N(c));
    return;
  }
  case 20: {                                /* a leading dim broadcast */
    a = rg_get(r, next() % 2 ? 1 : 2, NULL);
    d[0] = next() % 2 ? 2 : 4;
    memcpy(d + 1, r->v[a].d, sizeof(int64_t) * (size_t)r->v[a].rank);
    char s[64];
    shape_str(s, sizeof s, r->v[a].rank + 1, d);
    rg_emit(r, r->v[a].rank + 1, d, &a, 1, "broadcast(%s, %s)", N(a), s);
    return;
  }
  case 22: {                                /* functions of positive values */
    static const char *const pos[] = {"log", "sqrt", "rsqrt"};
    a = rg_get(r, -1, NULL);
    rg_emit(r, r->v[a].rank, r->v[a].d, &a, 1, "%s(add(mul(%s, %s), 1.0))", pos[next() % 3], N(a), N(a));
    return;
  }
  case 23:                                  /* a choice between two values */
    a = rg_get(r, -1, NULL);
    b = rg_get(r, r->v[a].rank, r->v[a].d);
    if (rm_smooth) rg_emit(r, r->v[a].rank, r->v[a].d, (int[]){a, b}, 2, "mul(tanh(%s), %s)", N(a), N(b));
    else rg_emit(r, r->v[a].rank, r->v[a].d, (int[]){a, b}, 2, "select(compare(%s, %s, \"gt\"), mul(%s, %s), tanh(%s))", N(a), N(b),
                 N(a), N(a), N(b));
    return;
  case 24: {                                /* a cross-entropy of [n, c] logits, as a scalar value */
    a = rg_get(r, 2, NULL);
    if (r->v[a].d[1] < 2) a = rg_leaf(r, 2, (int64_t[]){pick_dim(), 8}, next() % 2);   /* labels range over 2 classes or more */
    rval *v = &r->v[r->nv];
    snprintf(v->name, sizeof v->name, "lab%d", r->nleaf++);
    v->rank = 0;                            /* no op reads labels but this one */
    sb_printf(&r->decl, "  input %s : i32[%lld]\n", v->name, (long long)r->v[a].d[0]);
    b = r->nv++;
    int64_t one = 1;
    rg_emit(r, 1, &one, (int[]){a, b}, 2, "reshape(cross_entropy(%s, %s), [1])", N(a), N(b));
    return;
  }
  default: {                                /* an embedding of ids */
    int64_t rows = next() % 2 ? 8 : 16, w = next() % 2 ? 4 : 8, ids[2] = {next() % 2 ? 2 : 4, next() % 2 ? 4 : 8};
    a = rg_leaf(r, 2, (int64_t[]){rows, w}, 1);
    rval *v = &r->v[r->nv];
    snprintf(v->name, sizeof v->name, "ids%d", r->nleaf++);
    v->rank = 0;                            /* no op reads ids but this one */
    sb_printf(&r->decl, "  input %s : i32[%lld, %lld]\n", v->name, (long long)ids[0], (long long)ids[1]);
    b = r->nv++;
    rg_emit(r, 3, (int64_t[]){ids[0], ids[1], w}, (int[]){a, b}, 2, "embedding(%s, %s)", N(a), N(b));
    return;
  }
  }
}

/* A random model's text (malloc'd): 3-12 ops, the loss over every value no op reads. */
static char *random_model(void) {
  static rgen rs;
  rgen *r = &rs;
  memset(r, 0, sizeof *r);
  sb_init(&r->decl);
  sb_init(&r->body);
  int ops = 3 + (int)(next() % 10);
  for (int i = 0; i < ops && r->nv < 140; i++) rg_step(r);
  /* last, a value times a parameter: a step always has one to train */
  int a = rg_get(r, -1, NULL), w = rg_leaf(r, r->v[a].rank, r->v[a].d, 1);
  rg_emit(r, r->v[a].rank, r->v[a].d, (int[]){a, w}, 2, "mul(%s, %s)", r->v[a].name, r->v[w].name);
  strbuf m;
  sb_init(&m);
  sb_printf(&m, "model random {\n%s%s  loss = ", sb_str(&r->decl), sb_str(&r->body));
  int terms = 0;
  for (int i = 0; i < r->nv; i++) {
    if (r->used[i] || r->v[i].name[0] != 'v') continue;
    sb_printf(&m, "add(");
    terms++;
  }
  /* add(add(t0, t1), t2) ...: opened above, closed as each term is written */
  int k = 0;
  for (int i = 0; i < r->nv; i++) {
    if (r->used[i] || r->v[i].name[0] != 'v') continue;
    char term[64];         /* squares: no term cancels another (the loss's relative error means something) */
    snprintf(term, sizeof term, "mean(mul(%s, %s))", N(i), N(i));
    sb_printf(&m, k == 0 ? "%s" : ", %s)", term);
    k++;
  }
  sb_printf(&m, ", 0.0)\n  return loss\n}\n");
  sb_free(&r->decl);
  sb_free(&r->body);
  char *s = strdup(sb_str(&m));
  sb_free(&m);
  return s;
}
#undef N

#endif
