#!/usr/bin/env python3
"""The papers' benchmarks as one suite: onic against MPICH and Open MPI.

    bench/suite.py [--quick] [--build build] [--out results] [--runs N] [--only GROUPS]
                   [--xport-csv FILE]

Builds every plain-MPI program of the suite (bench/queue, bench/rate,
bench/overlap, bench/apps, bench/mpi/p2p.c, rma.c, mt.c and isend_local.c;
the last two run in the full suite only) with each MPI found (build/onicc,
mpicc.mpich, mpicc.openmpi), runs them pinned the same way (onicrun --bind
core, mpirun.mpich -bind-to core, mpirun.openmpi --bind-to core), RUNS times
with the MPIs interleaved inside every repetition so that drift on a shared
machine hits all alike, and writes results/<YYYY-MM-DD-HHMMSS>/ with
raw.csv (every line every program printed), summary.csv (median of the runs
and their spread), machine.txt, the floors of onic-bench-xport and
onic-bench-match, PNG plots and report.html with the summary table. The
summary table is printed at the end, with the report's path.
bench/mpi/instr.py runs once (quick too): the instructions of the MPI calls
of an 8-byte message under valgrind's callgrind, instr.md and instr.json.
bench/startup/startup.py too: start-up wall time of a program that only
starts and ends, alone and through each launcher with 1, 2, 4 and 16
processes, startup.md and startup.json. bench/replay/programs.py too: real
programs traced (ONIC_TRACE) and replayed through the papers' NIC models,
their queue-depth histograms and what each model costs against the NIC
processor's list walk, replay.md and replay.json (quick: the application
kernels and the OSU-style programs; full: also the queue benchmarks and the
MPI test programs).

--quick (make demo) runs fewer points and fewer runs: a few minutes. The
full suite (make bench) takes tens of minutes on 2 cores.

onic runs in each variant listed in ONIC_VARIANTS: a variant whose onicrun
option this onicrun does not offer is reported as not available yet. MPICH
or Open MPI missing: the report says so and shows the others. Every figure
comes from this invocation's runs; nothing is kept from earlier ones.
"""
import argparse
import csv
import datetime
import html
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# --------------------------------------------------------------------------
# What runs: MPIs, onic's variants, programs and jobs.

OMPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


class Mpi:
    """One MPI library: how to compile and how to launch."""

    def __init__(self, key, name, cc, run, bind, oversub=(), env=None, version=None):
        self.key, self.name, self.cc, self.run, self.bind = key, name, cc, run, bind
        self.oversub, self.env, self.version = list(oversub), env or {}, version
        self.missing = None  # why it cannot be used, or None

    def launch(self, np, extra, cores):
        cmd = [self.run] + extra + ["-n", str(np)]
        if np > cores and self.oversub:
            return cmd + self.oversub
        return cmd + self.bind


def mpis(build):
    return [
        Mpi("onic", "onic", os.path.join(build, "onicc"), os.path.join(build, "onicrun"),
            ["--bind", "core", "--timeout", "600"]),
        Mpi("mpich", "MPICH", "mpicc.mpich", "mpirun.mpich", ["-bind-to", "core"]),
        Mpi("openmpi", "Open MPI", "mpicc.openmpi", "mpirun.openmpi", ["--bind-to", "core"],
            oversub=["--oversubscribe", "--bind-to", "core:overload-allowed"], env=OMPI_ENV),
    ]


class Variant:
    """A way of running one MPI: onic with an engine or a launcher option."""

    def __init__(self, name, mpi, groups, extra=(), env=None, needs=None, note="",
                 quick_groups=None):
        self.name, self.mpi, self.groups = name, mpi, set(groups)
        self.quick_groups = set(quick_groups) if quick_groups is not None else self.groups
        self.extra, self.env, self.needs, self.note = list(extra), env or {}, needs, note
        self.missing = None


ALL = {"p2p", "rma", "tiny", "queue", "rate", "overlap", "apps", "mt", "local"}
# onic's variants. Adding one is one line; a variant that `needs` an onicrun
# option runs once onicrun offers it (onicrun --help), and until then the
# report says it is not available yet.
ONIC_VARIANTS = [
    Variant("onic", "onic", ALL, note="default engine (hash), progress inline"),
    Variant("onic list", "onic", {"queue"}, env={"ONIC_MATCH": "list"},
            note="the list engine: what the default engine buys"),
    # The engine is a third busy process for two ranks: on a machine with
    # fewer than 3 cores the queue, rate and apps runs would measure the
    # scheduler, and a ping-pong takes about 80 us (p2p runs only `self`
    # there, see Job.fits); quick runs leave out the rest.
    # Where the processes leave the engine no core of its own, onicrun runs
    # the job without it unless told to share (ONIC_ONLOAD_SHARED=engine):
    # this variant always shares, so the engine's overlap is measured on 2
    # cores too; the next one is --onload as a user gets it.
    Variant("onic --onload", "onic", {"p2p", "overlap", "tiny"},
            quick_groups={"p2p", "overlap", "tiny"}, extra=["--onload"],
            env={"ONIC_ONLOAD_SHARED": "engine"}, needs="--onload",
            note="progress by the onload engine, on shared cores where it has none of its "
                 "own (ONIC_ONLOAD_SHARED=engine)"),
    Variant("onic --onload default", "onic", {"tiny"}, extra=["--onload"], needs="--onload",
            note="onicrun --onload as is: without a spare core for the engine, the job runs "
                 "without it"),
]
OTHER_VARIANTS = [Variant("MPICH", "mpich", ALL, note="Debian's build, defaults"),
                  Variant("Open MPI", "openmpi", ALL, note="Debian's build, defaults")]

PROGRAMS = {  # name -> source
    "p2p": "bench/mpi/p2p.c",
    "rma": "bench/mpi/rma.c",
    "tiny": "bench/mpi/tiny.c",
    "preposted": "bench/queue/preposted.c",
    "unexpected": "bench/queue/unexpected.c",
    "rate": "bench/rate/rate.c",
    "overlap": "bench/overlap/overlap.c",
    "jacobi": "bench/apps/jacobi.c",
    "cannon": "bench/apps/cannon.c",
    "mt": "bench/mpi/mt.c",
    "isend_local": "bench/mpi/isend_local.c",
}
PROGRAM_FLAGS = {"mt": ["-pthread"]}  # what a program needs beyond -O2 -lm


class Job:
    def __init__(self, group, prog, args, np=2, onload_cores=0):
        self.group, self.prog, self.args, self.np = group, prog, args, np
        # A run whose every rank is busy (a ping-pong) needs a core for each
        # and one for the onload engine; with fewer it measures the
        # scheduler (about 80 us a ping-pong on 2 cores), so it is left out.
        self.onload_cores = onload_cores

    def fits(self, variant, cores):
        return "--onload" not in variant.extra or self.onload_cores <= cores


def jobs(quick):
    """The suite's runs. Quick keeps the points the summary needs."""
    if quick:
        lens, fracs, qsizes, rounds = "0,10,100,300,1000", "0,0.5,1", "8,16384", "30"
        tsizes = "8,1024,16384"
        rsizes, rsizes4, riters = "1,8,64,512,4096", "8,512", "1000"
        work, oiters, oreps = "0,100,400,1600", "15", "5"
        asizes, aiters = "8,1024,16384,262144,1048576", "30"
        jn, jit, cn = "128,512,1024", "30", "256,512"
        reps, skew_iters, skew_reps, skew_work = "5", "100", "1", work
        titers, treps = "2000", "3"
    else:
        lens, fracs, qsizes, rounds = "0,10,30,100,300,1000,3000", "0,0.25,0.5,0.75,1", \
            "8,1024,16384", "50"
        tsizes = "0,64,1024,4096,16384,65536"
        rsizes, riters = "1,2,4,8,16,32,64,128,256,512,1024,2048,4096", "1000"
        rsizes4 = "1,8,64,512,4096"
        work, oiters, oreps = "0,25,50,100,200,400,800,1600,3200", "30", "5"
        asizes, aiters = "8,64,512,1024,2048,4096,16384,65536,262144,1048576", "100"
        jn, jit, cn = "64,128,256,512,1024,2048", "50", "256,512,1024"
        reps, skew_iters, skew_reps, skew_work = "7", "1000", "1", "0,50,100,200,400,800,1600"
        titers, treps = "10000", "5"
    j = [
        Job("p2p", "p2p", ["latency", reps], onload_cores=3),
        Job("p2p", "p2p", ["bw", reps], onload_cores=3),
        Job("p2p", "p2p", ["bibw", reps], onload_cores=3),
        # One process sending to itself: with the engine, two busy processes,
        # so --onload's latency cost can be measured on 2 cores too.
        Job("p2p", "p2p", ["self", reps], np=1),
    ]
    # One-sided, on an MPI_Win_allocate window (in shared memory for onic
    # and Open MPI on one node): rank 1 waits in MPI_Barrier.
    j += [Job("rma", "rma", [mode, reps]) for mode in ("put_lat", "get_lat", "put_rate")]
    # Latency-bound loops of tiny messages, at 2 processes and at 4 (more
    # than this machine's cores), --onload included whatever the cores.
    j += [Job("tiny", "tiny", [t, "--iters", titers, "--reps", treps], np=np)
          for np in (2, 4) for t in ("allgather", "chain")]
    j += [
        Job("queue", "preposted", ["lat", "--lens", lens, "--fracs", fracs, "--sizes", qsizes,
                                   "--rounds", rounds]),
        Job("queue", "preposted", ["tput", "--lens", lens, "--fracs", "1", "--sizes", tsizes,
                                   "--rounds", rounds]),
        Job("queue", "unexpected", ["--lens", lens, "--sizes", qsizes, "--rounds", rounds]),
        Job("rate", "rate", ["--sizes", rsizes, "--iters", riters, "--reps", reps]),
        Job("rate", "rate", ["--sizes", rsizes4, "--iters", riters, "--reps", reps], np=4),
    ]
    for side in ("send", "recv"):
        for size in ("262144", "1048576"):
            j.append(Job("overlap", "overlap", ["overlap", side, "--size", size, "--work", work,
                                                "--iters", oiters, "--reps", oreps]))
    j += [
        Job("overlap", "overlap", ["skew", "--size", "1048576", "--work", skew_work, "--iters",
                                   skew_iters, "--reps", skew_reps]),
        Job("overlap", "overlap", ["avail", "send", "--sizes", asizes, "--iters",
                                   aiters, "--reps", oreps]),
        Job("overlap", "overlap", ["avail", "recv", "--sizes", asizes, "--iters",
                                   aiters, "--reps", oreps]),
        Job("overlap", "overlap", ["bypass", "--size", "51200", "--work", work, "--iters",
                                   oiters, "--reps", oreps]),
        Job("apps", "jacobi", ["--n", jn, "--iters", jit, "--reps", "5"]),
        Job("apps", "cannon", ["--n", cn, "--reps", "3"]),
    ]
    if not quick:
        # MPI_THREAD_MULTIPLE: each thread pair on its own communicator, 1 and
        # 2 threads a process (thread i of rank 0 with thread i of rank 1).
        # 500 round trips a repetition: with 4 busy threads on 2 cores an
        # MPI's round trip can take a time slice (milliseconds).
        j += [Job("mt", "mt", [mode, reps, str(t), "8"] + (["500"] if mode == "latency_mt" else []))
              for mode in ("latency_mt", "rate_mt") for t in (1, 2)]
        # Nonblocking sends are local: a loop of MPI_Isend while the
        # receiver computes for a second outside MPI (one run a count).
        j.append(Job("local", "isend_local", ["--size", "400", "--counts", "10,100,1000",
                                              "--reps", "1", "--sleep-ms", "1000"]))
    return j


# What each test's parameters and value mean, and which way is better.
TESTS = {
    "p2p_latency": ("bytes", "", "", "one-way latency (us)", "low"),
    "p2p_bw": ("bytes", "", "", "bandwidth (GB/s)", "high"),
    "p2p_bibw": ("bytes", "", "", "bi-directional bandwidth, both ways (GB/s)", "high"),
    "p2p_self": ("bytes", "", "", "one pass to itself (us)", "low"),
    "rma_put_lat": ("bytes", "", "", "MPI_Put + MPI_Win_flush, shared window (us)", "low"),
    "rma_get_lat": ("bytes", "", "", "MPI_Get + MPI_Win_flush, shared window (us)", "low"),
    "rma_put_rate": ("bytes", "", "", "MPI_Puts, 64 per MPI_Win_flush (M/s)", "high"),
    "allgather": ("processes", "", "", "MPI_Allgather of 2 B per rank (k per second)", "high"),
    "chain": ("processes", "", "", "one double through every rank and back (k rows per second)",
              "high"),
    "preposted_lat": ("queue length", "entries traversed", "bytes", "one-way latency (us)", "low"),
    "preposted_tput": ("queue length", "entries traversed", "bytes",
                       "throughput, 25 in flight (M msgs/s)", "high"),
    "unexpected": ("unexpected queue length", "bytes", "filler bytes",
                   "one-way latency incl. posting (us)", "low"),
    "rate": ("pairs", "bytes", "window", "message rate (M msgs/s)", "high"),
    "overlap_send": ("bytes", "computation (us)", "", "sender-side overlap", "high"),
    "overlap_recv": ("bytes", "computation (us)", "", "receiver-side overlap", "high"),
    "skew": ("bytes", "computation (us)", "", "time per iteration (us)", "low"),
    "avail_send": ("bytes", "", "", "sender availability", "high"),
    "avail_recv": ("bytes", "", "", "receiver availability", "high"),
    "overhead_send": ("bytes", "", "", "sender overhead (us)", "low"),
    "overhead_recv": ("bytes", "", "", "receiver overhead (us)", "low"),
    "bypass": ("bytes", "computation (us)", "batch", "wait after computing (us)", "low"),
    "jacobi_wait": ("block edge", "halo bytes", "processes", "MPI_Waitall per iteration (us)",
                    "low"),
    "jacobi_iter": ("block edge", "halo bytes", "processes", "time per iteration (us)", "low"),
    "jacobi_sum": ("block edge", "halo bytes", "processes", "checksum of the grid", ""),
    "cannon": ("matrix size", "Q", "processes", "time (ms)", "low"),
    "mt_latency_mt": ("bytes", "threads a process", "",
                      "one-way latency, each thread pair on its own communicator (us)", "low"),
    "mt_rate_mt": ("bytes", "threads a process", "",
                   "message rate of all thread pairs, each on its own communicator (M msgs/s)",
                   "high"),
    "isend_local": ("bytes", "MPI_Isends", "",
                    "time inside the loop of MPI_Isends, the receiver computing 1 s "
                    "outside MPI (s)", "low"),
}


# --------------------------------------------------------------------------
# Running.

def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_cmd(cmd, env=None, timeout=60):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, **(env or {})))
        return r.returncode, r.stdout, r.stderr
    except FileNotFoundError as e:
        return 127, "", str(e)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, out, f"timed out after {timeout} s"


def first_line(cmd, env=None):
    rc, out, err = run_cmd(cmd, env, 30)
    text = (out + err).strip().splitlines()
    return text[0].strip() if text else "?"


def detect(build, variants):
    """Marks MPIs and variants that cannot run, with the reason."""
    ms = {m.key: m for m in mpis(build)}
    for m in ms.values():
        for tool in (m.cc, m.run):
            if shutil.which(tool) is None and not os.access(tool, os.X_OK):
                m.missing = f"{tool} not found (scripts/install-deps.sh bench installs it)"
                break
    if not ms["onic"].missing:
        ms["onic"].version = first_line([os.path.join(build, "onic-info")])
    if not ms["mpich"].missing:
        ms["mpich"].version = first_line(["mpichversion"]) if shutil.which("mpichversion") \
            else first_line(["mpirun.mpich", "--version"])
        rc, out, _ = run_cmd(["mpichversion"])
        for line in out.splitlines():
            if "Version" in line:
                ms["mpich"].version = "MPICH " + line.split(":", 1)[1].strip()
                break
    if not ms["openmpi"].missing:
        ms["openmpi"].version = first_line(["mpirun.openmpi", "--version"], OMPI_ENV)
    rc, out, err = run_cmd([ms["onic"].run, "--help"])
    onic_help = out + err
    for v in variants:
        if ms[v.mpi].missing:
            v.missing = f"{ms[v.mpi].name} missing: {ms[v.mpi].missing}"
        elif v.needs and v.needs not in onic_help:
            v.missing = f"not available yet: onicrun has no {v.needs} option"
        elif v.needs:
            v.missing = probe(build, ms[v.mpi], v)
    return ms


PROBE_SRC = r"""
#include <mpi.h>
int main(int argc, char **argv)
{
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&rank, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return x == 1 ? 0 : 1;
}
"""


def probe(build, m, v):
    """None if an MPI program of 2 processes runs as variant v, else why not:
    an onicrun option may exist before everything runs under it."""
    d = os.path.join(build, "bench-suite", "probe")
    os.makedirs(d, exist_ok=True)
    src, exe = os.path.join(d, "probe.c"), os.path.join(d, "probe")
    with open(src, "w") as f:
        f.write(PROBE_SRC)
    rc, _, err = run_cmd([m.cc, "-O2", "-o", exe, src], m.env, 120)
    if rc == 0:
        rc, out, err = run_cmd([m.run, "-n", "2"] + v.extra + [exe], dict(m.env, **v.env), 60)
        err = out + err
    if rc == 0:
        return None
    lines = [l for l in err.strip().splitlines() if l.strip()]
    why = next((l for l in lines if "not available" in l), lines[-1] if lines else f"exit {rc}")
    return f"not available yet: {why.strip()[:300]}"


def build_programs(ms, bindir, progs):
    """Compiles the programs progs with every MPI; returns {(mpi, prog): exe} and notes."""
    exes, notes = {}, []
    for m in ms.values():
        if m.missing:
            continue
        os.makedirs(os.path.join(bindir, m.key), exist_ok=True)
        for prog, src in PROGRAMS.items():
            if prog not in progs:
                continue
            exe = os.path.join(bindir, m.key, prog)
            cmd = [m.cc, "-O2", "-Wall", "-Wextra"] + PROGRAM_FLAGS.get(prog, []) + \
                ["-o", exe, os.path.join(ROOT, src), "-lm"]
            rc, out, err = run_cmd(cmd, m.env, 300)
            if rc != 0:
                notes.append(f"{m.name}: building {src} failed: {err.strip()[-500:]}")
            else:
                exes[(m.key, prog)] = exe
                if err.strip():
                    notes.append(f"{m.name}: warnings building {src}: {err.strip()[-500:]}")
    return exes, notes


def parse_lines(prog, text, args=()):
    """The CSV lines of one run: (test, p1, p2, p3, median, min, max). mt's
    thread count is its third argument (p2)."""
    rows = []
    for line in text.splitlines():
        f = line.strip().split(",")
        try:
            if prog in ("p2p", "rma", "mt") and len(f) == 5:
                p2 = (float(args[2]) if len(args) > 2 else 2.0) if prog == "mt" else 0.0
                rows.append((prog + "_" + f[0], float(f[1]), p2, 0.0, float(f[2]),
                             float(f[3]), float(f[4])))
            elif len(f) == 7 and f[0] in TESTS:
                rows.append((f[0],) + tuple(float(x) for x in f[1:]))
        except ValueError:
            pass
    return rows


def run_suite(args, ms, variants, exes, out):
    cores = os.cpu_count() or 2
    todo = jobs(args.quick)
    if args.only:
        todo = [j for j in todo if j.group in args.only.split(",")]
    raw, failures = [], []
    t_start = time.time()
    for rep in range(args.runs):
        for ji, job in enumerate(todo):
            vs = [v for v in variants if not v.missing and
                  job.group in (v.quick_groups if args.quick else v.groups) and
                  (v.mpi, job.prog) in exes and job.fits(v, cores)]
            k = (rep + ji) % len(vs) if vs else 0  # rotate who goes first
            for v in vs[k:] + vs[:k]:
                m = ms[v.mpi]
                cmd = m.launch(job.np, v.extra, cores) + [exes[(v.mpi, job.prog)]] + job.args
                t0 = time.time()
                rc, stdout, stderr = run_cmd(cmd, dict(m.env, **v.env), args.timeout)
                rows = parse_lines(job.prog, stdout, job.args)
                dt = time.time() - t0
                log(f"[{time.time() - t_start:6.0f}s] run {rep + 1}/{args.runs} {v.name:14s} "
                    f"{job.prog} {' '.join(job.args[:2 if job.prog != 'mt' else 3])} "
                    f"(np {job.np}): {len(rows)} points, "
                    f"{dt:.1f}s" + ("" if rc == 0 else f", FAILED (exit {rc})"))
                if rc != 0 or not rows:
                    failures.append((v.name, " ".join(cmd), rc, (stderr or stdout)[-1500:]))
                    continue
                for r in rows:
                    raw.append((v.name, rep + 1, job.np) + r)
    with open(os.path.join(out, "raw.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "run", "np", "test", "p1", "p2", "p3", "median", "min", "max"])
        w.writerows(raw)
    return raw, failures


def aggregate(raw):
    """{(variant, test, p1, p2, p3): (median of the runs' medians, min, max, n)}."""
    by = {}
    for v, _, _, test, p1, p2, p3, med, _, _ in raw:
        by.setdefault((v, test, p1, p2, p3), []).append(med)
    return {k: (statistics.median(x), min(x), max(x), len(x)) for k, x in by.items()}


def floors(build, quick, out, xport_csv=None):
    """onic-bench-xport and onic-bench-match, onic's floors (CSV each). With
    xport_csv, onic-bench-xport's CSV from that file (make demo has just run
    it with the same options) instead of a second run."""
    res = {}
    if xport_csv:
        with open(xport_csv) as f:
            stdout = f.read()
        log(f"floors: onic-bench-xport: taken from {xport_csv}")
        with open(os.path.join(out, "floors-xport.csv"), "w") as f:
            f.write(stdout)
        res["xport"] = list(csv.DictReader(io.StringIO(stdout)))
    runs = {
        "xport": [os.path.join(build, "onicrun"), "-n", "2", "--bind", "core", "--timeout",
                  "300", os.path.join(build, "onic-bench-xport"), "--csv"] +
                 (["--quick"] if quick else []),
        "match": [os.path.join(build, "onic-bench-match"), "--csv"] +
                 (["--quick"] if quick else ["--depths", "1,8,64,256,1024,4096"]),
    }
    for name, cmd in runs.items():
        if name in res:
            continue
        rc, stdout, stderr = run_cmd(cmd, None, 900)
        log(f"floors: onic-bench-{name}: exit {rc}")
        with open(os.path.join(out, f"floors-{name}.csv"), "w") as f:
            f.write(stdout)
        res[name] = list(csv.DictReader(io.StringIO(stdout))) if rc == 0 else None
        if rc != 0:
            res[name + "_error"] = (stderr or stdout)[-800:]
    return res


def instructions(build, out):
    """bench/mpi/instr.py once: callgrind's instruction counts of the MPI calls
    of an 8-byte message (deterministic: one run per MPI), its JSON."""
    path = os.path.join(out, "instr.json")
    rc, stdout, stderr = run_cmd([sys.executable, os.path.join(ROOT, "bench", "mpi", "instr.py"),
                                  "--build", build, "--json", path], None, 900)
    log(f"instructions: bench/mpi/instr.py: exit {rc}")
    with open(os.path.join(out, "instr.md"), "w") as f:
        f.write(stdout)
    if not os.path.exists(path):
        return {"error": (stderr or stdout).strip()[-800:]}
    with open(path) as f:
        return json.load(f)


def startup(build, quick, out):
    """bench/startup/startup.py once: start-up wall time of an MPI program that
    only starts and ends, alone and with 1, 2, 4 and 16 processes, each MPI
    interleaved with the others; its JSON."""
    path = os.path.join(out, "startup.json")
    rc, stdout, stderr = run_cmd([sys.executable, os.path.join(ROOT, "bench", "startup",
                                                               "startup.py"),
                                  "--build", build, "--runs", "5" if quick else "11",
                                  "--json", path], None, 1800)
    log(f"startup: bench/startup/startup.py: exit {rc}")
    with open(os.path.join(out, "startup.md"), "w") as f:
        f.write(stdout)
    if not os.path.exists(path):
        return {"error": (stderr or stdout).strip()[-800:]}
    with open(path) as f:
        res = json.load(f)
    if rc != 0:
        res["failed"] = {"onic": "a start-up run failed (startup.md)"}
    return res


REPLAY_QUICK = "jacobi,cannon,osu_rate,osu_latency,osu_bw"


def replay_programs(build, quick, out):
    """bench/replay/programs.py once: real programs traced and replayed
    through the NIC models (their figures do not depend on the load); its
    JSON."""
    path = os.path.join(out, "replay.json")
    cmd = [sys.executable, os.path.join(ROOT, "bench", "replay", "programs.py"), "--build", build,
           "--json", path] + (["--only", REPLAY_QUICK] if quick else [])
    rc, stdout, stderr = run_cmd(cmd, None, 1800)
    log(f"replay: bench/replay/programs.py: exit {rc}")
    with open(os.path.join(out, "replay.md"), "w") as f:
        f.write(stdout)
    if not os.path.exists(path):
        return {"error": (stderr or stdout).strip()[-800:],
                "failed": {"onic": f"bench/replay/programs.py: exit {rc}, no results"}}
    with open(path) as f:
        res = json.load(f)
    failed = [p["name"] for p in res.get("programs", []) if "error" in p]
    if failed:
        res["failed"] = {"onic": "traced run or replay failed: " + ", ".join(failed) +
                         " (replay.md)"}
    return res


def machine(ms, variants, args, load_start):
    lines = [f"date: {datetime.datetime.now().isoformat(timespec='seconds')}"]
    rc, out, _ = run_cmd(["lscpu"])
    info = {}
    for line in out.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            info[k.strip()] = v.strip()
    lines.append(f"cpu: {info.get('Model name', platform.processor() or '?')}")
    lines.append(f"cores: {os.cpu_count()} logical CPUs; {info.get('Core(s) per socket', '?')} "
                 f"core(s) per socket, {info.get('Socket(s)', '?')} socket(s), "
                 f"{info.get('Thread(s) per core', '?')} thread(s) per core")
    for k in ("L1d cache", "L2 cache", "L3 cache", "Hypervisor vendor"):
        if k in info:
            lines.append(f"{k.lower()}: {info[k]}")
    lines.append(f"kernel: {platform.system()} {platform.release()} ({platform.machine()})")
    rc, out, _ = run_cmd(["git", "-C", ROOT, "log", "-1", "--format=%h %s"])
    lines.append(f"onic commit: {out.strip() or '?'}")
    for m in ms.values():
        lines.append(f"{m.name}: " + (m.version or "?") if not m.missing
                     else f"{m.name}: MISSING ({m.missing})")
    lines.append("pinning: every rank r bound to core r mod cores: onicrun --bind core, "
                 "mpirun.mpich -bind-to core, mpirun.openmpi --bind-to core "
                 "(with --oversubscribe --bind-to core:overload-allowed when there are more "
                 "processes than cores)")
    for v in variants:
        how = [v.note] + [f"{k}={x}" for k, x in v.env.items()] + v.extra
        lines.append(f"variant {v.name}: " + "; ".join(h for h in how if h) +
                     (f" -- {v.missing}" if v.missing else ""))
    lines.append(f"mode: {'quick' if args.quick else 'full'}, {args.runs} run(s) per point, "
                 "MPIs interleaved within each run")
    lines.append(f"python: {platform.python_version()}")
    lines.append(f"load average at start: {load_start}")
    lines.append(f"load average at end: {open('/proc/loadavg').read().strip()}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# The summary: onic against the better of MPICH and Open MPI.

def val(agg, variant, test, p1, p2=0.0, p3=0.0):
    x = agg.get((variant, test, float(p1), float(p2), float(p3)))
    return x[0] if x else None


def points(agg, test):
    return sorted({k[2:] for k in agg if k[1] == test})


def summary_rows(agg, variants, instr=None, start=None):
    """(figure, {variant: value}, onic/best, target text, status, unit)."""
    names = [v.name for v in variants if not v.missing]
    others = [n for n in ("MPICH", "Open MPI") if n in names]
    onload = next((v for v in variants if v.needs == "--onload"), None)
    onload_ok = onload is not None and not onload.missing
    rows = []

    def add(figure, getter, better, target=None, subject="onic", note=""):
        vals = {n: getter(n) for n in names}
        vals = {n: x for n, x in vals.items() if x is not None}
        best = None
        ov = [vals[n] for n in others if n in vals]
        if ov:
            best = min(ov) if better == "low" else max(ov)
        ratio = vals[subject] / best if subject in vals and best else None
        status, ttext = "", ""
        if target is not None:
            ttext, check = target
            status = check(vals, ratio)
        rows.append((figure, vals, ratio, ttext, status, note, subject))

    def cmp(x, op, y):
        if x is None:
            return "no data"
        return "met" if (x <= y if op == "<=" else x >= y) else "not met"

    def growth(test, p_full, p_empty):
        return lambda n: (lambda a, b: a / b if a and b else None)(
            val(agg, n, test, *p_full), val(agg, n, test, *p_empty))

    add("Pre-posted queue: 8 B latency (us), 1000 entries traversed",
        lambda n: val(agg, n, "preposted_lat", 1000, 1000, 8), "low")
    add("Pre-posted queue: latency growth, 1000 traversed / empty (8 B)",
        growth("preposted_lat", (1000, 1000, 8), (0, 0, 8)), "low",
        ("onic <= 1.2x its empty-queue latency",
         lambda v, r: cmp(v.get("onic"), "<=", 1.2)))
    add("Unexpected queue: 8 B latency (us), 1000 unexpected",
        lambda n: val(agg, n, "unexpected", 1000, 8, 0), "low")
    add("Unexpected queue: latency growth, 1000 unexpected / none (8 B)",
        growth("unexpected", (1000, 8, 0), (0, 8, 0)), "low",
        ("onic <= 1.2x its empty-queue latency",
         lambda v, r: cmp(v.get("onic"), "<=", 1.2)))
    add("8 B latency (us), ping-pong", lambda n: val(agg, n, "p2p_latency", 8), "low",
        ("onic <= 0.6x the better other", lambda v, r: cmp(r, "<=", 0.6)))
    add("8 B message rate, 1 pair (M msgs/s)", lambda n: val(agg, n, "rate", 1, 8, 64), "high",
        (">= 2x the better other", lambda v, r: cmp(r, ">=", 2.0)))
    add("8 B sustained message rate, best of 1 and 2 pairs (M msgs/s)",
        lambda n: max([x for x in (val(agg, n, "rate", 1, 8, 64), val(agg, n, "rate", 2, 8, 64))
                       if x is not None], default=None), "high",
        note="2 pairs = 4 processes on 2 cores (oversubscribed)")
    add("8 B MPI_Put + MPI_Win_flush (us), shared window",
        lambda n: val(agg, n, "rma_put_lat", 8), "low",
        ("onic <= 0.8x the better other", lambda v, r: cmp(r, "<=", 0.8)),
        note="bench/mpi/rma.c: rank 0 in MPI_Win_lock_all, rank 1 in MPI_Barrier")
    add("8 B MPI_Get + MPI_Win_flush (us), shared window",
        lambda n: val(agg, n, "rma_get_lat", 8), "low",
        ("onic <= 0.8x the better other", lambda v, r: cmp(r, "<=", 0.8)))
    add("8 B MPI_Put rate, 64 per flush (M puts/s)",
        lambda n: val(agg, n, "rma_put_rate", 8), "high",
        (">= 2x the better other", lambda v, r: cmp(r, ">=", 2.0)))
    add("1 MiB MPI_Put + MPI_Win_flush (us), shared window",
        lambda n: val(agg, n, "rma_put_lat", 1048576), "low",
        ("onic <= 0.67x the better other (1.5x the bandwidth)",
         lambda v, r: cmp(r, "<=", 1 / 1.5)))
    # MPI_THREAD_MULTIPLE and local nonblocking sends (full suite only: no
    # rows where they did not run).
    if points(agg, "mt_rate_mt") or points(agg, "mt_latency_mt"):
        add("8 B message rate, 2 threads a process, each pair on its own communicator "
            "(M msgs/s)", lambda n: val(agg, n, "mt_rate_mt", 8, 2), "high",
            ("ahead of both others (> 1x)", lambda v, r:
             "no data" if r is None or any(o not in v for o in ("MPICH", "Open MPI")) else
             "met" if r > 1.0 else "not met"),
            note="bench/mpi/mt.c rate_mt, MPI_THREAD_MULTIPLE; 1 thread a process: "
                 "the same program's single pair")
        add("8 B message rate, 1 thread, MPI_THREAD_MULTIPLE (M msgs/s)",
            lambda n: val(agg, n, "mt_rate_mt", 8, 1), "high")
        add("8 B latency, 2 threads a process, each pair on its own communicator (us)",
            lambda n: val(agg, n, "mt_latency_mt", 8, 2), "low",
            note="as osu_latency_mt: the mean of the pairs' one-way times")
    if points(agg, "isend_local"):
        add("Time inside a loop of 1000 MPI_Isend of 400 B, the receiver computing (s)",
            lambda n: val(agg, n, "isend_local", 400, 1000), "low",
            ("onic near zero (<= 0.01 s): a nonblocking call is local",
             lambda v, r: cmp(v.get("onic"), "<=", 0.01)),
            note="bench/mpi/isend_local.c: the receiver sleeps 1 s outside MPI before it "
                 "posts its receives")
    for order, key, note in (
            ("expected", "total-exp", "callgrind's count inside the calls of one message: "
             "MPI_Send + MPI_Irecv + MPI_Waitall (of 32) / 32 expected, MPI_Send + MPI_Recv "
             "unexpected (bench/mpi/instr.py)"),
            ("unexpected", "total-unexp", "")):
        add(f"Instructions per 8-byte message, {order} order (total)",
            lambda n, key=key: (instr or {}).get("figures", {}).get(n, {}).get(key), "low",
            ("onic <= 0.5x the better other", lambda v, r: cmp(r, "<=", 0.5)), note=note)
    cores = os.cpu_count() or 2
    for np in (2, 4):
        for test, what in (("allgather", "tiny Allgather loop (k/s)"),
                           ("chain", "send/receive chain (k rows/s)")):
            over = f", {np} processes on {cores} cores" if np > cores else f", {np} processes"
            add(f"{what[0].upper()}{what[1:]}{over}",
                lambda n, test=test, np=np: val(agg, n, test, np), "high",
                ("onic >= Open MPI", lambda v, r: cmp(
                    v["onic"] / v["Open MPI"] if "onic" in v and "Open MPI" in v else None,
                    ">=", 1.0)) if np > cores else None,
                note="bench/mpi/tiny.c" if test == "allgather" and np == 2 else "")
    od = "onic --onload default"
    for np in (2, 4):
        for test in ("allgather", "chain"):
            add(f"--onload over inline, {test} at {np} processes (slowdown: inline / --onload)",
                lambda n, test=test, np=np: (lambda a, b: a / b if a and b else None)(
                    val(agg, "onic", test, np), val(agg, n, test, np))
                if n in (ol_name for ol_name in (od, "onic --onload")) else None, "low",
                (f"{od}: <= 1.2x", lambda v, r: cmp(v.get(od), "<=", 1.2))
                if np <= cores else None, subject=od if od in names else "onic")
    med = (start or {}).get("medians", {})
    for label, key, target in (
            ("Start-up: ./hello alone, wall (s)", "./hello", True),
            ("Start-up: onicrun / mpirun -n 2 ./hello, wall (s)", "launcher -n 2 ./hello", True),
            ("Start-up: onicrun / mpirun -n 16 ./hello, wall (s)", "launcher -n 16 ./hello",
             False)):
        add(label, lambda n, key=key: med.get(f"{key}|" + {"onic": "onic", "MPICH": "mpich",
                                                            "Open MPI": "openmpi"}.get(n, "")),
            "low", ("onic <= MPICH", lambda v, r: cmp(
                v["onic"] / v["MPICH"] if "onic" in v and "MPICH" in v else None, "<=", 1.0))
            if target else None, note="bench/startup/startup.py" if key == "./hello" else "")
    w_over = max((p[1] for p in points(agg, "overlap_send")), default=None)
    ol = "onic --onload"

    def onload_target(text, op, bound):
        """A target of the onload issue, checked on the onload variant."""
        return (f"{ol}: {text}",
                lambda v, r: "needs --onload: not available yet" if not onload_ok
                else cmp(v.get(ol), op, bound))
    if w_over is not None:
        add(f"Sender-side overlap, 1 MB, {w_over:g} us computation",
            lambda n: val(agg, n, "overlap_send", 1048576, w_over), "high")
        add(f"Receiver-side overlap, 1 MB, {w_over:g} us computation",
            lambda n: val(agg, n, "overlap_recv", 1048576, w_over), "high",
            onload_target(">= 0.95 once computation is twice the transfer", ">=", 0.95),
            subject=ol if onload_ok else "onic")
    for size, label, bound in ((262144, "256 KB", 0.95), (1048576, "1 MB", 0.98)):
        for side in ("send", "recv"):
            add(f"{'Sender' if side == 'send' else 'Receiver'} availability, {label}",
                lambda n, side=side, size=size: val(agg, n, f"avail_{side}", size), "high",
                onload_target(f">= {bound:g}", ">=", bound),
                subject=ol if onload_ok else "onic")
    # The ping-pong where the engine and both ranks have cores of their own;
    # else one process sending to itself (the process and the engine).
    lat = "p2p_latency" if val(agg, ol, "p2p_latency", 8) is not None else "p2p_self"
    add("8 B latency with --onload over inline (ratio" +
        (")" if lat == "p2p_latency" else "; one process to itself)"),
        lambda n: (lambda a, b: a / b if a and b else None)(
            val(agg, ol, lat, 8), val(agg, "onic", lat, 8))
        if n == ol else None, "low", onload_target("<= 2x inline", "<=", 2.0), subject=ol)
    w_skew = max((p[1] for p in points(agg, "skew")), default=None)
    if w_skew is not None:
        add(f"Skew, 1 MB: time per iteration (us), {w_skew:g} us computation",
            lambda n: val(agg, n, "skew", 1048576, w_skew), "low")
    w_byp = max((p[1] for p in points(agg, "bypass")), default=None)
    w_byp0 = min((p[1] for p in points(agg, "bypass")), default=None)
    if w_byp is not None:
        add(f"Application bypass, 10 x 50 KB: wait after {w_byp:g} us computation (us)",
            lambda n: val(agg, n, "bypass", 51200, w_byp, 10), "low")
        add(f"Application bypass: that wait over the wait after {w_byp0:g} us (ratio)",
            lambda n: (lambda a, b: a / b if a is not None and b else None)(
                val(agg, n, "bypass", 51200, w_byp, 10), val(agg, n, "bypass", 51200, w_byp0, 10)),
            "low", onload_target("near zero (<= 0.05)", "<=", 0.05),
            subject=ol if onload_ok else "onic")
    jp = points(agg, "jacobi_iter")
    if jp:
        big = max(jp)
        add(f"Jacobi: time per iteration (us), {int(big[0])}^2 block, {int(big[2])} processes",
            lambda n: val(agg, n, "jacobi_iter", *big), "low",
            ("onic no slower than the better other", lambda v, r: cmp(r, "<=", 1.0)))
        add(f"Jacobi: MPI_Waitall per iteration (us), {int(big[1])} B halo",
            lambda n: val(agg, n, "jacobi_wait", *big), "low",
            ("faster than the better other with --onload",
             lambda v, r: "needs --onload: not available yet" if not onload_ok
             else cmp(v.get("onic --onload", 0) / min(
                 [v[o] for o in ("MPICH", "Open MPI") if o in v] or [0]) if
                 v.get("onic --onload") and any(o in v for o in ("MPICH", "Open MPI"))
                 else None, "<=", 1.0)),
            subject="onic --onload" if onload_ok else "onic")
    cp = points(agg, "cannon")
    if cp:
        big = max(cp)
        add(f"Cannon: time (ms), {int(big[0])} x {int(big[0])}, {int(big[2])} processes",
            lambda n: val(agg, n, "cannon", *big), "low",
            ("onic no slower than the better other", lambda v, r: cmp(r, "<=", 1.0)))
    return rows, names


def fmt(x):
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


def summary_text(rows, names):
    head = ["figure"] + names + ["onic / best other", "target", "status"]
    table, foot = [head], []
    for fig, vals, ratio, target, status, note, subject in rows:
        r = f"{ratio:.2f}x" if ratio is not None else "-"
        if subject != "onic" and ratio is not None:
            r += f" ({subject})"
        if note:
            foot.append(note)
            fig += " " + "*" * len(foot)
        table.append([fig] + [fmt(vals.get(n)) for n in names] + [r, target or "", status or ""])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    out = []
    for i, row in enumerate(table):
        out.append("  ".join(c[:widths[j]].ljust(widths[j]) if j == 0 else c.rjust(widths[j])
                             if 0 < j <= len(names) + 1 else c.ljust(widths[j])
                             for j, c in enumerate(row)).rstrip())
        if i == 0:
            out.append("-" * len(out[0]))
    out += ["*" * (i + 1) + " " + f for i, f in enumerate(foot)]
    return "\n".join(out)


# --------------------------------------------------------------------------
# Plots (matplotlib, Agg).

STYLE = {"onic": ("tab:blue", "o", "-"), "onic list": ("tab:cyan", "s", "--"),
         "onic --onload": ("tab:purple", "D", "-"), "MPICH": ("tab:red", "^", "-"),
         "Open MPI": ("tab:green", "v", "-")}


# onic's protocol boundaries, marked on the size sweep: (variable, label).
CROSSOVERS = [("ONIC_EAGER_PULL_MIN", "pulled when both ways"),
              ("ONIC_EAGER_LIMIT", "eager limit"), ("ONIC_SHM_MID_MAX", "lane's limit"),
              ("ONIC_SHM_ASSIST_MIN", "two cores copy")]


def crossovers(build):
    """{label: bytes} of CROSSOVERS as this environment sets them (onic-info's
    current column) and as a job on one node gets them: the lane carries at
    least its 8 KiB frame, and the eager limit is at most what the lane
    carries; the pull both ways (ONIC_EAGER_PULL_MIN) only within the
    eager limit. What onic-info does not give is left out."""
    found, value = {}, {}
    _, text, _ = run_cmd([os.path.join(build, "onic-info")])
    for line in text.splitlines():
        f = line.split()  # name, default, current, description
        if len(f) > 2 and f[0].startswith("ONIC_") and f[2].isdigit():
            value[f[0]] = int(f[2])
    if "ONIC_SHM_MID_MAX" in value:
        value["ONIC_SHM_MID_MAX"] = max(value["ONIC_SHM_MID_MAX"], 8192)
        if "ONIC_EAGER_LIMIT" in value:
            value["ONIC_EAGER_LIMIT"] = min(value["ONIC_EAGER_LIMIT"], value["ONIC_SHM_MID_MAX"])
    if value.get("ONIC_EAGER_PULL_MIN", 0) > value.get("ONIC_EAGER_LIMIT", 0):
        value.pop("ONIC_EAGER_PULL_MIN", None)
    for var, label in CROSSOVERS:  # boundaries at one size share a line
        if value.get(var, 0) > 0:
            found.setdefault(value[var], []).append(label)
    return {" = ".join(labels): size for size, labels in found.items()}


def plots(agg, names, floor, out, cross=None):
    """Draws every figure it has data for; returns [(file, title, caption)].
    cross: {label: bytes}, onic's protocol boundaries for the size sweep."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figs = []

    def series(v, test, fixed, xi):
        """Points of test for variant v whose other parameters equal fixed (None = free)."""
        pts = []
        for k, x in agg.items():
            if k[0] != v or k[1] != test:
                continue
            p = k[2:]
            if all(f is None or p[i] == f for i, f in enumerate(fixed)):
                pts.append((p[xi], x[0], x[1], x[2]))
        return sorted(pts)

    def line(ax, v, pts, label=None, **kw):
        if not pts:
            return
        c, mk, ls = STYLE.get(v, ("black", "x", "-"))
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        lo = [p[1] - p[2] for p in pts]
        hi = [p[3] - p[1] for p in pts]
        kw.setdefault("color", c)
        kw.setdefault("marker", mk)
        kw.setdefault("linestyle", ls)
        ax.errorbar(xs, ys, yerr=[lo, hi], label=label or v, capsize=2, markersize=4, **kw)

    def save(fig, name, title, caption):
        path = os.path.join(out, name)
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)
        figs.append((name, title, caption))

    # 1. pre-posted latency against queue length and traversal (paper 000 fig. 5)
    vs = [n for n in names if points_of(agg, n, "preposted_lat")]
    if vs:
        sizes = sorted({k[4] for k in agg if k[1] == "preposted_lat"})
        for size in sizes:
            fig, axs = plt.subplots(1, len(vs), figsize=(4 * len(vs), 3.6), sharey=True,
                                    squeeze=False)
            for ax, v in zip(axs[0], vs):
                pts = [(k[2], k[3], x[0]) for k, x in agg.items()
                       if k[0] == v and k[1] == "preposted_lat" and k[4] == size]
                fracs = sorted({round(t / l, 2) if l else 0.0 for l, t, _ in pts})
                cmap = plt.get_cmap("viridis")
                for i, fr in enumerate(fracs):
                    sel = sorted((l, y) for l, t, y in pts
                                 if (round(t / l, 2) if l else 0.0) == fr or l == 0)
                    ax.plot([s[0] for s in sel], [s[1] for s in sel], marker="o", markersize=3,
                            color=cmap(i / max(1, len(fracs) - 1)),
                            label=f"{fr * 100:.0f}% traversed")
                ax.set_title(v)
                ax.set_xlabel("posted queue length")
                ax.grid(alpha=0.3)
            axs[0][0].set_ylabel("one-way latency (us)")
            axs[0][-1].legend(fontsize=7)
            save(fig, f"preposted_lat_{int(size)}B.png",
                 f"Pre-posted queue: latency against queue length and traversal, {int(size)} B",
                 "Each panel one MPI: one line per share of the queue the message traverses "
                 "before its receive (paper 000, figure 5, as projections).")
        # all MPIs at 100 % traversal, 8 B
        fig, ax = plt.subplots(figsize=(6, 4))
        for v in vs:
            pts = sorted((k[2], x[0], x[1], x[2]) for k, x in agg.items()
                         if k[0] == v and k[1] == "preposted_lat" and k[4] == min(sizes) and
                         k[2] == k[3])
            line(ax, v, pts)
        ax.set_xlabel("posted queue length, all traversed")
        ax.set_ylabel("one-way latency (us)")
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, "preposted_lat_full.png",
             f"Pre-posted queue: every entry traversed, {int(min(sizes))} B",
             "Median of the runs; bars: the lowest and highest run.")
    # 2. 25 in flight (paper 002 fig. 4 and 5): bandwidth against size per queue length
    vs = [n for n in names if points_of(agg, n, "preposted_tput")]
    if vs:
        lens = sorted({k[2] for k in agg if k[1] == "preposted_tput"})
        fig, axs = plt.subplots(1, 2, figsize=(11, 4))
        for v in vs:
            for li, l in enumerate((lens[0], lens[-1])):
                pts = sorted((k[4], x[0] * k[4], x[1] * k[4], x[2] * k[4])
                             for k, x in agg.items() if k[0] == v and
                             k[1] == "preposted_tput" and k[2] == l and k[4] > 0)
                line(axs[li], v, pts)
                axs[li].set_title(f"queue of {int(l)}, all traversed")
        for ax in axs:
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel("bandwidth (MB/s), 25 messages in flight")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        save(fig, "preposted_tput.png", "Pre-posted queue: 25 messages in flight",
             "Paper 002's figure 4 benchmark: bandwidth with an empty and with the longest "
             "posted queue (bandwidth = messages per second x size).")
        fig, ax = plt.subplots(figsize=(6, 4))
        size0 = min(k[4] for k in agg if k[1] == "preposted_tput")
        for v in vs:
            line(ax, v, series(v, "preposted_tput", (None, None, size0), 0))
        ax.set_xlabel("posted queue length, all traversed")
        ax.set_ylabel("M messages/s, 25 in flight")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, "preposted_tput_len.png",
             f"Pre-posted queue: throughput against queue length, {int(size0)} B", "")
    # 3. unexpected queue (paper 000 fig. 6)
    vs = [n for n in names if points_of(agg, n, "unexpected")]
    if vs:
        sizes = sorted({k[3] for k in agg if k[1] == "unexpected"})
        fig, axs = plt.subplots(1, len(sizes), figsize=(4.5 * len(sizes), 3.8), squeeze=False)
        for ax, size in zip(axs[0], sizes):
            for v in vs:
                line(ax, v, series(v, "unexpected", (None, size, None), 0))
            ax.set_title(f"{int(size)} B")
            ax.set_xlabel("unexpected queue length")
            ax.grid(alpha=0.3)
        axs[0][0].set_ylabel("one-way latency incl. posting (us)")
        axs[0][-1].legend(fontsize=8)
        save(fig, "unexpected.png", "Unexpected queue: latency against its length",
             "Paper 000, figure 6: the time to post each receive, a search of the whole "
             "unexpected queue, is part of the latency. The unexpected messages are empty.")
    # 4. message rate (paper 004 figs. 3 and 4)
    vs = [n for n in names if points_of(agg, n, "rate")]
    if vs:
        fig, axs = plt.subplots(1, 2, figsize=(11, 4))
        for v in vs:
            line(axs[0], v, series(v, "rate", (1, None, None), 1))
            line(axs[1], v, series(v, "rate", (None, 8, None), 0))
        axs[0].set_xscale("log", base=2)
        axs[0].set_xlabel("message size (bytes)")
        axs[0].set_title("1 pair, over message size")
        axs[1].set_xlabel("sender/receiver pairs (2 pairs: 4 processes on 2 cores)")
        axs[1].set_title("8 B, over pair count")
        axs[1].set_xticks(sorted({k[2] for k in agg if k[1] == "rate"}))
        for ax in axs:
            ax.set_ylabel("M messages/s")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        save(fig, "rate.png", "Message rate (OSU style)",
             "Paper 004, figures 3 and 4: 64 messages in flight per pair.")
    # 5. latency and bandwidth
    vs = [n for n in names if points_of(agg, n, "p2p_latency")]
    if vs:
        fig, axs = plt.subplots(1, 3, figsize=(16, 4))
        for v in vs:
            line(axs[0], v, [p for p in series(v, "p2p_latency", (None, None, None), 0)
                             if p[0] > 0])
            line(axs[1], v, series(v, "p2p_bw", (None, None, None), 0))
            line(axs[2], v, series(v, "p2p_bibw", (None, None, None), 0))
        for ax, yl in zip(axs, ("one-way latency (us)", "bandwidth (GB/s)",
                                "bi-directional bandwidth, both ways (GB/s)")):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel(yl)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        axs[0].set_yscale("log")
        for label, size in sorted((cross or {}).items(), key=lambda c: c[1]):
            for ax in axs:
                ax.axvline(size, color="grey", linestyle=":", linewidth=1)
            at = f"{size // 1024} KiB" if size % 1024 == 0 else f"{size} B"
            axs[1].annotate(f"{label}\n{at}", (size, 0.98), rotation=90,
                            xycoords=("data", "axes fraction"), fontsize=6, va="top", ha="right",
                            color="grey")
        save(fig, "p2p.png", "Ping-pong latency, streaming and bi-directional bandwidth "
             "(bench/mpi/p2p.c)",
             "Dotted lines: onic's protocol boundaries as this run set them (onic-info): "
             "eager through the shm lane up to the eager limit, rendezvous by RMA (cma) "
             "above the lane's limit, two cores copying from ONIC_SHM_ASSIST_MIN.")
    # 6. overlap
    vs = [n for n in names if points_of(agg, n, "overlap_send")]
    if vs:
        fig, axs = plt.subplots(1, 4, figsize=(16, 3.8), sharey=True)
        for ax, (test, size) in zip(axs, [(t, s) for t in ("overlap_send", "overlap_recv")
                                          for s in (262144, 1048576)]):
            for v in vs:
                line(ax, v, [p for p in series(v, test, (size, None, None), 1) if p[0] > 0])
            ax.set_xscale("log")
            ax.set_title(f"{'sender' if test.endswith('send') else 'receiver'}, "
                         f"{size // 1024} KB")
            ax.set_xlabel("computation (us)")
            ax.grid(alpha=0.3)
        axs[0].set_ylabel("overlap = computation / total")
        axs[-1].legend(fontsize=8)
        save(fig, "overlap.png", "Overlap against computation time (ProOnE 4.1)",
             "Isend or Irecv, compute W, Wait at the measured side; 1 is full overlap.")
    vs = [n for n in names if points_of(agg, n, "skew")]
    if vs:
        fig, axs = plt.subplots(1, 2, figsize=(11, 4))
        for v in vs:
            line(axs[0], v, series(v, "skew", (None, None, None), 1))
            line(axs[1], v, series(v, "bypass", (None, None, None), 1))
        axs[0].set_ylabel("time per iteration (us)")
        axs[0].set_title("skew, 1 MB (ProOnE 4.2)")
        axs[1].set_ylabel("wait after computing (us)")
        axs[1].set_title("application bypass, 10 x 50 KB (Portals 5.3)")
        for ax in axs:
            ax.set_xlabel("computation (us)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        save(fig, "skew_bypass.png", "Skew and application bypass against computation time",
             "Skew: Irecv, blocking Send, compute, Wait on both ranks. Bypass: rank 0 computes "
             "while a batch moves both ways, then waits.")
    vs = [n for n in names if points_of(agg, n, "avail_send")]
    if vs:
        fig, axs = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
        for ax, test in zip(axs, ("avail_send", "avail_recv")):
            for v in vs:
                line(ax, v, series(v, test, (None, None, None), 0))
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes)")
            ax.set_title("sender" if test.endswith("send") else "receiver")
            ax.grid(alpha=0.3)
        axs[0].set_ylabel("availability")
        axs[-1].legend(fontsize=8)
        save(fig, "availability.png", "Availability against message size (ProOnE 4.3)",
             "The share of a transfer's time left to the application: 1 - overhead / "
             "transfer time, with a computation twice the transfer time between post and wait.")
    # 7. applications
    vs = [n for n in names if points_of(agg, n, "jacobi_wait")]
    if vs:
        fig, axs = plt.subplots(1, 3, figsize=(15, 4))
        for v in vs:
            line(axs[0], v, series(v, "jacobi_wait", (None, None, None), 1))
            line(axs[1], v, series(v, "jacobi_iter", (None, None, None), 1))
            line(axs[2], v, series(v, "cannon", (None, None, None), 0))
        axs[0].set_ylabel("MPI_Waitall per iteration (us)")
        axs[0].set_title("Jacobi: time in wait")
        axs[1].set_ylabel("time per iteration (us)")
        axs[1].set_title("Jacobi: whole iteration")
        for ax in axs[:2]:
            ax.set_xlabel("halo (bytes)")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
        axs[2].set_xlabel("matrix size N")
        axs[2].set_ylabel("time (ms)")
        axs[2].set_title("Cannon's multiplication")
        axs[2].set_yscale("log")
        for ax in axs:
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        save(fig, "apps.png", "Application kernels (paper 001, section 4.4)",
             "2D Jacobi with non-blocking halo exchange and MPI_Waitall, and Cannon's "
             "algorithm with the shifts in flight during each step's multiplication.")
    # 8. the matching engines alone
    if floor.get("match"):
        rows = floor["match"]
        scen = sorted({(r["scenario"], r["mix"]) for r in rows if r["mix"].startswith("0%")})
        if scen:
            fig, axs = plt.subplots(1, len(scen), figsize=(5.5 * len(scen), 3.8), squeeze=False)
            for ax, (s, mix) in zip(axs[0], scen):
                for e in sorted({r["engine"] for r in rows}):
                    pts = sorted((int(r["depth"]), float(r["ns_median"])) for r in rows
                                 if r["scenario"] == s and r["mix"] == mix and r["engine"] == e)
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=e)
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_title(f"{s} queue, {mix}")
                ax.set_xlabel("queue depth")
                ax.set_ylabel("ns per operation")
                ax.grid(alpha=0.3)
                ax.legend(fontsize=8)
            save(fig, "match.png", "The matching engines alone (onic-bench-match)",
                 "One arriving header against a posted queue, one receive against an "
                 "unexpected queue, per engine and depth, in-process.")
    return figs


def points_of(agg, v, test):
    return any(k[0] == v and k[1] == test for k in agg)


# --------------------------------------------------------------------------
# The report.

def table_html(head, rows, cls=""):
    h = "".join(f"<th>{html.escape(str(c))}</th>" for c in head)
    b = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                for r in rows)
    return f"<table class='{cls}'><tr>{h}</tr>{b}</table>"


def report(out, args, mtxt, rows, names, figs, notes, failures, floor, agg, variants, secs,
           instr, start, replay):
    p = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>onic benchmark report</title>",
         "<style>body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}"
         "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;"
         "padding:3px 8px;font-size:13px}th{background:#eee}td:not(:first-child){text-align:"
         "right}.met{background:#dfd}.notmet{background:#fdd}pre{background:#f6f6f6;"
         "padding:8px;font-size:12px;overflow-x:auto}img{max-width:100%}</style></head><body>",
         f"<h1>onic against MPICH and Open MPI ({'quick' if args.quick else 'full'} suite)</h1>",
         f"<p>{len(agg)} points, {args.runs} run(s) each, {secs / 60:.1f} minutes. Every figure "
         "comes from this invocation's runs: the median over the runs of each run's median, "
         "with the lowest and highest run as the spread. The raw lines are in "
         "<a href='raw.csv'>raw.csv</a>, the aggregate in <a href='summary.csv'>summary.csv"
         "</a>.</p>"]
    p.append("<h2>Machine</h2><pre>" + html.escape(mtxt) + "</pre>")
    extra = []
    for v in variants:
        if v.missing and v.needs:
            extra.append(f"{v.name}: {v.missing}; the report has no column for it.")
    extra.append("Message rate over 2 pairs runs 4 processes on this machine's "
                 f"{os.cpu_count()} cores: oversubscribed, so it measures sharing a core as "
                 "much as the MPI.")
    extra.append("Cannon's multiplication runs a 2 x 2 grid of blocks on 2 processes (two "
                 "blocks each); Jacobi a 1 x 2 grid of processes.")
    notes = extra + notes
    for name, cmd, rc, err in failures:
        notes.append(f"FAILED: {name}: {cmd} exited {rc}: {err.strip()[-600:]}")
    sums = {}
    for k, x in agg.items():
        if k[1] == "jacobi_sum":
            sums.setdefault(k[2:], {})[k[0]] = x[0]
    for pt, per in sums.items():
        if len(set(round(x, 6) for x in per.values())) > 1:
            notes.append(f"Jacobi checksums differ for block {int(pt[0])}: {per}")
    p.append("<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) +
             "</ul>")
    p.append("<h2>Summary: onic / the better of MPICH and Open MPI</h2>")
    head = ["figure"] + names + ["onic / best other", "target", "status"]
    trs = []
    for fig, vals, ratio, target, status, note, subject in rows:
        cls = "met" if status == "met" else "notmet" if status == "not met" else ""
        r = f"{ratio:.2f}x" if ratio is not None else "-"
        if subject != "onic" and ratio is not None:
            r += f" ({subject})"
        cells = [html.escape(fig + (f" [{note}]" if note else ""))] + \
            [fmt(vals.get(n)) for n in names] + [r, html.escape(target or ""),
                                                   html.escape(status or "")]
        trs.append(f"<tr class='{cls}'>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    p.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>" +
             "".join(trs) + "</table>")
    p.append("<p>Ratios below 1 are better for latencies and times, above 1 for rates, "
             "overlap and availability. Growth rows compare each MPI with itself.</p>")
    for name, title, caption in figs:
        p.append(f"<h2>{html.escape(title)}</h2><p>{html.escape(caption)}</p>"
                 f"<img src='{name}' alt='{html.escape(title)}'>")
    if not figs:
        p.append("<p>No plots: matplotlib is not available to /usr/bin/python3 "
                 "(scripts/install-deps.sh bench installs python3-matplotlib).</p>")
    p.append("<h2>The machine's floors (onic-bench-xport)</h2>")
    if floor.get("xport"):
        x = floor["xport"]
        p.append("<p>Raw floors written in the benchmark (a cache-line ping-pong, a plain ring, "
                 "the queue designs, memcpy) and onic's transport measured against them in one "
                 "run; ratio_to_raw is onic's share of its floor.</p>")
        p.append(table_html(list(x[0].keys()), [list(r.values()) for r in x]))
    else:
        p.append("<pre>" + html.escape(floor.get("xport_error", "not run")) + "</pre>")
    p.append("<h2>The matching engines (onic-bench-match)</h2>")
    if floor.get("match"):
        m = floor["match"]
        p.append(table_html(list(m[0].keys()), [list(r.values()) for r in m]))
    else:
        p.append("<pre>" + html.escape(floor.get("match_error", "not run")) + "</pre>")
    p.append("<h2>Message-rate analysis (paper 004, table I)</h2>")
    p.append(rate_analysis_html(agg, names, floor))
    p.append("<h2>Instructions per 8-byte message (bench/mpi/instr.py)</h2>")
    if instr.get("table"):
        t = instr["table"]
        p.append(f"<p>{html.escape(t['title'])}</p>" + table_html(t["head"], t["rows"]) +
                 "".join(f"<p>{html.escape(n)}</p>" for n in t["notes"]))
    else:
        p.append("<pre>" + html.escape(instr.get("error", "not run")) + "</pre>")
    p.append("<h2>Start-up wall time (bench/startup/startup.py)</h2>")
    if start.get("table"):
        t = start["table"]
        p.append(f"<p>{html.escape(t['title'])}</p>" + table_html(t["head"], t["rows"]) +
                 "".join(f"<p>{html.escape(n)}</p>" for n in t["notes"]))
    else:
        p.append("<pre>" + html.escape(start.get("error", "not run")) + "</pre>")
    p.append("<h2>Match traces of real programs (bench/replay/programs.py)</h2>")
    if replay.get("tables"):
        for t in replay["tables"]:
            p.append(f"<p>{html.escape(t['title'])}</p>" + table_html(t["head"], t["rows"]))
    else:
        p.append("<pre>" + html.escape(replay.get("error", "not run")) + "</pre>")
    p.append("<h2>What the parameters mean</h2>")
    p.append(table_html(["test", "p1", "p2", "p3", "value", "better"],
                        [[t] + list(d) for t, d in TESTS.items()]))
    p.append("</body></html>")
    with open(os.path.join(out, "report.html"), "w") as f:
        f.write("\n".join(p))


def rate_analysis(agg, names, floor):
    """Paper 004 table I for each MPI: the 'link' is the rate at which the raw
    lane floor moves 64-byte cache lines between the two cores."""
    link = None
    for r in floor.get("xport") or []:
        if r["measure"] == "raw_lane_of_1_64B_slots":
            link = float(r["value"]) * 64
    rows = []
    for n in names:
        rs = [x for x in (val(agg, n, "rate", 1, 8, 64), val(agg, n, "rate", 2, 8, 64))
              if x is not None]
        if not rs:
            continue
        mr = max(rs) * 1e6
        peak = link / 8 if link else None
        rows.append([n, f"{link / 1e9:.2f} GB/s" if link else "-",
                     f"{peak / 1e6:.0f}" if peak else "-", f"{mr / 1e6:.2f}",
                     f"{100 * mr / peak:.2f}%" if peak else "-",
                     f"{link / mr:.1f} B" if link else "-"])
    return rows


def rate_analysis_html(agg, names, floor):
    rows = rate_analysis(agg, names, floor)
    if not rows:
        return "<p>No message-rate data.</p>"
    return ("<p>As the paper does for a network, per MPI: the 'link' here is the machine's "
            "cache-line path between the two cores, the 64-byte slots per second of the raw "
            "lane floor (onic-bench-xport) times 64 bytes; the theoretical peak is that "
            "bandwidth over an 8-byte payload; the sustained rate the best 8-byte rate over "
            "1 and 2 pairs; the calculated overhead the link bandwidth over the sustained "
            "rate, i.e. the bytes of link time each message costs.</p>" +
            table_html(["MPI", "link bandwidth", "theoretical peak (M msgs/s, 8 B)",
                        "sustained (M msgs/s)", "of peak", "calculated overhead per message"],
                       rows))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer points and runs (make demo)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results"))
    ap.add_argument("--runs", type=int, default=None,
                    help="repetitions of every program per MPI (default 3, quick 2)")
    ap.add_argument("--only", default="", help="groups to run: " + ",".join(sorted(ALL)) +
                    ",instr,startup,replay")
    ap.add_argument("--timeout", type=int, default=None, help="seconds per program run")
    ap.add_argument("--xport-csv", default=None,
                    help="onic-bench-xport's CSV from this file (its --csv-file), not run again")
    args = ap.parse_args()
    args.runs = args.runs or (2 if args.quick else 3)
    args.timeout = args.timeout or (180 if args.quick else 900)
    build = os.path.abspath(args.build)
    t0 = time.time()
    load_start = open("/proc/loadavg").read().strip()
    out = os.path.join(args.out, datetime.datetime.now().strftime("%Y-%m-%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)

    variants = ONIC_VARIANTS + OTHER_VARIANTS
    ms = detect(build, variants)
    if ms["onic"].missing:
        sys.exit(f"suite: onic is not built ({ms['onic'].missing}); run make first")
    notes = [f"{m.name} is not installed and could not be: {m.missing}; the report shows the "
             "others." for m in ms.values() if m.missing]
    log(f"suite: {'quick' if args.quick else 'full'}, {args.runs} run(s), writing {out}")
    exes, bnotes = build_programs(ms, os.path.join(build, "bench-suite"),
                                  {j.prog for j in jobs(args.quick)})
    notes += bnotes
    floor = floors(build, args.quick, out, args.xport_csv)
    instr = instructions(build, out) if not args.only or "instr" in args.only.split(",") \
        else {"error": "not run (--only)"}
    start = startup(build, args.quick, out) if not args.only or \
        "startup" in args.only.split(",") else {"error": "not run (--only)"}
    replay = replay_programs(build, args.quick, out) if not args.only or \
        "replay" in args.only.split(",") else {"error": "not run (--only)"}
    raw, failures = run_suite(args, ms, variants, exes, out)
    failures += [(n, "bench/mpi/instr.py", 1, why) for n, why in instr.get("failed", {}).items()]
    failures += [(n, "bench/startup/startup.py", 1, why)
                 for n, why in start.get("failed", {}).items()]
    failures += [(n, "bench/replay/programs.py", 1, why)
                 for n, why in replay.get("failed", {}).items()]
    agg = aggregate(raw)
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "test", "p1", "p2", "p3", "median_of_runs", "min_run",
                    "max_run", "runs"])
        for k in sorted(agg):
            w.writerow(list(k) + list(agg[k]))
    rows, names = summary_rows(agg, variants, instr, start)
    text = summary_text(rows, names)
    try:
        figs = plots(agg, names, floor, out, crossovers(build))
    except ImportError as e:
        figs = []
        notes.append(f"no plots: matplotlib cannot be imported ({e})")
    mtxt = machine(ms, variants, args, load_start)
    with open(os.path.join(out, "machine.txt"), "w") as f:
        f.write(mtxt)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text + "\n")
    secs = time.time() - t0
    report(out, args, mtxt, rows, names, figs, notes, failures, floor, agg, variants, secs,
           instr, start, replay)
    print(f"\nSummary (onic / the better of MPICH and Open MPI; medians of {args.runs} runs):\n")
    print(text)
    for v in variants:
        if v.missing:
            print(f"\n{v.name}: {v.missing}")
    for name, cmd, rc, err in failures:
        print(f"\nFAILED: {name}: {cmd} (exit {rc})\n{err.strip()[-400:]}")
    print(f"\nReport: {os.path.join(out, 'report.html')}  ({secs / 60:.1f} minutes)")
    # A failed onic run is an onic bug to see (make demo fails); another
    # MPI's failure is only reported.
    onic_names = {v.name for v in variants if v.mpi == "onic"}
    return 1 if any(f[0] in onic_names for f in failures) else 0


if __name__ == "__main__":
    sys.exit(main())
