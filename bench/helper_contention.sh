#!/usr/bin/env bash
# Issue 32.1, the example's run 2: how much does a capture helper still at work slow the run that
# starts the moment the cold run exits, on an idle 2-core machine, and does a helper that runs only
# on otherwise idle CPU time (SCHED_IDLE) slow it less than today's nice 10?
# Emulates the 2-core VM on a bigger idle machine: every process pinned to two CPUs
# (BENCH_CPUS, default 2,3) and PoCL told it has two compute units.
# BUILD_DIR at a prebuilt dir (bench/pack-gpu.sh) with examples/opencl_example; prints CSV rows
# "variant,rep,wall_ms" on stdout.
source "$(dirname "$0")/pinned_pocl.sh"
reps=${BENCH_REPS:-9}
tool=$build/tools/jitcache
# The helper under SCHED_IDLE: JITCACHE_HELPER at a wrapper (an absolute path this user owns).
idle_helper=$work/idle-helper
printf '#!/bin/sh\nexec chrt --idle 0 %s "$@"\n' "$tool" > "$idle_helper"
chmod 700 "$idle_helper"

wall() {  # variant rep command...: one run, its wall time
  local variant=$1 rep=$2; shift 2
  local start; start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || echo "$variant: exit $?" >&2
  awk -v v="$variant" -v r="$rep" -v ns=$(( $(date +%s%N) - start )) 'BEGIN { printf "%s,%s,%.1f\n", v, r, ns / 1e6 }'
}
burner() {  # a CPU-bound loop on the second of the pinned CPUs, at the given scheduling
  taskset -c "${cpus##*,}" "$@" sh -c 'while :; do :; done' >/dev/null 2>&1 &
  echo $!
}

echo "variant,rep,wall_ms"
for rep in $(seq "$reps"); do
  export POCL_CACHE_DIR=$work/pocl-$rep
  wall no_cache "$rep" "${app[@]}"
  wall pocl_warm "$rep" "${app[@]}"
  pid=$(burner nice -n 10); wall pocl_warm_nice10_burner "$rep" "${app[@]}"; kill -9 "$pid"
  pid=$(burner chrt --idle 0); wall pocl_warm_idle_burner "$rep" "${app[@]}"; kill -9 "$pid"
  for helper in nice10 idle; do
    export POCL_CACHE_DIR=$work/pocl-$rep-$helper JITCACHE_DIR=$work/cache-$rep-$helper
    if [ $helper = idle ]; then export JITCACHE_HELPER=$idle_helper; else unset JITCACHE_HELPER; fi
    wall "cold_$helper" "$rep" env LD_PRELOAD="$build/shim/libjitcache.so" "${app[@]}"
    wall "run2_$helper" "$rep" env LD_PRELOAD="$build/shim/libjitcache.so" "${app[@]}"
    "$tool" wait --dir "$JITCACHE_DIR" >/dev/null
    wall "run3_$helper" "$rep" env LD_PRELOAD="$build/shim/libjitcache.so" "${app[@]}"
    unset JITCACHE_HELPER
    export POCL_CACHE_DIR=$work/pocl-$rep
  done
done
