/*
** mlir_int.h: what the MLIR lexer (mlir_lex.re), grammar (mlir_gram.lemon)
** and driver (mlir_parse.c) share. Other layers see only mlir.h.
*/
#ifndef lang_mlir_int_h
#define lang_mlir_int_h

#include <stddef.h>
#include <stdint.h>
#include "lang/mlir.h"
#include "lang/syntax.h"

/* Deepest nesting of ( [ { < the parser accepts; it bounds the Lemon stack. */
#define MLIR_MAX_DEPTH SYN_MAX_DEPTH
/* Lemon stack entries: a nesting level costs at most about 10 (an op with
** results, items and a region inside a region) + slack. */
#define MLIR_STACK_DEPTH (16 * MLIR_MAX_DEPTH + 64)
/* Dimensions above this are refused so that products of a few stay in int64. */
#define MLIR_MAX_DIM ((int64_t)1 << 62)

/* One token: a slice of the source plus its decoded value. */
typedef struct mlir_tok {
  uint32_t off;          /* byte offset of the first character */
  uint32_t len;          /* length in the source */
  const char *s;         /* src->text + off; STRING, @"quoted": the decoded contents (arena); SYMBOL: past the '@' */
  uint32_t slen;         /* STRING, SYMBOL: bytes of s; VALUE: bytes of the name before any #N */
  int64_t i;             /* INT; HEX (the 64 bits); VALUE: #N or -1 */
  double f;              /* INT, HEX and FLOAT */
  int64_t *dims;         /* DIMS: the dims (MLIR_DYN for '?'); NULL with rank -1: unranked */
  uint32_t *dim_off;
  int rank;
} mlir_tok;

/* Append x to an arena array that is being parsed, growing it 1, 2, 4, ...
** (SYN_PUSH starts at 4; most lists here hold one or two things, and a
** large file holds hundreds of thousands of them). */
#define MLIR_PUSH(ar, arr, n, cap, x) do {                                  \
    if ((n) == (cap)) {                                                     \
      int nc_ = (cap) ? 2 * (cap) : 1;                                      \
      (arr) = arena_grow((ar), (arr), (size_t)(cap), (size_t)nc_, sizeof *(arr)); \
      (cap) = nc_;                                                          \
    }                                                                       \
    (arr)[(n)++] = (x);                                                     \
  } while (0)

/* Growable arrays in the arena while a list is being parsed (MLIR_PUSH). */
typedef struct mlir_typev { mlir_type **v; int n, cap; } mlir_typev;
typedef struct mlir_opv { mlir_op **v; int n, cap; } mlir_opv;
typedef struct mlir_attrv { mlir_attr **v; int n, cap; } mlir_attrv;
typedef struct mlir_argv { mlir_arg *v; int n, cap; } mlir_argv;
typedef struct mlir_resultv { mlir_result *v; int n, cap; uint32_t off; } mlir_resultv;
typedef struct mlir_resv { mlir_res *v; int n, cap; } mlir_resv;
typedef struct mlir_regionv { mlir_region **v; int n, cap; } mlir_regionv;
typedef struct mlir_locv { mlir_loc **v; int n, cap; } mlir_locv;
/* Items being parsed, on the scratch stack (mlir_pctx.scratch[start, start + n)):
** lists nest, so they grow and close last in, first out, and each closes
** into one exact arena array. */
typedef struct mlir_itemv { int start, n; } mlir_itemv;
/* A region being built: the capacity of its blocks. */
typedef struct mlir_regionb { mlir_region *r; int cap; } mlir_regionb;
/* A region label being built: reducer(%a: T, %b: T) (%c: U, %d: U). */
typedef struct mlir_lhead { uint32_t off; const char *label; mlir_argv args; } mlir_lhead;
/* A module being filled, with the capacities of its arrays. */
typedef struct mlir_modb { mlir_module *m; int funccap, meshcap, opcap; } mlir_modb;

/* What an open bracket (syn_open.kind) opened, for "expected '}' to close function @main". */
typedef enum mlir_openkind {
  MLIR_OPEN_MODULE, MLIR_OPEN_FUNC, MLIR_OPEN_REGION, MLIR_OPEN_LREGION,   /* { */
  MLIR_OPEN_DICT,
  MLIR_OPEN_ARGS, MLIR_OPEN_OPERANDS, MLIR_OPEN_REGIONS, MLIR_OPEN_LOC,   /* ( */
  MLIR_OPEN_PAREN, MLIR_OPEN_LIST,                                        /* ( [ */
  MLIR_OPEN_ANGLE                                                         /* < */
} mlir_openkind;

/* The parse context: Lemon's %extra_context. All parse and error state. */
typedef struct mlir_pctx {
  int bad;               /* the grammar met a syntax error: reported by the driver */
  int bad_code;
  mlir_tok bad_tok;
  uint64_t bad_expected;
  syn_ctx syn;           /* diagnostics, first error, prev tokens, open brackets */
  arena *a;
  const char *cur;       /* lexer position; syn.src->text is NUL-terminated */
  mlir_file *file;
  int modcap, aliascap;
  mlir_modb implicit;    /* the implicit module, once a top-level op needs one */
  mlir_locv aliaslocs;   /* loc(#locN) references, resolved once the file is read */
  mlir_item *scratch;    /* items of the lists being parsed (malloc'd) */
  int nscratch, scratchcap;
  mlir_tok tok;          /* the token being handed to the parser */
  int code;              /* and its code */
  mlir_tok prevtok;      /* the last token */
  /* for naming brackets and telling a region's '{' from a dictionary's */
  int headkind;          /* TK_FUNC or TK_MODULE until its body's '{'; else 0 */
  int head_depth;        /* syn.depth at that keyword */
  mlir_tok head;         /* the symbol after it */
  int label_depth;       /* syn.depth + 1 at a region label until its '{'; else 0 */
  mlir_tok label;
  int gen_depth;         /* syn.depth + 1 at a generic op's operands until its regions; else 0 */
  mlir_tok gen;          /* the generic op's name */
  int pushed;            /* the token being parsed opened a bracket */
  const char *s_module, *s_func, *s_mesh;   /* interned "builtin.module" ... */
} mlir_pctx;

/* mlir_lex.re: the next token's TK_ code (0 at the end), or -1 after an error. */
int mlir_lex(mlir_pctx *p, mlir_tok *t);

/* mlir_parse.c: report the parser's first syntax error; expected is a bit
** set of acceptable token codes (bit 0: end of input). */
void mlir_syntax_error(mlir_pctx *p, int code, const mlir_tok *t, uint64_t expected);
/* Record the first error (syn_error); returns -1. */
#define mlir_error(p, off, ...) syn_error(&(p)->syn, (off), __VA_ARGS__)

/* mlir_parse.c: tree building shared with the grammar's actions. */
void mlir_items_begin(mlir_pctx *p, mlir_itemv *v);
void mlir_item_push(mlir_pctx *p, mlir_itemv *v, mlir_item it);
/* Close the list: its items in one arena array (NULL when empty). */
mlir_item *mlir_items_end(mlir_pctx *p, const mlir_itemv *v);
mlir_attr *mlir_new_attr(mlir_pctx *p, mlir_akind k, uint32_t off, uint32_t end);
/* A pretty op is complete: gather its operands, check it has a type if it has operands. */
void mlir_pretty_done(mlir_pctx *p, mlir_op *op);
/* dense<...>'s literal must be numbers, booleans, lists of them or a hex string. */
void mlir_check_dense(mlir_pctx *p, const mlir_attr *lit);
/* A statement at module level (m) or at the top (m == NULL: the implicit
** module, or a module of its own for "builtin.module"). */
void mlir_module_add(mlir_pctx *p, mlir_modb *m, mlir_op *op);
mlir_modb mlir_module_open(mlir_pctx *p, uint32_t off);
void mlir_alias_add(mlir_pctx *p, mlir_tok name, mlir_loc *l, mlir_attr *a, mlir_type *t);

/* The generated parser (mlir_gram.c). */
void *mlirParseAlloc(void *(*mallocProc)(size_t), mlir_pctx *p);
void  mlirParse(void *parser, int code, mlir_tok tok);
void  mlirParseFree(void *parser, void (*freeProc)(void *));
/* Whether the parser would accept the token code now (before it is parsed). */
int mlir_gram_accepts(void *parser, int code);
/* Bit set of the token codes the parser would accept now. */
uint64_t mlir_gram_expected(void *parser);

#endif
