#!/usr/bin/env bash
# make install gives a working tool: `make install DESTDIR=...` from the
# build folder, the installed tree then moved elsewhere (so that neither
# the configured prefix nor the source or build tree can be where its files
# come from), and the installed carve run from there with an environment
# that names neither tree: `carve --version` names the installed stdlib and
# profiles folders, `use "batch"` applies, simulate finds h100-sxm, a run
# of one step works, CARVE_PATH and CARVE_STDLIB add folders, a tree whose
# data is gone says where it looked and names CARVE_PATH, the man pages
# render, and make uninstall removes every file it put there.
set -u
: "${SRCDIR:?}" "${BUILDDIR:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/carve_install.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
src=$(cd "$SRCDIR" && pwd -P); build=$(cd "$BUILDDIR" && pwd -P)

# A make of its own: nothing of the make that runs the tests (its jobserver,
# TESTS=..., DESTDIR) reaches it.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u DESTDIR \
     make -s -C "$BUILDDIR" install DESTDIR="$tmp/stage" >"$tmp/install.log" 2>&1; then
  echo "FAIL: make install DESTDIR=$tmp/stage"; sed 's/^/    /' "$tmp/install.log" | tail -20; exit 1
fi
exe=$(find "$tmp/stage" -path '*/bin/carve' -type f | head -1)
[ -n "$exe" ] || { echo "FAIL: make install put no bin/carve under DESTDIR"; exit 1; }
rel=${exe#"$tmp/stage"}; rel=${rel%/bin/carve}      # the configured prefix, e.g. /usr/local
mv "$tmp/stage" "$tmp/moved"
P="$tmp/moved$rel"                                   # the prefix, moved
data="$P/share/carve"

# every shipped file is installed (install-data-local in Makefile.am)
for f in "$SRCDIR"/stdlib-tactics/*.tac "$SRCDIR"/stdlib-tactics/*.lua "$SRCDIR"/profiles/*.profile; do
  [ -e "$f" ] || continue
  d=$(basename "$(dirname "$f")")
  cmp -s "$f" "$data/$d/$(basename "$f")" || bad "$d/$(basename "$f") is not installed under $data"
done
for m in man1/carve.1 man5/carve.5; do [ -f "$P/share/man/$m" ] && ok || bad "no $m under $P/share/man"; done
for f in "$SRCDIR"/docs/*.md; do
  cmp -s "$f" "$P/share/doc/carve/$(basename "$f")" || bad "docs/$(basename "$f") is not installed under $P/share/doc/carve"
done
[ -f "$P/share/doc/carve/README.md" ] && ok || bad "the manual is not under $P/share/doc/carve"

# The installed binary in a clean environment: PATH has its bin and the
# system's, the working folder is a copy of the example files, and no
# variable names the source or build tree (the sanitizers' options are
# kept, their suppressions copied).
mkdir -p "$tmp/work" "$tmp/home"
cp "$SRCDIR/examples/mlp_small.cir" "$SRCDIR/examples/mlp_bp.tac" "$tmp/work/"
cp "$SRCDIR/tests/mpi/lsan.supp" "$tmp/lsan.supp"
run_clean() {  # run_clean [VAR=VALUE ...] carve ARGS: stdout and stderr into $tmp/out
  (cd "$tmp/work" && timeout 300 env -i PATH="$P/bin:/usr/bin:/bin" HOME="$tmp/home" OPENBLAS_NUM_THREADS=1 \
     OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mca_base_component_disable_dlclose=1 \
     LSAN_OPTIONS="suppressions=$tmp/lsan.supp:print_suppressions=0" ASAN_OPTIONS="fast_unwind_on_malloc=0" \
     "$@") >"$tmp/out" 2>&1
}
# the source tree's data folders, or the build folder, in what carve said
# (the tree itself may hold the prefix: make distcheck installs into it)
names_tree() {
  grep -qF -e "$src/stdlib-tactics" -e "$src/profiles" -e "$SRCDIR/stdlib-tactics" -e "$SRCDIR/profiles" \
           -e "$build/" -e "$BUILDDIR/" "$tmp/out"
}

run_clean carve --version
if [ $? -eq 0 ] && grep -qx "stdlib tactics: *$data/stdlib-tactics\(:.*\)\?" "$tmp/out" &&
   grep -qx "device profiles: *$data/profiles\(:.*\)\?" "$tmp/out" && ! names_tree; then ok
else bad "carve --version does not name the moved prefix's folders first (or names the source or build tree):"; sed 's/^/    /' "$tmp/out"; fi

run_clean carve apply mlp_small.cir mlp_bp.tac
if [ $? -eq 0 ] && grep -q "batch" "$tmp/out"; then ok; else bad "apply with use \"batch\" from the installed stdlib:"; sed 's/^/    /' "$tmp/out" | head -8; fi

run_clean carve simulate mlp_small.cir mlp_bp.tac --device h100-sxm
if [ $? -eq 0 ] && grep -q "NVIDIA H100" "$tmp/out"; then ok; else bad "simulate --device h100-sxm from the installed profiles:"; sed 's/^/    /' "$tmp/out" | head -8; fi

run_clean carve run mlp_small.cir mlp_bp.tac --mesh batch=1 --train 'sgd(lr = 0.1)' --steps 1
if [ $? -eq 0 ] && grep -q "step 1 .*loss" "$tmp/out"; then ok; else bad "run --steps 1 on a mesh of one device:"; sed 's/^/    /' "$tmp/out" | head -8; fi

# CARVE_PATH: a folder with a profile and a tactic of its own, searched
# before the installed ones, which stay found
mkdir -p "$tmp/extra/profiles" "$tmp/extra/stdlib-tactics"
sed 's/^device .*/device     "Custom Test GPU"/' "$SRCDIR/profiles/h100-sxm.profile" > "$tmp/extra/profiles/mygpu.profile"
printf 'version 1\ntactic rows(axis = batch) {\n  shard inputs dim 0 on axis\n}\n' > "$tmp/extra/stdlib-tactics/rows.tac"
printf 'version 1\nmesh batch = 2\nuse "rows" as r (axis = batch)\nschedule r\n' > "$tmp/work/rows.tac"
run_clean CARVE_PATH="$tmp/nonexistent:$tmp/extra" carve simulate mlp_small.cir mlp_bp.tac --device mygpu
if [ $? -eq 0 ] && grep -q "Custom Test GPU" "$tmp/out"; then ok; else bad "CARVE_PATH's profiles/mygpu.profile:"; sed 's/^/    /' "$tmp/out" | head -8; fi
run_clean CARVE_PATH="$tmp/extra" carve simulate mlp_small.cir --device tpu-v4
[ $? -eq 0 ] && ok || { bad "an installed profile under CARVE_PATH:"; sed 's/^/    /' "$tmp/out" | head -5; }
run_clean CARVE_PATH="$tmp/extra" carve apply mlp_small.cir rows.tac
[ $? -eq 0 ] && ok || { bad "CARVE_PATH's stdlib-tactics/rows.tac:"; sed 's/^/    /' "$tmp/out" | head -8; }
run_clean CARVE_STDLIB="$tmp/extra/stdlib-tactics" carve apply mlp_small.cir rows.tac
[ $? -eq 0 ] && ok || { bad "CARVE_STDLIB still names a stdlib folder:"; sed 's/^/    /' "$tmp/out" | head -5; }
run_clean carve simulate mlp_small.cir --device mygpu
if [ $? -eq 1 ] && grep -qF "$data/profiles" "$tmp/out" && grep -q "CARVE_PATH" "$tmp/out" && ! names_tree; then ok
else bad "an unknown profile: the message names where carve looked and CARVE_PATH:"; sed 's/^/    /' "$tmp/out" | head -5; fi

# Without its data the installed carve says where it looked; it does not
# fall back to the source tree.
mv "$data" "$tmp/data.away"
run_clean carve apply mlp_small.cir mlp_bp.tac
if [ $? -eq 1 ] && grep -q "no stdlib tactic 'batch'" "$tmp/out" && grep -qF "$data/stdlib-tactics" "$tmp/out" &&
   grep -q "CARVE_PATH" "$tmp/out" && ! names_tree; then ok
else bad "no stdlib: the message names the folders and CARVE_PATH, and no source tree:"; sed 's/^/    /' "$tmp/out" | head -5; fi
run_clean CARVE_PATH="$tmp/data.away" carve apply mlp_small.cir mlp_bp.tac
[ $? -eq 0 ] && ok || { bad "CARVE_PATH naming the moved data folder:"; sed 's/^/    /' "$tmp/out" | head -5; }
mv "$tmp/data.away" "$data"

# the installed man pages render without warnings
if command -v man >/dev/null 2>&1; then
  for m in man1/carve.1 man5/carve.5; do
    w=$(MANWIDTH=80 LC_ALL=C man -l "$P/share/man/$m" 2>&1 >"$tmp/out") && [ -z "$w" ] && grep -q "CARVE_PATH" "$tmp/out" && ok ||
      bad "man -l $m: ${w:-no CARVE_PATH in the page}"
  done
fi

# make uninstall takes back every file make install put there
mv "$tmp/moved" "$tmp/stage"
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u DESTDIR \
     make -s -C "$BUILDDIR" uninstall DESTDIR="$tmp/stage" >"$tmp/install.log" 2>&1; then
  left=$(find "$tmp/stage" -type f)
  [ -z "$left" ] && ok || bad "make uninstall left: $left"
else
  bad "make uninstall DESTDIR=$tmp/stage"; sed 's/^/    /' "$tmp/install.log" | tail -5
fi

echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -ge 14 ]
