#!/usr/bin/env bash
# The main job as a newcomer sees it: the example app run twice under the cache, in a fresh cache
# folder, on PoCL (the CPU driver; its own kernel cache off, so what run 2 saves is jitcache's).
#   run 1   compiles the app's two programs; a capture helper (a low-priority process beside the
#           app) stores them, so the app pays nothing extra.
#   wait    what happens between two runs that are not back to back: `jitcache wait` until the
#           helper has stored both (a second or two; longer on a busy machine).
#   run 2   served from the cache: its builds take milliseconds.
# Then a summary: misses, captured, hits, and for a program run 2 built again, why (its trace).
#
# scripts/demo.sh --back-to-back starts run 2 the moment run 1 exits, without waiting: the helper
# race. Run 2 then waits only for a program the helper is building, builds itself whatever the
# helper has not started, and the summary says which (docs/settings.md, "capture").
# BUILD_DIR picks the build folder (default: build).
set -euo pipefail
cd "$(dirname "$0")/.."
back_to_back=false
case "${1:-}" in
  "") ;;
  --back-to-back) back_to_back=true ;;
  *) echo "usage: $0 [--back-to-back]" >&2; exit 2 ;;
esac
build=${BUILD_DIR:-build}
tool=$build/tools/jitcache
app=$build/examples/opencl/opencl_example
for file in "$tool" "$app" "$build/shim/libjitcache.so"; do
  [ -e "$file" ] || { echo "demo: $file is missing: run scripts/build.sh first" >&2; exit 1; }
done
cache=$(mktemp -d "${TMPDIR:-/tmp}/jitcache-demo-XXXXXX")
export JITCACHE_DIR="$cache" POCL_KERNEL_CACHE=0
unset JITCACHE_TRACE_DIR JITCACHE_DISABLE JITCACHE_READ_ONLY JITCACHE_CAPTURE JITCACHE_REMOTE JITCACHE_PACKS

# run N: the app under `jitcache run`, its output shown and kept; each run's traces (and those of
# the capture helper it starts) in traces-N.
run() {
  echo "\$ $tool run --trace -- $app"
  "$tool" run --trace --trace-dir "$cache/traces-$1" -- "$app" 2>&1 | tee "$cache/run-$1.log"
}
# The verdicts of run N's traces: "miss", "hit", "captured", ..., one a line.
verdicts() { cat "$cache/traces-$1"/*.json 2>/dev/null | sed -n 's/^ *"verdict": "\([a-z]*\)".*/\1/p'; }
count() { verdicts "$1" | grep -c "^$2\$" || true; }
# "vector_math 1847.0 ms, integer_ops 250.3 ms": the app's own build times (it prints them).
build_times() {
  sed -n 's/^opencl_example: build \([A-Za-z0-9_]*\) \([0-9.]*\) ms$/\1 \2 ms/p' "$cache/run-$1.log" | paste -sd, - |
    sed 's/,/, /g'
}

echo "== run 1: cold cache ($cache) =="
run 1
if $back_to_back; then
  echo "== run 2: started the moment run 1 exited (back to back: the capture helper may still be at work) =="
  run 2
  echo "== jitcache wait: whatever the helper still owes, stored before the summary =="
  "$tool" wait
else
  echo "== between the runs: jitcache wait (what a later run finds, whenever it starts) =="
  echo "\$ $tool wait"
  "$tool" wait
  echo "== run 2: warm cache =="
  run 2
fi

misses=$(count 1 miss) captured=$(count 1 captured) hits=$(count 2 hit) lookups=$(verdicts 2 | grep -vc '^captured$' || true)
echo "== summary =="
echo "run 1: $misses programs compiled (misses): $(build_times 1); the capture helper stored $captured (captured)"
echo "run 2: $hits of $lookups programs served from the cache (hits): $(build_times 2)"
# A program run 2 did not get from the cache: its key (as `jitcache wait` names it), its trace's
# verdict and reason, one line each.
for trace in "$cache/traces-2"/*.json; do
  [ -e "$trace" ] || continue
  verdict=$(sed -n 's/^ *"verdict": "\([a-z]*\)".*/\1/p' "$trace")
  case "$verdict" in hit|captured) continue ;; esac
  key=$(sed -n 's/^  "key": "\([0-9a-f]\{8\}\).*/\1/p' "$trace" | head -n 1)
  reason=$(sed -n 's/^ *"reason": "\(.*\)",\{0,1\}$/\1/p' "$trace")
  echo "run 2 built $key itself ($verdict): ${reason:-no reason recorded}"
done
echo "why run N's last lookup did what it did: JITCACHE_DIR=$cache JITCACHE_TRACE_DIR=$cache/traces-N $tool explain --last"
