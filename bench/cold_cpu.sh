#!/usr/bin/env bash
# Part 12 (issue 39, target 2): a cold run's CPU (the app's and its capture helpers') against the
# same app without jitcache, PoCL's kernel cache on and empty in both (bench/cold_cpu.py).
#   BENCH_REPS=3  BENCH_APPS="example many100 pyopencl opencv clblast hashcat"
# Writes bench/results/cold_cpu.csv and cold_cpu.md.
source "$(dirname "$0")/common.sh"
ensure_built jitcache_tool opencl_example
source "$(dirname "$0")/apps.sh"
/usr/bin/python3 "$repo/bench/cold_cpu.py" "$build" "$results" "${BENCH_REPS:-3}" "${apps[@]}"
