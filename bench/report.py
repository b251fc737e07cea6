#!/usr/bin/env python3
"""Run onic-bench-match several times and report the median of the runs.

Each run of onic-bench-match already reports, per cell, the median of its
repetitions; on a shared, noisy machine the runs themselves still differ, so
this script runs it N times (--csv) and prints, per scenario and wildcard mix,
a Markdown table of the median ns per operation, entries inspected and the
ratio to the list engine measured in the same run.

    python3 bench/report.py [--runs 3] [--bench build/onic-bench-match] [-- BENCH ARGS]
"""
import argparse
import csv
import io
import statistics
import subprocess
import sys


def run_once(bench, extra):
    out = subprocess.run([bench, "--csv", *extra], check=True, capture_output=True, text=True)
    return list(csv.DictReader(io.StringIO(out.stdout)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs of the benchmark (default 3)")
    ap.add_argument("--bench", default="build/onic-bench-match", help="path to onic-bench-match")
    ap.add_argument("extra", nargs="*", help="arguments for onic-bench-match, after --")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")

    cells = {}  # (scenario, mix, depth, engine) -> [(ns, inspected, speedup), ...]
    order = []
    for i in range(args.runs):
        print(f"run {i + 1} of {args.runs}...", file=sys.stderr)
        for r in run_once(args.bench, args.extra):
            key = (r["scenario"], r["mix"], int(r["depth"]), r["engine"])
            if key not in cells:
                cells[key] = []
                order.append(key)
            cells[key].append((float(r["ns_median"]), float(r["inspected_mean"]),
                               float(r["speedup_vs_list"])))

    engines = list(dict.fromkeys(k[3] for k in order))
    tables = list(dict.fromkeys((k[0], k[1]) for k in order))
    print(f"Median of {args.runs} runs of onic-bench-match; ns per operation (entries "
          f"inspected); x list = list's time / the engine's, in the same run.")
    for scenario, mix in tables:
        print(f"\n{scenario} queue, {mix}\n")
        head = ["depth"] + [f"{e} ns (insp)" if e == "list" else f"{e} ns (insp) | x list"
                            for e in engines]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * (1 + len(engines) + sum(e != "list" for e in engines)))
        depths = sorted({k[2] for k in order if k[0] == scenario and k[1] == mix})
        for d in depths:
            row = [str(d)]
            for e in engines:
                v = cells[(scenario, mix, d, e)]
                ns = statistics.median(x[0] for x in v)
                insp = statistics.median(x[1] for x in v)
                sp = statistics.median(x[2] for x in v)
                row.append(f"{ns:.1f} ({insp:.1f})" if e == "list"
                           else f"{ns:.1f} ({insp:.1f}) | {sp:.1f}")
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
