/*
** cir.h: syntax trees of model files (.cir) and the parser entry point.
**
** lang knows nothing of the IR: names here are raw text (interned), and
** a name inside a repeat block may carry index templates such as
** "l{i}.w1" or "h{i+1}"; interp expands them. Every node keeps the byte
** offset it came from so that any later error can point at the source.
*/
#ifndef lang_cir_h
#define lang_cir_h

#include <stdint.h>
#include "util/arena.h"
#include "util/diag.h"

typedef enum cir_ekind {
  CIR_NAME,     /* a value name (possibly templated): x, l{i}.w1 */
  CIR_NUM,      /* numeric literal; is_int when written without . or exponent */
  CIR_STR,      /* "bsd,dhk->bshk" (str holds the contents, no quotes) */
  CIR_CALL,     /* op(args..., key = value...) */
  CIR_LIST      /* [a, b, ...] */
} cir_ekind;

typedef struct cir_expr cir_expr;

typedef struct cir_attr {
  const char *key;       /* interned */
  uint32_t off;
  cir_expr *val;
} cir_attr;

struct cir_expr {
  cir_ekind kind;
  uint32_t off;          /* first byte of the expression */
  const char *text;      /* NAME: the name; CALL: the op name; STR: contents (all interned) */
  double num;            /* NUM (negative literals are folded: -1 is a NUM) */
  int64_t inum;          /* NUM when is_int */
  int is_int;
  cir_expr **args;       /* CALL: positional arguments; LIST: elements */
  int nargs;
  cir_attr *attrs;       /* CALL: keyword arguments, in source order */
  int nattrs;
};

typedef enum cir_skind {
  CIR_INPUT,    /* input NAME : TYPE */
  CIR_PARAM,    /* param NAME : TYPE [= INIT] */
  CIR_ASSIGN,   /* NAME = EXPR */
  CIR_RETURN,   /* return EXPR {, EXPR} */
  CIR_REPEAT    /* repeat VAR in LO..HI { STMTS } */
} cir_skind;

typedef struct cir_type {
  const char *dtype;     /* as written: f32 bf16 f16 i32 (checked by interp) */
  uint32_t off;
  int64_t *dims;         /* each >= 0, checked against overflow by the lexer */
  uint32_t *dim_off;
  int rank;
} cir_type;

typedef struct cir_stmt cir_stmt;

struct cir_stmt {
  cir_skind kind;
  uint32_t off;
  const char *name;      /* INPUT/PARAM/ASSIGN: the declared name; REPEAT: the index variable */
  uint32_t name_off;
  cir_type type;         /* INPUT/PARAM */
  cir_expr *init;        /* PARAM: NULL (default), a NAME (zeros, ones) or a CALL (normal(0.02)) */
  cir_expr *value;       /* ASSIGN */
  cir_expr **rets;       /* RETURN */
  int nrets;
  int64_t lo, hi;        /* REPEAT: lo inclusive, hi exclusive */
  cir_stmt **body;       /* REPEAT */
  int nbody;
};

typedef struct cir_model {
  const char *name;
  uint32_t off;
  cir_stmt **stmts;
  int nstmts;
} cir_model;

typedef struct cir_file {
  const diag_src *src;
  int version;           /* 0 when the file has no version line */
  uint32_t version_off;
  cir_model **models;
  int nmodels;
} cir_file;

#define CIR_LANG_VERSION 1   /* the newest model-language version this build reads */

/*
** Parse a whole model file. Returns NULL after recording the first error
** in d (`file:line:col: error: ...` with a caret; an unclosed bracket adds
** a note pointing at where it was opened). Everything is allocated in a.
*/
cir_file *cir_parse(arena *a, diag *d, const diag_src *src);

/* Is name a keyword of the model language (model, input, param, return,
** repeat, in, version), which a value may not be called? */
int cir_is_keyword(const char *name);

#endif
