#!/usr/bin/env bash
# The manual (docs/*.md) is run, so that it cannot drift from the code.
#
# Fenced blocks whose tag is one of these are executed, in the order they
# appear, each document in a working folder of its own (a copy of examples/,
# links to tests/, profiles/ and docs/, and `carve` on PATH), so that a
# later block of a document may use the files an earlier one wrote:
#
#   ```sh         commands run from the repository root: bash -e, must exit 0
#   ```sh-fails   the same, must exit non-zero (a refusal, not a crash)
#   ```cir        a model file: must pass `carve check`
#   ```tac        a tactic file: must pass `carve apply MODEL FILE` (no --lenient)
#   ```lua        a Lua tactic script: saved; applied when it names a model
#
# A block may start with comment lines (# in .cir and .tac, -- in Lua)
# holding settings, `KEY: VALUE`:
#
#   file: NAME     save the block under this name (default: a name of its own)
#   check: ARGS    cir: more arguments for carve check, e.g. --train 'sgd(lr = 0.1)';
#                  a block of several models is checked once for each (--model NAME)
#   model: M ARGS  tac: the model (and arguments) carve apply reads; required.
#                  lua: apply the script to M through `tactic t = lua "FILE" ARGS`
#   mesh: AXES     lua: the mesh of that tactic file (default model = 2)
#   args: (K = V)  lua: the arguments of that tactic
#
# Plain ``` and ```text blocks are not run. Besides the blocks, every op of
# interp/ir/ops.c's table must be named in docs/model-language.md, every
# command `carve --help` lists must have a section in docs/commands.md,
# every option of cli/main.c's table (but the tests' own) must appear there,
# and every relative link in docs/ must reach a file (and heading) of the
# repository.
set -u
: "${SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${CARVE:=$SRCDIR/build/carve}"
docs="$SRCDIR/docs"
if [ ! -d "$docs" ]; then echo "SKIP: no docs/ folder beside the sources"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$SRCDIR/tests/e2e/mpi_env.sh"     # root in a container, more ranks than cores
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
started=$(date +%s)

mkdir -p "$tmp/bin"
ln -s "$CARVE" "$tmp/bin/carve"
export PATH="$tmp/bin:$PATH"

# ---- the blocks ----

# Every tested block of a document into $tmp/blocks/, one index line each:
# "LINE TAG FILE" (FILE holds the block, its fence's indentation removed).
extract() {  # extract DOC.md PREFIX
  awk -v out="$tmp/blocks" -v pre="$2" '
    function flush() { close(f) }
    {
      line = $0
      if (!inb && match(line, /^ *```/)) {
        ind = RLENGTH - 3
        tag = substr(line, RLENGTH + 1)
        sub(/[ \t]+$/, "", tag)
        inb = 1; n++
        tested = (tag == "sh" || tag == "sh-fails" || tag == "cir" || tag == "tac" || tag == "lua")
        if (tested) {
          f = sprintf("%s/%s.%03d.%s", out, pre, n, tag)
          printf "" > f
          print NR, tag, f > (out "/" pre ".index")
        }
        next
      }
      if (inb && match(line, /^ *```[ \t]*$/)) { inb = 0; if (tested) flush(); tested = 0; next }
      if (inb && tested) {
        k = 0
        while (k < ind && substr(line, 1, 1) == " ") { line = substr(line, 2); k++ }
        print line > f
      }
    }
    END { if (inb) print "unclosed fence" > "/dev/stderr" }
  ' "$1"
}

# The value of setting KEY in the leading comment lines of block FILE.
setting() {  # setting FILE KEY
  awk -v key="$2" '
    /^[ \t]*(#|--)/ {
      s = $0
      sub(/^[ \t]*(#|--)[ \t]*/, "", s)
      if (index(s, key ":") == 1) { s = substr(s, length(key) + 2); sub(/^[ \t]+/, "", s); print s; exit }
      next
    }
    { exit }
  ' "$1"
}

run_block() {  # run_block DOC LINE TAG FILE WORKDIR
  local doc=$1 line=$2 tag=$3 f=$4 w=$5 where="docs/$1:$2" rc name m mesh
  case "$tag" in
    sh|sh-fails)
      (cd "$w" && timeout 60 bash -e "$f") </dev/null >"$tmp/out" 2>"$tmp/err"; rc=$?
      if [ "$tag" = sh ] && [ $rc -ne 0 ]; then
        bad "$where: the sh block exits $rc"; sed 's/^/    /' "$tmp/err" | tail -6; return
      fi
      if [ "$tag" = sh-fails ] && { [ $rc -eq 0 ] || [ $rc -ge 124 ]; }; then
        bad "$where: the sh-fails block exits $rc (wanted a refusal: 1..123)"; sed 's/^/    /' "$tmp/err" | tail -6; return
      fi
      ok ;;
    cir)
      name=$(setting "$f" file); name=${name:-block_$line.cir}
      cp "$f" "$w/$name"
      m=$(setting "$f" check)
      local models pick
      models=$(sed -n 's/^[ \t]*model[ \t]\{1,\}\([A-Za-z_][A-Za-z0-9_.]*\).*/\1/p' "$f")
      [ "$(echo "$models" | wc -l)" -gt 1 ] || models=""      # one model: no --model
      for pick in ${models:-""}; do                            # a file of several: each of them
        if (cd "$w" && eval "timeout 60 carve check \"\$name\" ${pick:+--model $pick} $m") </dev/null >"$tmp/out" 2>"$tmp/err"; then ok
        else bad "$where: carve check of the cir block fails${pick:+ (model $pick)}"; sed 's/^/    /' "$tmp/err" | head -6; fi
      done ;;
    tac)
      name=$(setting "$f" file); name=${name:-block_$line.tac}
      cp "$f" "$w/$name"
      m=$(setting "$f" model)
      if [ -z "$m" ]; then bad "$where: a tac block needs '# model: MODEL' on its first line"; return; fi
      if (cd "$w" && eval "timeout 60 carve apply $m \"\$name\"") </dev/null >"$tmp/out" 2>"$tmp/err"; then ok
      else bad "$where: carve apply of the tac block fails"; sed 's/^/    /' "$tmp/err" | head -6; fi ;;
    lua)
      name=$(setting "$f" file)
      if [ -z "$name" ]; then bad "$where: a lua block needs '-- file: NAME.lua' on its first line"; return; fi
      cp "$f" "$w/$name"
      m=$(setting "$f" model)
      if [ -z "$m" ]; then ok; return; fi
      mesh=$(setting "$f" mesh)
      printf 'mesh %s\ntactic t = lua "%s" %s\nschedule t\n' "${mesh:-model = 2}" "$name" "$(setting "$f" args)" > "$w/lua_$line.tac"
      if (cd "$w" && eval "timeout 60 carve apply $m lua_$line.tac") </dev/null >"$tmp/out" 2>"$tmp/err"; then ok
      else bad "$where: carve apply of the lua block fails"; sed 's/^/    /' "$tmp/err" | head -6; fi ;;
  esac
}

mkdir -p "$tmp/blocks"
nblocks=0
for md in "$docs"/*.md; do
  doc=$(basename "$md"); pre=${doc%.md}
  extract "$md" "$pre" || bad "docs/$doc: a fence is not closed"
  [ -f "$tmp/blocks/$pre.index" ] || continue
  w="$tmp/work/$pre"
  mkdir -p "$w"
  cp -r "$SRCDIR/examples" "$w/examples"
  for d in tests profiles docs stdlib-tactics; do ln -s "$SRCDIR/$d" "$w/$d"; done
  while read -r line tag f; do
    run_block "$doc" "$line" "$tag" "$f" "$w"
    nblocks=$((nblocks + 1))
  done < "$tmp/blocks/$pre.index"
done
[ "$nblocks" -ge 20 ] && ok || bad "only $nblocks blocks were found in docs/*.md: is the extraction broken?"

# ---- nothing left undocumented ----

ops=$(awk '/opinfo\[\] = \{/ {on = 1; next} on && /^\};/ {on = 0} on' "$SRCDIR/interp/ir/ops.c" |
      grep -o '{"[a-z0-9_]*", "' | sed 's/{"\([a-z0-9_]*\)".*/\1/')
nops=0
for op in $ops; do
  nops=$((nops + 1))
  grep -qF "\`$op\`" "$docs/model-language.md" || grep -qF "\`$op(" "$docs/model-language.md" ||
    bad "op '$op' (interp/ir/ops.c) is not described in docs/model-language.md"
done
[ "$nops" -ge 60 ] && ok || bad "only $nops ops read from interp/ir/ops.c: is its table's layout new?"

cmds=$("$CARVE" --help | sed -n 's/^  carve \([a-z][a-z]*\).*/\1/p')
ncmds=0
for c in $cmds; do
  ncmds=$((ncmds + 1))
  grep -qE "^#+ .*carve $c([^a-z]|\$)" "$docs/commands.md" || bad "command '$c' (carve --help) has no section in docs/commands.md"
done
[ "$ncmds" -ge 10 ] && ok || bad "only $ncmds commands read from carve --help"

opts=$(grep -oE '(TEXT|FLAG|COUNT)\("[a-z0-9-]+"' "$SRCDIR/cli/main.c" | sed 's/.*("\(.*\)"/\1/' | grep -v '^test-')
for o in $opts; do
  grep -qE -- "--$o([^a-z0-9-]|\$)" "$docs/commands.md" || bad "option '--$o' (cli/main.c) is not described in docs/commands.md"
done

# every relative link reaches a file of the repository, and a heading there
slug() { tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'; }
for md in "$docs"/*.md; do
  grep -q '\.\./shared' "$md" && bad "docs/$(basename "$md") points outside the repository (../shared)"
  grep -oE '\]\([^)]+\)' "$md" | sed 's/^](//; s/)$//' | while read -r link; do
    case "$link" in
      http://*|https://*|mailto:*) echo "FAIL: docs/$(basename "$md"): link '$link' leaves the repository"; continue ;;
    esac
    path=${link%%#*}; anchor=""
    case "$link" in *'#'*) anchor=${link#*#} ;; esac
    target="$md"
    [ -n "$path" ] && target="$docs/$path"
    real=$(realpath -m "$target")
    case "$real" in "$(realpath "$SRCDIR")"/*) ;; *) echo "FAIL: docs/$(basename "$md"): link '$link' leaves the repository"; continue ;; esac
    if [ ! -e "$real" ]; then echo "FAIL: docs/$(basename "$md"): link '$link' reaches no file"; continue; fi
    if [ -n "$anchor" ] && [ "${real%.md}" != "$real" ]; then
      grep -E '^#+ ' "$real" | sed -E 's/^#+ +//' | slug | grep -qx -- "$anchor" ||
        echo "FAIL: docs/$(basename "$md"): link '$link': no heading '#$anchor' in $(basename "$real")"
    fi
  done > "$tmp/links"
  if [ -s "$tmp/links" ]; then cat "$tmp/links"; fail=$((fail + $(wc -l < "$tmp/links"))); else ok; fi
done

echo "docs: $nblocks blocks run, $nops ops and $ncmds commands looked up, $(( $(date +%s) - started )) s; $pass passed, $fail failed"
[ "$fail" -eq 0 ]
