/*
** agree.c: ranks agree on what they were given (see agree.h). Digests are
** 64-bit FNV-1a: a check against mistakes, not against an adversary.
*/
#include "interp/drive/agree.h"
#include "util/diag.h"
#include "util/mem.h"
#include "util/strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FNV_START 1469598103934665603ull

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) { h ^= c[i]; h *= 1099511628211ull; }
  return h;
}

static void add(agree_list *l, const char *what, uint64_t h) {
  if (l->n == AGREE_MAX) return;
  l->what[l->n] = what;
  l->h[l->n++] = h;
}

void agree_bytes(agree_list *l, const char *what, const void *p, size_t n) { add(l, what, fnv(FNV_START, p, n)); }

void agree_text(agree_list *l, const char *what, const char *text) {
  uint64_t h = FNV_START;
  if (!text) h = fnv(h, "\1absent", 7);
  else
    for (const char *c = text; *c; c++)
      if (!isspace((unsigned char)*c)) h = fnv(h, c, 1);
  add(l, what, h);
}

/* a file's first `limit` bytes (all when 0) into h; -1 when it cannot be read */
static int hash_fd(int fd, uint64_t *h, uint64_t limit) {
  char buf[1 << 16];
  uint64_t done = 0;
  for (;;) {
    size_t want = sizeof buf;
    if (limit && limit - done < want) want = (size_t)(limit - done);
    if (!want) return 0;
    ssize_t k = read(fd, buf, want);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return -1;
    if (k == 0) return 0;
    *h = fnv(*h, buf, (size_t)k);
    done += (uint64_t)k;
  }
}

/* opened as carve opens inputs: never waiting on a FIFO, regular files only */
static int open_regular(const char *path) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) { close(fd); fd = -1; }
  return fd;
}

void agree_file(agree_list *l, const char *what, const char *path) {
  uint64_t h = FNV_START;
  int fd = path ? open_regular(path) : -1;
  if (!path) h = fnv(h, "\1absent", 7);
  else if (fd < 0 || hash_fd(fd, &h, 0) < 0) h = fnv(FNV_START, "\1unreadable", 11);
  if (fd >= 0) close(fd);
  add(l, what, h);
}

void agree_header(agree_list *l, const char *what, const char *path) {
  uint64_t h = FNV_START;
  int fd = path ? open_regular(path) : -1;
  unsigned char len8[8];
  if (!path) h = fnv(h, "\1absent", 7);
  else if (fd < 0 || read(fd, len8, 8) != 8) h = fnv(FNV_START, "\1unreadable", 11);
  else {
    uint64_t n = 0;
    for (int b = 0; b < 8; b++) n |= (uint64_t)len8[b] << (8 * b);
    h = fnv(h, len8, 8);
    if (n > ((uint64_t)1 << 30) || hash_fd(fd, &h, n) < 0) h = fnv(FNV_START, "\1unreadable", 11);
  }
  if (fd >= 0) close(fd);
  add(l, what, h);
}

int agree_check(const rt_world *w, const agree_list *l, char *err, size_t errlen) {
  if (w->size <= 1) return 0;
  size_t bytes = sizeof(uint64_t) * (AGREE_MAX + 1);
  uint64_t mine[AGREE_MAX + 1] = {0};
  mine[0] = (uint64_t)l->n;
  memcpy(mine + 1, l->h, sizeof(uint64_t) * (size_t)l->n);
  uint64_t *all = w->rank == 0 ? mem_calloc((size_t)w->size, bytes) : NULL;
  int rc = w->gather(w->impl, mine, bytes, all) < 0 ? -1 : 0;
  strbuf why;
  sb_init(&why);
  if (rc < 0) sb_puts(&why, "the ranks could not compare what they were given");
  else if (w->rank == 0)
    for (int r = 1; r < w->size; r++) {
      const uint64_t *o = all + (size_t)r * (AGREE_MAX + 1);
      if (o[0] != mine[0]) {
        sb_printf(&why, "%srank %d runs another version of carve", why.n ? "; " : "", r);
        continue;
      }
      int k = 0;
      for (int i = 0; i < l->n; i++)
        if (o[1 + i] != mine[1 + i]) {
          if (!k++) sb_printf(&why, "%srank %d differs from rank 0 in %s", why.n ? "; " : "", r, l->what[i]);
          else sb_printf(&why, ", %s", l->what[i]);
        }
    }
  free(all);
  if (w->rank == 0 && why.n && rc == 0) {
    strbuf m;
    sb_init(&m);
    sb_printf(&m, "the ranks were not given the same things: %s; start every rank with the same files and options",
              sb_str(&why));
    sb_free(&why);
    why = m;
    rc = -1;
  }
  /* every rank leaves with rank 0's verdict */
  int r = w->agree(w->impl, rc, sb_str(&why), err, errlen);
  sb_free(&why);
  return r;
}
