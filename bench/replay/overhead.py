#!/usr/bin/env python3
"""What ONIC_TRACE costs: the message-rate benchmark (bench/rate/rate.c,
2 processes pinned to cores) with tracing off and on, interleaved, RUNS
times each; the medians and their ratio, and the median and quartiles of
the runs' own ratios (their spread is the machine's noise). The machine is
noisy: quote the ratio, not the rates; on a loaded machine use many runs
(docs/replay.md: --runs 61 --iters 2000).

    bench/replay/overhead.py [--build build] [--runs 7] [--sizes 8] [--iters 500]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rate(build, exe, sizes, iters, env):
    cmd = [os.path.join(build, "onicrun"), "-n", "2", "--bind", "core", "--timeout", "300",
           exe, "--sizes", sizes, "--iters", str(iters), "--reps", "5"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    vals = {}
    for line in out.splitlines():
        f = line.split(",")
        if f[0] == "rate":
            vals[int(f[2])] = float(f[4])   # median of the reps, M messages/s
    return vals


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--sizes", default="8")
    ap.add_argument("--iters", type=int, default=500)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="onic-overhead-")
    exe = os.path.join(tmp, "rate")
    subprocess.run([os.path.join(args.build, "onicc"), "-O2", os.path.join(ROOT, "bench/rate/rate.c"),
                    "-o", exe], check=True)
    base = {k: v for k, v in os.environ.items() if k != "ONIC_TRACE"}
    res = {"off": [], "on": []}
    tracedir = os.path.join(tmp, "traces")
    trace_bytes = []
    for r in range(args.runs):
        for mode in (("off", "on") if r % 2 == 0 else ("on", "off")):
            env = dict(base)
            if mode == "on":
                os.makedirs(tracedir, exist_ok=True)
                env["ONIC_TRACE"] = tracedir
            res[mode].append(rate(args.build, exe, args.sizes, args.iters, env))
            if mode == "on":
                trace_bytes.append(sum(os.path.getsize(os.path.join(tracedir, f))
                                       for f in os.listdir(tracedir)))
                shutil.rmtree(tracedir)
    shutil.rmtree(tmp)
    print("message rate, 1 pair, %d runs interleaved (median of each run's 5 reps)" % args.runs)
    print("%6s %14s %14s %10s %s" % ("size", "off M msg/s", "on M msg/s", "on/off", "per-run ratios"))
    for size in sorted(res["off"][0]):
        off = [v[size] for v in res["off"]]
        on = [v[size] for v in res["on"]]
        ratios = [b / a for a, b in zip(off, on)]
        print("%6d %14.3f %14.3f %10.3f %s" % (size, statistics.median(off), statistics.median(on),
              statistics.median(on) / statistics.median(off),
              " ".join("%.3f" % x for x in ratios)))
        if len(ratios) >= 4:
            q = statistics.quantiles(ratios, n=4)
            print("%6s the runs' ratios: median %.3f, quartiles %.3f %.3f" %
                  ("", statistics.median(ratios), q[0], q[2]))
    print("trace written per traced run: %.1f MB (both ranks)" % (statistics.median(trace_bytes) / 1e6))


if __name__ == "__main__":
    sys.exit(main())
