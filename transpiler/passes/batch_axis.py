"""Library calls must keep the batch axis where it is.

Code is written for one example, so `np.roll(v, 1)` rolls this example's
vector.  On the batch, `v` is [batch, n], and NumPy's `np.roll(v, 1)` rolls
the whole flattened batch: a silent wrong answer.  (Reductions, running
sums and flattening, `np.sum(v)`, `v.max(axis=0)`, `np.cumsum(v)`,
`tf.reduce_sum(v)`, are given the example's meaning before this check:
python_calls.py's `array_reduction`.)  Operators and elementwise functions keep
the batch axis first by themselves; functions that take axes (reductions,
`np.stack`, `np.transpose`, `np.roll` without `axis`...) count them from
the left, where the batch axis now is.

`check` calls each NumPy/TensorFlow function (or array method, or Python
builtin) of an expression twice on placeholders: on its batched arguments,
and on one example's arguments (the first example of each batched one).  Per
example the result has some shape; on the batch it must have the batch axis
first and that same shape after it.  When it does not, the call has no
per-example meaning as written and the program is refused at build time,
with the fix: axes counted from the end (`axis=-1`).

A call can keep the shape and still mix examples: `tf.math.cumsum(m)`
on a per-example matrix sums over the batch, `np.roll(v, 1)` without an axis
moves elements from one example to the next.  `check_values` runs each call
once more on a probe, a batch of random examples that differ, and compares
rows of the batched result with the call on those examples alone.  A call
that needs values the probe does not give (an index in range, a positive
size) fails on it and is not compared: the probe can miss a mix-up; what it
refuses has been seen to give another example's numbers.
User functions are never called by the check (they may have side effects,
and are checked through their own primitives when batched).
"""

from __future__ import annotations

import ast
import builtins
import types
from typing import Callable, Optional

import numpy as np

from transpiler import expression_helpers

# Builtins that are per example on a batch as they are, or that the
# subscript pass has already rewritten (`len`), or that build no values.
_PER_EXAMPLE_BUILTINS = frozenset(
    id(getattr(builtins, name))
    for name in ("abs", "len", "isinstance", "type", "print", "repr", "str", "slice", "range")
)
# The generated module's own helpers, inserted by earlier passes: per
# example by construction.
_HELPERS = expression_helpers.NAMES


def check(
    expr: str,
    evaluate: Callable[[str], object],
    batched_rank: Callable[[object], Optional[int]],
) -> Optional[str]:
    """A message for the first library call in `expr` that moves or drops
    the batch axis, or None.  `evaluate(text)` gives a subexpression's value
    on placeholders (or raises); `batched_rank(value)` its per-example rank
    if it has the batch axis, else None."""
    for node, _, batched, one_example in _library_calls(expr, evaluate, batched_rank):
        try:
            problem = _mismatch(batched, one_example(0), batched_rank)
        except Exception:  # noqa: BLE001 - no per-example reading to compare
            continue
        if problem is not None:
            return (
                f"`{ast.unparse(node)}` does not keep the batch axis first: per example it gives "
                f"{problem[1]}, on the batch {problem[0]}.  {_COUNT_FROM_THE_END}"
            )
    return None


def check_values(
    expr: str,
    evaluate: Callable[[str], object],
    batched_rank: Callable[[object], Optional[int]],
    rows=(0, 1, -1),
) -> Optional[str]:
    """A message for the first library call in `expr` whose batched result
    mixes examples, or None.

    `evaluate` gives values on a probe: a batch of random examples, each
    different.  Row b of the batched result must equal the call on example b
    alone, for the `rows` checked: `tf.math.cumsum(m)` keeps the shape
    but sums over the batch, `np.roll(v, 1)` moves elements between
    examples.  Random-number functions differ run to run and are not
    compared.  Run after `check`, so the shapes already agree.
    """
    for node, function, batched, one_example in _library_calls(expr, evaluate, batched_rank):
        if _is_random(node, function):
            continue
        for row in rows:
            try:
                one = one_example(row)
                agrees = _same_values(_example(batched, row, batched_rank), one)
                row %= _rows(batched, batched_rank)
            except Exception:  # noqa: BLE001 - the call cannot run per example: not compared
                break
            if not agrees:
                return (
                    f"`{ast.unparse(node)}` mixes examples: on a batch, example {row}'s "
                    "result is not what the call gives on that example alone.  "
                    f"{_COUNT_FROM_THE_END}"
                )
    return None


def may_mix(expr: str) -> bool:
    """Whether `expr` calls anything besides the generated module's helpers
    (only calls can mix examples; operators cannot)."""
    return any(
        isinstance(node, ast.Call) and not _is_helper(node) for node in ast.walk(ast.parse(expr, mode="eval"))
    )


_COUNT_FROM_THE_END = (
    "Functions that take axes count them from the left, where the batch axis is: count "
    "them from the end instead (`np.sum(v, axis=-1)`, `np.stack([a, b], axis=-1)`, "
    "`tf.reduce_max(x, axis=-1)`, `np.roll(v, 1, axis=-1)`)"
)


def _library_calls(expr, evaluate, batched_rank):
    """(node, function, batched result, one_example) for each library call in `expr`
    that has a batched argument and runs on the batch; `one_example(b)`
    calls the same function on example b's arguments."""
    for node in ast.walk(ast.parse(expr, mode="eval")):
        if not isinstance(node, ast.Call) or _is_helper(node):
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            continue
        try:
            function = evaluate(ast.unparse(node.func))
            if not _library(function) or not _only_library_calls(node, evaluate):
                continue
            args = [evaluate(ast.unparse(a)) for a in node.args]
            keywords = {k.arg: evaluate(ast.unparse(k.value)) for k in node.keywords}
        except Exception:  # noqa: BLE001 - the whole expression reports it
            continue
        owner = getattr(function, "__self__", None)
        if not any(_has_batch(v, batched_rank) for v in [owner, *args, *keywords.values()]):
            continue  # constants only: the same for every example
        try:
            batched = function(*args, **keywords)
        except Exception:  # noqa: BLE001 - no per-example reading to compare
            continue
        # a method by the name the code calls it (JAX's `v.sum` is `_sum`)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else function.__name__
        yield node, function, batched, _one_example(function, method, owner, args, keywords, batched_rank)


def _one_example(function, method, owner, args, keywords, batched_rank):
    def call(row):
        per_example = function
        if owner is not None and _has_batch(owner, batched_rank):
            # a method of a batched array, `v.sum()`: one example's `v[b].sum`
            per_example = getattr(_example(owner, row, batched_rank), method)
        return per_example(
            *[_example(a, row, batched_rank) for a in args],
            **{k: _example(v, row, batched_rank) for k, v in keywords.items()},
        )

    return call


def _only_library_calls(node: ast.Call, evaluate) -> bool:
    """Whether every call inside `node`'s arguments is a library call or a
    helper: evaluating them never runs the user's own functions twice."""
    for inner in ast.walk(node):
        if inner is node or not isinstance(inner, ast.Call) or _is_helper(inner):
            continue
        try:
            function = evaluate(ast.unparse(inner.func))
        except Exception:  # noqa: BLE001 - cannot tell: do not run it
            return False
        if not _library(function) and id(function) not in _PER_EXAMPLE_BUILTINS:
            return False
    return True


def _is_helper(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id in _HELPERS


def _library(function) -> bool:
    """NumPy, TensorFlow, a method of an array, or a builtin that may reduce."""
    if id(function) in _PER_EXAMPLE_BUILTINS or isinstance(function, type):
        return False
    owner = getattr(function, "__self__", None)
    if owner is not None and not isinstance(owner, type) and hasattr(owner, "shape"):
        return True  # `v.sum()`, `x.mean(axis=0)`
    module = getattr(function, "__module__", None)
    if module is None and not isinstance(function, types.FunctionType):
        module = type(function).__module__  # a ufunc-like object, a C method
    # A Python function is the user's unless a library's module defines it:
    # one made by `exec` has no module (its type's, "builtins", is not its own).
    return (module or "").split(".")[0] in ("numpy", "tensorflow", "builtins", "keras", "jax", "jaxlib")


def _has_batch(value, batched_rank) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_has_batch(v, batched_rank) for v in value)
    return batched_rank(value) is not None


def _example(value, row, batched_rank):
    """One example's value: row `row` of each batched leaf."""
    if isinstance(value, (tuple, list)):
        parts = [_example(v, row, batched_rank) for v in value]
        return type(value)(*parts) if hasattr(value, "_fields") else type(value)(parts)
    return value[row] if batched_rank(value) is not None else value


def _rows(value, batched_rank) -> int:
    while isinstance(value, (tuple, list)):
        value = value[0]
    return int(_shape(value)[0])


def _same_values(a, b) -> bool:
    """Whether two results hold the same numbers (to rounding: a batched
    reduction may add in another order)."""
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        if not (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list))) or len(a) != len(b):
            return False
        return all(_same_values(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=1e-4, atol=1e-6, equal_nan=True))
    return bool(np.array_equal(a, b))


def _is_random(node: ast.Call, function) -> bool:
    """Whether the call draws random numbers (NumPy's or TensorFlow's):
    batched and alone they draw different numbers."""
    owner = getattr(function, "__self__", None)
    if isinstance(owner, (np.random.RandomState, np.random.Generator)):
        return True
    module = getattr(function, "__module__", None) or ""
    return "random" in module or "random" in ast.unparse(node.func)


def _shape(value):
    shape = getattr(value, "shape", None)
    return () if shape is None else tuple(getattr(shape, "as_list", lambda: list(shape))())


def _mismatch(batched, one, batched_rank):
    """(batched shape text, per-example shape text) of the first leaf where
    the batched result is not [batch, *per-example shape], else None."""
    if isinstance(batched, (tuple, list)) and isinstance(one, (tuple, list)):
        if len(batched) != len(one):
            return (f"{len(batched)} values", f"{len(one)} values")
        for b, o in zip(batched, one):
            found = _mismatch(b, o, batched_rank)
            if found is not None:
                return found
        return None
    if isinstance(batched, (tuple, list)) or isinstance(one, (tuple, list)):
        return None  # not arrays on both sides: nothing to compare
    rank = batched_rank(batched)
    shape, per_example = _shape(batched), _shape(one)
    if rank is None:
        return (f"shape {shape} without the batch axis", f"shape {per_example}")
    if shape[1:] != per_example:
        return (f"shape (batch, {', '.join(str(d) for d in shape[1:])})", f"shape {per_example}")
    return None
