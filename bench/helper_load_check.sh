#!/usr/bin/env bash
# What the capture helper's load-back check (shim/opencl/load_back.hpp) costs the helper: cold runs
# of the example under the default (capture = auto) in a fresh cache each; every helper's trace
# gives its build time, its check time and its child's wall time. Prints the medians per program
# and the raw rows. The app does not wait for its helpers, so none of this is on the app's path.
#   BENCH_REPS=7 POCL_KERNEL_CACHE=0 bench/helper_load_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${BENCH_REPS:-7}
build=${BUILD_DIR:-build}
echo "load before: $(uptime | sed 's/.*average: //')"
rows=$(mktemp)
for _ in $(seq 1 "$reps"); do
  run_dir=$(mktemp -d /tmp/jitcache-bench-XXXXXX)
  env JITCACHE_DIR="$run_dir/cache" JITCACHE_TRACE=1 JITCACHE_TRACE_DIR="$run_dir/traces" \
    POCL_KERNEL_CACHE="${POCL_KERNEL_CACHE:-0}" POCL_CACHE_DIR="$run_dir/pocl" LD_PRELOAD="$build/shim/libjitcache.so" \
    "$build/examples/opencl/opencl_example" --kernels examples/opencl/kernels >/dev/null
  for lock in "$run_dir"/cache/locks/*.lock; do [ -e "$lock" ] && flock "$lock" true; done  # the helpers are done
  python3 - "$run_dir/traces" >>"$rows" <<'PY'
import json, pathlib, sys
for path in pathlib.Path(sys.argv[1]).rglob('*.json'):
    trace = json.loads(path.read_text())
    if 'capture_helper' in trace:
        t = trace['timings_us']
        wall = trace['capture_helper']['ended_us'] - trace['capture_helper']['started_us']
        print(trace['key'][:8], t['build'], t['load_check'], wall)
PY
  rm -rf "$run_dir"
done
echo "load after: $(uptime | sed 's/.*average: //')"
echo "program build_us load_check_us child_wall_us"
cat "$rows"
python3 - "$rows" <<'PY'
import statistics, sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    key, build, check, wall = line.split()
    rows[key].append((int(build), int(check), int(wall)))
for key, values in rows.items():
    build = statistics.median(v[0] for v in values); check = statistics.median(v[1] for v in values)
    wall = statistics.median(v[2] for v in values)
    print(f"{key}: n={len(values)} median build {build/1000:.0f} ms, load check {check/1000:.1f} ms, "
          f"child wall {wall/1000:.0f} ms: check = {100*check/wall:.1f} % of the child")
PY
rm -f "$rows"
