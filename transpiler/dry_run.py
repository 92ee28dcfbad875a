"""`dry_run=True`: the original function, run as Python on each example.

A batched function is written for one example, so its dry run runs it once
per example: each argument array is cut along its leading (batch) axis,
example `i` gets `arg[i]` (a Python number for a scalar, its own copy of a
per-example vector, so `len(v)` and item assignment mean what they mean on
one example), and the per-example results are stacked back into arrays.
Structures (tuples, namedtuples, lists holding arrays) are cut and stacked
leaf by leaf.

Arguments with no batch axis (Python numbers, 0-d arrays, objects that are
not arrays) are given to every example as they are; when no argument has a
batch axis the function runs once and its result comes back untouched
(`fib(10, dry_run=True)` is `fib(10)`).

`dry_run="as_given"` runs the function once on the arguments as given, the
predecessor's meaning: code written for batch-of-one arrays (a primitive
that indexes the batch axis, `truthy(...)` tests) runs that way.
A function declared with a `type_inference=` callable was written for the
predecessor (its types by hand, its code for batch arrays: TFP's NUTS
client reads `.dtype` and the batch size off its arguments), so there
`dry_run=True` keeps the predecessor's meaning, "as_given".
"""

from __future__ import annotations

from typing import Any, Callable, List, Sequence

import numpy as np

AS_GIVEN = "as_given"


def check_mode(mode) -> None:
    """Refuses a `dry_run=` value that is neither a bool nor "as_given"."""
    if isinstance(mode, (bool, np.bool_)) or mode is None or mode == AS_GIVEN:
        return
    raise ValueError(
        f"dry_run={mode!r}: pass True (run the function on each example) or "
        f"{AS_GIVEN!r} (run it once on the arguments as given)"
    )


def _is_array(value) -> bool:
    """An array-like leaf: a NumPy array or a tensor (anything with .numpy())."""
    return isinstance(value, np.ndarray) or (
        hasattr(value, "numpy") and hasattr(value, "shape") and not isinstance(value, type)
    )


def _is_structure(value) -> bool:
    """A tuple, or a list holding arrays or structures (a list of numbers is one array)."""
    if isinstance(value, tuple):
        return True
    return isinstance(value, list) and any(
        _is_array(v) or isinstance(v, (tuple, list)) for v in value
    )


def _batched_leaf(value):
    """`value` as a NumPy array with a batch axis, or None if it has none."""
    if _is_array(value):
        array = np.asarray(value)
    elif isinstance(value, list) and not _is_structure(value):
        array = np.asarray(value)  # a list of numbers: a batch, as in a batched call
        if array.dtype == object:
            return None
    else:
        return None
    return array if array.ndim >= 1 else None


def _leaves(value, out: List[np.ndarray]) -> None:
    if _is_structure(value):
        for item in value:
            _leaves(item, out)
        return
    leaf = _batched_leaf(value)
    if leaf is not None:
        out.append(leaf)


def _batch_size(args: Sequence[Any]) -> int:
    """The batch size the arguments agree on (1 broadcasts); 0 when none is batched."""
    leaves: List[np.ndarray] = []
    for arg in args:
        _leaves(arg, leaves)
    sizes = {leaf.shape[0] for leaf in leaves}
    if not sizes:
        return 0
    if len(sizes - {1}) > 1:
        raise ValueError(
            f"dry_run: the arguments' batch sizes differ ({sorted(sizes)}); "
            "each must be the batch size or 1"
        )
    return max(sizes)


def _example(value, i: int):
    """Example `i` of one argument: cut at every batched leaf."""
    if _is_structure(value):
        items = [_example(v, i) for v in value]
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    leaf = _batched_leaf(value)
    if leaf is None:
        return value
    row = leaf[0] if leaf.shape[0] == 1 else leaf[i]
    # A scalar becomes a Python number, a vector the example's own copy.
    return row.item() if row.ndim == 0 else row.copy()


def _stack(results: List[Any]):
    """Per-example results stacked into one batched result, leaf by leaf."""
    first = results[0]
    if isinstance(first, (tuple, list)) and not (
        isinstance(first, list) and not _is_structure(first)
    ):
        columns = [_stack([r[k] for r in results]) for k in range(len(first))]
        if isinstance(first, list):
            return columns
        return type(first)(*columns) if hasattr(first, "_fields") else tuple(columns)
    if first is None:
        return None
    return np.stack([np.asarray(r) for r in results])


def run(function: Callable, args: Sequence[Any], mode) -> Any:
    """The dry run of `function` on `args` (see the module docstring)."""
    if mode == AS_GIVEN:
        return function(*args)
    batch = _batch_size(args)
    if batch == 0:
        return function(*args)
    return _stack([function(*(_example(a, i) for a in args)) for i in range(batch)])
