#!/usr/bin/env bash
# Part 9 (issue 32): the run right after a cold run, per app, with the default settings (PoCL's
# kernel cache on): no cache / PoCL warm / jitcache cold / run 2 at once / run 3 (bench/next_run.py
# says how each is taken). Ratios are per rep, all variants of a rep back to back on one machine.
#   BENCH_REPS=3  BENCH_APPS="example many100 pyopencl opencv clblast hashcat"
#   BENCH_BUSY=N: N CPU-bound loops at nice 0 run throughout (N = cores: "every core already loaded
#   by other work", issue 32.1's busy machine); results then go to next_run-busy.*
# Writes bench/results/next_run.csv and next_run.md.
source "$(dirname "$0")/common.sh"
ensure_built jitcache_tool opencl_example
source "$(dirname "$0")/apps.sh"
busy=${BENCH_BUSY:-0}
export BENCH_RESULT_NAME=next_run
if [ "$busy" -gt 0 ]; then
  BENCH_RESULT_NAME=next_run-busy
  loops=()
  for _ in $(seq "$busy"); do sh -c 'while :; do :; done' & loops+=($!); done
  trap 'kill "${loops[@]}"' EXIT
fi
/usr/bin/python3 "$repo/bench/next_run.py" "$build" "$results" "${BENCH_REPS:-3}" "${apps[@]}"
