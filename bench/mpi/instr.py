#!/usr/bin/env python3
"""Count the instructions of the MPI calls of an 8-byte message with
valgrind's callgrind, for onic, MPICH and Open MPI, and print them side by
side as a Markdown table.

    bench/mpi/instr.py [--build build] [--mpis onic,mpich,openmpi] [--rounds 4,12]
                       [--multiple] [--json FILE]

bench/mpi/instr.c is built from the same source with each MPI's compiler
wrapper (build/onicc, mpicc.mpich, mpicc.openmpi) and run once as 2
processes, each under valgrind --tool=callgrind, by that MPI's launcher
(onicrun --bind core, mpirun.mpich -bind-to core, mpirun.openmpi
--bind-to core). The program turns collection on around each measured call
only and dumps the count of each group of calls of one kind separately
(see its header), once per round. With I(N) the instructions of a kind in
the first N rounds, a call's figure is

    (I(N2) - I(N1)) / (N2 - N1) / 32

instructions (callgrind's Ir) per message, with what the collection
toggles add subtracted, so one-time costs (first calls, lazy allocations)
cancel. I(N1) and I(N2) come from the same run's dumps: separate runs of N1
and N2 rounds would not cancel a first round whose cost varies from run to
run (onic's first MPI_Recv round did, by 2000 instructions). Counts are
those of the calling thread, inside the call, and the same from run to run
once past the first rounds (Open MPI's vary a little from round to round:
the table says how much), so one run per MPI is enough. MPI_Waitall's
figure is its one call over 32 requests divided by 32, and so is
MPI_Win_flush's after 32 puts or gets. The one-sided rows are of a window
made by MPI_Win_allocate on the two ranks of one node, which onic and Open
MPI keep in shared memory: a put or get there is a copy, and its figure is
what the MPI adds to it. An MPI that is not
installed or does not build is left out, with a note; a failed run makes
the exit status 1. The callgrind files of the last run stay in
BUILD/bench-mpi/instr-<mpi>.callgrind/: each part file is one group of
calls, named in its "Trigger" line, and callgrind_annotate FILE shows where
they spend their instructions.

With --multiple each MPI runs a second time with MPI_Init_thread asking
for MPI_THREAD_MULTIPLE (the same calls, from one thread), and a second
table gives those counts and each MPI's MULTIPLE / SINGLE ratio: what the
thread level costs a message when only one thread communicates."""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "bench", "mpi", "instr.c")
B = 32  # messages per group, as in instr.c

# (key, label): the table's rows; keys are instr.c's dump names, or totals.
ROWS = [
    ("send-exp", "sender MPI_Send (expected order)"),
    ("irecv", "receiver MPI_Irecv"),
    ("waitall", "receiver MPI_Waitall (one over 32, per message)"),
    ("total-exp", "total, expected order"),
    ("send-unexp", "sender MPI_Send (unexpected order)"),
    ("recv", "receiver MPI_Recv"),
    ("total-unexp", "total, unexpected order"),
    ("send-exp-any", "MPI_ANY_SOURCE: sender MPI_Send (expected order)"),
    ("irecv-any", "MPI_ANY_SOURCE: receiver MPI_Irecv"),
    ("waitall-any", "MPI_ANY_SOURCE: receiver MPI_Waitall (per message)"),
    ("total-exp-any", "MPI_ANY_SOURCE: total, expected order"),
    ("send-unexp-any", "MPI_ANY_SOURCE: sender MPI_Send (unexpected order)"),
    ("recv-any", "MPI_ANY_SOURCE: receiver MPI_Recv"),
    ("total-unexp-any", "MPI_ANY_SOURCE: total, unexpected order"),
    ("isend", "sender MPI_Isend (receives posted)"),
    ("isend-waitall", "sender MPI_Waitall over its MPI_Isend requests (per message)"),
    ("total-isend", "sender, non-blocking: MPI_Isend + MPI_Waitall"),
    ("test-empty", "receiver MPI_Test that finds nothing (its message not sent yet)"),
    ("put", "one-sided, shared window: origin MPI_Put"),
    ("put-flush", "one-sided: MPI_Win_flush after 32 puts (per put)"),
    ("total-put", "one-sided: MPI_Put + MPI_Win_flush"),
    ("get", "one-sided, shared window: origin MPI_Get"),
    ("get-flush", "one-sided: MPI_Win_flush after 32 gets (per get)"),
    ("total-get", "one-sided: MPI_Get + MPI_Win_flush"),
]
TOTALS = {"total-exp": ("send-exp", "irecv", "waitall"),
          "total-unexp": ("send-unexp", "recv"),
          "total-exp-any": ("send-exp-any", "irecv-any", "waitall-any"),
          "total-unexp-any": ("send-unexp-any", "recv-any"),
          "total-isend": ("isend", "isend-waitall"),
          "total-put": ("put", "put-flush"),
          "total-get": ("get", "get-flush")}
# The kinds measured as one call over the B operations of a group.
ONE_CALL = ("waitall", "flush")


def mpis(build):
    onicrun = os.path.join(build, "onicrun")
    env_ompi = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return [
        ("onic", "onic", [os.path.join(build, "onicc")],
         [onicrun, "-n", "2", "--bind", "core", "--timeout", "300"], None),
        ("mpich", "MPICH", ["mpicc.mpich"], ["mpirun.mpich", "-n", "2", "-bind-to", "core"], None),
        ("openmpi", "Open MPI", ["mpicc.openmpi"],
         ["mpirun.openmpi", "-n", "2", "--bind-to", "core"], env_ompi),
    ]


def note(msg):
    print("note: " + msg, file=sys.stderr, flush=True)


def build_all(build, keys):
    out = os.path.join(build, "bench-mpi")
    os.makedirs(out, exist_ok=True)
    ready, missing = [], {}
    for key, name, cc, run, env in mpis(build):
        if key not in keys:
            continue
        absent = [t for t in (cc[0], run[0]) if shutil.which(t) is None and
                  not os.path.exists(t)]
        if absent:
            missing[name] = f"{absent[0]} not found"
            note(f"{name} left out: {absent[0]} not found")
            continue
        exe = os.path.join(out, "instr-" + key)
        r = subprocess.run(cc + ["-O2", "-Wall", "-Wextra", "-o", exe, SRC],
                           capture_output=True, text=True)
        if r.returncode != 0:
            missing[name] = "building failed: " + r.stderr.strip()[-300:]
            note(f"{name} left out: building failed:\n{r.stderr}")
            continue
        ready.append((key, name, run, env, exe))
    return ready, missing


def run_one(build, key, run, env, exe, rounds, multiple=False):
    """One run under callgrind: {pid: {dump name: [instructions of each round]}}."""
    d = os.path.join(build, "bench-mpi",
                     f"instr-{key}{'-multiple' if multiple else ''}.callgrind")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    cmd = run + ["valgrind", "-q", "--tool=callgrind", "--collect-atstart=no",
                 "--instr-atstart=no", f"--callgrind-out-file={d}/callgrind.out.%p",
                 exe, str(rounds)] + (["multiple"] if multiple else [])
    # Its own session, so a run that hangs is stopped with everything it started.
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        err += "\ntimed out after 600 s"
    if p.returncode != 0 or "all checked" not in out:
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {p.returncode}):\n{out}{err}")
    parts = {}  # (pid, part number) -> (dump name, instructions)
    for f in glob.glob(os.path.join(d, "callgrind.out.*.*")):
        _, _, pid, part = os.path.basename(f).split(".")
        label, total = None, None
        with open(f) as fh:
            for line in fh:
                if line.startswith("desc: Trigger: Client Request: "):
                    label = line.split(": ", 3)[3].strip()
                elif line.startswith("totals:"):
                    total = int(line.split()[1])
        if label is not None and total is not None:
            parts[(pid, int(part))] = (label, total)
    # Every kind is dumped once per round, so its n-th dump is round n's.
    counts = {}
    for (pid, _), (label, total) in sorted(parts.items()):
        counts.setdefault(pid, {}).setdefault(label, []).append(total)
    if len(counts) != 2 or any(len(v) != rounds for c in counts.values() for v in c.values()):
        raise RuntimeError(f"{' '.join(cmd)}: expected {rounds} dumps of each kind from 2 "
                           f"processes in {d}")
    return counts


def per_message(counts, n1, n2):
    """{row key: instructions per message} over rounds n1 + 1 to n2, and
    {row key: (lowest, highest)} the same figure of single rounds."""
    res, spread = {}, {}
    for c in counts.values():
        for k, v in c.items():
            if k.startswith("empty"):
                continue
            empty = c["empty-1"] if any(w in k for w in ONE_CALL) else c["empty-B"]
            one = [(v[r] - empty[r]) / B for r in range(n1, n2)]
            res[k] = sum(one) / (n2 - n1)
            spread[k] = (min(one), max(one))
    for t, parts in TOTALS.items():
        if all(p in res for p in parts):
            res[t] = sum(res[p] for p in parts)
    return res, spread


def versions(build):
    def first(cmd, env=None):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=30)
            lines = (r.stdout + r.stderr).strip().splitlines()
            return lines[0].strip() if lines else "?"
        except (OSError, subprocess.TimeoutExpired):
            return "?"
    v = {"onic": first([os.path.join(build, "onic-info")])}
    if shutil.which("mpichversion"):
        m = re.search(r"Version:\s*(\S+)", subprocess.run(
            ["mpichversion"], capture_output=True, text=True).stdout)
        v["MPICH"] = "MPICH " + (m.group(1) if m else "?")
    v["Open MPI"] = first(["mpirun.openmpi", "--version"],
                          dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))
    return v


def fmt(x):
    return "-" if x is None else f"{x:.0f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--mpis", default="onic,mpich,openmpi",
                    help="which MPIs, of onic, mpich, openmpi")
    ap.add_argument("--rounds", default="4,12",
                    help="N1,N2: the figures are of rounds N1 + 1 to N2 of a run of N2")
    ap.add_argument("--multiple", action="store_true",
                    help="also run each MPI under MPI_THREAD_MULTIPLE and compare")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    n1, n2 = (int(x) for x in args.rounds.split(","))
    if not 1 <= n1 < n2:
        sys.exit("--rounds: N1,N2 with 1 <= N1 < N2")
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        sys.exit("valgrind not found (scripts/install-deps.sh bench installs it)")
    vg_version = subprocess.run([valgrind, "--version"], capture_output=True,
                                text=True).stdout.strip()
    ready, missing = build_all(build, args.mpis.split(","))
    if not ready:
        sys.exit("nothing to run")
    figures, spreads, failed = {}, {}, {}
    for key, name, run, env, exe in ready:
        try:
            figures[name], spreads[name] = per_message(
                run_one(build, key, run, env, exe, n2), n1, n2)
        except (RuntimeError, OSError) as e:
            failed[name] = str(e)[-1500:]
            note(f"{name} left out: {e}")
    mt = {}
    for key, name, run, env, exe in ready if args.multiple else []:
        if name not in figures:
            continue
        try:
            mt[name], _ = per_message(run_one(build, key, run, env, exe, n2, True), n1, n2)
        except (RuntimeError, OSError) as e:
            failed[name + " MPI_THREAD_MULTIPLE"] = str(e)[-1500:]
            note(f"{name} under MPI_THREAD_MULTIPLE left out: {e}")
    names = [name for _, name, _, _, _ in ready if name in figures]
    head = ["per 8-byte message"] + names + ["onic / better"]
    rows = []
    for k, label in ROWS:
        vals = {n: figures[n].get(k) for n in names}
        others = [v for n, v in vals.items() if n != "onic" and v is not None]
        ratio = ""
        if vals.get("onic") is not None and others and min(others) > 0:
            ratio = f"{vals['onic'] / min(others):.2f}x"
        rows.append([label] + [fmt(vals[n]) for n in names] + [ratio])
    title = (f"Instructions per 8-byte message (callgrind Ir, {vg_version}): one run of "
             f"{n2} rounds of {B} messages per order, (I({n2}) - I({n1})) / ({n2 - n1} x {B})")
    print(f"\n### {title}\n")
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    notes = ["Counts are instructions (Ir) executed by the calling thread inside each call, "
             "what the collection toggles add subtracted. Expected order: the receives posted "
             "before the sends; unexpected: the sends done before the receives; MPI_Isend: "
             "the sender's non-blocking calls (and its wait) with the receives posted, as in "
             "the message-rate benchmarks. The ranks "
             "take turns through shared memory, so no measured call waits for the other rank. "
             "onic / better: onic over the lower of the others."]
    vary = []
    for n in names:  # how far single rounds stray from the figure
        dev = {k: max(abs(lo - figures[n][k]), abs(hi - figures[n][k])) / figures[n][k]
               for k, (lo, hi) in spreads[n].items() if figures[n][k] > 0}
        k = max(dev, key=dev.get) if dev else None
        vary.append(f"{n} {100 * dev[k]:.1f}% ({k})" if k and dev[k] >= 0.0005 else f"{n} 0%")
    notes.append(f"Single rounds {n1 + 1} to {n2} differ from these figures by at most: " +
                 ", ".join(vary) + ".")
    notes += [f"{n} left out: {why}" for n, why in list(missing.items()) + list(failed.items())]
    print()
    for n in notes:
        print(n.split("\n")[0])
    mt_rows = []
    if mt:
        mt_names = [n for n in names if n in mt]
        print(f"\n### The same calls from one thread of an MPI_THREAD_MULTIPLE process\n")
        head_mt = ["per 8-byte message"] + [f"{n} MULTIPLE" for n in mt_names] + \
                  [f"{n} MULTIPLE / SINGLE" for n in mt_names]
        print("| " + " | ".join(head_mt) + " |")
        print("|---|" + "---:|" * (len(head_mt) - 1))
        for k, label in ROWS:
            vals = [mt[n].get(k) for n in mt_names]
            ratios = [f"{mt[n][k] / figures[n][k]:.3f}x" if mt[n].get(k) and figures[n].get(k)
                      else "" for n in mt_names]
            row = [label] + [fmt(v) for v in vals] + ratios
            mt_rows.append(row)
            print("| " + " | ".join(row) + " |")
    if args.json:
        v = versions(build)
        with open(args.json, "w") as f:
            json.dump({"valgrind": vg_version, "unit": "instructions (Ir) per message",
                       "rounds": [n1, n2], "messages_per_round": B,
                       "versions": {n: v.get(n, "?") for n in names},
                       "figures": figures, "single_rounds": spreads,
                       "missing": missing, "failed": failed, "multiple": mt,
                       "table": {"title": title, "head": head, "rows": rows, "notes": notes}},
                      f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
