#!/usr/bin/env python3
"""Writes torch.distributed.pipelining's own schedules as its CSV, for meshscope's tests.

torch computes a schedule's per-rank order (`pipeline_order`) when the schedule object is built,
before any process group or tensor is touched, so this builds each schedule class on stand-in stage
objects that carry only what the constructors read (stage index, stage count, pp size, rank,
submodule) and dumps the orders with torch's own `_dump_csv` (compute_only and compute_comms). The
single-stage schedules (GPipe, 1F1B) have no `_dump_csv`; their `_get_pipeline_order()` is written
with the same `csv.writer` call.

    /work/venv/bin/python scripts/torch_schedule_orders.py tests/fixtures/torch_orders

With --load PP STAGES_PER_RANK STYLE MICROBATCHES FILE [FORMAT] it goes the other way: torch's
_PipelineScheduleRuntime reads a CSV (as `meshscope schedules --dump F --format torch-csv
[--torch-format compute_comms]` writes it; FORMAT compute_only, the default, or compute_comms),
lowers a compute_only one with its own passes, checks it, and dumps it back; it prints whether
torch accepted it and, for compute_only, wrote the same bytes.

    meshscope schedules --dump zb-v --pp 4 -m 8 --format torch-csv -o zbv.csv
    /work/venv/bin/python scripts/torch_schedule_orders.py --load 4 2 v 8 zbv.csv
"""
import csv
import os
import sys

import torch
from torch.distributed.pipelining import schedules as S
from torch.distributed.pipelining._utils import generate_rank_to_stage_mapping


class StandInStage:
    """The attributes schedule constructors read; nothing here runs."""

    def __init__(self, stage_index, num_stages, pp, rank):
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.group_size = pp
        self.group_rank = rank
        self.submod = torch.nn.Identity()
        self.is_first = stage_index == 0
        self.is_last = stage_index == num_stages - 1
        self.stage_index_to_group_rank = None


# meshscope family name -> (torch class, stages per rank is fixed?, placement style)
MULTI = {
    "interleaved": (S.ScheduleInterleaved1F1B, "loop"),
    "looped-bfs": (S.ScheduleLoopedBFS, "loop"),
    "interleaved-zb": (S.ScheduleInterleavedZeroBubble, "loop"),
    "zb-v": (S.ScheduleZBVZeroBubble, "v"),
    "dualpipe-v": (S.ScheduleDualPipeV, "v"),
}
SINGLE = {"gpipe": S.ScheduleGPipe, "1f1b": S.Schedule1F1B}

# (family, pp, microbatches, stages per rank)
SHAPES = [
    ("gpipe", 2, 4, 1), ("gpipe", 4, 8, 1), ("gpipe", 3, 5, 1),
    ("1f1b", 2, 4, 1), ("1f1b", 4, 8, 1), ("1f1b", 3, 5, 1),
    ("interleaved", 2, 4, 2), ("interleaved", 4, 8, 2), ("interleaved", 2, 4, 3),
    ("interleaved", 4, 6, 2), ("interleaved", 4, 3, 2), ("interleaved", 4, 5, 2),
    ("interleaved", 4, 10, 2), ("interleaved", 3, 4, 3),
    ("looped-bfs", 2, 4, 2), ("looped-bfs", 4, 8, 2), ("looped-bfs", 3, 5, 3),
    ("interleaved-zb", 2, 4, 2), ("interleaved-zb", 4, 8, 2), ("interleaved-zb", 2, 6, 3),
    ("interleaved-zb", 4, 4, 2), ("interleaved-zb", 4, 8, 1), ("interleaved-zb", 3, 6, 1),
    ("zb-v", 2, 4, 2), ("zb-v", 4, 8, 2), ("zb-v", 3, 6, 2), ("zb-v", 4, 4, 2),
    ("dualpipe-v", 2, 4, 2), ("dualpipe-v", 4, 8, 2), ("dualpipe-v", 3, 7, 2),
]


def write_rows(path, order):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        for rank in order:
            writer.writerow(order[rank])


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for family, pp, m, v in SHAPES:
        base = os.path.join(out_dir, f"{family}_pp{pp}_m{m}_v{v}")
        if family in SINGLE:
            sched = SINGLE[family](StandInStage(0, pp, pp, 0), m)
            write_rows(base + ".pipeline_order.csv", sched._get_pipeline_order())
            continue
        cls, style = MULTI[family]
        n = pp * v
        local = generate_rank_to_stage_mapping(pp, n, style)[0]
        sched = cls([StandInStage(s, n, pp, 0) for s in local], m)
        sched._dump_csv(base + ".compute_only.csv", format="compute_only")
        sched._dump_csv(base + ".compute_comms.csv", format="compute_comms")
    print(f"torch {torch.__version__}: {len(SHAPES)} shapes written to {out_dir}")


def load(pp, per_rank, style, m, path, fmt="compute_only"):
    n = pp * per_rank
    local = generate_rank_to_stage_mapping(pp, n, style)[0]
    runtime = S._PipelineScheduleRuntime([StandInStage(s, n, pp, 0) for s in local], m)
    runtime._load_csv(path, format=fmt)
    lowered = sum(len(r) for r in runtime.pipeline_order_with_comms.values())
    if fmt != "compute_only":
        print(f"{path}: torch {torch.__version__} loaded it ({fmt}), {lowered} actions")
        return 0
    back = path + ".torch"
    runtime._dump_csv(back, format="compute_only")
    same = open(back, newline="").read() == open(path, newline="").read()
    os.remove(back)
    print(f"{path}: torch {torch.__version__} loaded it, lowered to {lowered} actions, "
          f"dumped back {'the same bytes' if same else 'DIFFERENT bytes'}")
    return 0 if same else 1


if __name__ == "__main__":
    if len(sys.argv) in (7, 8) and sys.argv[1] == "--load":
        a = sys.argv[2:]
        sys.exit(load(int(a[0]), int(a[1]), a[2], int(a[3]), a[4], *a[5:]))
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/torch_orders")
