#!/usr/bin/env bash
# Issue 32.1 on a busy machine without the noise of a shared VM: bench/next_run.py's example rows
# (no cache, PoCL warm, cold, run 2 at once, run 3) with every process pinned to two CPUs
# (BENCH_CPUS, default 2,3; PoCL told it has two compute units) and BENCH_BUSY CPU-bound loops
# (default 2), each in a session of its own ("other work"), pinned to the same two CPUs.
# Variants interleaved rep by rep: BENCH_HELPERS="name=/abs/path/to/jitcache ..." (the capture
# helper binary each uses; default: this build's). For the lent machine: BUILD_DIR=gpu-build
# (bench/pack-gpu.sh, plus examples/opencl/opencl_example copied in). CSV rows on stdout.
source "$(dirname "$0")/pinned_pocl.sh"
for _ in $(seq "${BENCH_BUSY:-2}"); do setsid taskset -c "$cpus" sh -c 'while :; do :; done' & loops+=($!); done
echo "variant,app,stage,rep,wall_s,cpu_s,exit_code"
for rep in $(seq "${BENCH_REPS:-6}"); do
  for variant in ${BENCH_HELPERS:-this=$build/tools/jitcache}; do
    name=${variant%%=*}
    JITCACHE_HELPER=${variant#*=} BENCH_RESULT_NAME=run python3 bench/next_run.py "$build" "$work/$name-$rep" 1 "example=${app[*]}" >/dev/null
    tail -n +2 "$work/$name-$rep/run.csv" | sed "s/^/$name,/; s/,1,/,$rep,/"
  done
done
