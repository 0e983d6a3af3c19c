/*
** p2p.c: does every transfer between a pipelined program's stages arrive?
**
** Each stage runs its instructions in order; a send leaves a copy and goes
** on, a receive waits for the send of the same tag from its peer (the
** runtime's contract, under MPI and threads alike). Everything else a
** stage runs is its own work or a collective among devices of the same
** stage, which run the same instructions: only the transfers over the
** stage axis can make one stage wait for another. So the check plays the
** stages' transfers against each other until none can move: a receive
** still waiting then would wait for ever (a deadlocked schedule, or a
** program file whose transfers do not match), and a copy never received
** would be lost. Either is refused before anything runs.
*/
#include "runtime/prog.h"
#include "util/diag.h"
#include "util/mem.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

/* the copies sent and not yet received, by (from, to, tag) */
typedef struct mailbox { uint64_t *key; int64_t *tag; int *count; size_t cap; } mailbox;

static size_t slot_of(const mailbox *m, int from, int to, int64_t tag) {
  uint64_t h = ((uint64_t)tag * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)from << 40) ^ ((uint64_t)to << 20);
  h ^= h >> 29;
  size_t i = (size_t)h & (m->cap - 1);
  uint64_t k = ((uint64_t)(unsigned)from << 32) | (unsigned)to;
  while (m->count[i] >= 0 && !(m->key[i] == k && m->tag[i] == tag)) i = (i + 1) & (m->cap - 1);
  m->key[i] = k;
  m->tag[i] = tag;
  return i;
}

static int is_stage_transfer(const rt_prog *p, const rt_instr *x) {
  if ((x->op != RT_SEND && x->op != RT_RECV) || (x->mode & RT_P2P_RING)) return 0;
  if (x->group < 0 || x->group >= p->ngroups) return 0;
  const rt_group *g = &p->groups[x->group];
  return g->naxes == 1 && g->axes[0] == p->stage_axis;
}

static const char *buf_name(const rt_prog *p, int b) { return b >= 0 && b < p->nbufs ? p->bufs[b].name : "?"; }

int rt_prog_check_transfers(const rt_prog *p, int *at, char *err, size_t errlen) {
  int where = -1;
  if (at) *at = -1;
  if (p->stage_axis < 0) return 0;
  if (p->stage_axis >= p->mesh_rank || p->mesh[p->stage_axis] < 1 || p->mesh[p->stage_axis] > 64)
    return diag_errbuf(err, errlen, "the stage axis %d is not an axis of the mesh of at most 64 stages", p->stage_axis);
  int P = (int)p->mesh[p->stage_axis], nx = 0;
  for (int i = 0; i < p->ninstrs; i++) nx += is_stage_transfer(p, &p->instrs[i]);
  if (!nx) return 0;
  mailbox m = {0};
  m.cap = 16;
  while (m.cap < 2 * (size_t)nx) m.cap *= 2;
  m.key = mem_alloc(sizeof *m.key * m.cap);
  m.tag = mem_alloc(sizeof *m.tag * m.cap);
  m.count = mem_alloc(sizeof *m.count * m.cap);
  for (size_t i = 0; i < m.cap; i++) m.count[i] = -1;   /* -1: a free slot */
  int *pc = mem_calloc((size_t)P, sizeof *pc), rc = 0;   /* each stage: the next instruction it runs */
  for (int moved = 1; moved && rc == 0;) {
    moved = 0;
    for (int s = 0; s < P && rc == 0; s++)
      for (; pc[s] < p->ninstrs; pc[s]++) {
        const rt_instr *x = &p->instrs[pc[s]];
        if (!rt_stage_runs(x, s) || !is_stage_transfer(p, x)) continue;
        if (x->n2 < 0 || x->n2 >= P || x->n2 == s) {
          where = pc[s];
          rc = diag_errbuf(err, errlen, "instruction %d: stage %d %s stage %" PRId64 ", not another of the %d stages", pc[s], s,
                           x->op == RT_SEND ? "sends to" : "receives from", x->n2, P);
          break;
        }
        int peer = (int)x->n2;
        size_t k = x->op == RT_SEND ? slot_of(&m, s, peer, x->off) : slot_of(&m, peer, s, x->off);
        if (x->op == RT_SEND) m.count[k] = m.count[k] < 0 ? 1 : m.count[k] + 1;
        else if (m.count[k] > 0) m.count[k]--;
        else {
          if (m.count[k] < 0) m.count[k] = 0;   /* (the slot is taken now: its key is written) */
          break;                                /* it waits */
        }
        moved = 1;
      }
  }
  for (int s = 0; s < P && rc == 0; s++) {
    if (pc[s] >= p->ninstrs) continue;
    const rt_instr *x = &p->instrs[pc[s]];
    int q = (int)x->n2;
    where = pc[s];
    if (pc[q] >= p->ninstrs)
      rc = diag_errbuf(err, errlen, "instruction %d: stage %d waits for '%s' from stage %d (tag %" PRId64 "), which stage %d never sends",
                       pc[s], s, buf_name(p, x->out), q, x->off, q);
    else
      rc = diag_errbuf(err, errlen, "the stages' transfers would wait for ever: stage %d at instruction %d for '%s' from stage %d "
                       "(tag %" PRId64 "), while stage %d waits at instruction %d", s, pc[s], buf_name(p, x->out), q, x->off, q, pc[q]);
  }
  for (size_t i = 0; i < m.cap && rc == 0; i++)
    if (m.count[i] > 0) {
      int from = (int)(m.key[i] >> 32), to = (int)(m.key[i] & 0xffffffffu);
      for (int k = 0; k < p->ninstrs && where < 0; k++) {
        const rt_instr *x = &p->instrs[k];
        if (x->op == RT_SEND && is_stage_transfer(p, x) && rt_stage_runs(x, from) && x->n2 == to && x->off == m.tag[i]) where = k;
      }
      rc = diag_errbuf(err, errlen, "stage %u sends a copy to stage %u (tag %" PRId64 ") that stage %u never receives",
                       (unsigned)from, (unsigned)to, m.tag[i], (unsigned)to);
    }
  if (at) *at = where;
  free(pc);
  free(m.key);
  free(m.tag);
  free(m.count);
  return rc;
}
