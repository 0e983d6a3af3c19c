/*
** profile.c: the meaning of a device profile's lines (lang/prof.h reads
** their shape), and the writer `carve calibrate` uses.
*/
#include "interp/sim/profile.h"
#include "lang/prof.h"
#include "util/datadir.h"
#include "util/mem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const dt_names[] = {"f32", "tf32", "bf16", "f16"};   /* ORDER sim_dt */
_Static_assert(sizeof dt_names / sizeof dt_names[0] == SIM_NDT, "ORDER sim_dt: dt_names");

const char *sim_dt_name(sim_dt t) { return (unsigned)t < SIM_NDT ? dt_names[t] : "?"; }

static const char *const keys = "device, memory, bandwidth, flops, gemm, launch, kernel, kernel_sizes, node, link";

typedef struct rctx { diag *d; const diag_src *src; sim_profile *p; } rctx;

static loc at(rctx *c, uint32_t off) { return (loc){c->src, off}; }

/* What a profile's numbers may be: no device lies beyond these, and the
** simulator's sums stay finite within them (a launch of 1e308 s made every
** step take inf s and every share of it NaN). */
typedef struct range { double lo, hi; const char *unit, *example; } range;
static const range BYTES = {1, 1e18, "bytes", "80GB"};                 /* memory: up to an exabyte */
static const range RATE = {1, 1e16, "bytes a second", "3.35e12"};      /* bandwidths: up to 10 PB/s */
static const range FLOPS = {1, 1e19, "FLOP/s", "67e12"};
static const range SECONDS = {0, 1, "seconds", "5us"};                 /* launch, latencies, kernel costs */
static const range DEVICES = {1, 1e9, "devices", "8"};
static const range GEMM_FLOPS = {1, 1e24, "FLOPs", "1e9"};
static const range ELEMENTS = {1, 1e18, "elements", "65536"};

/* x, written at off for key (NULL: a kernel's cost), within r; zero: 0 also stands, for "not given" */
static int in_range(rctx *c, uint32_t off, const char *key, double x, const range *r, int zero) {
  if ((x >= r->lo && x <= r->hi) || (zero && x == 0)) return 0;
  return diag_error(c->d, at(c, off), "%s%s%s is %g %s, out of range: give %s%g to %g %s, as in %s", key ? "'" : "a kernel's cost",
                    key ? key : "", key ? "'" : "", x, r->unit, zero && r->lo > 0 ? "0, or " : "", r->lo, r->hi, r->unit, r->example);
}

/* the one number of a line such as 'memory 80GB' */
static int one_number(rctx *c, const prof_line *l, double *x, const range *r) {
  if (l->nitems > 1)
    return diag_error(c->d, at(c, l->items[1].off), "'%s' takes one number (a unit goes right after its number, as in 80GB)", l->key);
  if (l->nitems != 1 || l->items[0].key || l->items[0].kind != PROF_NUM)
    return diag_error(c->d, at(c, l->off), "'%s' takes one number, as in '%s %s'", l->key, l->key, r->example);
  *x = l->items[0].num;
  return in_range(c, l->items[0].off, l->key, *x, r, 0);
}

static int number_item(rctx *c, const prof_item *it, double *x, const range *r, int zero) {
  if (it->kind != PROF_NUM) return diag_error(c->d, at(c, it->off), "'%s' needs a number", it->key ? it->key : it->text);
  *x = it->num;
  return in_range(c, it->off, it->key, *x, r, zero);
}

static int read_flops(rctx *c, const prof_line *l) {
  if (!l->nitems) return diag_error(c->d, at(c, l->off), "flops needs a peak per dtype, as in 'flops f32 = 67e12 bf16 = 989e12'");
  for (int i = 0; i < l->nitems; i++) {
    const prof_item *it = &l->items[i];
    int t = -1;
    for (int k = 0; k < SIM_NDT && it->key; k++) if (!strcmp(it->key, dt_names[k])) t = k;
    if (t < 0) return diag_error(c->d, at(c, it->key ? it->key_off : it->off), "flops takes f32, tf32, bf16 and f16, as in 'f32 = 67e12'");
    if (number_item(c, it, &c->p->flops[t], &FLOPS, t != SIM_F32) < 0) return -1;
  }
  return 0;
}

static int read_gemm(rctx *c, const prof_line *l) {
  sim_profile *p = c->p;
  if (l->nitems != 2 || l->items[0].key || l->items[1].key || l->items[0].kind != PROF_NUM || l->items[1].kind != PROF_NUM)
    return diag_error(c->d, at(c, l->off), "gemm takes a GEMM's FLOPs and the fraction of the peak it reaches, as in 'gemm 1e9 0.6'");
  double x = l->items[0].num, e = l->items[1].num;
  if (in_range(c, l->items[0].off, "gemm", x, &GEMM_FLOPS, 0) < 0) return -1;
  if (!(e > 0 && e <= 1.5)) return diag_error(c->d, at(c, l->items[1].off), "the fraction of the peak must be in (0, 1.5]");
  if (p->ngemm && x <= p->gemm_flops[p->ngemm - 1]) return diag_error(c->d, at(c, l->items[0].off), "gemm lines must go up in FLOPs");
  if (p->ngemm == SIM_MAXPOINTS) return diag_error(c->d, at(c, l->off), "at most %d gemm lines", SIM_MAXPOINTS);
  p->gemm_flops[p->ngemm] = x;
  p->gemm_eff[p->ngemm++] = e;
  return 0;
}

/* kernel NAME FIXED SMALL LARGE: seconds, then seconds per element at the two kernel_sizes */
static int read_kernel(rctx *c, const prof_line *l) {
  sim_profile *p = c->p;
  if (l->nitems < 4 || l->nitems > 5 || l->items[0].key || l->items[0].kind != PROF_WORD)
    return diag_error(c->d, at(c, l->off), "kernel takes a name, a fixed cost, the seconds per element at the two kernel_sizes "
                      "and, for row-wise kernels, a cost per row, as in 'kernel gelu 150ns 0.4ns 1.2ns'");
  const char *name = l->items[0].text;
  double *slot = NULL;
  for (int k = 0; k < RT_NOPS && !slot; k++) if (k != RT_EW && !strcmp(name, rt_op_name((rt_op)k))) slot = p->op_cost[k];
  for (int k = 0; k < RT_NEWFN && !slot; k++) if (!strcmp(name, rt_ewfn_name((rt_ewfn)k))) slot = p->ew_cost[k];
  if (!slot) return diag_error(c->d, at(c, l->items[0].off), "no kernel '%s' (the names 'carve run --profile' prints)", name);
  for (int k = 0; k + 1 < l->nitems; k++) {
    if (l->items[k + 1].key) return diag_error(c->d, at(c, l->items[k + 1].key_off), "kernel takes plain numbers after its name");
    if (number_item(c, &l->items[k + 1], &slot[k], &SECONDS, 0) < 0) return -1;
  }
  if (!(slot[1] > 0 && slot[2] > 0))
    return diag_error(c->d, at(c, l->items[slot[1] > 0 ? 3 : 2].off), "a kernel's costs per element must be positive");
  return 0;
}

static int read_sizes(rctx *c, const prof_line *l) {
  sim_profile *p = c->p;
  if (l->nitems != 2 || l->items[0].kind != PROF_NUM || l->items[1].kind != PROF_NUM || l->items[0].key || l->items[1].key ||
      !(l->items[0].num >= 1) || !(l->items[1].num > l->items[0].num))
    return diag_error(c->d, at(c, l->off), "kernel_sizes takes two element counts, the second larger, as in 'kernel_sizes 65536 4194304'");
  if (in_range(c, l->items[1].off, "kernel_sizes", l->items[1].num, &ELEMENTS, 0) < 0) return -1;
  p->kernel_small = l->items[0].num;
  p->kernel_large = l->items[1].num;
  return 0;
}

static const char *const coll_names[SIM_NCOLL] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};

static int read_link(rctx *c, const prof_line *l) {
  sim_profile *p = c->p;
  if (!l->nitems || l->items[0].key || l->items[0].kind != PROF_WORD)
    return diag_error(c->d, at(c, l->off), "link needs a name first, as in 'link intra bandwidth = 450e9 latency = 3us'");
  const char *name = l->items[0].text;
  if (sim_link_named(p, name)) return diag_error(c->d, at(c, l->items[0].off), "link '%s' is given twice", name);
  if (p->nlinks == SIM_MAXLINKS) return diag_error(c->d, at(c, l->off), "at most %d links", SIM_MAXLINKS);
  sim_link *k = &p->links[p->nlinks];
  memset(k, 0, sizeof *k);
  k->name = name;
  for (int i = 1; i < l->nitems; i++) {
    const prof_item *it = &l->items[i];
    double *slot = NULL;
    if (!it->key) return diag_error(c->d, at(c, it->off), "link takes bandwidth = bytes/s and latency = seconds");
    if (!strcmp(it->key, "bandwidth")) slot = &k->bandwidth;
    else if (!strcmp(it->key, "latency")) slot = &k->latency;
    for (int q = 0; q < SIM_NCOLL && !slot; q++) {
      size_t n = strlen(coll_names[q]);
      if (!strncmp(it->key, coll_names[q], n) && it->key[n] == '.') {
        if (!strcmp(it->key + n + 1, "bandwidth")) slot = &k->kind_bandwidth[q];
        else if (!strcmp(it->key + n + 1, "latency")) slot = &k->kind_latency[q];
      }
    }
    if (!slot) return diag_error(c->d, at(c, it->key_off), "link has no setting '%s' (bandwidth, latency, and KIND.bandwidth, KIND.latency for all_reduce, all_gather, reduce_scatter, all_to_all)", it->key);
    if (number_item(c, it, slot, strstr(it->key, "bandwidth") ? &RATE : &SECONDS, 1) < 0) return -1;
  }
  if (!(k->bandwidth > 0)) return diag_error(c->d, at(c, l->off), "link '%s' needs a positive bandwidth", name);
  p->nlinks++;
  return 0;
}

int sim_profile_parse(arena *a, diag *d, const diag_src *src, sim_profile *p) {
  memset(p, 0, sizeof *p);
  prof_file *f = prof_parse(a, d, src);
  if (!f) return -1;
  rctx c = {d, src, p};
  const char *base = strrchr(src->name, '/');
  base = base ? base + 1 : src->name;
  size_t bl = strlen(base);
  if (bl > 8 && !strcmp(base + bl - 8, ".profile")) bl -= 8;
  p->name = arena_strndup(a, base, bl);
  p->device = p->name;
  uint32_t seen[16] = {0};
  const char *once[] = {"device", "memory", "bandwidth", "flops", "launch", "node"};
  for (int i = 0; i < f->nlines; i++) {
    const prof_line *l = &f->lines[i];
    for (size_t k = 0; k < sizeof once / sizeof once[0]; k++)
      if (!strcmp(l->key, once[k])) {
        if (seen[k]) {
          diag_error(d, at(&c, l->off), "'%s' is given twice", l->key);
          diag_note(d, at(&c, seen[k] - 1), "first given here");
          return -1;
        }
        seen[k] = l->off + 1;
      }
    int rc;
    double x;
    if (!strcmp(l->key, "device")) {
      if (l->nitems != 1 || l->items[0].key || l->items[0].kind == PROF_NUM) rc = diag_error(d, at(&c, l->off), "device takes its name, as in 'device \"NVIDIA H100 SXM5 80GB\"'");
      else { p->device = l->items[0].text; rc = 0; }
    } else if (!strcmp(l->key, "memory")) rc = one_number(&c, l, &p->memory, &BYTES);
    else if (!strcmp(l->key, "bandwidth")) rc = one_number(&c, l, &p->bandwidth, &RATE);
    else if (!strcmp(l->key, "launch")) rc = one_number(&c, l, &p->launch, &SECONDS);
    else if (!strcmp(l->key, "node")) {
      rc = one_number(&c, l, &x, &DEVICES);
      if (rc == 0 && x != floor(x)) rc = diag_error(d, at(&c, l->items[0].off), "node takes a whole number of devices");
      if (rc == 0) p->node = (int)x;
    } else if (!strcmp(l->key, "flops")) rc = read_flops(&c, l);
    else if (!strcmp(l->key, "gemm")) rc = read_gemm(&c, l);
    else if (!strcmp(l->key, "kernel")) rc = read_kernel(&c, l);
    else if (!strcmp(l->key, "kernel_sizes")) rc = read_sizes(&c, l);
    else if (!strcmp(l->key, "link")) rc = read_link(&c, l);
    else rc = diag_error(d, at(&c, l->off), "unknown key '%s' (a profile has %s)", l->key, keys);
    if (rc < 0) return -1;
  }
  loc top = {src, 0};
  if (!p->memory) return diag_error(d, top, "the profile gives no memory: add a line like 'memory 80GB'");
  if (!p->bandwidth) return diag_error(d, top, "the profile gives no memory bandwidth: add a line like 'bandwidth 3.35e12'");
  if (!p->flops[SIM_F32]) return diag_error(d, top, "the profile gives no f32 peak: add a line like 'flops f32 = 67e12'");
  int kernels = 0;
  for (int k = 0; k < RT_NOPS; k++) kernels |= p->op_cost[k][1] > 0;
  for (int k = 0; k < RT_NEWFN; k++) kernels |= p->ew_cost[k][1] > 0;
  if (kernels && !p->kernel_large) return diag_error(d, top, "kernel lines need a 'kernel_sizes SMALL LARGE' line saying where they were measured");
  return 0;
}

const char *sim_profile_local_path(arena *a) {
  const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
  if (x && *x) return arena_printf(a, "%s/carve/local.profile", x);
  return arena_printf(a, "%s/.config/carve/local.profile", h && *h ? h : ".");
}

/* dir/what.profile in the first folder of the ':'-separated list that has
** it; NULL after an error naming the folders and the profiles they hold. */
static const char *find_profile(arena *a, diag *d, const char *what, loc at, const char *list) {
  strbuf where;
  sb_init(&where);
  const char *x, *l = list;
  size_t n;
  while ((n = datadir_next(&l, &x))) {
    const char *path = arena_printf(a, "%.*s/%s.profile", (int)n, x, what);
    if (access(path, F_OK) == 0) { sb_free(&where); return path; }   /* no open: a FIFO would block it */
    sb_printf(&where, "%s%.*s", where.n ? ", " : "", (int)n, x);
  }
  static const char *const ext[] = {".profile", NULL};
  const char *has = datadir_names(a, list, ext);
  diag_error(d, at, "no device profile '%s' (in %s: %s; or 'local' after 'carve calibrate', or a file's path; "
             "CARVE_PATH can name more folders holding profiles/)", what, where.n ? sb_str(&where) : "no folder", *has ? has : "none");
  sb_free(&where);
  return NULL;
}

int sim_profile_load(arena *a, diag *d, const char *what, const char *dir, sim_profile *p) {
  return sim_profile_load_at(a, d, what, LOC_NONE, dir, p);
}

int sim_profile_load_at(arena *a, diag *d, const char *what, loc at, const char *dir, sim_profile *p) {
  size_t n = strlen(what);
  const char *path;
  if (strchr(what, '/') || (n > 8 && !strcmp(what + n - 8, ".profile"))) path = what;
  else if (!strcmp(what, "local")) {
    path = sim_profile_local_path(a);
    if (access(path, F_OK) != 0) return diag_error(d, at, "no profile of this machine at %s yet: run 'carve calibrate' first", path);
  } else if (!(path = find_profile(a, d, what, at, dir))) return -1;
  const diag_src *src = diag_load_file_at(a, d, path, at);
  return src ? sim_profile_parse(a, d, src, p) : -1;
}

/* x in the fewest digits (6 or more) that read back as x: where the
** reader compares (gemm lines going up, kernel_sizes), rounding could
** turn a valid profile into one it refuses */
static void exact(strbuf *b, double x) {
  char t[40];
  for (int prec = 6; prec <= 17; prec++) {
    snprintf(t, sizeof t, "%.*g", prec, x);
    if (strtod(t, NULL) == x) break;
  }
  sb_puts(b, t);
}

void sim_profile_write(strbuf *b, const sim_profile *p, const char *header) {
  if (header) sb_puts(b, header);
  sb_printf(b, "device     \"%s\"\n", p->device);
  sb_printf(b, "memory     %.6g\n", p->memory);
  sb_printf(b, "bandwidth  %.6g\n", p->bandwidth);
  sb_puts(b, "flops     ");
  for (int t = 0; t < SIM_NDT; t++) if (p->flops[t] > 0) sb_printf(b, " %s = %.6g", dt_names[t], p->flops[t]);
  sb_putc(b, '\n');
  for (int i = 0; i < p->ngemm; i++) {
    sb_puts(b, "gemm       ");
    exact(b, p->gemm_flops[i]);
    sb_printf(b, " %.4g\n", p->gemm_eff[i]);
  }
  sb_printf(b, "launch     %.6g\n", p->launch);
  if (p->kernel_large > 0) {
    sb_puts(b, "kernel_sizes ");
    exact(b, p->kernel_small);
    sb_putc(b, ' ');
    exact(b, p->kernel_large);
    sb_putc(b, '\n');
  }
  for (int k = 0; k < RT_NOPS; k++)
    if (p->op_cost[k][1] > 0) {
      sb_printf(b, "kernel     %-18s %.4g %.4g %.4g", rt_op_name((rt_op)k), p->op_cost[k][0], p->op_cost[k][1], p->op_cost[k][2]);
      if (p->op_cost[k][3] > 0) sb_printf(b, " %.4g", p->op_cost[k][3]);
      sb_putc(b, '\n');
    }
  for (int k = 0; k < RT_NEWFN; k++)
    if (p->ew_cost[k][1] > 0) sb_printf(b, "kernel     %-18s %.4g %.4g %.4g\n", rt_ewfn_name((rt_ewfn)k), p->ew_cost[k][0], p->ew_cost[k][1], p->ew_cost[k][2]);
  if (p->node) sb_printf(b, "node       %d\n", p->node);
  for (int i = 0; i < p->nlinks; i++) {
    const sim_link *k = &p->links[i];
    sb_printf(b, "link       %s bandwidth = %.6g latency = %.6g", k->name, k->bandwidth, k->latency);
    for (int q = 0; q < SIM_NCOLL; q++) {
      if (k->kind_bandwidth[q] > 0) sb_printf(b, " %s.bandwidth = %.6g", coll_names[q], k->kind_bandwidth[q]);
      if (k->kind_latency[q] > 0) sb_printf(b, " %s.latency = %.6g", coll_names[q], k->kind_latency[q]);
    }
    sb_putc(b, '\n');
  }
}

double sim_gemm_efficiency(const sim_profile *p, double flops) {
  int n = p->ngemm;
  if (!n) return 1.0;
  if (flops <= p->gemm_flops[0]) return p->gemm_eff[0];
  if (flops >= p->gemm_flops[n - 1]) return p->gemm_eff[n - 1];
  int i = 1;
  while (p->gemm_flops[i] < flops) i++;
  double x0 = log(p->gemm_flops[i - 1]), x1 = log(p->gemm_flops[i]), t = (log(flops) - x0) / (x1 - x0);
  return p->gemm_eff[i - 1] + t * (p->gemm_eff[i] - p->gemm_eff[i - 1]);
}

double sim_kernel_seconds(const sim_profile *p, const double cost[4], double elems, double rows) {
  if (!(cost[1] > 0)) return 0;
  double per;
  if (elems <= p->kernel_small) per = cost[1];
  else if (elems >= p->kernel_large) per = cost[2];
  else {
    double t = (log(elems) - log(p->kernel_small)) / (log(p->kernel_large) - log(p->kernel_small));
    per = cost[1] + t * (cost[2] - cost[1]);
  }
  return cost[0] + elems * per + rows * cost[3];
}

const sim_link *sim_link_named(const sim_profile *p, const char *name) {
  for (int i = 0; i < p->nlinks; i++) if (!strcmp(p->links[i].name, name)) return &p->links[i];
  return NULL;
}

const char *sim_profile_dir(void) { return datadir_path(DATADIR_PROFILES); }
