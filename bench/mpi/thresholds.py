#!/usr/bin/env python3
"""Measure onic's protocol crossovers on this machine and print the ONIC_*
settings they suggest.

    bench/mpi/thresholds.py [--build build] [--runs 3] [--reps 5] [--sizes 512,1024,...]

Runs bench/mpi/p2p.c (built with onicc) as 2 processes bound to 2 cores,
ping-pong latency and streaming bandwidth at each size, with onic set up
each of these ways, interleaved in every run so drift on a shared machine
hits all alike (and bi-directional bandwidth with lane and pulled):

  defaults   onic as configured now (this environment's ONIC_* or the
             defaults): what compare.py measures, to check the suggestions
             against in the same run
  lane       every message eager through the shm lane, in fragments above
             8 KiB (ONIC_EAGER_LIMIT and ONIC_SHM_MID_MAX at their largest,
             credit for p2p's whole window of 64: ONIC_EAGER_CREDITS, and
             no pull: ONIC_EAGER_PULL_MIN=0)
  pulled     the same, but a message whose sender has a receive posted
             goes by rendezvous, pulled by its receiver
             (ONIC_EAGER_PULL_MIN=1): bibw only, where each process has
             its window of receives posted as it sends
  rndv-lane  every message by rendezvous, its data through the lane: the
             put whole, or a pull's reply (ONIC_EAGER_LIMIT=0,
             ONIC_SHM_MID_MAX at its largest)
  rndv-cma   every message by rendezvous, its data above 2 KiB pulled by
             cross-memory attach (ONIC_EAGER_LIMIT=0, ONIC_SHM_MID_MAX=0,
             ONIC_SHM_RMA=cma)
  rndv-copy  the same through the bounce buffers, no system call
             (ONIC_SHM_RMA=copy)

Each setup must take the protocol it names at every size: without the
credit a stream of 64 falls back to rendezvous after 128 KiB, and with
ONIC_SHM_MID_MAX above the size a rendezvous moves its data through the
lane, not by RMA.

It prints the medians side by side, then the crossovers, each the largest
size up to which the smaller protocol keeps winning (a size it loses ends
its range): the eager limit, up to which the lane's latency is no worse
than the better rendezvous; the mid-size limit, up to which rendezvous
through the lane is no worse than the better RMA in latency and bandwidth
alike (no smaller than the eager limit, which it must carry); and
ONIC_SHM_CMA_MIN, the smallest size from which cma's rendezvous is no
slower than the copy's in both; and ONIC_EAGER_PULL_MIN, one byte past
the largest size at which the lane's bibw beats the pulled one (0: it
wins at every size, never pull)."""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (its runner: the same launch and parsing)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOP = 262144
SETUPS = [
    ("defaults", {}),
    ("lane", {"ONIC_EAGER_LIMIT": str(TOP), "ONIC_SHM_MID_MAX": str(TOP),
              # credit for p2p's window of 64 messages of TOP bytes, in 2 KiB units
              "ONIC_EAGER_CREDITS": str(64 * TOP // 2048), "ONIC_EAGER_PULL_MIN": "0"}),
    ("rndv-lane", {"ONIC_EAGER_LIMIT": "0", "ONIC_SHM_MID_MAX": str(TOP)}),
    ("rndv-cma", {"ONIC_EAGER_LIMIT": "0", "ONIC_SHM_MID_MAX": "0", "ONIC_SHM_RMA": "cma"}),
    ("rndv-copy", {"ONIC_EAGER_LIMIT": "0", "ONIC_SHM_MID_MAX": "0", "ONIC_SHM_RMA": "copy"}),
]
PULLED = ("pulled", dict(SETUPS[1][1], ONIC_EAGER_PULL_MIN="1"))


def run(build, exe, mode, reps, sizes, extra_env):
    """One onic run of p2p (compare.py's runner) with extra_env set."""
    return compare.run_one(lambda np: [os.path.join(build, "onicrun"), "-n", str(np), "--bind",
                                       "core"],
                           dict(os.environ, **extra_env), exe, mode, reps, 2, sizes)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sizes", default=",".join(str(512 << k) for k in range(10)),
                    help="byte counts, at most %d (default 512 B to 256 KiB)" % TOP)
    args = ap.parse_args()
    try:
        sizes = sorted(int(s) for s in args.sizes.split(","))
    except ValueError:
        sizes = []
    if not sizes or sizes[0] < 1 or sizes[-1] > TOP or args.runs < 1:
        ap.error(f"--sizes takes byte counts from 1 to {TOP}; --runs at least 1")
    out = os.path.join(args.build, "bench-mpi")
    os.makedirs(out, exist_ok=True)
    exe = os.path.join(out, "p2p-onic")
    r = subprocess.run([os.path.join(args.build, "onicc"), "-O2", "-o", exe,
                        os.path.join(ROOT, "bench", "mpi", "p2p.c")], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"building p2p with onicc failed:\n{r.stderr}")
    med = {}
    for mode, setups in (("latency", SETUPS), ("bw", SETUPS), ("bibw", [SETUPS[1], PULLED])):
        samples = {name: {} for name, _ in setups}
        for k in range(args.runs):
            order = setups[k % len(setups):] + setups[:k % len(setups)]
            for name, env in order:
                for size, v in run(args.build, exe, mode, args.reps, sizes, env).items():
                    samples[name].setdefault(size, []).append(v)
        med[mode] = {name: {s: statistics.median(v) for s, v in samples[name].items()}
                     for name, _ in setups}
    for mode, unit in (("latency", "one-way us"), ("bw", "GB/s"), ("bibw", "GB/s")):
        names = list(med[mode])
        print(f"\n### {mode} ({unit}), median of {args.runs} runs x {args.reps} repetitions\n")
        print("| bytes | " + " | ".join(names) + " |")
        print("|---:|" + "---:|" * len(names))
        for s in sizes:
            print(f"| {s} | " + " | ".join(f"{med[mode][n][s]:.3f}" for n in names) + " |")
    lat, bw = med["latency"], med["bw"]
    rma = ("rndv-cma", "rndv-copy")

    def best_rma(m, s, lower):
        vals = [m[n][s] for n in rma]
        return min(vals) if lower else max(vals)

    eager = 0
    for s in sizes:
        if lat["lane"][s] > best_rma(lat, s, True) or lat["lane"][s] > lat["rndv-lane"][s]:
            break
        eager = s
    mid = 0
    for s in sizes:
        if lat["rndv-lane"][s] > best_rma(lat, s, True) or bw["rndv-lane"][s] < best_rma(bw, s,
                                                                                          False):
            break
        mid = s
    cma_min = None
    for s in sizes:
        if bw["rndv-cma"][s] >= bw["rndv-copy"][s] and lat["rndv-cma"][s] <= lat["rndv-copy"][s]:
            cma_min = s
            break
    bibw = med["bibw"]
    lane_wins = [s for s in sizes if bibw["lane"][s] >= bibw["pulled"][s]]
    pull_min = 0 if len(lane_wins) == len(sizes) else (max(lane_wins) + 1 if lane_wins else 1)
    print("\n### crossovers on this machine\n")
    print(f"the lane wins eagerly up to {eager} bytes and by rendezvous up to {mid}; "
          f"rendezvous by cma beats the copy from "
          f"{cma_min if cma_min is not None else 'no size measured'}; both ways at once, "
          f"the lane's bibw wins last at "
          f"{max(lane_wins) if lane_wins else 'no size measured'} bytes")
    print("\nsettings:")
    print(f"ONIC_EAGER_LIMIT={eager}")
    print(f"ONIC_SHM_MID_MAX={max(eager, mid, 8192)}")  # at least a frame
    print(f"ONIC_SHM_CMA_MIN={cma_min if cma_min is not None else sizes[-1] * 2}")
    print(f"ONIC_EAGER_PULL_MIN={pull_min}")


if __name__ == "__main__":
    main()
