#!/usr/bin/env python3
"""Start-up wall time: an MPI program that only starts and ends
(bench/startup/hello.c: MPI_Init, MPI_Comm_rank, MPI_Finalize) run alone and
through each MPI's launcher, onic against MPICH and Open MPI.

    bench/startup/startup.py [--build build] [--runs 11] [--ranks 1,2,4,16]
                             [--mpis onic,mpich,openmpi] [--json FILE]
                             [--onic-also LABEL=DIR ...]

hello.c is built with each MPI's compiler wrapper (BUILD/onicc,
mpicc.mpich, mpicc.openmpi; --build may also be an installed prefix's bin
directory, which holds onicc and onicrun). Each run times, from fork to
exit, `./hello` alone (the MPI's singleton start) and `LAUNCHER -n N ./hello`
for every N of --ranks: onicrun -n N, mpirun.mpich -n N, and
mpirun.openmpi -n N --oversubscribe (with --allow-run-as-root as root),
each with its defaults otherwise. Every run goes through all of them, in
an order rotated from run to run so that drift on a shared machine hits
all alike; the table gives the median over the runs, with the fastest and
slowest. The load average is printed before and after: on a machine shared
with other work these are wall times, and more ranks than cores means
the ranks take turns. An MPI that is not installed or does not build is
left out, with a note; a failed run is reported and left out of the
median. --onic-also adds another onic (DIR holds its onicc and onicrun, e.g.
an install of another commit) as a column of its own, interleaved with the
rest: before and after a change, measured alike. Not a test: nothing here
has a threshold."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "bench", "startup", "hello.c")
OMPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
NAMES = {"onic": "onic", "mpich": "MPICH", "openmpi": "Open MPI"}


def mpis(build):
    """key -> (compiler, launcher command before -n, extra after -n N, environment)."""
    root_opts = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    return {
        "onic": (os.path.join(build, "onicc"), [os.path.join(build, "onicrun")], [], {}),
        "mpich": ("mpicc.mpich", ["mpirun.mpich"], [], {}),
        "openmpi": ("mpicc.openmpi", ["mpirun.openmpi"] + root_opts, ["--oversubscribe"],
                    OMPI_ENV),
    }


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def found(tool):
    return shutil.which(tool) is not None or os.access(tool, os.X_OK)


def build_hello(key, cc, env, outdir):
    """The path of hello built with cc, or (None, why not)."""
    d = os.path.join(outdir, key)
    os.makedirs(d, exist_ok=True)
    exe = os.path.join(d, "hello")
    r = subprocess.run([cc, "-O2", "-o", exe, SRC], capture_output=True, text=True,
                       env=dict(os.environ, **env))
    if r.returncode != 0:
        return None, f"building hello.c failed: {(r.stderr or r.stdout).strip()[-300:]}"
    return exe, None


def timed(cmd, env, timeout):
    """Wall seconds of one run, or (None, why it failed)."""
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, **env))
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        return None, f"exit {r.returncode}: {(r.stderr or r.stdout).strip()[-300:]}"
    return dt, None


def fmt(x):
    return "-" if x is None else f"{x:.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="where onicc and onicrun are (a build tree or PREFIX/bin)")
    ap.add_argument("--runs", type=int, default=11, help="runs of every row (default 11)")
    ap.add_argument("--ranks", default="1,2,4,16", help="processes for the launcher rows")
    ap.add_argument("--mpis", default="onic,mpich,openmpi")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per run")
    ap.add_argument("--json", help="also write the table to this file (for bench/suite.py)")
    ap.add_argument("--onic-also", action="append", default=[], metavar="LABEL=DIR",
                    help="another onic to measure, from DIR (onicc, onicrun), as column LABEL")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    ranks = [int(n) for n in args.ranks.split(",") if n]
    table = mpis(build)
    keys = [k for k in args.mpis.split(",") if k in table]
    for spec in args.onic_also:
        label, _, d = spec.partition("=")
        if not label or not d:
            ap.error("--onic-also takes LABEL=DIR")
        d = os.path.abspath(d)
        table["onic@" + label] = (os.path.join(d, "onicc"), [os.path.join(d, "onicrun")], [], {})
        NAMES["onic@" + label] = f"onic {label}"
        keys.insert(keys.index("onic") + 1 if "onic" in keys else 0, "onic@" + label)
    notes, exes = [], {}
    outdir = os.path.join(build if os.path.isdir(os.path.join(build, "CMakeFiles")) else
                          "/tmp", "bench-startup")
    for k in keys:
        cc, run, _, env = table[k]
        if not found(cc) or not found(run[0]):
            notes.append(f"{NAMES[k]}: not installed ({cc} or {run[0]} not found); left out.")
            continue
        exe, why = build_hello(k, cc, env, outdir)
        if exe is None:
            notes.append(f"{NAMES[k]}: {why}; left out.")
            continue
        exes[k] = exe
    keys = [k for k in keys if k in exes]
    if not keys:
        sys.exit("startup: no MPI to measure")

    rows = [("./hello", 0)] + [(f"launcher -n {n} ./hello", n) for n in ranks]
    cases = [(r, k) for r in range(len(rows)) for k in keys]
    times = {c: [] for c in cases}
    fails = {}
    load_start = open("/proc/loadavg").read().strip()
    log(f"startup: {args.runs} runs of {len(cases)} cases; load average {load_start}")
    for rep in range(args.runs):
        k0 = rep % len(cases)
        for ri, k in cases[k0:] + cases[:k0]:
            cc, run, extra, env = table[k]
            n = rows[ri][1]
            cmd = [exes[k]] if n == 0 else run + ["-n", str(n)] + extra + [exes[k]]
            dt, why = timed(cmd, env, args.timeout)
            if dt is None:
                fails.setdefault((ri, k), why)
            else:
                times[(ri, k)].append(dt)
        log(f"startup: run {rep + 1}/{args.runs} done")
    load_end = open("/proc/loadavg").read().strip()

    head = ["what (wall s: median [fastest, slowest])"] + [NAMES[k] for k in keys]
    others = [k for k in keys if not k.startswith("onic")]
    if "onic" in keys and others:
        head.append("onic / best other")
    out_rows = []
    for ri, (label, n) in enumerate(rows):
        row = [label.replace("launcher", "onicrun / mpirun") if n else label]
        med = {}
        for k in keys:
            t = times[(ri, k)]
            if t:
                med[k] = statistics.median(t)
                row.append(f"{med[k]:.3f} [{min(t):.3f}, {max(t):.3f}]")
            else:
                row.append("failed")
        if len(head) > len(keys) + 1:
            best = min((med[k] for k in others if k in med), default=None)
            row.append(f"{med['onic'] / best:.2f}x" if "onic" in med and best else "-")
        out_rows.append(row)
    for (ri, k), why in sorted(fails.items()):
        notes.append(f"{NAMES[k]}, {rows[ri][0]}: a run failed ({len(times[(ri, k)])} of "
                     f"{args.runs} succeeded): {why}")
    title = (f"Start-up wall time, seconds: median of {args.runs} interleaved runs, fastest "
             f"and slowest in brackets; {os.cpu_count()} CPUs, load average {load_start} "
             f"before, {load_end} after.")
    print(title + "\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in out_rows:
        print("| " + " | ".join(row) + " |")
    for n in notes:
        print(f"\n{n}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"table": {"title": title, "head": head, "rows": out_rows, "notes": notes},
                       "medians": {f"{rows[ri][0]}|{k}": statistics.median(t)
                                   for (ri, k), t in times.items() if t}}, f, indent=1)
    return 1 if any(k.startswith("onic") for _, k in fails) else 0


if __name__ == "__main__":
    sys.exit(main())
