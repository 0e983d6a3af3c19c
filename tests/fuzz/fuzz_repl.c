/* fuzz_repl.c: the REPL's line handler: each input is a session of lines
** typed at a small model (tests/data/chain.cir, with a mesh). Commands that
** touch files (load, save) are left out: they would read and write the disk. */
#include "fuzz.h"
#include "interp/repl/repl.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strbuf out;
  sb_init(&out);
  repl_opts o = {0};
  o.model_path = SRCDIR "/tests/data/chain.cir";
  o.mesh = "b = 2, m = 2";
  repl *r = repl_new(&o, &out);
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  for (char *line = text, *next; line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    const char *w = line;
    while (*w == ' ' || *w == '\t') w++;
    if (!strncmp(w, "load", 4) || !strncmp(w, "save", 4)) continue;
    sb_clear(&out);
    if (repl_line(r, line, &out) == REPL_QUIT) break;
  }
  free(text);
  repl_free(r);
  sb_free(&out);
  return 0;
}
