"""Issue 39 (Part 10): does the cache fill on a busy machine, and what do run 2 and a cold run cost
there? One rep of one app under one build, every process pinned by the caller (busy_fill.sh) to
two CPUs that other work keeps busy. Stages, each run started the moment the one before exited:
  PoCL's cache on (its default):
    no_cache   empty PoCL cache, no jitcache         pocl_warm  the same again: PoCL's second run
    cold       jitcache and PoCL emptied             run2       at once after cold
    run3       BENCH_LATER seconds (60) after the cold run ended, without `jitcache wait`
  PoCL's cache off:
    off_no_cache                                     off_cold, then off_run2 at once
BENCH_OFF=0 leaves out the stages with PoCL's cache off. Per stage: wall s, the app's CPU s, jitcache's hits and lookups (traces). The cold runs' rows also
give cpu_with_helpers: the app's CPU plus every capture helper's (this process is a child
subreaper: helpers are re-parented here and reaped with their workers' time), and where the
helpers' time went by their traces: the builds (compile and binary read-out) and the load-back
checks (the rest is starting processes and the driver).
Usage: busy_fill.py BUILD VARIANT REP APP_NAME COMMAND...   (CSV rows on stdout, no header)."""
import ctypes
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from next_run import children_cpu, reap_orphans as reap_helpers  # the same child-subreaper accounting

PR_SET_CHILD_SUBREAPER = 36


def verdicts(trace_dir):
    """(hits, lookups, helpers' build s, helpers' load-back check s) of one run's traces."""
    hits = lookups = 0
    helper_build = helper_check = 0.0
    for path in glob.glob(os.path.join(trace_dir, "*.json")):
        try:
            with open(path) as f:
                trace = json.load(f)
        except (OSError, ValueError):
            continue
        verdict = trace.get("verdict")
        if verdict == "captured":  # a helper's build: where its time went, and at what priority
            helper_build += trace.get("timings_us", {}).get("build", 0) / 1e6
            helper_check += trace.get("timings_us", {}).get("load_check", 0) / 1e6
            helper = trace.get("capture_helper", {})
            print(f"helper build: group_nice {helper.get('group_nice')} waited_for {helper.get('waited_for')} "
                  f"at_exit {helper.get('at_exit')} ended {helper.get('ended_us', 0) / 1e6:.1f}", file=sys.stderr)
        if verdict in ("captured", "uncacheable"):
            continue
        lookups += 1
        hits += verdict == "hit"
    return hits, lookups, helper_build, helper_check


def run(argv, env, traces=None):
    """(wall s, the app's own CPU s, exit code); the app's children that it waits for count too."""
    env = dict(env, XDG_CACHE_HOME=tempfile.mkdtemp(prefix="xdg-", dir=env["BENCH_WORK"]))
    if traces:
        env.update(JITCACHE_TRACE="1", JITCACHE_TRACE_DIR=traces)
    start = time.monotonic()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - start
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def main():
    build, variant, rep, name, argv = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
    later = float(os.environ.get("BENCH_LATER", "60"))
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    work = tempfile.mkdtemp(prefix="busy-fill-", dir=os.environ.get("BENCH_WORK_ROOT"))
    os.chmod(work, 0o700)
    plain = dict(os.environ, BENCH_WORK=work, POCL_CACHE_DIR=os.path.join(work, "pocl"))
    for drop in ("POCL_KERNEL_CACHE", "LD_PRELOAD", "JITCACHE_DIR"):
        plain.pop(drop, None)

    def row(stage, wall, cpu, code, found=(0, 0, 0.0, 0.0), cpu_with_helpers=""):
        print(f"{variant},{name},{stage},{rep},{wall:.3f},{cpu:.3f},{cpu_with_helpers},{found[0]},{found[1]},"
              f"{found[2]:.3f},{found[3]:.3f},{code}", flush=True)

    def cached(pocl_cache):
        env = dict(plain, LD_PRELOAD=os.path.join(build, "shim", "libjitcache.so"),
                   JITCACHE_DIR=os.path.join(work, "cache-" + pocl_cache), JITCACHE_HELPER=os.path.join(build, "tools", "jitcache"),
                   POCL_KERNEL_CACHE=pocl_cache)
        return env

    def traced(env, stage):
        traces = os.path.join(work, "traces-" + stage)
        wall, cpu, code = run(argv, env, traces)
        return wall, cpu, code, verdicts(traces)

    # PoCL's cache on.
    for stage in ("no_cache", "pocl_warm"):
        row(stage, *run(argv, plain))
    shutil.rmtree(plain["POCL_CACHE_DIR"], ignore_errors=True)
    env = cached("1")
    before = children_cpu()
    wall, cpu, code, hits = traced(env, "cold")
    cold_end = time.monotonic()
    run2 = traced(env, "run2")
    time.sleep(max(0.0, cold_end + later - time.monotonic()))  # a bench, not a test: "a minute later"
    run3 = traced(env, "run3")
    reap_helpers()
    hits = verdicts(os.path.join(work, "traces-cold"))  # now with every helper's build of the cold run
    # The cold run's app, run 2's and run 3's apps, and every helper: the helpers' share goes to cold.
    helpers = children_cpu() - before - cpu - run2[1] - run3[1]
    row("cold", wall, cpu, code, hits, f"{cpu + helpers:.3f}")
    row("run2", *run2[:3], run2[3])
    row("run3", *run3[:3], run3[3])

    if os.environ.get("BENCH_OFF", "1") == "0":  # PoCL's cache on only (bench/busy_fill_apps.sh)
        shutil.rmtree(work, ignore_errors=True)
        return
    # PoCL's cache off.
    shutil.rmtree(plain["POCL_CACHE_DIR"], ignore_errors=True)
    off = dict(plain, POCL_KERNEL_CACHE="0")
    row("off_no_cache", *run(argv, off))
    env = cached("0")
    before = children_cpu()
    wall, cpu, code, hits = traced(env, "off_cold")
    run2 = traced(env, "off_run2")
    reap_helpers()
    hits = verdicts(os.path.join(work, "traces-off_cold"))
    helpers = children_cpu() - before - cpu - run2[1]
    row("off_cold", wall, cpu, code, hits, f"{cpu + helpers:.3f}")
    row("off_run2", *run2[:3], run2[3])
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
