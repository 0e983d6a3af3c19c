/*
** ops.c: the op registry (ORDER IR_OP).
*/
#include "interp/ir/ops.h"

#include <string.h>

#define U (OPF_UNARY)
#define B (OPF_BINARY)
#define INT (OPF_INTERNAL | OPF_NODIFF)

/* ORDER IR_OP */
static const ir_opinfo opinfo[] = {
  {"(leaf)", "", OPF_NODIFF},
  {"neg", "x:v", U}, {"exp", "x:v", U}, {"log", "x:v", U}, {"sqrt", "x:v", U},
  {"rsqrt", "x:v", U}, {"tanh", "x:v", U}, {"relu", "x:v", U}, {"gelu", "x:v", U},
  {"gelu_tanh", "x:v", U}, {"sigmoid", "x:v", U}, {"silu", "x:v", U},
  {"add", "a:v b:v", B}, {"sub", "a:v b:v", B}, {"mul", "a:v b:v", B},
  {"div", "a:v b:v", B}, {"maximum", "a:v b:v", B}, {"minimum", "a:v b:v", B},
  {"matmul", "a:v b:v", 0},
  {"einsum", "spec:s a:v b:v", 0},
  {"sum", "x:v dims:I? keepdims:b?", 0},
  {"mean", "x:v dims:I? keepdims:b?", 0},
  {"max", "x:v dims:I? keepdims:b?", 0},
  {"min", "x:v dims:I? keepdims:b?", 0},
  {"softmax", "x:v dim:i?", 0},
  {"log_softmax", "x:v dim:i?", 0},
  {"layernorm", "x:v gamma:v beta:v dim:i? eps:f?", 0},
  {"reshape", "x:v shape:I", 0},
  {"transpose", "x:v perm:I", 0},
  {"broadcast", "x:v shape:I", 0},
  {"concat", "xs:V dim:i", 0},
  {"slice", "x:v dim:i start:i end:i", 0},
  {"embedding", "table:v ids:v", 0},
  {"cross_entropy", "logits:v labels:v", 0},
  {"causal_mask", "x:v", 0},
  {"abs", "x:v", U}, {"sign", "x:v", U | OPF_NODIFF}, {"erf", "x:v", U}, {"erfc", "x:v", U},
  {"log1p", "x:v", U}, {"expm1", "x:v", U}, {"sin", "x:v", U}, {"cos", "x:v", U},
  {"floor", "x:v", U | OPF_NODIFF}, {"ceil", "x:v", U | OPF_NODIFF}, {"round", "x:v", U | OPF_NODIFF},
  {"round_afz", "x:v", U | OPF_NODIFF},
  {"tan", "x:v", U}, {"cbrt", "x:v", U},
  {"popcnt", "x:v", U | OPF_NODIFF}, {"clz", "x:v", U | OPF_NODIFF},
  {"not", "x:v", U | OPF_NODIFF},
  {"convert", "x:v dtype:t", U},
  {"bitcast", "x:v dtype:t", U | OPF_NODIFF},
  {"power", "a:v b:v", B},
  {"and", "a:v b:v", B | OPF_NODIFF}, {"or", "a:v b:v", B | OPF_NODIFF}, {"xor", "a:v b:v", B | OPF_NODIFF},
  {"rem", "a:v b:v", B}, {"atan2", "a:v b:v", B},
  {"shl", "a:v b:v", B | OPF_NODIFF}, {"shra", "a:v b:v", B | OPF_NODIFF}, {"shrl", "a:v b:v", B | OPF_NODIFF},
  {"compare", "a:v b:v dir:s total:b?", B | OPF_NODIFF},
  {"select", "pred:v a:v b:v", OPF_TERNARY},
  {"iota", "shape:I dim:i dtype:t", OPF_NODIFF},
  {"constant", "values:F shape:I dtype:t", OPF_NODIFF},
  {"attention", "q:v k:v v:v causal:b? scale:f?", 0},
  {"gather", "x:v indices:v offset_dims:I collapsed_slice_dims:I start_index_map:I index_vector_dim:i slice_sizes:I "
             "operand_batching_dims:I? start_indices_batching_dims:I? mode:s?", 0},
  {"scatter", "x:v indices:v updates:v update_window_dims:I inserted_window_dims:I scatter_dims_to_operand_dims:I "
              "index_vector_dim:i input_batching_dims:I? scatter_indices_batching_dims:I? combine:s? mode:s?", 0},
  {"rmsnorm", "x:v gamma:v dim:i? eps:f?", 0},
  {"ge", "a:v b:v", B | INT},
  {"relu_grad", "x:v dy:v", INT},
  {"gelu_grad", "x:v dy:v", INT},
  {"gelu_tanh_grad", "x:v dy:v", INT},
  {"silu_grad", "x:v dy:v", INT},
  {"softmax_grad", "y:v dy:v dim:i?", INT},
  {"log_softmax_grad", "y:v dy:v dim:i?", INT},
  {"normalize", "x:v dim:i? eps:f? rms:b?", INT},
  {"layernorm_grad", "x:v gamma:v dy:v dim:i? eps:f? rms:b?", INT},
  {"max_grad", "x:v dy:v dims:I? keepdims:b?", INT},
  {"embedding_grad", "ids:v dy:v rows:i", INT},
  {"cross_entropy_grad", "logits:v labels:v dloss:v", INT},
  {"causal_mask_grad", "dy:v", INT},
  {"sum_to", "x:v shape:I", OPF_INTERNAL},
  {"pad", "x:v dim:i start:i size:i", OPF_INTERNAL},
  {"attention_grad", "q:v k:v v:v dy:v causal:b? scale:f?", INT},
};
_Static_assert(sizeof opinfo / sizeof opinfo[0] == IR_NOPS, "ORDER IR_OP: one opinfo row per op");

const ir_opinfo *ir_opinfo_of(ir_opkind op) { return &opinfo[op]; }

/* ORDER IR_IX: each list's name in gather's signature and in scatter's */
static const char *const ix_names[2][IX_NLISTS] = {
  {"offset_dims", "collapsed_slice_dims", "start_index_map", "slice_sizes", "operand_batching_dims", "start_indices_batching_dims"},
  {"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", NULL, "input_batching_dims", "scatter_indices_batching_dims"},
};

int ir_op_is_composite(ir_opkind op) {
  switch (op) {
  case IR_SOFTMAX: case IR_LOG_SOFTMAX: case IR_LAYERNORM: case IR_RMSNORM: case IR_NORMALIZE: case IR_LAYERNORM_GRAD:
  case IR_SOFTMAX_GRAD: case IR_LOG_SOFTMAX_GRAD: case IR_MAX_GRAD: case IR_GELU: case IR_GELU_TANH: case IR_SILU:
  case IR_GELU_GRAD: case IR_GELU_TANH_GRAD: case IR_SILU_GRAD: case IR_RELU_GRAD: case IR_ATTENTION: case IR_ATTENTION_GRAD:
  case IR_CROSS_ENTROPY: case IR_CROSS_ENTROPY_GRAD: case IR_CAUSAL_MASK: case IR_CAUSAL_MASK_GRAD:
    return 1;
  default: return 0;
  }
}

int ir_index_list(ir_opkind op, const char *name) {
  for (int k = 0; k < IX_NLISTS; k++) {
    const char *n = ix_names[op == IR_SCATTER][k];
    if (n && !strcmp(n, name)) return k;
  }
  return -1;
}

/* ORDER: IR_LEAF (replace), IR_ADD, IR_MUL, IR_MAXIMUM, IR_MINIMUM */
static const struct { const char *name; int op; } combiners[] = {
  {"replace", IR_LEAF}, {"add", IR_ADD}, {"mul", IR_MUL}, {"max", IR_MAXIMUM}, {"min", IR_MINIMUM},
};

int ir_combiner(const char *name) {
  for (size_t i = 0; i < sizeof combiners / sizeof combiners[0]; i++)
    if (!strcmp(combiners[i].name, name)) return combiners[i].op;
  return -1;
}

const char *ir_combiner_name(int op) {
  for (size_t i = 0; i < sizeof combiners / sizeof combiners[0]; i++)
    if (combiners[i].op == op) return combiners[i].name;
  return "?";
}

int ir_sig_next(const char **sig, char *name, char *type, int *optional) {
  const char *p = *sig;
  while (*p == ' ') p++;
  const char *colon = strchr(p, ':');
  if (!*p || !colon) return 0;
  size_t n = (size_t)(colon - p) < IR_SIG_NAME - 1 ? (size_t)(colon - p) : IR_SIG_NAME - 1;
  memcpy(name, p, n);
  name[n] = 0;
  *type = colon[1];
  *optional = colon[2] == '?';
  *sig = colon + 2 + *optional;
  return 1;
}

int ir_op_lookup(const char *name) {
  for (int i = 1; i < IR_NOPS; i++)
    if (strcmp(opinfo[i].name, name) == 0) return i;
  return -1;
}

/* Edit distance, bounded: good enough to catch typos like "sofmax". */
static int distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > 30 || m > 30) return 99;
  int row[32];
  for (size_t j = 0; j <= m; j++) row[j] = (int)j;
  for (size_t i = 1; i <= n; i++) {
    int prev = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= m; j++) {
      int cur = row[j];
      int best = prev + (a[i - 1] != b[j - 1]);
      if (row[j] + 1 < best) best = row[j] + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      prev = cur;
    }
  }
  return row[m];
}

const char *ir_op_suggest(const char *name) {
  const char *best = NULL;
  int bd = 3;
  for (int i = 1; i < IR_NOPS; i++) {
    if (opinfo[i].flags & OPF_INTERNAL) continue;
    int dd = distance(name, opinfo[i].name);
    if (dd < bd) { bd = dd; best = opinfo[i].name; }
  }
  if (best) return best;
  /* other frameworks' spellings: reduce_sum, batch_matmul, softmax_v2 */
  size_t n = strlen(name), bl = 0;
  for (int i = 1; i < IR_NOPS; i++) {
    const char *o = opinfo[i].name;
    size_t m = strlen(o);
    if (opinfo[i].flags & OPF_INTERNAL || m >= n || m <= bl) continue;
    if ((name[n - m - 1] == '_' && !strcmp(name + n - m, o)) || (name[m] == '_' && !strncmp(name, o, m))) { best = o; bl = m; }
  }
  return best;
}
