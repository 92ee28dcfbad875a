"""The shared corpus: every example program with inputs that exercise it.

Each `Case` names a batched function and makes a batch of inputs whose
examples take different control paths (and different recursion depths).
Tests, `autobatch demo` and the benchmark all draw from this list.
"""

import dataclasses
from typing import Callable

import numpy as np

from examples import (
    branches,
    collatz,
    divide,
    even_odd,
    fib,
    gcd,
    iota_sum,
    primes,
    rotate,
    search,
    sort,
    tree,
    vectors,
)


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    function: Callable  # the batched function
    inputs: Callable  # (rng: np.random.Generator, batch: int) -> tuple of arrays
    max_stack_depth: int = 15


def _fib(rng, batch):
    return (rng.integers(0, 13, batch),)


def _parity(rng, batch):
    return (rng.integers(0, 21, batch),)


def _gcd(rng, batch):
    return rng.integers(1, 61, batch), rng.integers(1, 61, batch)


def _iota(rng, batch):
    return rng.integers(-13, 101, batch), rng.integers(-5, 6, batch)


def _absolute(rng, batch):
    return (rng.normal(size=batch),)


def _quadrant(rng, batch):
    return rng.integers(-2, 3, batch), rng.integers(-2, 3, batch)


def _divide(rng, batch):
    return rng.integers(0, 51, batch), rng.integers(5, 11, batch)


def _rotate(rng, batch):
    point = rotate.Point(rng.normal(size=batch), rng.normal(size=batch))
    return point, rng.integers(0, 6, batch)


def _collatz(rng, batch):
    return (rng.integers(1, 201, batch),)


def _factor(rng, batch):
    return (rng.integers(2, 200, batch),)


def _count_primes(rng, batch):
    return (rng.integers(0, 60, batch),)


def _multiple(rng, batch):
    return rng.integers(0, 30, batch), rng.integers(0, 10, batch)


def _spiral(rng, batch):
    return rng.normal(size=(batch, 3)), rng.integers(-9, 10, (batch, 2)), rng.integers(0, 9, batch)


def _relax(rng, batch):
    return rng.normal(size=(batch, 3)), rng.integers(0, 12, batch)


def _bisect(rng, batch):
    v = np.sort(rng.integers(0, 40, (batch, 16)), axis=1)
    return v, rng.integers(-2, 43, batch)  # below, inside and above each vector


def _predict(rng, batch):
    return (rng.normal(scale=1.5, size=(batch, 2)),)


def _sort(rng, batch):
    return (rng.integers(0, 100, (batch, 8)),)


def _histogram(rng, batch):
    return rng.integers(-1, 6, (batch, 10)), rng.integers(0, 12, batch)


CASES = (
    Case("fib", fib.fib, _fib),
    Case("is_even", even_odd.is_even, _parity),
    Case("is_odd", even_odd.is_odd, _parity),
    Case("gcd", gcd.gcd, _gcd),
    Case("iota_sum", iota_sum.iota_sum, _iota, max_stack_depth=3),
    Case("absolute", branches.absolute, _absolute),
    Case("quadrant", branches.quadrant, _quadrant),
    Case("divide", divide.divide, _divide),
    Case("rotate", rotate.rotate, _rotate),
    Case("collatz", collatz.collatz_steps, _collatz),
    Case("factor", primes.smallest_factor, _factor),
    Case("primes", primes.count_primes_below, _count_primes),
    Case("multiple7", primes.first_multiple_of_seven, _multiple),
    Case("spiral", vectors.spiral, _spiral),
    Case("relax", vectors.relax, _relax),
    Case("bisect", search.bisect_left, _bisect),
    Case("predict", tree.predict, _predict),
    Case("insertion_sort", sort.insertion_sort, _sort),
    Case("histogram", sort.histogram, _histogram),
)


def example(inputs, i):
    """The i-th example of a batch of inputs, as plain Python values."""

    def pick(value):
        if isinstance(value, tuple):
            items = [pick(v) for v in value]
            return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
        row = np.asarray(value)[i]
        # A per-example vector stays an array, the example's own copy (item
        # assignment in the plain function must not change the batch).
        return row.item() if row.ndim == 0 else row.copy()

    return tuple(pick(v) for v in inputs)
