#!/usr/bin/env python3
"""Writes torch.distributed.pipelining's own schedules as its CSV, for meshscope's tests.

torch computes a schedule's per-rank order (`pipeline_order`) when the schedule object is built,
before any process group or tensor is touched, so this builds each schedule class on stand-in stage
objects that carry only what the constructors read (stage index, stage count, pp size, rank,
submodule) and dumps the orders with torch's own `_dump_csv` (compute_only and compute_comms). The
single-stage schedules (GPipe, 1F1B) have no `_dump_csv`; their `_get_pipeline_order()` is written
with the same `csv.writer` call.

    /work/venv/bin/python scripts/torch_schedule_orders.py tests/fixtures/torch_orders
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
    ("interleaved", 4, 6, 2),
    ("looped-bfs", 2, 4, 2), ("looped-bfs", 4, 8, 2), ("looped-bfs", 3, 5, 3),
    ("interleaved-zb", 2, 4, 2), ("interleaved-zb", 4, 8, 2), ("interleaved-zb", 2, 6, 3),
    ("interleaved-zb", 4, 4, 2),
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


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/torch_orders")
