#!/usr/bin/env bash
# Issue 32.1 on a busy machine: the example's cold run without jitcache and with it, each of the
# given helper binaries (JITCACHE_HELPER) in turn, interleaved rep by rep, while CPU-bound loops in
# sessions of their own (other users' work: each its own autogroup) keep every pinned CPU busy.
#   bench/busy_cold.sh HELPER...   (BENCH_CPUS=2,3, BENCH_REPS=7, BENCH_LOOPS=2; BUILD_DIR as for
#   bench/helper_contention.sh). Prints CSV rows "variant,rep,wall_ms,app_cpu_ms".
source "$(dirname "$0")/pinned_pocl.sh"
for _ in $(seq "${BENCH_LOOPS:-2}"); do
  setsid taskset -c "$cpus" sh -c 'while :; do :; done' >/dev/null 2>&1 &
  loops+=($!)
done
echo "autogroups: $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo none)" >&2
echo "variant,rep,wall_ms,app_cpu_ms"
for rep in $(seq "${BENCH_REPS:-7}"); do
  for variant in none "$@"; do
    export POCL_CACHE_DIR=$work/pocl-$rep-${variant//\//_} JITCACHE_DIR=$work/cache-$rep-${variant//\//_}
    preload=()
    [ "$variant" != none ] && preload=(env JITCACHE_HELPER="$(realpath "$variant")" LD_PRELOAD="$build/shim/libjitcache.so")
    # Wall and the app's own CPU (its helper outlives it, so is not counted).
    python3 -c 'import resource, subprocess, sys, time
start = time.monotonic()
subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = (time.monotonic() - start) * 1000
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{sys.argv[1]},{wall:.0f},{(usage.ru_utime + usage.ru_stime) * 1000:.0f}")' "$(basename "$variant"),$rep" \
      ${preload[@]+"${preload[@]}"} "${app[@]}"
    [ "$variant" != none ] && "$build/tools/jitcache" wait --dir "$JITCACHE_DIR" >/dev/null
  done
done
