/*
** datadir.c: the folders of the stdlib tactics and the device profiles
** (datadir.h). The build compiles in four paths: the source and build
** trees (a binary run from its build tree reads the source tree's files)
** and the configured bindir and pkgdatadir (how to get from the binary to
** the installed files, and where they are when it cannot be found).
*/
#include "util/datadir.h"
#include "util/mem.h"
#include "util/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CARVE_BINDIR
#define CARVE_BINDIR "/usr/local/bin"
#endif
#ifndef CARVE_PKGDATADIR
#define CARVE_PKGDATADIR "/usr/local/share/carve"
#endif

const char *datadir_sub(datadir_kind k) { return k == DATADIR_STDLIB ? "stdlib-tactics" : "profiles"; }

size_t datadir_next(const char **list, const char **dir) {
  const char *p = *list;
  while (*p == ':') p++;
  size_t n = strcspn(p, ":");
  *dir = p;
  *list = p + n;
  return n;
}

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The two lists, worked out at the first call and kept in static storage
** (nothing on the heap outlives a call: carve's leak and out-of-memory
** tests count every allocation). A list longer than LIST_MAX keeps the
** folders that fit. */
#define LIST_MAX 16384
static char lists[2][LIST_MAX];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The installed data folder found from the binary into out ("" when the
** binary's path is unknown): the path from bindir to pkgdatadir applied to
** the folder that holds the binary. The components the two share are
** kept, one folder up for each further component of bindir, then the rest
** of pkgdatadir. */
static void relocate(const char *exe_dir, char *out, size_t cap) {
  const char *b = CARVE_BINDIR, *d = CARVE_PKGDATADIR;
  size_t common = 0;                   /* length of the shared leading components */
  for (size_t i = 0;; i++) {
    int bend = b[i] == 0 || b[i] == '/', dend = d[i] == 0 || d[i] == '/';
    if (bend && dend) { common = i; if (!b[i] || !d[i]) break; continue; }
    if (b[i] != d[i]) break;
  }
  int up = 0;
  for (const char *p = b + common; *p; p++) if (*p == '/' && p[1] && p[1] != '/') up++;
  out[0] = 0;
  if (strlen(exe_dir) >= cap) return;
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", exe_dir);
  for (int i = 0; i < up; i++) {
    char *slash = strrchr(dir, '/');
    if (!slash) return;
    if (slash == dir) slash[1] = 0; else *slash = 0;
  }
  const char *rest = d + common;
  while (*rest == '/') rest++;
  size_t n = strlen(dir);
  if ((size_t)snprintf(out, cap, "%s%s%s", dir, *rest && n && dir[n - 1] != '/' ? "/" : "", rest) >= cap) out[0] = 0;
}

/* realpath into malloc'd memory; NULL when path cannot be resolved (out of
** memory is mem.h's one message, not a folder quietly left out). */
static char *real(const char *path) {
  errno = 0;
  char *r = realpath(path, NULL);
  if (!r && errno == ENOMEM) mem_oom();
  return r;
}

/* Append dir to the list unless it is there already. */
static void add(strbuf *b, const char *dir, size_t n) {
  if (!n) return;
  const char *l = sb_str(b), *x;
  size_t m;
  while ((m = datadir_next(&l, &x))) if (m == n && !strncmp(x, dir, n)) return;
  if (b->n) sb_putc(b, ':');
  sb_put(b, dir, n);
}

static void add_sub(strbuf *b, const char *dir, size_t n, const char *sub) {
  strbuf t;
  sb_init(&t);
  sb_printf(&t, "%.*s%s%s", (int)n, dir, n && dir[n - 1] == '/' ? "" : "/", sub);
  add(b, t.p, t.n);
  sb_free(&t);
}

static void compute(void) {
  char exe[PATH_MAX], data[PATH_MAX] = "";
  int in_build_tree = 0;
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char *slash = len > 0 ? (exe[len] = 0, strrchr(exe, '/')) : NULL;
  if (slash) {
    *slash = 0;
    relocate(exe[0] ? exe : "/", data, sizeof data);
#ifdef CARVE_BUILD_DIR
    char *build = real(CARVE_BUILD_DIR);
    if (build) {
      size_t k = strlen(build);
      in_build_tree = !strncmp(exe, build, k) && (exe[k] == 0 || exe[k] == '/');
      free(build);
    }
#endif
  }
  for (int k = 0; k < 2; k++) {
    const char *sub = datadir_sub((datadir_kind)k), *dir;
    strbuf b;
    sb_init(&b);
    size_t n;
    const char *own = getenv(k == DATADIR_STDLIB ? "CARVE_STDLIB" : "CARVE_PROFILES");
    if (own) while ((n = datadir_next(&own, &dir))) add(&b, dir, n);
    const char *path = getenv("CARVE_PATH");
    if (path) while ((n = datadir_next(&path, &dir))) add_sub(&b, dir, n, sub);
    strbuf inst;
    sb_init(&inst);
    if (data[0]) sb_printf(&inst, "%s/%s", data, sub);
    if (data[0] && is_dir(inst.p)) add(&b, inst.p, inst.n);
#ifdef CARVE_SOURCE_DIR
    else if (in_build_tree) {          /* abs_srcdir is build/.. in a tree built beside its sources */
      char *src = real(CARVE_SOURCE_DIR);
      add_sub(&b, src ? src : CARVE_SOURCE_DIR, strlen(src ? src : CARVE_SOURCE_DIR), sub);
      free(src);
    }
#endif
    else if (data[0]) add(&b, inst.p, inst.n);
    if (!in_build_tree) add_sub(&b, CARVE_PKGDATADIR, strlen(CARVE_PKGDATADIR), sub);
    sb_free(&inst);
    size_t keep = b.n;
    while (keep >= LIST_MAX) {         /* the folders that fit, whole */
      const char *colon = memrchr(b.p, ':', keep);
      keep = colon ? (size_t)(colon - b.p) : 0;
    }
    memcpy(lists[k], sb_str(&b), keep);
    lists[k][keep] = 0;
    sb_free(&b);
  }
}

const char *datadir_path(datadir_kind k) {
  pthread_once(&once, compute);
  return lists[k == DATADIR_STDLIB ? 0 : 1];
}

static int by_name(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

const char *datadir_names(arena *a, const char *list, const char *const *exts) {
  int cap = 16, k = 0;
  char **names = mem_alloc(sizeof *names * (size_t)cap);
  const char *x;
  size_t n;
  while ((n = datadir_next(&list, &x))) {
    DIR *dp = opendir(arena_strndup(a, x, n));
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
      size_t m = strlen(e->d_name), el = 0;
      for (int i = 0; exts[i] && !el; i++) {
        size_t l = strlen(exts[i]);
        if (m > l && !strcmp(e->d_name + m - l, exts[i])) el = l;
      }
      if (!el) continue;
      if (k == cap) names = mem_realloc(names, sizeof *names * (size_t)(cap *= 2));
      names[k++] = (char *)arena_strndup(a, e->d_name, m - el);
    }
    if (dp) closedir(dp);
  }
  mem_sort(names, (size_t)k, sizeof *names, by_name);
  strbuf b;
  sb_init(&b);
  for (int i = 0; i < k; i++)
    if (!i || strcmp(names[i], names[i - 1])) sb_printf(&b, "%s%s", b.n ? ", " : "", names[i]);
  const char *r = arena_strndup(a, sb_str(&b), b.n);
  sb_free(&b);
  free(names);
  return r;
}
