"""Peer figures for docs/BENCHMARKS.md: the same ops and sizes as nxvk_bench_ops, on the same GPU,
measured by PyTorch (cuBLAS/ATen kernels) and JAX (XLA), in the same run.

  python3 peers.py [--elements N] [--reps R] [--iters I]

Method: random f32 inputs; R repetitions, each a warm-up call (JAX: the first compiles) and I
back-to-back calls timed with CUDA events (PyTorch) or the wall clock around block_until_ready
(JAX); the median repetition divided by I. Bytes per op as in nxvk_bench_ops: reads + writes the op must make.
"""
import argparse
import statistics
import time


# The ops of nxvk_bench_ops, once for both peers: (name, bytes moved in units of one tensor, op,
# operands). Operands: a, b random in [-2, 2); rv a [C] and cv an [R, 1] vector; pos in
# [2^-20, 4), the domain of log; unit in [-0.99, 0.99); ge1 in [1, 5). A peer without the op
# (PyTorch has no cbrt) skips it. a16, b16, abf16, bbf16, pos16, posbf16: a, b and pos converted to f16 and bf16 (half the
# bytes of an f32 tensor: units of one f32 tensor).
CASES = [
    ("copy", 2, "copy", "a"),
    ("negate f32", 2, "negate", "a"),
    ("abs f32", 2, "abs", "a"),
    ("exp f32", 2, "exp", "a"),
    ("sigmoid f32", 2, "sigmoid", "a"),
    ("tanh f32", 2, "tanh", "a"),
    ("expm1 f32", 2, "expm1", "a"),
    ("log f32 (0, 4]", 2, "log", "pos"),
    ("log1p f32 (0, 4]", 2, "log1p", "pos"),
    ("sqrt f32 (0, 4]", 2, "sqrt", "pos"),
    ("sin f32", 2, "sin", "a"),
    ("cos f32", 2, "cos", "a"),
    ("tan f32", 2, "tan", "a"),
    ("sinh f32", 2, "sinh", "a"),
    ("cosh f32", 2, "cosh", "a"),
    ("erf f32", 2, "erf", "a"),
    ("erfc f32", 2, "erfc", "a"),
    ("asin f32 (-1, 1)", 2, "asin", "unit"),
    ("acos f32 (-1, 1)", 2, "acos", "unit"),
    ("atan f32", 2, "atan", "a"),
    ("asinh f32", 2, "asinh", "a"),
    ("acosh f32 [1, 5)", 2, "acosh", "ge1"),
    ("atanh f32 (-1, 1)", 2, "atanh", "unit"),
    ("rsqrt f32 (0, 4]", 2, "rsqrt", "pos"),
    ("cbrt f32", 2, "cbrt", "a"),
    ("erf_inv f32 (-1, 1)", 2, "erf_inv", "unit"),
    ("pow f32 (0, 4] ^ [-2, 2)", 3, "pow", "pos a"),
    ("atan2 f32", 3, "atan2", "a b"),
    ("exp f16", 1, "exp", "a16"),
    ("sigmoid f16", 1, "sigmoid", "a16"),
    ("tanh f16", 1, "tanh", "a16"),
    ("erf f16", 1, "erf", "a16"),
    ("exp bf16", 1, "exp", "abf16"),
    ("sigmoid bf16", 1, "sigmoid", "abf16"),
    ("tanh bf16", 1, "tanh", "abf16"),
    ("erf bf16", 1, "erf", "abf16"),
    ("sqrt f16 (0, 4]", 1, "sqrt", "pos16"),
    ("sqrt bf16 (0, 4]", 1, "sqrt", "posbf16"),
    ("negate f16", 1, "negate", "a16"),
    ("as_type f32 to f16", 1.5, "to_f16", "a"),
    ("as_type f16 to f32", 1.5, "to_f32", "a16"),
    ("add f16 same shape", 1.5, "add", "a16 b16"),
    ("divide f16 same shape", 1.5, "divide", "a16 b16"),
    ("divide bf16 same shape", 1.5, "divide", "abf16 bbf16"),
    ("greater f32 same shape", 2.25, "greater", "a b"),  # a bool (one byte) per element
    ("add f32 same shape", 3, "add", "a b"),
    ("multiply f32 same shape", 3, "multiply", "a b"),
    ("divide f32 same shape", 3, "divide", "a b"),
    ("max f32 same shape", 3, "max", "a b"),
    ("add f32 [R,C] + [C] broadcast", 2, "add", "a rv"),
    ("add f32 [R,C] + [R,1] broadcast", 2, "add", "a cv"),
    ("sum f32 all axes", 1, "sum", "a"),
    ("sum f32 axis 1 (rows)", 1, "sum1", "a"),
    ("sum f32 axis 0 (columns)", 1, "sum0", "a"),
]


def run_cases(ops, tensors, b4, time_calls, reps, iters, only):
    """Median seconds per call of each selected case; time_calls(fn, args, iters) times one
    repetition: a warm-up call, then `iters` calls timed."""
    results = []
    for name, units, op, operands in CASES:
        # The copy reference always runs: ratios are to a copy measured in the same run.
        if only and name != "copy" and not any(name.startswith(w) for w in only.split(",") if w):
            continue
        if op not in ops:
            continue
        fn, args = ops[op], [tensors[t] for t in operands.split()]
        samples = [time_calls(fn, args, iters) for _ in range(reps)]
        results.append((name, statistics.median(samples), units * b4))
    return results


def bench_torch(n, cols, reps, iters, only):
    import torch
    rows = n // cols
    g = torch.Generator(device="cuda").manual_seed(1)
    tensors = {
        "a": torch.rand(rows, cols, device="cuda", generator=g) * 4 - 2,
        "b": torch.rand(rows, cols, device="cuda", generator=g) * 4 - 2,
        "rv": torch.rand(cols, device="cuda", generator=g),
        "cv": torch.rand(rows, 1, device="cuda", generator=g),
        "pos": torch.rand(rows, cols, device="cuda", generator=g) * 4 + 2.0 ** -20,
        "unit": torch.rand(rows, cols, device="cuda", generator=g) * 1.98 - 0.99,
        "ge1": torch.rand(rows, cols, device="cuda", generator=g) * 4 + 1,
    }
    tensors.update(a16=tensors["a"].half(), b16=tensors["b"].half(), abf16=tensors["a"].bfloat16(),
                   bbf16=tensors["b"].bfloat16(), pos16=tensors["pos"].half(), posbf16=tensors["pos"].bfloat16())
    out = torch.empty_like(tensors["a"])
    ops = {"copy": out.copy_, "negate": torch.neg, "abs": torch.abs, "exp": torch.exp, "sigmoid": torch.sigmoid,
           "tanh": torch.tanh, "expm1": torch.expm1, "log": torch.log, "log1p": torch.log1p, "sqrt": torch.sqrt,
           "sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "sinh": torch.sinh, "cosh": torch.cosh, "erf": torch.erf, "erfc": torch.erfc,
           "asin": torch.asin, "acos": torch.acos, "atan": torch.atan, "asinh": torch.asinh, "acosh": torch.acosh,
           "atanh": torch.atanh, "rsqrt": torch.rsqrt, "erf_inv": torch.erfinv, "pow": torch.pow,
           "atan2": torch.atan2, "add": torch.add, "multiply": torch.mul, "divide": torch.div,
           "max": torch.maximum, "greater": torch.gt, "to_f16": lambda x: x.half(), "to_f32": lambda x: x.float(), "sum": torch.sum, "sum1": lambda x: x.sum(1), "sum0": lambda x: x.sum(0)}

    def time_calls(fn, args, iters):  # CUDA events around the calls
        fn(*args)
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(iters):
            fn(*args)
        e.record()
        torch.cuda.synchronize()
        return s.elapsed_time(e) / 1e3 / iters

    return run_cases(ops, tensors, 4.0 * rows * cols, time_calls, reps, iters, only)


def bench_jax(n, cols, reps, iters, only):
    import jax
    import jax.numpy as jnp
    rows = n // cols
    k1, k2, k3, k4, k5, k6, k7 = jax.random.split(jax.random.PRNGKey(0), 7)
    tensors = {
        "a": jax.random.uniform(k1, (rows, cols), minval=-2, maxval=2),
        "b": jax.random.uniform(k2, (rows, cols), minval=-2, maxval=2),
        "rv": jax.random.uniform(k3, (cols,)),
        "cv": jax.random.uniform(k4, (rows, 1)),
        "pos": jax.random.uniform(k5, (rows, cols), minval=2.0 ** -20, maxval=4),
        "unit": jax.random.uniform(k6, (rows, cols), minval=-0.99, maxval=0.99),
        "ge1": jax.random.uniform(k7, (rows, cols), minval=1, maxval=5),
    }
    tensors.update(a16=tensors["a"].astype(jnp.float16), b16=tensors["b"].astype(jnp.float16),
                   abf16=tensors["a"].astype(jnp.bfloat16),
                   bbf16=tensors["b"].astype(jnp.bfloat16), pos16=tensors["pos"].astype(jnp.float16),
                   posbf16=tensors["pos"].astype(jnp.bfloat16))
    plain = {"copy": lambda x: x + 0.0, "negate": jnp.negative, "abs": jnp.abs, "exp": jnp.exp,
             "sigmoid": jax.nn.sigmoid, "tanh": jnp.tanh, "expm1": jnp.expm1, "log": jnp.log, "log1p": jnp.log1p,
             "sqrt": jnp.sqrt, "sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan, "sinh": jnp.sinh,
             "cosh": jnp.cosh, "erf": jax.scipy.special.erf,
             "erfc": jax.scipy.special.erfc, "asin": jnp.arcsin, "acos": jnp.arccos, "atan": jnp.arctan,
             "asinh": jnp.arcsinh, "acosh": jnp.arccosh, "atanh": jnp.arctanh, "rsqrt": jax.lax.rsqrt,
             "cbrt": jnp.cbrt, "erf_inv": jax.scipy.special.erfinv, "pow": jnp.power, "atan2": jnp.arctan2,
             "add": jnp.add,
             "multiply": jnp.multiply, "divide": jnp.divide, "max": jnp.maximum, "greater": jnp.greater,
             "to_f16": lambda x: x.astype(jnp.float16), "to_f32": lambda x: x.astype(jnp.float32), "sum": jnp.sum,
             "sum1": lambda x: jnp.sum(x, 1), "sum0": lambda x: jnp.sum(x, 0)}
    ops = {k: jax.jit(f) for k, f in plain.items()}

    def time_calls(fn, args, iters):  # the wall clock around block_until_ready
        fn(*args).block_until_ready()  # the first call compiles
        t = time.perf_counter()
        for _ in range(iters):
            r = fn(*args)
        r.block_until_ready()
        return (time.perf_counter() - t) / iters

    return run_cases(ops, tensors, 4.0 * rows * cols, time_calls, reps, iters, only)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--elements", type=int, default=256 << 20)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--only", default="")
    o = p.parse_args()
    cols = 4096
    for label, fn in (("PyTorch", bench_torch), ("JAX/XLA", bench_jax)):
        try:
            res = fn(o.elements, cols, o.reps, o.iters, o.only)
        except Exception as e:  # report and go on with the other peer
            print(f"{label}: failed: {e}")
            continue
        copy_bw = max(nb / t for name, t, nb in res if name == "copy")
        print(f"\n{label}: {o.elements} f32 elements, median of {o.reps} reps x {o.iters} iters")
        print("| op | time (ms) | GB/s | % of its copy |\n|---|---:|---:|---:|")
        for name, t, nb in res:
            print(f"| {name} | {t * 1e3:.3f} | {nb / t / 1e9:.1f} | {100 * nb / t / copy_bw:.0f}% |")


if __name__ == "__main__":
    main()
