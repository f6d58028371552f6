#!/usr/bin/env python3
"""Part 9's table from what bench/gpu-cold.sh brought back (gpu-cold.csv, gpu-cold-traces.tar.gz).

jitcache's own cost inside the app's clBuildProgram is measured per build, not by comparing two
noisy medians: the app's build time (build_timer) minus the driver's build inside it (the trace's
timings_us.build) is what the shim added around the driver call. The first build of a process
also pays the shim's one-time setup; the later ones (build_timer --distinct) show a miss alone.
  bench/gpu-cold-report.py [bench/results]   ->  bench/results/gpu-cold.md
"""
import collections
import csv
import json
import statistics
import sys
import tarfile
from pathlib import Path

results = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "results"
rows = list(csv.DictReader(open(results / "gpu-cold.csv")))

# traces/<size>-<variant>-<rep>/<file>.json: the app's lookups, one per build, in build order
# (a helper leaves its own, under its own pid: the app's pid is the one with the most traces).
traces = {}
with tarfile.open(results / "gpu-cold-traces.tar.gz") as tar:
    for member in tar.getmembers():
        if member.name.endswith(".json"):
            traces.setdefault(member.name.split("/")[1], []).append(json.load(tar.extractfile(member)))
for run, records in traces.items():
    app_pid = collections.Counter(r["pid"] for r in records).most_common(1)[0][0]
    traces[run] = sorted((r for r in records if r["pid"] == app_pid), key=lambda r: r["time"])


def ms(values):
    return statistics.median(values) / 1000 if values else float("nan")


def builds_of(size, variant, first):
    return [r for r in rows if r["size"] == size and r["variant"] == variant and (r["build"] == "1") == first]


def added_by_jitcache(runs):
    """Per build: the app's clBuildProgram time minus the driver's build inside it, and the
    shim's own hash + lookup + wait from the same trace."""
    added, own = [], []
    for r in runs:
        records = traces.get("%s-%s-%s" % (r["size"], r["variant"], r["rep"]), [])
        if len(records) < int(r["build"]):
            continue
        t = records[int(r["build"]) - 1]["timings_us"]
        added.append(int(r["build_us"]) - t["build"])
        own.append(t["hash"] + t["lookup"] + t["wait"])
    return added, own


lines = [
    "| source size | variant | process wall, median | first clBuildProgram, median (min-max) | "
    "jitcache inside it | of plain | later misses: jitcache inside each | of plain | "
    "hash + lookup + wait |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
]
for size in sorted({r["size"] for r in rows}, key=int):
    plain_first = ms([int(r["build_us"]) for r in builds_of(size, "plain", True)])
    plain_later = ms([int(r["build_us"]) for r in builds_of(size, "plain", False)])
    for variant in ["plain", "build", "helper"]:
        first = builds_of(size, variant, True)
        if not first:
            continue
        times = [int(r["build_us"]) for r in first]
        cell = "| %d KiB | %s | %.0f ms | %.1f ms (%.0f-%.0f) |" % (
            int(size) // 1024, variant, ms([int(r["wall_us"]) for r in first]), ms(times),
            min(times) / 1000, max(times) / 1000)
        if variant == "plain":
            lines.append(cell + " | | | | |")
            continue
        added_first, own = added_by_jitcache(first)
        added_later, own_later = added_by_jitcache(builds_of(size, variant, False))
        lines.append(cell + " %.2f ms | %.2f %% | %.2f ms | %.2f %% | %.2f ms |" % (
            ms(added_first), ms(added_first) / plain_first * 100, ms(added_later),
            ms(added_later) / plain_later * 100, ms(own + own_later)))
(results / "gpu-cold.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
