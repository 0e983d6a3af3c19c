/* fuzz_safet.c: the safetensors reader: open, list, and read every tensor whole. */
#include "fuzz.h"
#include "runtime/safet.h"

#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int fd = -1;
  static char path[64];
  if (fd < 0) {
    fd = memfd_create("fuzz.safetensors", 0);
    if (fd < 0) abort();
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  }
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
  char err[512];
  st_file *f = st_open(path, err, sizeof err);
  if (!f) return 0;
  for (int i = 0; i < st_count(f); i++) {
    const st_tensor *t = st_at(f, i);
    if (t->rank < 0 || t->rank > RT_MAXRANK) continue;
    int64_t shape[RT_MAXRANK], off[RT_MAXRANK] = {0};
    uint64_t n = 1;
    int ok = 1;
    for (int k = 0; k < t->rank; k++) {
      shape[k] = t->shape[k];
      if (t->shape[k] < 0 || t->shape[k] > (1 << 20) || (n *= (uint64_t)(t->shape[k] ? t->shape[k] : 1)) > (1u << 22)) ok = 0;
    }
    if (!ok) continue;
    float *buf = malloc(sizeof(float) * (size_t)n + 1);
    st_read_block(f, t->name, RT_F32, t->rank, shape, off, shape, buf, err, sizeof err);
    st_read_block(f, t->name, RT_I32, t->rank, shape, off, shape, buf, err, sizeof err);
    free(buf);
  }
  st_close(f);
  return 0;
}
