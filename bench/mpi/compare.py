#!/usr/bin/env python3
"""Run bench/mpi/p2p.c (or, with --prog rma, bench/mpi/rma.c; with --prog mt,
bench/mpi/mt.c) with onic, MPICH and Open MPI, pinned the same way, and
print one table per mode with the three side by side.

    bench/mpi/compare.py [--build build] [--runs 3] [--reps 5] [--modes latency,bw,bibw,rate]
                         [--pairs 1,2] [--threads 1,2] [--prog p2p|rma|mt] [--sweep]
                         [--offset N]

--sweep measures p2p's latency, bandwidth and bi-directional bandwidth
(bibw: both processes send a window to each other at once, as osu_bibw) at
512 B and 1 KiB to 256 KiB in powers of two (the range of the mid-size
protocol and its crossovers) and the message rate at 4 KiB, instead of
each mode's own sizes.

--offset N (p2p) puts the odd ranks' buffer N bytes further into its page
than the even ranks': where a receive lands against where its data comes
from. 16 is a malloc'd buffer against a page-aligned one, the pair for
which rep movsb (glibc's memcpy, the kernel's CMA) is slow on some CPUs
(src/base/copy.h).

rma's modes (2 processes): put_lat, get_lat, put_rate, acc_lat, fop_lat,
acc_busy_lat (all by default with --prog rma).

mt's modes (2 processes, MPI_THREAD_MULTIPLE, each mode once for each
thread count of --threads; thread i of one process paired with thread i
of the other, all pairs at once): latency_mt (each pair ping-pongs on its
own communicator, as osu_latency_mt), rate_mt (each pair streams on its own
communicator: the isolated pairs), rate_mt_world (the pairs share
MPI_COMM_WORLD, a tag each), wake_lat (a message every 1 ms, the time
from its send to its receive's return: how soon a waiting thread that may
sleep sees it) and wait_cpu (a message every 100 ms: the share of a core
the waiting threads use). Bound to cores as below, the threads of a
process share its core.

Each MPI's program is built from the same source with its own compiler
wrapper (build/onicc, mpicc.mpich, mpicc.openmpi) and run as 2 processes
bound to 2 cores (onicrun --bind core, mpirun.mpich -bind-to core,
mpirun.openmpi --bind-to core). The rate mode runs once for each pair
count of --pairs, with 2 x PAIRS processes (rank 2i sends to 2i+1, all
pairs at once; the figure is their aggregate rate): more processes than
cores are bound round-robin, so every pair still spans two cores
(onicrun and mpirun.mpich do so with the same options; mpirun.openmpi
needs --oversubscribe --bind-to core:overload-allowed). The allreduce
and allgather modes (not run by default: --modes allreduce,allgather)
run with 2 x PAIRS processes too, every one calling the collective. Latency and bw always
run 1 pair. Every run prints the median of REPS timed repetitions
per size; the table gives the median over RUNS runs, run interleaved
(onic, MPICH, Open MPI, onic, ...) so drift on a shared machine hits all
three alike. An MPI that is not installed is left out, with a note. The
ratio column compares onic with the better of the others: latency ratio
below 1 and bandwidth or rate ratio above 1 mean onic is ahead."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNITS = {"latency": "one-way us", "bw": "GB/s", "bibw": "GB/s, both ways", "rate": "M msgs/s",
         "allreduce": "us per MPI_Allreduce of doubles, MPI_SUM",
         "allgather": "us per MPI_Allgather, SIZE bytes from each process", "put_lat": "us per put + flush",
         "get_lat": "us per get + flush", "put_rate": "M puts/s, 64 per flush",
         "acc_lat": "us per accumulate + flush", "fop_lat": "us per fetch-and-op + flush",
         "acc_busy_lat": "us per accumulate + flush, target computing 100 ms without MPI calls",
         "latency_mt": "one-way us, mean of the pairs", "rate_mt": "M msgs/s, all pairs",
         "rate_mt_world": "M msgs/s, all pairs",
         "wake_lat": "us from a send to its receive's return, the receiver waiting 1 ms",
         "wait_cpu": "% of a core the waiting threads use, a message every 100 ms"}


def lower_is_better(mode):
    return (mode.startswith("latency") or mode.endswith("_lat") or mode == "wait_cpu" or
            mode in ("allreduce", "allgather"))


def mpis(build):
    """(name, compiler, launcher for NP processes, environment) of each MPI."""
    onicrun = os.path.join(build, "onicrun")
    env_ompi = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cores = os.cpu_count() or 1

    def ompi(np):
        # Open MPI refuses more processes than cores, and binding two to one
        # core, unless told both are meant.
        if np > cores:
            return ["mpirun.openmpi", "-n", str(np), "--oversubscribe",
                    "--bind-to", "core:overload-allowed"]
        return ["mpirun.openmpi", "-n", str(np), "--bind-to", "core"]

    return [
        ("onic", [os.path.join(build, "onicc")],
         lambda np: [onicrun, "-n", str(np), "--bind", "core"], None),
        ("MPICH", ["mpicc.mpich"], lambda np: ["mpirun.mpich", "-n", str(np), "-bind-to", "core"],
         None),
        ("Open MPI", ["mpicc.openmpi"], ompi, env_ompi),
    ]


def build_all(build, prog):
    src = os.path.join(ROOT, "bench", "mpi", prog + ".c")
    out = os.path.join(build, "bench-mpi")
    os.makedirs(out, exist_ok=True)
    ready = []
    for name, cc, run, env in mpis(build):
        if shutil.which(cc[0]) is None and not os.path.exists(cc[0]):
            print(f"note: {name} left out: {cc[0]} not found", file=sys.stderr)
            continue
        exe = os.path.join(out, prog + "-" + name.replace(" ", "").lower())
        flags = ["-pthread"] if prog == "mt" else []
        r = subprocess.run(cc + ["-O2"] + flags + ["-o", exe, src], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"note: {name} left out: building failed:\n{r.stderr}", file=sys.stderr)
            continue
        ready.append((name, run, env, exe))
    return ready


SWEEP = [512] + [1024 << k for k in range(9)]  # 512 B, 1 KiB ... 256 KiB
SWEEP_SIZES = {"latency": SWEEP, "bw": SWEEP, "bibw": SWEEP, "rate": [4096]}


def run_one(run, env, exe, mode, reps, np, sizes=None, threads=None, offset=0):
    extra = [str(threads)] if threads else []
    extra += [",".join(str(s) for s in sizes)] if sizes else (["-"] if offset else [])
    extra += [str(offset)] if offset else []
    r = subprocess.run(run(np) + [exe, mode, str(reps)] + extra, capture_output=True, text=True,
                       env=env, timeout=900)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(run(np))} {exe} {mode} failed:\n{r.stdout}{r.stderr}")
    res = {}
    for line in r.stdout.splitlines():
        f = line.split(",")
        if len(f) == 5 and f[0] == mode:
            res[int(f[1])] = float(f[2])
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--modes", default=None,
                    help="default: latency,bw,bibw,rate (p2p); every mode (rma)")
    ap.add_argument("--prog", default="p2p", choices=["p2p", "rma", "mt"])
    ap.add_argument("--sweep", action="store_true",
                    help="p2p: latency, bw and bibw from 512 B to 256 KiB, rate at 4 KiB")
    ap.add_argument("--pairs", default="1,2",
                    help="pair counts for the rate, allreduce and allgather modes, 2 processes a pair (default 1,2)")
    ap.add_argument("--offset", type=int, default=0,
                    help="p2p: the odd ranks' buffer that many bytes further into its page "
                         "(0 to 4095; 16 is a malloc'd buffer against a page-aligned one)")
    ap.add_argument("--threads", default="1,2",
                    help="mt: threads per process, one run of each mode per count (default 1,2)")
    args = ap.parse_args()
    try:
        threads = [int(t) for t in args.threads.split(",")]
    except ValueError:
        threads = []
    if not threads or min(threads) < 1 or max(threads) > 16:
        ap.error("--threads takes integers from 1 to 16, e.g. 1,2")
    try:
        pairs = [int(p) for p in args.pairs.split(",")]
    except ValueError:
        pairs = []
    if not pairs or min(pairs) < 1:
        ap.error("--pairs takes positive integers, e.g. 1,2")
    if args.offset and (args.prog != "p2p" or not 0 < args.offset < 4096):
        ap.error("--offset takes 0 to 4095, with --prog p2p")
    if args.modes is None:
        args.modes = {"p2p": "latency,bw,bibw,rate",
                      "mt": "latency_mt,rate_mt,rate_mt_world,wake_lat,wait_cpu",
                      "rma": "put_lat,get_lat,put_rate,acc_lat,fop_lat,acc_busy_lat"}[args.prog]
    ready = build_all(args.build, args.prog)
    if not ready:
        sys.exit("nothing to run")
    cases = [(mode, p) for mode in args.modes.split(",")
             for p in (pairs if mode in ("rate", "allreduce", "allgather")
                       else threads if args.prog == "mt"
                       else [1])]
    for mode, npairs in cases:
        nthreads = npairs if args.prog == "mt" else None
        samples = {name: {} for name, _, _, _ in ready}
        for _ in range(args.runs):
            for name, run, env, exe in ready:
                sizes = SWEEP_SIZES.get(mode) if args.sweep and args.prog == "p2p" else None
                np = 2 if nthreads else 2 * npairs
                for size, v in run_one(run, env, exe, mode, args.reps, np, sizes,
                                       nthreads, args.offset).items():
                    samples[name].setdefault(size, []).append(v)
        names = [n for n, _, _, _ in ready]
        what = f"{npairs} pair{'s' if npairs > 1 else ''}, {2 * npairs} processes on " \
               f"{os.cpu_count()} cores"
        if mode in ("allreduce", "allgather"):
            what = f"{2 * npairs} processes on {os.cpu_count()} cores"
        if nthreads:
            what = f"2 processes x {nthreads} thread{'s' if nthreads > 1 else ''} on " \
                   f"{os.cpu_count()} cores"
        if args.offset:
            what += f", odd ranks' buffer {args.offset} bytes further into its page"
        print(f"\n### {mode}, {what} ({UNITS[mode]}), median of {args.runs} runs x "
              f"{args.reps} repetitions\n")
        print("| bytes | " + " | ".join(names) + " | onic vs best other |")
        print("|---:|" + "---:|" * len(names) + "---:|")
        sizes = sorted(samples[names[0]])
        for size in sizes:
            med = {n: statistics.median(samples[n][size]) for n in names if size in samples[n]}
            others = [v for n, v in med.items() if n != "onic"]
            ratio = ""
            if "onic" in med and others:
                best = min(others) if lower_is_better(mode) else max(others)
                ratio = f"{med['onic'] / best:.2f}x"
            cells = [f"{med[n]:.3f}" if n in med else "-" for n in names]
            print(f"| {size} | " + " | ".join(cells) + f" | {ratio} |")


if __name__ == "__main__":
    main()
