# Sourced by the benches that stand for the 2-core VM on a bigger idle machine (helper_contention,
# busy_cold, busy_pinned): the repo root as working folder, every process they start pinned to
# two CPUs (BENCH_CPUS, default 2,3) and PoCL alone as the driver, told it has two compute units.
# Sets build, cpus, work (a private folder, removed at exit with the loops in `loops`) and app (the
# example's pinned command line). BUILD_DIR at a prebuilt dir (bench/pack-gpu.sh) on the lent machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=$(realpath "${BUILD_DIR:-build}")
cpus=${BENCH_CPUS:-2,3}
work=$(mktemp -d "${BENCH_WORK_ROOT:-$PWD}/pinned.XXXX")
chmod 700 "$work"
loops=()
trap 'kill -9 "${loops[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
pocl=${POCL_LIBRARY:-$(ls /usr/lib/x86_64-linux-gnu/libpocl.so* 2>/dev/null | head -1)}
mkdir -p "$work/icd" && echo "$pocl" > "$work/icd/pocl.icd"
export OCL_ICD_VENDORS=$work/icd POCL_CPU_MAX_CU_NUM=2 POCL_MAX_PTHREAD_COUNT=2
export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
app=(taskset -c "$cpus" "$build/examples/opencl/opencl_example" --kernels "$PWD/examples/opencl/kernels")
