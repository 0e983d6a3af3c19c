/* fuzz_profile.c: the device-profile reader (interp/sim/profile.c), which
** reads what --device names. What it accepts, the writer writes back and
** the reader reads again to the same figures. */
#include "fuzz.h"
#include "interp/sim/profile.h"

#include <math.h>

static int same(double a, double b) { return a == b || fabs(a - b) <= 1e-3 * fabs(b); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  arena a;
  arena_init(&a);
  diag d;
  diag_init(&d);
  static const char *const names[] = {"p.profile"};
  sim_profile p, q;
  const diag_src *src = diag_src_string(&a, "p.profile", (const char *)data, size);
  if (sim_profile_parse(&a, &d, src, &p) < 0) fuzz_failed_well(&d, names, 1);
  else {
    strbuf b;
    sb_init(&b);
    sim_profile_write(&b, &p, "# written back\n");
    const diag_src *back = diag_src_string(&a, "back.profile", sb_str(&b), b.n);
    fuzz_check(sim_profile_parse(&a, &d, back, &q) == 0, "what the writer wrote does not read back", &d);
    fuzz_check(same(q.memory, p.memory) && same(q.bandwidth, p.bandwidth) && same(q.launch, p.launch) &&
               same(q.flops[SIM_F32], p.flops[SIM_F32]) && q.ngemm == p.ngemm && q.nlinks == p.nlinks,
               "the profile read back differs", NULL);
    sb_free(&b);
  }
  diag_free(&d);
  arena_free(&a);
  return 0;
}
