#!/usr/bin/env python3
"""Summarises bench/warm_hit_floor.sh's CSVs into warm-hit-floor.md (Part 11 of docs/benchmarks.md).

Per driver and size: medians of the floor and the warm disk hit, their ratio, the ratio of the
fastest reps, the median of the rep-by-rep difference, and jitcache's own phases from the traced
runs (hash: key derivation with identity; lookup: the store read)."""
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

results = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "results"
runs = defaultdict(dict)
for row in csv.DictReader(open(results / "warm-hit-floor.csv")):
    runs[(row["driver"], int(row["size"]), row["variant"])][int(row["rep"])] = int(row["total_us"])
phases = defaultdict(list)
for row in csv.DictReader(open(results / "warm-hit-floor-traces.csv")):
    phases[(row["driver"], int(row["size"]))].append((int(row["hash"]), int(row["lookup"])))

ms = lambda us: f"{us / 1000:.2f}"
lines = ["| driver | source size | reps | floor (ms) | warm disk hit (ms) | warm / floor | fastest / fastest "
         "| warm − floor, rep by rep (ms) | jitcache's hash + lookup (µs) |",
         "|---|---|---|---|---|---|---|---|---|"]
for driver, size in sorted({(d, s) for d, s, _ in runs}):
    floor, warm = runs[(driver, size, "floor")], runs[(driver, size, "warm")]
    paired = [warm[rep] - floor[rep] for rep in floor if rep in warm]
    traced = phases[(driver, size)]
    own = statistics.median(h + l for h, l in traced) if traced else float("nan")
    lines.append(f"| {driver} | {size // 1024} KiB | {len(floor)} | {ms(statistics.median(floor.values()))} "
                 f"| {ms(statistics.median(warm.values()))} "
                 f"| {statistics.median(warm.values()) / statistics.median(floor.values()):.3f} "
                 f"| {min(warm.values()) / min(floor.values()):.3f} | {ms(statistics.median(paired))} | {own:.0f} |")
(results / "warm-hit-floor.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
