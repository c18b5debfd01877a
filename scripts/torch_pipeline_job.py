#!/usr/bin/env python3
"""A small torch.distributed.pipelining job on CPU (gloo), profiled per rank with torch.profiler.

Writes, into --out:
  rank<R>.json                 one Kineto trace per rank (with distributedInfo)
  schedule.compute_only.csv    torch's own CSV of the schedule (pipeline_order), rank 0 writes it
  schedule.compute_comms.csv   with torch's SEND/RECV lowering, where the schedule class has one
  job.meta                     the job's shape (schedule, pp, microbatches, sizes, stage placement)

Example:
  python scripts/torch_pipeline_job.py --schedule Interleaved1F1B --pp 4 --microbatches 8 \
      --stages-per-rank 2 --hidden 64 --batch 16 --steps 1 --out /tmp/job
"""

import argparse
import csv
import json
import os
import socket
import sys
from contextlib import nullcontext

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed import pipelining as pipe
from torch.profiler import ProfilerActivity, profile

# The V-shaped schedules put stages r and 2*pp-1-r on rank r; the others loop: r, r+pp, r+2pp, ...
V_SHAPED = {"ZBVZeroBubble", "DualPipeV"}
SINGLE_STAGE = {"GPipe", "1F1B"}


def schedule_class(name):
    """torch's class for a schedule name, or None when this torch has no such class."""
    return getattr(pipe.schedules, "Schedule" + name, None)


def stages_of_rank(rank, pp, stages_per_rank, v_shaped):
    if v_shaped:
        return [rank, 2 * pp - 1 - rank]
    return [rank + k * pp for k in range(stages_per_rank)]


class Block(nn.Module):
    """A transformer-like block of several ops: LayerNorm, Linear, GELU, Linear, a residual add."""

    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.up = nn.Linear(hidden, 2 * hidden)
        self.act = nn.GELU()
        self.down = nn.Linear(2 * hidden, hidden)

    def forward(self, x):
        return x + self.down(self.act(self.up(self.norm(x))))


class Checkpointed(nn.Module):
    """The stage's layers under activation checkpointing (recomputed in the backward)."""

    def __init__(self, inner, reentrant):
        super().__init__()
        self.inner = inner
        self.reentrant = reentrant

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.inner, x, use_reentrant=self.reentrant)


class PairStage(nn.Module):
    """A stage that passes two tensors to the next one (two sends per microbatch and pass): it
    takes (h, skip) but on the first stage, and returns (h, skip) but on the last."""

    def __init__(self, inner, first, last):
        super().__init__()
        self.inner = inner
        self.first = first
        self.last = last

    def forward(self, h, skip=None):
        out = self.inner(h if skip is None else h + skip)
        return out if self.last else (out, 0.5 * h)


def stage_module(stage, layers_per_stage, hidden, model="mlp", checkpoint="none",
                 num_stages=1, pair=False):
    torch.manual_seed(1000 + stage)
    layers = []
    for _ in range(layers_per_stage):
        if model == "block":
            layers.append(Block(hidden))
        else:
            layers += [nn.Linear(hidden, hidden), nn.ReLU()]
    mod = nn.Sequential(*layers)
    if checkpoint != "none":
        mod = Checkpointed(mod, reentrant=checkpoint == "reentrant")
    if pair:
        mod = PairStage(mod, first=stage == 0, last=stage == num_stages - 1)
    return mod


def dump_schedule_csvs(sched, out):
    """torch's own CSV of the schedule. The multi-stage classes write it themselves (_dump_csv,
    compute_only, and compute_comms after their comm lowering); the single-stage ones (GPipe,
    1F1B) have a pipeline_order but no _dump_csv, so their rows are written exactly as
    PipelineScheduleMulti._dump_csv writes them (csv.writer, one row per rank)."""
    made = []
    only = os.path.join(out, "schedule.compute_only.csv")
    if isinstance(sched, pipe.schedules.PipelineScheduleMulti):
        sched._dump_csv(only, format="compute_only")
        made.append("compute_only")
        if getattr(sched, "pipeline_order_with_comms", None) is not None:
            sched._dump_csv(os.path.join(out, "schedule.compute_comms.csv"), format="compute_comms")
            made.append("compute_comms")
    elif getattr(sched, "pipeline_order", None) is not None:
        with open(only, "w", newline="") as f:
            writer = csv.writer(f)
            for rank in sched.pipeline_order:
                writer.writerow(sched.pipeline_order[rank])
        made.append("compute_only")
    return made


def worker(rank, args, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=args.dp * args.pp)
    # dp > 1: replica d runs pipeline ranks d*pp .. d*pp+pp-1 (its own "pp" process group); the
    # ranks holding the same pipeline rank form a "dp" group that averages gradients after a step.
    # Every rank creates every group (torch requires it), in the same order: the pp groups
    # first, or the dp groups first with --dp-groups-first (the order pg_config lists them in).
    # --pp-outer: pp the outer mesh dimension (torchtitan's order), so replica d runs ranks
    # d, d+dp, d+2dp, ... and the ranks of one pipeline rank (a dp group) are adjacent.
    if args.pp_outer:
        pp_rank, replica = rank // args.dp, rank % args.dp
    else:
        pp_rank, replica = rank % args.pp, rank // args.pp

    def global_rank(d, r):
        return r * args.dp + d if args.pp_outer else d * args.pp + r

    pp_group = dp_group = None
    if args.dp > 1:
        def make_pp_groups():
            nonlocal pp_group
            for d in range(args.dp):
                members = [global_rank(d, r) for r in range(args.pp)]
                g = dist.new_group(members, group_desc=f"pp{d}")
                if d == replica:
                    pp_group = g

        def make_dp_groups():
            nonlocal dp_group
            for r in range(args.pp):
                members = [global_rank(d, r) for d in range(args.dp)]
                g = dist.new_group(members, group_desc=f"dp{r}")
                if r == pp_rank:
                    dp_group = g

        for make in ((make_dp_groups, make_pp_groups) if args.dp_groups_first
                     else (make_pp_groups, make_dp_groups)):
            make()
    v_shaped = args.schedule in V_SHAPED
    per_rank = 1 if args.schedule in SINGLE_STAGE else (2 if v_shaped else args.stages_per_rank)
    num_stages = args.pp * per_rank
    my_stages = stages_of_rank(pp_rank, args.pp, per_rank, v_shaped)
    device = torch.device("cpu")
    stages = []
    if args.frontend == "tracer":
        # torch's tracing frontend: the whole model, split at each stage's first module by
        # pipeline(), and each stage built from the traced pipe (GraphModule submodules).
        whole = nn.Sequential(*[stage_module(s, args.layers_per_stage, args.hidden, args.model)
                                for s in range(num_stages)])
        split = {str(s): pipe.SplitPoint.BEGINNING for s in range(1, num_stages)}
        example = torch.randn(args.batch // args.microbatches, args.hidden)
        traced = pipe.pipeline(whole, mb_args=(example,), split_spec=split)
        for s in my_stages:
            stages.append(traced.build_stage(s, device, group=pp_group))
    else:
        for s in my_stages:
            mod = stage_module(s, args.layers_per_stage, args.hidden, args.model,
                               args.checkpoint, num_stages, args.two_tensors)
            # Dynamic metadata mode: torch infers shapes from the first microbatch.
            stages.append(pipe.PipelineStage(mod, s, num_stages, device, group=pp_group))
    loss_fn = nn.MSELoss()
    cls = schedule_class(args.schedule)
    if args.schedule in SINGLE_STAGE:
        sched = cls(stages[0], args.microbatches, loss_fn=loss_fn)
    else:
        sched = cls(stages, args.microbatches, loss_fn=loss_fn)

    torch.manual_seed(7)
    x = torch.randn(args.batch, args.hidden)
    y = torch.randn(args.batch, args.hidden)
    first = 0 in my_stages
    last = (num_stages - 1) in my_stages

    params = [prm for st in stages for prm in st.submod.parameters()]
    optimizer = torch.optim.SGD(params, lr=0.01) if args.optimizer else None

    def one_step():
        # --optimizer: a training step as users write it, inside a range of their own.
        with torch.profiler.record_function("train_step") if args.optimizer else nullcontext():
            for _ in range(args.accumulate):  # --accumulate: several schedule runs a step
                pipeline_step()
            if optimizer is not None:
                optimizer.step()
                optimizer.zero_grad()

    def pipeline_step():
        kwargs = {}
        if last:  # schedule.eval computes the loss too where the schedule has a loss_fn
            kwargs["target"] = y
            kwargs["losses"] = []
        run = sched.eval if args.eval else sched.step  # --eval: torch's forward-only iteration
        if first:
            run(x, **kwargs)
        else:
            run(**kwargs)
        if args.eval:
            return
        if dp_group is not None:
            for st in stages:
                for prm in st.submod.parameters():
                    if prm.grad is not None:
                        dist.all_reduce(prm.grad, group=dp_group)

    for _ in range(args.warmup):
        one_step()
    dist.barrier()
    # A profiler schedule makes prof.step() mark each step as ProfilerStep#N (the step windows).
    trace_file = os.path.join(args.out, f"rank{rank}.json")
    if args.tensorboard:
        # torch's own handler: files named <host>_<pid>.<time>.pt.trace.json, as users write them.
        ready = torch.profiler.tensorboard_trace_handler(args.out)
    else:
        ready = lambda p: p.export_chrome_trace(trace_file)  # noqa: E731
    skipped = args.profiler_wait + args.profiler_warmup
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=None if args.no_profiler_schedule else torch.profiler.schedule(
            wait=args.profiler_wait, warmup=args.profiler_warmup, active=args.steps, repeat=1),
        on_trace_ready=None if args.no_profiler_schedule else ready,
        with_stack=args.with_stack,  # Python frames around the ops (python_function events)
        record_shapes=args.record_shapes,
        profile_memory=args.profile_memory,
    ) as prof:
        for _ in range(skipped + args.steps):
            one_step()
            if not args.no_profiler_schedule:
                prof.step()
    if args.no_profiler_schedule:
        ready(prof)  # no ProfilerStep#N ranges: the trace is one window
    dist.barrier()
    if rank == 0:
        made = dump_schedule_csvs(sched, args.out)
        placement = {}
        for r in range(args.pp):
            for s in stages_of_rank(r, args.pp, per_rank, v_shaped):
                placement[str(s)] = r
        job = {
            "torch": torch.__version__,
            "schedule": args.schedule,
            "class": cls.__name__,
            "pp": args.pp,
            "dp": args.dp,
            "pp_outer": args.pp_outer,
            "microbatches": args.microbatches,
            "stages_per_rank": per_rank,
            "num_stages": num_stages,
            "hidden": args.hidden,
            "layers_per_stage": args.layers_per_stage,
            "batch": args.batch,
            "steps": args.steps,
            "model": args.model,
            "checkpoint": args.checkpoint,
            "two_tensors": args.two_tensors,
            "eval": args.eval,
            "accumulate": args.accumulate,
            "frontend": args.frontend,
            "optimizer": args.optimizer,
            "profiler": {"wait": args.profiler_wait, "warmup": args.profiler_warmup,
                         "schedule": not args.no_profiler_schedule,
                         "record_shapes": args.record_shapes, "with_stack": args.with_stack,
                         "profile_memory": args.profile_memory,
                         "tensorboard_trace_handler": args.tensorboard},
            "warmup": args.warmup,
            "stage_to_rank": placement,
            "csv_formats": made,
        }
        with open(os.path.join(args.out, "job.meta"), "w") as f:
            json.dump(job, f, indent=1)
    dist.destroy_process_group()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--schedule", required=True,
                   help="GPipe, 1F1B, Interleaved1F1B, ZBVZeroBubble, DualPipeV, InterleavedZeroBubble, LoopedBFS")
    p.add_argument("--pp", type=int, default=4, help="ranks (one process each)")
    p.add_argument("--dp", type=int, default=1, help="pipeline replicas (dp x pp processes)")
    p.add_argument("--microbatches", type=int, default=4)
    p.add_argument("--stages-per-rank", type=int, default=2, help="looped schedules (V-shaped: always 2)")
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--layers-per-stage", type=int, default=2)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=1, help="profiled steps")
    p.add_argument("--warmup", type=int, default=1, help="unprofiled steps first")
    p.add_argument("--dp-groups-first", action="store_true",
                   help="with --dp > 1, create the dp process groups before the pp groups")
    p.add_argument("--pp-outer", action="store_true",
                   help="with --dp > 1, pp the outer mesh dimension: replica d on ranks d, d+dp, ...")
    p.add_argument("--with-stack", action="store_true",
                   help="record Python frames too (torch.profiler's with_stack)")
    p.add_argument("--model", choices=["mlp", "block"], default="mlp",
                   help="mlp: Linear+ReLU per layer; block: LayerNorm, Linear, GELU, Linear, residual")
    p.add_argument("--checkpoint", choices=["none", "reentrant", "nonreentrant"], default="none",
                   help="activation checkpointing of each stage's layers")
    p.add_argument("--two-tensors", action="store_true",
                   help="stages pass two tensors to the next (two sends per microbatch and pass)")
    p.add_argument("--eval", action="store_true", help="run schedule.eval (forward only) each step")
    p.add_argument("--accumulate", type=int, default=1, help="schedule runs per profiled step")
    p.add_argument("--frontend", choices=["manual", "tracer"], default="manual",
                   help="manual: a PipelineStage per stage module; tracer: torch's pipeline() split")
    p.add_argument("--optimizer", action="store_true",
                   help="an SGD step and zero_grad after each pipeline step, all in a train_step range")
    p.add_argument("--record-shapes", action="store_true", help="torch.profiler's record_shapes")
    p.add_argument("--profile-memory", action="store_true", help="torch.profiler's profile_memory")
    p.add_argument("--profiler-wait", type=int, default=0,
                   help="steps the profiler schedule waits before recording (numbers ProfilerStep#N from it)")
    p.add_argument("--profiler-warmup", type=int, default=0, help="profiler schedule warmup steps")
    p.add_argument("--no-profiler-schedule", action="store_true",
                   help="profile without a schedule and prof.step(): no ProfilerStep#N ranges")
    p.add_argument("--tensorboard", action="store_true",
                   help="write the traces with torch.profiler.tensorboard_trace_handler")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if schedule_class(args.schedule) is None:
        print(f"torch {torch.__version__} has no schedule class Schedule{args.schedule}", file=sys.stderr)
        return 2
    if args.batch % args.microbatches:
        print(f"--batch {args.batch} is not divisible by --microbatches {args.microbatches}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    mp.spawn(worker, args=(args, free_port()), nprocs=args.dp * args.pp, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
