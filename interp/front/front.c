/*
** front.c: which reader reads which file.
*/
#include "interp/front/front.h"
#include "interp/front/build.h"
#include "interp/front/hlo.h"
#include "lang/cir.h"
#include "lang/mlir.h"

#include <string.h>

static ir_graph *read_cir(arena *a, diag *d, const diag_src *src, const front_opts *o) {
  cir_file *f = cir_parse(a, d, src);
  return f ? build_model(f, o->model, d) : NULL;
}

/* StableHLO text: --model names the function to import (main by default) */
static ir_graph *read_mlir(arena *a, diag *d, const diag_src *src, const front_opts *o) {
  mlir_file *f = mlir_parse(a, d, src);
  hlo_opts ho = {.entry = o->model, .as_written = o->as_written};
  return f ? hlo_build(f, &ho, NULL, d) : NULL;
}

static const front_format formats[] = {
  {".cir", "a model file", read_cir},
  {".mlir", "a StableHLO program", read_mlir},
};

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  return n >= k && !strcmp(s + n - k, tail);
}

const front_format *front_format_of(const char *path) {
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (ends_with(path, formats[i].ext)) return &formats[i];
  return &formats[0];
}

ir_graph *front_read(arena *a, diag *d, const char *path, const front_opts *o) {
  const diag_src *src = diag_load_file(a, d, path);
  return src ? front_format_of(path)->read(a, d, src, o) : NULL;
}
