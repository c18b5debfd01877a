#!/usr/bin/env python3
"""Where the time goes in each published row, against the row's error (docs/ACCURACY.md).

Runs the published-rows test for every row's error, then `meshscope predict --json` on each row's
config for its breakdown (the device with the busiest compute stream), and prints each row's
terms as shares of its step, then the correlation of the error with each share over the
development rows, the held-back rows, all rows and the rows of the PyTorch data-parallel stacks
(FSDP and DDP: all but megatron-2022 and llama3-2024). Last, for llm-foundry's rows (development
and held back), a least-squares split of each row's error between the part of the step the model
gives to attention (with checkpointing: attention and recomputation) and the rest: error =
a * (1 - share) + b * share, the rows without and with checkpointing apart.

    scripts/accuracy_terms.py [BUILD_DIR]      # default: build
"""
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help")):
    print(__doc__.strip())
    sys.exit(0 if len(sys.argv) == 2 else 2)
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
if not os.path.isfile(os.path.join(BUILD, "tests", "sim_tests")):
    sys.exit(f"accuracy_terms.py: no {BUILD}/tests/sim_tests: build it first "
             "(cmake --build build -j2 --target sim_tests meshscope) or name the build directory")
TERMS = ["gemm", "attention", "norm", "elementwise", "recompute", "tp_communication",
         "sharded_copies", "weight_casts", "grad_accumulation", "optimizer_step", "idle"]


def rows_and_errors():
    """(config, error %) per row, development rows first, and how many those are."""
    out = subprocess.run(
        [os.path.join(BUILD, "tests", "sim_tests"),
         "--gtest_filter=PredictPublished.EveryRowStaysWithinItsRecordedError"],
        capture_output=True, text=True, check=True).stdout
    rows, development = [], None
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0].endswith(".json") and fields[-2] == "error":
            rows.append((fields[0], float(fields[-1].rstrip("%"))))
        elif line.startswith("development set: mean |error| over "):
            development = int(fields[5])  # "... over N rows: E%"
    if development is None:
        sys.exit("accuracy_terms: the test printed no development-set line")
    return rows, development


def shares(config):
    out = subprocess.run(
        [os.path.join(BUILD, "meshscope"), "predict", "--json", "--config",
         os.path.join(ROOT, "sim", "predict", "configs", config)],
        capture_output=True, text=True, check=True).stdout
    b = json.loads(out)["breakdown"]
    step = b["step_time_s"]
    s = {k: v / step for k, v in b["compute_s"].items()}
    s["idle"] = b["idle_s"] / step
    s["elementwise+norm"] = s["elementwise"] + s["norm"]
    return s


def correlation(xs, ys):
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sx = sum((x - mx) ** 2 for x in xs) ** 0.5
    sy = sum((y - my) ** 2 for y in ys) ** 0.5
    if sx == 0 or sy == 0:
        return float("nan")
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy)


def split(rows, share):
    """Least squares of error = a * (1 - x) + b * x over (x, error): (a, b, rms residual)."""
    xs = [share(d[2]) for d in rows]
    ys = [d[1] for d in rows]
    s11 = sum((1 - x) ** 2 for x in xs)
    s22 = sum(x * x for x in xs)
    s12 = sum((1 - x) * x for x in xs)
    t1 = sum((1 - x) * y for x, y in zip(xs, ys))
    t2 = sum(x * y for x, y in zip(xs, ys))
    det = s11 * s22 - s12 * s12
    a, b = (t1 * s22 - t2 * s12) / det, (s11 * t2 - s12 * t1) / det
    rms = statistics.mean([(y - a * (1 - x) - b * x) ** 2 for x, y in zip(xs, ys)]) ** 0.5
    return a, b, rms


def main():
    rows, development = rows_and_errors()
    data = [(config, error, shares(config)) for config, error in rows]
    print("%-44s %6s " % ("row", "error") + " ".join("%7s" % t[:7] for t in TERMS))
    for config, error, s in data:
        print("%-44s %+5.1f%% " % (config[:44], error) +
              " ".join("%6.1f%%" % (100 * s.get(t, 0)) for t in TERMS))
    torch_dp = [d for d in data if not d[0].startswith(("korthikanti", "llama3"))]
    groups = [("development", data[:development]), ("held back", data[development:]),
              ("all", data), ("FSDP/DDP", torch_dp)]
    print("\ncorrelation of the error with each term's share of the step:")
    for name, rows in groups:
        errors = [d[1] for d in rows]
        cells = ["%s %+.2f" % (t, correlation([d[2][t] for d in rows], errors))
                 for t in ["gemm", "attention", "elementwise+norm", "recompute", "sharded_copies",
                           "idle"]]
        print("  %-11s (%2d rows): %s" % (name, len(rows), ", ".join(cells)))
    foundry = [d for d in data if d[0].startswith("llmfoundry")]
    plain = [d for d in foundry if d[2]["recompute"] == 0]
    checkpointed = [d for d in foundry if d[2]["recompute"] > 0]
    print("\nllm-foundry, error = a * (1 - share) + b * share, least squares:")
    for name, rows, share in [
            ("no checkpointing", plain, lambda s: s["attention"]),
            ("full checkpointing", checkpointed, lambda s: s["attention"] + s["recompute"])]:
        if len(rows) >= 2:
            a, b, rms = split(rows, share)
            print("  %-18s (%2d rows): a %+.1f%%, b %+.1f%%, rms residual %.1f points" %
                  (name, len(rows), a, b, rms))


if __name__ == "__main__":
    main()
