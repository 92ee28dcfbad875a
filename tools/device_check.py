"""The JAX backend on the device at hand: right answers and time per call for
each block selection, on checked-in programs imported without the compiler.

    python tools/device_check.py                 # JAX's default device (a GPU, where there is one)
    python tools/device_check.py --sizes 256 4096 --repeats 5

For each program and batch size, every selection of `jax_backend`
("sweep", "masked", "switch") runs the same inputs: each result must equal
plain Python's on every example (the script exits 1 otherwise), and the
best of `--repeats` warm calls is printed beside the first (tracing and
compilation included).  docs/jax.md quotes what it printed on a GPU.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from autobatch_runtime import jax_backend as rt  # noqa: E402
from examples import collatz, fib  # noqa: E402
from generated.examples import collatz_jax, fib_jax  # noqa: E402


def plain(module, name):
    """The example's own function, undecorated: the oracle."""
    return module.ctx.plain(name)


def programs(size, rng):
    """(name, batched function, inputs, expected) per program."""
    n = rng.integers(0, 17, size)
    x = rng.integers(1, 100_000, size)
    plain_fib, plain_collatz = plain(fib, "fib"), plain(collatz, "collatz_steps")
    return [
        ("fib", fib_jax.fib, n, [plain_fib(int(v)) for v in n]),
        ("collatz", collatz_jax.collatz_steps, x, [plain_collatz(int(v)) for v in x]),
    ]


def timed(function, inputs, repeats):
    """(first call s, best warm call s, result as NumPy)."""
    start = time.perf_counter()
    result = np.asarray(function(inputs))
    first = time.perf_counter() - start
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        np.asarray(function(inputs))
        best = min(best, time.perf_counter() - start)
    return first, best, result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[256, 4096])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--selections", nargs="+", default=["sweep", "masked", "switch"])
    args = parser.parse_args(argv)
    import jax

    print(f"device: {jax.devices()[0].device_kind}; default selection: {rt.selection()}")
    print(f"{'program':10} {'batch':>6} {'selection':10} {'first s':>8} {'best ms':>9}  right")
    wrong = 0
    rng = np.random.default_rng(0)
    for size in args.sizes:
        for name, function, inputs, expected in programs(size, rng):
            for selection in args.selections:
                rt.SELECTION = selection
                first, best, result = timed(function, inputs, args.repeats)
                right = result.tolist() == expected
                wrong += not right
                print(
                    f"{name:10} {size:6d} {selection:10} {first:8.2f} {best * 1e3:9.2f}  {right}",
                    flush=True,
                )
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
