/*
** ring.c: fused attention whose sequence is split over a group of devices
** (context parallelism): ring attention. Each device keeps its queries and
** its block of keys and values; at each of the group's P steps it adds the
** block it holds to an online softmax of its queries (RT_ATTN_BLOCK, the
** causal mask by the block's place in the whole sequence) and passes the
** block on to the next device of the ring, receiving the previous one's
** (RT_SEND and RT_RECV, RT_P2P_RING). No device holds more than two blocks.
**
** The gradient first runs the forward ring again for each row's
** log-sum-exp and output (D = rowsum(dy o)), then a second ring in which
** each block travels with the gradients of its keys and values: each
** device adds its queries' part (RT_ATTN_BLOCK_GRAD) and passes block and
** gradients on; after P steps the gradients arrive back at the block's
** own device. Transfers are tagged by the instruction that sends them,
** the same on every device of the program.
*/
#include "interp/lower/lower_int.h"
#include "runtime/mesh.h"

#include <math.h>

static rt_instr *emit(lctx *c, rt_op op, int out) { return rt_prog_emit(c->p, op, out); }

static void fill(lctx *c, int b, float x) {
  rt_instr *in = emit(c, RT_FILL, b);
  in->alpha = x;
}

/* A ring transfer of b over group g: a send to the next device, or a
   receive from the previous, matched by tag (a send and its receive share
   one: the place of the step's first instruction, and which of the four
   buffers a step passes; the same on every device) */
static void pass(lctx *c, rt_op op, int b, int g, int P, int64_t tag) {
  rt_instr *in = emit(c, op, b);
  if (op == RT_SEND) { in->in[0] = b; in->nin = 1; }
  in->group = g;
  in->mode = RT_P2P_RING;
  in->n2 = op == RT_SEND ? 1 : P - 1;
  in->off = tag;
}

static rt_instr *block(lctx *c, rt_op op, int out, int g, int t, int64_t outer, int64_t m, int64_t dk, const ir_value *v) {
  rt_instr *in = emit(c, op, out);
  in->group = g;
  in->split_dim = (int8_t)t;
  in->outer = outer;
  in->m = in->n = m;
  in->k = dk;
  in->fn = (uint8_t)(v->attr.causal != 0);
  in->alpha = (float)v->attr.scale;
  in->value = v->attr.scale;
  return in;
}

/* The forward ring: out = attention(q, k, v) of this device's queries;
   lse (a buffer, or -1) gets each row's log-sum-exp. */
static void forward_ring(lctx *c, const ir_value *v, int q, int k, int vv, int out, int lse, int g, int P, int64_t outer,
                         int64_t m, int64_t dk) {
  int64_t so[3] = {outer, m, dk}, sr[2] = {outer, m};
  int o = lw_tmp(c, "ring.o", RT_F32, 3, so), mx = lw_tmp(c, "ring.max", RT_F32, 2, sr), l = lw_tmp(c, "ring.sum", RT_F32, 2, sr);
  fill(c, o, 0);
  fill(c, mx, -INFINITY);
  fill(c, l, 0);
  for (int t = 0; t < P; t++) {
    int kn = -1, vn = -1;
    int64_t tag = 4 * (int64_t)c->p->ninstrs;
    if (t < P - 1) {                   /* sent before the block's work, received after it */
      pass(c, RT_SEND, k, g, P, tag);
      pass(c, RT_SEND, vv, g, P, tag + 1);
      kn = lw_tmp(c, "ring.k", RT_F32, 3, so);
      vn = lw_tmp(c, "ring.v", RT_F32, 3, so);
    }
    rt_instr *in = block(c, RT_ATTN_BLOCK, o, g, t, outer, m, dk, v);
    in->nin = 5;
    in->in[0] = q; in->in[1] = k; in->in[2] = vv; in->in[3] = mx; in->in[4] = l;
    if (t < P - 1) {
      pass(c, RT_RECV, kn, g, P, tag);
      pass(c, RT_RECV, vn, g, P, tag + 1);
      k = kn;
      vv = vn;
    }
  }
  rt_instr *f = emit(c, RT_ATTN_FINISH, out);
  f->nin = 3;
  f->in[0] = o; f->in[1] = l; f->in[2] = mx; f->in[3] = lse;
  f->outer = outer; f->m = m; f->k = dk;
}

/* b's rows of width dk into slot `slot` of out's rows of width 3 dk. */
static void into_slot(lctx *c, int b, int out, int slot, int64_t rows, int64_t dk) {
  rt_instr *in = emit(c, RT_BLOCK_COPY, out);
  in->nin = 1;
  in->in[0] = b;
  in->outer = rows; in->m = 1; in->k = 0; in->n = 1; in->n2 = 3; in->off = slot; in->inner = dk;
}

void lw_ring_attention(lctx *c, const ir_value *v, int out, int g) {
  const ir_shape *qs = AS(c, 0);
  int P = rt_mesh_group_size(c->p, g);
  int64_t outer = qs->d[0] * qs->d[1], m = qs->d[2], dk = qs->d[3];
  for (int k = 0; k < v->nargs; k++)
    if (c->p->bufs[AB(c, k)].dtype != RT_F32) {
      diag_error(c->d, v->at, "ring attention (the sequence of '%s' split over devices) computes in f32, and '%s' is %s; "
                 "run attention as written (--no-fuse) to split the sequence in that type", v->name, V(c, v->args[k])->name,
                 ir_dtype_name(V(c, v->args[k])->dtype));
      c->failed = 1;
      return;
    }
  int q = AB(c, 0), k = AB(c, 1), vv = AB(c, 2);
  if (v->op == IR_ATTENTION) { forward_ring(c, v, q, k, vv, out, -1, g, P, outer, m, dk); return; }
  int dy = AB(c, 3);
  int64_t so[3] = {outer, m, dk}, sr[2] = {outer, m};
  int o = lw_tmp(c, "ring.out", RT_F32, 3, so), lse = lw_tmp(c, "ring.lse", RT_F32, 2, sr);
  forward_ring(c, v, q, k, vv, o, lse, g, P, outer, m, dk);
  int dyo = lw_tmp(c, "ring.dy_o", RT_F32, 3, so), D = lw_tmp(c, "ring.D", RT_F32, 2, sr);
  rt_instr *mul = emit(c, RT_EW, dyo);      /* D = rowsum(dy * o) */
  mul->fn = RT_MUL; mul->nin = 2; mul->in[0] = dy; mul->in[1] = o;
  mul->rank = 1; mul->shape[0] = outer * m * dk; mul->stride[0][0] = mul->stride[1][0] = 1;
  rt_instr *sum = emit(c, RT_REDUCE, D);
  sum->fn = RT_RSUM; sum->nin = 1; sum->in[0] = dyo;
  sum->outer = outer * m; sum->n = dk; sum->inner = 1; sum->alpha = 1; sum->value = 1;
  int dq = lw_tmp(c, "ring.dq", RT_F32, 3, so), dkb = lw_tmp(c, "ring.dk", RT_F32, 3, so), dvb = lw_tmp(c, "ring.dv", RT_F32, 3, so);
  fill(c, dq, 0);
  fill(c, dkb, 0);
  fill(c, dvb, 0);
  for (int t = 0; t < P; t++) {
    int64_t tag = 4 * (int64_t)c->p->ninstrs;
    rt_instr *in = block(c, RT_ATTN_BLOCK_GRAD, dq, g, t, outer, m, dk, v);
    in->nin = 8;
    in->in[0] = q; in->in[1] = k; in->in[2] = vv; in->in[3] = dy; in->in[4] = lse; in->in[5] = D; in->in[6] = dkb; in->in[7] = dvb;
    /* the block's gradients go on with it; after the last step they go home */
    int last = t == P - 1, kn = -1, vn = -1;
    int dkn = lw_tmp(c, "ring.dk", RT_F32, 3, so), dvn = lw_tmp(c, "ring.dv", RT_F32, 3, so);
    if (!last) { pass(c, RT_SEND, k, g, P, tag); pass(c, RT_SEND, vv, g, P, tag + 1); }
    pass(c, RT_SEND, dkb, g, P, tag + 2);
    pass(c, RT_SEND, dvb, g, P, tag + 3);
    if (!last) {
      kn = lw_tmp(c, "ring.k", RT_F32, 3, so);
      vn = lw_tmp(c, "ring.v", RT_F32, 3, so);
      pass(c, RT_RECV, kn, g, P, tag);
      pass(c, RT_RECV, vn, g, P, tag + 1);
      k = kn;
      vv = vn;
    }
    pass(c, RT_RECV, dkn, g, P, tag + 2);
    pass(c, RT_RECV, dvn, g, P, tag + 3);
    dkb = dkn;
    dvb = dvn;
  }
  into_slot(c, dq, out, 0, outer * m, dk);
  into_slot(c, dkb, out, 1, outer * m, dk);
  into_slot(c, dvb, out, 2, outer * m, dk);
}
