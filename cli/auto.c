/*
** auto.c: carve auto: run the schedule's auto tactics and keep what they
** found as a tactic file, checked to load back to exactly the found plan.
*/
#include "cli/cli.h"
#include "util/file.h"
#include "interp/report/report.h"
#include "util/file.h"
#include "util/json.h"

#include <errno.h>
#include <string.h>

static void print_json(const session *s, const tactic_found *list, const char *out) {
  json j;
  json_init(&j);
  json_obj(&j);
  json_key(&j, "output"); json_str(&j, out);
  json_key(&j, "tactics"); json_arr(&j);
  for (const tactic_found *x = list; x; x = x->next) {
    const search_result *r = &x->r;
    json_obj(&j);
    json_key(&j, "name"); json_str(&j, x->name);
    json_key(&j, "device"); json_str(&j, x->prof->name);
    json_key(&j, "objective"); json_str(&j, x->opts.objective == SEARCH_MEMORY ? "memory" : "time");
    json_key(&j, "memory_limit"); json_num(&j, x->opts.memory_limit);
    json_key(&j, "seed"); json_int(&j, (int64_t)x->opts.seed);
    json_key(&j, "strategy"); json_str(&j, x->opts.strategy == SEARCH_MCTS ? "mcts" : x->opts.beam == 1 ? "greedy" : "beam");
    json_key(&j, "beam"); json_int(&j, x->opts.beam);
    json_key(&j, "evaluations"); json_int(&j, r->st.evals);
    json_key(&j, "candidates"); json_int(&j, r->st.candidates);
    json_key(&j, "choices"); json_int(&j, r->st.choices);
    json_key(&j, "values"); json_int(&j, r->st.values);
    json_key(&j, "rounds"); json_int(&j, r->st.rounds);
    json_key(&j, "seconds"); json_num(&j, r->st.seconds);
    json_key(&j, "fits"); json_bool(&j, r->fits);
    json_key(&j, "before"); json_obj(&j);
    json_key(&j, "step_seconds"); json_num(&j, r->sim_start);
    json_key(&j, "peak_bytes"); json_num(&j, r->mem_start);
    json_end_obj(&j);
    json_key(&j, "after"); json_obj(&j);
    json_key(&j, "step_seconds"); json_num(&j, r->sim_found);
    json_key(&j, "peak_bytes"); json_num(&j, r->mem_found);
    json_end_obj(&j);
    json_key(&j, "actions"); json_arr(&j);
    for (int k = 0; k < r->nacts; k++) {
      strbuf t;
      sb_init(&t);
      search_action_text(s->plan, &r->acts[k], &t);
      json_obj(&j);
      json_key(&j, "tactic"); json_str(&j, arena_printf((arena *)&s->mem, "%s_%d", x->name, k + 1));
      json_key(&j, "statements"); json_arr(&j);
      for (char *q = (char *)sb_str(&t), *e; *q; q = e + 1) {
        e = strchr(q, '\n');
        *e = 0;
        json_str(&j, q);
      }
      json_end_arr(&j);
      json_key(&j, "estimated_step_seconds"); json_num(&j, r->acts[k].after.seconds);
      json_key(&j, "estimated_peak_bytes"); json_num(&j, r->acts[k].after.memory);
      json_end_obj(&j);
      sb_free(&t);
    }
    json_end_arr(&j);
    json_end_obj(&j);
  }
  json_end_arr(&j);
  json_end_obj(&j);
  puts(sb_str(&j.out));
  json_free(&j);
}

static void print_text(const session *s, const tactic_found *list, const char *out) {
  strbuf b;
  sb_init(&b);
  arena a;
  arena_init(&a);
  report_mesh(&b, s->plan);
  for (const tactic_found *x = list; x; x = x->next) {
    sb_printf(&b, "\nauto tactic '%s':\n", x->name);
    tactic_found_summary(&b, x, "  ", &a);
    for (int k = 0; k < x->r.nacts; k++) {
      strbuf t;
      sb_init(&t);
      search_action_text(s->plan, &x->r.acts[k], &t);
      sb_printf(&b, "  %s_%d: estimated step %.3f ms, %s a device\n", x->name, k + 1, x->r.acts[k].after.seconds * 1e3,
                report_bytes(&a, x->r.acts[k].after.memory));
      for (const char *q = sb_str(&t), *e; *q; q = e + 1) {
        e = strchr(q, '\n');
        sb_printf(&b, "    %.*s\n", (int)(e - q), q);
      }
      sb_free(&t);
    }
  }
  sb_printf(&b, "\nwrote %s (it loads back to exactly this plan)\n", out);
  fputs(sb_str(&b), stdout);
  sb_free(&b);
  arena_free(&a);
}

int cli_auto(const cli_opts *o) {
  if (!o->out) {
    fprintf(stderr, "carve: error: carve auto needs -o FOUND.tac: where to write the tactics it finds (see 'carve auto --help')\n");
    return 2;
  }
  session s;
  session_init(&s);
  session_opts so;
  cli_session_opts(o, &so);
  tactic_found *found = NULL;
  so.tac.found = &found;
  int rc = 0;
  if (session_load(&s, &so) < 0) { cli_report(&s.diag); rc = 1; goto out; }
  if (!found) {
    fprintf(stderr, "%s: error: the schedule runs no auto tactic; declare one, as in 'tactic found = auto (axes = [model])', "
            "and name it in the schedule\n", o->files[1]);
    rc = 1;
    goto out;
  }
  strbuf text;
  sb_init(&text);
  if (tactic_found_file(s.g, s.tac, s.plan, found, &so.tac, o->out, &text, &s.mem, &s.diag) < 0) {
    cli_report(&s.diag);
    rc = 1;
  } else if (file_write_atomic(o->out, sb_str(&text), text.n) < 0) {
    fprintf(stderr, "carve: error: cannot write '%s': %s\n", o->out, strerror(errno));
    rc = 1;
  } else if (o->json) print_json(&s, found, o->out);
  else print_text(&s, found, o->out);
  sb_free(&text);
  if (rc == 0 && s.diag.nwarnings) cli_report(&s.diag);
out:
  session_free(&s);
  return rc;
}
