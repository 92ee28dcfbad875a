"""Programs for tests/test_hostile.py: each meets one hostile input or failure.

Generated modules go to a temporary folder.  Lines the tests look for in
error messages carry a `# <-- name` marker.
"""

import tempfile

import numpy as np

from transpiler import Context, TensorType

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-hostile-"))


@ctx.batch
def add(a, b):
    return a + b


@ctx.batch(signature=[TensorType(np.int64, ()), TensorType(np.float64, (2,))])
def scale(n, v):
    return np.sum(v, axis=-1) * n


@ctx.batch
def halvings(x):
    # per-example float control flow that NaN and infinities flow through
    steps = 0
    while x > 1.0 and steps < 6:
        x = x / 2.0
        steps += 1
    if x != x:
        return -1.0
    if x < -1e300:
        return x * 0.0 - 2.0
    return x + steps


@ctx.batch
def depth(n):
    if n <= 0:
        return 0
    return 1 + depth(n - 1)


@ctx.batch
def spin(x):
    steps = 0
    while x > 0:  # <-- spin loop
        x = x + 1
        steps += 1
    return steps


@ctx.batch
def count_up(n):
    i = 0
    while i < n:
        i += 1
    return i


def checked_log(x):
    """A primitive that raises on some inputs (NumPy arrays only)."""
    if np.any(np.asarray(x) <= 0):
        raise ValueError("checked_log of a number <= 0")
    return np.log(x)


@ctx.batch
def log_of(x):
    y = x * 2.0
    return checked_log(y)  # <-- raising primitive


def refuses(x):
    raise ArithmeticError("refuses every input")


@ctx.batch
def always_fails(x):
    return refuses(x) + 1  # <-- refusing primitive
