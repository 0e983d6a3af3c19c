/*
** build.c: model syntax trees -> IR. Names inside repeat blocks carry
** templates ("l{i}.w1", "h{i+1}") that are expanded with the loop index;
** nested calls get names derived from the statement they sit in
** ("h.add" for the add inside "h = gelu(add(...))"), so that every value
** a user sees in a report can be traced to its line.
*/
#include "interp/front/build.h"
#include "interp/ir/ops.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPEAT_DEPTH 16
#define MAX_VALUES 4000000

typedef struct binding { const char *var; int64_t val; } binding;

typedef struct bctx {
  ir_graph *g;
  diag *d;
  const diag_src *src;
  binding env[MAX_REPEAT_DEPTH];
  int nenv;
  int nreturns;
  const char *stmt_name;  /* the statement's target: nested calls are named after it */
} bctx;

static loc L(bctx *b, uint32_t off) { return (loc){b->src, off}; }

/* ---- name templates: {i}, {i+1}, {2*i-1} ---- */

static int tmpl_expr(bctx *b, const char *s, size_t n, uint32_t off, int64_t *out) {
  int64_t total = 0, term = 1;
  int sign = 1, have = 0;
  size_t i = 0;
  for (;;) {
    while (i < n && s[i] == ' ') i++;
    int64_t f;
    if (i < n && isdigit((unsigned char)s[i])) {
      f = 0;
      while (i < n && isdigit((unsigned char)s[i])) {
        if (f > (INT64_C(1) << 40)) return diag_error(b->d, L(b, off), "name template number too large");
        f = f * 10 + (s[i++] - '0');
      }
    } else if (i < n && (isalpha((unsigned char)s[i]) || s[i] == '_')) {
      size_t j = i;
      while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_')) j++;
      int k;
      for (k = b->nenv - 1; k >= 0; k--)
        if (strlen(b->env[k].var) == j - i && memcmp(b->env[k].var, s + i, j - i) == 0) break;
      if (k < 0)
        return diag_error(b->d, L(b, off), "'%.*s' in a name template is not a repeat index here%s",
                          (int)(j - i), s + i, b->nenv ? "" : " (templates only work inside repeat blocks)");
      f = b->env[k].val;
      i = j;
    } else {
      return diag_error(b->d, L(b, off), "bad name template '{%.*s}': use an index, a number, + - or *", (int)n, s);
    }
    term *= f;
    have = 1;
    while (i < n && s[i] == ' ') i++;
    if (i < n && s[i] == '*') { i++; continue; }
    total += sign * term;
    term = 1;
    if (i == n) break;
    if (s[i] == '+') sign = 1; else if (s[i] == '-') sign = -1;
    else return diag_error(b->d, L(b, off), "bad name template '{%.*s}': use an index, a number, + - or *", (int)n, s);
    i++;
  }
  if (!have) return diag_error(b->d, L(b, off), "empty name template '{}'");
  *out = total;
  return 0;
}

static const char *expand(bctx *b, const char *name, uint32_t off) {
  if (!strchr(name, '{')) return ir_intern(b->g, name);
  strbuf buf;
  sb_init(&buf);
  const char *r = NULL;
  for (const char *p = name; *p; ) {
    if (*p == '{') {
      const char *e = strchr(p, '}');
      if (!e) { diag_error(b->d, L(b, off), "unclosed '{' in name '%s'", name); goto done; }
      int64_t v = 0;
      if (tmpl_expr(b, p + 1, (size_t)(e - p - 1), off, &v) < 0) goto done;
      if (v < 0) { diag_error(b->d, L(b, off), "name template in '%s' gives %lld; names cannot hold negative numbers", name, (long long)v); goto done; }
      sb_printf(&buf, "%lld", (long long)v);
      p = e + 1;
    } else {
      sb_putc(&buf, *p++);
    }
  }
  r = ir_intern(b->g, sb_str(&buf));
done:
  sb_free(&buf);
  return r;
}

/* ---- values ---- */

static int redefined(bctx *b, const char *name, uint32_t off) {
  ir_value *old = ir_lookup(b->g, name);
  if (!old) return 0;
  if (old->at.src) {
    diag_error(b->d, L(b, off), "'%s' is already defined; each name is assigned once", name);
    diag_note(b->d, old->at, "'%s' was defined here", name);
  } else {
    diag_error(b->d, L(b, off), "'%s' is already defined (a name made for a nested call); pick another name", name);
  }
  return -1;
}

static int eval_value(bctx *b, const cir_expr *e);

/* signature slots */
typedef struct slot { char name[IR_SIG_NAME]; char type; int optional; const cir_expr *e; uint32_t off; } slot;
#define MAX_SLOTS 16      /* the most slots an op's signature has (scatter: 11) */

static int parse_sig(const char *sig, slot *s) {
  int n = 0;
  for (const char *p = sig; n < MAX_SLOTS; n++) {
    memset(&s[n], 0, sizeof s[n]);
    if (!ir_sig_next(&p, s[n].name, &s[n].type, &s[n].optional)) break;
  }
  return n;
}

/* "op(x, dims = .., keepdims = ..)" into buf[SIG_TEXT] */
#define SIG_TEXT 512
static void sig_text(char *buf, const char *op, const slot *s, int n) {
  size_t k = (size_t)snprintf(buf, SIG_TEXT, "%s(", op);
  for (int i = 0; i < n && k < SIG_TEXT; i++)
    k += (size_t)snprintf(buf + k, SIG_TEXT - k, "%s%s%s", i ? ", " : "", s[i].name, s[i].optional ? " = .." : "");
  if (k < SIG_TEXT) snprintf(buf + k, SIG_TEXT - k, ")");
}

static const char *sig_usage(arena *a, const char *op, const slot *s, int n) {
  char buf[SIG_TEXT];
  sig_text(buf, op, s, n);
  return arena_strndup(a, buf, strlen(buf));
}

void build_op_list(strbuf *out) {
  for (int i = 1; i < IR_NOPS; i++) {
    const ir_opinfo *oi = ir_opinfo_of((ir_opkind)i);
    if (oi->flags & OPF_INTERNAL) continue;
    slot s[MAX_SLOTS];
    char buf[256];
    sig_text(buf, oi->name, s, parse_sig(oi->sig, s));
    sb_printf(out, "  %s\n", buf);
  }
}

static int get_int(bctx *b, const cir_expr *e, const char *op, const char *what, int64_t *out) {
  if (e->kind != CIR_NUM || !e->is_int)
    return diag_error(b->d, L(b, e->off), "%s: %s must be an integer", op, what);
  *out = e->inum;
  return 0;
}

static int get_ints(bctx *b, const cir_expr *e, const char *op, const char *what, int64_t *out, int *n) {
  if (e->kind == CIR_NUM) { *n = 1; return get_int(b, e, op, what, out); }
  if (e->kind != CIR_LIST) return diag_error(b->d, L(b, e->off), "%s: %s must be a list of integers like [0, 1]", op, what);
  if (e->nargs > IR_MAXRANK) return diag_error(b->d, L(b, e->off), "%s: %s has %d entries; at most %d dims are supported", op, what, e->nargs, IR_MAXRANK);
  for (int i = 0; i < e->nargs; i++)
    if (get_int(b, e->args[i], op, what, &out[i]) < 0) return -1;
  *n = e->nargs;
  return 0;
}

ir_value *build_call(ir_graph *g, diag *d, const cir_expr *call, const char *name);

/* constant([v, ...], shape = [..], dtype = T): the values, as many as the shape holds */
static int constant_values(bctx *b, const cir_expr *e, ir_attrs *at) {
  int64_t n = 1;
  for (int i = 0; i < at->to.rank; i++) {
    if (at->to.d[i] < 0) return diag_error(b->d, L(b, e->off), "constant: dim %d of the shape is negative", i);
    n *= at->to.d[i];
    if (n > 100000000) return diag_error(b->d, L(b, e->off), "constant: more than 10^8 values; use a param");
  }
  if (e->nargs != n)
    return diag_error(b->d, L(b, e->off), "constant: %d values for a shape of %lld elements", e->nargs, (long long)n);
  void *data = ir_values_new(b->g, at->dtype, n);
  for (int i = 0; i < e->nargs; i++) {
    const cir_expr *x = e->args[i];
    double v;
    if (x->kind == CIR_NUM) v = x->num;
    else if (x->kind == CIR_STR && !strcmp(x->text, "nan")) v = NAN;
    else if (x->kind == CIR_STR && !strcmp(x->text, "-nan")) v = -NAN;
    else if (x->kind == CIR_STR && !strcmp(x->text, "inf")) v = INFINITY;
    else if (x->kind == CIR_STR && !strcmp(x->text, "-inf")) v = -INFINITY;
    else return diag_error(b->d, L(b, x->off), "constant: a value must be a number, \"nan\", \"-nan\", \"inf\" or \"-inf\"");
    if (x->kind == CIR_NUM && x->is_int && ir_dtype_isint(at->dtype)) {
      ir_values_set_int(data, at->dtype, i, x->inum);          /* integers exactly, beyond 2^53 */
      continue;
    }
    ir_values_set(data, at->dtype, i, v);
  }
  at->data = data;
  return 0;
}

static ir_value *call_in(bctx *b, const cir_expr *call, const char *name) {
  int op = ir_op_lookup(call->text);
  if (op < 0) {
    const char *sug = ir_op_suggest(call->text);
    if (sug) diag_error(b->d, L(b, call->off), "unknown op '%s'; did you mean '%s'?", call->text, sug);
    else diag_error(b->d, L(b, call->off), "unknown op '%s' (carve check --help lists the ops)", call->text);
    return NULL;
  }
  const ir_opinfo *oi = ir_opinfo_of((ir_opkind)op);
  slot s[MAX_SLOTS];
  int ns = parse_sig(oi->sig, s);
  const char *opn = oi->name;
  if (call->nargs > ns) {
    diag_error(b->d, L(b, call->args[ns]->off), "%s takes %d argument%s: %s", opn, ns, ns == 1 ? "" : "s",
               sig_usage(&b->g->mem, opn, s, ns));
    return NULL;
  }
  for (int i = 0; i < call->nargs; i++) { s[i].e = call->args[i]; s[i].off = call->args[i]->off; }
  for (int i = 0; i < call->nattrs; i++) {
    const cir_attr *at = &call->attrs[i];
    int k;
    for (k = 0; k < ns; k++) if (strcmp(s[k].name, at->key) == 0) break;
    if (k == ns) {
      diag_error(b->d, L(b, at->off), "%s has no argument '%s'; it takes %s", opn, at->key, sig_usage(&b->g->mem, opn, s, ns));
      return NULL;
    }
    if (s[k].e) { diag_error(b->d, L(b, at->off), "%s: argument '%s' is given twice", opn, at->key); return NULL; }
    s[k].e = at->val;
    s[k].off = at->off;
  }
  int cap = ns, nargs = 0;
  for (int k = 0; k < ns; k++)
    if (s[k].type == 'V' && s[k].e && s[k].e->kind == CIR_LIST) cap += s[k].e->nargs;
  int *args = arena_alloc(&b->g->mem, sizeof(int) * (size_t)cap);   /* (ir_add copies them) */
  const cir_expr *values = NULL;
  ir_attrs attr;
  memset(&attr, 0, sizeof attr);
  attr.ndims = -1;
  attr.dim = -1;
  attr.eps = 1e-5;
  attr.causal = 1;
  ir_index *ix = NULL;                 /* gather's and scatter's dimension numbers */
  if (op == IR_GATHER || op == IR_SCATTER) {
    ix = arena_alloc(&b->g->mem, sizeof *ix);
    memset(ix, 0, sizeof *ix);
    ix->combine = IR_ADD;
    attr.index = ix;
  }
  for (int k = 0; k < ns; k++) {
    const cir_expr *e = s[k].e;
    if (!e) {
      if (s[k].optional) continue;
      diag_error(b->d, L(b, call->off), "%s: missing argument '%s'; write %s", opn, s[k].name, sig_usage(&b->g->mem, opn, s, ns));
      return NULL;
    }
    const char *sn = s[k].name;
    switch (s[k].type) {
    case 'v': {
      int id = eval_value(b, e);
      if (id < 0) return NULL;
      args[nargs++] = id;
      break;
    }
    case 'V':
      if (e->kind != CIR_LIST || e->nargs == 0) {
        diag_error(b->d, L(b, e->off), "%s: %s must be a list of values like [a, b]", opn, sn);
        return NULL;
      }
      for (int i = 0; i < e->nargs; i++) {
        int id = eval_value(b, e->args[i]);
        if (id < 0) return NULL;
        args[nargs++] = id;
      }
      break;
    case 's':
      if (ix) {
        int combine = e->kind == CIR_STR ? ir_combiner(e->text) : -1;
        if (!strcmp(sn, "combine") && combine < 0) {
          diag_error(b->d, L(b, e->off), "%s: combine must be \"add\", \"mul\", \"max\", \"min\" or \"replace\"", opn);
          return NULL;
        }
        const char *other = op == IR_GATHER ? "fill" : "clip", *spec = op == IR_GATHER ? "clip" : "skip";
        if (!strcmp(sn, "mode") && (e->kind != CIR_STR || (strcmp(e->text, other) && strcmp(e->text, spec)))) {
          diag_error(b->d, L(b, e->off), "%s: mode must be \"%s\" (indices out of range %s, as StableHLO says) or \"%s\" (%s)", opn, spec,
                     op == IR_GATHER ? "clamped" : "skipped", other, op == IR_GATHER ? "zeros there" : "clamped");
          return NULL;
        }
        if (!strcmp(sn, "combine")) ix->combine = combine;
        else ix->other_bounds = !strcmp(e->text, other);
        break;
      }
      if (e->kind != CIR_STR) { diag_error(b->d, L(b, e->off), "%s: %s must be a string like \"ab,bc->ac\"", opn, sn); return NULL; }
      attr.spec = ir_intern(b->g, e->text);
      break;
    case 'i': {
      int64_t x = 0;
      if (get_int(b, e, opn, sn, &x) < 0) return NULL;
      if (ix) {                       /* index_vector_dim */
        if (x < 0 || x > IR_MAXRANK) { diag_error(b->d, L(b, e->off), "%s: %s %lld is out of range", opn, sn, (long long)x); return NULL; }
        ix->ivd = (int)x;
      } else if (!strcmp(sn, "dim")) {
        if (x < -64 || x > 64) { diag_error(b->d, L(b, e->off), "%s: dim %lld is out of range", opn, (long long)x); return NULL; }
        attr.dim = (int)x;
      } else if (!strcmp(sn, "start")) attr.start = x;
      else if (!strcmp(sn, "end") || !strcmp(sn, "size")) attr.end = x;
      else if (!strcmp(sn, "rows")) attr.rows = x;
      break;
    }
    case 'f':
      if (e->kind != CIR_NUM) { diag_error(b->d, L(b, e->off), "%s: %s must be a number", opn, sn); return NULL; }
      if (!(e->num > 0)) { diag_error(b->d, L(b, e->off), "%s: %s must be positive", opn, sn); return NULL; }
      if (!strcmp(sn, "eps")) attr.eps = e->num;
      else if (!strcmp(sn, "scale")) attr.scale = e->num;
      break;
    case 'b':
      if (e->kind != CIR_NAME || (strcmp(e->text, "true") && strcmp(e->text, "false"))) {
        diag_error(b->d, L(b, e->off), "%s: %s must be true or false", opn, sn);
        return NULL;
      }
      ir_attr_set_flag(&attr, sn, !strcmp(e->text, "true"));
      break;
    case 't':
      if (e->kind != CIR_NAME || ir_dtype_parse(e->text, &attr.dtype) < 0) {
        diag_error(b->d, L(b, e->off), "%s: %s must be a type: " IR_DTYPE_LIST, opn, sn);
        return NULL;
      }
      break;
    case 'F':
      if (e->kind != CIR_LIST) {
        diag_error(b->d, L(b, e->off), "%s: %s must be a list of numbers like [1, 2.5, \"nan\"]", opn, sn);
        return NULL;
      }
      values = e;
      break;
    case 'I': {
      int64_t xs[IR_MAXRANK];
      int n;
      if (get_ints(b, e, opn, sn, xs, &n) < 0) return NULL;
      if (ix) {
        int list = ir_index_list((ir_opkind)op, sn);
        ix->n[list] = n;
        for (int i = 0; i < n; i++) ix->v[list][i] = xs[i];
      } else if (!strcmp(sn, "shape")) {
        attr.to.rank = n;
        for (int i = 0; i < n; i++) attr.to.d[i] = xs[i];
      } else {
        attr.ndims = n;
        for (int i = 0; i < n; i++) {
          if (xs[i] < -64 || xs[i] > 64) { diag_error(b->d, L(b, e->off), "%s: %s entry %lld is out of range", opn, sn, (long long)xs[i]); return NULL; }
          attr.dims[i] = (int)xs[i];
        }
      }
      break;
    }
    }
  }
  if (op == IR_TRANSPOSE && attr.ndims < 0) attr.ndims = 0;
  if (values && constant_values(b, values, &attr) < 0) return NULL;
  ir_type_literals(b->g, op, args, nargs);
  if (!name) {                 /* a nested call: STATEMENT.OP, made unique */
    strbuf buf;
    sb_init(&buf);
    sb_printf(&buf, "%s.%s", b->stmt_name ? b->stmt_name : "out", opn);
    name = ir_fresh_name(b->g, sb_str(&buf));
    sb_free(&buf);
  }
  if (redefined(b, name, call->off) < 0) return NULL;
  if (b->g->nvals > MAX_VALUES) { diag_error(b->d, L(b, call->off), "the model has more than %d values", MAX_VALUES); return NULL; }
  return ir_op(b->g, b->d, name, (ir_opkind)op, args, nargs, &attr, L(b, call->off));
}

static int eval_value(bctx *b, const cir_expr *e) {
  switch (e->kind) {
  case CIR_NAME: {
    if (!strcmp(e->text, "true") || !strcmp(e->text, "false"))
      return diag_error(b->d, L(b, e->off), "'%s' is not a value here", e->text);
    const char *nm = expand(b, e->text, e->off);
    if (!nm) return -1;
    ir_value *v = ir_lookup(b->g, nm);
    if (!v || v->kind == IR_CONST) {
      if (strcmp(nm, e->text))
        return diag_error(b->d, L(b, e->off), "unknown value '%s' (from '%s'); values must be defined before use", nm, e->text);
      return diag_error(b->d, L(b, e->off), "unknown value '%s'; values must be defined before use", nm);
    }
    return v->id;
  }
  case CIR_NUM:
    return ir_const(b->g, e->num);
  case CIR_CALL: {
    ir_value *v = call_in(b, e, NULL);   /* named after its operands are built */
    return v ? v->id : -1;
  }
  case CIR_STR:
    return diag_error(b->d, L(b, e->off), "a string is not a value here");
  case CIR_LIST:
    return diag_error(b->d, L(b, e->off), "a list is not a value here");
  }
  return -1;
}

/* ---- declarations ---- */

static int decl_type(bctx *b, const cir_stmt *s, ir_value *v) {
  ir_dtype t;
  if (ir_dtype_parse(s->type.dtype, &t) < 0)
    return diag_error(b->d, L(b, s->type.off), "unknown type '%s'; use " IR_DTYPE_LIST, s->type.dtype);
  if (s->type.rank > IR_MAXRANK)
    return diag_error(b->d, L(b, s->type.off), "'%s' has %d dims; at most %d are supported", v->name, s->type.rank, IR_MAXRANK);
  int64_t n = 1;
  for (int i = 0; i < s->type.rank; i++) {
    int64_t x = s->type.dims[i];
    uint32_t off = s->type.dim_off ? s->type.dim_off[i] : s->type.off;
    if (x < 0) return diag_error(b->d, L(b, off), "dimension must be non-negative");
    if (x == 0 &&  /* StableHLO programs have empty tensors, and import -o writes them: kept, with a word */
        diag_warning(b->d, L(b, off), "dimension %d of '%s' is empty (size 0), so '%s' holds no elements; give it a size of at "
                     "least 1 unless it is meant to be empty", i, v->name, v->name) < 0)
      return -1;
    if (__builtin_mul_overflow(n, x, &n) || n >= ((int64_t)1 << 62))
      return diag_error(b->d, L(b, off), "'%s' would have more than 2^62 elements", v->name);
    v->shape.d[i] = x;
  }
  v->shape.rank = s->type.rank;
  v->dtype = t;
  return 0;
}

static int decl_init(bctx *b, const cir_stmt *s, ir_value *v) {
  v->init = (ir_init){INIT_NORMAL, 0.02, 0};
  const cir_expr *e = s->init;
  if (!e) return 0;
  const char *what = e->text;
  if (e->kind == CIR_NAME && !strcmp(what, "zeros")) { v->init.kind = INIT_ZEROS; return 0; }
  if (e->kind == CIR_NAME && !strcmp(what, "ones")) { v->init.kind = INIT_ONES; return 0; }
  if (e->kind == CIR_CALL && e->nattrs == 0 && (!strcmp(what, "normal") && e->nargs == 1)) {
    if (e->args[0]->kind != CIR_NUM || !(e->args[0]->num >= 0))
      return diag_error(b->d, L(b, e->args[0]->off), "normal(std): std must be a non-negative number");
    v->init.a = e->args[0]->num;
    return 0;
  }
  if (e->kind == CIR_CALL && e->nattrs == 0 && !strcmp(what, "uniform") && e->nargs == 2) {
    if (e->args[0]->kind != CIR_NUM || e->args[1]->kind != CIR_NUM || !(e->args[0]->num < e->args[1]->num))
      return diag_error(b->d, L(b, e->off), "uniform(lo, hi): lo and hi must be numbers with lo < hi");
    v->init = (ir_init){INIT_UNIFORM, e->args[0]->num, e->args[1]->num};
    return 0;
  }
  return diag_error(b->d, L(b, e->off), "unknown initializer; use normal(std), zeros, ones or uniform(lo, hi)");
}

static int stmts(bctx *b, cir_stmt *const *ss, int n);

/* Values a call makes: itself and its nested calls. */
static int64_t calls_in(const cir_expr *e) {
  if (!e || e->kind != CIR_CALL) return 0;
  int64_t n = 1;
  for (int i = 0; i < e->nargs; i++) n += calls_in(e->args[i]);
  return n;
}

/* Values statement s makes once expanded, saturating at limit: nested
** repeats multiply, and are refused by their product before any expands. */
static int64_t values_of(const cir_stmt *s, int64_t limit) {
  switch (s->kind) {
  case CIR_INPUT: case CIR_PARAM: return 1;
  case CIR_ASSIGN: return calls_in(s->value) + 1;
  case CIR_RETURN: return 0;
  case CIR_REPEAT: {
    int64_t body = 1;          /* each pass counts, values or none: empty nested blocks are work too */
    for (int i = 0; i < s->nbody && body <= limit; i++) body += values_of(s->body[i], limit);
    int64_t times = s->hi > s->lo ? s->hi - s->lo : 0;
    if (times && body > limit / times) return limit + 1;
    return times * body;
  }
  }
  return 0;
}

static int stmt(bctx *b, const cir_stmt *s) {
  if (b->g->nvals > MAX_VALUES)     /* nested repeats multiply: stop long before memory runs out */
    return diag_error(b->d, L(b, s->off), "the model has more than %d values; is a repeat range too large?", MAX_VALUES);
  switch (s->kind) {
  case CIR_INPUT: case CIR_PARAM: {
    const char *nm = expand(b, s->name, s->name_off);
    if (!nm || redefined(b, nm, s->name_off) < 0) return -1;
    ir_value *v = ir_add(b->g, nm, s->kind == CIR_INPUT ? IR_INPUT : IR_PARAM, IR_LEAF, NULL, 0, NULL, L(b, s->name_off));
    if (decl_type(b, s, v) < 0) return -1;
    if (s->kind == CIR_INPUT) {
      if (s->init) return diag_error(b->d, L(b, s->init->off), "inputs take no initializer; their data comes with --data");
      return 0;
    }
    if (!ir_dtype_isfloat(v->dtype))
      return diag_error(b->d, L(b, s->name_off), "param '%s' is %s; parameters are trained and must be float", nm, ir_dtype_name(v->dtype));
    return decl_init(b, s, v);
  }
  case CIR_ASSIGN: {
    const char *nm = expand(b, s->name, s->name_off);
    if (!nm) return -1;
    if (s->value->kind != CIR_CALL)
      return diag_error(b->d, L(b, s->value->off), "the right side of '%s = ...' must be an op call like add(a, b)", nm);
    if (redefined(b, nm, s->name_off) < 0) return -1;
    b->stmt_name = nm;
    ir_value *v = call_in(b, s->value, nm);
    b->stmt_name = NULL;
    return v ? 0 : -1;
  }
  case CIR_RETURN:
    if (b->nenv) return diag_error(b->d, L(b, s->off), "return inside a repeat block; return once, after it");
    if (b->nreturns++) return diag_error(b->d, L(b, s->off), "a second return; a model returns once");
    for (int i = 0; i < s->nrets; i++) {
      const cir_expr *e = s->rets[i];
      if (e->kind != CIR_NAME && e->kind != CIR_CALL)
        return diag_error(b->d, L(b, e->off), "return takes value names");
      int id = eval_value(b, e);
      if (id < 0) return -1;
      if (b->g->vals[id]->is_output) return diag_error(b->d, L(b, e->off), "'%s' is returned twice", b->g->vals[id]->name);
      ir_add_output(b->g, id);
    }
    return 0;
  case CIR_REPEAT: {
    if (b->nenv == MAX_REPEAT_DEPTH) return diag_error(b->d, L(b, s->off), "repeat blocks nest deeper than %d", MAX_REPEAT_DEPTH);
    for (int k = 0; k < b->nenv; k++)
      if (!strcmp(b->env[k].var, s->name)) return diag_error(b->d, L(b, s->name_off), "index '%s' is already used by an enclosing repeat", s->name);
    if (s->hi < s->lo) return diag_error(b->d, L(b, s->off), "repeat range %lld..%lld is backwards", (long long)s->lo, (long long)s->hi);
    if (s->hi - s->lo > 100000) return diag_error(b->d, L(b, s->off), "repeat range of %lld is too long (at most 100000)", (long long)(s->hi - s->lo));
    if (!b->nenv) {             /* the outermost repeat: its product, before anything expands */
      int64_t n = values_of(s, MAX_VALUES);
      if (n > MAX_VALUES)
        return diag_error(b->d, L(b, s->off), "these repeat blocks would make more than %d values or passes (their ranges multiply); "
                          "make the ranges smaller", MAX_VALUES);
    }
    b->env[b->nenv].var = s->name;
    b->nenv++;
    for (int64_t i = s->lo; i < s->hi; i++) {
      b->env[b->nenv - 1].val = i;
      if (stmts(b, s->body, s->nbody) < 0) { b->nenv--; return -1; }
    }
    b->nenv--;
    return 0;
  }
  }
  return -1;
}

static int stmts(bctx *b, cir_stmt *const *ss, int n) {
  for (int i = 0; i < n; i++)
    if (stmt(b, ss[i]) < 0) return -1;
  return 0;
}

ir_graph *build_model(const cir_file *f, const char *model, diag *d) {
  if (f->version > CIR_LANG_VERSION) {
    diag_error(d, (loc){f->src, f->version_off}, "this file is model language version %d; this carve reads versions up to %d (upgrade carve)",
               f->version, CIR_LANG_VERSION);
    return NULL;
  }
  const cir_model *m = NULL;
  if (model) {
    for (int i = 0; i < f->nmodels; i++)
      if (!strcmp(f->models[i]->name, model)) m = f->models[i];
    if (!m) {
      strbuf list;
      sb_init(&list);
      for (int i = 0; i < f->nmodels; i++) sb_printf(&list, "%s%s", i ? ", " : "", f->models[i]->name);
      diag_error(d, LOC_NONE, "%s has no model '%s' (it has: %s)", f->src->name, model, sb_str(&list));
      sb_free(&list);
      return NULL;
    }
  } else if (f->nmodels == 1) {
    m = f->models[0];
  } else if (f->nmodels == 0) {
    diag_error(d, (loc){f->src, 0}, "no model in this file; write 'model NAME { ... }'");
    return NULL;
  } else {
    strbuf list;
    sb_init(&list);
    for (int i = 0; i < f->nmodels; i++) sb_printf(&list, "%s%s", i ? ", " : "", f->models[i]->name);
    diag_error(d, LOC_NONE, "%s has %d models (%s); pick one with --model NAME", f->src->name, f->nmodels, sb_str(&list));
    sb_free(&list);
    return NULL;
  }
  for (int i = 0; i < f->nmodels; i++)
    for (int j = 0; j < i; j++)
      if (!strcmp(f->models[i]->name, f->models[j]->name)) {
        diag_error(d, (loc){f->src, f->models[i]->off}, "a second model named '%s'", f->models[i]->name);
        return NULL;
      }
  ir_graph *g = ir_graph_new(f->src, m->name);
  bctx b = {.g = g, .d = d, .src = f->src};
  if (stmts(&b, m->stmts, m->nstmts) < 0) { ir_graph_free(g); return NULL; }
  if (!b.nreturns) {
    diag_error(d, (loc){f->src, m->off}, "model '%s' has no return; say which value it computes (return loss)", m->name);
    ir_graph_free(g);
    return NULL;
  }
  ir_carry_new_values(g);     /* a model that is a training step of its own (carve import of one) */
  ir_link(g);
  return g;
}

ir_value *build_call(ir_graph *g, diag *d, const cir_expr *call, const char *name) {
  bctx b = {.g = g, .d = d, .src = g->src};
  return call_in(&b, call, name);
}
