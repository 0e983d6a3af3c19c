/*
** test_picture.c: the sharding pictures of carve show against golden
** files (tests/data/pictures/): 1-D, nested 1-D, 2-D and 3-D splits on 2x2
** and 2x2x2 meshes, a replicated value, a partial sum, one rank's block;
** the SVG form against its goldens and checked to be well-formed XML.
** CARVE_UPDATE_GOLDEN=1 rewrites the goldens from what the code prints.
*/
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "interp/drive/session.h"
#include "interp/report/picture.h"

/* tac: a plan of tests/data/pictures/ on pic.cir, or "MODEL TACTICS" (files of
** tests/data/) for a training step under SGD */
static void load(session *s, const char *tac) {
  char model[512], tactics[512], m[32], t[32];
  int other = sscanf(tac, "%31s %31s", m, t) == 2;
  if (other) {
    snprintf(model, sizeof model, "%s/tests/data/%s", SRCDIR, m);
    snprintf(tactics, sizeof tactics, "%s/tests/data/%s", SRCDIR, t);
  } else {
    snprintf(model, sizeof model, "%s/tests/data/pictures/pic.cir", SRCDIR);
    snprintf(tactics, sizeof tactics, "%s/tests/data/pictures/%s.tac", SRCDIR, tac);
  }
  session_init(s);
  session_opts o = {model, NULL, other ? "sgd(lr = 0.1)" : NULL, tactics, {0}};
  cr_assert(session_load(s, &o) == 0, "%s", diag_text(&s->diag));
}

/* text equals the golden file (or becomes it under CARVE_UPDATE_GOLDEN) */
static void golden(const char *text, const char *name) {
  char rel[256], path[512];
  snprintf(rel, sizeof rel, "tests/data/pictures/%s", name);
  snprintf(path, sizeof path, "%s/%s", SRCDIR, rel);
  if (getenv("CARVE_UPDATE_GOLDEN")) {
    FILE *f = fopen(path, "w");
    cr_assert(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
    return;
  }
  cr_assert(access(path, R_OK) == 0, "no golden file %s (CARVE_UPDATE_GOLDEN=1 writes it)", path);
  char *want = hx_slurp(rel);
  cr_assert_str_eq(text, want, "%s differs:\n--- got\n%s--- want\n%s", name, text, want);
  free(want);
}

static const char *xml_wellformed(const char *s);

/* value of the plan made by tac drawn as text (rank: -1 all, else one) or SVG, against its golden file */
static void check_picture(const char *tac, const char *value, int rank, int svg, const char *name) {
  session s;
  load(&s, tac);
  ir_value *v = ir_lookup(s.g, value);
  cr_assert(v, "no value %s", value);
  strbuf b;
  sb_init(&b);
  if (svg) {
    report_picture_svg(&b, s.plan, v->id);
    const char *bad = xml_wellformed(sb_str(&b));
    cr_assert_null(bad, "%s: %s", name, bad);
  } else {
    report_picture(&b, s.plan, v->id, rank);
  }
  golden(sb_str(&b), name);
  sb_free(&b);
  session_free(&s);
}

typedef struct pcase {
  char tac[40], value[8];
  int rank;
  char golden[40];
} pcase;

static pcase cases[] = {
  {"split1_2x2", "t", -1, "split1_2x2.txt"},
  {"split1_nested_2x2", "t", -1, "split1_nested_2x2.txt"},
  {"split2_2x2", "t", -1, "split2_2x2.txt"},
  {"split2_2x2x2", "t", -1, "split2_2x2x2.txt"},
  {"split3_2x2x2", "t", -1, "split3_2x2x2.txt"},
  {"split3_2x2x2", "t", 5, "split3_2x2x2_rank5.txt"},
  {"partial_2x2", "h", -1, "partial_2x2.txt"},
  {"partial_2x2", "h", 1, "partial_2x2_rank1.txt"},
  {"partial_2x2", "t", -1, "replicated_2x2.txt"},
  /* a pipeline's microbatches run in turn on each device: 8 devices, not 16 */
  {"gpt_pp.cir pp_bp_mp.tac", "x1", -1, "pipeline_3d.txt"},
  {"gpt_pp.cir pp_bp_mp.tac", "x1", 2, "pipeline_3d_rank2.txt"},
  {"gpt_pp.cir pp_bp_mp.tac", "x1", 6, "pipeline_3d_rank6.txt"},
  {"gpt_pp.cir pp_bp_mp.tac", "wte", -1, "pipeline_3d_tied.txt"},
  /* context parallelism deals the sequence zig-zag: two halves a device */
  {"gpt_pp.cir cp2.tac", "x1", -1, "zigzag_cp2.txt"},
  {"gpt_pp.cir pp_cp.tac", "x1", -1, "pipeline_zigzag.txt"},
  {"gpt_pp.cir pp_cp.tac", "x1", 1, "pipeline_zigzag_rank1.txt"},
};

ParameterizedTestParameters(picture, text) {
  return cr_make_param_array(pcase, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(pcase *c, picture, text) {
  check_picture(c->tac, c->value, c->rank, 0, c->golden);
}

/* ---- SVG: well-formed, and as drawn before ---- */

/* A small XML check: a prolog, then elements properly nested, attribute
** values quoted, text free of '<' and of '&' other than the five entities.
** Returns NULL or what is wrong. */
static const char *xml_wellformed(const char *s) {
  static char why[128];
  const char *stack[64];
  size_t stackn[64];
  int depth = 0, root = 0;
  if (strncmp(s, "<?xml ", 6)) return "no XML prolog";
  s = strstr(s, "?>");
  if (!s) return "unclosed prolog";
  s += 2;
  while (*s) {
    if (*s == '<') {
      int closing = s[1] == '/';
      const char *n = s + 1 + closing, *e = n;
      while (*e && (e[0] == '-' || e[0] == ':' || (e[0] >= 'a' && e[0] <= 'z') || (e[0] >= 'A' && e[0] <= 'Z') || (e[0] >= '0' && e[0] <= '9'))) e++;
      if (e == n) return "a tag without a name";
      size_t len = (size_t)(e - n);
      if (closing) {
        if (!depth || stackn[depth - 1] != len || strncmp(stack[depth - 1], n, len)) {
          snprintf(why, sizeof why, "</%.*s> closes nothing open", (int)len, n);
          return why;
        }
        depth--;
        if (*e != '>') return "junk in a closing tag";
        s = e + 1;
        continue;
      }
      /* attributes: name="value" */
      const char *q = e;
      for (;;) {
        while (*q == ' ' || *q == '\n') q++;
        if (*q == '>' || (q[0] == '/' && q[1] == '>')) break;
        const char *an = q;
        while (*q && *q != '=' && *q != ' ' && *q != '>') q++;
        if (q == an || *q != '=' || q[1] != '"') return "an attribute without a quoted value";
        q += 2;
        while (*q && *q != '"') { if (*q == '<') return "'<' in an attribute"; q++; }
        if (!*q) return "an unterminated attribute";
        q++;
      }
      if (!depth && root++) return "more than one root element";
      if (*q == '/') { s = q + 2; continue; }
      if (depth == 64) return "too deep";
      stack[depth] = n;
      stackn[depth++] = len;
      s = q + 1;
      continue;
    }
    if (*s == '&') {
      static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
      int ok = 0;
      for (int i = 0; i < 5; i++) if (!strncmp(s, ent[i], strlen(ent[i]))) ok = 1;
      if (!ok) return "a bare '&'";
    }
    if (!depth && *s != ' ' && *s != '\n') return "text outside the root element";
    s++;
  }
  if (depth) return "an element left open";
  if (!root) return "no root element";
  return NULL;
}

Test(picture, the_xml_check_catches_broken_documents) {
  cr_assert_null(xml_wellformed("<?xml version=\"1.0\"?>\n<svg a=\"1\"><g><text>x &amp; y</text></g></svg>\n"));
  cr_assert_not_null(xml_wellformed("<?xml version=\"1.0\"?>\n<svg><g></svg>\n"));
  cr_assert_not_null(xml_wellformed("<?xml version=\"1.0\"?>\n<svg><text>a & b</text></svg>\n"));
  cr_assert_not_null(xml_wellformed("<?xml version=\"1.0\"?>\n<svg a=1></svg>\n"));
  cr_assert_not_null(xml_wellformed("<svg></svg>\n"));
}

typedef struct scase { char tac[32], value[8], golden[40]; } scase;

static scase svgs[] = {
  {"split2_2x2", "t", "split2_2x2.svg"},
  {"split3_2x2x2", "t", "split3_2x2x2.svg"},
  {"partial_2x2", "h", "partial_2x2.svg"},
};

ParameterizedTestParameters(picture, svg) {
  return cr_make_param_array(scase, svgs, sizeof svgs / sizeof svgs[0]);
}

ParameterizedTest(scase *c, picture, svg) {
  check_picture(c->tac, c->value, -1, 1, c->golden);
}

/* A name with XML's special characters cannot come from a model file, but
** the escaping is what keeps any text well-formed: a large mesh, long lists. */
Test(picture, large_meshes_cut_lists_short) {
  session s;
  char model[512], tactics[512];
  snprintf(model, sizeof model, "%s/tests/data/pictures/pic.cir", SRCDIR);
  snprintf(tactics, sizeof tactics, "%s/tests/data/pictures/split1_2x2.tac", SRCDIR);
  session_init(&s);
  session_opts o = {model, NULL, NULL, tactics, {"a=8, b=64", 0, 0, NULL}};
  cr_assert(session_load(&s, &o) == 0, "%s", diag_text(&s.diag));
  ir_value *v = ir_lookup(s.g, "t");
  strbuf b;
  sb_init(&b);
  report_picture(&b, s.plan, v->id, -1);
  cr_assert(strstr(sb_str(&b), "numbered row-major over (a, b)"), "%s", sb_str(&b));
  cr_assert(strstr(sb_str(&b), "[7:8, 0:4, 0:6]  d448-d511"), "consecutive ranks as one run: %s", sb_str(&b));
  sb_clear(&b);
  report_picture_svg(&b, s.plan, v->id);
  cr_assert_null(xml_wellformed(sb_str(&b)));
  sb_free(&b);
  session_free(&s);
}
