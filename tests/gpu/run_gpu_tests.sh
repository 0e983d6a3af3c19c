#!/bin/sh
# tests/gpu/run_gpu_tests.sh: build carve in a fresh folder and run the CUDA
# backend's tests (tests/unit/test_cuda) verbosely, then the whole suite,
# printing what failed. Meant for a GPU machine that lacks carve's build
# tools (Ubuntu 24.04 with gcc, autotools, pkg-config, OpenMPI, OpenBLAS and
# CUDA, but no re2c, lemon, Lua 5.4, libedit headers or Criterion); also
# runs anywhere else, where the GPU tests skip with their reason.
#
#   tests/gpu/run_gpu_tests.sh PREFIX [DEBDIR]
#
# PREFIX: a folder holding usr/bin, usr/include and usr/lib/x86_64-linux-gnu
#   with re2c, lemon, Lua 5.4, libedit, Criterion and the libraries they
#   need. DEBDIR (optional): a folder of Debian packages to unpack into PREFIX
#   first with dpkg -x, fetched on a machine that has the network with
#     apt-get download re2c lemon liblua5.4-dev liblua5.4-0 libedit-dev libedit2 \
#       libbsd-dev libbsd0 libmd-dev libmd0 libcriterion-dev libcriterion3 \
#       libnanomsg5 libgit2-1.5 libhttp-parser2.9 libmbedcrypto7 libmbedtls14 \
#       libmbedx509-1 libssh2-1 libffi8
# Environment: BUILD (the build folder; default a new one under /tmp),
#   QUICK=1 (the CUDA tests only, not the whole suite), JOBS (make -j).
set -u

if [ $# -lt 1 ]; then
	sed -n '2,22p' "$0" >&2
	exit 2
fi
mkdir -p "$1" || exit 2
PREFIX=$(cd "$1" && pwd)
DEBDIR=${2:-}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$(mktemp -d /tmp/carve-gpu-build.XXXXXX)}
mkdir -p "$BUILD" && BUILD=$(cd "$BUILD" && pwd) || exit 2
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
ARCH=x86_64-linux-gnu
LIB=$PREFIX/usr/lib/$ARCH
say() { printf '== %s\n' "$*"; }

# ---- the tools and libraries, unpacked into PREFIX ----
if [ -n "$DEBDIR" ]; then
	say "unpacking $DEBDIR/*.deb into $PREFIX"
	for f in "$DEBDIR"/*.deb; do dpkg -x "$f" "$PREFIX" || exit 1; done
fi
for f in "$PREFIX/usr/bin/re2c" "$PREFIX/usr/bin/lemon" "$LIB/liblua5.4.so" "$LIB/libcriterion.so"; do
	[ -e "$f" ] || { echo "run_gpu_tests.sh: $f is missing: give the .deb folder as the second argument" >&2; exit 1; }
done
# Debian's lemon looks for its template in /usr/share/lemon: point it at PREFIX's
if [ ! -e "$PREFIX/usr/bin/lemon.real" ]; then
	mv "$PREFIX/usr/bin/lemon" "$PREFIX/usr/bin/lemon.real"
	cat > "$PREFIX/usr/bin/lemon" <<EOF
#!/bin/sh
exec "$PREFIX/usr/bin/lemon.real" -T"$PREFIX/usr/share/lemon/lempar.c" "\$@"
EOF
	chmod +x "$PREFIX/usr/bin/lemon"
fi
# .pc files name /usr: make them name PREFIX
for pc in "$LIB"/pkgconfig/*.pc; do
	[ -e "$pc" ] && sed -i "s|^prefix=/usr\$|prefix=$PREFIX/usr|" "$pc"
done
# At run time only the libraries this system lacks come from PREFIX (its own
# libbsd, libffi, libedit... stay in use), through links in PREFIX/runlib.
mkdir -p "$PREFIX/runlib"
for so in "$LIB"/*.so.*; do
	name=$(basename "$so")
	ldconfig -p | grep -q "^[[:space:]]*$name " || ln -sf "$so" "$PREFIX/runlib/$name"
done

export PATH="$PREFIX/usr/bin:$PATH"
# (Debian puts lua5.4-deb-multiarch.h, which lua5.4's headers include, under the multiarch folder)
export CPATH="$PREFIX/usr/include:$PREFIX/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}"
export LIBRARY_PATH="$LIB${LIBRARY_PATH:+:$LIBRARY_PATH}"
export LD_LIBRARY_PATH="$PREFIX/runlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PKG_CONFIG_PATH="$LIB/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
# Criterion's .pc requires .pc files of its own dependencies that are not
# here; configure takes these instead of asking pkg-config.
export CRITERION_CFLAGS="-I$PREFIX/usr/include" CRITERION_LIBS="-L$LIB -lcriterion"
export LUA_CFLAGS="-I$PREFIX/usr/include/lua5.4 -I$PREFIX/usr/include/x86_64-linux-gnu" LUA_LIBS="-L$LIB -llua5.4"
export LIBEDIT_CFLAGS="-I$PREFIX/usr/include -I$PREFIX/usr/include/editline" LIBEDIT_LIBS="-L$LIB -ledit"

# ---- build ----
say "source $SRC, build $BUILD"
(cd "$SRC" && autoreconf -fi) > "$BUILD/autoreconf.log" 2>&1 || { cat "$BUILD/autoreconf.log"; exit 1; }
(cd "$BUILD" && "$SRC/configure" -q) > "$BUILD/configure.log" 2>&1 || { cat "$BUILD/configure.log"; exit 1; }
say "make -j$JOBS"
(cd "$BUILD" && make -j"$JOBS" && make -j"$JOBS" tests/unit/test_cuda) > "$BUILD/make.log" 2>&1 ||
	{ tail -n 60 "$BUILD/make.log"; exit 1; }

# ---- the GPU ----
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader

# ---- the CUDA tests ----
status=0
say "tests/unit/test_cuda --verbose"
(cd "$BUILD" && ./tests/unit/test_cuda --verbose --jobs 4) > "$BUILD/test_cuda.out" 2>&1 || status=1
cat "$BUILD/test_cuda.out"
if [ $status -ne 0 ]; then
	say "test_cuda FAILED:"
	grep -E '^\[(FAIL|----)\]|CRASH|Warning! The test' "$BUILD/test_cuda.out"
fi

# ---- the whole suite ----
if [ "${QUICK:-0}" != 1 ]; then
	say "make check"
	if ! (cd "$BUILD" && make -j"$JOBS" check) > "$BUILD/check.log" 2>&1; then
		status=1
		say "make check FAILED:"
		grep -E '^(FAIL|ERROR|XPASS)' "$BUILD/check.log"
		for log in $(cd "$BUILD" && grep -l -E '^:test-result: (FAIL|ERROR)' $(find . -name '*.trs') 2>/dev/null); do
			say "${log%.trs}.log"
			tail -n 40 "$BUILD/${log%.trs}.log"
		done
	fi
	grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR):' "$BUILD/check.log"
fi
[ $status -eq 0 ] && say "all passed" || say "some failed (logs in $BUILD)"
exit $status
