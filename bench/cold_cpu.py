"""Part 12 (issue 39, target 2): what a cold run costs in CPU against no cache, split into the app's
own CPU and its capture helpers'. For each app, with the default settings (PoCL's kernel cache on,
each app's own binary cache off), reps interleaved:
  no cache   the app on an empty PoCL cache, without jitcache
  cold       under jitcache, PoCL's cache and jitcache's emptied first; the helper's CPU is taken
             when it is reaped (this process is a child subreaper), after it stored everything
Rows go to <results>/cold_cpu.csv; cold_cpu.md has the ratios per rep and their medians.
Usage: cold_cpu.py BUILD_DIR RESULTS_DIR REPS APP... (APP: name=command line, split on spaces)."""
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from next_run import PR_SET_CHILD_SUBREAPER, children_cpu, reap_orphans  # noqa: E402


def run(argv, env):
    env = dict(env, XDG_CACHE_HOME=tempfile.mkdtemp(prefix="xdg-", dir=env["BENCH_WORK"]))
    before = children_cpu()
    code = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    app = children_cpu() - before
    reap_orphans()
    return app, children_cpu() - before - app, code


def main():
    build, results, reps = os.path.abspath(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    apps = [a.split("=", 1) for a in sys.argv[4:]]
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    shim = os.path.join(build, "shim", "libjitcache.so")
    tool = os.path.join(build, "tools", "jitcache")
    rows = []
    for rep in range(1, reps + 1):
        for name, command in apps:
            work = tempfile.mkdtemp(prefix="jitcache-cold-cpu-")
            os.chmod(work, 0o700)
            pocl = os.path.join(work, "pocl")
            env = dict(os.environ, BENCH_WORK=work, POCL_CACHE_DIR=pocl, PYOPENCL_NO_CACHE="1", PYOPENCL_CTX="0",
                       OPENCV_OPENCL_CACHE_ENABLE="0", OPENCV_OPENCL_DEVICE=":CPU:")
            for variable in ("POCL_KERNEL_CACHE", "LD_PRELOAD"):
                env.pop(variable, None)
            no_cache = run(command.split(), env)
            shutil.rmtree(pocl, ignore_errors=True)
            cache = os.path.join(work, "cache")
            cold = run(command.split(), dict(env, LD_PRELOAD=shim, JITCACHE_DIR=cache))
            stats = json.loads(subprocess.run([tool, "--dir", cache, "stats", "--json"], capture_output=True,
                                              text=True).stdout or "{}")
            counters = stats.get("counters", {})
            stored = f"{counters.get('captured_by_helper', '?')} of {counters.get('misses', '?')}"
            rows.append((name, rep, no_cache[0], cold[0], cold[1], stored, no_cache[2] or cold[2]))
            print(",".join(str(v) for v in rows[-1]), flush=True)
            shutil.rmtree(work, ignore_errors=True)
    os.makedirs(results, exist_ok=True)
    with open(os.path.join(results, "cold_cpu.csv"), "w") as out:
        out.write("app,rep,no_cache_cpu_s,cold_app_cpu_s,cold_helper_cpu_s,captured_by_helper,exit_code\n")
        for row in rows:
            out.write(",".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row) + "\n")
    write_report(rows, os.path.join(results, "cold_cpu.md"))


def write_report(rows, path):
    lines = ["| app | reps | no cache CPU s | cold: app CPU s | cold: helpers' CPU s | cold total / no cache "
             "(median, range) | captured by helpers | failures |", "|---|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == name]
        ratios = [(r[3] + r[4]) / r[2] for r in mine]
        median = lambda i: statistics.median(r[i] for r in mine)  # noqa: E731
        lines.append(f"| {name} | {len(mine)} | {median(2):.2f} | {median(3):.2f} | {median(4):.2f} | "
                     f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) | "
                     f"{'/'.join(sorted(set(r[5] for r in mine)))} | {sum(1 for r in mine if r[6])} |")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
