/*
** export.c: the module around the ops (see export.h): the mesh, @main's
** arguments and results with their shardings and names, the return.
*/
#include "interp/export/export_int.h"

#include <stdio.h>
#include <string.h>

/* a string attribute's text */
static void put_string(strbuf *b, const char *s) {
  sb_putc(b, '"');
  for (const char *p = s; *p; p++) {
    unsigned char ch = (unsigned char)*p;
    if (ch == '"' || ch == '\\' || ch < 32 || ch > 126) sb_printf(b, "\\%02X", ch);
    else sb_putc(b, (char)ch);
  }
  sb_putc(b, '"');
}

/* a symbol as MLIR spells it: bare when it can be, else quoted */
static void put_symbol(strbuf *b, const char *s) {
  int bare = s[0] && ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_');
  for (const char *p = s; bare && *p; p++)
    bare = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '$';
  sb_putc(b, '@');
  if (bare) sb_puts(b, s);
  else put_string(b, s);
}

/* #sdy.sharding<@mesh, [{"batch"}, {}]> of value v */
static void put_sharding(strbuf *b, const sh_plan *p, const ir_value *v) {
  const sh_layout *l = &p->lay[v->id];
  sb_puts(b, "sdy.sharding = #sdy.sharding<@mesh, [");
  for (int d = 0; d < v->shape.rank; d++) {
    sb_puts(b, d ? ", {" : "{");
    for (int j = 0; j < l->dim[d].n; j++) sb_printf(b, "%s\"%s\"", j ? ", " : "", p->mesh.name[l->dim[d].ax[j]]);
    sb_putc(b, '}');
  }
  sb_puts(b, "]>");
}

static const char *kind_name(ir_kind k) { return k == IR_PARAM ? "param" : k == IR_STATE ? "state" : "input"; }

/* the init a parameter or state starts from, as a model file writes it */
static void put_init(strbuf *b, const ir_init *in) {
  switch (in->kind) {
  case INIT_ZEROS: sb_puts(b, "\"zeros\""); break;
  case INIT_ONES: sb_puts(b, "\"ones\""); break;
  case INIT_UNIFORM: { char x[NUM_LEN], y[NUM_LEN]; sb_printf(b, "\"uniform(%s, %s)\"", num_double(x, in->a), num_double(y, in->b)); break; }
  default: { char x[NUM_LEN]; sb_printf(b, "\"normal(%s)\"", num_double(x, in->a)); break; }
  }
}

char *export_program(const ir_graph *g, const sh_plan *p, arena *a, diag *d) { return export_program_opts(g, p, 1, a, d); }

char *export_program_opts(const ir_graph *g, const sh_plan *p, int composites, arena *a, diag *d) {
  if (p && p->pipe.axis >= 0) {
    diag_error(d, p->pipe.at, "export: the plan's pipeline stages (over '%s') have no form in StableHLO with Shardy's shardings, "
               "where every device runs one program on its pieces; export the plan without the pipeline tactic",
               p->mesh.name[p->pipe.axis]);
    return NULL;
  }
  strbuf body, out, funcs;
  sb_init(&body);
  sb_init(&out);
  sb_init(&funcs);
  ex_ctx cc = {.g = g, .d = d, .out = &body, .a = a, .composites = composites, .funcs = &funcs}, *c = &cc;
  c->val = arena_alloc(a, sizeof(ex_val) * (size_t)(g->nvals + 1));
  c->skip = arena_alloc(a, (size_t)g->nvals + 1);
  int64_t devices = 1;
  if (p) for (int i = 0; i < p->mesh.n; i++) devices *= p->mesh.size[i];
  sb_puts(&out, "module ");
  put_symbol(&out, g->name && *g->name ? g->name : "carve");
  sb_printf(&out, " attributes {mhlo.num_partitions = %lld : i32, mhlo.num_replicas = 1 : i32} {\n", (long long)devices);
  if (p && p->mesh.n) {
    sb_puts(&out, "  sdy.mesh @mesh = <[");
    for (int i = 0; i < p->mesh.n; i++) sb_printf(&out, "%s\"%s\"=%lld", i ? ", " : "", p->mesh.name[i], (long long)p->mesh.size[i]);
    sb_puts(&out, "]>\n");
  }
  /* arguments: every leaf that is not a literal, in definition order */
  sb_puts(&out, "  func.func public @main(");
  int nargs = 0;
  for (int i = 0; i < g->nvals; i++) {
    const ir_value *v = g->vals[i];
    if (v->op != IR_LEAF || v->kind == IR_CONST) continue;
    const char *n = arena_printf(a, "%%arg%d", nargs);
    c->val[i] = (ex_val){n, v->dtype, v->shape};
    sb_printf(&out, "%s%s: %s {", nargs++ ? ", " : "", n, ex_type(c, v->dtype, &v->shape));
    if (p && p->mesh.n) { put_sharding(&out, p, v); sb_puts(&out, ", "); }
    sb_printf(&out, "carve.kind = \"%s\"", kind_name(v->kind));
    if (v->kind != IR_INPUT) { sb_puts(&out, ", carve.init = "); put_init(&out, &v->init); }
    sb_puts(&out, "} loc(");
    put_string(&out, v->name);
    sb_putc(&out, ')');
  }
  sb_puts(&out, ") -> (");
  for (int k = 0; k < g->nouts; k++) {
    const ir_value *v = g->vals[g->outputs[k]];
    sb_printf(&out, "%s%s {jax.result_info = ", k ? ", " : "", ex_type(c, v->dtype, &v->shape));
    put_string(&out, v->name);
    if (p && p->mesh.n) { sb_puts(&out, ", "); put_sharding(&out, p, v); }
    sb_putc(&out, '}');
  }
  sb_puts(&out, ") {\n");
  ex_plan_fusions(c);
  int rc = 0;
  for (int i = 0; i < g->nvals && rc == 0; i++)
    if (g->vals[i]->op != IR_LEAF) rc = ex_value(c, i);
  char *text = NULL;
  if (rc == 0 && !c->failed) {
    sb_puts(&out, sb_str(&body));
    /* a literal returned as it is still needs a tensor */
    const char **rets = arena_alloc(a, sizeof(char *) * (size_t)(g->nouts + 1));
    for (int k = 0; k < g->nouts; k++) {
      const ir_value *v = g->vals[g->outputs[k]];
      if (v->kind == IR_CONST) {
        rets[k] = arena_printf(a, "%%ret%d", k);
        sb_printf(&out, "    %s = stablehlo.constant dense<", rets[k]);
        ex_put_lit(&out, v->attr.scalar, v->dtype);
        sb_printf(&out, "> : %s\n", ex_type(c, v->dtype, &v->shape));
      } else {
        rets[k] = c->val[v->id].n;
      }
    }
    sb_puts(&out, "    return ");
    for (int k = 0; k < g->nouts; k++) sb_printf(&out, "%s%s", k ? ", " : "", rets[k]);
    sb_puts(&out, " : ");
    for (int k = 0; k < g->nouts; k++) {
      const ir_value *v = g->vals[g->outputs[k]];
      sb_printf(&out, "%s%s", k ? ", " : "", ex_type(c, v->dtype, &v->shape));
    }
    sb_puts(&out, "\n  }\n");
    sb_puts(&out, sb_str(&funcs));      /* the composites' decompositions */
    sb_puts(&out, "}\n");
    text = arena_strndup(a, sb_str(&out), strlen(sb_str(&out)));
  }
  sb_free(&body);
  sb_free(&out);
  sb_free(&funcs);
  return text;
}
