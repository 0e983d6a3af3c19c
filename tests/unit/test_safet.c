/*
** test_safet.c: safetensors round trips, the golden ops file, every kind
** of corrupt file with its message, and BF16/F16 conversion.
*/
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/safet.h"

static char dir[64], err[512];

static void setup(void) {
  strcpy(dir, "/tmp/carve-safet-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  err[0] = 0;
}

static void teardown(void) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *de;
    char p[512];
    while ((de = readdir(d)))
      if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        unlink(p);
      }
    closedir(d);
  }
  rmdir(dir);
}

TestSuite(safet, .init = setup, .fini = teardown);

static const char *path_of(const char *name) {
  static char p[4][256];
  static int k;
  k = (k + 1) % 4;
  snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
  return p[k];
}

/* a file from a header text (its length prefixed) and raw data bytes */
static const char *raw_file(const char *name, const char *header, const void *data, size_t n) {
  const char *p = path_of(name);
  FILE *f = fopen(p, "wb");
  uint64_t len = strlen(header);
  unsigned char l8[8];
  for (int b = 0; b < 8; b++) l8[b] = (unsigned char)(len >> (8 * b));
  fwrite(l8, 1, 8, f);
  fwrite(header, 1, len, f);
  if (n) fwrite(data, 1, n, f);
  fclose(f);
  return p;
}

/* the message of opening a broken file, with the directory cut off */
static const char *open_error(const char *p) {
  st_file *f = st_open(p, err, sizeof err);
  cr_assert_null(f, "%s opened", p);
  size_t dl = strlen(dir);
  cr_assert_eq(strncmp(err, dir, dl), 0, "%s", err);
  return err + dl + 1;
}

static int count_files(void) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d))) n += de->d_name[0] != '.';
  closedir(d);
  return n;
}

Test(safet, round_trip_f32_i32) {
  float w[6] = {1.5f, -2, 3, 4e-30f, INFINITY, -0.0f}, s = 42;
  int32_t ids[4] = {1, -7, 2147483647, 0};
  int64_t ws[2] = {2, 3}, is[2] = {2, 2}, zs[2] = {0, 5};
  st_out ts[] = {
    {"w", RT_F32, 2, ws, w},
    {"ids", RT_I32, 2, is, ids},
    {"scalar", RT_F32, 0, NULL, &s},
    {"odd \"name\"\\\n\xc3\xa9", RT_F32, 1, ws, w},
    {"empty", RT_F32, 2, zs, w},
  };
  const char *p = path_of("rt.safetensors");
  cr_assert_eq(st_write(p, ts, 5, err, sizeof err), 0, "%s", err);
  cr_assert_eq(count_files(), 1, "no temporary file left");
  st_file *f = st_open(p, err, sizeof err);
  cr_assert_not_null(f, "%s", err);
  cr_assert_eq(st_count(f), 5);
  /* sorted by name */
  for (int i = 1; i < st_count(f); i++) cr_assert(strcmp(st_at(f, i - 1)->name, st_at(f, i)->name) < 0);
  const st_tensor *t = st_find(f, "w");
  cr_assert_not_null(t);
  cr_assert_eq(t->dtype, ST_F32);
  cr_assert_eq(t->rank, 2);
  cr_assert_eq(t->shape[1], 3);
  cr_assert_eq(t->nbytes, 24);
  float back[6];
  int64_t off[2] = {0, 0};
  cr_assert_eq(st_read_block(f, "w", RT_F32, 2, ws, off, ws, back, err, sizeof err), 0, "%s", err);
  cr_assert_eq(memcmp(back, w, sizeof w), 0);
  /* a block: rows 0..1, columns 1..2 */
  int64_t bo[2] = {0, 1}, bl[2] = {2, 2};
  cr_assert_eq(st_read_block(f, "w", RT_F32, 2, ws, bo, bl, back, err, sizeof err), 0, "%s", err);
  cr_assert_eq(back[0], -2);
  cr_assert_eq(back[1], 3);
  cr_assert(isinf(back[2]));
  cr_assert_eq(back[3], -0.0f);
  int32_t ib[4];
  cr_assert_eq(st_read_block(f, "ids", RT_I32, 2, is, off, is, ib, err, sizeof err), 0, "%s", err);
  cr_assert_eq(memcmp(ib, ids, sizeof ids), 0);
  float sb = 0;
  cr_assert_eq(st_read_block(f, "scalar", RT_F32, 0, NULL, NULL, NULL, &sb, err, sizeof err), 0, "%s", err);
  cr_assert_eq(sb, 42);
  cr_assert_not_null(st_find(f, "odd \"name\"\\\n\xc3\xa9"), "escaped names come back");
  cr_assert_eq(st_find(f, "empty")->nbytes, 0);
  st_close(f);
  /* the header is padded to 8 bytes, and names are escaped */
  FILE *fp = fopen(p, "rb");
  unsigned char l8[8];
  cr_assert_eq(fread(l8, 1, 8, fp), 8);
  uint64_t hl = 0;
  for (int b = 7; b >= 0; b--) hl = hl << 8 | l8[b];
  cr_assert_eq(hl % 8, 0);
  char *h = calloc(1, hl + 1);
  cr_assert_eq(fread(h, 1, hl, fp), hl);
  fclose(fp);
  cr_assert(strstr(h, "\"odd \\\"name\\\"\\\\\\n\xc3\xa9\""), "%s", h);
  cr_assert(strstr(h, "\"ids\":{\"dtype\":\"I32\",\"shape\":[2,2],\"data_offsets\":[0,16]}"), "%s", h);
  free(h);
  /* overwrite in place */
  float w2[6] = {9, 9, 9, 9, 9, 9};
  ts[0].data = w2;
  cr_assert_eq(st_write(p, ts, 1, err, sizeof err), 0, "%s", err);
  f = st_open(p, err, sizeof err);
  cr_assert_not_null(f, "%s", err);
  cr_assert_eq(st_count(f), 1);
  cr_assert_eq(st_read_block(f, "w", RT_F32, 2, ws, off, ws, back, err, sizeof err), 0, "%s", err);
  cr_assert_eq(back[5], 9);
  st_close(f);
  cr_assert_eq(count_files(), 1);
}

Test(safet, write_errors) {
  float v = 1;
  int64_t sh[1] = {1};
  st_out ts[] = {{"a", RT_F32, 1, sh, &v}, {"a", RT_F32, 1, sh, &v}};
  cr_assert_eq(st_write(path_of("d.safetensors"), ts, 2, err, sizeof err), -1);
  cr_assert(strstr(err, "two tensors of one name ('a')"), "%s", err);
  cr_assert_eq(st_write("/nonexistent-carve-dir/x.safetensors", ts, 1, err, sizeof err), -1);
  cr_assert_str_eq(err, "/nonexistent-carve-dir/x.safetensors: cannot create a file in the folder "
                        "'/nonexistent-carve-dir': No such file or directory");
  cr_assert_eq(st_write("/proc/x.safetensors", ts, 1, err, sizeof err), -1);
  cr_assert(strstr(err, "cannot create a file in the folder '/proc'"), "%s", err);
  cr_assert_eq(count_files(), 0);
}

Test(safet, golden_ops_file) {
  const char *p = SRCDIR "/tests/data/golden_ops.safetensors";
  st_file *f = st_open(p, err, sizeof err);
  cr_assert_not_null(f, "%s", err);
  cr_assert_eq(st_count(f), 167);
  const st_tensor *t = st_find(f, "matmul.in0");
  cr_assert_not_null(t);
  cr_assert_eq(t->dtype, ST_F32);
  cr_assert_eq(t->rank, 3);
  cr_assert_eq(t->shape[0], 2);
  cr_assert_eq(t->shape[2], 4);
  cr_assert_eq(st_find(f, "embedding.in1")->dtype, ST_I32);
  cr_assert_null(st_find(f, "matmul.in9"));
  int64_t gs[3] = {2, 3, 4}, off[3] = {1, 0, 2}, loc[3] = {1, 3, 2};
  float whole[24], blk[6];
  int64_t z[3] = {0};
  cr_assert_eq(st_read_block(f, "matmul.in0", RT_F32, 3, gs, z, gs, whole, err, sizeof err), 0, "%s", err);
  cr_assert_eq(st_read_block(f, "matmul.in0", RT_F32, 3, gs, off, loc, blk, err, sizeof err), 0, "%s", err);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) cr_assert_eq(blk[i * 2 + j], whole[12 + i * 4 + 2 + j]);
  int64_t wrong[3] = {2, 4, 3};
  cr_assert_eq(st_read_block(f, "matmul.in0", RT_F32, 3, wrong, z, wrong, whole, err, sizeof err), -1);
  cr_assert(strstr(err, ": tensor 'matmul.in0' has shape [2, 3, 4] but the model wants [2, 4, 3]"), "%s", err);
  cr_assert_eq(st_read_block(f, "wte", RT_F32, 3, wrong, z, wrong, whole, err, sizeof err), -1);
  cr_assert(strstr(err, "no tensor named 'wte' in "), "%s", err);
  int64_t es[2] = {2, 3};
  cr_assert_eq(st_read_block(f, "embedding.in1", RT_F32, 2, es, z, es, whole, err, sizeof err), -1);
  cr_assert(strstr(err, "tensor 'embedding.in1' is I32 but the model wants F32"), "%s", err);
  st_close(f);
}

typedef struct bad_case {
  const char *header;
  size_t ndata;
  const char *message;
} bad_case;

Test(safet, corrupt_files_say_what_is_wrong) {
  static const bad_case cases[] = {
    {"{\"w1\":{\"dtype\":\"F32\",\"shape\":[10,10],\"data_offsets\":[0,400]}}", 396,
     "tensor 'w1': data_offsets [0, 400) exceed the 396 bytes of data"},
    {"{\"w1\":{\"dtype\":\"F32\",\"shape\":[768,3072],\"data_offsets\":[0,400]}}", 400,
     "tensor 'w1': shape [768, 3072] of F32 takes 9437184 bytes, but data_offsets [0, 400) hold 400"},
    {"{\"w\":{\"dtype\":\"X99\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
     "tensor 'w' has unknown dtype 'X99'"},
    {"{\"w\":{\"dtype\":\"F32\" \"shape\":[1],\"data_offsets\":[0,4]}}", 4,
     "malformed header at byte 20: expected ',' or '}'"},
    {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", 4,
     "malformed header at byte 53: expected ',' or '}' but the header ends"},
    {"{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4,
     "malformed header at byte 29: expected a non-negative integer"},
    {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4,
     "malformed header at byte 30: expected an integer"},
    {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 4,
     "malformed header at byte 52: data_offsets has more than 2 entries"},
    {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} x", 4,
     "malformed header at byte 55: unexpected text after the header object"},
    {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"v\":{\"dtype\":\"F32\",\"shape\":[1],"
     "\"data_offsets\":[2,6]}}", 8,
     "tensors 'w' and 'v' overlap in the data ([0, 4) and [2, 6))"},
    {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"w\":{\"dtype\":\"F32\",\"shape\":[1],"
     "\"data_offsets\":[4,8]}}", 8,
     "tensor 'w' appears twice in the header"},
    {"{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "tensor 'w' has no dtype"},
    {"{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, "tensor 'w' has no shape"},
    {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "tensor 'w' has no data_offsets"},
    {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4,
     "tensor 'w': data_offsets [4, 0) end before they begin"},
    {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,9],\"data_offsets\":[0,4]}}", 4,
     "malformed header at byte 61: shape has more than 16 entries"},
    {"{\"w\\q\":1}", 0, "malformed header at byte 3: bad escape '\\q'"},
    {"{\"w\\u0000\":1}", 0, "malformed header at byte 3: NUL character in a string"},
    {"{\"w", 0, "malformed header at byte 3: unterminated string"},
    {"{\"w\\ud800x\":1}", 0, "malformed header at byte 3: lone surrogate"},
    {"{\"w\\u12\":1}", 0, "malformed header at byte 5: bad \\u escape"},
    {"[]", 0, "malformed header at byte 0: expected '{'"},
    {"", 0, "malformed header at byte 0: expected '{' but the header ends"},
    {"{\"__metadata__\":[1]}", 0, "malformed header at byte 16: __metadata__ must be an object"},
    {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
     "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]}}", 4, "nested too deeply"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    unsigned char data[400] = {0};
    char nm[32];
    snprintf(nm, sizeof nm, "bad%zu.safetensors", i);
    const char *msg = open_error(raw_file(nm, cases[i].header, data, cases[i].ndata));
    char want[300];
    snprintf(want, sizeof want, "%s: %s", nm, cases[i].message);
    if (strstr(cases[i].message, "nested")) cr_assert(strstr(msg, cases[i].message), "case %zu: %s", i, msg);
    else cr_assert_str_eq(msg, want, "case %zu: %s", i, msg);
  }
}

Test(safet, file_level_errors) {
  const char *p = path_of("short.safetensors");
  FILE *f = fopen(p, "wb");
  fwrite("abcde", 1, 5, f);
  fclose(f);
  cr_assert_str_eq(open_error(p), "short.safetensors: file of 5 bytes is too short for safetensors (at least 8)");
  p = path_of("empty.safetensors");
  fclose(fopen(p, "wb"));
  cr_assert_str_eq(open_error(p), "empty.safetensors: file of 0 bytes is too short for safetensors (at least 8)");
  /* header length past the end */
  p = path_of("long.safetensors");
  f = fopen(p, "wb");
  unsigned char l8[8] = {0x00, 0x10, 0, 0, 0, 0, 0, 0};
  fwrite(l8, 1, 8, f);
  fwrite("{}", 1, 2, f);
  fclose(f);
  cr_assert_str_eq(open_error(p), "long.safetensors: header length 4096 exceeds the file size (10 bytes); is it a safetensors file?");
  /* a header over 100 MiB (a sparse file) */
  p = path_of("huge.safetensors");
  int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  uint64_t hl = (100u << 20) + 8;
  for (int b = 0; b < 8; b++) l8[b] = (unsigned char)(hl >> (8 * b));
  cr_assert_eq(write(fd, l8, 8), 8);
  cr_assert_eq(ftruncate(fd, (off_t)(hl + 16)), 0);
  close(fd);
  cr_assert_str_eq(open_error(p), "huge.safetensors: header of 104857608 bytes is over the 100 MiB limit");
  /* missing file, a folder */
  cr_assert_null(st_open(path_of("nope.safetensors"), err, sizeof err));
  cr_assert(strstr(err, "nope.safetensors: No such file or directory"), "%s", err);
  cr_assert_null(st_open(dir, err, sizeof err));
  cr_assert(strstr(err, "is a folder"), "%s", err);
}

Test(safet, metadata_escapes_and_unsupported_dtypes) {
  unsigned char data[24] = {0};
  const char *p = raw_file("meta.safetensors",
                           "{\"__metadata__\":{\"format\":\"pt\",\"note\":\"a \\\"quoted\\\" \\u00e9\"},"
                           "\"caf\\u00e9 \\ud83d\\ude00\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],"
                           "\"extra\":{\"k\":[1,2.5e3,true,null]}},"
                           "\"d\":{\"dtype\":\"U64\",\"shape\":[2],\"data_offsets\":[8,24]}}   ",
                           data, sizeof data);
  st_file *f = st_open(p, err, sizeof err);
  cr_assert_not_null(f, "%s", err);
  cr_assert_eq(st_count(f), 2);
  cr_assert_not_null(st_find(f, "caf\xc3\xa9 \xf0\x9f\x98\x80"));
  cr_assert_eq(st_find(f, "d")->dtype, ST_OTHER);
  double buf[2];
  int64_t sh[1] = {2}, z[1] = {0};
  cr_assert_eq(st_read_block(f, "d", RT_F32, 1, sh, z, sh, buf, err, sizeof err), -1);
  cr_assert(strstr(err, "meta.safetensors: tensor 'd' is U64; carve reads F32, BF16, F16, F64, I32, I64, I8, U8, I16, U16, U32 and BOOL"), "%s", err);
  st_close(f);
}

/* the unsigned and 16-bit integers JAX programs use (ui32 PRNG keys): read in
   their own type, widened into i64, and refused where they do not fit */
Test(safet, unsigned_and_16_bit_integers) {
  unsigned char data[18];
  uint32_t u[3] = {0, 4294967295u, 7};
  int16_t h[3] = {-32768, 5, 32767};
  memcpy(data, u, 12);
  memcpy(data + 12, h, 6);
  const char *p = raw_file("u32.safetensors",
                           "{\"u\":{\"dtype\":\"U32\",\"shape\":[3],\"data_offsets\":[0,12]},"
                           "\"h\":{\"dtype\":\"I16\",\"shape\":[3],\"data_offsets\":[12,18]}}",
                           data, sizeof data);
  st_file *f = st_open(p, err, sizeof err);
  cr_assert_not_null(f, "%s", err);
  int64_t sh[1] = {3}, z[1] = {0};
  uint32_t got[3];
  int64_t wide[3];
  int16_t gh[3];
  cr_assert_eq(st_read_block(f, "u", RT_UI32, 1, sh, z, sh, got, err, sizeof err), 0, "%s", err);
  cr_assert(got[0] == 0 && got[1] == 4294967295u && got[2] == 7);
  cr_assert_eq(st_read_block(f, "u", RT_I64, 1, sh, z, sh, wide, err, sizeof err), 0, "%s", err);
  cr_assert(wide[1] == 4294967295LL);
  cr_assert_eq(st_read_block(f, "h", RT_I16, 1, sh, z, sh, gh, err, sizeof err), 0, "%s", err);
  cr_assert(gh[0] == -32768 && gh[2] == 32767);
  uint8_t small[3];
  cr_assert_eq(st_read_block(f, "u", RT_UI8, 1, sh, z, sh, small, err, sizeof err), -1);
  cr_assert(strstr(err, "holds 4294967295, which does not fit the model's U8"), "%s", err);
  st_close(f);
}

/* PyTorch's defaults: ids as I64 (torch.long) and float64 tensors are read,
   converted; an id that does not fit I32 is refused by name */
Test(safet, pytorch_int64_and_float64) {
  int64_t ids[4] = {3, 0, 50256, 7};
  double w[3] = {0.5, -1.25, 1e-3};
  unsigned char data[56];
  memcpy(data, ids, 32);
  memcpy(data + 32, w, 24);
  const char *p = raw_file("torch.safetensors",
                           "{\"ids\":{\"dtype\":\"I64\",\"shape\":[2,2],\"data_offsets\":[0,32]},"
                           "\"w\":{\"dtype\":\"F64\",\"shape\":[3],\"data_offsets\":[32,56]}}",
                           data, sizeof data);
  st_file *f = st_open(p, err, sizeof err);
  cr_assert_not_null(f, "%s", err);
  int32_t got[4];
  int64_t s2[2] = {2, 2}, z2[2] = {0, 0}, s1[1] = {3}, z1[1] = {0};
  cr_assert_eq(st_read_block(f, "ids", RT_I32, 2, s2, z2, s2, got, err, sizeof err), 0, "%s", err);
  for (int i = 0; i < 4; i++) cr_assert_eq(got[i], (int32_t)ids[i]);
  float wf[3];
  cr_assert_eq(st_read_block(f, "w", RT_F32, 1, s1, z1, s1, wf, err, sizeof err), 0, "%s", err);
  for (int i = 0; i < 3; i++) cr_assert_float_eq(wf[i], (float)w[i], 0);
  cr_assert_eq(st_read_block(f, "w", RT_I32, 1, s1, z1, s1, got, err, sizeof err), -1);
  cr_assert(strstr(err, "tensor 'w' is F64 but the model wants I32 (or I64)"), "%s", err);
  st_close(f);
  ids[2] = (int64_t)1 << 40;
  memcpy(data, ids, 32);
  p = raw_file("big.safetensors", "{\"ids\":{\"dtype\":\"I64\",\"shape\":[2,2],\"data_offsets\":[0,32]}}", data, 32);
  f = st_open(p, err, sizeof err);
  cr_assert_not_null(f, "%s", err);
  cr_assert_eq(st_read_block(f, "ids", RT_I32, 2, s2, z2, s2, got, err, sizeof err), -1);
  cr_assert(strstr(err, "tensor 'ids' (I64) holds 1099511627776, which does not fit the model's I32"), "%s", err);
  st_close(f);
}

/* bytes changed at random in the header and the length: a message or a
   file whose tensors all read, never a crash (run under ASan) */
Test(safet, random_damage_never_crashes) {
  float w[12];
  int32_t ids[3] = {1, 2, 3};
  for (int i = 0; i < 12; i++) w[i] = (float)i;
  int64_t ws[2] = {3, 4}, is[1] = {3};
  st_out ts[] = {{"a.w", RT_F32, 2, ws, w}, {"ids", RT_I32, 1, is, ids}, {"b", RT_F32, 1, ws + 1, w}};
  const char *p = path_of("ok.safetensors");
  cr_assert_eq(st_write(p, ts, 3, err, sizeof err), 0, "%s", err);
  FILE *f = fopen(p, "rb");
  unsigned char orig[1024];
  size_t n = fread(orig, 1, sizeof orig, f);
  fclose(f);
  uint64_t r = 99;
  const char *q = path_of("damaged.safetensors");
  for (int it = 0; it < 2000; it++) {
    unsigned char buf[1024];
    memcpy(buf, orig, n);
    size_t len = n;
    int flips = 1 + it % 4;
    for (int k = 0; k < flips; k++) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      size_t at = (r >> 33) % (it % 5 == 0 ? 8 : n);
      static const char pool[] = "{}[]\\\",:0123456789- \x01\x80zu";
      buf[at] = (unsigned char)((r >> 20) & 1 ? pool[(r >> 40) % (sizeof pool - 1)] : (r >> 24) & 0xFF);
    }
    if (it % 7 == 0) len = (r >> 10) % n;       /* truncated */
    FILE *g = fopen(q, "wb");
    fwrite(buf, 1, len, g);
    fclose(g);
    err[0] = 0;
    st_file *sf = st_open(q, err, sizeof err);
    if (!sf) {
      cr_assert(strncmp(err, q, strlen(q)) == 0, "message without the file name: %s", err);
      continue;
    }
    for (int i = 0; i < st_count(sf); i++) {
      const st_tensor *t = st_at(sf, i);
      int64_t cnt = 1, z[RT_MAXRANK] = {0};
      for (int d = 0; d < t->rank; d++) cnt *= t->shape[d];
      if (cnt > 1 << 20) continue;
      void *dst = malloc((size_t)(cnt ? cnt : 1) * 4);
      st_read_block(sf, t->name, t->dtype == ST_I32 ? RT_I32 : RT_F32, t->rank, t->shape, z, t->shape, dst, err,
                    sizeof err);
      free(dst);
    }
    st_close(sf);
  }
}

static uint16_t bf16_of(float v) {
  uint32_t b;
  memcpy(&b, &v, 4);
  return (uint16_t)(b >> 16);
}

Test(safet, bf16_and_f16_convert) {
  /* F16: 1, -2, 65504 (max), 2^-14 (min normal), 2^-24 (min subnormal), a subnormal, +inf, -inf, nan, -0 */
  uint16_t h[10] = {0x3C00, 0xC000, 0x7BFF, 0x0400, 0x0001, 0x0155, 0x7C00, 0xFC00, 0x7E00, 0x8000};
  float hw[10] = {1, -2, 65504, 6.103515625e-05f, 5.9604644775390625e-08f, 341 * 5.9604644775390625e-08f,
                  INFINITY, -INFINITY, NAN, -0.0f};
  float bv[5] = {1.5f, -3.25f, 1e-40f, INFINITY, 6.5e20f};
  uint16_t b[5];
  for (int i = 0; i < 5; i++) b[i] = bf16_of(bv[i]);
  unsigned char data[30];
  for (int i = 0; i < 10; i++) { data[2 * i] = (unsigned char)h[i]; data[2 * i + 1] = (unsigned char)(h[i] >> 8); }
  for (int i = 0; i < 5; i++) { data[20 + 2 * i] = (unsigned char)b[i]; data[21 + 2 * i] = (unsigned char)(b[i] >> 8); }
  const char *p = raw_file("half.safetensors",
                           "{\"h\":{\"dtype\":\"F16\",\"shape\":[10],\"data_offsets\":[0,20]},"
                           "\"b\":{\"dtype\":\"BF16\",\"shape\":[5],\"data_offsets\":[20,30]}}",
                           data, sizeof data);
  st_file *f = st_open(p, err, sizeof err);
  cr_assert_not_null(f, "%s", err);
  float got[10];
  int64_t n10[1] = {10}, n5[1] = {5}, z[1] = {0};
  cr_assert_eq(st_read_block(f, "h", RT_F32, 1, n10, z, n10, got, err, sizeof err), 0, "%s", err);
  for (int i = 0; i < 10; i++) {
    if (isnan(hw[i])) cr_assert(isnan(got[i]));
    else cr_assert(got[i] == hw[i] && signbit(got[i]) == signbit(hw[i]), "f16 %d: %g vs %g", i, got[i], hw[i]);
  }
  cr_assert_eq(st_read_block(f, "b", RT_F32, 1, n5, z, n5, got, err, sizeof err), 0, "%s", err);
  for (int i = 0; i < 5; i++) {
    uint32_t bits = (uint32_t)b[i] << 16;
    float w;
    memcpy(&w, &bits, 4);
    cr_assert_eq(got[i], w);
  }
  cr_assert_eq(got[0], 1.5f);
  cr_assert_eq(got[1], -3.25f);
  cr_assert_eq(st_read_block(f, "b", RT_I32, 1, n5, z, n5, got, err, sizeof err), -1);
  cr_assert(strstr(err, "tensor 'b' is BF16 but the model wants I32"), "%s", err);
  st_close(f);
}
