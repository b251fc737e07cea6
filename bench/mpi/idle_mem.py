#!/usr/bin/env python3
"""The memory an idle job sets aside for messages, per process, for onic,
MPICH and Open MPI, as a Markdown table.

    bench/mpi/idle_mem.py [--build build] [--procs 2,4,64] [--json FILE]

bench/mpi/idle_mem.c is built with each MPI's compiler wrapper and run once
for each process count (launched as compare.py launches its programs; more
processes than cores are fine: the program only starts, synchronises and
reads /proc). Per process, in MB (10^6 bytes):

  mapped    the job's shared-memory objects, each counted once: what the
            MPI reserved for messages between its processes, touched or not
  resident  the pages of those objects actually in memory (the processes'
            Pss summed)
  private   each process's resident private memory after MPI_Init (the
            library's heap and whatever else it touched), for scale

The counts do not drift from run to run; one run is enough. An MPI that is
not installed or does not build is left out, with a note."""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (its builders and launchers)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(launch, env, exe, np):
    r = subprocess.run(launch(np) + [exe], capture_output=True, text=True, env=env, timeout=600)
    for line in r.stdout.splitlines():
        f = line.split(",")
        if len(f) == 6 and f[0] == "idle_mem" and r.returncode == 0:
            return {"mapped": float(f[2]), "resident": float(f[3]), "private": float(f[4]),
                    "objects": int(f[5])}
    raise RuntimeError(f"{' '.join(launch(np))} {exe} failed (exit {r.returncode}):\n"
                       f"{r.stdout}{r.stderr}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--procs", default="2,4,64")
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    procs = [int(p) for p in a.procs.split(",")]
    ready = compare.build_all(build, "idle_mem")
    if not ready:
        sys.exit("idle_mem.py: no MPI could build bench/mpi/idle_mem.c")
    res, failed = {}, 0
    for name, launch, env, exe in ready:
        for np in procs:
            try:
                res[(name, np)] = run(launch, env, exe, np)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"note: {name} with {np} processes: {e}", file=sys.stderr)
                failed = 1
    names = [n for n, _, _, _ in ready]
    print("\n### Memory an idle job sets aside for messages (MB per process)\n")
    print("| processes | " + " | ".join(f"{n} mapped | {n} resident" for n in names) +
          " | " + " | ".join(f"{n} private" for n in names) + " |")
    print("|---:|" + "---:|" * (3 * len(names)))
    for np in procs:
        cells = []
        for n in names:
            r = res.get((n, np))
            cells += [f"{r['mapped'] / 1e6:.2f}", f"{r['resident'] / 1e6:.2f}"] if r else ["-", "-"]
        for n in names:
            r = res.get((n, np))
            cells.append(f"{r['private'] / 1e6:.2f}" if r else "-")
        print(f"| {np} | " + " | ".join(cells) + " |")
    print("\nmapped: the job's shared-memory objects, each once, divided by its processes; "
          "resident: their pages in memory (Pss summed); private: resident private memory "
          "after MPI_Init. bench/mpi/idle_mem.c.")
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{"mpi": n, "procs": np, **r} for (n, np), r in sorted(res.items())], f,
                      indent=1)
    sys.exit(failed)


if __name__ == "__main__":
    main()
