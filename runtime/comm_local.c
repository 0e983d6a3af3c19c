/*
** comm_local.c: threads as devices. The last device to reach a collective
** computes every member's output from every member's input while the
** others wait, so inputs stay alive and nothing is copied twice.
*/
#include "runtime/comm_local.h"
#include "runtime/mesh.h"
#include "util/arena.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEV 64

typedef struct slot {
  int arrived;
  unsigned gen;
  const float *in[MAXDEV];
  float *out[MAXDEV];
  const rt_instr *ins[MAXDEV];
} slot;

typedef struct devcomm { rt_comm c; rt_local *l; int device; } devcomm;

struct rt_local {
  const rt_prog *p;
  int ndev;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  slot *slots;            /* [group][color] */
  int ncolors;
  devcomm dev[MAXDEV];
};

static int l_size(void *impl, int group) { devcomm *d = impl; return rt_mesh_group_size(d->l->p, group); }
static int l_index(void *impl, int group) { devcomm *d = impl; return rt_mesh_index(d->l->p, d->device, group); }

/* every member's output from every member's input */
static void compute(const rt_instr *ins, int P, const float *const *in, float *const *out) {
  int64_t O = ins->outer, N = ins->n, I = ins->inner;
  switch (ins->op) {
  case RT_ALL_REDUCE: {
    int64_t n = O * N * I;
    for (int64_t x = 0; x < n; x++) {
      float s = 0;
      for (int i = 0; i < P; i++) s += in[i][x];
      for (int j = 0; j < P; j++) out[j][x] = s;
    }
    return;
  }
  case RT_ALL_GATHER:
    for (int j = 0; j < P; j++)
      for (int i = 0; i < P; i++)
        for (int64_t o = 0; o < O; o++)
          memcpy(out[j] + (o * N * P + (int64_t)i * N) * I, in[i] + o * N * I, sizeof(float) * (size_t)(N * I));
    return;
  case RT_REDUCE_SCATTER: {
    int64_t piece = N / P;
    for (int j = 0; j < P; j++)
      for (int64_t o = 0; o < O; o++)
        for (int64_t x = 0; x < piece * I; x++) {
          float s = 0;
          for (int i = 0; i < P; i++) s += in[i][(o * N + (int64_t)j * piece) * I + x];
          out[j][o * piece * I + x] = s;
        }
    return;
  }
  case RT_ALL_TO_ALL: {
    /* device i's input, cut along split_dim into P pieces; device j gets piece j of
       every device, joined along concat_dim in device order */
    int r = ins->rank, sd = ins->split_dim, cd = ins->concat_dim;
    int64_t shp[RT_MAXRANK] = {0}, osh[RT_MAXRANK] = {0};
    for (int k = 0; k < r; k++) shp[k] = osh[k] = ins->shape[k];
    osh[sd] /= P;
    osh[cd] *= P;
    int64_t total = 1;
    for (int k = 0; k < r; k++) total *= osh[k];
    for (int j = 0; j < P; j++)
      for (int64_t x = 0; x < total; x++) {
        int64_t idx[RT_MAXRANK] = {0}, rem = x;
        for (int k = r - 1; k >= 0; k--) { idx[k] = rem % osh[k]; rem /= osh[k]; }
        int64_t src = idx[cd] / shp[cd];           /* which device it came from */
        idx[cd] %= shp[cd];
        idx[sd] += (int64_t)j * (shp[sd] / P);
        int64_t off = 0;
        for (int k = 0; k < r; k++) off = off * shp[k] + idx[k];
        out[j][x] = in[src][off];
      }
    return;
  }
  default: return;
  }
}

static int l_run(void *impl, const rt_instr *ins, void *out, const void *in, char *err, size_t errlen) {
  devcomm *d = impl;
  rt_local *l = d->l;
  int P = rt_mesh_group_size(l->p, ins->group), me = rt_mesh_index(l->p, d->device, ins->group);
  slot *s = &l->slots[ins->group * l->ncolors + rt_mesh_color(l->p, d->device, ins->group)];
  pthread_mutex_lock(&l->mu);
  s->in[me] = in;
  s->out[me] = out;
  s->ins[me] = ins;
  if (++s->arrived == P) {
    int same = 1;
    for (int i = 0; i < P; i++) same &= s->ins[i]->op == ins->op && s->ins[i]->n == ins->n && s->ins[i]->outer == ins->outer;
    if (same) compute(ins, P, s->in, s->out);
    s->arrived = 0;
    s->gen++;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    if (!same) { snprintf(err, errlen, "devices reached different collectives"); return -1; }
    return 0;
  }
  unsigned gen = s->gen;
  while (s->gen == gen) pthread_cond_wait(&l->cv, &l->mu);
  pthread_mutex_unlock(&l->mu);
  return 0;
}

rt_local *rt_local_new(const rt_prog *p) {
  int n = rt_mesh_devices(p);
  if (n > MAXDEV) return NULL;
  rt_local *l = mem_calloc(1, sizeof *l);
  l->p = p;
  l->ndev = n;
  l->ncolors = n;
  l->slots = mem_calloc((size_t)(p->ngroups ? p->ngroups : 1) * (size_t)n, sizeof(slot));
  pthread_mutex_init(&l->mu, NULL);
  pthread_cond_init(&l->cv, NULL);
  for (int i = 0; i < n; i++) l->dev[i] = (devcomm){{&l->dev[i], l_size, l_index, l_run}, l, i};
  return l;
}

void rt_local_free(rt_local *l) {
  if (!l) return;
  pthread_mutex_destroy(&l->mu);
  pthread_cond_destroy(&l->cv);
  free(l->slots);
  free(l);
}

int rt_local_devices(const rt_local *l) { return l->ndev; }
const rt_comm *rt_local_comm(rt_local *l, int device) { return &l->dev[device].c; }

typedef struct targ { int (*fn)(int, void *); void *arg; int device, rc; } targ;

static void *trampoline(void *x) {
  targ *t = x;
  t->rc = t->fn(t->device, t->arg);
  return NULL;
}

int rt_local_run(rt_local *l, int (*fn)(int device, void *arg), void *arg) {
  pthread_t th[MAXDEV];
  targ ta[MAXDEV];
  int rc = 0;
  for (int i = 0; i < l->ndev; i++) {
    ta[i] = (targ){fn, arg, i, 0};
    if (pthread_create(&th[i], NULL, trampoline, &ta[i])) { ta[i].rc = -1; th[i] = 0; }
  }
  for (int i = 0; i < l->ndev; i++) { if (th[i]) pthread_join(th[i], NULL); rc |= ta[i].rc; }
  return rc ? -1 : 0;
}
