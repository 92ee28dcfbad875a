"""Benchmark: generated code against the Python loop, the hand-written ceiling
and the predecessor, in one run.

    python tools/bench.py            # full: batch sizes 1, 16, 256, 4096
    python tools/bench.py --quick    # under a minute: fewer sizes and repeats

For every program and batch size, each mode's first call (for the generated
modes: import the checked-in module, trace, compile) and best and median warm
time (at least `--repeats` calls, more until they take `--min-seconds`), its
output checked against the plain Python loop; then an XLA first call that
generates its module anew (`xla, generated anew`).  Ratios are taken within
the run (this machine is noisy).  Writes a PNG of throughput (examples/s)
against batch size (`--plot`).

Modes: `xla`, `graph`, `numpy`, `jax` (the generated modules; `jax` when JAX
is installed); `python` (a loop over the examples calling the plain
function); `hand-xla`, `hand-numpy` (tools/handwritten.py; for bisect also
`hand-xla-one-hot`, its loop reading v[mid] by a one-hot `where` instead of
a gather); `hand-jax` (tools/handwritten_jax.py: fib and Collatz as one
`lax.while_loop`, the column `vs hand-jax`); `tfp` (TensorFlow Probability's
auto_batching, when installed and `--predecessor` is given).

`--programs nuts` runs the NUTS benchmark (tools/bench_nuts.py: 100-d normal,
ours against TFP's hand-batched and auto-batched NUTS); only when named.
`--replicas 1 2 4` runs tools/bench_replicas.py instead: one call sharded over
logical CPU devices with tf.distribute, and a 64-GPU paper estimate.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _programs():
    from examples.collatz import collatz_steps
    from examples.even_odd import is_even
    from examples.fib import fib
    from examples.gcd import gcd
    from examples.search import bisect_left
    from tools import handwritten

    tf = handwritten.tf
    rows = (tf.TensorSpec([None, None], tf.int64), tf.TensorSpec([None], tf.int64))
    jax_hand = _jax_handwritten()
    return {
        "fib": dict(
            batched=fib,
            inputs=lambda rng, b: (rng.integers(5, 17, b),),
            depth=16,
            hand={"hand-xla": lambda n: handwritten.fib_xla(n), **jax_hand.get("fib", {})},
        ),
        "collatz": dict(
            batched=collatz_steps,
            inputs=lambda rng, b: (rng.integers(1, 100_001, b),),
            depth=15,
            hand={
                "hand-xla": lambda x: handwritten.collatz_xla(x),
                "hand-numpy": handwritten.collatz_numpy,
                **jax_hand.get("collatz", {}),
            },
        ),
        "even_odd": dict(
            batched=is_even,
            inputs=lambda rng, b: (rng.integers(0, 200, b),),
            depth=15,
            hand={},
        ),
        "gcd": dict(
            batched=gcd,
            inputs=lambda rng, b: (rng.integers(1, 300, b), rng.integers(1, 300, b)),
            depth=15,
            hand={},
        ),
        # Binary search in each example's own sorted vector of 16 (the
        # checked-in module's signature, and the corpus case's inputs):
        # x below, inside and above the vector, 1 to 5 halvings per example.
        # `hand-xla-one-hot` is the hand-written loop reading v[mid] by a
        # one-hot `where` and a row sum instead of a gather.  Both are called
        # through concrete functions, as the generated entry is: at 4096
        # examples tf.function's dispatch alone is about 0.1 ms of a 0.15 ms
        # call.
        "bisect": dict(
            batched=bisect_left,
            inputs=lambda rng, b: (
                np.sort(rng.integers(0, 40, (b, 16)), axis=1),
                rng.integers(-2, 43, b),
            ),
            depth=15,
            hand={
                "hand-xla": handwritten.without_dispatch(handwritten.bisect_left_xla, *rows),
                "hand-xla-one-hot": handwritten.without_dispatch(
                    handwritten.bisect_left_one_hot_xla, *rows
                ),
                "hand-numpy": handwritten.bisect_left_numpy,
            },
        ),
    }


def _jax_handwritten():
    """{program: {"hand-jax": fn}} from tools/handwritten_jax.py ({} without JAX)."""
    try:
        import jax

        from tools import handwritten_jax as hand
    except ImportError:
        return {}

    def synced(fn):  # JAX dispatches asynchronously: time the computation itself
        return lambda *args: jax.block_until_ready(fn(*args))

    return {
        "fib": {"hand-jax": synced(lambda n: hand.fib_jax(n, depth=32))},
        "collatz": {"hand-jax": synced(hand.collatz_jax)},
    }


def _jax_installed():
    import importlib.util

    return importlib.util.find_spec("jax") is not None


def _predecessor():
    """TFP's auto_batching fib, when tensorflow-probability is installed."""
    try:
        import tensorflow as tf
        import tensorflow_probability as tfp
    except Exception:  # noqa: BLE001 - optional
        return None
    ab = tfp.experimental.auto_batching
    ctx = ab.Context()
    int64 = ab.TensorType(np.int64, ())

    def returns_int64(*_):  # the predecessor parses decorator lines: no lambdas
        return int64

    @ctx.batch(type_inference=returns_int64)
    def fib(n):
        if n <= 1:
            return 1
        else:
            left = fib(n - 2)
            right = fib(n - 1)
            return left + right

    # Its stacks count one more level than ours: at 16, fib(16) comes out
    # 1596 alone and, in a batch under XLA, does not finish in 10 minutes.
    # 17 is the smallest depth that gives the right answers, and its fastest
    # (its loop costs grow with the depth: a call over 4096 examples took 2.3 s
    # at 17, 6.2 s at 32).
    depth = 17
    xla = tf.function(
        lambda n: fib(n, max_stack_depth=depth, backend=ab.TensorFlowBackend()),
        jit_compile=True,
        autograph=False,
    )
    numpy = lambda n: fib(n, max_stack_depth=depth, backend=ab.NumpyBackend())  # noqa: E731
    return {"fib": {"tfp-xla": xla, "tfp-numpy": numpy}}


def _time(call, repeats, min_seconds=0.0, max_calls=200):
    """(first call s, best warm s, median warm s, last output).

    At least `repeats` warm calls, and more (up to `max_calls`) until they
    add up to `min_seconds`: a call of a few ms is timed dozens of times, so
    its best is not one unlucky moment of this noisy machine.
    """
    start = time.perf_counter()
    out = call()
    first = time.perf_counter() - start
    warm = []
    while len(warm) < repeats or (sum(warm) < min_seconds and len(warm) < max_calls):
        start = time.perf_counter()
        out = call()
        warm.append(time.perf_counter() - start)
    return first, min(warm), statistics.median(warm), out


def _ms(seconds):
    """Milliseconds, to 3 decimals under 1 ms (bisect's calls take 0.1 to 1 ms)."""
    return f"{seconds * 1e3:.3f}" if seconds < 1e-3 else f"{seconds * 1e3:.1f}"


def _cold_first_call(batched, inputs, depth):
    """(seconds, output) of a first XLA call that has to generate its module too.

    The table's `first s` of a generated mode imports the checked-in module
    and then traces and compiles.  Here the same functions are batched in a
    new Context that writes into an empty temporary folder, so the call also
    generates the module (parse, passes, emit, black) and imports it: what
    a user waits for on the first call after editing the function.  The
    compiler's own modules are imported before the clock starts.
    """
    import inspect
    import tempfile

    import transpiler.pipeline  # noqa: F401 - imported outside the timing
    from transpiler import Context

    context = batched.context
    originals = [inspect.unwrap(context._functions[n].function) for n in context.function_names()]
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        fresh = Context(generated_dir=folder)
        functions = {f.__name__: fresh.batch(f) for f in originals}
        value = functions[batched.name](*inputs, xla=True, max_stack_depth=depth)
        return time.perf_counter() - start, value


def run(sizes, repeats, programs=None, plot=None, out=sys.stdout, predecessor=(), min_seconds=0.0):
    specs = _programs()
    extra = {}
    if predecessor:  # the modes to time: "xla", "numpy"
        found = _predecessor() or {}
        extra = {
            name: {label: fn for label, fn in modes.items() if label[len("tfp-") :] in predecessor}
            for name, modes in found.items()
        }
    rng = np.random.default_rng(0)
    rows = []
    header = (
        f"{'program':<9} {'batch':>5} {'mode':<20} {'first s':>8} {'best ms':>9} "
        f"{'median ms':>9} {'vs python':>9} {'vs hand-xla':>11} {'vs hand-jax':>11}  check"
    )
    print(header, file=out)
    for name, spec in specs.items():
        if programs and name not in programs:
            continue
        batched = spec["batched"]
        plain = batched.context.plain(batched.name)
        for batch in sizes:
            inputs = spec["inputs"](rng, batch)
            columns = list(zip(*[np.asarray(a).tolist() for a in inputs]))
            expected = np.asarray([plain(*c) for c in columns]).reshape(-1)
            modes = {
                "python": lambda: [plain(*c) for c in columns],
                "numpy": lambda: batched(*inputs, backend="numpy", max_stack_depth=spec["depth"]),
                "graph": lambda: batched(*inputs, max_stack_depth=spec["depth"]),
                "xla": lambda: batched(*inputs, xla=True, max_stack_depth=spec["depth"]),
            }
            if _jax_installed():
                modes["jax"] = lambda: batched(*inputs, backend="jax", max_stack_depth=spec["depth"])
            for label, fn in spec["hand"].items():
                modes[label] = (lambda fn=fn: fn(*inputs))
            for label, fn in extra.get(name, {}).items():
                modes[label] = (lambda fn=fn: fn(*inputs))
            results = {}
            for mode, call in modes.items():
                try:
                    first, best, median, value = _time(call, repeats, min_seconds)
                except Exception as e:  # noqa: BLE001 - reported in the table
                    results[mode] = (None, None, None, f"error: {type(e).__name__}")
                    continue
                good = np.array_equal(np.asarray(value).reshape(-1), expected)
                results[mode] = (first, best, median, "ok" if good else "MISMATCH")
            python_best = results["python"][1]
            hand_best = results.get("hand-xla", (None, None))[1]
            hand_jax = results.get("hand-jax", (None, None))[1]
            for mode, (first, best, median, check) in results.items():
                if best is None:
                    print(f"{name:<9} {batch:>5} {mode:<20} {check}", file=out, flush=True)
                    continue
                vs_python = best / python_best if python_best else float("nan")
                vs_hand = f"{best / hand_best:>10.2f}x" if hand_best else f"{'':>11}"
                vs_jax = f"{best / hand_jax:>10.2f}x" if hand_jax else f"{'':>11}"
                print(
                    f"{name:<9} {batch:>5} {mode:<20} {first:>8.2f} {_ms(best):>9} "
                    f"{_ms(median):>9} {vs_python:>8.2f}x {vs_hand} {vs_jax}  {check}",
                    file=out,
                    flush=True,
                )
                rows.append((name, batch, mode, first, best, check))
        cold, value = _cold_first_call(batched, inputs, spec["depth"])
        good = np.array_equal(np.asarray(value).reshape(-1), expected)
        print(
            f"{name:<9} {batch:>5} {'xla, generated anew':<20} {cold:>8.2f}"
            f"  (first call: generate + import + trace + compile)  {'ok' if good else 'MISMATCH'}",
            file=out,
            flush=True,
        )
    if plot and _plot(rows, plot):
        print(f"\nplot: {plot}", file=out)
    return rows


def _plot(rows, path) -> bool:
    """Writes the plot to `path`; False (and says so) without matplotlib, an
    optional dependency, so the caller does not claim a file it never wrote."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: no plot written to {path}", file=sys.stderr)
        return False
    names = sorted({r[0] for r in rows})
    fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 4), squeeze=False)
    for ax, name in zip(axes[0], names):
        modes = sorted({r[2] for r in rows if r[0] == name})
        for mode in modes:
            points = sorted((r[1], r[1] / r[4]) for r in rows if r[0] == name and r[2] == mode)
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=mode)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name)
        ax.set_xlabel("batch size")
        ax.set_ylabel("examples / s (warm, best)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="batch 16 and 256, 2 repeats")
    parser.add_argument(
        "--programs", nargs="*", help="a subset: fib collatz even_odd gcd bisect nuts"
    )
    parser.add_argument("--sizes", type=int, nargs="*", help="batch sizes")
    parser.add_argument("--repeats", type=int, default=None, help="at least this many warm calls")
    parser.add_argument(
        "--min-seconds",
        type=float,
        default=None,
        help="more warm calls until they take this long (default 0.5; --quick 0.1)",
    )
    parser.add_argument("--plot", default="bench.png", help="where to write the plot")
    parser.add_argument(
        "--predecessor",
        nargs="*",
        choices=["xla", "numpy"],
        help="also time TFP's auto_batching (slow to build): the modes named, or both "
        "(its NumPy mode takes minutes at batch 4096)",
    )
    parser.add_argument(
        "--replicas",
        type=int,
        nargs="*",
        help="instead: fib (4096) and NUTS (256 chains) over these replica counts of "
        "logical CPU devices, with a 64-GPU paper estimate (tools/bench_replicas.py)",
    )
    args = parser.parse_args(argv)
    if args.replicas:
        from tools import bench_replicas

        return bench_replicas.main(args.replicas, repeats=args.repeats or 5)
    sizes = args.sizes or ([16, 256] if args.quick else [1, 16, 256, 4096])
    repeats = args.repeats or (2 if args.quick else 3)
    others = [p for p in args.programs or [] if p != "nuts"]
    if not args.programs or others:
        predecessor = None if args.predecessor is None else (args.predecessor or ["xla", "numpy"])
        min_seconds = args.min_seconds if args.min_seconds is not None else (0.1 if args.quick else 0.5)
        run(sizes, repeats, others or None, args.plot, predecessor=predecessor, min_seconds=min_seconds)
    if args.programs and "nuts" in args.programs:
        from tools import bench_nuts

        nuts_args = ["--quick"] if args.quick else []
        nuts_args += ["--chains", *map(str, args.sizes)] if args.sizes else []
        nuts_args += ["--repeats", str(args.repeats)] if args.repeats else []
        return bench_nuts.main(nuts_args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
