#!/usr/bin/env python3
"""Real programs traced and replayed: the suite's application kernels (Jacobi,
Cannon), its OSU-style programs (bench/rate, bench/mpi/p2p.c), the queue
benchmarks and the MPI test programs, each run once under ONIC_TRACE with
small inputs, then onic-replay (the models only: their figures do not
depend on this machine's load) on its traces. Prints, per program, the
lookups, the longest queue, the entries a list walk inspects, what each
model of the papers' NICs costs against the NIC processor's walk, and the
queue-depth histogram of its lookups; bench/suite.py puts the same in its
report.

    bench/replay/programs.py [--build build] [--json FILE] [--only NAMES]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# name, processes, program (a source under bench/ to build with onicc, or a
# file in the build directory), its arguments
PROGRAMS = [
    ("jacobi", 4, "bench/apps/jacobi.c", ["--n", "128", "--iters", "50", "--reps", "1"]),
    ("cannon", 4, "bench/apps/cannon.c", ["--n", "256", "--reps", "1"]),
    ("osu_rate", 2, "bench/rate/rate.c", ["--sizes", "8,1024", "--iters", "200", "--reps", "1"]),
    ("osu_latency", 2, "bench/mpi/p2p.c", ["latency", "5"]),
    ("osu_bw", 2, "bench/mpi/p2p.c", ["bw", "3"]),
    ("preposted", 2, "bench/queue/preposted.c",
     ["lat", "--lens", "0,100,1000", "--fracs", "0.5,1", "--sizes", "8", "--rounds", "3"]),
    ("unexpected", 2, "bench/queue/unexpected.c",
     ["--lens", "0,100,1000", "--sizes", "8", "--rounds", "3"]),
    ("mpi_tests", 4, "@tests/mpi_tests", ["all"]),
]


def last_lines(text, n=3):
    """The end of a tool's output, where its error is: its last lines, as one."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return " / ".join(lines[-n:])[-300:]


def run_program(build, work, exes, name, np, prog, args):
    """One program traced and replayed: onic-replay's JSON, with the run's
    description, or {"name", "error"}."""
    res = {"name": name, "processes": np, "command": " ".join([os.path.basename(prog)] + args)}
    try:
        return run_program_in(build, work, exes, res, name, np, prog, args)
    except OSError as e:   # a tool missing from the build, say
        res["error"] = f"cannot run: {e}"
        return res


def run_program_in(build, work, exes, res, name, np, prog, args):
    if prog.startswith("@"):
        exe = os.path.join(build, prog[1:])
    else:
        exe = exes.get(prog)
        if exe is None:
            exe = os.path.join(work, os.path.basename(prog)[:-2])
            cc = subprocess.run([os.path.join(build, "onicc"), "-O2", os.path.join(ROOT, prog),
                                 "-lm", "-o", exe], capture_output=True, text=True)
            if cc.returncode != 0:
                res["error"] = f"onicc {prog}: exit {cc.returncode}: {last_lines(cc.stderr)}"
                return res
            exes[prog] = exe
    tdir = os.path.join(work, "t-" + name)
    os.makedirs(tdir)
    env = dict(os.environ, ONIC_TRACE=tdir)
    r = subprocess.run([os.path.join(build, "onicrun"), "--timeout", "300", "-n", str(np), exe] +
                       args, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        res["error"] = f"the traced run failed: exit {r.returncode}: {last_lines(r.stderr)}"
        return res
    jpath = os.path.join(work, name + ".json")
    r = subprocess.run([os.path.join(build, "onic-replay"), "--quiet", "--no-measure", "--json",
                        jpath, tdir], capture_output=True, text=True)
    if not os.path.exists(jpath):
        res["error"] = f"onic-replay: exit {r.returncode}: {last_lines(r.stderr or r.stdout)}"
        return res
    with open(jpath) as f:
        res.update(json.load(f))
    if r.returncode != 0:   # a damaged trace: replayed up to the damage, which it names
        res["warning"] = f"onic-replay: exit {r.returncode}: {last_lines(r.stderr)}"
    shutil.rmtree(tdir)
    return res


def model(res, name):
    return next((m for m in res.get("models", []) if m["name"] == name), {})


def tables(results):
    """The summary table and one depth table per program: (title, head, rows)."""
    head = ["program", "processes", "lookups", "longest queue", "entries a walk inspects",
            "NIC processor us", "ALPU us", "ALPU / NIC", "PIM / NIC"]
    rows = []
    for r in results:
        if "error" in r:
            rows.append([r["name"], r["processes"], "failed (below)"] + [""] * 6)
            continue
        nic, alpu, pim = model(r, "nic"), model(r, "alpu"), model(r, "pim")
        ag = r.get("against_nic") or {}
        rows.append([r["name"], r["processes"], nic.get("lookups", 0), r["longest_queue"],
                     "%.2f" % model(r, "list").get("inspected", 0),
                     "%.1f" % nic.get("lookups_us", 0), "%.1f" % alpu.get("lookups_us", 0),
                     "%.3f" % ag["alpu"] if "alpu" in ag else "-",
                     "%.3f" % ag["pim"] if "pim" in ag else "-"])
    out = [("Match traces of real programs, replayed through the papers' NIC models "
            "(lookup time in the models; ratios below 1 save time against the NIC "
            "processor's list walk)", head, rows)]
    for r in results:
        if "error" in r:
            continue
        kinds = r["depth_kinds"]
        out.append((f"{r['name']} ({r['processes']} processes, {r['command']}): lookups by queue "
                    "length when they began", ["length"] + kinds,
                    [[d["length"]] + d["lookups"] for d in r["depth"]]))
    return out


def cell(c):
    return str(c).replace("|", "/").replace("\n", " ")


def markdown(tabs, results):
    lines = []
    for title, head, rows in tabs:
        lines += ["", title, "", "| " + " | ".join(cell(h) for h in head) + " |",
                  "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    for r in results:
        for what in ("error", "warning"):
            if what in r:
                lines += ["", f"{'FAILED' if what == 'error' else 'Warning'}: {r['name']}: "
                          f"{r[what]}"]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json", help="also write the results and tables to this file")
    ap.add_argument("--only", default="", help="programs to run, by name (comma-separated)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    only = set(filter(None, args.only.split(",")))
    unknown = only - {p[0] for p in PROGRAMS}
    if unknown:
        sys.exit("programs.py: unknown program(s) %s; the programs are %s" %
                 (", ".join(sorted(unknown)), ", ".join(p[0] for p in PROGRAMS)))
    work = tempfile.mkdtemp(prefix="onic-programs-")
    exes = {}
    try:
        results = [run_program(build, work, exes, *p) for p in PROGRAMS
                   if not only or p[0] in only]
    finally:
        shutil.rmtree(work)
    tabs = tables(results)
    print(markdown(tabs, results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"programs": results,
                       "tables": [{"title": t, "head": h, "rows": r} for t, h, r in tabs]}, f,
                      indent=1)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
