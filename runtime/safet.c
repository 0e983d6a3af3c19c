/*
** safet.c: safetensors files. The header is parsed by a small JSON
** reader that knows only what this header holds (objects, arrays,
** strings, non-negative integers, and anything else to skip inside
** __metadata__); the data stays in a read-only mapping of the file.
*/
#include "util/diag.h"
#include "util/mem.h"
#include "runtime/safet.h"
#include "runtime/dtype.h"
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/arena.h"

#define ST_MAX_HEADER (100u << 20)

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian; so is this reader");

struct st_file {
  arena mem;
  const char *path;
  unsigned char *map;
  size_t size;
  int n;
  st_tensor *t;          /* sorted by name */
  const char **dtname;   /* each tensor's dtype as the file spells it */
};


/* ---- dtypes ---- */

static const struct { const char *name; st_dtype dt; int size; } dtypes[] = {
  {"F32", ST_F32, 4}, {"I32", ST_I32, 4}, {"BF16", ST_BF16, 2}, {"F16", ST_F16, 2},
  {"F64", ST_F64, 8}, {"I64", ST_I64, 8}, {"U64", ST_OTHER, 8}, {"U32", ST_U32, 4},
  {"I16", ST_I16, 2}, {"U16", ST_U16, 2}, {"I8", ST_I8, 1}, {"U8", ST_U8, 1},
  {"BOOL", ST_BOOL, 1}, {"F8_E4M3", ST_OTHER, 1}, {"F8_E5M2", ST_OTHER, 1},
};

/* the runtime's type of a file's tensor, and the file's name of a runtime type */
static rt_dtype rt_of(st_dtype t) {
  static const rt_dtype m[] = {RT_F32, RT_I32, RT_BF16, RT_F16, RT_F64, RT_I64, RT_I1, RT_I8, RT_UI8, RT_I16, RT_UI16, RT_UI32, RT_F32};
  return m[t];
}

static const char *st_name(rt_dtype t) {
  static const char *const n[] = {"F32", "I32", "BF16", "F16", "F64", "I64", "BOOL", "I8", "U8", "I16", "U16", "U32"};   /* ORDER RT_DTYPE */
  _Static_assert(sizeof n / sizeof n[0] == RT_NDTYPES, "ORDER RT_DTYPE: safetensors names");
  return (unsigned)t < RT_NDTYPES ? n[t] : "F32";
}

/* ---- the header's JSON ---- */

typedef struct jp {
  const char *s;
  size_t n, i;
  arena *a;
  const char *path;
  char *err;
  size_t errlen;
  int failed;
} jp;

static int jerr(jp *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int jerr(jp *j, const char *fmt, ...) {
  if (j->failed) return -1;
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_errbuf(j->err, j->errlen, "%s: malformed header at byte %zu: %s", j->path, j->i, msg);
  j->failed = 1;
  return -1;
}

static void ws(jp *j) {
  while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' || j->s[j->i] == '\r'))
    j->i++;
}

static int peek(jp *j) { ws(j); return j->i < j->n ? (unsigned char)j->s[j->i] : -1; }

static int expect(jp *j, char c) {
  int got = peek(j);
  if (got == c) { j->i++; return 0; }
  if (got < 0) return jerr(j, "expected '%c' but the header ends", c);
  return jerr(j, "expected '%c'", c);
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int hex4(jp *j, unsigned *v) {
  if (j->n - j->i < 4) return jerr(j, "short \\u escape");
  *v = 0;
  for (int k = 0; k < 4; k++) {
    int h = hexval((unsigned char)j->s[j->i + k]);
    if (h < 0) return jerr(j, "bad \\u escape");
    *v = *v * 16 + (unsigned)h;
  }
  j->i += 4;
  return 0;
}

/* A string, unescaped into the arena (NUL-terminated; NUL inside refused). */
static int jstring(jp *j, const char **out, size_t *outlen) {
  if (peek(j) != '"') return jerr(j, j->i < j->n ? "expected a string" : "expected a string but the header ends");
  j->i++;
  size_t start = j->i, cap = 0;
  while (j->i < j->n && j->s[j->i] != '"') { if (j->s[j->i] == '\\') j->i++; j->i++; }
  cap = j->i - start;
  j->i = start;
  char *buf = arena_alloc(j->a, cap + 1);
  size_t len = 0;
  for (;;) {
    if (j->i >= j->n) return jerr(j, "unterminated string");
    unsigned char c = (unsigned char)j->s[j->i];
    if (c == '"') { j->i++; break; }
    if (c < 0x20) return jerr(j, "control character in a string");
    if (c != '\\') { buf[len++] = (char)c; j->i++; continue; }
    size_t esc = j->i++;     /* errors in an escape point at its backslash */
    if (j->i >= j->n) return jerr(j, "unterminated string");
    char e = j->s[j->i++];
    switch (e) {
    case '"': buf[len++] = '"'; break;
    case '\\': buf[len++] = '\\'; break;
    case '/': buf[len++] = '/'; break;
    case 'b': buf[len++] = '\b'; break;
    case 'f': buf[len++] = '\f'; break;
    case 'n': buf[len++] = '\n'; break;
    case 'r': buf[len++] = '\r'; break;
    case 't': buf[len++] = '\t'; break;
    case 'u': {
      unsigned cp;
      if (hex4(j, &cp)) return -1;
      if (cp >= 0xD800 && cp < 0xDC00) {          /* a surrogate pair */
        unsigned lo;
        if (j->n - j->i < 2 || j->s[j->i] != '\\' || j->s[j->i + 1] != 'u') { j->i = esc; return jerr(j, "lone surrogate"); }
        j->i += 2;
        if (hex4(j, &lo)) return -1;
        if (lo < 0xDC00 || lo > 0xDFFF) { j->i = esc; return jerr(j, "lone surrogate"); }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else if (cp >= 0xDC00 && cp < 0xE000) {
        j->i = esc;
        return jerr(j, "lone surrogate");
      }
      if (cp == 0) { j->i = esc; return jerr(j, "NUL character in a string"); }
      /* UTF-8 is never longer than the escape it replaces */
      if (cp < 0x80) buf[len++] = (char)cp;
      else if (cp < 0x800) { buf[len++] = (char)(0xC0 | cp >> 6); buf[len++] = (char)(0x80 | (cp & 0x3F)); }
      else if (cp < 0x10000) {
        buf[len++] = (char)(0xE0 | cp >> 12); buf[len++] = (char)(0x80 | (cp >> 6 & 0x3F));
        buf[len++] = (char)(0x80 | (cp & 0x3F));
      } else {
        buf[len++] = (char)(0xF0 | cp >> 18); buf[len++] = (char)(0x80 | (cp >> 12 & 0x3F));
        buf[len++] = (char)(0x80 | (cp >> 6 & 0x3F)); buf[len++] = (char)(0x80 | (cp & 0x3F));
      }
      break;
    }
    default:
      j->i = esc;
      return jerr(j, "bad escape '\\%c'", e);
    }
  }
  buf[len] = 0;
  *out = buf;
  if (outlen) *outlen = len;
  return 0;
}

static int juint(jp *j, uint64_t *v) {
  int c = peek(j);
  if (c < '0' || c > '9') return jerr(j, "expected a non-negative integer");
  uint64_t x = 0;
  while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') {
    unsigned d = (unsigned)(j->s[j->i] - '0');
    if (x > (UINT64_C(1) << 62) / 10) return jerr(j, "integer too large");
    x = x * 10 + d;
    j->i++;
  }
  if (j->i < j->n && (j->s[j->i] == '.' || j->s[j->i] == 'e' || j->s[j->i] == 'E'))
    return jerr(j, "expected an integer");
  *v = x;
  return 0;
}

/* Any JSON value, for keys this reader does not use. */
static int jskip(jp *j, int depth) {
  if (depth > 64) return jerr(j, "nested too deeply");
  int c = peek(j);
  if (c == '"') { const char *s; return jstring(j, &s, NULL); }
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    j->i++;
    if (peek(j) == close) { j->i++; return 0; }
    for (;;) {
      if (c == '{') {
        const char *k;
        if (jstring(j, &k, NULL) || expect(j, ':')) return -1;
      }
      if (jskip(j, depth + 1)) return -1;
      int d = peek(j);
      if (d == ',') { j->i++; continue; }
      if (d == close) { j->i++; return 0; }
      return jerr(j, "expected ',' or '%c'", close);
    }
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    j->i++;
    while (j->i < j->n && strchr("0123456789.eE+-", j->s[j->i])) j->i++;
    return 0;
  }
  static const char *const words[] = {"true", "false", "null"};
  for (int w = 0; w < 3; w++) {
    size_t l = strlen(words[w]);
    if (j->n - j->i >= l && !memcmp(j->s + j->i, words[w], l)) { j->i += l; return 0; }
  }
  return jerr(j, c < 0 ? "expected a value but the header ends" : "expected a value");
}

/* [a, b, ...] of non-negative integers, at most max of them */
static int juint_array(jp *j, uint64_t *v, int max, int *count, const char *what) {
  if (expect(j, '[')) return -1;
  *count = 0;
  if (peek(j) == ']') { j->i++; return 0; }
  for (;;) {
    if (*count >= max) return jerr(j, "%s has more than %d entries", what, max);
    if (juint(j, &v[(*count)++])) return -1;
    int d = peek(j);
    if (d == ',') { j->i++; continue; }
    if (d == ']') { j->i++; return 0; }
    return jerr(j, "expected ',' or ']'");
  }
}

typedef struct tinfo {
  const char *name;
  const char *dtype;
  int rank, has_shape, has_off, ndt;
  uint64_t shape[RT_MAXRANK];
  uint64_t off[2];
  size_t at;              /* header offset of the entry, for messages */
} tinfo;

static int jtensor(jp *j, tinfo *t) {
  if (expect(j, '{')) return -1;
  if (peek(j) == '}') { j->i++; return 0; }
  for (;;) {
    const char *key;
    if (jstring(j, &key, NULL) || expect(j, ':')) return -1;
    if (!strcmp(key, "dtype")) {
      if (jstring(j, &t->dtype, NULL)) return -1;
    } else if (!strcmp(key, "shape")) {
      if (juint_array(j, t->shape, RT_MAXRANK, &t->rank, "shape")) return -1;
      t->has_shape = 1;
    } else if (!strcmp(key, "data_offsets")) {
      int cnt;
      if (juint_array(j, t->off, 2, &cnt, "data_offsets")) return -1;
      if (cnt != 2) return jerr(j, "data_offsets must hold two numbers");
      t->has_off = 1;
    } else if (jskip(j, 1)) {
      return -1;
    }
    int d = peek(j);
    if (d == ',') { j->i++; continue; }
    if (d == '}') { j->i++; return 0; }
    return jerr(j, "expected ',' or '}'");
  }
}

/* ---- open ---- */

static int cmp_name(const void *a, const void *b) {
  return strcmp(((const tinfo *)a)->name, ((const tinfo *)b)->name);
}

static int cmp_off(const void *a, const void *b) {
  const tinfo *x = *(const tinfo *const *)a, *y = *(const tinfo *const *)b;
  return x->off[0] < y->off[0] ? -1 : x->off[0] > y->off[0] ? 1 : x->off[1] < y->off[1] ? -1 : x->off[1] > y->off[1];
}

static void fmt_shape(char *s, size_t n, int rank, const uint64_t *shape) {
  int w = snprintf(s, n, "[");
  for (int d = 0; d < rank && w > 0 && (size_t)w < n; d++)
    w += snprintf(s + w, n - w, "%s%" PRIu64, d ? ", " : "", shape[d]);
  if (w > 0 && (size_t)w < n) snprintf(s + w, n - w, "]");
}

void st_close(st_file *f) {
  if (!f) return;
  if (f->map) munmap(f->map, f->size);
  arena_free(&f->mem);
  free(f);
}

static st_file *open_fail(st_file *f) { st_close(f); return NULL; }

st_file *st_open(const char *path, char *err, size_t errlen) {
  st_file *f = mem_calloc(1, sizeof *f);
  arena_init(&f->mem);
  f->path = arena_strndup(&f->mem, path, strlen(path));
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);     /* a FIFO must not block the open */
  if (fd < 0) { diag_errbuf(err, errlen, "%s: %s", path, strerror(errno)); return open_fail(f); }
  struct stat sb;
  int st = fstat(fd, &sb);
  if (st != 0 || !S_ISREG(sb.st_mode)) {
    diag_errbuf(err, errlen, "%s: %s", path, st != 0 ? strerror(errno) : S_ISDIR(sb.st_mode) ? "is a folder" : "not a regular file");
    close(fd);
    return open_fail(f);
  }
  size_t size = (size_t)sb.st_size;
  if (size < 8) {
    diag_errbuf(err, errlen, "%s: file of %zu bytes is too short for safetensors (at least 8)", path, size);
    close(fd);
    return open_fail(f);
  }
  void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) { diag_errbuf(err, errlen, "%s: cannot map the file: %s", path, strerror(errno)); return open_fail(f); }
  f->map = m;
  f->size = size;
  uint64_t hlen = 0;
  for (int b = 7; b >= 0; b--) hlen = hlen << 8 | f->map[b];
  if (hlen > size - 8) {
    diag_errbuf(err, errlen, "%s: header length %" PRIu64 " exceeds the file size (%zu bytes); is it a safetensors file?", path, hlen, size);
    return open_fail(f);
  }
  if (hlen > ST_MAX_HEADER) {
    diag_errbuf(err, errlen, "%s: header of %" PRIu64 " bytes is over the 100 MiB limit", path, hlen);
    return open_fail(f);
  }
  const unsigned char *data = f->map + 8 + hlen;
  size_t dsize = size - 8 - (size_t)hlen;

  jp j = {(const char *)f->map + 8, (size_t)hlen, 0, &f->mem, path, err, errlen, 0};
  int cap = 16, n = 0;
  tinfo *ti = mem_alloc((size_t)cap * sizeof *ti);
  if (expect(&j, '{')) goto bad;
  if (peek(&j) == '}') j.i++;
  else for (;;) {
    const char *name;
    size_t at = j.i;
    if (jstring(&j, &name, NULL) || expect(&j, ':')) goto bad;
    if (!strcmp(name, "__metadata__")) {
      if (peek(&j) != '{') { jerr(&j, "__metadata__ must be an object"); goto bad; }
      if (jskip(&j, 1)) goto bad;
    } else {
      if (n == cap) { cap *= 2; ti = mem_realloc(ti, (size_t)cap * sizeof *ti); }
      tinfo *t = &ti[n++];
      memset(t, 0, sizeof *t);
      t->name = name;
      t->at = at;
      if (jtensor(&j, t)) goto bad;
    }
    int d = peek(&j);
    if (d == ',') { j.i++; continue; }
    if (d == '}') { j.i++; break; }
    jerr(&j, d < 0 ? "expected ',' or '}' but the header ends" : "expected ',' or '}'");
    goto bad;
  }
  if (peek(&j) >= 0) { jerr(&j, "unexpected text after the header object"); goto bad; }

  /* each entry on its own */
  for (int i = 0; i < n; i++) {
    tinfo *t = &ti[i];
    int size1 = 0;
    if (!t->dtype) { diag_errbuf(err, errlen, "%s: tensor '%s' has no dtype", path, t->name); goto bad; }
    if (!t->has_shape) { diag_errbuf(err, errlen, "%s: tensor '%s' has no shape", path, t->name); goto bad; }
    if (!t->has_off) { diag_errbuf(err, errlen, "%s: tensor '%s' has no data_offsets", path, t->name); goto bad; }
    for (size_t k = 0; k < sizeof dtypes / sizeof dtypes[0]; k++)
      if (!strcmp(t->dtype, dtypes[k].name)) { t->ndt = (int)k; size1 = dtypes[k].size; }
    if (!size1) { diag_errbuf(err, errlen, "%s: tensor '%s' has unknown dtype '%s'", path, t->name, t->dtype); goto bad; }
    uint64_t nb = (uint64_t)size1;
    for (int d = 0; d < t->rank; d++)
      if (__builtin_mul_overflow(nb, t->shape[d], &nb)) {
        diag_errbuf(err, errlen, "%s: tensor '%s' is too large", path, t->name);
        goto bad;
      }
    if (t->off[0] > t->off[1]) {
      diag_errbuf(err, errlen, "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 ") end before they begin", path,
           t->name, t->off[0], t->off[1]);
      goto bad;
    }
    if (t->off[1] > dsize) {
      diag_errbuf(err, errlen, "%s: tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 ") exceed the %zu bytes of data",
           path, t->name, t->off[0], t->off[1], dsize);
      goto bad;
    }
    if (nb != t->off[1] - t->off[0]) {
      char sh[200];
      fmt_shape(sh, sizeof sh, t->rank, t->shape);
      diag_errbuf(err, errlen, "%s: tensor '%s': shape %s of %s takes %" PRIu64 " bytes, but data_offsets [%" PRIu64
           ", %" PRIu64 ") hold %" PRIu64, path, t->name, sh, t->dtype, nb, t->off[0], t->off[1],
           t->off[1] - t->off[0]);
      goto bad;
    }
  }
  /* names unique, data disjoint */
  mem_sort(ti, (size_t)n, sizeof *ti, cmp_name);
  for (int i = 1; i < n; i++)
    if (!strcmp(ti[i - 1].name, ti[i].name)) {
      diag_errbuf(err, errlen, "%s: tensor '%s' appears twice in the header", path, ti[i].name);
      goto bad;
    }
  {
    tinfo **by = mem_alloc((size_t)(n ? n : 1) * sizeof *by);
    for (int i = 0; i < n; i++) by[i] = &ti[i];
    mem_sort(by, (size_t)n, sizeof *by, cmp_off);
    const tinfo *prev = NULL;
    for (int i = 0; i < n; i++) {
      if (by[i]->off[0] == by[i]->off[1]) continue;   /* empty tensors take no room */
      if (prev && by[i]->off[0] < prev->off[1]) {
        diag_errbuf(err, errlen, "%s: tensors '%s' and '%s' overlap in the data ([%" PRIu64 ", %" PRIu64 ") and [%" PRIu64
             ", %" PRIu64 "))", path, prev->name, by[i]->name, prev->off[0], prev->off[1], by[i]->off[0],
             by[i]->off[1]);
        free(by);
        goto bad;
      }
      prev = by[i];
    }
    free(by);
  }
  f->n = n;
  f->t = arena_alloc(&f->mem, (size_t)(n ? n : 1) * sizeof *f->t);
  f->dtname = arena_alloc(&f->mem, (size_t)(n ? n : 1) * sizeof *f->dtname);
  for (int i = 0; i < n; i++) {
    st_tensor *t = &f->t[i];
    t->name = ti[i].name;
    t->dtype = dtypes[ti[i].ndt].dt;
    t->rank = ti[i].rank;
    for (int d = 0; d < t->rank; d++) t->shape[d] = (int64_t)ti[i].shape[d];
    t->data = data + ti[i].off[0];
    t->nbytes = (size_t)(ti[i].off[1] - ti[i].off[0]);
    f->dtname[i] = dtypes[ti[i].ndt].name;
  }
  free(ti);
  return f;
bad:
  free(ti);
  return open_fail(f);
}

int st_count(const st_file *f) { return f->n; }

const st_tensor *st_at(const st_file *f, int i) { return i >= 0 && i < f->n ? &f->t[i] : NULL; }

const st_tensor *st_find(const st_file *f, const char *name) {
  int lo = 0, hi = f->n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2, c = strcmp(f->t[mid].name, name);
    if (c == 0) return &f->t[mid];
    if (c < 0) lo = mid + 1; else hi = mid - 1;
  }
  return NULL;
}

/* ---- reading blocks ---- */

static void shape_i64(char *s, size_t n, int rank, const int64_t *shape) {
  uint64_t u[RT_MAXRANK];
  for (int d = 0; d < rank && d < RT_MAXRANK; d++) u[d] = (uint64_t)shape[d];
  fmt_shape(s, n, rank, u);
}

int st_read_block(const st_file *f, const char *name, rt_dtype want, int rank,
                  const int64_t *global_shape, const int64_t *off, const int64_t *local,
                  void *dst, char *err, size_t errlen) {
  const st_tensor *t = st_find(f, name);
  if (!t) return diag_errbuf(err, errlen, "no tensor named '%s' in %s", name, f->path);
  int same = t->rank == rank;
  for (int d = 0; same && d < rank; d++) same = t->shape[d] == global_shape[d];
  if (!same) {
    char a[200], b[200];
    shape_i64(a, sizeof a, t->rank, t->shape);
    shape_i64(b, sizeof b, rank, global_shape);
    return diag_errbuf(err, errlen, "%s: tensor '%s' has shape %s but the model wants %s", f->path, name, a, b);
  }
  const char *dn = f->dtname[t - f->t];
  if (t->dtype == ST_OTHER)
    return diag_errbuf(err, errlen, "%s: tensor '%s' is %s; carve reads F32, BF16, F16, F64, I32, I64, I8, U8, I16, U16, U32 and BOOL", f->path, name, dn);
  rt_dtype have = rt_of(t->dtype);
  int is_int = !rt_dtype_isfloat(have), want_int = !rt_dtype_isfloat(want);
  if (want_int && !is_int)
    return diag_errbuf(err, errlen, "%s: tensor '%s' is %s but the model wants %s", f->path, name, dn,
                       want == RT_I32 ? "I32 (or I64)" : st_name(want));
  if (!want_int && is_int)
    return diag_errbuf(err, errlen, "%s: tensor '%s' is %s but the model wants %s", f->path, name, dn,
                       want == RT_F32 ? "F32 (or BF16, F16, F64)" : st_name(want));
  int64_t gstr[RT_MAXRANK], acc = 1, rows = 1, L = rank ? local[rank - 1] : 1;
  for (int d = rank - 1; d >= 0; d--) {
    if (off[d] < 0 || local[d] < 0 || off[d] + local[d] > global_shape[d])
      return diag_errbuf(err, errlen, "%s: tensor '%s': block outside the tensor along dim %d", f->path, name, d);
    gstr[d] = acc;
    acc *= global_shape[d];
  }
  for (int d = 0; d < rank - 1; d++) rows *= local[d];
  if (rows <= 0 || L <= 0) return 0;
  size_t es = rt_dtype_size(have), ew = rt_dtype_size(want);
  int wb = (int)ew * 8, uns = want == RT_UI8 || want == RT_UI16 || want == RT_UI32;
  int64_t lo = uns || wb >= 64 ? 0 : -((int64_t)1 << (wb - 1)), hi = wb >= 64 ? 0 : uns ? ((int64_t)1 << wb) - 1 : ((int64_t)1 << (wb - 1)) - 1;
  int64_t idx[RT_MAXRANK] = {0};
  for (int64_t r = 0; r < rows; r++) {
    int64_t g = 0;
    for (int d = 0; d < rank; d++) g += (off[d] + (d < rank - 1 ? idx[d] : 0)) * gstr[d];
    const unsigned char *src = t->data + (size_t)g * es;
    void *o = (char *)dst + (size_t)(r * L) * ew;
    if (have == want) {
      memcpy(o, src, (size_t)L * es);
    } else if (!is_int) {
      for (int64_t k = 0; k < L; k++) rt_store_f(want, o, k, rt_load_f(have, src, k));
    } else {
      for (int64_t k = 0; k < L; k++) {
        int64_t x = rt_load_i(have, src, k);
        if (want != RT_I64 && want != RT_I1 && rt_dtype_size(want) < es && (x < lo || x > hi))
          return diag_errbuf(err, errlen, "%s: tensor '%s' (%s) holds %" PRId64 ", which does not fit the model's %s", f->path, name,
                             dn, x, st_name(want));
        rt_store_i(want, o, k, x);
      }
    }
    for (int d = rank - 2; d >= 0; d--) {
      if (++idx[d] < local[d]) break;
      idx[d] = 0;
    }
  }
  return 0;
}

/* ---- writing ---- */

static void put_json_string(FILE *h, const char *s) {
  fputc('"', h);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(h, "\\%c", *p);
    else if (*p == '\n') fputs("\\n", h);
    else if (*p == '\t') fputs("\\t", h);
    else if (*p < 0x20 || *p == 0x7F) fprintf(h, "\\u%04x", *p);
    else fputc(*p, h);
  }
  fputc('"', h);
}

static int cmp_out(const void *a, const void *b) {
  return strcmp((*(const st_out *const *)a)->name, (*(const st_out *const *)b)->name);
}

static int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n > (1u << 30) ? (1u << 30) : n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    c += w;
    n -= (size_t)w;
  }
  return 0;
}

int st_write(const char *path, const st_out *ts, int n, char *err, size_t errlen) {
  const st_out **by = mem_alloc((size_t)(n > 0 ? n : 1) * sizeof *by);
  for (int i = 0; i < n; i++) by[i] = &ts[i];
  mem_sort(by, (size_t)(n > 0 ? n : 0), sizeof *by, cmp_out);
  for (int i = 0; i < n; i++) {
    const char *why = NULL;
    if (!by[i]->name || !by[i]->name[0]) why = "a tensor without a name";
    else if (!strcmp(by[i]->name, "__metadata__")) why = "a tensor named __metadata__";
    else if (i > 0 && !strcmp(by[i - 1]->name, by[i]->name)) why = "two tensors of one name";
    else if (by[i]->rank < 0 || by[i]->rank > RT_MAXRANK) why = "a tensor of unsupported rank";
    for (int d = 0; !why && d < by[i]->rank; d++)
      if (by[i]->shape[d] < 0) why = "a negative dimension";
    if (why) {
      diag_errbuf(err, errlen, "%s: cannot write %s%s%s%s", path, why, by[i]->name ? " ('" : "",
           by[i]->name ? by[i]->name : "", by[i]->name ? "')" : "");
      free(by);
      return -1;
    }
  }
  /* the header */
  char *hdr = NULL;
  size_t hlen = 0;
  FILE *h = open_memstream(&hdr, &hlen);
  if (!h) mem_oom();
  fputc('{', h);
  uint64_t pos = 0;
  for (int i = 0; i < n; i++) {
    const st_out *t = by[i];
    uint64_t nb = rt_dtype_size(t->dtype);
    for (int d = 0; d < t->rank; d++) nb *= (uint64_t)t->shape[d];
    if (i) fputc(',', h);
    put_json_string(h, t->name);
    fprintf(h, ":{\"dtype\":\"%s\",\"shape\":[", st_name(t->dtype));
    for (int d = 0; d < t->rank; d++) fprintf(h, "%s%" PRId64, d ? "," : "", t->shape[d]);
    fprintf(h, "],\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}", pos, pos + nb);
    pos += nb;
  }
  fputc('}', h);
  while ((ftell(h) % 8) != 0) fputc(' ', h);    /* the data starts 8-aligned */
  fclose(h);

  /* a temporary file next to the target, renamed over it when complete */
  char *tmp;
  int fd = file_tmp_open(path, &tmp);
  if (fd < 0) {
    int e = errno;
    const char *slash = strrchr(path, '/');
    if (slash) diag_errbuf(err, errlen, "%s: cannot create a file in the folder '%.*s': %s", path,
                    (int)(slash == path ? 1 : slash - path), path, strerror(e));
    else diag_errbuf(err, errlen, "%s: cannot create a file in the current folder: %s", path, strerror(e));
    free(hdr);
    free(by);
    return -1;
  }
  unsigned char len8[8];
  for (int b = 0; b < 8; b++) len8[b] = (unsigned char)((uint64_t)hlen >> (8 * b));
  int bad = write_all(fd, len8, 8) || write_all(fd, hdr, hlen);
  for (int i = 0; i < n && !bad; i++) {
    size_t nb = rt_dtype_size(by[i]->dtype);
    for (int d = 0; d < by[i]->rank; d++) nb *= (size_t)by[i]->shape[d];
    if (nb) bad = write_all(fd, by[i]->data, nb);
  }
  if (bad) file_tmp_abandon(fd, tmp);      /* the temporary file goes on every failure */
  else bad = file_tmp_commit(fd, tmp, path) != 0;
  if (bad) diag_errbuf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
  free(hdr);
  free(by);
  return bad ? -1 : 0;
}
