"""Part 9 (issue 32): the second run. For each app, with the default settings (PoCL's kernel cache
on, each app's own binary cache off), in one go on one machine:
  no cache   the app's first run on an empty PoCL cache, without jitcache
  PoCL warm  the same again at once: PoCL's own second run
  cold       under jitcache, PoCL's cache and jitcache's emptied first
  run 2      the same at once, the moment the cold run exits (its capture helper may still work)
  run 3      after `jitcache wait`, traced: its hits of its lookups (row run3_hits: wall_s = hits,
             cpu_s = lookups); row helpers_done: seconds from run 2's end until every helper exited
BENCH_POCL_KERNEL_CACHE=0 turns PoCL's kernel cache off for every run (results: <name>-pocl-off).
The cold run's CPU is the app's plus its capture helper's (this process is a child subreaper: the
detached helper is re-parented here when the app exits and reaped with its worker's time).
Rows go to <results>/next_run.csv; next_run.md has the ratios of each rep (BENCH_RESULT_NAME
renames both: next_run-busy for the run on a machine whose every core is loaded, next_run.sh).
Usage: next_run.py BUILD_DIR RESULTS_DIR REPS APP... (APP: name=command line, split on spaces)."""
import ctypes
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

PR_SET_CHILD_SUBREAPER = 36


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def reap_orphans():
    """Waits for every process re-parented here (capture helpers) and returns."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def timed(argv, env):
    """(wall s, the children's CPU before it, exit code). Each run gets an empty XDG_CACHE_HOME:
    apps' own caches (hashcat's) stay out; PoCL's is POCL_CACHE_DIR, kept across a rep's runs."""
    cpu_before = children_cpu()
    env = dict(env, XDG_CACHE_HOME=tempfile.mkdtemp(prefix="xdg-", dir=env["BENCH_WORK"]))
    start = time.monotonic()
    code = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    wall = time.monotonic() - start
    return wall, cpu_before, code


def main():
    build, results, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    apps = [a.split("=", 1) for a in sys.argv[4:]]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    shim = os.path.join(build, "shim", "libjitcache.so")
    tool = os.path.join(build, "tools", "jitcache")
    rows = []
    for rep in range(1, reps + 1):
        for name, command in apps:
            argv = command.split()
            work = tempfile.mkdtemp(prefix="jitcache-next-run-")
            os.chmod(work, 0o700)
            env = dict(os.environ, BENCH_WORK=work, POCL_CACHE_DIR=os.path.join(work, "pocl"), PYOPENCL_NO_CACHE="1",
                       PYOPENCL_CTX="0", OPENCV_OPENCL_CACHE_ENABLE="0", OPENCV_OPENCL_DEVICE=":CPU:")
            env.pop("POCL_KERNEL_CACHE", None)  # the default: on
            if os.environ.get("BENCH_POCL_KERNEL_CACHE") == "0":
                env["POCL_KERNEL_CACHE"] = "0"
            env.pop("LD_PRELOAD", None)
            results_of = {}
            for variant in ("no_cache", "pocl_warm"):
                wall, cpu0, code = timed(argv, env)
                reap_orphans()
                results_of[variant] = (wall, children_cpu() - cpu0, code)
            shutil.rmtree(os.path.join(work, "pocl"), ignore_errors=True)
            cached = dict(env, LD_PRELOAD=shim, JITCACHE_DIR=os.path.join(work, "cache"))
            wall, cpu0, code = timed(argv, cached)
            run2 = timed(argv, cached)  # at once: the cold run's helper may still be at work
            run2_end = time.monotonic()
            reap_orphans()  # both runs' helpers: the cold run's CPU below includes what they did
            results_of["helpers_done"] = (time.monotonic() - run2_end, None, 0)
            results_of["cold"] = (wall, None, code)
            results_of["run2"] = (run2[0], None, run2[2])
            total_cpu = children_cpu() - cpu0
            subprocess.run([tool, "wait", "--dir", cached["JITCACHE_DIR"]], stdout=subprocess.DEVNULL)
            cpu3 = children_cpu()
            traces = os.path.join(work, "traces-run3")
            wall3, _, code3 = timed(argv, dict(cached, JITCACHE_TRACE="1", JITCACHE_TRACE_DIR=traces))
            reap_orphans()
            results_of["run3"] = (wall3, children_cpu() - cpu3, code3)
            verdicts = [json.load(open(os.path.join(traces, f))).get("verdict") for f in os.listdir(traces)
                        if f.endswith(".json")] if os.path.isdir(traces) else []
            verdicts = [v for v in verdicts if v != "captured"]  # its helper's records: not lookups
            results_of["run3_hits"] = (float(verdicts.count("hit")), float(len(verdicts)), 0)
            results_of["cold_and_run2_cpu"] = (0.0, total_cpu, 0)
            for variant, (wall, cpu, code) in results_of.items():
                rows.append((name, variant, rep, wall, cpu, code))
                print(f"{name},{variant},{rep},{wall:.3f},{'' if cpu is None else f'{cpu:.3f}'},{code}", flush=True)
            shutil.rmtree(work, ignore_errors=True)
    os.makedirs(results, exist_ok=True)
    result_name = os.environ.get("BENCH_RESULT_NAME", "next_run")
    if os.environ.get("BENCH_POCL_KERNEL_CACHE") == "0":
        result_name += "-pocl-off"
    with open(os.path.join(results, result_name + ".csv"), "w") as out:
        out.write("app,variant,rep,wall_s,cpu_s,exit_code\n")
        for name, variant, rep, wall, cpu, code in rows:
            out.write(f"{name},{variant},{rep},{wall:.3f},{'' if cpu is None else f'{cpu:.3f}'},{code}\n")
    write_report(rows, os.path.join(results, result_name + ".md"))


def write_report(rows, path):
    by = {}
    for name, variant, rep, wall, cpu, code in rows:
        by.setdefault((name, rep), {})[variant] = (wall, cpu, code)
    lines = ["| app | rep | no cache s | PoCL warm s | cold s | run 2 s | run 3 s | run 2 / no cache | "
             "run 2 / PoCL warm | cold / no cache | CPU: cold + run 2 (+ helpers) / 2 no-cache runs | "
             "helpers done s after run 2 | run 3 hits | failures |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (name, rep), v in sorted(by.items()):
        nc, pw, cold, r2, r3 = (v[k][0] for k in ("no_cache", "pocl_warm", "cold", "run2", "run3"))
        cpu_ratio = v["cold_and_run2_cpu"][1] / (v["no_cache"][1] + v["pocl_warm"][1])
        failed = sum(1 for k in ("no_cache", "pocl_warm", "cold", "run2", "run3") if v[k][2] != 0)
        lines.append(f"| {name} | {rep} | {nc:.2f} | {pw:.2f} | {cold:.2f} | {r2:.2f} | {r3:.2f} | "
                     f"{r2 / nc:.2f} | {r2 / pw:.2f} | {cold / nc:.2f} | {cpu_ratio:.2f} | "
                     f"{v['helpers_done'][0]:.1f} | {v['run3_hits'][0]:.0f} of {v['run3_hits'][1]:.0f} | {failed} |")
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
