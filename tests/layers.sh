#!/usr/bin/env bash
# layers.sh SRCDIR [BUILDDIR]: the dependency rules of the tree (DESIGN.md "Layout").
#   1. includes by folder: util includes util; lang util and lang; runtime util
#      and runtime; interp everything but cli; cli everything.
#   2. no two headers include each other in a circle.
#   3. with BUILDDIR: no two files of a library depend on each other in a circle
#      (one file calls what another defines: read off the object files with nm).
# Prints one line per violation and exits 1 if there is any.
set -u
src=$1 build=${2:-}
status=0
say() { echo "layers: $*"; status=1; }

allowed() {  # allowed FROM_FOLDER TO_FOLDER
  case "$1:$2" in
    util:util|lang:util|lang:lang|runtime:util|runtime:runtime) return 0;;
    interp:util|interp:lang|interp:runtime|interp:interp) return 0;;
    cli:*) return 0;;
  esac
  return 1
}

edges=$(mktemp)
trap 'rm -f "$edges" "$edges".*' EXIT
for top in util lang runtime interp cli; do
  [ -d "$src/$top" ] || continue
  while IFS= read -r f; do
    rel=${f#"$src"/}
    grep -o '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"' "$f" | sed 's/.*"\(.*\)"/\1/' | while IFS= read -r inc; do
      to=${inc%%/*}
      [ "$to" = "$inc" ] && continue              # generated headers in the same folder
      case "$to" in util|lang|runtime|interp|cli) ;; *) continue;; esac
      allowed "$top" "$to" || echo "FORBIDDEN $rel includes $inc ($top may not include $to)"
      case "$rel" in *.h) echo "EDGE $rel $inc";; esac
    done
  done < <(find "$src/$top" -type f \( -name '*.c' -o -name '*.h' -o -name '*.re' -o -name '*.lemon' \) | sort)
done > "$edges"
while read -r _ msg; do say "$msg"; done < <(grep '^FORBIDDEN' "$edges")

# header cycles: tsort reports a loop on stderr
grep '^EDGE' "$edges" | awk '{print $2, $3}' > "$edges.h"
if [ -s "$edges.h" ] && ! tsort "$edges.h" >/dev/null 2>"$edges.err"; then
  say "headers include each other in a circle: $(grep -v 'input contains a loop' "$edges.err" | sed 's/^tsort: //' | tr '\n' ' ')"
fi

# object cycles, per library: A -> B when A uses a symbol B defines (the
# archive's members, named by their file names)
objcycles() {  # objcycles ARCHIVE
  local lib=$1 defs=$edges.defs uses=$edges.uses
  nm -A -g --defined-only "$lib" 2>/dev/null | awk 'NF == 3 {split($1, p, ":"); print $3, p[2]}' | sort > "$defs"
  nm -A -g --undefined-only "$lib" 2>/dev/null | awk '{split($1, p, ":"); print $NF, p[2]}' | sort > "$uses"
  join "$uses" "$defs" | awk '$2 != $3 {print $2, $3}' | sort -u > "$edges.o"
  if [ -s "$edges.o" ] && ! tsort "$edges.o" >/dev/null 2>"$edges.err"; then
    say "$(basename "$lib"): files depend on each other in a circle: $(grep -v 'input contains a loop' "$edges.err" | sed 's/^tsort: //' | tr '\n' ' ')"
  fi
}
if [ -n "$build" ]; then
  [ -f "$build/libcarve.a" ] || say "no $build/libcarve.a"
  objcycles "$build/libcarve.a"
fi
exit $status
