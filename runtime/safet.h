/*
** safet.h: safetensors files (the ecosystem's format: an 8-byte little-
** endian header length, a JSON header naming each tensor's dtype, shape
** and data_offsets, then the raw data). Full tensors are keyed by name;
** a device reads only its slice. Floats (F32, BF16, F16, F64) are read
** into the float type the model declares, integers (I32, I64, I8, U8,
** BOOL) into its integer type, I64 ids (PyTorch's) narrowed when every
** value fits. Every failure is a message naming the file and the tensor.
*/
#ifndef runtime_safet_h
#define runtime_safet_h

#include <stddef.h>
#include <stdint.h>
#include "runtime/prog.h"

typedef enum st_dtype { ST_F32, ST_I32, ST_BF16, ST_F16, ST_F64, ST_I64, ST_BOOL, ST_I8, ST_U8, ST_I16, ST_U16, ST_U32,
                        ST_OTHER } st_dtype;

typedef struct st_tensor {
  const char *name;
  st_dtype dtype;
  int rank;
  int64_t shape[RT_MAXRANK];
  const unsigned char *data;   /* into the mapped file */
  size_t nbytes;
} st_tensor;

typedef struct st_file st_file;

/* Open and validate the whole header (offsets in bounds, sizes consistent,
** no overlaps, header under 100 MiB). NULL with err set on failure. */
st_file *st_open(const char *path, char *err, size_t errlen);
void     st_close(st_file *f);
int      st_count(const st_file *f);
const st_tensor *st_at(const st_file *f, int i);
const st_tensor *st_find(const st_file *f, const char *name);

/* Copy the block [off, off+local) of the named tensor into dst as `want`
** (a float type from any float, an integer type from any integer). Checks that the tensor exists and
** its shape equals global_shape; -1 with err naming the tensor otherwise. */
int st_read_block(const st_file *f, const char *name, rt_dtype want, int rank,
                  const int64_t *global_shape, const int64_t *off, const int64_t *local,
                  void *dst, char *err, size_t errlen);

typedef struct st_out {
  const char *name;
  rt_dtype dtype;
  int rank;
  const int64_t *shape;
  const void *data;
} st_out;

/* Write tensors to path atomically (a temporary file in the same folder,
** then rename). Tensors are written sorted by name, as the format wants. */
int st_write(const char *path, const st_out *ts, int n, char *err, size_t errlen);

#endif
