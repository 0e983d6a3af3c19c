/*
** progfile.h: a lowered program with what it takes to run it and to talk
** about its values, written to a text file (carve lower -o) and read back
** (carve bisect). Besides the instructions and buffers it keeps, for each
** IR value, the buffer holding it, its name, kind, op and source place,
** its sharding, the axes its buffer holds a partial sum over, the axes the
** plan reduces it over where it is made, and a leaf's deterministic init.
** Every rank runs the same program (only the pieces differ), so one file
** serves a whole mesh. The format is carve's own, versioned, one record a
** line:
**
**   carve-program 1
**   model gpt2_small train 2
**   mesh batch 2 model 2
**   group 0 axes 0 1
**   buf 3 name "l0.h" dtype f32 kind output shape 2,32,128 global 4,32,256 dims 0,-1,1 carry -1
**   instr op ew fn gelu out 7 in 6,-1,-1,-1 ... (every field of rt_instr)
**   value 42 name "l0.h" kind value op gelu at "gpt2_small.cir:31:5" sharding "[batch, -, model]" buf 7 ...
*/
#ifndef interp_drive_progfile_h
#define interp_drive_progfile_h

#include "interp/drive/drive.h"

typedef struct pf_value {
  const char *name;
  const char *kind;          /* "input", "param", "state", "grad" or "value" */
  const char *op;            /* the op that made it ("" for a leaf) */
  const char *where;         /* its place in the model file ("" when generated) */
  const char *sharding;      /* "[batch, -, model]" ("" on one device) */
  uint32_t reduced;          /* axes the plan reduces it over where it is made */
} pf_value;

typedef struct progfile {
  arena mem;                 /* names and strings */
  const char *model;
  int train;
  rt_prog prog;              /* owned after progfile_read, borrowed after progfile_describe */
  lower_result lr;           /* buf_of, partial (same) */
  int owns;
  int nvals;
  pf_value *vals;            /* by IR value id: program order */
  drive_leaf *leaves;        /* by value: how drive_adopt binds the leaves */
} progfile;

/* Describe a program lowered from g under plan (NULL: one device); prog
** and lr are borrowed and must outlive f. */
void progfile_describe(progfile *f, const ir_graph *g, const sh_plan *plan, const rt_prog *prog, const lower_result *lr);
/* Write f to path atomically. -1 with a message in err. */
int  progfile_write(const progfile *f, const char *path, char *err, size_t errlen);
/* Read a program file. -1 with a located error in d. */
int  progfile_read(progfile *f, diag *d, const char *path);
void progfile_free(progfile *f);
/* The value of that name, or -1. */
int  progfile_find(const progfile *f, const char *name);

#endif
