/*
** blas_env.c: OpenBLAS's worker threads told to sleep as soon as a call
** ends. By default they spin for about 2^28 cycles (0.1 s) first, waiting
** for the next call; carve's own kernels run between GEMMs on the same
** cores, and the spinning took up to a third of their time (a 4-layer GPT
** step at 2 threads: 1.32-1.37 s against 1.24-1.25 s with the workers
** asleep). OpenBLAS reads OPENBLAS_THREAD_TIMEOUT once, through getenv,
** while it loads, before main runs; the executable's own getenv comes
** first in the dynamic linker's symbol lookup, so this one answers for
** it. It reads the environment as libc's does, except that an unset
** OPENBLAS_THREAD_TIMEOUT reads as 4 (2^4 cycles). A user who sets the
** variable gets what they set. Only the carve executable has this file.
*/
#include <stdlib.h>
#include <string.h>

extern char **environ;

char *getenv(const char *name) {
  size_t n = strlen(name);
  for (char **e = environ; e && *e; e++)
    if (!strncmp(*e, name, n) && (*e)[n] == '=') return *e + n + 1;
  static char quiet[] = "4";
  return strcmp(name, "OPENBLAS_THREAD_TIMEOUT") ? NULL : quiet;
}
