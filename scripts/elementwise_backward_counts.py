#!/usr/bin/env python3
"""Count the memory passes of eager ops' forward and backward as autograd runs them (item 22 of
docs/ACCURACY.md).

Runs each op sequence the profiles count by hand (torchtitan's and fms-fsdp's RMSNorm, their
SwiGLU, torchtitan's rotary embedding) forward and backward in bf16 on the CPU under a
TorchDispatchMode that logs every aten op autograd dispatches, and sums the bytes each op reads
(its tensor inputs) and writes (its outputs), views excluded and a broadcast input counted at its
own size. Prints each op and the totals in bf16-element passes per element of the input, the
unit of the profiles' elementwise_passes and elementwise_backward_passes. Last, one step of
torch.optim.AdamW(foreach=True, weight_decay=0.1) and clip_grad_norm_(foreach=True) over fp32
parameters, in bytes per parameter (the profiles' optimizer_step_bytes: 84 + 12). The op sequence of the
backward is autograd's (tools/autograd/derivatives.yaml), the same on every device; a CUDA kernel
that fuses nothing runs one kernel per op. Needs torch (a venv; not a CI dependency):

    python3 -m venv /tmp/tv && /tmp/tv/bin/pip install torch
    /tmp/tv/bin/python scripts/elementwise_backward_counts.py
"""
import sys

if len(sys.argv) > 1:
    print(__doc__.strip())
    sys.exit(0 if sys.argv[1] in ("-h", "--help") else 2)

try:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten
except ImportError:
    sys.exit("elementwise_backward_counts.py: needs torch (see --help)")


def tensor_bytes(t):
    # An expanded (stride-0) tensor is read at the size of the storage behind it.
    return min(t.numel() * t.element_size(), t.untyped_storage().nbytes())


class PassLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func.is_view or func.overloadpacket.__name__ == "_unsafe_view":  # aliases, no copy
            return out
        ins = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
        outs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
        if func.overloadpacket.__name__.endswith("_") and not outs:
            # An in-place foreach op returns nothing: it writes its first argument's tensors.
            outs = [t for t in tree_flatten(args[0])[0] if isinstance(t, torch.Tensor)]
        read = sum(tensor_bytes(t) for t in ins)
        written = sum(tensor_bytes(t) for t in outs)
        self.ops.append((func.overloadpacket.__name__, read, written))
        return out


def run(name, make_inputs, op, elements):
    """op(*make_inputs()) is the op's forward; `elements`: the elements it works over."""
    torch.manual_seed(0)
    inputs = make_inputs()
    with PassLog() as fwd_log:
        out = op(*inputs)
    grad = torch.randn_like(out)
    with PassLog() as bwd_log:
        out.backward(grad)
    unit = 2 * elements  # bytes of one bf16 pass over the op's elements
    print(f"\n{name}")
    for label, log in (("forward", fwd_log), ("backward", bwd_log)):
        total = 0
        for op, r, w in log.ops:
            if r + w < unit / 8:  # per-row statistics and the like
                continue
            total += r + w
            print(f"  {label:8s} {op:28s} read {r / unit:5.2f} write {w / unit:5.2f}")
        print(f"  {label} total: {total / unit:.2f} bf16-element passes")


TOKENS, HIDDEN, FFN, HEADS, HEAD_DIM = 512, 1024, 2816, 8, 128


def bf16(*shape):
    return torch.randn(*shape, dtype=torch.bfloat16, requires_grad=True)


def rmsnorm(x, weight):
    xf = x.float()
    normed = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
    return normed.type_as(x) * weight


def swiglu(gate, up):
    return torch.nn.functional.silu(gate) * up


def rotary(q, freqs):
    q_ = torch.view_as_complex(q.float().reshape(*q.shape[:-1], -1, 2))
    out = torch.view_as_real(q_ * freqs.view(1, TOKENS, 1, HEAD_DIM // 2)).flatten(3)
    return out.type_as(q)


def repeat_kv(k):
    # torchtitan's repeat_kv, 4 query heads a kv head
    bs, slen, kv_heads, head_dim = k.shape
    return torch.unsqueeze(k, dim=3).expand(bs, slen, kv_heads, 4, head_dim).reshape(
        bs, slen, kv_heads * 4, head_dim)


def rotary_inputs():
    angles = torch.randn(TOKENS, HEAD_DIM // 2)
    return bf16(1, TOKENS, HEADS, HEAD_DIM), torch.polar(torch.ones_like(angles), angles)


print(f"torch {torch.__version__}; passes in bf16 elements per element of the op")
run("RMSNorm (torchtitan norms.py, fms LayerNormParameterized): forward 18, backward 46 in the "
    "profiles", lambda: (bf16(TOKENS, HIDDEN), bf16(HIDDEN)), rmsnorm, TOKENS * HIDDEN)
run("SwiGLU silu(gate) * up: 5 and 9 over ffn in the profiles (2.5 and 4.5 over 2 x ffn)",
    lambda: (bf16(TOKENS, FFN), bf16(TOKENS, FFN)), swiglu, TOKENS * FFN)
run("rotary embedding (torchtitan apply_rotary_emb) over q: 10 and 10 in the profile (the "
    "frequencies, a q-head's share, not counted there)", rotary_inputs, rotary,
    TOKENS * HEADS * HEAD_DIM)
run("repeat_kv (torchtitan; fms's expand + flatten alike), 2 kv heads to 8: (8 + 2) / 8 = 1.25 "
    "and as much back, per element of the repeated K in the profiles",
    lambda: (bf16(1, TOKENS, HEADS // 4, HEAD_DIM),), repeat_kv, TOKENS * HEADS * HEAD_DIM)


def optimizer_step():
    n = 1 << 20
    params = [torch.nn.Parameter(torch.randn(n)) for _ in range(4)]
    for p in params:
        p.grad = torch.randn(n)
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.1, foreach=True)
    opt.step()  # the first step makes the moments; the second is every later one
    for p in params:
        p.grad = torch.randn(n)
    print("\nAdamW(foreach=True) step and clip_grad_norm_(foreach=True), fp32: 84 and 12 bytes per "
          "parameter in the profiles")
    for label, step in (("AdamW", opt.step),
                        ("clipping", lambda: torch.nn.utils.clip_grad_norm_(params, 1.0,
                                                                           foreach=True))):
        with PassLog() as log:
            step()
        total = 0
        for op, r, w in log.ops:
            if r + w < n:  # the per-tensor scalars
                continue
            total += r + w
            print(f"  {label:8s} {op:28s} read {r / (4 * n):5.2f} write {w / (4 * n):5.2f} bytes")
        print(f"  {label} total: {total / (4 * n):.2f} bytes per parameter")


optimizer_step()
