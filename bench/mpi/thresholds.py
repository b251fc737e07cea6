#!/usr/bin/env python3
"""Measure onic's protocol crossovers on this machine and print the ONIC_*
settings they suggest.

    bench/mpi/thresholds.py [--build build] [--runs 3] [--reps 5] [--sizes 512,1024,...]

Runs bench/mpi/p2p.c (built with onicc) as 2 processes bound to 2 cores,
ping-pong latency and streaming bandwidth at each size, with onic set up
each of these ways, interleaved in every run so drift on a shared machine
hits all alike:

  lane       every message eager through the shm lane, in fragments above
             2 KiB (ONIC_EAGER_LIMIT and ONIC_SHM_MID_MAX at their largest)
  rndv-cma   every message by rendezvous, the receiver pulling it by
             cross-memory attach (ONIC_EAGER_LIMIT=0, ONIC_SHM_RMA=cma)
  rndv-copy  every message by rendezvous through the bounce buffers, no
             system call (ONIC_EAGER_LIMIT=0, ONIC_SHM_RMA=copy)

It prints the medians side by side, then the crossovers: the eager limit
(and the lane's mid-size limit) is the largest size up to which the lane's
latency is no worse than the better rendezvous, and ONIC_SHM_CMA_MIN the
smallest size from which cma's rendezvous is no slower than the copy's
(bandwidth decides there: the copy needs the owner to poll). Every size
the lane wins must also be every smaller one; a size it loses ends the
eager range."""
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
    ("lane", {"ONIC_EAGER_LIMIT": str(TOP), "ONIC_SHM_MID_MAX": str(TOP)}),
    ("rndv-cma", {"ONIC_EAGER_LIMIT": "0", "ONIC_SHM_RMA": "cma"}),
    ("rndv-copy", {"ONIC_EAGER_LIMIT": "0", "ONIC_SHM_RMA": "copy"}),
]


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
    for mode in ("latency", "bw"):
        samples = {name: {} for name, _ in SETUPS}
        for k in range(args.runs):
            order = SETUPS[k % len(SETUPS):] + SETUPS[:k % len(SETUPS)]
            for name, env in order:
                for size, v in run(args.build, exe, mode, args.reps, sizes, env).items():
                    samples[name].setdefault(size, []).append(v)
        med[mode] = {name: {s: statistics.median(v) for s, v in samples[name].items()}
                     for name, _ in SETUPS}
    names = [n for n, _ in SETUPS]
    for mode, unit in (("latency", "one-way us"), ("bw", "GB/s")):
        print(f"\n### {mode} ({unit}), median of {args.runs} runs x {args.reps} repetitions\n")
        print("| bytes | " + " | ".join(names) + " |")
        print("|---:|" + "---:|" * len(names))
        for s in sizes:
            print(f"| {s} | " + " | ".join(f"{med[mode][n][s]:.3f}" for n in names) + " |")
    lat = med["latency"]
    eager = 0
    for s in sizes:
        if lat["lane"][s] <= min(lat["rndv-cma"][s], lat["rndv-copy"][s]):
            eager = s
        else:
            break
    bw = med["bw"]
    cma_min = None
    for s in sizes:
        if bw["rndv-cma"][s] >= bw["rndv-copy"][s] and lat["rndv-cma"][s] <= lat["rndv-copy"][s]:
            cma_min = s
            break
    print("\n### crossovers on this machine\n")
    print(f"the lane wins up to {eager} bytes; rendezvous by cma beats the copy from "
          f"{cma_min if cma_min is not None else 'no size measured'}")
    print("\nsettings:")
    print(f"ONIC_EAGER_LIMIT={eager}")
    print(f"ONIC_SHM_MID_MAX={max(eager, 2048)}")
    print(f"ONIC_SHM_CMA_MIN={cma_min if cma_min is not None else sizes[-1] * 2}")


if __name__ == "__main__":
    main()
