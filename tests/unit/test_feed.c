/*
** test_feed.c: the default values of integer inputs (interp/drive/feed.c)
** stay within what they index, found through the values made from them:
** a table's rows (embedding), a backward program's scatter (embedding_grad
** with its rows), the classes of cross_entropy, and a one-hot written as a
** comparison with an iota (what exported programs hold). Outside that
** range a run stops with "id out of range" (NanoGPT's backward program did).
*/
#include "harness.h"
#include "interp/drive/feed.h"

/* (arrays, not pointers: Criterion copies parameters into another process) */
typedef struct fcase { char what[48]; char model[256]; double range; } fcase;

static fcase fcases[] = {
  {"embedding", "model m {\n input ids : i32[4]\n param t : f32[7, 3]\n loss = sum(embedding(t, ids))\n return loss\n}\n", 7},
  {"embedding_grad", "model m {\n input ids : i32[4]\n input dy : f32[4, 3]\n g = embedding_grad(ids, dy, rows = 5)\n return g\n}\n", 5},
  {"cross_entropy", "model m {\n input ids : i32[4]\n param z : f32[4, 9]\n loss = cross_entropy(z, ids)\n return loss\n}\n", 9},
  {"through a reshape, against an iota",
   "model m {\n input ids : i32[2, 2]\n x = reshape(ids, [4, 1])\n"
   " c = compare(x, iota([4, 6], 1, i32), \"eq\")\n return c\n}\n", 6},
  {"the smallest of two tables", "model m {\n input ids : i32[4]\n param a : f32[7, 3]\n param b : f32[3, 3]\n"
   " loss = add(sum(embedding(a, ids)), sum(embedding(b, ids)))\n return loss\n}\n", 3},
};

ParameterizedTestParameters(feed, ids_within_what_they_index) {
  return cr_make_param_array(fcase, fcases, sizeof fcases / sizeof fcases[0]);
}

ParameterizedTest(fcase *c, feed, ids_within_what_they_index) {
  hx h;
  cr_assert(hx_build(&h, c->model) == 0, "%s: %s", c->what, diag_text(&h.d));
  ir_link(h.g);                       /* users */
  const ir_value *ids = ir_lookup(h.g, "ids");
  cr_assert(ids);
  rt_init in;
  feed_init(h.g, ids, &in);
  cr_expect_eq(in.kind, RT_INIT_INTS, "%s", c->what);
  cr_expect_eq(in.b, c->range, "%s: ids drawn from [0, %g), want [0, %g)", c->what, in.b, c->range);
  hx_free(&h);
}
