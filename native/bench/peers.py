"""Peer figures for docs/BENCHMARKS.md: the same ops and sizes as nxvk_bench_ops, on the same GPU,
measured by PyTorch (cuBLAS/ATen kernels) and JAX (XLA), in the same run.

  python3 peers.py [--elements N] [--reps R] [--iters I]

Method: random f32 inputs; one warm-up call (JAX: jit compile); R repetitions of I back-to-back
calls timed with CUDA events (PyTorch) or the wall clock around block_until_ready (JAX), median
repetition divided by I. Bytes per op as in nxvk_bench_ops: reads + writes the op must make.
"""
import argparse
import statistics
import time


def selected(cases, only):
    # The copy reference always runs: ratios are to a copy measured in the same run.
    return [c for c in cases if not only or c[0] == "copy" or only in c[0]]


def bench_torch(n, cols, reps, iters, only):
    import torch
    rows = n // cols
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.rand(rows, cols, device="cuda", generator=g) * 4 - 2
    b = torch.rand(rows, cols, device="cuda", generator=g) * 4 - 2
    rv = torch.rand(cols, device="cuda", generator=g)
    cv = torch.rand(rows, 1, device="cuda", generator=g)
    pos = torch.rand(rows, cols, device="cuda", generator=g) * 4 + 2.0 ** -20  # log's domain
    out = torch.empty_like(a)
    b4 = 4.0 * rows * cols
    cases = [
        ("copy", 2 * b4, lambda: out.copy_(a)),
        ("negate f32", 2 * b4, lambda: torch.neg(a)),
        ("abs f32", 2 * b4, lambda: torch.abs(a)),
        ("exp f32", 2 * b4, lambda: torch.exp(a)),
        ("sigmoid f32", 2 * b4, lambda: torch.sigmoid(a)),
        ("tanh f32", 2 * b4, lambda: torch.tanh(a)),
        ("expm1 f32", 2 * b4, lambda: torch.expm1(a)),
        ("log f32 (0, 4]", 2 * b4, lambda: torch.log(pos)),
        ("log1p f32 (0, 4]", 2 * b4, lambda: torch.log1p(pos)),
        ("sqrt f32 (0, 4]", 2 * b4, lambda: torch.sqrt(pos)),
        ("sin f32", 2 * b4, lambda: torch.sin(a)),
        ("erf f32", 2 * b4, lambda: torch.erf(a)),
        ("add f32 same shape", 3 * b4, lambda: a + b),
        ("multiply f32 same shape", 3 * b4, lambda: a * b),
        ("divide f32 same shape", 3 * b4, lambda: a / b),
        ("max f32 same shape", 3 * b4, lambda: torch.maximum(a, b)),
        ("add f32 [R,C] + [C] broadcast", 2 * b4, lambda: a + rv),
        ("add f32 [R,C] + [R,1] broadcast", 2 * b4, lambda: a + cv),
        ("sum f32 all axes", b4, lambda: a.sum()),
        ("sum f32 axis 1 (rows)", b4, lambda: a.sum(1)),
        ("sum f32 axis 0 (columns)", b4, lambda: a.sum(0)),
    ]
    results = []
    for name, nbytes, fn in selected(cases, only):
        fn()
        torch.cuda.synchronize()
        samples = []
        for _ in range(reps):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(iters):
                fn()
            e.record()
            torch.cuda.synchronize()
            samples.append(s.elapsed_time(e) / 1e3 / iters)
        results.append((name, statistics.median(samples), nbytes))
    return results


def bench_jax(n, cols, reps, iters, only):
    import jax
    import jax.numpy as jnp
    rows = n // cols
    k1, k2, k3, k4, k5 = jax.random.split(jax.random.PRNGKey(0), 5)
    a = jax.random.uniform(k1, (rows, cols), minval=-2, maxval=2)
    b = jax.random.uniform(k2, (rows, cols), minval=-2, maxval=2)
    rv = jax.random.uniform(k3, (cols,))
    cv = jax.random.uniform(k4, (rows, 1))
    pos = jax.random.uniform(k5, (rows, cols), minval=2.0 ** -20, maxval=4)
    b4 = 4.0 * rows * cols
    cases = [
        ("copy", 2 * b4, jax.jit(lambda x: x + 0.0), (a,)),
        ("negate f32", 2 * b4, jax.jit(jnp.negative), (a,)),
        ("abs f32", 2 * b4, jax.jit(jnp.abs), (a,)),
        ("exp f32", 2 * b4, jax.jit(jnp.exp), (a,)),
        ("sigmoid f32", 2 * b4, jax.jit(jax.nn.sigmoid), (a,)),
        ("tanh f32", 2 * b4, jax.jit(jnp.tanh), (a,)),
        ("expm1 f32", 2 * b4, jax.jit(jnp.expm1), (a,)),
        ("log f32 (0, 4]", 2 * b4, jax.jit(jnp.log), (pos,)),
        ("log1p f32 (0, 4]", 2 * b4, jax.jit(jnp.log1p), (pos,)),
        ("sqrt f32 (0, 4]", 2 * b4, jax.jit(jnp.sqrt), (pos,)),
        ("sin f32", 2 * b4, jax.jit(jnp.sin), (a,)),
        ("erf f32", 2 * b4, jax.jit(jax.scipy.special.erf), (a,)),
        ("add f32 same shape", 3 * b4, jax.jit(jnp.add), (a, b)),
        ("multiply f32 same shape", 3 * b4, jax.jit(jnp.multiply), (a, b)),
        ("divide f32 same shape", 3 * b4, jax.jit(jnp.divide), (a, b)),
        ("max f32 same shape", 3 * b4, jax.jit(jnp.maximum), (a, b)),
        ("add f32 [R,C] + [C] broadcast", 2 * b4, jax.jit(jnp.add), (a, rv)),
        ("add f32 [R,C] + [R,1] broadcast", 2 * b4, jax.jit(jnp.add), (a, cv)),
        ("sum f32 all axes", b4, jax.jit(jnp.sum), (a,)),
        ("sum f32 axis 1 (rows)", b4, jax.jit(lambda x: jnp.sum(x, 1)), (a,)),
        ("sum f32 axis 0 (columns)", b4, jax.jit(lambda x: jnp.sum(x, 0)), (a,)),
    ]
    results = []
    for name, nbytes, fn, args in selected(cases, only):
        fn(*args).block_until_ready()
        samples = []
        for _ in range(reps):
            t = time.perf_counter()
            for _ in range(iters):
                r = fn(*args)
            r.block_until_ready()
            samples.append((time.perf_counter() - t) / iters)
        results.append((name, statistics.median(samples), nbytes))
    return results


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
