#!/usr/bin/env bash
# Issue 39 on the lent machine: does the cache fill on a busy machine while another app of the
# cache runs on idle (a server that built at its start, a rank waiting in MPI)? Per rep, on a pair
# of CPUs of its own (2-3, 4-5, ...) that BENCH_BUSY CPU-bound loops (default 2) keep busy: an idle
# app at work (a process holding a POSIX lock on a file of its own in <cache>/locks/apps/, as every
# app under jitcache does for its life, and sleeping; builds before issue 51 looked for a shared
# flock on locks/apps.running instead), then the example run cold under jitcache, then the
# seconds until the helper has stored both programs, polled without `jitcache wait` (which would
# raise the helper's priority), up to BENCH_LIMIT s (default 300). Variants alternate over the pairs:
#   BENCH_VARIANTS="new=/abs/build old=/abs/build" BENCH_PAIRS=6   (folders as bench/busy_fill.sh's)
# CSV rows on stdout: variant,rep,cold_wall_s,filled_s (empty: not filled within the limit).
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a variants <<< "${BENCH_VARIANTS:?name=/abs/build ...}"
work=$(mktemp -d /tmp/idle-app-fill.XXXX)
chmod 700 "$work"
pids=()
trap 'kill -9 "${pids[@]}" 2>/dev/null || true; [ -n "${BENCH_KEEP:-}" ] || rm -rf "$work"' EXIT
pocl=${POCL_LIBRARY:-$(ls /usr/lib/x86_64-linux-gnu/libpocl.so* 2>/dev/null | head -1)}
export OCL_ICD_FILENAMES=$pocl POCL_CPU_MAX_CU_NUM=2 POCL_MAX_PTHREAD_COUNT=2
limit=${BENCH_LIMIT:-300}

seconds() { printf '%d.%03d' $(( $1 / 1000000000 )) $(( $1 / 1000000 % 1000 )); }

one_rep() {  # name build cpus rep
  local name=$1 build=$2 cpus=$3 rep=$4 dir=$work/rep-$4
  mkdir -m 700 -p "$dir/cache/locks/apps" "$dir/cache/tmp"
  python3 -c 'import fcntl, os, sys, time
temp, name = sys.argv[1] + "/tmp/idle.app", "%s/locks/apps/%d-0-0.app" % (sys.argv[1], os.getpid())
f = open(temp, "w"); fcntl.lockf(f, fcntl.LOCK_EX); os.rename(temp, name); time.sleep(1e6)' "$dir/cache" &
  local idle=$!
  local start end
  start=$(date +%s%N)
  LD_LIBRARY_PATH=$build/lib LD_PRELOAD=$build/shim/libjitcache.so JITCACHE_DIR=$dir/cache \
    JITCACHE_HELPER=$build/tools/jitcache JITCACHE_TRACE=${BENCH_TRACE:-0} JITCACHE_TRACE_DIR=$dir/traces POCL_CACHE_DIR=$dir/pocl XDG_CACHE_HOME=$dir/xdg \
    taskset -c "$cpus" "$build/apps/opencl_example" --kernels "$PWD/examples/opencl/kernels" > /dev/null 2>> "$dir/app.err"
  end=$(date +%s%N)
  local filled=""
  while (( $(date +%s%N) < end + limit * 1000000000 )); do
    [ "$(find "$dir/cache" -name '*.entry' 2>/dev/null | wc -l)" -ge 2 ] && { filled=$(seconds $(( $(date +%s%N) - end ))); break; }
    sleep 0.2  # a bench's poll, not a test's wait
  done
  kill -9 "$idle" 2>/dev/null || true
  echo "$name,$rep,$(seconds $(( end - start ))),$filled"
}

reps=()
base=${BENCH_FIRST_CPU:-2}  # 0 on a machine of two CPUs
for pair in $(seq "${BENCH_PAIRS:-6}"); do
  cpus="$((base + 2 * pair - 2)),$((base + 2 * pair - 1))"
  variant=${variants[$(( (pair - 1) % ${#variants[@]} ))]}
  for _ in $(seq "${BENCH_BUSY:-2}"); do setsid taskset -c "$cpus" sh -c 'while :; do :; done' & pids+=($!); done
  one_rep "${variant%%=*}" "${variant#*=}" "$cpus" "$pair" > "$work/rep-$pair.csv" &
  reps+=($!)
done
wait "${reps[@]}"
cat "$work"/rep-*.csv
