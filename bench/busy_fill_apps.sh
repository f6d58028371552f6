#!/usr/bin/env bash
# Issue 39, target 1 on this machine (any number of cores): does run 3, started a minute after the
# cold run, hit every program of every app of the apps suite (tests/apps) and of the 100-program
# app while every core is busy? BENCH_BUSY CPU-bound loops per core (default 1; each in a session of
# its own, as other users' work) run for the whole bench; per app and rep, bench/busy_fill.py's
# stages with PoCL's cache on (no cache, PoCL's second run, cold, run 2 at once, run 3 a minute
# after the cold run; BENCH_OFF=1 adds those with PoCL's cache off). Apps alternate, so each app's
# reps meet different moments of the machine.
#   BENCH_REPS=2  BENCH_APPS="pyopencl opencv clblast hashcat example threads release_early100"
#   BENCH_BUILD=/abs/build (default: build), or BENCH_VARIANTS="new=/abs/build prev=/abs/build":
#   each app's rep runs under each variant in turn, first one then the other (folders with shim/,
#   tools/jitcache, examples/opencl/).
# CSV rows as bench/busy_fill.sh's on stdout; bench/busy_fill_report.py makes the table.
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a variants <<< "${BENCH_VARIANTS:-vm=$(realpath "${BENCH_BUILD:-build}")}"
apps_dir=$PWD/tests/apps
kernels=$PWD/examples/opencl/kernels
work=$(mktemp -d /tmp/busy-fill-apps.XXXX)
chmod 700 "$work"
loops=()
trap 'kill -9 "${loops[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
pocl=${POCL_LIBRARY:-$(ls /usr/lib/x86_64-linux-gnu/libpocl.so* 2>/dev/null | head -1)}
mkdir -p "$work/icd" && echo "$pocl" > "$work/icd/pocl.icd"
export OCL_ICD_FILENAMES=$pocl OCL_ICD_VENDORS=$work/icd BENCH_WORK_ROOT=$work BENCH_OFF=${BENCH_OFF:-0}
for _ in $(seq $(( $(nproc) * ${BENCH_BUSY:-1} ))); do setsid sh -c 'while :; do :; done' & loops+=($!); done

# The apps suite's commands and environments (tests/apps/apps_suite_test.cpp).
one_rep() {  # app rep variant=build
  local app=$1 rep=$2 name=${3%%=*} build=${3#*=} env=() argv=()
  case $app in
    pyopencl) env=(PYOPENCL_NO_CACHE=1 PYOPENCL_CTX=0) argv=(/usr/bin/python3 "$apps_dir/pyopencl_array_app.py") ;;
    opencv) env=(OPENCV_OPENCL_DEVICE=:CPU: OPENCV_OPENCL_CACHE_ENABLE=0) argv=(/usr/bin/python3 "$apps_dir/opencv_umat_app.py") ;;
    clblast) argv=(/usr/bin/clblast_test_xscal) ;;
    hashcat) argv=(/usr/bin/hashcat "--session=jitcache-bench-$$" -m 0 -a 0 --potfile-disable --quiet
                   --backend-ignore-cuda --backend-ignore-hip -O -w 1 "$apps_dir/hashcat/md5.hash" "$apps_dir/hashcat/words.txt") ;;
    example) argv=("$build/examples/opencl/opencl_example" --kernels "$kernels") ;;
    threads) argv=("$build/examples/opencl/opencl_threads" --threads 4 --kernels "$kernels") ;;
    release_early*) argv=("$build/tests/apps/opencl_release_early" "${app#release_early}") ;;
    *) echo "unknown app $app" >&2; exit 2 ;;
  esac
  env "${env[@]}" LD_LIBRARY_PATH="$build/lib" python3 bench/busy_fill.py "$build" "$name" "$rep" "$app" "${argv[@]}"
}
for rep in $(seq "${BENCH_REPS:-2}"); do
  for app in ${BENCH_APPS:-pyopencl opencv clblast hashcat example threads release_early100}; do
    order=("${variants[@]}")
    (( rep % 2 )) || order=($(printf '%s\n' "${variants[@]}" | tac))  # who goes first alternates
    for variant in "${order[@]}"; do one_rep "$app" "$rep" "$variant"; done
  done
done
