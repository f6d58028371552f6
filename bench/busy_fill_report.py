"""The table of bench/busy_fill.sh's rows (issue 39, Part 10): per app and variant, medians over the
reps of each rep's own ratios (the reps ran at the same time on pairs of busy CPUs). Reps without
the stages with PoCL's cache off (BENCH_OFF=0) leave those columns empty.
Usage: busy_fill_report.py CSV... > table.md"""
import csv
import statistics
import sys


def main():
    runs = {}
    for path in sys.argv[1:]:
        with open(path) as f:
            for r in csv.reader(f):
                if len(r) != 12 or r[0] == "variant":
                    continue
                variant, app, stage, rep = r[:4]
                runs.setdefault((app, variant), {}).setdefault(rep, {})[stage] = {
                    "wall": float(r[4]), "cpu": float(r[5]), "cpu_all": float(r[6]) if r[6] else None,
                    "hits": int(r[7]), "lookups": int(r[8]), "helper_build": float(r[9]),
                    "helper_check": float(r[10]), "code": int(r[11])}
    print("| app | variant | reps | run 3 (60 s after cold) hits | run 2 hits | run 2 / PoCL warm | "
          "off: run 2 / no cache | cold / no cache | CPU cold + helpers / no cache | off: CPU cold + helpers / no cache | "
          "helpers' CPU s (cold) | failed runs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    med = lambda values: f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})" if values else "–"
    on_stages = {"no_cache", "pocl_warm", "cold", "run2", "run3"}
    for (app, variant), reps in sorted(runs.items()):
        whole = [s for s in reps.values() if on_stages <= s.keys()]
        off = [s for s in whole if len(s) == 8]
        if not whole:
            continue
        fill = [s["run3"]["hits"] for s in whole]
        lookups = whole[0]["run3"]["lookups"]
        run2_hits = [s["run2"]["hits"] for s in whole]
        failed = sum(stage["code"] != 0 for s in whole for stage in s.values())
        print(f"| {app} | {variant} | {len(whole)} | {min(fill)}-{max(fill)} of {lookups} | "
              f"{min(run2_hits)}-{max(run2_hits)} | "
              f"{med([s['run2']['wall'] / s['pocl_warm']['wall'] for s in whole])} | "
              f"{med([s['off_run2']['wall'] / s['off_no_cache']['wall'] for s in off])} | "
              f"{med([s['cold']['wall'] / s['no_cache']['wall'] for s in whole])} | "
              f"{med([s['cold']['cpu_all'] / s['no_cache']['cpu'] for s in whole])} | "
              f"{med([s['off_cold']['cpu_all'] / s['off_no_cache']['cpu'] for s in off])} | "
              f"{rest(whole)} | {failed} |")


def rest(whole):
    """The median CPU of the cold run's helpers (the builds' own trace timings are wall time)."""
    return f"{statistics.median(s['cold']['cpu_all'] - s['cold']['cpu'] for s in whole):.2f}"


if __name__ == "__main__":
    main()
