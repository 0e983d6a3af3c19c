/*
** optim.c: the optimizer update written as IR after the gradients, as
** torch.optim does it: SGD with momentum and weight decay; Adam with bias
** correction from a step counter; AdamW, Adam whose weight decay scales
** the parameter by 1 - lr wd before the step instead of adding to the
** gradient. Each parameter P gets new.P (and its
** state new.adam.m.P, ...), which carries into P for the next step.
*/
#include "interp/train/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct octx { ir_graph *g; diag *d; int failed; } octx;

static int emit(octx *c, const char *name, ir_opkind op, const int *args, int nargs) {
  if (c->failed) return -1;
  int v = ir_emit(c->g, c->d, name, op, args, nargs, NULL);
  if (v < 0) c->failed = 1;
  return v;
}

static int emit1(octx *c, const char *name, ir_opkind op, int x) { return emit(c, name, op, &x, 1); }

/* x converted as at says, made once for each name */
static int typed(octx *c, const char *name, int x, const ir_attrs *at) {
  if (c->failed) return -1;
  const ir_value *have = ir_lookup(c->g, name);
  if (have) return have->id;
  int v = ir_emit(c->g, c->d, name, IR_CONVERT, &x, 1, at);
  if (v < 0) c->failed = 1;
  return v;
}
static int emit2(octx *c, const char *name, ir_opkind op, int x, int y) {
  int a[2] = {x, y};
  return emit(c, name, op, a, 2);
}

/* optimizer state of shape s and type t (the parameter's: an f64
** parameter keeps f64 moments) */
static int state_leaf(ir_graph *g, const char *name, const ir_shape *s, ir_dtype t) {
  ir_value *v = ir_add(g, name, IR_STATE, IR_LEAF, NULL, 0, NULL, LOC_NONE);
  if (!v) return -1;
  v->shape = *s;
  v->dtype = t;
  v->init = (ir_init){INIT_ZEROS, 0, 0};
  return v->id;
}

#define NM(...) arena_printf(&g->mem, __VA_ARGS__)

/* Loss scaling: each parameter's gradient, computed from a backward that
** started at scale, divided by it where it is made (grad.P now names the
** quotient, grad.P.scaled what the backward made), in the gradient's type
** (f32: the master weights'), exactly; a dynamic scale's inverse is the
** value inv (f32), else -1. */
static int unscale(octx *c, double scale, int inv) {
  ir_graph *g = c->g;
  int n = g->nvals;
  for (int i = 0; i < n; i++) {
    ir_value *v = g->vals[i];
    if (v->role != ROLE_GRAD) continue;
    const char *name = v->name;
    if (ir_rename(g, v, NM("%s.scaled", name)) < 0) return diag_error(c->d, v->at, "internal error: renaming '%s'", name);
    v->role = ROLE_VALUE;
    int by = ir_const_typed(g, 1.0 / scale, v->dtype);
    if (inv >= 0) {
      ir_attrs at = {0};
      at.dtype = v->dtype;
      by = v->dtype == IR_F32 ? inv : typed(c, NM("scaler.inverse.%s", ir_dtype_name(v->dtype)), inv, &at);
    }
    int q = emit2(c, name, IR_MUL, v->id, by);
    if (q < 0) return -1;
    g->vals[q]->role = ROLE_GRAD;
  }
  return 0;
}

/* A dynamic loss scale (torch's GradScaler): the step's updates are kept
** only where every gradient is finite (their sum times zero is not NaN);
** else every parameter and state keeps its value and the scale halves.
** After LOSS_SCALE_GROWTH good steps in a row it doubles. The scale is
** state: scaler.scale (relative to where it starts, a power of two) and
** scaler.good, the good steps since it last changed. */
static int dynamic_scale(octx *c, int n0, const int *params, int nparams, int rel, int good) {
  ir_graph *g = c->g;
  int chk = -1;
  for (int k = 0; k < nparams && !c->failed; k++) {
    const ir_value *p = g->vals[params[k]];
    int gr = ir_lookup(g, NM("grad.%s", p->name))->id;
    int z = emit2(c, NM("scaler.%s.zero", p->name), IR_MUL, gr, ir_const_typed(g, 0.0, g->vals[gr]->dtype));
    ir_attrs at = {0};
    at.ndims = g->vals[gr]->shape.rank;
    for (int i = 0; i < at.ndims; i++) at.dims[i] = i;
    int s = c->failed ? -1 : ir_emit(g, c->d, NM("scaler.%s.check", p->name), IR_SUM, &z, 1, &at);
    if (s < 0) { c->failed = 1; break; }
    if (g->vals[s]->dtype != IR_F32) {
      ir_attrs cv = {0};
      cv.dtype = IR_F32;
      s = typed(c, NM("scaler.%s.check.f32", p->name), s, &cv);
    }
    chk = chk < 0 ? s : emit2(c, NM("scaler.check.%d", k), IR_ADD, chk, s);
  }
  if (c->failed || chk < 0) return -1;
  ir_attrs eq = {0};
  eq.spec = ir_intern(g, "eq");
  int ok = ir_emit(g, c->d, "scaler.finite", IR_COMPARE, (int[]){chk, chk}, 2, &eq);
  if (ok < 0) return -1;
  int n = g->nvals, *kept = mem_alloc(sizeof(int) * (size_t)(n - n0 + 1)), nk = 0;
  for (int i = n0; i < n; i++) if (g->vals[i]->carry >= 0) kept[nk++] = i;
  for (int k = 0; k < nk && !c->failed; k++) {
    ir_value *v = g->vals[kept[k]];
    const char *name = v->name;
    int from = v->carry;
    if (ir_rename(g, v, NM("%s.taken", name)) < 0) { c->failed = 1; break; }
    v->carry = -1;
    int sel = emit(c, name, IR_SELECT, (int[]){ok, v->id, from}, 3);
    if (sel >= 0) g->vals[sel]->carry = from;
  }
  free(kept);
  ir_attrs ge = {0};
  ge.spec = ir_intern(g, "ge");
  int g1 = emit2(c, "scaler.good.next", IR_ADD, good, ir_const(g, 1));
  int grow = c->failed ? -1 : ir_emit(g, c->d, "scaler.grow", IR_COMPARE, (int[]){g1, ir_const(g, LOSS_SCALE_GROWTH)}, 2, &ge);
  if (grow < 0) return -1;
  int up = emit(c, "scaler.scale.up", IR_SELECT, (int[]){grow, emit2(c, "scaler.scale.double", IR_MUL, rel, ir_const(g, 2)), rel}, 3);
  int nr = emit(c, "new.scaler.scale", IR_SELECT, (int[]){ok, up, emit2(c, "scaler.scale.half", IR_MUL, rel, ir_const(g, 0.5))}, 3);
  int gk = emit(c, "scaler.good.kept", IR_SELECT, (int[]){grow, ir_const(g, 0), g1}, 3);
  int ng = emit(c, "new.scaler.good", IR_SELECT, (int[]){ok, gk, ir_const(g, 0)}, 3);
  if (c->failed) return -1;
  g->vals[nr]->carry = rel;
  g->vals[ng]->carry = good;
  return 0;
}

int train_build(ir_graph *g, const train_spec *t, diag *d) {
  if (t->precision != IR_F32 && train_precision(g, t->precision, d) < 0) return -1;
  double scale = t->loss_scale > 0 ? t->loss_scale : 1;
  octx c = {g, d, 0};
  ir_shape scalar = {0};
  int rel = -1, good = -1, seed = -1, inv = -1;
  if (t->dynamic) {         /* the scale the backward starts from: scaler.scale (from 1) times where it starts */
    rel = state_leaf(g, "scaler.scale", &scalar, IR_F32);
    good = state_leaf(g, "scaler.good", &scalar, IR_F32);
    if (rel < 0 || good < 0) return -1;
    g->vals[rel]->init = (ir_init){INIT_ONES, 0, 0};
    int sv = emit2(&c, "scaler.value", IR_MUL, rel, ir_const(g, scale));
    inv = emit2(&c, "scaler.inverse", IR_DIV, ir_const(g, 1), sv);
    seed = sv;
    const ir_value *loss = g->nouts ? g->vals[g->outputs[0]] : NULL;
    if (loss && loss->dtype != IR_F32) {
      ir_attrs at = {0};
      at.dtype = loss->dtype;
      seed = typed(&c, NM("scaler.value.%s", ir_dtype_name(loss->dtype)), sv, &at);
    }
    if (c.failed) return -1;
  }
  int nfwd = g->nvals;
  if (grad_build_seeded(g, scale, seed, d) < 0 || remat_build(g, nfwd, t, d) < 0) return -1;
  if ((scale != 1 || t->dynamic) && unscale(&c, scale, inv) < 0) return -1;
  int n0 = g->nvals;
  int loss = g->outputs[0];
  int nparams = 0;
  for (int i = 0; i < n0; i++) nparams += g->vals[i]->kind == IR_PARAM;
  int *params = mem_calloc((size_t)nparams + 1, sizeof(int));
  nparams = 0;
  for (int i = 0; i < n0; i++)
    if (g->vals[i]->kind == IR_PARAM && ir_lookup(g, NM("grad.%s", g->vals[i]->name))) params[nparams++] = i;
  g->nouts = 0;
  g->vals[loss]->is_output = 0;
  ir_add_output(g, loss);
  int step = -1, lr_t = -1, eps_t = -1;
  int lr = ir_const(g, t->lr);
  /* Adam's step scalars are computed in f64 when a parameter is f64 (as
     torch computes them in Python floats), else in f32 */
  ir_dtype sdt = IR_F32;
  for (int k = 0; k < nparams; k++)
    if (g->vals[params[k]]->dtype == IR_F64) sdt = IR_F64;
  int adam = t->kind == TRAIN_ADAM || t->kind == TRAIN_ADAMW, decoupled = t->kind == TRAIN_ADAMW;
  if (adam) {
    /* bias corrections from the step count: 1 - beta^t = 1 - exp(t log beta) */
    int s = state_leaf(g, "adam.step", &scalar, sdt);
    step = emit2(&c, "new.adam.step", IR_ADD, s, ir_const(g, 1));
    g->vals[step]->carry = s;
    int e1 = emit2(&c, "adam.bc1.e", IR_MUL, step, ir_const(g, log(t->beta1)));
    int p1 = emit1(&c, "adam.bc1.p", IR_EXP, e1);
    int bc1 = emit2(&c, "adam.bc1", IR_SUB, ir_const(g, 1), p1);
    int e2 = emit2(&c, "adam.bc2.e", IR_MUL, step, ir_const(g, log(t->beta2)));
    int p2 = emit1(&c, "adam.bc2.p", IR_EXP, e2);
    int bc2 = emit2(&c, "adam.bc2", IR_SUB, ir_const(g, 1), p2);
    int bc2s = emit1(&c, "adam.bc2.sqrt", IR_SQRT, bc2);
    /* the step's scalars (the Adam paper's "more efficient" order, section 2):
       lr_t = lr sqrt(bc2) / bc1 and eps_t = eps sqrt(bc2), so that each element
       divides once and no product is added to (a CPU may fuse those, and the
       one-instruction update must round as these values do) */
    lr_t = emit2(&c, "adam.lr_t", IR_MUL, emit2(&c, "adam.lr_bc1", IR_DIV, lr, bc1), bc2s);
    eps_t = emit2(&c, "adam.eps_t", IR_MUL, bc2s, ir_const(g, t->eps));
  }
  for (int k = 0; k < nparams && !c.failed; k++) {
    ir_value *p = g->vals[params[k]];
    const char *pn = p->name;
    int gr = ir_lookup(g, NM("grad.%s", pn))->id, nw;
    if (t->weight_decay > 0 && !decoupled)
      gr = emit2(&c, NM("wd.%s", pn), IR_ADD, gr, emit2(&c, NM("wd.%s.m", pn), IR_MUL, p->id, ir_const(g, t->weight_decay)));
    if (t->kind == TRAIN_SGD) {
      int upd = gr;
      if (t->momentum > 0) {
        int buf = state_leaf(g, NM("sgd.buf.%s", pn), &p->shape, p->dtype);
        int m = emit2(&c, NM("sgd.buf.%s.m", pn), IR_MUL, buf, ir_const(g, t->momentum));
        upd = emit2(&c, NM("new.sgd.buf.%s", pn), IR_ADD, m, gr);
        if (!c.failed) g->vals[upd]->carry = buf;
      }
      int sc = emit2(&c, NM("sgd.%s.step", pn), IR_MUL, upd, lr);
      nw = emit2(&c, NM("new.%s", pn), IR_SUB, p->id, sc);
    } else {
      int m = state_leaf(g, NM("adam.m.%s", pn), &p->shape, p->dtype);
      int v = state_leaf(g, NM("adam.v.%s", pn), &p->shape, p->dtype);
      int lr_p = lr_t, eps_p = eps_t;      /* the step's scalars in the parameter's type */
      if (p->dtype != sdt) {
        ir_attrs at = {0};
        at.dtype = p->dtype;
        lr_p = typed(&c, NM("adam.lr_t.%s", ir_dtype_name(p->dtype)), lr_t, &at);
        eps_p = typed(&c, NM("adam.eps_t.%s", ir_dtype_name(p->dtype)), eps_t, &at);
      }
      int m1 = emit2(&c, NM("adam.m.%s.a", pn), IR_MUL, m, ir_const(g, t->beta1));
      int m2 = emit2(&c, NM("adam.m.%s.b", pn), IR_MUL, gr, ir_const(g, 1 - t->beta1));
      int mn = emit2(&c, NM("new.adam.m.%s", pn), IR_ADD, m1, m2);
      int g2 = emit2(&c, NM("adam.v.%s.g2", pn), IR_MUL, gr, gr);
      int v1 = emit2(&c, NM("adam.v.%s.a", pn), IR_MUL, v, ir_const(g, t->beta2));
      int v2 = emit2(&c, NM("adam.v.%s.b", pn), IR_MUL, g2, ir_const(g, 1 - t->beta2));
      int vn = emit2(&c, NM("new.adam.v.%s", pn), IR_ADD, v1, v2);
      /* torch: p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps), here
         p -= m lr_t / (sqrt(v) + eps_t): the same in exact arithmetic */
      int sq = emit1(&c, NM("adam.%s.sqrt", pn), IR_SQRT, vn);
      int de = emit2(&c, NM("adam.%s.denom", pn), IR_ADD, sq, eps_p);
      int nu = emit2(&c, NM("adam.%s.num", pn), IR_MUL, mn, lr_p);
      int st = emit2(&c, NM("adam.%s.step", pn), IR_DIV, nu, de);
      int from = p->id;
      if (decoupled && t->weight_decay > 0)   /* torch.optim.AdamW: p *= 1 - lr wd, then the step */
        from = emit2(&c, NM("adamw.%s.decayed", pn), IR_MUL, p->id, ir_const(g, 1 - t->lr * t->weight_decay));
      nw = emit2(&c, NM("new.%s", pn), IR_SUB, from, st);
      if (!c.failed) {
        g->vals[mn]->carry = m;
        g->vals[vn]->carry = v;
      }
    }
    if (c.failed) break;
    g->vals[nw]->carry = p->id;
  }
  if (!c.failed && t->dynamic && dynamic_scale(&c, n0, params, nparams, rel, good) < 0) c.failed = 1;
  if (!c.failed) {
    for (int i = n0; i < g->nvals; i++) g->vals[i]->update = 1;
    for (int k = 0; k < nparams; k++) ir_add_output(g, ir_lookup(g, NM("new.%s", g->vals[params[k]]->name))->id);
    for (int i = n0; i < g->nvals; i++)
      if (g->vals[i]->carry >= 0 && g->vals[g->vals[i]->carry]->kind == IR_STATE) ir_add_output(g, i);
  }
  free(params);
  g->train = t->kind;
  if (c.failed) return -1;
  ir_link(g);
  return 0;
}
