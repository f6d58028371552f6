"""Issue 54, item 1: the capture helper's CPU account against what the OS charged it. For each app
and rep: an empty cache and PoCL cache, the app cold under jitcache with capture = helper and
traces on; this process is a child subreaper, so the helper (re-parented here when its app exits)
is reaped here with its worker's CPU in its rusage. It ends by itself once its jobs are done (no
`jitcache wait`: that would move its builds to full priority). Then:
  traces   the "helper_cpu" steps of every captured key's trace, summed
  stats    `jitcache stats --json` "helper_cpu" (adds the helper's CPU after its last job)
  os       the orphans' CPU as wait4 reported it (0 when the app reaped its helper itself)
  self     the helper's getrusage (itself + its reaped workers) as it ended ("helper_cpu_os_s")
Rows go to <results>/helper_cpu_account.csv (one per app, rep and step); the .md has the table.
Usage: helper_cpu_account.py BUILD_DIR RESULTS_DIR REPS APP... (APP: name=command line)."""
import ctypes
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from next_run import PR_SET_CHILD_SUBREAPER, children_cpu, reap_orphans  # noqa: E402

ORDER = ["helper_startup", "helper", "worker_start", "driver_load", "job", "build", "answers", "read_binary",
         "load_back", "store"]


def one_run(argv, env, tool):
    before = children_cpu()
    code = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    app = children_cpu() - before
    reap_orphans()
    orphans = children_cpu() - before - app
    traced, keys = {}, 0
    for path in glob.glob(os.path.join(env["JITCACHE_TRACE_DIR"], "*.json")):
        with open(path) as f:
            trace = json.load(f)
        if "capture_helper" not in trace:
            continue
        keys += 1
        for step, seconds in trace.get("helper_cpu", {}).items():
            traced[step] = traced.get(step, 0.0) + seconds
    stats = json.loads(subprocess.run([tool, "--dir", env["JITCACHE_DIR"], "stats", "--json"], capture_output=True,
                                      text=True).stdout or "{}")
    return dict(code=code, app=app, os=orphans, keys=keys, traced=traced, stats=stats.get("helper_cpu", {}),
                self=stats.get("helper_cpu_os_s", 0.0))


def main():
    build, results, reps = os.path.abspath(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    apps = [a.split("=", 1) for a in sys.argv[4:]]
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    shim = os.path.join(build, "shim", "libjitcache.so")
    tool = os.path.join(build, "tools", "jitcache")
    runs = []
    for rep in range(1, reps + 1):
        for name, command in apps:
            work = tempfile.mkdtemp(prefix="jitcache-helper-cpu-")
            os.chmod(work, 0o700)
            env = dict(os.environ, POCL_CACHE_DIR=os.path.join(work, "pocl"), PYOPENCL_NO_CACHE="1", PYOPENCL_CTX="0",
                       OPENCV_OPENCL_CACHE_ENABLE="0", OPENCV_OPENCL_DEVICE=":CPU:",
                       XDG_CACHE_HOME=os.path.join(work, "xdg"), LD_PRELOAD=shim,
                       JITCACHE_DIR=os.path.join(work, "cache"), JITCACHE_CAPTURE="helper", JITCACHE_TRACE="1",
                       JITCACHE_TRACE_DIR=os.path.join(work, "traces"))
            env.pop("POCL_KERNEL_CACHE", None)  # the default: on
            run = dict(one_run(command.split(), env, tool), name=name, rep=rep)
            runs.append(run)
            print_run(run)
            shutil.rmtree(work, ignore_errors=True)
    os.makedirs(results, exist_ok=True)
    with open(os.path.join(results, "helper_cpu_account.csv"), "w") as out:
        out.write("app,rep,keys,step,traces_s,stats_s\n")
        for r in runs:
            for step in steps_of(r):
                out.write(f"{r['name']},{r['rep']},{r['keys']},{step},{r['traced'].get(step, 0):.4f},"
                          f"{r['stats'].get(step, 0):.4f}\n")
            out.write(f"{r['name']},{r['rep']},{r['keys']},SUM,{sum(r['traced'].values()):.4f},"
                      f"{sum(r['stats'].values()):.4f}\n")
            out.write(f"{r['name']},{r['rep']},{r['keys']},OS_WAIT4,{r['os']:.4f},{r['self']:.4f}\n")
            out.write(f"{r['name']},{r['rep']},{r['keys']},APP,{r['app']:.4f},\n")
    with open(os.path.join(results, "helper_cpu_account.md"), "w") as out:
        out.write("\n".join(table(runs)) + "\n")


def steps_of(run):
    seen = set(run["traced"]) | set(run["stats"])
    return [s for s in ORDER if s in seen] + sorted(seen - set(ORDER))


def table(runs):
    lines = ["| step | " + " | ".join(f"{r['name']} #{r['rep']}: traces s / stats s" for r in runs) + " |",
             "|---|" + "---|" * len(runs)]
    steps = []
    for r in runs:
        steps += [s for s in steps_of(r) if s not in steps]
    for step in steps:
        lines.append(f"| {step} | " + " | ".join(f"{r['traced'].get(step, 0):.3f} / {r['stats'].get(step, 0):.3f}"
                                                 for r in runs) + " |")
    lines.append("| **sum** | " + " | ".join(f"{sum(r['traced'].values()):.3f} / {sum(r['stats'].values()):.3f}"
                                             for r in runs) + " |")
    lines.append("| OS: wait4 / helper's getrusage | " + " | ".join(f"{r['os']:.3f} / {r['self']:.3f}" for r in runs)
                 + " |")
    lines.append("| stats sum / OS (wait4) | " + " | ".join(
        f"{sum(r['stats'].values()) / r['os']:.3f}" if r["os"] else "n/a (the app reaped its helper)" for r in runs)
        + " |")
    lines.append("| keys captured; the app's own CPU s | " + " | ".join(f"{r['keys']}; {r['app']:.2f}" for r in runs)
                 + " |")
    return lines


def print_run(run):
    print(f"{run['name']} rep {run['rep']}: exit {run['code']}, {run['keys']} keys captured, app CPU {run['app']:.3f} s")
    for step in steps_of(run):
        print(f"  {step:13s} traces {run['traced'].get(step, 0):8.3f} s   stats {run['stats'].get(step, 0):8.3f} s")
    traced, stats = sum(run["traced"].values()), sum(run["stats"].values())
    print(f"  {'sum':13s} traces {traced:8.3f} s   stats {stats:8.3f} s")
    print(f"  OS charged the helper: wait4 {run['os']:.3f} s, its own getrusage {run['self']:.3f} s")
    if run["os"]:
        print(f"  ratio: traces / OS {traced / run['os']:.3f}, stats / OS {stats / run['os']:.3f}", flush=True)


if __name__ == "__main__":
    main()
