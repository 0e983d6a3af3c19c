#!/usr/bin/env bash
# The man pages cannot drift from the binary: every command `carve --help`
# lists has a `.SS "carve COMMAND"` subsection in man/carve.1 and every such
# subsection is a command; the options a subsection's .TP tags name are
# exactly those `carve COMMAND --help` prints on its "options:" line (every
# option the command takes, but the tests' --test-*), and every option the
# help names anywhere appears in the subsection; both pages carry
# the version `carve --version` prints, carve.1 documents CARVE_PATH and
# the exit codes, and both render without a warning (groff -ww, man -l).
set -u
: "${SRCDIR:?}"
page1="$SRCDIR/man/carve.1" page5="$SRCDIR/man/carve.5"
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

cmds=$("$CARVE" --help | sed -n 's/^  carve \([a-z][a-z]*\).*/\1/p' | sort -u)
man_cmds=$(sed -n 's/^\.SS "carve \([a-z][a-z]*\)"$/\1/p' "$page1" | sort -u)
for c in $(comm -23 <(echo "$cmds") <(echo "$man_cmds")); do bad "command '$c' (carve --help) has no .SS \"carve $c\" in man/carve.1"; done
for c in $(comm -13 <(echo "$cmds") <(echo "$man_cmds")); do bad "man/carve.1 describes 'carve $c', which carve --help does not list"; done

n=0
for c in $cmds; do
  n=$((n + 1))
  help=$("$CARVE" "$c" --help | awk '/^options:/ {on = 1} on && !/^(options:|        )/ {exit} on' | grep -oE -- '--[a-z0-9-]+' | sort -u)
  [ -n "$help" ] || { bad "carve $c --help prints no options: line"; continue; }
  # the line after each .TP of the subsection, roff's \- read as -
  man=$(awk -v want=".SS \"carve $c\"" '
          $0 == want { on = 1; next }
          /^\.S[HS]/ { on = 0 }
          on && tag { print; tag = 0 }
          on && /^\.TP/ { tag = 1 }' "$page1" | sed 's/\\-/-/g' | grep -oE -- '--[a-z0-9-]+' | sort -u)
  # any option the help text names (another command's too) appears in the subsection
  named=$("$CARVE" "$c" --help | grep -oE -- '--[a-z0-9-]+' | sort -u)
  text=$(awk -v want=".SS \"carve $c\"" '$0 == want { on = 1; next } /^\.S[HS]/ { on = 0 } on' "$page1" | sed 's/\\-/-/g')
  for o in $named; do
    grep -qE -- "$o([^a-z0-9-]|\$)" <<<"$text" || bad "man/carve.1, carve $c: '$o' (in carve $c --help) appears nowhere in the subsection"
  done
  missing=$(comm -23 <(echo "$help") <(echo "$man") | sed "/^$/d" | tr '\n' ' ')
  extra=$(comm -13 <(echo "$help") <(echo "$man") | sed "/^$/d" | tr '\n' ' ')
  [ -z "$missing" ] && ok || bad "man/carve.1, carve $c: no .TP for ${missing}(carve $c --help prints them)"
  [ -z "$extra" ] && ok || bad "man/carve.1, carve $c: .TP for ${extra}which carve $c does not take"
done
[ "$n" -ge 10 ] && ok || bad "only $n commands read from carve --help"

version=$("$CARVE" --version | head -1)
for p in "$page1" "$page5"; do
  grep -q "^\.TH CARVE [15] [^ ]* \"$version\"" "$p" && ok || bad "$(basename "$p"): .TH does not say \"$version\" (carve --version)"
done
grep -q '^\.B CARVE_PATH$' "$page1" && ok || bad "man/carve.1 has no ENVIRONMENT entry for CARVE_PATH"
for s in 0 1 2; do
  awk '/^\.SH EXIT STATUS/ {on = 1; next} /^\.SH/ {on = 0} on' "$page1" | grep -qx "\.B $s" && ok || bad "man/carve.1 EXIT STATUS has no entry for $s"
done

if command -v groff >/dev/null 2>&1; then
  for p in "$page1" "$page5"; do
    w=$(groff -man -ww -z "$p" 2>&1)
    [ -z "$w" ] && ok || bad "groff -man -ww: $(basename "$p"): $w"
  done
fi
if command -v man >/dev/null 2>&1; then
  for p in "$page1" "$page5"; do
    w=$(MANWIDTH=80 LC_ALL=C man -l "$p" 2>&1 >/dev/null)
    [ -z "$w" ] && ok || bad "man -l $(basename "$p"): $w"
  done
fi

echo "man: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
