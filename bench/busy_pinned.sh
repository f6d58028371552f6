#!/usr/bin/env bash
# Issue 32.1 on a busy machine without the noise of a shared VM: bench/next_run.py's example rows
# (no cache, PoCL warm, cold, run 2 at once, run 3) with every process pinned to two CPUs
# (BENCH_CPUS, default 2,3; PoCL told it has two compute units) and BENCH_BUSY CPU-bound loops
# (default 2), each in a session of its own ("other work"), pinned to the same two CPUs.
# Variants interleaved rep by rep: BENCH_HELPERS="name=/abs/path/to/jitcache ..." (the capture
# helper binary each uses; default: this build's). For the lent machine: BUILD_DIR=gpu-build
# (bench/pack-gpu.sh, plus examples/opencl/opencl_example copied in). CSV rows on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${BUILD_DIR:-build}")
cpus=${BENCH_CPUS:-2,3}
work=$(mktemp -d "${BENCH_WORK_ROOT:-$PWD}/busy-pinned.XXXX")
chmod 700 "$work"
pocl=${POCL_LIBRARY:-$(ls /usr/lib/x86_64-linux-gnu/libpocl.so* 2>/dev/null | head -1)}
mkdir -p "$work/icd" && echo "$pocl" > "$work/icd/pocl.icd"
export OCL_ICD_VENDORS=$work/icd POCL_CPU_MAX_CU_NUM=2 POCL_MAX_PTHREAD_COUNT=2
export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
loops=()
for _ in $(seq "${BENCH_BUSY:-2}"); do setsid taskset -c "$cpus" sh -c 'while :; do :; done' & loops+=($!); done
trap 'kill "${loops[@]}" 2>/dev/null; rm -rf "$work"' EXIT
app="example=taskset -c $cpus $build/examples/opencl/opencl_example --kernels $PWD/examples/opencl/kernels"
echo "variant,app,stage,rep,wall_s,cpu_s,exit_code"
for rep in $(seq "${BENCH_REPS:-6}"); do
  for variant in ${BENCH_HELPERS:-this=$build/tools/jitcache}; do
    name=${variant%%=*}
    JITCACHE_HELPER=${variant#*=} BENCH_RESULT_NAME=run python3 bench/next_run.py "$build" "$work/$name-$rep" 1 "$app" >/dev/null
    tail -n +2 "$work/$name-$rep/run.csv" | sed "s/^/$name,/; s/,1,/,$rep,/"
  done
done
