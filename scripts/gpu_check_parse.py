#!/usr/bin/env python3
"""gpu_check_parse.py: the reading and arithmetic of scripts/gpu-check.sh, one subcommand each.

    table RESULTS_TSV                 the result rows as an aligned table
    nvidia-lib-dirs                   Python's nvidia/*/lib folders (CUDA wheels), one a line
    kernel-summary KERNEL_CHECK_LOG   "n/m ok; worst rel err by tolerance: ..."
    closed-form P M V FAMILY          the family's bubble fraction with equal stage costs
    cupti-verdict TRACE               "ok|detail" or "FAIL|why" from a CUPTI trace's metadata
    steady-period TRACE               median period between step starts from the second step, ms
    drop-first-step TRACE OUT         TRACE without its first step window, written to OUT
    overhead BASE_MS PROBE_MS NAME    "ok|detail" or "FAIL|detail": the median per-pair overhead
    held-csv RATES_OUT                the held rate of meshscope-kernel-check --sustained (docs/
                                      ACCURACY.md item 52), a table for calibrate --held-rates
    gemm-summary CHECK_JSON RATES_OUT [POWER_CSV]
                                      "ok|detail" or "FAIL|detail": `calibrate --gemm-rates --json`,
                                      the burst and held rates of meshscope-kernel-check
                                      --sustained, and the power samples of the hold
    dev-gemm-summary CHECK SHAPES     "ok|detail": each development row's layer of GEMMs, the model's
                                      time over the measured one (`calibrate --compare` JSON)
    sm-margin-summary CSV...          "ok|detail" or "FAIL|detail": each --sm-margin case's times
                                      over its whole GEMM, one CSV per connections setting
Only the standard library; every subcommand exits 1 with a one-line reason on unreadable input.
"""
import collections
import csv
import glob
import json
import math
import os
import re
import site
import statistics
import sys


def csv_rows(path):
    """A CSV file's rows as dicts by its header, its '#' comment lines skipped."""
    return [r for r in csv.DictReader(l for l in open(path) if not l.startswith("#"))]


def table(path):
    rows = [l.rstrip("\n").split("\t") for l in open(path) if l.strip()]
    head = ["section", "check", "status", "detail"]
    w = [max(len(r[i]) for r in rows + [head]) for i in range(3)]
    for r in [head] + rows:
        print("  ".join(c.ljust(w[i]) if i < 3 else c for i, c in enumerate(r)))


def nvidia_lib_dirs():
    dirs = set(site.getsitepackages() + [site.getusersitepackages()])
    dirs.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    for d in sorted(dirs):
        for lib in sorted(glob.glob(os.path.join(d, "nvidia", "*", "lib"))):
            print(lib)


def kernel_summary(path):
    worst = collections.defaultdict(float)
    n = failed = 0
    for line in open(path):
        m = re.match(r"(ok|FAIL)\s+(\S+)\s+(\w+).*rel_err (\S+)\s+tol (\S+)", line)
        if not m:
            continue
        n += 1
        failed += m.group(1) == "FAIL"
        worst[m.group(5)] = max(worst[m.group(5)], float(m.group(4)))
    print(f"{n - failed}/{n} ok; worst rel err by tolerance: "
          + ", ".join(f"{v:.1e} (tol {k})" for k, v in sorted(worst.items())))


def closed_form(p, m, v, family):
    p, m, v = int(p), int(m), int(v)
    f = {"naive": (p - 1) / p, "gpipe": (p - 1) / (m + p - 1), "1f1b": (p - 1) / (m + p - 1),
         "interleaved": (p - 1) / (v * m + p - 1), "zb-h1": (p - 1) / (3 * m + p - 1)}
    print("%.3f" % f.get(family, 0.0))


def cupti_verdict(path):
    try:
        md = json.load(open(path))["meshscope"]["metadata"]
    except Exception as e:  # a missing or unreadable trace is the verdict itself
        print(f"FAIL|no trace metadata ({e.__class__.__name__})")
        return

    def n(key):
        try:
            return int(md.get(key, "-1"))
        except ValueError:
            return -1

    ops, ext, nvtx = n("cupti_gpu_ops"), n("cupti_ops_by_external_id"), n("cupti_ops_by_nvtx")
    none, dropped = n("cupti_ops_unlabelled"), n("cupti_dropped_records")
    untimed = n("cupti_untimed_records")
    # Ops on no rank's stream (a context or stream id the tracer did not register, a library's
    # internal stream) go to a device of their own, "GPU n (unattributed)", which the analysis
    # counts as a device idle almost throughout: the bubble rows would read high.
    unattributed = n("cupti_unattributed_ops")
    detail = (f"CUPTI {ops} ops: {ext} by external id, {nvtx} by NVTX, {none} unlabelled, "
              f"{max(unattributed, 0)} on no rank's stream; dropped {dropped}, untimed {untimed}")
    if ops <= 0:
        print("FAIL|CUPTI recorded nothing (" + detail + ")")
    elif ext + nvtx <= 0:
        print("FAIL|CUPTI labelled none of its ops (" + detail + ")")
    elif dropped != 0 or unattributed > 0:
        print("FAIL|" + detail)
    else:
        print("ok|" + detail)


def step_begins(path):
    steps = json.load(open(path))["meshscope"]["steps"]
    return [s["begin_ns"] for s in steps]


def steady_period(path):
    begins = step_begins(path)
    periods = [b - a for a, b in zip(begins[1:], begins[2:])]
    if not periods:
        sys.exit(f"{path}: fewer than 3 steps, no steady period")
    print("%.4f" % (statistics.median(periods) / 1e6))


def drop_first_step(path, out):
    d = json.load(open(path))
    d["meshscope"]["steps"] = d["meshscope"]["steps"][1:]
    json.dump(d, open(out, "w"))


def overhead(base, probe, name):
    h = [float(x) for x in base.split()]
    c = [float(x) for x in probe.split()]
    if not h or len(h) != len(c):
        sys.exit("overhead: need as many probe periods as base periods")
    o = sorted((ci - hi) / hi * 100 for hi, ci in zip(h, c))
    m = statistics.median(o)
    print(("ok" if m < 2 else "FAIL")
          + "|overhead median %+.2f%% (pairs %s; target < 2%%); steady period median %.2f ms "
            "host-clock, %.2f ms %s" % (m, " ".join("%+.1f" % x for x in o),
                                        statistics.median(h), statistics.median(c), name))


def read_hold(rates_out):
    """meshscope-kernel-check --sustained's lines: the shape and window, the burst rate (median of
    single calls after idle gaps), the hold's begin and end (Unix seconds), each window's rate."""
    h = {"windows": []}
    for line in open(rates_out):
        f = line.rstrip("\n").split("\t")
        if f[0] == "sustained shape":
            h["shape"], h["window_s"] = [int(x) for x in f[1].split(",")], float(f[2])
        elif f[0] == "burst":
            h["burst"] = float(f[1])
        elif f[0] == "hold":
            h["begin"], h["end"] = float(f[1]), float(f[2])
        elif f[0] == "sustained":
            h["windows"].append(float(f[2]))
    if "shape" not in h or "burst" not in h or not h["windows"]:
        raise ValueError(f"{rates_out}: no held GEMM (meshscope-kernel-check --sustained lines)")
    if not h["burst"] > 0 or not min(h["windows"]) > 0:
        raise ValueError(f"{rates_out}: a burst or window rate of 0: the GEMM was not timed")
    return h


def held_rate(h):
    """docs/ACCURACY.md item 52: the median of the windows that start 10 s or more into the hold;
    the median of its last 2 s instead when that is more than 1% lower (still slowing)."""
    w = h["windows"]
    dt = (h["end"] - h["begin"]) / len(w) if "end" in h else h["window_s"]
    late = [r for i, r in enumerate(w) if i * dt >= 10]
    if not late:
        raise ValueError("the hold lasted under 10 s: no held rate")
    held = statistics.median(late)
    tail = statistics.median(w[-max(1, round(2 / dt)):])
    return (tail, True) if tail < 0.99 * held else (held, False)


def held_csv(rates_out):
    """The held rate as a table for `meshscope calibrate --held-rates`."""
    h = read_hold(rates_out)
    print("b,m,n,k,flops_per_s")
    print("%s,%.6e" % (",".join(str(x) for x in h["shape"]), held_rate(h)[0]))


def power_at_hold(power_csv, h):
    """gpu-check.sh's samples (unix_s, SM MHz, draw W, limit W, default limit W, temperature C) of
    the hold's last 10 s: the median of each but the time, in that order."""
    rows = []
    for r in csv.reader(l for l in open(power_csv) if l.strip() and not l.startswith("#")):
        try:
            rows.append([float(x) for x in r[:6]])
        except ValueError:  # "[N/A]" and the like: a field the board does not report
            continue
    last = [r for r in rows if "end" in h and h["end"] - 10 <= r[0] <= h["end"]]
    if not last:
        return None
    return [statistics.median(r[i] for r in last) for i in range(1, 6)]


def gemm_summary(check_json, rates_out, power_csv=None):
    d = json.load(open(check_json))
    b, m, n, k = d["best_shape"]
    detail = ("%d shapes: the %s model within %.2f%% rms (rate scale %.3f, %.2f us a kernel), "
              "best k_half %g (%.2f%%; the entry's %g); fastest %.1f TFLOP/s at %dx%dx%dx%d"
              % (d["shapes"], d["hardware"], 100 * d["rms"], d["scale"], 1e6 * d["fixed_s"],
                 d["best_k_half"], 100 * d["best_k_half_rms"], d["k_half"],
                 d["best_flops_per_s"] / 1e12, b, m, n, k))
    h = read_hold(rates_out)
    held, slowing = held_rate(h)
    share = held / h["burst"]
    detail += ("; %s held %.0f s: burst %.1f (5 calls after 1 s idle), held %.1f TFLOP/s (%s), "
               "sustained share %.3f of the burst"
               % ("x".join(str(x) for x in h["shape"][1:]), h.get("end", 0) - h.get("begin", 0),
                  h["burst"] / 1e12, held / 1e12,
                  "its last 2 s, still slowing" if slowing else "from 10 s on", share))
    reasons = []  # docs/ACCURACY.md item 52, rule 1: why the share is not adopted
    if share >= 1:
        reasons.append("a share of 1 or more")
    if "held" in d:
        fitted = d["held"]["rows"][0]["fitted_burst_flops_per_s"] if d["held"].get("rows") else 0
        detail += ("; over the %s model's burst %.3f (the entry's %.3f), over it with the fit %.3f"
                   % (d["hardware"], d["held"]["sustained_vs_entry"],
                      d["held"]["entry_sustained"], d["held"]["sustained_vs_fit"]))
        if fitted > 0:
            detail += "; the burst over the fit's rate for it %.3f" % (h["burst"] / fitted)
            if h["burst"] < 0.95 * fitted:
                reasons.append("a burst more than 5% below the fit's rate")
    p = power_at_hold(power_csv, h) if power_csv and os.path.exists(power_csv) else None
    if p is None:
        detail += "; no power samples of the hold"
        reasons.append("no power samples")
    else:
        mhz, draw, limit, default, temp = p
        at_limit = draw >= 0.9 * limit and limit >= default
        detail += ("; last 10 s: %.0f W of a %.0f W limit (default %.0f), SM %.0f MHz, %.0f C: %s"
                   % (draw, limit, default, mhz, temp,
                      "at its power limit" if at_limit else "not at an uncapped power limit"))
        if not at_limit:
            reasons.append("a hold not at an uncapped power limit")
    # Item 52's verdict: adopted for h100-sxm when rule 1 finds nothing; recorded elsewhere.
    if d["hardware"] != "h100-sxm":
        detail += "; item 52: %s's share is recorded beside its catalog's %.3f, not adopted" % (
            d["hardware"], d["held"]["entry_sustained"] if "held" in d else float("nan"))
    elif reasons:
        detail += "; item 52: not adopted (rule 1: %s)" % ", ".join(reasons)
    else:
        detail += "; item 52: h100-sxm's sustained becomes %.3f (rule 2)" % share
    # The shape function fits OpenXLA's H100 table within 2.2%: far worse means a broken
    # measurement (or a GPU the entry does not describe).
    print(("ok" if d["rms"] < 0.05 else "FAIL") + "|" + detail)


def dev_gemm_summary(check_json, shapes_csv):
    """Each development row's layer of GEMMs: the model's time over the measured time, with the
    fit of row 2b's table (`calibrate --compare` JSON, in the order of the shapes file)."""
    rows = json.load(open(check_json))["compare"]["rows"]
    names = csv_rows(shapes_csv)
    if len(names) != len(rows):
        raise ValueError(f"{len(rows)} measured rates for the {len(names)} shapes of {shapes_csv}")
    model_s, measured_s = collections.OrderedDict(), collections.OrderedDict()
    for name, r in zip(names, rows):
        b, m, n, k = r["shape"]
        if [b, m, n, k] != [int(name[c]) for c in "bmnk"]:
            raise ValueError(f"rate {r['shape']} is not shape {name} of {shapes_csv}")
        flops = 2.0 * b * m * n * k
        row = name["row"]
        model_s[row] = model_s.get(row, 0) + flops / r["model_flops_per_s"]
        measured_s[row] = measured_s.get(row, 0) + flops / r["measured_flops_per_s"]
    # Below 1: the model's GEMMs are faster than the GPU's on that row's shapes.
    detail = ", ".join("%s %.3f" % (row.replace("nemo-", ""), model_s[row] / measured_s[row])
                       for row in model_s)
    print("ok|model time over measured, a layer's GEMMs (fit of row 2b; below 1: the model is "
          "fast): " + detail)


def sm_margin_summary(*paths):
    """Each case's times over its whole GEMM's, from meshscope-kernel-check --sm-margin CSVs
    (one per CUDA_DEVICE_MAX_CONNECTIONS setting): "ok|..." or "FAIL|..."."""
    ways = ["whole_target_s", "split_s", "split_target_s", "held_s", "held_target_s"]
    parts, bad = [], []
    for path in paths:
        conn = path.rsplit("conn", 1)[-1].split(".")[0]
        rows = [r for r in csv.DictReader(open(path))]
        if not rows:
            raise ValueError(f"{path}: no cases")
        cases = []
        for r in rows:
            whole = float(r["whole_s"])
            times = [float(r[w]) for w in ways]
            if whole <= 0 or min(times) <= 0:
                bad.append(f"{r['name']} (connections {conn}): a time of 0")
                continue
            if float(r["held_s"]) < 0.98 * float(r["split_s"]):
                bad.append(f"{r['name']} (connections {conn}): faster with SMs held")
            sms, held = int(r["sms"]), int(r["num_sm"])
            short = r["name"].replace("nemo-", "").replace("_fprop", "")
            cases.append("%s %s (cap %.2f)" % (short, "/".join("%.2f" % (t / whole) for t in times),
                                               sms / (sms - held)))
        parts.append(f"connections {conn}: " + ", ".join(cases))
    head = ("over the whole GEMM, target/split/split+target/held/held+target: "
            + "; ".join(parts))
    print(("FAIL|" + "; ".join(bad) + "; " if bad else "ok|") + head)


def fp8_gemm_summary(rates_csv, reference_csv, catalog_json):
    """cuBLASLt's FP8 rates at TileLang's shapes (meshscope-kernel-check --gemm-rates --fp8) beside
    TileLang's own, beside the catalog entry's FP8 model, and the entry's two FP8 figures fitted to
    them the way docs/ACCURACY.md item 50 fitted TileLang's (what item 51's rule reads)."""
    measured, reference = csv_rows(rates_csv), csv_rows(reference_csv)
    if len(measured) != len(reference):
        raise ValueError(f"{len(measured)} rates for the {len(reference)} shapes of {reference_csv}")
    entry = json.load(open(catalog_json))
    peak = float(entry["peak_flops"]["fp8"])
    eff = entry["efficiency"]
    units, tm, tn = entry["compute_units"], eff.get("tile_m", 128), eff.get("tile_n", 256)
    ks, got, ref, model = [], [], [], []
    for m, r in zip(measured, reference):
        b, mm, n, k = (int(m[c]) for c in "bmnk")
        if [b, mm, n, k] != [int(r[c]) for c in "bmnk"]:
            raise ValueError(f"rate {b},{mm},{n},{k} is not shape {dict(r)}")
        if mm % tm or n % tn:
            raise ValueError(f"{mm}x{n} is not a multiple of the {tm}x{tn} tile")
        tiles = (mm // tm) * (n // tn)
        waves = -(-tiles // units)
        wave = tiles / (waves * units)
        ks.append((k, wave))
        got.append(float(m["flops_per_s"]))
        ref.append(float(r["flops_per_s"]))
        model.append(peak * eff["gemm_fp8_max"] * wave * k / (k + eff["fp8_k_half"]))
    if any(g > peak for g in got):
        print("FAIL|an FP8 rate above the entry's dense FP8 peak: not a dense GEMM's time")
        return
    best = None
    for kh in range(0, 1025, 16):
        logs = [math.log(g / (peak * w * k / (k + kh))) for (k, w), g in zip(ks, got)]
        mean = sum(logs) / len(logs)
        rms = math.sqrt(sum((x - mean) ** 2 for x in logs) / len(logs))
        if best is None or rms < best[0]:
            best = (rms, kh, math.exp(mean))
    over_ref = statistics.median(g / r for g, r in zip(got, ref))
    model_over = statistics.median(mo / g for mo, g in zip(model, got))
    print("ok|cuBLASLt e4m3 at %s, K %s: %s TFLOP/s; median %.3f of TileLang's; the %s model's "
          "rate over it median %.3f; fitted to it: gemm_fp8_max %.3f, fp8_k_half %d (rms %.2f%%; "
          "the entry's %.3f, %g)"
          % ("x".join(measured[0][c] for c in "mn"), "/".join(str(k) for k, _ in ks),
             "/".join("%.0f" % (g / 1e12) for g in got), over_ref, entry["name"], model_over,
             best[2], best[1], 100 * best[0], eff["gemm_fp8_max"], eff["fp8_k_half"]))


def wgrad_fp32(shapes_csv, rates_csv, fp32_csv):
    """Each development row's weight-gradient GEMMs added into an fp32 C (Megatron's
    gradient_accumulation_fusion) over the same GEMMs into bf16 (row 2b's development rates), as
    time: above 1, accumulating into fp32 costs that much more (docs/ACCURACY.md, Appendix B)."""
    names, bf16, fp32 = csv_rows(shapes_csv), csv_rows(rates_csv), csv_rows(fp32_csv)
    if len(names) != len(bf16):
        raise ValueError(f"{len(bf16)} rates for the {len(names)} shapes of {shapes_csv}")
    wgrads = [(n, r) for n, r in zip(names, bf16) if n["gemm"].endswith(".wgrad")]
    if len(wgrads) != len(fp32) or not fp32:
        raise ValueError(f"{len(fp32)} fp32 rates for {len(wgrads)} weight gradients")
    bf16_s, fp32_s = collections.OrderedDict(), collections.OrderedDict()
    for (name, r), a in zip(wgrads, fp32):
        shape = [int(name[c]) for c in "bmnk"]
        if shape != [int(r[c]) for c in "bmnk"] or shape != [int(a[c]) for c in "bmnk"]:
            raise ValueError(f"rates {dict(r)} and {dict(a)} are not shape {dict(name)}")
        flops = 2.0 * shape[0] * shape[1] * shape[2] * shape[3]
        row = name["row"]
        bf16_s[row] = bf16_s.get(row, 0) + flops / float(r["flops_per_s"])
        fp32_s[row] = fp32_s.get(row, 0) + flops / float(a["flops_per_s"])
    ratios = [fp32_s[row] / bf16_s[row] for row in bf16_s]
    print("weight gradients into fp32 over into bf16, a layer's (time): " +
          ", ".join("%s %.3f" % (row.replace("nemo-", ""), fp32_s[row] / bf16_s[row])
                    for row in bf16_s) + "; median %.3f" % statistics.median(ratios))


def fp8_split(fast_csv, split_csv):
    """The same FP8 shapes with split accumulation (Transformer Engine's dgrad and wgrad GEMMs)
    beside the fast accumulation of its forward GEMM (row 2d): recorded, not used by the model,
    which gives an FP8 GEMM one rate either way."""
    fast, split = csv_rows(fast_csv), csv_rows(split_csv)
    if len(fast) != len(split) or not fast:
        raise ValueError(f"{len(split)} split-accumulation rates for {len(fast)} shapes")
    ratios = []
    for f, p in zip(fast, split):
        if [f[c] for c in "bmnk"] != [p[c] for c in "bmnk"]:
            raise ValueError(f"split rate {dict(p)} is not shape {dict(f)}")
        ratios.append(float(p["flops_per_s"]) / float(f["flops_per_s"]))
    print("split accumulation (TE's dgrad and wgrad): %s TFLOP/s, median %.3f of the fast rates "
          "(%.3f to %.3f)" % ("/".join("%.0f" % (float(p["flops_per_s"]) / 1e12) for p in split),
                              statistics.median(ratios), min(ratios), max(ratios)))


COMMANDS = {"table": table, "nvidia-lib-dirs": nvidia_lib_dirs, "kernel-summary": kernel_summary,
            "closed-form": closed_form, "cupti-verdict": cupti_verdict,
            "steady-period": steady_period, "drop-first-step": drop_first_step,
            "overhead": overhead, "held-csv": held_csv, "gemm-summary": gemm_summary,
            "dev-gemm-summary": dev_gemm_summary, "sm-margin-summary": sm_margin_summary,
            "fp8-gemm-summary": fp8_gemm_summary, "fp8-split": fp8_split,
            "wgrad-fp32": wgrad_fp32}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit("usage: gpu_check_parse.py {" + ",".join(COMMANDS) + "} ARGS...")
    try:
        COMMANDS[sys.argv[1]](*sys.argv[2:])
    except (OSError, ValueError, KeyError, TypeError, IndexError, csv.Error) as e:
        sys.exit(f"gpu_check_parse.py {sys.argv[1]}: {e.__class__.__name__}: {e}")
