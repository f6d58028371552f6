#!/usr/bin/env bash
# N processes on an empty cache, each a "host" with its own local store (JITCACHE_DIR), sharing
# one remote: how many times is each key compiled across all of them? Runs the OpenCL example (two
# programs) N times at once per remote kind: file:// (a directory), Redis, HTTP (nginx WebDAV) and
# S3 (s3rver, where installed); HTTP and S3 have no leases. Counts each key's compiles from the traces
# (verdict "miss": this process ran the real build), its remote hits and lease waits. Splices its
# part into docs/benchmarks-remote.md (after the marker below; the part above is remote_latency.sh's).
#
#   bench/remote_fanout.sh [PROCESSES]     (default 16; build with scripts/build.sh --all first)
set -euo pipefail
cd "$(dirname "$0")/.."
procs=${1:-16}
build=${BUILD_DIR:-build}
lib=$build/shim/libjitcache.so
app=$build/examples/opencl/opencl_example
out=docs/benchmarks-remote.md
[ -x "$app" ] && [ -f "$lib" ] || { echo "build first: scripts/build.sh --all" >&2; exit 1; }

work=$(mktemp -d -p "${BENCH_TMP:-$PWD/$build}")
source bench/remote_servers.sh
mkdir -p "$work/shared"

# fan KIND URL: N processes at once, each its own store; results under $work/results/KIND/<i>.
fan() {
  local kind=$1 remote=$2 start pids=()
  start=$(date +%s.%N)
  for i in $(seq "$procs"); do
    local result=$work/results/$kind/$i
    mkdir -p "$result"
    env LD_PRELOAD="$lib" JITCACHE_DIR="$work/stores/$kind-$i" JITCACHE_TRACE=1 JITCACHE_TRACE_DIR="$result/traces" \
      JITCACHE_REMOTE="$remote" JITCACHE_REMOTE_LEASE_WAIT=10m JITCACHE_REMOTE_LEASE_TTL=10m \
      JITCACHE_REMOTE_TIMEOUT_MS=5000 JITCACHE_REMOTE_CONNECT_TIMEOUT_MS=5000 JITCACHE_CAPTURE=build \
      POCL_KERNEL_CACHE=0 POCL_CACHE_DIR="$work/pocl-$kind-$i" "$app" >"$result/out" 2>"$result/err" &
    pids+=($!)
  done
  wait "${pids[@]}"  # the apps only: redis-server and nginx are children too
  echo "$(date +%s.%N) - $start" | bc >"$work/results/$kind/wall_s"
  grep -L "all results correct" "$work"/results/"$kind"/*/out | grep . && { echo "wrong results ($kind)" >&2; exit 1; }
  return 0
}

fan file "file://$work/shared"
fan redis "$redis_url"
fan http "$http_url"
if [ -n "$s3_url" ]; then fan s3 "$s3_url/fanout"; fi
load=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$work/results" "$procs" "$out" "$load" <<'PY'
import collections, datetime, glob, json, os, sys
results, procs, out, load = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
marker = "<!-- bench/remote_fanout.sh -->"
lines = [marker, "", f"### {procs} processes on an empty cache, one compile per key across hosts", "",
         f"`bench/remote_fanout.sh {procs}` on {datetime.date.today()}, {cpu}, {os.cpu_count()} cores, load average "
         f"{load} at the end (other jobs share the machine), PoCL CPU device. Per remote: {procs} `opencl_example` "
         "processes started at once, each a \"host\" with its own empty local store (`JITCACHE_DIR`), sharing one "
         "empty remote (a directory; redis-server and nginx WebDAV on 127.0.0.1), `JITCACHE_CAPTURE=build`. "
         "Compiles are counted from the traces (verdict `miss`: the process ran the driver's build); the "
         "example builds two programs, so two keys.", "",
         "| remote | compiles per key | remote hits | lease waits | wall s (all processes) |", "|---|---|---|---|---|"]
for kind, title in (("file", "file:// (directory)"), ("redis", "Redis"), ("http", "HTTP (no leases)"),
                    ("s3", "S3, s3rver (no leases)")):
    if not os.path.isdir(f"{results}/{kind}"): continue  # S3 only where s3rver is installed
    compiles, hits, waits = collections.Counter(), 0, 0
    for f in glob.glob(f"{results}/{kind}/*/traces/*.json"):
        t = json.load(open(f))
        if t["verdict"] == "miss": compiles[t["key"]] += 1
        if t.get("tier") == "remote": hits += 1
        if (t.get("remote") or {}).get("lease") == "waited": waits += 1
    keys = {json.load(open(f))["key"] for f in glob.glob(f"{results}/{kind}/*/traces/*.json")}
    per_key = " / ".join(str(compiles[k]) for k in sorted(keys))
    wall = float(open(f"{results}/{kind}/wall_s").read())
    lines.append(f"| {title} | {per_key} | {hits} | {waits} | {wall:.1f} |")
lines += ["", "With leases (file://, Redis) the first process to miss builds and the others wait for its record: "
          "one compile per key whatever the number of hosts. HTTP has no atomic create, so every process that "
          "misses before the first PUT lands builds too (docs/remote.md, HTTP(S) remotes); so does S3, whose "
          "conditional create keeps the first record but does not stop the others' builds (docs/remote.md, S3 remotes).", ""]
text = open(out).read() if os.path.exists(out) else ""
text = text[:text.index(marker)] if marker in text else text.rstrip("\n") + "\n\n"
open(out, "w").write(text + "\n".join(lines))
print("\n".join(lines))
PY
