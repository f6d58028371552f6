#!/usr/bin/env bash
# Issue 54, item 1: where a capture helper's CPU goes. Each app runs cold under jitcache with
# capture = helper (PoCL's kernel cache as the default: on); the helper's CPU by step, summed over
# its keys' traces ("helper_cpu") and from `jitcache stats`, is printed beside what the OS charged
# the helper (this process is a child subreaper: wait4's rusage of the helper, its worker's
# included) and what the helper counted of its own getrusage as it ended (bench/helper_cpu_account.py).
#   BENCH_REPS=1  BENCH_APPS="example many100"
# Writes bench/results/helper_cpu_account.csv and helper_cpu_account.md.
source "$(dirname "$0")/common.sh"
ensure_built jitcache_tool opencl_example
source "$(dirname "$0")/apps.sh" 2>/dev/null || true
apps=()
for name in ${BENCH_APPS:-example many100}; do apps+=("$name=${command[$name]}"); done
/usr/bin/python3 "$repo/bench/helper_cpu_account.py" "$build" "$results" "${BENCH_REPS:-1}" "${apps[@]}"
