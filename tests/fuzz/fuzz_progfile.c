/* fuzz_progfile.c: the program-file reader (interp/drive/progfile.c, what
** `carve bisect` reads). The input is a program file (`carve lower -o`);
** its checksum is stamped again first (the FNV-1a of everything before the
** first `end` line), so that a mutation reaches the reader's checks rather
** than the checksum's. A file that reads then goes through what bisect
** does before it runs one (interp/drive/bisect.c, collect_all): the
** in-process mesh (64 devices at most), the memory it needs, and on one
** device drive_adopt and drive_start (every leaf bound from its init),
** then the executor's own check of every buffer and instruction
** (check_prog, on its first run). Its kernels end the run at the first
** instruction by design: the checks are fuzzed, not the arithmetic.
** Where the checks pass, the report's account of each value
** (bisect_made_by) is written too, and a program of one device that needs
** at most 1 MiB then runs once with the real kernels: what the checks let
** through must not read or write outside its buffers. */
#include "fuzz.h"
#include "interp/drive/bisect.h"
#include "runtime/comm_local.h"
#include "runtime/mesh.h"

#include <sys/mman.h>
#include <unistd.h>

#define STOP "fuzz: not run"
#define NEED_MAX ((size_t)256 << 20)    /* the most one device's program may need here (bisect: the machine's memory) */
#define RUN_MAX ((size_t)1 << 20)       /* the most a program run for real may need */

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 1099511628211ull; }
  return h;
}

/* The input with the word after its first `end` line's "end" replaced by the
** checksum of what comes before (malloc'd, in *n); the input as it is when
** no line begins with "end". */
static char *restamp(const uint8_t *data, size_t size, size_t *n) {
  const char *t = (const char *)data, *e = t + size;
  char *out = malloc(size + 32);
  for (const char *line = t; line < e; ) {
    const char *p = line;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    if (e - p >= 3 && !memcmp(p, "end", 3) && (p + 3 == e || p[3] == ' ' || p[3] == '\t' || p[3] == '\n')) {
      const char *w = p + 3;
      while (w < e && (*w == ' ' || *w == '\t')) w++;
      const char *we = w;
      while (we < e && *we != ' ' && *we != '\t' && *we != '\n') we++;
      size_t k = (size_t)(p - t);
      memcpy(out, t, k);
      k += (size_t)snprintf(out + k, 32, "end %016llx", (unsigned long long)fnv1a(t, (size_t)(p - t)));
      memcpy(out + k, we, (size_t)(e - we));
      *n = k + (size_t)(e - we);
      return out;
    }
    const char *nl = memchr(line, '\n', (size_t)(e - line));
    line = nl ? nl + 1 : e;
  }
  memcpy(out, t, size);
  *n = size;
  return out;
}

static int stop(void *ctx, const rt_instr *ins, void *out, void *const *in, char *err, size_t errlen) {
  (void)ctx; (void)ins; (void)out; (void)in;
  return diag_errbuf(err, errlen, STOP);
}

/* What bisect does with a file that reads, up to running it. */
static void before_running(progfile *f) {
  rt_local *l = rt_local_new(&f->prog);          /* more than 64 devices: refused */
  if (!l) return;
  rt_local_free(l);
  rt_exec *e = rt_exec_new(&f->prog, rt_backend_cpu(), NULL);
  size_t need = rt_exec_need(e);
  rt_exec_free(e);
  if (need > NEED_MAX / (size_t)rt_mesh_devices(&f->prog)) return;
  rt_backend be = *rt_backend_cpu();             /* the CPU's memory and dtypes, kernels that stop */
  for (int k = 0; k < RT_NOPS; k++) if (be.kernels[k]) be.kernels[k] = stop;
  drive r;
  drive_adopt(&r, &f->prog, &f->lr, f->leaves);
  char err[512] = "";
  int passed = 0, rc = drive_start(&r, &be, NULL, rt_world_single(), NULL, NULL, err, sizeof err);
  if (rc == 0) {
    rc = rt_exec_run(r.e, err, sizeof err);     /* 0: a program without instructions */
    passed = rc == 0 || strstr(err, STOP) || !strncmp(err, "program needs collectives", 25);
  }
  drive_free(&r);
  if (!passed) return;
  strbuf b;
  sb_init(&b);
  for (int v = 0; v < f->nvals; v++) bisect_made_by(&b, f, v);
  sb_free(&b);
  /* a small program of one device that passed runs for real: what the
  ** checks let through, the kernels must bear (ASan says where not) */
  if (rt_mesh_devices(&f->prog) > 1 || need > RUN_MAX) return;
  drive_adopt(&r, &f->prog, &f->lr, f->leaves);
  if (drive_start(&r, rt_backend_cpu(), NULL, rt_world_single(), NULL, NULL, err, sizeof err) == 0) rt_exec_run(r.e, err, sizeof err);
  drive_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int fd = -1;
  static char path[64];
  if (fd < 0) {
    fd = memfd_create("fuzz.prog", 0);
    if (fd < 0) abort();
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  }
  size_t n;
  char *text = restamp(data, size, &n);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, text, n, 0) != (ssize_t)n) abort();
  free(text);
  diag d;
  diag_init(&d);
  const char *const names[] = {path};
  progfile f;
  if (progfile_read(&f, &d, path) < 0) fuzz_failed_well(&d, names, 1);
  else before_running(&f);
  progfile_free(&f);
  diag_free(&d);
  return 0;
}
