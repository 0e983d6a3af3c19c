/*
** feed.h: what a leaf (input, parameter, optimizer state) starts from
** when no file gives it: the deterministic init of its declaration, ids
** within the tables they index. Shared by carve run and the tests.
*/
#ifndef interp_feed_h
#define interp_feed_h

#include "interp/ir/ir.h"
#include "runtime/exec.h"
#include "runtime/init.h"

void feed_init(const ir_graph *g, const ir_value *v, rt_init *out);

#endif
