/*
** tac.h: syntax trees of tactic files (.tac) and the parser entry point.
** lang checks only syntax; names of axes, tactics, stdlib entries and
** values are resolved by interp (interp/tactic.c), which reports their
** errors at the offsets kept here.
*/
#ifndef lang_tac_h
#define lang_tac_h

#include <stdint.h>
#include "util/arena.h"
#include "util/diag.h"

/* A value in an argument list: use "batch" as bp (axis = batch, stage = 3). */
typedef enum tac_vkind { TAC_VNAME, TAC_VINT, TAC_VNUM, TAC_VSTR, TAC_VSIZE, TAC_VLIST, TAC_VRANGE, TAC_VSECONDS } tac_vkind;

typedef struct tac_value tac_value;
struct tac_value {
  tac_vkind kind;
  uint32_t off;
  const char *text;        /* NAME, STR (contents) */
  int64_t i;               /* INT; SIZE in bytes (16GiB, 512MiB, 100KB, 1TB ...); RANGE: its first */
  int64_t hi;              /* RANGE: its last (lo..hi, both included) */
  double num;              /* NUM (and INT as a double); SECONDS: 30s, 500ms, 2min in seconds */
  tac_value *items;        /* LIST */
  int nitems;
};

typedef struct tac_arg {
  const char *key;         /* the axis, argument or parameter name (interned) */
  uint32_t off;
  tac_value val;
  int has_val;             /* 0 for a parameter without a default in a tactic header */
} tac_arg;

typedef enum tac_sel {
  TAC_SEL_INPUT, TAC_SEL_PARAM, TAC_SEL_GRAD, TAC_SEL_STATE, TAC_SEL_VALUE   /* ORDER TAC_SEL */
} tac_sel;

typedef enum tac_dimkind { TAC_DIM_INDEX, TAC_DIM_FIRST, TAC_DIM_LAST, TAC_DIM_LARGEST, TAC_DIM_NONE } tac_dimkind;

typedef enum tac_skind { TAC_SHARD, TAC_REPLICATE } tac_skind;

typedef struct tac_stmt {
  tac_skind kind;
  uint32_t off;            /* the keyword */
  tac_sel sel;
  int plural;              /* inputs, params, grads, states, values: all of the kind */
  const char *glob;        /* singular form: the glob ("wte", "l*.attn.w?"), quoted or bare */
  uint32_t glob_off;
  tac_dimkind dim;         /* TAC_DIM_NONE: replicate without 'dim' (every dim) */
  int64_t index;           /* TAC_DIM_INDEX: may be negative (from the end) */
  uint32_t dim_off;
  const char *axis;        /* an axis name or a tactic parameter holding one */
  uint32_t axis_off;
} tac_stmt;

typedef enum tac_dkind {
  TAC_MESH,                /* mesh batch = 2, model = 2 */
  TAC_USE,                 /* use "batch" as bp (axis = batch) */
  TAC_TACTIC,              /* tactic emb(axis = model) { statements } */
  TAC_LUA,                 /* tactic custom = lua "my_tactic.lua" (axis = model) */
  TAC_AUTO,                /* tactic found = auto (axes = [model], budget = 2000) */
  TAC_SCHEDULE,            /* schedule bp, mp, emb */
  TAC_CALL                 /* a command-line value: adam(lr = 1e-3) (--train) */
} tac_dkind;

typedef struct tac_decl {
  tac_dkind kind;
  uint32_t off;
  const char *name;        /* TACTIC/LUA/AUTO: the tactic's name; USE: the alias (or NULL: named after the file) */
  uint32_t name_off;
  const char *path;        /* USE: the stdlib name or a path; LUA: the script path */
  uint32_t path_off;
  tac_arg *args;           /* MESH: axis = size; USE/LUA/AUTO: arguments; TACTIC: parameters with defaults */
  int nargs;
  tac_stmt *stmts;         /* TACTIC */
  int nstmts;
  const char **names;      /* SCHEDULE */
  uint32_t *name_offs;
  int nnames;
  uint32_t end;            /* AUTO: just past the declaration (carve auto writes the found tactics there) */
} tac_decl;

typedef struct tac_file {
  const diag_src *src;
  int version;
  uint32_t version_off;
  tac_decl *decls;
  int ndecls;
} tac_file;

#define TAC_LANG_VERSION 1

/* Parse a tactic file; NULL after the first error (located, with a caret). */
tac_file *tac_parse(arena *a, diag *d, const diag_src *src);

/* The same parser on one REPL line: a statement or a declaration. Sets
** *incomplete when the input ended early (the REPL asks for more). */
tac_file *tac_parse_line(arena *a, diag *d, const diag_src *src, int *incomplete);

/* A command-line value in the tactic language, its one declaration in
** the result: TAC_OPT_MESH reads a mesh without its keyword (--mesh
** 'batch=4, model=2'), TAC_OPT_CALL a name with arguments (--train
'adam(lr = 1e-3)'), TAC_OPT_ARGS arguments alone (--links 'batch = inter',
** --sweep 'batch = 1..64, model = [1, 2, 4]'). src names the option, so errors read
** "--train:1:17: error: ..." with a caret. */
typedef enum tac_option { TAC_OPT_MESH, TAC_OPT_CALL, TAC_OPT_ARGS } tac_option;
tac_file *tac_parse_option(arena *a, diag *d, const diag_src *src, tac_option kind);

#endif
