/*
** options.c: --train, read by the tactic language's value rule
** (lang/tac_parse.c, tac_parse_option) so that every mistake is located
** with a caret like any other error. The defaults are torch.optim's.
*/
#include "interp/train/train.h"
#include "lang/tac.h"

#include <math.h>
#include <string.h>

typedef struct optim_info {
  const char *name;
  train_kind kind;
  const char *args;        /* what it takes, for messages */
  const char *example;
} optim_info;

static const optim_info optims[] = {
  {"sgd", TRAIN_SGD, "lr, momentum, weight_decay, remat, precision, loss_scale", "sgd(lr = 0.01, momentum = 0.9)"},
  {"adam", TRAIN_ADAM, "lr, beta1, beta2, eps, weight_decay, remat, precision, loss_scale", "adam(lr = 1e-3)"},
  {"adamw", TRAIN_ADAMW, "lr, beta1, beta2, eps, weight_decay, remat, precision, loss_scale", "adamw(lr = 3e-4, weight_decay = 0.1)"},
};

static double *slot(train_spec *t, const char *key) {
  if (!strcmp(key, "lr")) return &t->lr;
  if (!strcmp(key, "weight_decay")) return &t->weight_decay;
  if (!strcmp(key, "loss_scale")) return &t->loss_scale;
  if (t->kind == TRAIN_SGD && !strcmp(key, "momentum")) return &t->momentum;
  int adam = t->kind == TRAIN_ADAM || t->kind == TRAIN_ADAMW;
  if (adam && !strcmp(key, "beta1")) return &t->beta1;
  if (adam && !strcmp(key, "beta2")) return &t->beta2;
  if (adam && !strcmp(key, "eps")) return &t->eps;
  return NULL;
}

/* What the value of key must satisfy, or NULL when x is fine. */
static const char *out_of_range(const char *key, double x) {
  if (!strcmp(key, "lr") || !strcmp(key, "eps")) return x > 0 ? NULL : "must be positive";
  if (!strcmp(key, "weight_decay")) return x >= 0 ? NULL : "must not be negative";
  if (!strcmp(key, "loss_scale")) {             /* a power of two, so that dividing by it is exact */
    int e;
    return x >= 1 && x <= 16777216 && frexp(x, &e) == 0.5 ? NULL : "must be a power of two from 1 to 2^24 (dividing by it is then exact)";
  }
  return x >= 0 && x < 1 ? NULL : "must be in [0, 1)";   /* momentum, betas */
}

/* remat = none | cheap | full, or a string of globs: cheap's values and
** the forward values they name (remat.c) */
static int remat_policy(train_spec *t, const optim_info *o, const diag_src *src, const tac_arg *x, diag *d) {
  static const char *const pol[] = {"none", "cheap", "full"};
  loc at = {src, x->val.off};
  if (x->val.kind == TAC_VNAME || x->val.kind == TAC_VSTR)
    for (int j = 0; j < 3; j++)
      if (!strcmp(x->val.text, pol[j])) { t->remat = (train_remat)j; return 0; }
  if (x->val.kind != TAC_VSTR)
    return diag_error(d, at, "remat is none, cheap, full or a string of value globs, as in %s(lr = 1e-3, remat = cheap) "
                      "or remat = \"l*.h.matmul\"", o->name);
  if (strspn(x->val.text, ", \t") == strlen(x->val.text))
    return diag_error(d, at, "remat names no value: give globs of forward values to recompute, as in remat = \"l*.h.matmul\"");
  t->remat = REMAT_NAMED;
  t->remat_names = x->val.text;
  t->remat_at = at;
  return 0;
}

int train_parse(arena *a, const char *text, train_spec *t, diag *d) {
  memset(t, 0, sizeof *t);
  const diag_src *src = diag_src_string(a, "--train", text, strlen(text));
  tac_file *f = tac_parse_option(a, d, src, TAC_OPT_CALL);
  if (!f) return -1;
  const tac_decl *c = &f->decls[0];
  const optim_info *o = NULL;
  for (size_t i = 0; i < sizeof optims / sizeof optims[0]; i++) if (!strcmp(optims[i].name, c->name)) o = &optims[i];
  if (!o)
    return diag_error(d, (loc){src, c->name_off}, "unknown optimizer '%s'; use %s, %s or %s", c->name, optims[0].example,
                      optims[1].example, optims[2].example);
  t->kind = o->kind;
  t->lr = 1e-3;
  t->beta1 = 0.9; t->beta2 = 0.999; t->eps = 1e-8;
  t->precision = IR_F32;
  if (t->kind == TRAIN_ADAMW) t->weight_decay = 0.01;     /* torch.optim.AdamW's */
  for (int i = 0; i < c->nargs; i++) {
    const tac_arg *x = &c->args[i];
    if (!strcmp(x->key, "remat")) {
      if (remat_policy(t, o, src, x, d) < 0) return -1;
      continue;
    }
    if (!strcmp(x->key, "precision")) {
      int ok = (x->val.kind == TAC_VNAME || x->val.kind == TAC_VSTR) && ir_dtype_parse(x->val.text, &t->precision) == 0 &&
               (t->precision == IR_F32 || t->precision == IR_BF16 || t->precision == IR_F16);
      if (!ok)
        return diag_error(d, (loc){src, x->val.off}, "precision is f32, bf16 or f16 (the forward computes in bf16 or f16, the "
                          "parameters, gradients and optimizer state stay f32; f16 scales the loss, loss_scale = 1024 by "
                          "default), as in %s(lr = 1e-3, precision = bf16)", o->name);
      continue;
    }
    if (!strcmp(x->key, "loss_scale") && (x->val.kind == TAC_VNAME || x->val.kind == TAC_VSTR)) {
      if (strcmp(x->val.text, "dynamic"))
        return diag_error(d, (loc){src, x->val.off}, "loss_scale is a power of two or dynamic, as in %s(lr = 1e-3, precision = f16, "
                          "loss_scale = dynamic)", o->name);
      t->dynamic = 1;
      continue;
    }
    double *s = slot(t, x->key);
    if (!s) return diag_error(d, (loc){src, x->off}, "%s has no argument %s (%s)", o->name, x->key, o->args);
    if (x->val.kind != TAC_VINT && x->val.kind != TAC_VNUM)
      return diag_error(d, (loc){src, x->val.off}, "%s takes a number, as in %s", x->key, o->example);
    const char *bad = !isfinite(x->val.num) ? "must be finite" : out_of_range(x->key, x->val.num);
    if (bad) return diag_error(d, (loc){src, x->val.off}, "%s %s", x->key, bad);
    *s = x->val.num;
  }
  /* a dynamic scale starts as high as the backward's first gradient allows
     (torch's GradScaler starts at 2^16; f16 ends at 65504) */
  if (t->dynamic) t->loss_scale = t->precision == IR_F16 ? 32768 : 65536;
  if (!t->loss_scale) t->loss_scale = t->precision == IR_F16 ? 1024 : 1;
  for (int i = 0; i < c->nargs; i++)       /* the backward's first gradient is the scale, an f16 number there */
    if (!strcmp(c->args[i].key, "loss_scale") && t->precision == IR_F16 && t->loss_scale > 32768)
      return diag_error(d, (loc){src, c->args[i].val.off}, "loss_scale is at most 32768 (2^15) with precision = f16: the "
                        "loss's own gradient is the scale, and f16 ends at 65504");
  return 0;
}
