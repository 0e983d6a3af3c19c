/*
** file.c: writing a file whole or not at all.
*/
#include "util/file.h"
#include "util/mem.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

int file_write_atomic(const char *path, const char *data, size_t n) {
  char *tmp = mem_alloc(strlen(path) + 32);
  sprintf(tmp, "%s.tmp.%d", path, (int)getpid());
  FILE *f = fopen(tmp, "wb");
  int ok = f && fwrite(data, 1, n, f) == n && fflush(f) == 0 && fsync(fileno(f)) == 0;
  int e = errno;
  if (f && fclose(f) != 0 && ok) { ok = 0; e = errno; }
  if (ok && rename(tmp, path) != 0) { ok = 0; e = errno; }
  if (!ok) { if (f) remove(tmp); errno = e; }
  free(tmp);
  return ok ? 0 : -1;
}
