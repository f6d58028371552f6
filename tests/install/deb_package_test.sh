#!/usr/bin/env bash
# Issue 18: the Debian package installs into this machine, works from the installed files only,
# and leaves nothing behind when removed. Needs root and dpkg (CI runs as root); skips (77)
# otherwise, and when a jitcache package is installed already (never touch a user's install).
# Usage: deb_package_test.sh BUILD_DIR OPENCL_EXAMPLE
set -euo pipefail
build=$1 example=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root: cannot dpkg -i"
command -v dpkg >/dev/null || skip "no dpkg"
dpkg -s jitcache >/dev/null 2>&1 && skip "a jitcache package is installed already"
[ -f "$build/tools/jitcache.1" ] || fail "build the man pages first (target jitcache_docs)"

tmp=$(mktemp -d /tmp/jitcache-deb-XXXXXX)
cleanup() {
  if dpkg -s jitcache >/dev/null 2>&1; then dpkg --purge jitcache >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
(cd "$tmp" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/pkg" >"$tmp/cpack.log") ||
  fail "cpack: $(cat "$tmp/cpack.log")"
deb=$(ls "$tmp"/pkg/jitcache_*_*.deb)
dpkg-deb -f "$deb" Depends | grep -q libhiredis || fail "Depends not computed: $(dpkg-deb -f "$deb" Depends)"
dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1 || fail "dpkg -i: $(cat "$tmp/dpkg.log")"
mapfile -t files < <(dpkg -L jitcache)
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
for wanted in /usr/bin/jitcache "/usr/lib/$arch/libjitcache.so" /usr/share/man/man1/jitcache.1 \
              /usr/share/man/man5/jitcache-config.5 /usr/share/bash-completion/completions/jitcache \
              /usr/share/doc/jitcache/README.md; do
  [ -f "$wanted" ] || fail "the package does not install $wanted"
done

# The installed tool and library only: no JITCACHE_LIBRARY, a cwd outside the build tree.
cd "$tmp"
unset JITCACHE_LIBRARY LD_PRELOAD OPENCL_LAYERS
export JITCACHE_DIR=$tmp/cache POCL_KERNEL_CACHE=0
/usr/bin/jitcache --version | grep -q "^jitcache " || fail "installed --version"
/usr/bin/jitcache doctor --json >"$tmp/doctor.json" || fail "doctor failed: $(cat "$tmp/doctor.json")"
python3 - "$tmp/doctor.json" "$arch" <<'PY'
import json, os, sys
checks = json.load(open(sys.argv[1]))["checks"]
library = [c for c in checks if c["check"] == "library"][0]["detail"]
assert os.path.realpath(library) == f"/usr/lib/{sys.argv[2]}/libjitcache.so", library
PY
plain=$(env -u LD_PRELOAD "$example")
cold=$(/usr/bin/jitcache run --trace --trace-dir "$tmp/cold" -- "$example")
warm=$(/usr/bin/jitcache run --trace --trace-dir "$tmp/warm" -- "$example")
[ "$cold" = "$plain" ] && [ "$warm" = "$plain" ] || fail "output under the installed jitcache differs"
traces=$(ls "$tmp"/warm/*.json | wc -l)
hits=$(grep -l '"verdict": "hit"' "$tmp"/warm/*.json | wc -l)
[ "$traces" -gt 0 ] && [ "$hits" = "$traces" ] || fail "warm run: $hits hits of $traces lookups"

# Removal leaves nothing of the package behind.
dpkg --purge jitcache >"$tmp/purge.log" 2>&1 || fail "dpkg --purge: $(cat "$tmp/purge.log")"
dpkg -s jitcache >/dev/null 2>&1 && fail "still installed after purge"
for file in "${files[@]}"; do
  [ -d "$file" ] && [ ! -L "$file" ] && continue  # shared directories (/usr/bin) stay
  [ -e "$file" ] || [ -L "$file" ] && fail "left behind: $file"
done
for dir in /usr/share/doc/jitcache; do [ -e "$dir" ] && fail "left behind: $dir"; done
echo "deb package test: installed, cold then warm hits ($hits), removed without a trace"
