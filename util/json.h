/*
** json.h: a small JSON writer for --json output (one object on stdout).
** Commas are placed automatically; keys and strings are escaped.
*/
#ifndef util_json_h
#define util_json_h

#include <stddef.h>
#include <stdint.h>
#include "util/strbuf.h"

typedef struct json {
  strbuf out;            /* the text: sb_str(&j.out) */
  int depth;
  unsigned char first[64];   /* per depth: nothing written yet at this level */
} json;

void json_init(json *j);
void json_free(json *j);
void json_obj(json *j);              /* { */
void json_arr(json *j);              /* [ */
void json_end_obj(json *j);
void json_end_arr(json *j);
void json_key(json *j, const char *k);
void json_str(json *j, const char *s);
/* x in the shortest form that reads back as the same double (num_double:
** byte counts exact); non-finite numbers are written as null */
void json_num(json *j, double x);
/* x as the shortest text that reads back as the same value of its type:
** digits 17 an f64, 9 an f32 (num_float), fewer a narrower type (%.*g);
** NaN and infinities as the strings "nan", "inf", "-inf" (JSON has no
** number for them) */
void json_real(json *j, double x, int digits);
void json_int(json *j, int64_t x);
void json_bool(json *j, int b);
void json_null(json *j);

#endif
