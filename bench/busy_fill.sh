#!/usr/bin/env bash
# Issue 39 (Part 10) on the lent machine: bench/busy_fill.py's stages for one app, reps side by
# side, each on a pair of CPUs of its own (2-3, 4-5, ...) that BENCH_BUSY CPU-bound loops (default
# 2, each in a session of its own, as other users' work) keep busy: every core a rep uses is
# loaded. PoCL alone is the driver, told it has two compute units. Variants alternate over the
# pairs, so old and new builds run at the same time on the same machine:
#   BENCH_VARIANTS="new=/abs/build old=/abs/build"  (folders with shim/, tools/, lib/ and the app)
#   BENCH_PAIRS=6  BENCH_ROUNDS=1  BENCH_APP="release_early100"   (example | release_earlyN: N programs)
# CSV rows (variant,app,stage,rep,wall_s,cpu_s,cpu_with_helpers_s,hits,lookups,helper_build_s,
# helper_check_s,exit_code) on
# stdout; bench/busy_fill_report.py makes the table.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${BENCH_PAIRS:-6}
read -r -a variants <<< "${BENCH_VARIANTS:?name=/abs/build ...}"
work=$(mktemp -d "${BENCH_WORK_ROOT:-/tmp}/busy-fill.XXXX")
chmod 700 "$work"
loops=()
trap 'kill -9 "${loops[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
pocl=${POCL_LIBRARY:-$(ls /usr/lib/x86_64-linux-gnu/libpocl.so* 2>/dev/null | head -1)}
mkdir -p "$work/icd" && echo "$pocl" > "$work/icd/pocl.icd"
# PoCL alone, for ocl-icd (OCL_ICD_VENDORS) and for the Khronos loader of the lent machine, which
# lists its drivers in OCL_ICD_FILENAMES (and finds none in a vendors folder of ours).
export OCL_ICD_FILENAMES=$pocl OCL_ICD_VENDORS=$work/icd POCL_CPU_MAX_CU_NUM=2 POCL_MAX_PTHREAD_COUNT=2
export BENCH_WORK_ROOT=$work
for round in $(seq "${BENCH_ROUNDS:-1}"); do
reps=()
for pair in $(seq "$pairs"); do
  cpus="$((2 * pair)),$((2 * pair + 1))"
  variant=${variants[$(( (pair - 1) % ${#variants[@]} ))]}
  name=${variant%%=*} build=${variant#*=}
  case ${BENCH_APP:-example} in
    example) app=("$build/apps/opencl_example" --kernels "$PWD/examples/opencl/kernels") ;;
    release_early*) app=("$build/apps/opencl_release_early" "${BENCH_APP#release_early}") ;;  # release_early30: 30 programs
    *) echo "unknown BENCH_APP" >&2; exit 2 ;;
  esac
  for _ in $(seq "${BENCH_BUSY:-2}"); do setsid taskset -c "$cpus" sh -c 'while :; do :; done' & loops+=($!); done
  rep=$(( (round - 1) * pairs + pair ))
  LD_LIBRARY_PATH=$build/lib taskset -c "$cpus" python3 bench/busy_fill.py "$build" "$name" "$rep" \
    "${BENCH_APP:-example}" "${app[@]}" > "$work/rep-$rep.csv" &
  reps+=($!)
done
wait "${reps[@]}"
kill -9 "${loops[@]}" 2>/dev/null || true
loops=()
done
cat "$work"/rep-*.csv
