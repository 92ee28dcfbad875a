"""Tuples and namedtuples that live across recursive calls (issue 22, defect 1).

A variable saved in a frame across a call is read back from its stack leaf by
leaf and rebuilt.  A tuple with a single leaf -- `(x,)`, a one-field
namedtuple, `((x,),)`, `(x, None)` -- was read back as the bare leaf, so
`t[0]` indexed the batch: a silent wrong answer (a one-field namedtuple raised
AttributeError).  Each program here is checked against the plain function on
each example alone, on NumPy, TF graph and TF+XLA, at several batch sizes,
with different recursion depths per example; results that are tuples must
keep their structure too.
"""

import collections
import tempfile

import numpy as np
import pytest

from examples.corpus import example
from transpiler import Context
from transpiler.demo import agrees
from tests.oracle import MODES

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-tuple-frames-"))

# Generated into a temporary folder and only run, never read: without black
# (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("unformatted_generation")

One = collections.namedtuple("One", ["value"])
Two = collections.namedtuple("Two", ["value", "weight"])


# ---- saved in a frame across a recursive call ------------------------------


@ctx.batch
def scaled_sum(t, n):
    # the issue's program: a one-element tuple parameter
    if n > 0:
        rest = scaled_sum(t, n - 1)
        return rest + t[0]
    return t[0] * 0


@ctx.batch
def one_field_sum(p, n):
    if n > 0:
        rest = one_field_sum(p, n - 1)
        return rest + p.value
    return p.value * 0


@ctx.batch
def nested_sum(t, n):
    if n > 0:
        rest = nested_sum(t, n - 1)
        return rest + t[0][0]
    return t[0][0] * 0


@ctx.batch
def local_tuples(x, n):
    # one-leaf tuples built in the body, a None element among them
    if n <= 0:
        return x * 0
    single = (x * n,)
    with_none = (x + n, None)
    nested = ((x - n,),)
    named = One(x * 2)
    rest = local_tuples(x, n - 1)
    return rest + single[0] + with_none[0] + nested[0][0] + named.value


@ctx.batch
def event_vector(p, n):
    # a one-field namedtuple whose leaf is a per-example vector
    if n > 0:
        rest = event_vector(p, n - 1)
        return rest + p.value * n
    return p.value * 0


@ctx.batch
def keeps_nones(x, n):
    # a one-leaf tuple whose other elements are None, nested; returned too
    nothing = (None, (None,))
    k = (x, nothing)
    if n > 0:
        rest = keeps_nones(x, n - 1)
        return (rest[0] + k[0], k[1])
    return (x, nothing)


@ctx.batch
def twice_saved(t, n):
    # two calls in one frame: the tuple is peeked after the first, popped after the second
    if n <= 1:
        return t[0]
    a = twice_saved(t, n - 1)
    b = twice_saved(t, n - 2)
    return a + b + t[0]


@ctx.batch
def mixed_lengths(t, pair, n):
    # a one-leaf tuple beside a two-field namedtuple and a three-tuple
    if n > 0:
        triple = (pair.value, t[0], pair.weight)
        rest = mixed_lengths(t, pair, n - 1)
        return rest + triple[0] * triple[2] + t[0] + pair.weight
    return t[0] - pair.value


@ctx.batch
def even_steps(t, n):
    if n <= 0:
        return t[0]
    return odd_steps((t[0] + 1,), n - 1) + t[0]


@ctx.batch
def odd_steps(t, n):
    if n <= 0:
        return t[0] * 10
    return even_steps((t[0] * 2,), n - 1) + t[0]


@ctx.batch
def mutual(x, n):
    # mutual recursion, each function saving its one-element tuple
    return even_steps((x,), n)


# ---- returned from recursive functions ---------------------------------------


@ctx.batch
def returns_single(x, n):
    if n > 0:
        r = returns_single(x, n - 1)
        return (r[0] + x,)
    return (x * 0,)


@ctx.batch
def returns_one_field(x, n):
    if n > 0:
        r = returns_one_field(x, n - 1)
        return One(r.value * 2 + x)
    return One(x)


@ctx.batch
def returns_nested(x, n):
    if n > 0:
        r = returns_nested(x, n - 1)
        return ((r[0][0] + n,),)
    return ((x,),)


@ctx.batch
def returns_with_none(x, n):
    if n > 0:
        r = returns_with_none(x, n - 1)
        return (r[0] + x, None)
    return (x, None)


@ctx.batch
def uses_returned_single(x, n):
    # the result of a recursive tuple-returning call saved across another call
    r = returns_single(x, n)
    s = returns_single(x + 1, n + 1)
    return r[0] + s[0]


# ---- passed through tail calls and held in loop registers --------------------


@ctx.batch
def tail_single(t, n):
    if n <= 0:
        return t
    return tail_single((t[0] * 2 + n,), n - 1)


@ctx.batch
def tail_one_field(p, n):
    if n <= 0:
        return p
    return tail_one_field(One(p.value + n), n - 1)


@ctx.batch
def loop_single(x, n):
    acc = (x,)
    nested = ((x * 0,),)
    named = One(x)
    i = 0
    while i < n:
        acc = (acc[0] + i,)
        nested = ((nested[0][0] + acc[0],),)
        named = One(named.value * 2 - i)
        i += 1
    return acc[0] + nested[0][0] + named.value


@ctx.batch
def loop_with_recursion(x, n):
    # a loop register that is a one-element tuple, saved across a call in the loop
    acc = (x,)
    for i in range(n):
        acc = (acc[0] + scaled_sum((x,), i),)
    return acc


def floats(rng, n):
    return np.round(rng.normal(size=n) * 10, 3)


def depths(rng, n, high=7):
    # different recursion depths per example, the base case included
    d = rng.integers(0, high, n)
    d[0] = high - 1
    return d


CASES = {
    "scaled_sum": lambda rng, n: ((floats(rng, n),), depths(rng, n)),
    "one_field_sum": lambda rng, n: (One(floats(rng, n)), depths(rng, n)),
    "nested_sum": lambda rng, n: (((floats(rng, n),),), depths(rng, n)),
    "local_tuples": lambda rng, n: (floats(rng, n), depths(rng, n)),
    "event_vector": lambda rng, n: (One(floats(rng, n * 3).reshape(n, 3)), depths(rng, n)),
    "keeps_nones": lambda rng, n: (floats(rng, n), depths(rng, n)),
    "twice_saved": lambda rng, n: ((floats(rng, n),), depths(rng, n)),
    "mixed_lengths": lambda rng, n: (
        (floats(rng, n),),
        Two(floats(rng, n), floats(rng, n)),
        depths(rng, n),
    ),
    "mutual": lambda rng, n: (floats(rng, n), depths(rng, n)),
    "returns_single": lambda rng, n: (floats(rng, n), depths(rng, n)),
    "returns_one_field": lambda rng, n: (floats(rng, n), depths(rng, n)),
    "returns_nested": lambda rng, n: (floats(rng, n), depths(rng, n)),
    "returns_with_none": lambda rng, n: (floats(rng, n), depths(rng, n)),
    "uses_returned_single": lambda rng, n: (floats(rng, n), depths(rng, n)),
    "tail_single": lambda rng, n: ((floats(rng, n),), depths(rng, n)),
    "tail_one_field": lambda rng, n: (One(floats(rng, n)), depths(rng, n)),
    "loop_single": lambda rng, n: (floats(rng, n), depths(rng, n)),
    "loop_with_recursion": lambda rng, n: (floats(rng, n), depths(rng, n, high=5)),
}


def same_structure(batched, plain):
    """Tuples stay tuples of the same kind and length, None stays None."""
    if isinstance(plain, tuple):
        return (
            isinstance(batched, tuple)
            and type(batched) is type(plain)
            and len(batched) == len(plain)
            and all(same_structure(b, p) for b, p in zip(batched, plain))
        )
    if plain is None:
        return batched is None
    return not isinstance(batched, tuple) and batched is not None


def drop_none(value):
    """The leaves `agrees` compares: a None element holds no numbers."""
    if isinstance(value, tuple):
        return tuple(drop_none(v) for v in value if v is not None)
    return value


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("batch", [1, 5, 33])
@pytest.mark.parametrize("name", list(CASES))
def test_batched_equals_per_example(name, batch, mode):
    rng = np.random.default_rng(sum(map(ord, name)) * 100 + batch)
    inputs = CASES[name](rng, batch)
    plain = ctx.plain(name)
    want = [plain(*example(inputs, i)) for i in range(batch)]
    result = globals()[name](*inputs, max_stack_depth=64, **MODES[mode])
    assert same_structure(result, want[0]), (result, want[0])
    assert agrees(drop_none(result), [drop_none(w) for w in want]), (result, want)


def test_the_issue_example():
    t, n = (np.array([1.0, 10.0, 100.0]),), np.array([2, 3, 1])
    for mode in MODES.values():
        assert np.asarray(scaled_sum(t, n, **mode)).tolist() == [2.0, 30.0, 100.0]
