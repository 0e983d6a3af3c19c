/*
** file.c: writing a file whole or not at all, and only where a file
** belongs (see file.h).
*/
#include "util/file.h"
#include "util/diag.h"
#include "util/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
** The signal guard. A handler can reach nothing but static storage, so the
** name of the temporary file being written lives here for as long as it
** exists: the one piece of process-wide state in carve, and why it is
** here (one writer at a time; carve writes one file at a time).
*/
static char *volatile guarded;
static struct sigaction saved[3];
static const int guard_signals[3] = {SIGINT, SIGTERM, SIGHUP};

static void on_signal(int sig) {
  char *t = guarded;
  if (t) unlink(t);                      /* async-signal-safe */
  signal(sig, SIG_DFL);
  raise(sig);                            /* die of the signal, as before */
}

static void guard_begin(char *tmp) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  guarded = tmp;
  for (int i = 0; i < 3; i++) {
    sigaction(guard_signals[i], NULL, &saved[i]);
    if (saved[i].sa_handler == SIG_IGN) continue;    /* nohup: leave ignored signals ignored */
    sigaction(guard_signals[i], &sa, NULL);
  }
}

static void guard_end(void) {
  for (int i = 0; i < 3; i++)
    if (saved[i].sa_handler != SIG_IGN) sigaction(guard_signals[i], &saved[i], NULL);
  guarded = NULL;
}

/* the folder of path ("." for a bare name), malloc'd */
static char *folder_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  size_t n = slash == path ? 1 : (size_t)(slash - path);
  char *d = mem_alloc(n + 1);
  memcpy(d, path, n);
  d[n] = 0;
  return d;
}

static const char *kind_of(mode_t m) {
  return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
       : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Do a and b name the same file: the same device and inode where both
** exist; where neither does yet, the same name in the same folder (two
** outputs of one command). */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
  if (ea || eb) return ea && eb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
  if (strcmp(na ? na + 1 : a, nb ? nb + 1 : b)) return 0;
  char *da = folder_of(a), *db = folder_of(b);
  int same = stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  free(da);
  free(db);
  return same;
}

int file_check_target(const char *path, const file_read *reading, int nread, char *err, size_t errlen) {
  struct stat st;
  if (!path[0]) return diag_errbuf(err, errlen, "an empty file name; give the file to write");
  if (stat(path, &st) == 0) {
    if (!S_ISREG(st.st_mode))
      return diag_errbuf(err, errlen, "'%s' is %s; give a regular file or a new name", path, kind_of(st.st_mode));
  } else if (errno != ENOENT) {
    return diag_errbuf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
  } else if (path[strlen(path) - 1] == '/') {
    return diag_errbuf(err, errlen, "'%s' names a folder; give a file name", path);
  }
  for (int i = 0; i < nread; i++) {
    const file_read *x = &reading[i];
    if (!x->path || !same_file(path, x->path)) continue;
    const char *what = x->what ? x->what : "a file this command reads";
    return strcmp(path, x->path)
      ? diag_errbuf(err, errlen, "'%s' is '%s', %s; write to another file", path, x->path, what)
      : diag_errbuf(err, errlen, "'%s' is %s; write to another file", path, what);
  }
  char *dir = folder_of(path);
  int rc = 0;
  if (stat(dir, &st) != 0) rc = diag_errbuf(err, errlen, "cannot write '%s': no folder '%s'", path, dir);
  else if (!S_ISDIR(st.st_mode)) rc = diag_errbuf(err, errlen, "cannot write '%s': '%s' is not a folder", path, dir);
  else if (access(dir, W_OK) != 0) rc = diag_errbuf(err, errlen, "cannot write in the folder '%s' (%s)", dir, strerror(errno));
  free(dir);
  return rc;
}

int file_sync_folder(const char *path) {
  char *dir = folder_of(path);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  free(dir);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  int e = errno;
  close(fd);
  errno = e;
  return rc;
}

/* A symbolic link is written through: the file it names is replaced, the
** link stays. malloc'd. */
static char *target_of(const char *path) {
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    char *r = realpath(path, NULL);
    if (r) return r;
  }
  return strdup(path);
}

int file_tmp_open(const char *path0, char **tmp) {
  char *path = target_of(path0);
  size_t pl = strlen(path);
  char *t = mem_alloc(pl + 12);
  memcpy(t, path, pl);
  memcpy(t + pl, ".tmp.XXXXXX", 12);
  guard_begin(t);                 /* before the file exists: no window without it */
  int fd = mkstemp(t);
  if (fd < 0) {
    int e = errno;
    guard_end();
    free(t);
    free(path);
    errno = e;
    return -1;
  }
  struct stat old;                /* keep the mode of the file replaced */
  fchmod(fd, stat(path, &old) == 0 ? (old.st_mode & 07777) : 0644);
  free(path);
  *tmp = t;
  return fd;
}

void file_tmp_abandon(int fd, char *tmp) {
  int e = errno;
  if (fd >= 0) close(fd);
  unlink(tmp);
  guard_end();
  free(tmp);
  errno = e;
}

int file_tmp_commit(int fd, char *tmp, const char *path0) {
  if (fsync(fd) != 0) { file_tmp_abandon(fd, tmp); return -1; }
  if (close(fd) != 0) { file_tmp_abandon(-1, tmp); return -1; }
  char *path = target_of(path0);
  if (rename(tmp, path) != 0) { file_tmp_abandon(-1, tmp); free(path); return -1; }
  guard_end();
  free(tmp);
  int rc = file_sync_folder(path);
  free(path);
  return rc;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) { if (w == 0) errno = EIO; return -1; }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int file_write_atomic(const char *path, const char *data, size_t n) {
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL; return -1; }
  char *tmp;
  int fd = file_tmp_open(path, &tmp);
  if (fd < 0) return -1;
  if (write_all(fd, data, n) != 0) { file_tmp_abandon(fd, tmp); return -1; }
  return file_tmp_commit(fd, tmp, path);
}
