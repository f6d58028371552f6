"""Issue 39: how soon does a capture helper building at full priority (no app of its cache at work)
move behind an app of its cache that starts? Per rep and variant: the example cold under jitcache
with PoCL's cache on, BENCH_GAP seconds (0.6: the helper has gone to full priority by then), then
the example again while the helper still builds; every 5 ms until that run exits, the group nice
of each capture helper process (/proc/PID/autogroup). Run it beside CPU-bound loops (the helper's
builds then outlast the gap). CSV rows on stdout: variant,rep,run2_ms,first_behind_ms (empty: the
helper stayed at full priority all through run 2),samples_at_full,samples.
Usage: helper_behind_new_app.py REPS name=/abs/build ...   (folders as bench/busy_fill_apps.sh's)"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def helper_nices():
    """{pid: group nice} of the capture helpers running now (`jitcache` processes in a session of
    their own: the app starts its helper with setsid)."""
    nices = {}
    for path in glob.glob("/proc/[0-9]*/cmdline"):
        pid = int(path.split("/")[2])
        try:
            argv = open(path, "rb").read().split(b"\0")
            if os.path.basename(argv[0]) != b"jitcache" or os.getsid(pid) != pid:
                continue
            nices[pid] = int(open(f"/proc/{pid}/autogroup").read().split()[-1])
        except (OSError, ValueError, IndexError):
            pass  # gone meanwhile
    return nices


def one_rep(name, build, rep, gap):
    work = tempfile.mkdtemp(prefix="behind-", dir=os.environ.get("BENCH_WORK_ROOT"))
    env = dict(os.environ, POCL_CACHE_DIR=work + "/pocl", JITCACHE_DIR=work + "/cache",
               LD_PRELOAD=build + "/shim/libjitcache.so", JITCACHE_HELPER=build + "/tools/jitcache")
    app = [build + "/examples/opencl/opencl_example", "--kernels", ROOT + "/examples/opencl/kernels"]
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    subprocess.run(app, **quiet)
    time.sleep(gap)  # a bench, not a test: the user starts the next run a moment later
    start = time.monotonic()
    run2 = subprocess.Popen(app, **quiet)
    samples = []
    while run2.poll() is None:
        samples.append((time.monotonic() - start, helper_nices()))
        time.sleep(0.005)
    run2_ms = (time.monotonic() - start) * 1000
    behind = next((at * 1000 for at, nices in samples if 19 in nices.values()), None)
    at_full = sum(1 for _, nices in samples if 0 in nices.values())
    print(f"{name},{rep},{run2_ms:.0f},{'' if behind is None else f'{behind:.0f}'},{at_full},{len(samples)}", flush=True)
    subprocess.run([build + "/tools/jitcache", "wait"], **quiet)  # its helper done before the next rep
    shutil.rmtree(work, ignore_errors=True)


def main():
    reps, variants = int(sys.argv[1]), [v.split("=", 1) for v in sys.argv[2:]]
    gap = float(os.environ.get("BENCH_GAP", "0.6"))
    for rep in range(1, reps + 1):
        for name, build in variants if rep % 2 else reversed(variants):  # who goes first alternates
            one_rep(name, os.path.abspath(build), rep, gap)


if __name__ == "__main__":
    main()
