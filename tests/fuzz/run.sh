#!/usr/bin/env bash
# make fuzz: build carve's library with clang under libFuzzer, ASan and
# UBSan in its own folder (fuzz-build/), link every harness of tests/fuzz,
# seed each from examples/ and tests/ (tests/fuzz/seeds/ for lua, progfile
# and diff), and run each for FUZZ_SECONDS
# (default 60). A finding stops that harness and leaves its input in
# fuzz-build/findings/; the figures (executions, coverage) go to
# fuzz-build/fuzz-results.txt. FUZZ_SEEDS: more folders of real programs
# (StableHLO exports, say), whose .mlir files seed the StableHLO harness and
# whose .cir files seed the model harness. Usage: run.sh SRCDIR [HARNESS...]
set -u
src=$(cd "${1:?usage: run.sh SRCDIR [HARNESS...]}" && pwd); shift
secs=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
out=$(pwd)/fuzz-build
CC=${FUZZ_CC:-clang}
command -v "$CC" >/dev/null || { echo "make fuzz: $CC is missing (apt-get install clang)" >&2; exit 1; }
mkdir -p "$out/findings" "$out/corpus"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# the library, instrumented for coverage but without libFuzzer's main
if [ ! -f "$out/lib/Makefile" ]; then
  mkdir -p "$out/lib"
  (cd "$out/lib" && "$src/configure" -q CC="$CC" CFLAGS="-g -O1 -fsanitize=fuzzer-no-link $san") || exit 1
fi
make -s -C "$out/lib" -j"$(nproc)" libcarve.a >/dev/null || exit 1
flags="-g -O1 -std=c11 -D_GNU_SOURCE -DSRCDIR=\"$src\" -I$src -I$out/lib $(pkg-config --cflags lua5.4)"
libs="$out/lib/libcarve.a $(pkg-config --libs lua5.4) -lopenblas -lpthread -lm"
all="cir tac safet options repl mlir pipeline profile lua progfile diff"
[ $# -gt 0 ] && all="$*"
seed() {  # seed NAME: the starting corpus of a harness
  local d="$out/corpus/$1"
  mkdir -p "$d"
  case $1 in
    cir) cp "$src"/examples/*.cir "$src"/tests/data/*.cir "$src"/tests/errors/*.cir "$d/" 2>/dev/null
         for f in ${FUZZ_SEEDS:-}; do find "$f" -name '*.cir' -exec cp {} "$d/" \; ; done ;;
    tac) cp "$src"/examples/*.tac "$src"/stdlib-tactics/*.tac "$src"/tests/data/*.tac "$src"/tests/errors/*.tac "$d/" 2>/dev/null ;;
    safet) cp "$src"/tests/data/*.safetensors "$d/" 2>/dev/null ;;
    options) printf 'sgd(lr = 0.01)' > "$d/sgd"; printf 'adam(lr = 1e-3, beta1 = 0.9, weight_decay = 0.1)' > "$d/adam"
             printf 'batch = 4, model = 2' > "$d/mesh"; printf 'sgd(lr = 0.1, momentum = 0.9)' > "$d/mom" ;;
    repl) printf 'shard input "x" dim 0 on b\nmesh\nvalues\nshow h\nexplain h\nconflicts\ncollectives\nundo\nreset\nhelp\n' > "$d/session"
          printf 'tactic t {\n  shard param "w" dim 1 on m\n}\nschedule t\ncost\n' > "$d/multi"
          cp "$src"/tests/data/fuzz/*.repl "$d/" 2>/dev/null ;;   # sessions found before (tests/data/fuzz/README)
    mlir) find "$src/tests" -name '*.mlir' -exec cp {} "$d/" \; 2>/dev/null
          for f in ${FUZZ_SEEDS:-}; do find "$f" -name '*.mlir' -exec cp {} "$d/" \; ; done ;;
    profile) cp "$src"/profiles/*.profile "$d/" 2>/dev/null
             printf 'device "cpu"\nmemory 24GB\nbandwidth 2.8e10\nflops f32 = 1.04e11\ngemm 23170 0.63\ngemm 6.07e9 0.99\nlaunch 27ns\nkernel_sizes 65536 4194304\nkernel softmax 3.9e-08 9.7e-10 1.1e-09 1.5e-07\nkernel attention 0 1.1e-09 1.1e-09 5.4e-07\nkernel gelu 150ns 0.4ns 1.2ns\nnode 2\nlink intra bandwidth = 5e9 latency = 3us all_reduce.bandwidth = 4e9\n' > "$d/calibrated.profile" ;;
    pipeline) for m in mlp_small gpt2_small; do
                for t in "$src"/examples/${m}*.tac "$src"/examples/${m%_small}_*.tac; do
                  [ -f "$t" ] && { cat "$src/examples/$m.cir"; printf '\n%%%%\n'; cat "$t"; printf '\n%%%%\nadam(lr = 1e-3)\n'; } > "$d/$m.$(basename "$t" .tac)"
                done
              done
              # the search too: auto tactics (with small budgets) on the small GPT and the MLP
              { cat "$src/examples/gpt2_small.cir"; printf '\n%%%%\nversion 1\nmesh batch = 2, model = 2\n'
                printf 'tactic found = auto (axes = [batch, model], budget = 40)\nschedule found\n%%%%\nadam(lr = 1e-3)\n'; } > "$d/auto_gpt"
              { cat "$src/examples/mlp.cir"; printf '\n%%%%\nversion 1\nmesh model = 4\n'
                printf 'tactic t = auto (axes = [model], over = [params], budget = 30)\nschedule t\n%%%%\nsgd(lr = 0.1)\n'; } > "$d/auto_mlp"
              cp "$src/tests/data/chain.cir" "$d/chain" ;;
    lua) cp "$src"/stdlib-tactics/*.lua "$src"/examples/*.lua "$src"/tests/data/fuzz/*.lua "$src"/tests/fuzz/seeds/lua/*.lua "$d/" 2>/dev/null ;;
    progfile) cp "$src"/tests/fuzz/seeds/progfile/* "$d/" 2>/dev/null ;;   # carve lower -o of the examples (seeds/README)
    diff) cp "$src"/tests/fuzz/seeds/diff/* "$d/" 2>/dev/null ;;
  esac
}
: > "$out/fuzz-results.txt"
status=0
for h in $all; do
  bin="$out/fuzz_$h"
  "$CC" $flags -fsanitize=fuzzer $san -o "$bin" "$src/tests/fuzz/fuzz_$h.c" $libs || { status=1; continue; }
  seed "$h"
  echo "make fuzz: $h for ${secs}s" >&2
  log="$out/fuzz_$h.log"
  # lua: a run past 10 s is a finding (the sandbox's instruction limit did not
  # hold), and what scripts print (to stderr) stays out of the log; progfile
  # and mlir: the small GPT's program file is 177 KB, a BERT export 256 KB
  opts="-timeout=20 -max_len=65536"
  case $h in
    lua) opts="-timeout=10 -max_len=65536 -close_fd_mask=2" ;;
    progfile|mlir) opts="-timeout=20 -max_len=262144" ;;
  esac
  (cd "$out/findings" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     "$bin" -max_total_time="$secs" $opts -rss_limit_mb=4096 -jobs="$jobs" -workers="$jobs" \
     -print_final_stats=1 -artifact_prefix="$out/findings/$h-" "$out/corpus/$h" > "$log" 2>&1)
  rc=$?
  # (the log holds each job's fuzz-N.log too: libFuzzer copies it there when the job ends)
  execs=$(grep -h 'stat::number_of_executed_units' "$log" 2>/dev/null | awk '{s += $2} END {print s + 0}')
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  printf '%-9s %12s executions in %ss, %s, rc %d\n' "$h" "$execs" "$secs" "${cov:-cov: ?}" "$rc" | tee -a "$out/fuzz-results.txt"
  [ $rc -ne 0 ] && { status=1; grep -m3 -E 'ERROR|SUMMARY|fuzz finding' "$log" >&2; }
done
exit $status
