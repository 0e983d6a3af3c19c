/*
** json.c: the JSON writer.
*/
#include "util/json.h"
#include "util/arena.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_init(json *j) { memset(j, 0, sizeof *j); j->first[0] = 1; }
void json_free(json *j) { sb_free(&j->out); memset(j, 0, sizeof *j); }

static void raw(json *j, const char *s, size_t n) { sb_put(&j->out, s, n); }

static void rawc(json *j, const char *s) { raw(j, s, strlen(s)); }

/* A value is about to be written: a comma unless it is the first here or follows a key. */
static void sep(json *j) {
  if (j->out.n && j->out.p[j->out.n - 1] == ':') return;
  if (!j->first[j->depth]) rawc(j, ", ");
  j->first[j->depth] = 0;
}

static void open_(json *j, const char *c) {
  sep(j);
  rawc(j, c);
  if (j->depth < 63) j->depth++;
  j->first[j->depth] = 1;
}

void json_obj(json *j) { open_(j, "{"); }
void json_arr(json *j) { open_(j, "["); }
void json_end_obj(json *j) { if (j->depth) j->depth--; rawc(j, "}"); }
void json_end_arr(json *j) { if (j->depth) j->depth--; rawc(j, "]"); }

static void quoted(json *j, const char *s) {
  rawc(j, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char buf[8];
    if (*p == '"' || *p == '\\') { buf[0] = '\\'; buf[1] = (char)*p; raw(j, buf, 2); }
    else if (*p < 0x20) { snprintf(buf, sizeof buf, "\\u%04x", *p); rawc(j, buf); }
    else raw(j, (const char *)p, 1);
  }
  rawc(j, "\"");
}

void json_key(json *j, const char *k) { sep(j); quoted(j, k); rawc(j, ":"); }
void json_str(json *j, const char *s) { sep(j); quoted(j, s); }

void json_num(json *j, double x) {
  sep(j);
  if (!isfinite(x)) { rawc(j, "null"); return; }
  char buf[NUM_LEN];
  rawc(j, num_double(buf, x));
}

void json_real(json *j, double x, int digits) {
  if (x != x) { json_str(j, "nan"); return; }
  if (isinf(x)) { json_str(j, x > 0 ? "inf" : "-inf"); return; }
  sep(j);
  char buf[NUM_LEN];
  if (digits >= 17) num_double(buf, x);
  else if (digits >= 9) num_float(buf, (float)x);
  else snprintf(buf, sizeof buf, "%.*g", digits, x);
  rawc(j, buf);
}

void json_int(json *j, int64_t x) {
  sep(j);
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)x);
  rawc(j, buf);
}

void json_bool(json *j, int b) { sep(j); rawc(j, b ? "true" : "false"); }
void json_null(json *j) { sep(j); rawc(j, "null"); }
