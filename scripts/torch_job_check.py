#!/usr/bin/env python3
"""What meshscope says of torch pipelining jobs (folders made by scripts/torch_pipeline_job.py)
beside what the job was: one markdown row per job.

  python3 scripts/torch_job_check.py [--bin build/meshscope] JOB_DIR...

The job's side comes from its job.meta, torch's own CSV of the schedule and the raw Kineto JSON
(no meshscope code): world size, stages, microbatches, the c10d::send ops of all ranks. meshscope's
side from `analyze --json` (ranks read as devices, stages and microbatches of their compute),
`schedules --from-trace --format torch-csv` against torch's CSV (compute_comms where torch wrote
one; Schedule1F1B's is compared once more with the last rank's forwards numbered from 0, as its
runtime runs them and its pipeline_order does not), `convert` (send -> recv flows between ranks)
and `predict --from-trace --json` (measured step, the replay of the schedule that ran).
"""

import glob
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile


def meshscope(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def error_text(err, job):
    """meshscope's error, less the folder it names and its explanation after " (" or ";"."""
    if not err.strip():
        return "?"
    text = err.strip().splitlines()[0].split("error: ", 1)[-1]
    for prefix in (job + ": ", job.rstrip("/") + ": "):
        text = text[len(prefix):] if text.startswith(prefix) else text
    return re.split(r" \(|;", text)[0]


def sends_in_files(job):
    sends = 0
    for f in glob.glob(os.path.join(job, "*.json")) + glob.glob(os.path.join(job, "*.json.gz")):
        with (gzip.open if f.endswith(".gz") else open)(f, "rt") as h:
            trace = json.load(h)
        sends += sum(1 for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("name") == "c10d::send")
    return sends


def compare_csv(binary, job, meta):
    torch_csv = os.path.join(job, "schedule.compute_comms.csv")
    if not os.path.exists(torch_csv):
        torch_csv = os.path.join(job, "schedule.compute_only.csv")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "recovered.csv")
        rc, _, err = meshscope(binary, "schedules", "--from-trace", job, "--format", "torch-csv", "-o", out)
        if rc != 0:
            return "refused: " + error_text(err, job)
        recovered = open(out).read().splitlines()
    rows = open(torch_csv).read().splitlines()
    if recovered == rows:
        return "identical"
    if meta["schedule"] == "1F1B":
        rows[-1] = re.sub(r"(\d+)F(\d+)", lambda m: f"{m.group(1)}F{int(m.group(2)) - 1}", rows[-1])
        if recovered == rows:
            return "identical with the last rank's forwards from 0"
    return "differs"


def row(binary, job):
    meta = json.load(open(os.path.join(job, "job.meta")))
    world = meta["pp"] * meta.get("dp", 1)
    rc, out, err = meshscope(binary, "analyze", "--json", job)
    if rc != 0:
        said = "refused: " + error_text(err, job)
    else:
        a = json.loads(out)
        stages = {p["stage"] for d in a["devices"] for p in d.get("stage_phases", [])}
        # Each rank's microbatches: the most of any of its stages and phases (a zero-bubble
        # schedule's I and W run on some microbatches only).
        mbs = sorted({max((p["microbatches"] for p in d["stage_phases"]), default=0)
                      for d in a["devices"] if d.get("stage_phases")})
        said = f"{len(a['devices'])}/{world} ranks, {len(stages)} stages, microbatches {', '.join(map(str, mbs)) or '-'}"
    with tempfile.TemporaryDirectory() as tmp:
        converted = os.path.join(tmp, "job.json")
        rc, _, err = meshscope(binary, "convert", job, "-o", converted)
        flows = "-"
        if rc == 0:
            events = json.load(open(converted))
            events = events["traceEvents"] if isinstance(events, dict) else events
            starts = {(e.get("cat"), e.get("id")): e.get("pid") for e in events if e.get("ph") == "s"}
            ends = {(e.get("cat"), e.get("id")): e.get("pid") for e in events if e.get("ph") == "f"}
            flows = sum(1 for k, pid in starts.items() if k in ends and ends[k] != pid)
    rc, out, err = meshscope(binary, "predict", "--from-trace", job, "--json")
    if rc == 0:
        p = json.loads(out)
        first = p["rows"][0]
        replay = f"{p['measured_step_ns'] / 1e6:.1f} ms, as run {first['vs_measured_percent']:+.1f}%"
    else:
        replay = "refused: " + error_text(err, job)
    cells = [os.path.basename(job.rstrip("/")), meta["schedule"],
             f"{meta['pp']}" + (f" × dp {meta['dp']}" if meta.get("dp", 1) > 1 else ""),
             meta["microbatches"], meta["num_stages"], said, compare_csv(binary, job, meta),
             f"{flows}/{sends_in_files(job)}", replay]
    return "| " + " | ".join(str(c) for c in cells) + " |"


def main():
    args = sys.argv[1:]
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "meshscope")
    if args[:1] == ["--bin"]:
        binary, args = args[1], args[2:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    print("| job | schedule | pp | microbatches | stages | analyze | schedules --from-trace vs torch's CSV "
          "| flows between ranks / c10d::send | predict --from-trace |")
    print("|---|---|---|---|---|---|---|---|---|")
    for job in args:
        print(row(binary, job))
    return 0


if __name__ == "__main__":
    sys.exit(main())
