/*
** test_file.c: where carve writes files (issue 11 item 6). Targets that
** are not regular files or that the command reads are refused; the
** temporary file never outlives a failure or a SIGINT/SIGTERM; a symbolic
** link is written through.
*/
#include <criterion/criterion.h>

#include "runtime/safet.h"
#include "util/file.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static void make_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/carve_file_XXXXXX");
  cr_assert(mkdtemp(dir));
}

/* files in dir whose name holds ".tmp." */
static int temporaries(void) {
  DIR *d = opendir(dir);
  cr_assert(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += strstr(e->d_name, ".tmp.") != NULL;
  closedir(d);
  return n;
}

static void cleanup(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_assert(system(cmd) == 0);
}

static void path_in(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

Test(file, refuses_what_is_not_a_regular_file) {
  char err[256];
  cr_expect(file_check_target("/dev/null", NULL, 0, err, sizeof err) < 0);
  cr_expect(strstr(err, "'/dev/null' is a character device"), "%s", err);
  cr_expect(file_check_target("/tmp", NULL, 0, err, sizeof err) < 0);
  cr_expect(strstr(err, "is a directory"), "%s", err);
  cr_expect(file_check_target("/no/such/folder/x", NULL, 0, err, sizeof err) < 0);
  cr_expect(strstr(err, "no folder '/no/such/folder'"), "%s", err);
  cr_expect(file_check_target("", NULL, 0, err, sizeof err) < 0);
  make_dir();
  char fifo[128], file[128];
  path_in(fifo, sizeof fifo, "fifo");
  cr_assert(mkfifo(fifo, 0600) == 0);
  cr_expect(file_check_target(fifo, NULL, 0, err, sizeof err) < 0);
  cr_expect(strstr(err, "is a FIFO"), "%s", err);
  path_in(file, sizeof file, "new.safetensors");
  cr_expect(file_check_target(file, NULL, 0, err, sizeof err) == 0, "%s", err);
  cleanup();
}

Test(file, refuses_a_file_being_read_under_any_name) {
  char err[256], model[128], other[128], alias[128];
  make_dir();
  path_in(model, sizeof model, "m.cir");
  path_in(other, sizeof other, "./m.cir");
  path_in(alias, sizeof alias, "alias.cir");
  FILE *f = fopen(model, "w");
  fputs("model m {}\n", f);
  fclose(f);
  cr_assert(symlink(model, alias) == 0);
  const file_read reading[2] = {{model, "the model file this command reads"}, {NULL, "the tactic file"}};
  cr_expect(file_check_target(model, reading, 2, err, sizeof err) < 0);
  cr_expect(strstr(err, "is the model file this command reads; write to another file"), "%s", err);
  cr_expect(file_check_target(other, reading, 2, err, sizeof err) < 0);
  cr_expect(file_check_target(alias, reading, 2, err, sizeof err) < 0);
  cr_expect(strstr(err, "alias.cir' is '"), "%s", err);
  char hard[128];                       /* a hard link: another name, the same inode */
  path_in(hard, sizeof hard, "hard.cir");
  cr_assert(link(model, hard) == 0);
  cr_expect(file_check_target(hard, reading, 2, err, sizeof err) < 0);
  cr_expect(strstr(err, "the model file this command reads"), "%s", err);
  char out[128], out2[128];             /* two outputs not yet written: the same name in the same folder */
  path_in(out, sizeof out, "new.tac");
  snprintf(out2, sizeof out2, "%s/./new.tac", dir);
  const file_read outs[1] = {{out, "the file -o writes"}};
  cr_expect(file_check_target(out2, outs, 1, err, sizeof err) < 0);
  cr_expect(strstr(err, "the file -o writes"), "%s", err);
  path_in(out2, sizeof out2, "other.tac");
  cr_expect(file_check_target(out2, outs, 1, err, sizeof err) == 0, "%s", err);
  cleanup();
}

Test(file, a_failed_write_leaves_no_temporary) {
  char err[256], target[128];
  make_dir();
  path_in(target, sizeof target, "is_a_dir");
  cr_assert(mkdir(target, 0700) == 0);
  float x = 1;
  int64_t shape[1] = {1};
  st_out t = {"w", RT_F32, 1, shape, &x};
  cr_expect(st_write(target, &t, 1, err, sizeof err) < 0);       /* the rename over a folder fails */
  cr_expect(temporaries() == 0, "a temporary file was left behind");
  cr_expect(file_write_atomic(target, "x", 1) < 0);
  cr_expect(temporaries() == 0);
  cleanup();
}

Test(file, a_symbolic_link_is_written_through) {
  char real[128], link[128];
  make_dir();
  path_in(real, sizeof real, "real.txt");
  path_in(link, sizeof link, "link.txt");
  cr_assert(file_write_atomic(real, "old", 3) == 0);
  cr_assert(symlink("real.txt", link) == 0);
  cr_assert(file_write_atomic(link, "new", 3) == 0);
  struct stat st;
  cr_expect(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link stays a link");
  FILE *f = fopen(real, "r");
  char buf[8] = "";
  cr_assert(f && fread(buf, 1, 3, f) == 3);
  fclose(f);
  cr_expect(!strcmp(buf, "new"));
  cleanup();
}

/* A child opens a temporary file and is then killed by sig while writing. */
static void killed_while_writing(int sig) {
  char target[128];
  make_dir();
  path_in(target, sizeof target, "out.safetensors");
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    char *tmp;
    signal(sig, SIG_DFL);     /* a suite started in the background inherits SIGINT ignored, and so would keep it */
    int fd = file_tmp_open(target, &tmp);
    if (fd < 0 || write(fd, "partial", 7) != 7) _exit(3);
    raise(sig);
    _exit(4);                                   /* not reached */
  }
  int status;
  cr_assert(waitpid(pid, &status, 0) == pid);
  cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == sig, "the child dies of the signal (status %d)", status);
  cr_expect(temporaries() == 0, "the temporary file outlived signal %d", sig);
  cr_expect(access(target, F_OK) != 0, "no target was made");
  cleanup();
}

Test(file, sigint_removes_the_temporary) { killed_while_writing(SIGINT); }
Test(file, sigterm_removes_the_temporary) { killed_while_writing(SIGTERM); }
