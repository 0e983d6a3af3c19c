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
/* The ids an integer input may hold where an op reads it that stops on
** others (embedding's ids, cross_entropy's labels): [0, bound), the
** smallest such op in *by; 0 when none reads it so. */
int64_t feed_id_bound(const ir_graph *g, const ir_value *v, const ir_value **by);

#endif
