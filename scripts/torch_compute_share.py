#!/usr/bin/env python3
"""Each rank's compute share of the step in a torch.distributed.pipelining job, straight from the
raw Kineto JSON (no meshscope code), to check `meshscope analyze` against.

compute  the union of the outermost cpu_op events of the thread that runs the pipeline actions
         which lie inside a compute action range ("PP:<s>F<m>", B, I, W, "(..)OVERLAP_F_B", GPipe's
         "Forward i"/"Backward i"), torch's transfer ops (c10d::*, gloo:*) left out;
         Schedule1F1B writes no ranges: there, every outermost op of that thread except the
         transfer ops.
step     ProfilerStep#N: from the earliest begin to the latest end over the ranks, per N (a step
         that starts before the previous one ends starts at that end).
share    compute inside the steps / the steps' total length.

  python3 scripts/torch_compute_share.py DIR [--json]      (DIR: rank*.json[.gz] of one job)
"""

import glob
import gzip
import json
import os
import re
import sys

ACTION = re.compile(r"^PP:(\d+(F|B|I|W)\d+|\(.*\)OVERLAP_F_B)$|^(Forward|Backward) \d+$")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def union(intervals):
    out = []
    for b, e in sorted(intervals):
        if out and b <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([b, e])
    return out


def clip_length(intervals, windows):
    total = 0
    for b, e in intervals:
        for wb, we in windows:
            total += max(0, min(e, we) - max(b, wb))
    return total


def rank_data(trace):
    ev = [e for e in trace["traceEvents"] if e.get("ph") == "X" and "dur" in e]
    ns = lambda us: round(float(us) * 1000)  # ts, dur are µs with ns digits
    steps = {}
    for e in ev:
        if e.get("name", "").startswith("ProfilerStep#"):
            steps[int(e["name"][13:])] = (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
    actions = [e for e in ev if e.get("cat") == "user_annotation" and ACTION.match(e["name"])]
    tids = {}
    for e in actions:
        tids[e["tid"]] = tids.get(e["tid"], 0) + 1
    p2p = {}
    for e in ev:
        if e.get("name") in ("c10d::send", "c10d::recv_"):
            p2p[e["tid"]] = p2p.get(e["tid"], 0) + 1
    main = max(tids, key=tids.get) if tids else (max(p2p, key=p2p.get) if p2p else None)
    ranges = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in actions if e["tid"] == main)
    ops = sorted(((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]) for e in ev
                  if e.get("cat") == "cpu_op" and e["tid"] == main), key=lambda o: (o[0], -o[1]))
    outer, end = [], None
    for b, e, n in ops:
        if end is not None and b < end:
            continue
        end = e
        outer.append((b, e, n))
    compute = []
    for b, e, n in outer:
        if n.startswith("c10d::") or n.startswith("gloo:"):
            continue
        if not ranges or any(rb <= b and e <= re_ for rb, re_ in ranges):
            compute.append((b, e))
    return trace.get("distributedInfo", {}).get("rank"), steps, union(compute), bool(ranges)


def main():
    folder = sys.argv[1]
    files = sorted(glob.glob(os.path.join(folder, "*.json")) + glob.glob(os.path.join(folder, "*.json.gz")))
    ranks = [rank_data(load(f)) for f in files]
    windows = {}
    for _, steps, _, _ in ranks:
        for k, (b, e) in steps.items():
            wb, we = windows.get(k, (b, e))
            windows[k] = (min(wb, b), max(we, e))
    # As meshscope's analysis windows: in order, a step starting before the previous one ends
    # starts at that end (no time counts twice).
    trimmed, cursor = [], None
    for b, e in sorted(windows.values()):
        b = b if cursor is None else max(b, cursor)
        if e > b:
            trimmed.append((b, e))
            cursor = e
    windows = trimmed
    total = sum(e - b for b, e in windows)
    out = {}
    for rank, _, compute, had_ranges in sorted(ranks, key=lambda r: r[0]):
        out[rank] = {"compute_ns": clip_length(compute, windows), "window_ns": total,
                     "share": clip_length(compute, windows) / total if total else 0.0,
                     "action_ranges": had_ranges}
    if "--json" in sys.argv:
        print(json.dumps(out))
    else:
        for rank, v in out.items():
            print(f"rank {rank}: compute {v['compute_ns']} ns of {v['window_ns']} ns = {100 * v['share']:.2f}%")


if __name__ == "__main__":
    main()
