/*
** comm_local.c: threads as devices. The last device to reach a collective
** computes every member's output from every member's input while the
** others wait, so inputs stay alive and nothing is copied twice.
*/
#include "runtime/comm_local.h"
#include "runtime/backend.h"
#include "runtime/dtype.h"
#include "runtime/mesh.h"
#include "util/arena.h"
#include "util/diag.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEV 64

typedef struct slot {
  int arrived;
  unsigned gen;
  const void *in[MAXDEV];
  void *arg[MAXDEV];          /* the world's rendezvous: what each device brought */
  void *out[MAXDEV];
  const rt_instr *ins[MAXDEV];
} slot;

typedef struct devcomm { rt_comm c; rt_local *l; int device; } devcomm;

typedef struct devworld { rt_world w; rt_local *l; } devworld;

/* a pipeline stage's send, waiting for its receive */
typedef struct letter {
  int group, color, from, to;
  int64_t tag;
  void *data;
  size_t bytes;
  struct letter *next;
} letter;

struct rt_local {
  const rt_prog *p;
  letter *mail;           /* sends not yet received, oldest first */
  int ndev;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  slot *slots;            /* [group][color] */
  int ncolors;
  devcomm dev[MAXDEV];
  devworld world[MAXDEV];
  slot all;               /* the whole world's rendezvous */
  int abandoned;          /* a device's run failed: nobody waits for it any more */
};

static int l_size(void *impl, int group) { devcomm *d = impl; return rt_mesh_group_size(d->l->p, group); }
static int l_index(void *impl, int group) { devcomm *d = impl; return rt_mesh_index(d->l->p, d->device, group); }

/* the sum over the members of element x of each input, in out's dtype
   (f32 as a float sum in member order; others in double or int64) */
static void sum_at(rt_dtype t, int P, const void *const *in, int64_t x, void *const *out, int64_t y, int nout) {
  if (t == RT_F32) {
    float s = 0;
    for (int i = 0; i < P; i++) s += ((const float *)in[i])[x];
    for (int j = 0; j < nout; j++) ((float *)out[j])[y] = s;
  } else if (rt_dtype_isfloat(t)) {
    double s = 0;
    for (int i = 0; i < P; i++) s += rt_load_f(t, in[i], x);
    for (int j = 0; j < nout; j++) rt_store_f(t, out[j], y, s);
  } else {
    int64_t s = 0;
    for (int i = 0; i < P; i++) s = t == RT_I1 ? (s | rt_load_i(t, in[i], x)) : (int64_t)((uint64_t)s + (uint64_t)rt_load_i(t, in[i], x));
    for (int j = 0; j < nout; j++) rt_store_i(t, out[j], y, s);
  }
}

/* the largest (fn RT_RMAX) or smallest (RT_RMIN) over the members of
   element x of each input, into every output (exact in any dtype) */
static void extreme_at(rt_dtype t, int fn, int P, const void *const *in, int64_t x, void *const *out) {
  if (rt_dtype_isfloat(t)) {
    double m = rt_load_f(t, in[0], x);
    for (int i = 1; i < P; i++) {
      double v = rt_load_f(t, in[i], x);
      if (fn == RT_RMAX ? v > m : v < m) m = v;
    }
    for (int j = 0; j < P; j++) rt_store_f(t, out[j], x, m);
  } else {
    int64_t m = rt_load_i(t, in[0], x);
    for (int i = 1; i < P; i++) {
      int64_t v = rt_load_i(t, in[i], x);
      if (fn == RT_RMAX ? v > m : v < m) m = v;
    }
    for (int j = 0; j < P; j++) rt_store_i(t, out[j], x, m);
  }
}

/* every member's output from every member's input */
static void compute(const rt_instr *ins, int P, const void *const *in, void *const *out) {
  int64_t O = ins->outer, N = ins->n, I = ins->inner;
  rt_dtype t = (rt_dtype)ins->odt;
  size_t es = rt_dtype_size(t);
  switch (ins->op) {
  case RT_ALL_REDUCE: {
    int64_t n = O * N * I;
    for (int64_t x = 0; x < n; x++)
      if (ins->fn == RT_RSUM) sum_at(t, P, in, x, out, x, P);
      else extreme_at(t, ins->fn, P, in, x, out);
    return;
  }
  case RT_ALL_GATHER:
    for (int j = 0; j < P; j++)
      for (int i = 0; i < P; i++)
        for (int64_t o = 0; o < O; o++)
          memcpy((char *)out[j] + (size_t)((o * N * P + (int64_t)i * N) * I) * es, (const char *)in[i] + (size_t)(o * N * I) * es,
                 es * (size_t)(N * I));
    return;
  case RT_REDUCE_SCATTER: {
    int64_t piece = N / P;
    for (int j = 0; j < P; j++)
      for (int64_t o = 0; o < O; o++)
        for (int64_t x = 0; x < piece * I; x++)
          sum_at(t, P, in, (o * N + (int64_t)j * piece) * I + x, out + j, o * piece * I + x, 1);
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
        memcpy((char *)out[j] + (size_t)x * es, (const char *)in[src] + (size_t)off * es, es);
      }
    return;
  }
  default: return;
  }
}

/* A pipeline stage's transfer: a send leaves a copy and goes on; a receive
   waits for the copy from the member at index n2 under the same tag. */
static int l_p2p(devcomm *d, const rt_instr *ins, void *out, const void *in, char *err, size_t errlen) {
  rt_local *l = d->l;
  const rt_prog *p = l->p;
  int b = ins->op == RT_SEND ? ins->in[0] : ins->out;
  int P = rt_mesh_group_size(p, ins->group), me = rt_mesh_index(p, d->device, ins->group);
  int64_t peer = ins->mode & RT_P2P_RING ? (me + ins->n2) % (P ? P : 1) : ins->n2;
  if (b < 0 || b >= p->nbufs || peer < 0 || peer >= P || peer == me)
    return diag_errbuf(err, errlen, "%s: no peer %lld in a group of %d", rt_op_name((rt_op)ins->op), (long long)ins->n2, P);
  size_t bytes = (size_t)p->bufs[b].nelem * rt_dtype_size(p->bufs[b].dtype);
  int color = rt_mesh_color(p, d->device, ins->group);
  pthread_mutex_lock(&l->mu);
  if (ins->op == RT_SEND) {
    letter *t = mem_calloc(1, sizeof *t), **end = &l->mail;
    *t = (letter){ins->group, color, me, (int)peer, ins->off, mem_alloc(bytes + 1), bytes, NULL};
    memcpy(t->data, in, bytes);
    while (*end) end = &(*end)->next;
    *end = t;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return 0;
  }
  for (;;) {
    for (letter **at = &l->mail; *at; at = &(*at)->next) {
      letter *t = *at;
      if (t->group != ins->group || t->color != color || t->from != peer || t->to != me || t->tag != ins->off) continue;
      *at = t->next;
      pthread_mutex_unlock(&l->mu);
      int rc = t->bytes == bytes ? 0 : diag_errbuf(err, errlen, "recv: %zu bytes sent, %zu expected", t->bytes, bytes);
      if (!rc) memcpy(out, t->data, bytes);
      free(t->data);
      free(t);
      return rc;
    }
    if (l->abandoned) {
      pthread_mutex_unlock(&l->mu);
      return diag_errbuf(err, errlen, "recv: another device of the mesh failed first");
    }
    pthread_cond_wait(&l->cv, &l->mu);
  }
}

/* A device's run failed: wake everyone waiting on it. */
static void l_abandon(void *impl) {
  devcomm *d = impl;
  rt_local *l = d->l;
  pthread_mutex_lock(&l->mu);
  l->abandoned = 1;
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->mu);
}

static int l_run(void *impl, const rt_instr *ins, void *out, const void *in, char *err, size_t errlen) {
  devcomm *d = impl;
  rt_local *l = d->l;
  if (ins->op == RT_SEND || ins->op == RT_RECV) return l_p2p(d, ins, out, in, err, errlen);
  if (ins->fn != RT_RSUM && (ins->op != RT_ALL_REDUCE || (ins->fn != RT_RMAX && ins->fn != RT_RMIN)))
    return diag_errbuf(err, errlen, "%s: no reduction %d", rt_op_name((rt_op)ins->op), ins->fn);
  int P = rt_mesh_group_size(l->p, ins->group), me = rt_mesh_index(l->p, d->device, ins->group);
  slot *s = &l->slots[ins->group * l->ncolors + rt_mesh_color(l->p, d->device, ins->group)];
  pthread_mutex_lock(&l->mu);
  s->in[me] = in;
  s->out[me] = out;
  s->ins[me] = ins;
  if (++s->arrived == P) {
    int same = 1;
    for (int i = 0; i < P; i++)
      same &= s->ins[i]->op == ins->op && s->ins[i]->fn == ins->fn && s->ins[i]->n == ins->n && s->ins[i]->outer == ins->outer;
    if (same) compute(ins, P, s->in, s->out);
    s->arrived = 0;
    s->gen++;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    if (!same) { snprintf(err, errlen, "devices reached different collectives"); return -1; }
    return 0;
  }
  unsigned gen = s->gen;
  while (s->gen == gen && !l->abandoned) pthread_cond_wait(&l->cv, &l->mu);
  int gone = s->gen == gen;
  pthread_mutex_unlock(&l->mu);
  return gone ? diag_errbuf(err, errlen, "%s: another device of the mesh failed first", rt_op_name((rt_op)ins->op)) : 0;
}

/* ---- the world: every device meets; the last to arrive does the work ---- */

typedef void (*meetfn)(rt_local *l, void **arg);

static void meet(rt_local *l, int device, void *arg, meetfn fn) {
  slot *s = &l->all;
  pthread_mutex_lock(&l->mu);
  s->arg[device] = arg;
  if (++s->arrived == l->ndev) {
    fn(l, s->arg);
    s->arrived = 0;
    s->gen++;
    pthread_cond_broadcast(&l->cv);
  } else {
    unsigned gen = s->gen;
    while (s->gen == gen) pthread_cond_wait(&l->cv, &l->mu);
  }
  pthread_mutex_unlock(&l->mu);
}

typedef struct agree_arg { int status; const char *msg; char *err; size_t errlen; int rc; } agree_arg;

static void do_agree(rt_local *l, void **arg) {
  int who = -1;
  for (int i = 0; i < l->ndev && who < 0; i++) if (((agree_arg *)arg[i])->status) who = i;
  for (int i = 0; i < l->ndev; i++) {
    agree_arg *a = arg[i];
    a->rc = 0;
    if (who >= 0) {
      const char *m = ((agree_arg *)arg[who])->msg;
      a->rc = diag_errbuf(a->err, a->errlen, "rank %d: %s", who, m && m[0] ? m : "failed");
    }
  }
}

static int w_agree(void *impl, int status, const char *msg, char *err, size_t errlen) {
  devworld *w = impl;
  agree_arg a = {status, msg, err, errlen, 0};
  meet(w->l, w->w.rank, &a, do_agree);
  return a.rc;
}

typedef struct max_arg { double *x; int n; } max_arg;

static void do_max(rt_local *l, void **arg) {
  max_arg *a0 = arg[0];
  for (int k = 0; k < a0->n; k++) {
    double m = a0->x[k];
    for (int i = 1; i < l->ndev; i++) if (((max_arg *)arg[i])->x[k] > m) m = ((max_arg *)arg[i])->x[k];
    for (int i = 0; i < l->ndev; i++) ((max_arg *)arg[i])->x[k] = m;
  }
}

static int w_max(void *impl, double *x, int n) {
  devworld *w = impl;
  max_arg a = {x, n};
  meet(w->l, w->w.rank, &a, do_max);
  return 0;
}

typedef struct move_arg { const void *src; void *dst; size_t bytes; } move_arg;

static void do_gather(rt_local *l, void **arg) {
  char *all = ((move_arg *)arg[0])->dst;
  for (int i = 0; i < l->ndev; i++) {
    move_arg *a = arg[i];
    if (all && a->bytes) memcpy(all + (size_t)i * a->bytes, a->src, a->bytes);
  }
}

static int w_gather(void *impl, const void *local, size_t bytes, void *all) {
  devworld *w = impl;
  move_arg a = {local, all, bytes};
  meet(w->l, w->w.rank, &a, do_gather);
  return 0;
}

static void do_bcast(rt_local *l, void **arg) {
  const move_arg *a0 = arg[0];
  for (int i = 1; i < l->ndev; i++) {
    move_arg *a = arg[i];
    if (a->bytes) memcpy(a->dst, a0->src, a->bytes);
  }
}

static int w_bcast(void *impl, void *buf, size_t n) {
  devworld *w = impl;
  move_arg a = {buf, buf, n};
  meet(w->l, w->w.rank, &a, do_bcast);
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
  for (int i = 0; i < n; i++) {
    l->dev[i] = (devcomm){{&l->dev[i], l_size, l_index, l_run, 0, l_abandon}, l, i};
    l->world[i] = (devworld){{&l->world[i], i, n, w_agree, w_max, w_gather, w_bcast}, l};
  }
  return l;
}

void rt_local_free(rt_local *l) {
  if (!l) return;
  while (l->mail) { letter *t = l->mail; l->mail = t->next; free(t->data); free(t); }
  pthread_mutex_destroy(&l->mu);
  pthread_cond_destroy(&l->cv);
  free(l->slots);
  free(l);
}

int rt_local_devices(const rt_local *l) { return l->ndev; }
const rt_comm *rt_local_comm(rt_local *l, int device) { return &l->dev[device].c; }
const rt_world *rt_local_world(rt_local *l, int device) { return &l->world[device].w; }

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
  if (l->ndev > 1) rt_blas_hold();       /* the devices share the cores: BLAS on one thread each (backend.h) */
  for (int i = 0; i < l->ndev; i++) {
    ta[i] = (targ){fn, arg, i, 0};
    if (pthread_create(&th[i], NULL, trampoline, &ta[i])) { ta[i].rc = -1; th[i] = 0; }
  }
  for (int i = 0; i < l->ndev; i++) { if (th[i]) pthread_join(th[i], NULL); rc |= ta[i].rc; }
  if (l->ndev > 1) rt_blas_release();
  return rc ? -1 : 0;
}
