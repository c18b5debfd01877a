#!/usr/bin/env python3
"""tf32_error_model.py: the relative error ||out - ref|| / ||ref|| that meshscope-kernel-check's
GEMM shapes should show when fp32 inputs are reduced to fewer mantissa bits before an exact
multiply-accumulate, by truncation (low bits dropped, as tensor cores do with raw fp32 operands
given as TF32) or by round-to-nearest-even. Accumulation is float64 here; fp32 accumulation adds
about 1e-7. Inputs as the check draws them: uniform in [-1, 1]. Used to set kTf32Tolerance
(kernels/cuda/check_harness.h); needs numpy.

    python3 scripts/tf32_error_model.py
"""
import numpy as np


def reduce_mantissa(x, dropped_bits, mode):
    b = x.astype(np.float32).view(np.uint32)
    if mode == "rn":
        half = np.uint32((1 << (dropped_bits - 1)) - 1)
        b = b + half + ((b >> np.uint32(dropped_bits)) & np.uint32(1))
    mask = np.uint32((0xFFFFFFFF << dropped_bits) & 0xFFFFFFFF)
    return (b & mask).view(np.float32)


def main():
    rng = np.random.default_rng(1)
    formats = [("tf32", 13), ("bf16", 16)]
    for m, n, k in [(67, 45, 129), (256, 384, 512)]:
        for fmt, dropped in formats:
            for mode in ("trunc", "rn"):
                errs = []
                for _ in range(10):
                    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
                    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
                    ref = a.astype(np.float64) @ b.astype(np.float64)
                    got = (reduce_mantissa(a, dropped, mode).astype(np.float64)
                           @ reduce_mantissa(b, dropped, mode).astype(np.float64))
                    errs.append(np.linalg.norm(got - ref) / np.linalg.norm(ref))
                print(f"{m}x{n}x{k} {fmt} {mode:5s} rel err mean {np.mean(errs):.2e} "
                      f"max {np.max(errs):.2e}")


if __name__ == "__main__":
    main()
