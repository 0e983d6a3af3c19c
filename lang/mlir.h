/*
** mlir.h: syntax trees of StableHLO and MHLO programs in MLIR's text form
** (what jax.jit(f).lower(...).as_text(), jax.export, torch-xla and
** torch-mlir print), and the reader's entry point.
**
** lang knows nothing of the IR. An operation is kept generically: its
** name, results, operands, the items written between its name and its
** type (pretty form) or its properties and attributes (generic form), its
** regions and its type signature. The builder interprets items by op name
** ("dims" of broadcast_in_dim, "applies" of a compact reduce ...), so an op
** this reader has never heard of still parses. Attributes are kept as
** (kind, text span, nested items), so that offset_dims of a
** #stablehlo.gather<...> is found by key.
**
** Everything lives in the caller's arena. Names (ops, values, symbols,
** keys, words, aliases) are interned and compare by pointer; strings are
** decoded but not interned. Every node keeps the byte offset it came from.
** Spelling: values keep their '%' ("%arg0"), aliases their '#' ("#loc3"),
** block labels their '^'; symbols lose their '@' ("main"), so that a
** callee compares equal to a func.func's name and to a generic
** sym_name = "main".
*/
#ifndef lang_mlir_h
#define lang_mlir_h

#include <stdint.h>
#include "util/arena.h"
#include "util/diag.h"

typedef struct mlir_type mlir_type;
typedef struct mlir_attr mlir_attr;
typedef struct mlir_loc mlir_loc;
typedef struct mlir_op mlir_op;
typedef struct mlir_region mlir_region;
typedef struct mlir_func mlir_func;

/* ---- types ---- */

#define MLIR_DYN (-1)          /* a '?' dimension */

typedef enum mlir_tkind {
  MLIR_T_SCALAR,   /* a builtin element type (name): f32 bf16 f16 f64 i1 i32 si8 ui8 index f8E4M3FN ... */
  MLIR_T_TENSOR,   /* tensor<33x?xf32[, encoding]> (name "tensor"; also "vector", "memref") */
  MLIR_T_COMPLEX,  /* complex<f32> (elem) */
  MLIR_T_TUPLE,    /* tuple<T, ...> (elems) */
  MLIR_T_OTHER     /* a dialect type: !stablehlo.token, !quant.uniform<...> (name, body) */
} mlir_tkind;

struct mlir_type {
  mlir_tkind kind;
  uint32_t off, end;     /* its text: src->text[off, end) */
  int rank;              /* TENSOR: number of dims; -1 when unranked (tensor<*xf32>) */
  const char *name;      /* see mlir_tkind; OTHER keeps its '!' (interned) */
  int64_t *dims;         /* TENSOR: each >= 0 or MLIR_DYN */
  uint32_t *dim_off;
  mlir_type *elem;       /* TENSOR, COMPLEX: the element type */
  mlir_attr *encoding;   /* TENSOR: the attribute after a ',', or NULL */
  mlir_type **elems;     /* TUPLE */
  mlir_attr *body;       /* OTHER: the <...> as an MLIR_A_ANGLE, or NULL */
  int nelems;
};

/* ---- attributes ---- */

typedef enum mlir_akind {
  MLIR_A_INT,      /* 42, -1 (i and f); 0xFF800000 (is_hex: the bits of a float when typed so) */
  MLIR_A_FLOAT,    /* 9.99999974E-6, -1.000000e+00 (f) */
  MLIR_A_BOOL,     /* true, false (i) */
  MLIR_A_UNIT,     /* unit, or a dictionary key written without a value ({foo}) */
  MLIR_A_STRING,   /* "..." (text: decoded, NUL-terminated; len: its bytes) */
  MLIR_A_WORD,     /* any other bare word: LT SIGNED DEFAULT applies stablehlo.add ? (text) */
  MLIR_A_SYMBOL,   /* @main, @"a b", @a::@b (text, without the first '@') */
  MLIR_A_VALUE,    /* %x or %x#1 among a pretty op's items (text "%x"; i: the #number, -1 without) */
  MLIR_A_TYPE,     /* a type where an attribute goes: tensor<4xf32>, f32, !stablehlo.token (type) */
  MLIR_A_LIST,     /* [a, b] */
  MLIR_A_DICT,     /* {a = 1, b} (keyed items; sdy's {"x", ?} has positional ones) */
  MLIR_A_GROUP,    /* (a, b): a call's or a reduce's operands, a complex literal */
  MLIR_A_ANGLE,    /* <...> without a name: <["x"=2]> of sdy.mesh, <@mesh, [...]> of sdy.reshard */
  MLIR_A_DIALECT,  /* #stablehlo.gather<...>, #mhlo<comparison_direction EQ>; or #name alone,
                   ** an alias or a parameterless attribute (text with '#'; items) */
  MLIR_A_DENSE,    /* dense<lit> (one item: a number, bool, hex string or nested LIST/GROUP; none for dense<>) */
  MLIR_A_DENSE_RESOURCE, /* dense_resource<__elided__> (text: the handle) */
  MLIR_A_ARRAY,    /* array<i64: 1, 256> (type: the element type; items) */
  MLIR_A_RANGE,    /* 0:33 or 4:8:2 of a slice; 0.1:128 of a quantized type (two or three items) */
  MLIR_A_CROSS,    /* [0] x [1] of dot_general's dims (items: lhs, rhs); convolution's
                   ** [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f] (out: the result's) */
  MLIR_A_ARROW,    /* (a, b) -> c: a function_type, a sharding rule (items: the ins; out) */
  MLIR_A_SEQ       /* terms side by side: comparison_direction EQ; %x init: %c (items, ':' keys) */
} mlir_akind;

/* An element of a list, dictionary, <...> body, group or sequence; a pretty op's item. */
typedef struct mlir_item {
  const char *key;       /* interned, as written (a quoted key decoded); NULL when positional */
  uint32_t key_off;
  char sep;              /* '=' or ':' (init: %c) after the key; 0 when positional */
  mlir_attr *val;        /* never NULL */
} mlir_item;

struct mlir_attr {
  mlir_akind kind;
  uint32_t off, end;     /* its text: src->text[off, end) */
  uint32_t len;          /* STRING: bytes of text (it may hold NULs from \00 escapes) */
  const char *text;      /* see mlir_akind */
  int64_t i;
  double f;
  int is_hex;            /* INT written 0x...: i holds all 64 bits (read them as (uint64_t)i) */
  int nitems;
  mlir_item *items;
  mlir_attr *out;        /* ARROW, CROSS: what follows '->' */
  mlir_type *type;       /* TYPE; ARRAY: element type; a typed literal (1 : i32, dense<..> : tensor<..>): its type */
};

/* ---- locations ---- */

typedef enum mlir_lkind {
  MLIR_L_UNKNOWN,  /* loc(unknown) */
  MLIR_L_FILE,     /* loc("model.py":12:5) (text, line, col), a range "model.py":12:5 to 14:2
                      (end_line, end_col; 0 where not a range), a line "model.py":12 (col 0) */
  MLIR_L_NAME,     /* loc("reshape.100") or loc("name"(child)) (text, child) */
  MLIR_L_ALIAS,    /* loc(#loc3) (text "#loc3"; child: its definition, set once parsed) */
  MLIR_L_FUSED,    /* loc(fused[a, b]) or fused<meta>[...] (locs, meta) */
  MLIR_L_CALLSITE  /* loc(callsite(callee at caller)) (child: callee, caller) */
} mlir_lkind;

struct mlir_loc {
  mlir_lkind kind;
  uint32_t off;
  const char *text;
  int64_t line, col;
  int64_t end_line, end_col;
  mlir_loc *child;
  mlir_loc *caller;
  mlir_loc **locs;
  int nlocs;
  mlir_attr *meta;
};

/* ---- operations, regions, functions ---- */

typedef struct mlir_result {
  const char *name;      /* "%0" */
  int count;             /* 2 for %0:2 (uses are %0#0, %0#1); 1 otherwise */
  uint32_t off;
} mlir_result;

/* The type after ':'. (T1, T2) -> T3 and (T) -> (T1, T2) have arrow set;
** T and T1, T2 (types written once for all, select's predicate and
** value types) have every type in ins and none in outs. */
typedef struct mlir_sig {
  uint32_t off;          /* the ':'; 0 with has = 0 */
  int has;               /* a signature was written */
  int arrow;
  mlir_type **ins;
  int nins;
  mlir_type **outs;
  int nouts;
} mlir_sig;

/* A value a function or block defines: %arg0: tensor<...> {attrs} loc(...). */
typedef struct mlir_arg {
  const char *name;      /* "%arg0"; NULL for a declaration's unnamed argument */
  uint32_t off;
  mlir_type *type;
  mlir_attr *attrs;      /* DICT or NULL */
  mlir_loc *loc;         /* or NULL */
} mlir_arg;

typedef struct mlir_block {
  const char *label;     /* "^bb0", or NULL for an entry block written without one */
  uint32_t off;
  mlir_arg *args;        /* ^bb0(...) args, or a pretty region's reducer(%a: T, %b: T) (b: U) ... in order */
  int nargs;
  mlir_op **ops;
  int nops;
} mlir_block;

struct mlir_region {
  const char *label;     /* pretty form: "reducer", "cond", "do"; NULL for ({ ... }) and bodies */
  uint32_t off;          /* the label, or the '{' */
  mlir_block **blocks;   /* at least one */
  int nblocks;
};

struct mlir_op {
  uint32_t off;          /* the first result, else the name */
  const char *name;      /* "stablehlo.add", "call", "return", "mhlo.add" (interned, unquoted) */
  uint32_t name_off;
  int generic;           /* written "name"(...) */
  mlir_result *results;
  int nresults;
  mlir_attr **operands;  /* VALUE attributes: generic: the (...) list; pretty: every value among the
                         ** items, in order, including those in groups: (%x init: %c), (%i = %c) */
  int noperands;
  mlir_item *items;      /* pretty: what is written between the name and the {dict} or ':', in order:
                         ** values, words, key = value (key: dims, dim, across's dimensions, @mesh),
                         ** groups, lists ([0:33, 0:79]), <...>, dense<...>, symbols */
  int nitems;
  mlir_attr *props;      /* generic: <{...}> as a DICT, or NULL */
  mlir_attr *attrs;      /* {...} as a DICT, or NULL */
  mlir_region **regions; /* generic: ({...}, {...}); pretty: reducer(...) {...}, cond {...} do {...} */
  int nregions;
  mlir_sig sig;
  mlir_loc *loc;         /* trailing loc(...), or NULL */
  mlir_func *func;       /* a pretty func.func written among generic ops: its function (name "func.func") */
};

typedef struct mlir_res {  /* a function result: -> (tensor<...> {jax.result_info = ""}) */
  mlir_type *type;
  mlir_attr *attrs;      /* DICT or NULL */
  mlir_loc *loc;
} mlir_res;

struct mlir_func {
  const char *name;      /* without '@' */
  uint32_t off, name_off;
  const char *visibility; /* "public", "private", "nested", or NULL */
  int generic;           /* read from "func.func"() ({...}) {sym_name = ..., function_type = ...} */
  mlir_arg *args;
  int nargs;
  mlir_res *results;
  int nresults;
  mlir_attr *attrs;      /* attributes {...} (generic: the dictionary less what was read from it), or NULL */
  mlir_region *body;     /* NULL for a declaration */
  mlir_loc *loc;
};

/* sdy.mesh @mesh = <["x"=2, "y"=4]> (also the older <"x"=2, "y"=4>). */
typedef struct mlir_axis {
  const char *name;
  int64_t size;
  uint32_t off;
} mlir_axis;

typedef struct mlir_mesh {
  const char *name;      /* without '@' */
  uint32_t off;
  mlir_axis *axes;
  int naxes;
  mlir_attr *device_ids; /* device_ids=[...] or NULL */
  mlir_op *op;           /* as written */
} mlir_mesh;

typedef struct mlir_module {
  const char *name;      /* without '@', or NULL */
  uint32_t off;
  int implicit;          /* the functions and ops of a file without 'module' */
  int generic;           /* read from "builtin.module"() ({...}) */
  mlir_attr *attrs;      /* attributes {...} as a DICT, or NULL */
  mlir_func **funcs;
  int nfuncs;
  mlir_mesh **meshes;
  int nmeshes;
  mlir_op **ops;         /* any other op at module level, in order */
  int nops;
  mlir_loc *loc;
} mlir_module;

/* #loc3 = loc(...), #map = <attribute>, !t = <type>. */
typedef struct mlir_alias {
  const char *name;      /* "#loc3", "!t" (interned) */
  uint32_t off;
  mlir_loc *loc;         /* one of these three */
  mlir_attr *attr;
  mlir_type *type;
} mlir_alias;

typedef struct mlir_file {
  const diag_src *src;
  mlir_module **modules; /* explicit modules in order; an implicit one gathers the rest */
  int nmodules;
  mlir_alias *aliases;   /* in order of definition (JAX and torch-xla put most after the module) */
  int naliases;
  uint32_t resources_off, resources_end;   /* a {-# dialect_resources ... #-} section, or 0, 0 */
} mlir_file;

/*
** Parse a whole file. Returns NULL after recording the first error in d
** (`file:line:col: error: ...` with a caret; an unclosed bracket adds a
** note pointing where it was opened). Everything is allocated in a.
*/
mlir_file *mlir_parse(arena *a, diag *d, const diag_src *src);

/* The place a location names, for messages: the first "file:line:col"
** found through aliases, fused and callsite (callee first), else the
** first name, else NULL (unknown). Allocated in a. */
const char *mlir_loc_text(arena *a, const mlir_loc *l);

/* The value of the item keyed key among the items of a DICT, LIST, GROUP,
** ANGLE, DIALECT or SEQ attribute (NULL if none or a is NULL). */
mlir_attr *mlir_attr_get(const mlir_attr *a, const char *key);
/* A pretty op's item keyed key (dims, dim, dimensions, batching_dims ...), or NULL. */
const mlir_item *mlir_op_item(const mlir_op *op, const char *key);
/* An op's attribute by key, from its properties, then its dictionary. */
mlir_attr *mlir_op_attr(const mlir_op *op, const char *key);
/* An alias by name ("#loc3"), or NULL. */
const mlir_alias *mlir_alias_find(const mlir_file *f, const char *name);

#endif
