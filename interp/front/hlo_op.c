/*
** hlo_op.c: what every op reader of the StableHLO importer uses: scopes
** of SSA names, located errors, types, attributes, operands, and the
** builders of IR values (emit with integer folding, reshapes, blocks cut
** out of a tensor, reduction regions), and Shardy's sharding attributes.
** Every other hlo_*.c file sits above it.
*/
#include "interp/front/hlo_int.h"
#include "util/size.h"
#include "runtime/dtype.h"
#include "lang/cir.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- scopes: SSA name (interned) and result number -> value id ---- */



static unsigned shash(const char *p, int k) { return (unsigned)(((uintptr_t)p >> 3) * 2654435761u) ^ (unsigned)k * 40503u; }

void hlo_scope_put(arena *a, scope *sc, const char *name, int k, int id) {
  if (2 * (sc->n + 1) > sc->cap) {
    scope old = *sc;
    sc->cap = old.cap ? 2 * old.cap : 64;
    sc->s = arena_alloc(a, sizeof(sslot) * (size_t)sc->cap);
    sc->n = 0;
    for (int i = 0; i < old.cap; i++) if (old.s[i].name) hlo_scope_put(a, sc, old.s[i].name, old.s[i].k, old.s[i].id);
  }
  unsigned m = (unsigned)sc->cap - 1, h = shash(name, k) & m;
  while (sc->s[h].name && !(sc->s[h].name == name && sc->s[h].k == k)) h = (h + 1) & m;
  if (!sc->s[h].name) sc->n++;
  sc->s[h] = (sslot){name, k, id};
}

int hlo_scope_get(const scope *sc, const char *name, int k) {
  if (!sc->cap) return -1;
  unsigned m = (unsigned)sc->cap - 1, h = shash(name, k) & m;
  while (sc->s[h].name) {
    if (sc->s[h].name == name && sc->s[h].k == k) return sc->s[h].id;
    h = (h + 1) & m;
  }
  return -1;
}



/* Every message about an op: at the op's name, plus the Python place its loc names. */
int hlo_error(hctx *b, const mlir_op *op, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error(b->d, L(b, op->name_off), "%s", msg);
  const char *where = op->loc ? mlir_loc_text(&b->tmp, op->loc) : NULL;
  if (where) diag_note(b->d, LOC_NONE, "the program says this op comes from %s", where);
  return -1;
}

/* ---- types ---- */

static int elem_dtype(hctx *b, const mlir_type *t, uint32_t off, ir_dtype *out) {
  static const struct { const char *n; ir_dtype t; } m[] = {
    {"f32", IR_F32}, {"bf16", IR_BF16}, {"f16", IR_F16}, {"f64", IR_F64}, {"i32", IR_I32}, {"si32", IR_I32},
    {"i64", IR_I64}, {"si64", IR_I64}, {"i1", IR_I1}, {"i8", IR_I8}, {"si8", IR_I8}, {"ui8", IR_UI8},
    {"i16", IR_I16}, {"si16", IR_I16}, {"ui16", IR_UI16}, {"ui32", IR_UI32},
  };
  if (t && t->kind == MLIR_T_SCALAR)
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
      if (!strcmp(t->name, m[i].n)) { *out = m[i].t; return 0; }
  int n = t ? (int)(t->end - t->off) : 0;
  return diag_error(b->d, L(b, t ? t->off : off), "element type '%.*s' is not supported; carve runs f32, bf16, f16, f64, i64, i32, i16, i8, ui32, ui16, ui8 and i1",
                    n, t ? b->src->text + t->off : "");
}

/* A tensor type (or a bare element type, rank 0) into shape and dtype. */
int hlo_tensor_type(hctx *b, const mlir_type *t, uint32_t off, ir_shape *s, ir_dtype *dt) {
  memset(s, 0, sizeof *s);
  if (!t) return diag_error(b->d, L(b, off), "a type is missing here");
  if (t->kind == MLIR_T_SCALAR) return elem_dtype(b, t, off, dt);
  if (t->kind != MLIR_T_TENSOR || strcmp(t->name, "tensor"))
    return diag_error(b->d, L(b, t->off), "carve imports tensors; '%.*s' is not one", (int)(t->end - t->off), b->src->text + t->off);
  if (t->rank < 0) return diag_error(b->d, L(b, t->off), "unranked tensors are not supported; export with static shapes");
  if (t->rank > IR_MAXRANK) return diag_error(b->d, L(b, t->off), "tensors of rank %d are not supported (at most %d)", t->rank, IR_MAXRANK);
  s->rank = t->rank;
  for (int i = 0; i < t->rank; i++) {
    if (t->dims[i] == MLIR_DYN)
      return diag_error(b->d, L(b, t->dim_off ? t->dim_off[i] : t->off), "dynamic dims ('?') are not supported; export with static shapes (jax.export without symbolic shapes)");
    s->d[i] = t->dims[i];
  }
  int64_t n;
  if (size_prod(s->d, s->rank, &n) < 0)
    return diag_error(b->d, L(b, t->off), "'%.*s' has more than 2^62 elements; carve's tensors stop there", (int)(t->end - t->off), b->src->text + t->off);
  return elem_dtype(b, t->elem, t->off, dt);
}

/* The k-th result type of op. */
const mlir_type *hlo_result_type(const mlir_op *op, int k) {
  if (op->sig.arrow) return k < op->sig.nouts ? op->sig.outs[k] : NULL;
  return op->sig.nins ? op->sig.ins[op->sig.nins - 1] : NULL;
}

int hlo_result_shape(hctx *b, const mlir_op *op, ir_shape *s, ir_dtype *dt) {
  const mlir_type *t = hlo_result_type(op, 0);
  if (!t) return hlo_error(b, op, "%s: the result type is missing (write ': type' after the op)", op->name);
  return hlo_tensor_type(b, t, op->off, s, dt);
}

/* ---- attributes ---- */

/* The attribute keyed k1 among a pretty op's items, else k1 or k2 among
** its properties and attributes. */
const mlir_attr *hlo_attr(const mlir_op *op, const char *k1, const char *k2) {
  const mlir_item *it = mlir_op_item(op, k1);
  if (it) return it->val;
  const mlir_attr *a = mlir_op_attr(op, k1);
  if (!a && k2) a = mlir_op_attr(op, k2);
  return a;
}

/* A list of integers written [1, 2], array<i64: 1, 2>, dense<[1, 2]> or a single number. */
int hlo_ints_of(const mlir_attr *a, int64_t *out, int max) {
  if (!a) return -1;
  switch (a->kind) {
  case MLIR_A_INT: if (max < 1) return -1; out[0] = a->i; return 1;
  case MLIR_A_DENSE:
    if (a->nitems == 0) return 0;
    return hlo_ints_of(a->items[0].val, out, max);
  case MLIR_A_LIST: case MLIR_A_ARRAY: case MLIR_A_GROUP: {
    if (a->nitems > max) return -1;
    for (int i = 0; i < a->nitems; i++) {
      if (a->items[i].val->kind != MLIR_A_INT) return -1;
      out[i] = a->items[i].val->i;
    }
    return a->nitems;
  }
  default: return -1;
  }
}

int hlo_ints(hctx *b, const mlir_op *op, const char *k1, const char *k2, int64_t *out, int max) {
  const mlir_attr *a = hlo_attr(op, k1, k2);
  if (!a) return hlo_error(b, op, "%s: '%s' is missing", op->name, k1);
  int n = hlo_ints_of(a, out, max);
  if (n < 0) return diag_error(b->d, L(b, a->off), "%s: '%s' must be a list of at most %d integers", op->name, k1, max);
  return n;
}

/* The first bare word of a set found anywhere inside a (depth-first). */
static const char *find_word(const mlir_attr *a, const char *const *set) {
  if (!a) return NULL;
  if (a->kind == MLIR_A_WORD)
    for (int i = 0; set[i]; i++) if (!strcmp(a->text, set[i])) return set[i];
  for (int i = 0; i < a->nitems; i++) {
    const char *w = find_word(a->items[i].val, set);
    if (w) return w;
  }
  return NULL;
}

const char *hlo_op_word(const mlir_op *op, const char *const *set, const char *key) {
  for (int i = 0; i < op->nitems; i++) {
    const char *w = find_word(op->items[i].val, set);
    if (w) return w;
  }
  return key ? find_word(mlir_op_attr(op, key), set) : NULL;
}

/* ---- values ---- */

/* Operand k of op: the value its name is bound to in the current scope. */
int hlo_lookup(hctx *b, const mlir_op *op, int k) {
  if (k >= op->noperands) return -1;
  const mlir_attr *v = op->operands[k];
  return hlo_scope_get(b->sc, v->text, v->i < 0 ? 0 : (int)v->i);
}

int hlo_operand(hctx *b, const mlir_op *op, int k) {
  if (k >= op->noperands) { hlo_error(b, op, "%s: expected at least %d operands, found %d", op->name, k + 1, op->noperands); return -1; }
  const mlir_attr *v = op->operands[k];
  int id = hlo_scope_get(b->sc, v->text, v->i < 0 ? 0 : (int)v->i);
  if (id < 0) diag_error(b->d, L(b, v->off), "'%s' is used before it is defined", v->text);
  return id;
}

/* A valid carve name from an SSA name or a Python path: "%0" -> "v0",
** "params['w']" -> "params.w"; NULL when nothing usable is left. */
const char *hlo_clean_name(hctx *b, const char *s) {
  char buf[256];
  size_t k = 0;
  int dot = 0;
  for (; *s && k < sizeof buf - 8; s++) {
    unsigned char c = (unsigned char)*s;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (ok) {
      if (dot && k) buf[k++] = '.';
      dot = 0;
      if (!k && c >= '0' && c <= '9') buf[k++] = 'v';
      buf[k++] = (char)c;
    } else if (c != '%') {
      dot = 1;
    }
  }
  buf[k] = 0;
  if (k && cir_is_keyword(buf)) { buf[k++] = '_'; buf[k] = 0; }   /* 'input' as a name: 'input_', which model files read */
  return k ? arena_strndup(&b->tmp, buf, k) : NULL;
}

/* The name for a value the op defines: its SSA name under the call path. */
const char *hlo_value_name(hctx *b, const mlir_op *op, int k) {
  const char *n = op->nresults ? hlo_clean_name(b, op->results[0].name) : NULL;
  if (!n) n = "v";
  char buf[512];
  if (k) snprintf(buf, sizeof buf, "%s%s.%d", b->prefix, n, k);
  else snprintf(buf, sizeof buf, "%s%s", b->prefix, n);
  return arena_strndup(&b->tmp, buf, strlen(buf));
}

ir_attrs hlo_no_attrs(void) {
  ir_attrs a;
  memset(&a, 0, sizeof a);
  a.ndims = -1;
  return a;
}

/* Integer arithmetic on integer literals, done now: a while loop's counter
** (add, subtract, multiply, negate, maximum, minimum, compare, select,
** convert between integers), wrapping to the type's width as the CPU
** kernels do. The literal, or -2 when k is not one of these ops or an
** argument is not an integer literal. */
static int fold_ints(hctx *b, ir_opkind k, const int *args, int nargs, const ir_attrs *at) {
  int64_t v[3];
  if (nargs < 1 || nargs > 3) return -2;
  for (int i = 0; i < nargs; i++) {
    const ir_value *a = b->g->vals[args[i]];
    if (a->kind != IR_CONST || ir_dtype_isfloat(a->dtype) || fabs(a->attr.scalar) > 9007199254740992.0) return -2;
    v[i] = (int64_t)a->attr.scalar;
  }
  ir_dtype t = b->g->vals[args[nargs - 1]]->dtype;
  uint64_t x = (uint64_t)v[0], y = nargs > 1 ? (uint64_t)v[1] : 0, r;
  switch (k) {
  case IR_ADD: r = x + y; break;
  case IR_SUB: r = x - y; break;
  case IR_MUL: r = x * y; break;
  case IR_NEG: r = 0 - x; break;
  case IR_MAXIMUM: r = v[0] > v[1] ? x : y; break;
  case IR_MINIMUM: r = v[0] < v[1] ? x : y; break;
  case IR_SELECT: r = v[0] ? y : (uint64_t)v[2]; break;
  case IR_CONVERT: if (ir_dtype_isfloat(at->dtype)) return -2; r = x; t = at->dtype; break;
  case IR_COMPARE: {
    static const char *const dirs[] = {"eq", "ne", "lt", "le", "gt", "ge"};   /* ORDER ir_cmp */
    int c = 0;
    while (c < 6 && (!at->spec || strcmp(at->spec, dirs[c]))) c++;
    if (c == 6) return -2;
    int64_t p = v[0], q = v[1];
    r = c == 0 ? p == q : c == 1 ? p != q : c == 2 ? p < q : c == 3 ? p <= q : c == 4 ? p > q : p >= q;
    t = IR_I1;
    break;
  }
  default: return -2;
  }
  int bits = (int)ir_dtype_size(t) * 8;
  int64_t w = t == IR_I1 ? (int64_t)(r != 0) : bits >= 64 ? (int64_t)r : (int64_t)(r << (64 - bits)) >> (64 - bits);
  if (ir_dtype_isunsigned(t)) w = (int64_t)(r & ((1ull << bits) - 1));
  if (fabs((double)w) > 9007199254740992.0) return -2;
  return ir_const_typed(b->g, (double)w, t);
}

/* The same for float literals (f32 and f64) where one rounding of the
** exact result is what the op computes (add, subtract, multiply, divide,
** sqrt, negate, maximum, minimum, conversions, comparisons), as JAX's
** programs compute their constants (1 / sqrt(head_dim), N - ddof); and a
** select on a literal predicate is the operand it picks, where that has
** the result's shape. */
static int fold_floats(hctx *b, ir_opkind k, const int *args, int nargs, const ir_attrs *at) {
  if (nargs < 1 || nargs > 3) return -2;
  if (k == IR_SELECT && nargs == 3) {
    const ir_value *p = b->g->vals[args[0]], *x = b->g->vals[args[1]], *y = b->g->vals[args[2]];
    if (p->kind != IR_CONST || p->dtype != IR_I1) return -2;
    const ir_value *pick = p->attr.scalar != 0 ? x : y, *other = pick == x ? y : x;
    ir_shape r = pick->shape;        /* the result's shape: the larger of the two (the predicate is a scalar) */
    if (other->shape.rank > r.rank || (other->shape.rank == r.rank && ir_nelem(&other->shape) > ir_nelem(&r))) return -2;
    return pick->dtype == other->dtype ? pick->id : -2;
  }
  double v[3];
  ir_dtype t = IR_F32;
  for (int i = 0; i < nargs; i++) {
    const ir_value *a = b->g->vals[args[i]];
    if (a->kind != IR_CONST || (a->dtype != IR_F32 && a->dtype != IR_F64 && !(k == IR_CONVERT && ir_dtype_isint(a->dtype)))) return -2;
    v[i] = a->attr.scalar;
    t = a->dtype == IR_F64 ? IR_F64 : t;
  }
  double r;
  switch (k) {
  case IR_ADD: r = v[0] + v[1]; break;
  case IR_SUB: r = v[0] - v[1]; break;
  case IR_MUL: r = v[0] * v[1]; break;
  case IR_DIV: r = v[0] / v[1]; break;
  case IR_NEG: r = -v[0]; break;
  case IR_SQRT: r = sqrt(v[0]); break;
  case IR_MAXIMUM: r = v[0] != v[0] || v[1] != v[1] ? NAN : v[0] > v[1] ? v[0] : v[1]; break;
  case IR_MINIMUM: r = v[0] != v[0] || v[1] != v[1] ? NAN : v[0] < v[1] ? v[0] : v[1]; break;
  case IR_CONVERT:
    if (at->dtype != IR_F32 && at->dtype != IR_F64) return -2;
    r = v[0];
    t = at->dtype;
    break;
  case IR_COMPARE: {
    static const char *const dirs[] = {"eq", "ne", "lt", "le", "gt", "ge"};   /* ORDER ir_cmp */
    int c = 0;
    while (c < 6 && (!at->spec || strcmp(at->spec, dirs[c]))) c++;
    if (c == 6 || at->total) return -2;
    double p = v[0], q = v[1];
    int x = c == 0 ? p == q : c == 1 ? p != q : c == 2 ? p < q : c == 3 ? p <= q : c == 4 ? p > q : p >= q;
    return ir_const_typed(b->g, x, IR_I1);
  }
  default: return -2;
  }
  if (t == IR_F32) return ir_const(b->g, (double)(float)r);
  return ir_const_typed(b->g, r, IR_F64);
}

/* Add an op value named base (or a fresh name from it when taken); literal
** arithmetic is folded (fold_ints, fold_floats). */
int hlo_emit(hctx *b, const char *base, ir_opkind k, const int *args, int nargs, const ir_attrs *at) {
  if (b->g->nvals > HLO_MAX_VALUES) return hlo_error(b, b->op, "the program has more than %d values", HLO_MAX_VALUES);
  int typed[3];
  if (args && nargs > 0 && nargs <= 3) {     /* a helper's literal takes its operands' type: f64 keeps pi's digits */
    memcpy(typed, args, sizeof(int) * (size_t)nargs);
    ir_type_literals(b->g, k, typed, nargs);
    args = typed;
  }
  int folded = args ? fold_ints(b, k, args, nargs, at) : -2;
  if (folded == -2 && args) folded = fold_floats(b, k, args, nargs, at);
  if (folded != -2) return folded;
  const char *name = ir_lookup(b->g, base) ? ir_fresh_name(b->g, base) : base;
  ir_attrs a = at ? *at : hlo_no_attrs();
  ir_value *v = ir_op(b->g, b->d, name, k, args, nargs, &a, L(b, b->op->name_off));
  return v ? v->id : -1;
}

/* A name for a helper value of the op whose result is base ("v5.p", "v5.p.2") */
const char *hlo_fresh(hctx *b, const char *base) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s.p", base);
  return ir_fresh_name(b->g, buf);
}

/* dot_general's and convolution's operands converted to a wider result
** type, when the op declares one (preferred_element_type: bf16 operands
** accumulated in f32, i8 in i32); the widening is exact. */
int hlo_widen_operands(hctx *b, const mlir_op *op, int *args, int nargs) {
  ir_shape s;
  ir_dtype rt;
  if (hlo_result_shape(b, op, &s, &rt) < 0) return -1;
  for (int k = 0; k < nargs; k++) {
    ir_dtype t = b->g->vals[args[k]]->dtype;
    int fl = ir_dtype_isfloat(t);
    if (t == rt || fl != ir_dtype_isfloat(rt) || t == IR_I1 || ir_dtype_size(rt) <= ir_dtype_size(t)) continue;
    ir_attrs cv = hlo_no_attrs();
    cv.dtype = rt;
    if ((args[k] = hlo_emit(b, hlo_fresh(b, hlo_value_name(b, op, 0)), IR_CONVERT, &args[k], 1, &cv)) < 0) return -1;
  }
  return 0;
}

int hlo_check_result(hctx *b, const mlir_op *op, int id, const ir_shape *s, ir_dtype dt) {
  const ir_value *v = b->g->vals[id];
  if (v->dtype != dt || !ir_shape_eq(&v->shape, s)) {
    arena *a = &b->tmp;
    return hlo_error(b, op, "%s: the result is %s%s but the program declares %s%s", op->name,
                    ir_dtype_name(v->dtype), ir_shape_str(a, &v->shape), ir_dtype_name(dt), ir_shape_str(a, s));
  }
  return 0;
}


int hlo_reshape(hctx *b, const char *name, int x, const ir_shape *s) {
  if (ir_shape_eq(&b->g->vals[x]->shape, s)) return x;
  ir_attrs at = hlo_no_attrs();
  at.to = *s;
  return hlo_emit(b, name, IR_RESHAPE, &x, 1, &at);
}

int hlo_ew(hctx *b, const char *base, ir_opkind k, int x, int y) {
  int args[2] = {x, y};
  if (x < 0 || y == -1) return -1;
  return hlo_emit(b, hlo_fresh(b, base), k, args, y == HLO_UNARY ? 1 : 2, NULL);
}

int hlo_cmp(hctx *b, const char *base, const char *dir, int x, int y) {
  ir_attrs at = hlo_no_attrs();
  at.spec = ir_intern(b->g, dir);
  int args[2] = {x, y};
  return x < 0 || y < 0 ? -1 : hlo_emit(b, hlo_fresh(b, base), IR_COMPARE, args, 2, &at);
}

int hlo_sel(hctx *b, const char *base, int p, int x, int y) {
  int args[3] = {p, x, y};
  return p < 0 || x < 0 || y < 0 ? -1 : hlo_emit(b, hlo_fresh(b, base), IR_SELECT, args, 3, NULL);
}

/* x[lo:hi] on every dim, one slice op per dim that is cut (x where none is) */
int hlo_slice_block(hctx *b, const char *name, int x, const int64_t *lo, const int64_t *hi) {
  const ir_value *xv = b->g->vals[x];
  int last = -1;
  for (int i = 0; i < xv->shape.rank; i++) if (lo[i] != 0 || hi[i] != xv->shape.d[i]) last = i;
  for (int i = 0; i <= last; i++) {
    if (lo[i] == 0 && hi[i] == b->g->vals[x]->shape.d[i]) continue;
    ir_attrs at = hlo_no_attrs();
    at.dim = i;
    at.start = lo[i];
    at.end = hi[i];
    x = hlo_emit(b, i == last ? name : hlo_fresh(b, name), IR_SLICE, &x, 1, &at);
    if (x < 0) return -1;
  }
  return x;
}

/* ---- reductions ---- */

/* looked up by the body op's short name */
static const hlo_redop redops[] = {
  {"add", IR_SUM, IR_ADD, 0}, {"maximum", IR_MAX, IR_MAXIMUM, -INFINITY}, {"minimum", IR_MIN, IR_MINIMUM, INFINITY},
  {"or", IR_MAX, IR_OR, 0}, {"and", IR_MIN, IR_AND, 1},
};

const hlo_redop *hlo_find_redop(const char *name) {
  for (size_t i = 0; i < sizeof redops / sizeof redops[0]; i++) if (!strcmp(redops[i].name, name)) return &redops[i];
  return NULL;
}

const char *hlo_short_name(const char *n) {
  static const char *const pre[] = {"stablehlo.", "mhlo.", "func.", "chlo."};
  for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
    if (!strncmp(n, pre[i], strlen(pre[i]))) return n + strlen(pre[i]);
  return n;
}

static const mlir_op *block_def(const mlir_block *bl, const char *name) {
  for (int i = 0; i < bl->nops; i++)
    if (bl->ops[i]->nresults == 1 && bl->ops[i]->results[0].name == name) return bl->ops[i];
  return NULL;
}

/* a constant dense<true> or dense<false> of the block */
static int block_bool(const mlir_block *bl, const char *name, int want) {
  const mlir_op *o = block_def(bl, name);
  if (!o || !strstr(o->name, "constant") || !o->nitems || o->items[0].val->kind != MLIR_A_DENSE) return 0;
  const mlir_attr *a = o->items[0].val;
  return a->nitems == 1 && a->items[0].val->kind == MLIR_A_BOOL && (a->items[0].val->i != 0) == want;
}

/* The op of a region's block that combines both block arguments and is
** returned, maybe through select(r, true, false) as torch-xla writes
** boolean reductions; other ops may stand beside. *swapped: it reads them
** in the other order. */
const mlir_op *hlo_region_op(const mlir_region *r, int *swapped) {
  if (!r || r->nblocks != 1) return NULL;
  const mlir_block *bl = r->blocks[0];
  if (bl->nargs != 2) return NULL;
  const mlir_op *ret = bl->nops ? bl->ops[bl->nops - 1] : NULL;
  if (!ret || strcmp(hlo_short_name(ret->name), "return") || ret->noperands != 1) return NULL;
  const mlir_op *o = block_def(bl, ret->operands[0]->text);
  for (int hops = 0; o && hops < 4 && !strcmp(hlo_short_name(o->name), "select") && o->noperands == 3 &&
       block_bool(bl, o->operands[1]->text, 1) && block_bool(bl, o->operands[2]->text, 0); hops++)
    o = block_def(bl, o->operands[0]->text);
  if (!o || o->noperands != 2) return NULL;
  const char *a = o->operands[0]->text, *c = o->operands[1]->text;
  *swapped = a == bl->args[1].name && c == bl->args[0].name;
  if ((a == bl->args[0].name && c == bl->args[1].name) || *swapped) return o;
  return NULL;
}

const char *hlo_region_reducer(const mlir_region *r) {
  int swapped;
  const mlir_op *o = hlo_region_op(r, &swapped);
  return o ? hlo_short_name(o->name) : NULL;
}

/* ---- shardings ---- */

/* A sharding of value id, into info: an argument's #sdy.sharding<@mesh,
** [{"x"}, {}]> or a constraint's <@mesh, [...]> (s: either attribute) */
int hlo_sdy_sharding(hctx *b, const mlir_attr *s, int id, hlo_info *info) {
  if (!s || !info) return 0;
  const mlir_attr *dims = NULL;
  for (int i = 0; i < s->nitems; i++) if (s->items[i].val->kind == MLIR_A_LIST) dims = s->items[i].val;
  const ir_value *v = b->g->vals[id];
  if (!dims || dims->nitems != v->shape.rank)
    return diag_error(b->d, L(b, s->off), "sdy.sharding of '%s' must list %d dims", v->name, v->shape.rank);
  hlo_sharding sh = {.value = id, .rank = v->shape.rank};
  int any = 0;
  for (int i = 0; i < dims->nitems; i++) {
    const mlir_attr *dd = dims->items[i].val;
    for (int j = 0; j < dd->nitems; j++) {
      const mlir_attr *ax = dd->items[j].val;
      if (dd->items[j].key || ax->kind != MLIR_A_STRING) continue;   /* '?' (open) and keyed items */
      int known = 0;
      for (int q = 0; q < info->naxes; q++) known |= !strcmp(info->axis[q], ax->text);
      if (!known) return diag_error(b->d, L(b, ax->off), "axis \"%s\" is not in the module's sdy.mesh", ax->text);
      if (sh.naxes[i] < HLO_MAXAXES) sh.axes[i][sh.naxes[i]++] = ir_intern(b->g, ax->text);
      any = 1;
    }
  }
  if (!any) return 0;
  info->shardings = arena_grow(&b->g->mem, info->shardings, (size_t)info->nshardings, (size_t)info->nshardings + 1, sizeof(hlo_sharding));
  info->shardings[info->nshardings++] = sh;
  return 0;
}
