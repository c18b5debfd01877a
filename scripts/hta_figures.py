#!/usr/bin/env python3
"""Print HolisticTraceAnalysis's per-rank figures for Kineto traces as JSON, to compare with
`meshscope analyze --window hta --json` (docs/ACCURACY.md, section "HolisticTraceAnalysis").

Usage: hta_figures.py TRACE [TRACE...]   (run with the Python of a venv holding
HolisticTraceAnalysis==0.5.0). Each trace is loaded as its own run (HTA's defaults: the last
ProfilerStep dropped, ns rounding on), so files that all claim rank 0 can be compared one by one.
"""
import json
import logging
import os
import shutil
import sys
import tempfile

logging.disable(logging.WARNING)


def figures(path):
    from hta.trace_analysis import TraceAnalysis

    tmp = tempfile.mkdtemp()
    try:
        name = os.path.basename(path)
        if not (name.endswith(".json") or name.endswith(".gz")):
            name += ".json"
        shutil.copy(path, os.path.join(tmp, name))
        ta = TraceAnalysis(trace_dir=tmp)
        temporal = ta.get_temporal_breakdown(visualize=False)
        overlap = ta.get_comm_comp_overlap(visualize=False)
        ranks = list(temporal["rank"])
        idle, _ = ta.get_idle_time_breakdown(ranks=ranks, visualize=False)
        out = []
        for _, row in temporal.iterrows():
            rank = int(row["rank"])
            ov = overlap[overlap["rank"] == rank]["comp_comm_overlap_pctg"]
            ir = idle[idle["rank"] == rank]
            by_cat = {c: float(ir[ir["idle_category"] == c]["idle_time"].sum())
                      for c in ("host_wait", "kernel_wait", "other")}
            out.append({
                "file": path,
                "rank": rank,
                "kernel_time_us": float(row["kernel_time(us)"]),
                "idle_time_us": float(row["idle_time(us)"]),
                "compute_time_us": float(row["compute_time(us)"]),
                "idle_pctg": float(row["idle_time_pctg"]),
                "compute_pctg": float(row["compute_time_pctg"]),
                "non_compute_pctg": float(row["non_compute_time_pctg"]),
                "comm_comp_overlap_pctg": None if ov.empty or ov.isna().all() else float(ov.iloc[0]),
                "idle_split_us": by_cat,
            })
        return out
    finally:
        shutil.rmtree(tmp)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = []
    for p in sys.argv[1:]:
        rows.extend(figures(p))
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
