/*
** update.c: optimizer updates as one instruction per parameter. optim.c
** writes Adam and SGD as IR, a dozen elementwise values per parameter;
** here each parameter's update is recognised by its shape in the graph and
** lowered to one RT_ADAM or RT_SGD that reads p, g and the state once and
** writes the state in place. What does not match exactly (another layout,
** a partial sum, a value read elsewhere) is lowered value by value as before.
*/
#include "interp/lower/lower_int.h"

#include <math.h>
#include <stdlib.h>

/* what one match collects: the update's values and constants */
typedef struct umatch {
  lw_update u;
  int inner[24];    /* the values folded into the update (never computed alone) */
  int ninner;
} umatch;

static int is_op(lctx *c, int id, ir_opkind op) {
  const ir_value *v = V(c, id);
  return v->kind == IR_OP && v->op == op && v->dtype == IR_F32 && !c->isconst[id];
}

/* id = op(x, literal) or op(literal, x): x, with the literal in *k; else -1 */
static int with_lit(lctx *c, int id, ir_opkind op, double *k) {
  if (!is_op(c, id, op)) return -1;
  const ir_value *v = V(c, id);
  int a = v->args[0], b = v->args[1];
  if (c->isconst[b] && !c->isconst[a]) { *k = c->cval[b]; return a; }
  if (c->isconst[a] && !c->isconst[b] && op != IR_DIV) { *k = c->cval[a]; return b; }
  return -1;
}

/* id = op(a, b) of two computed values */
static int pair(lctx *c, int id, ir_opkind op, int *a, int *b) {
  if (!is_op(c, id, op)) return 0;
  const ir_value *v = V(c, id);
  *a = v->args[0];
  *b = v->args[1];
  return !c->isconst[*a] && !c->isconst[*b];
}

static int add_inner(umatch *m, int id) {
  if (id < 0 || m->ninner == (int)(sizeof m->inner / sizeof m->inner[0])) return -1;
  m->inner[m->ninner++] = id;
  return id;
}

/* float literals as the unfused instructions hold them; 1 - b of a b
** rounded to f32 (an imported program's literals are) lies up to two f32
** ulps of 1 from the program's own (1 - b), which the fused update then
** uses as it is */
static int same_f32(double a, double b) { return (float)a == (float)b || fabs(a - b) <= 0x1p-22; }

static int is_scalar(lctx *c, int id) { return ir_nelem(&V(c, id)->shape) == 1 && V(c, id)->dtype == IR_F32; }

/* Under a dynamic loss scale each new value is select(ok, taken, old)
** (optim.c): the update's value taken where every gradient is finite.
** The select whose taken value is x and which carries old into the next
** step, or -1. */
static int kept_select(lctx *c, int x, int old, int ok) {
  const ir_value *v = V(c, x);
  for (int k = 0; k < v->nusers; k++) {
    const ir_value *u = V(c, v->users[k]);
    if (u->kind == IR_OP && u->op == IR_SELECT && u->args[0] == ok && u->args[1] == x && u->args[2] == old && u->carry == old)
      return u->id;
  }
  return -1;
}

/* a state leaf of p's shape, replaced by `next` after the step (under a
** dynamic loss scale, by the select of next: *next becomes it, folded
** into the update as next is) */
static int state_of(lctx *c, int leaf, int *next, int p, umatch *m) {
  const ir_value *s = V(c, leaf);
  if (s->kind != IR_STATE || s->dtype != IR_F32 || !ir_shape_eq(&s->shape, &V(c, p)->shape)) return 0;
  if (m->u.ok < 0) return V(c, *next)->carry == leaf;
  int sel = kept_select(c, *next, leaf, m->u.ok);
  if (sel < 0 || add_inner(m, sel) < 0) return 0;
  *next = sel;
  return 1;
}

/* gr = g, or g + p * wd (weight decay): sets the gradient and wd */
static void decayed(lctx *c, int gr, umatch *m) {
  int a, b, x;
  double k;
  m->u.grad = gr;
  m->u.wd = 0;
  if (!pair(c, gr, IR_ADD, &a, &b) || (x = with_lit(c, b, IR_MUL, &k)) != m->u.param) return;
  m->u.grad = a;
  m->u.wd = k;
  add_inner(m, gr);
  add_inner(m, b);
}

/* lr and eps for the instruction's listing: lr_t = mul(div(lr, bc1), bc2s),
** eps_t = mul(bc2s, eps) */
static void shown_hyper(lctx *c, umatch *m) {
  int a, b;
  if (pair(c, m->u.lr_t, IR_MUL, &a, &b) && is_op(c, a, IR_DIV) && c->isconst[V(c, a)->args[0]]) m->u.lr = c->cval[V(c, a)->args[0]];
  with_lit(c, m->u.eps_t, IR_MUL, &m->u.eps);
}

/* new.p = p - m' lr_t / (sqrt(v') + eps_t), m' = b1 m + (1 - b1) gr,
** v' = b2 v + (1 - b2) gr^2, lr_t and eps_t scalars (optim.c's Adam);
** AdamW's p * (1 - lr wd) in place of p */
static int match_adam(lctx *c, int head, umatch *m) {
  int p, st, nu, mn, de, sq, m1, m2, v1, v2, g2, x, y, gr, kept = -1;
  double c1, c2;
  if (!pair(c, head, IR_SUB, &p, &st) || !pair(c, st, IR_DIV, &nu, &de)) return 0;
  if ((x = with_lit(c, p, IR_MUL, &m->u.keep)) >= 0 && V(c, x)->kind == IR_PARAM && m->u.keep != 0) kept = p, p = x;
  else m->u.keep = 0;
  if (!pair(c, nu, IR_MUL, &mn, &m->u.lr_t) || !is_scalar(c, m->u.lr_t)) return 0;
  if (!pair(c, de, IR_ADD, &sq, &m->u.eps_t) || !is_scalar(c, m->u.eps_t)) return 0;
  shown_hyper(c, m);
  if (!is_op(c, sq, IR_SQRT) || !pair(c, mn, IR_ADD, &m1, &m2) || !pair(c, V(c, sq)->args[0], IR_ADD, &v1, &v2)) return 0;
  if ((m->u.m = with_lit(c, m1, IR_MUL, &m->u.b1)) < 0 || (gr = with_lit(c, m2, IR_MUL, &c1)) < 0) return 0;
  if ((m->u.v = with_lit(c, v1, IR_MUL, &m->u.b2)) < 0 || (g2 = with_lit(c, v2, IR_MUL, &c2)) < 0) return 0;
  if (!pair(c, g2, IR_MUL, &x, &y) || x != gr || y != gr || !same_f32(c1, 1 - m->u.b1) || !same_f32(c2, 1 - m->u.b2)) return 0;
  m->u.kind = RT_ADAM;
  m->u.c1 = c1;
  m->u.c2 = c2;
  m->u.param = p;
  m->u.newm = mn;
  m->u.newv = V(c, sq)->args[0];
  int in[] = {st, nu, de, sq, m1, m2, v1, v2, g2, mn, m->u.newv};
  if (!state_of(c, m->u.m, &m->u.newm, p, m) || !state_of(c, m->u.v, &m->u.newv, p, m)) return 0;
  for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) add_inner(m, in[i]);
  if (kept >= 0) {                      /* AdamW: no decay in the gradient too (one kernel does one) */
    add_inner(m, kept);
    m->u.grad = gr;
    m->u.wd = 0;
  } else {
    decayed(c, gr, m);
  }
  return 1;
}

/* new.p = p - lr * u, u = gr or (momentum) u = buf * mu + gr carried into buf */
static int match_sgd(lctx *c, int head, umatch *m) {
  int p, sc, upd, mm, gr;
  if (!pair(c, head, IR_SUB, &p, &sc) || (upd = with_lit(c, sc, IR_MUL, &m->u.lr)) < 0) return 0;
  m->u.kind = RT_SGD;
  m->u.param = p;
  m->u.m = m->u.newm = -1;
  m->u.mom = 0;
  add_inner(m, sc);
  /* a momentum buffer: upd = buf mu + gr, carried into buf (under a
     dynamic loss scale, through its select) */
  int buf = -1;
  if (pair(c, upd, IR_ADD, &mm, &gr) && (buf = with_lit(c, mm, IR_MUL, &m->u.mom)) >= 0 &&
      (V(c, upd)->carry == buf || (m->u.ok >= 0 && kept_select(c, upd, buf, m->u.ok) >= 0))) {
    int next = upd;
    m->u.m = buf;
    if (!state_of(c, m->u.m, &next, p, m)) return 0;
    m->u.newm = next;
    add_inner(m, upd);
    add_inner(m, mm);
  } else {
    if (V(c, upd)->carry >= 0) return 0;    /* carried, but not as a momentum buffer */
    gr = upd;
    m->u.mom = 0;
  }
  decayed(c, gr, m);
  return 1;
}

static int in_group(const umatch *m, int head, int id) {
  if (id == head) return 1;
  for (int i = 0; i < m->ninner; i++) if (m->inner[i] == id) return 1;
  return 0;
}

/* Everything folded is read only inside the update, has one layout (the
** head's, which the state shares) and no pending partial sum. */
static int fusable(lctx *c, int head, const umatch *m) {
  const ir_value *p = V(c, m->u.param), *g = V(c, m->u.grad);
  if (m->ninner == (int)(sizeof m->inner / sizeof m->inner[0]) || p->kind != IR_PARAM || p->dtype != IR_F32 ||
      V(c, head)->carry != m->u.param || g->dtype != IR_F32 || !ir_shape_eq(&g->shape, &p->shape) || c->src[m->u.grad] != m->u.grad)
    return 0;
  for (int i = 0; i < m->ninner; i++) {
    const ir_value *x = V(c, m->inner[i]);
    if (!ir_shape_eq(&x->shape, &p->shape) || c->skip[x->id] || (lw_kept(c, x) && x->id != m->u.newm && x->id != m->u.newv)) return 0;
    for (int k = 0; k < x->nusers; k++) if (!in_group(m, head, x->users[k])) return 0;
  }
  int st[2] = {m->u.m, m->u.kind == RT_ADAM ? m->u.v : -1};
  for (int s = 0; s < 2; s++)
    if (st[s] >= 0) for (int k = 0; k < V(c, st[s])->nusers; k++) if (!in_group(m, head, V(c, st[s])->users[k])) return 0;
  if (!c->plan) return 1;
  const sh_plan *pl = c->plan;
  int r = p->shape.rank;
  sh_oplayout o;
  sh_dim comp[IR_MAXRANK];
  shard_oplayout(pl, head, &o);
  shard_required(pl, &o, V(c, head)->nargs, comp, r);
  if (shard_keeps_partial(pl, m->u.grad) || shard_keeps_partial(pl, m->u.param) || pl->lay[head].partial) return 0;
  for (int s = 0; s < 2; s++) if (st[s] >= 0 && !layout_same(pl->lay[st[s]].dim, comp, r)) return 0;
  for (int i = 0; i < m->ninner; i++) {
    int x = m->inner[i];
    if (!layout_same(pl->lay[x].dim, comp, r) || pl->lay[x].partial || shard_keeps_partial(pl, x)) return 0;
  }
  return 1;
}

void lw_plan_updates(lctx *c) {
  const ir_graph *g = c->g;
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    if (v->kind != IR_OP || v->carry < 0 || g->vals[v->carry]->kind != IR_PARAM) continue;
    /* under a dynamic loss scale the update is what the select takes */
    int ok = -1, taken = i;
    if (v->op == IR_SELECT && v->args[2] == v->carry && V(c, v->args[0])->dtype == IR_I1 && ir_nelem(&V(c, v->args[0])->shape) == 1 &&
        V(c, v->args[0])->shape.rank == 0)
      ok = v->args[0], taken = v->args[1];
    umatch m = {.u.ok = ok}, none = {.u.ok = ok};
    /* either update, whoever wrote it (--train, or an imported step) */
    int found = match_adam(c, taken, &m);
    if (!found) { m = none; found = match_sgd(c, taken, &m); }
    if (found && taken != i && (V(c, taken)->carry >= 0 || add_inner(&m, taken) < 0)) found = 0;
    if (!found || !fusable(c, i, &m)) continue;
    c->ups[c->nups] = m.u;
    c->fuse[i] = c->nups++;
    for (int k = 0; k < m.ninner; k++) c->skip[m.inner[k]] = 1;
  }
}

/* The fused update of head v into `out`; p is operand 0 as lower_value read it. */
void lw_lower_update(lctx *c, const ir_value *v, int out, const sh_dim *comp) {
  const lw_update *u = &c->ups[c->fuse[v->id]];
  ir_shape s;
  int nst = u->kind == RT_ADAM ? 2 : u->m >= 0;
  int st[2] = {u->m, u->v}, sb[2] = {-1, -1};
  for (int k = 0; k < nst; k++) {          /* the state is rewritten where it lies */
    sb[k] = comp ? lw_operand_in(c, st[k], comp, &s) : lw_buf(c, st[k]);
    if (sb[k] != c->buf[st[k]]) { c->failed = 1; return; }
  }
  /* p: operand 0, or for AdamW what operand 0 scales, or under a dynamic
     loss scale (the head a select) the parameter */
  int in0 = u->keep == 0 && u->ok < 0 ? AB(c, 0) : comp ? lw_operand_in(c, u->param, comp, &s) : lw_buf(c, u->param), g = comp ? lw_operand_in(c, u->grad, comp, &s) : lw_buf(c, u->grad);   /* before the update: */
  int adam = u->kind == RT_ADAM, lr_t = adam ? lw_buf(c, u->lr_t) : -1, eps_t = adam ? lw_buf(c, u->eps_t) : -1;   /* they may emit */
  int ok = u->ok >= 0 ? lw_buf(c, u->ok) : -1;
  rt_instr *x = rt_prog_emit(c->p, (rt_op)u->kind, out);
  int in[] = {in0, g, sb[0], sb[1], lr_t, eps_t, ok};  /* the operands past these stay -1 (none) */
  for (size_t k = 0; k < sizeof in / sizeof in[0]; k++) x->in[k] = in[k];
  x->nin = ok >= 0 ? 7 : adam ? 6 : 3;
  x->alpha = (float)u->lr;
  double hy[2][6] = {{u->mom, u->wd, 0, 0, 0, 0}, {u->b1, u->b2, u->eps, u->keep != 0 ? u->keep : u->wd, u->c1, u->c2}};
  for (int k = 0; k < 6; k++) x->hyper[k] = hy[adam][k];
  if (adam && u->keep != 0) x->mode = RT_ADAM_DECOUPLED;
  if (u->newm >= 0) c->buf[u->newm] = sb[0];
  if (adam) c->buf[u->newv] = sb[1];
}

void lower_fused_updates(const ir_graph *g, signed char *folded) {
  int n = g->nvals;
  lctx c = {g, NULL, NULL, NULL};
  c.isconst = mem_calloc((size_t)n + 1, 1);
  c.cval = mem_calloc((size_t)n + 1, sizeof(double));
  c.src = mem_alloc(sizeof(int) * (size_t)(n ? n : 1));
  c.skip = mem_calloc((size_t)n + 1, 1);
  c.fuse = mem_alloc(sizeof(int) * (size_t)(n ? n : 1));
  c.ups = mem_alloc(sizeof(lw_update) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) {
    c.src[i] = i;
    c.fuse[i] = -1;
    if (g->vals[i]->kind == IR_CONST) { c.isconst[i] = 1; c.cval[i] = g->vals[i]->attr.scalar; }
  }
  lw_plan_updates(&c);
  for (int i = 0; i < n; i++) {
    const lw_update *u = c.fuse[i] >= 0 ? &c.ups[c.fuse[i]] : NULL;
    folded[i] = (signed char)(u ? (u->kind == RT_ADAM ? 7 : u->m >= 0 ? 5 : 3) : c.skip[i] ? -1 : 0);
  }
  free(c.isconst);
  free(c.cval);
  free(c.src);
  free(c.skip);
  free(c.fuse);
  free(c.ups);
}
