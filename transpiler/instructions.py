"""The IR classes under the predecessor's module name (`auto_batching.instructions`).

    from transpiler import instructions
    op = instructions.PrimOp(["x"], "y", lambda x: x + 1, set())   # its order
    op.vars_in, op.vars_out, op.function(3), op.replace(vars_out="z")
    instructions.pattern_map2(lambda a, b: tf.where(c, a, b), point1, point2)

Besides the classes, the pattern helpers that code written for the
predecessor calls on values (its NUTS client picks between two `Point`s
with `pattern_map2`).  A *pattern* is a leaf or a (nested) list, tuple or
namedtuple of patterns; the helpers rebuild the container of the first
pattern, so a namedtuple stays that namedtuple and a list stays a list.
"""

from transpiler.ir.instructions import (  # noqa: F401
    Block,
    Branch,
    Call,
    Function,
    Goto,
    IndirectGoto,
    LoweredProgram,
    Module,
    Move,
    Origin,
    Peek,
    Pop,
    PrimOp,
    Program,
    Push,
    PushBranch,
    PushGoto,
    Return,
    Select,
    pattern_names,
)
from transpiler.types import NONE, TensorType, TupleType, Type  # noqa: F401


def _is_node(pattern, leaf_type):
    """A container to descend into: a list or tuple not declared a leaf."""
    return isinstance(pattern, (list, tuple)) and not isinstance(pattern, leaf_type)


def _rebuilt(like, items):
    """A container of `like`'s kind holding `items` (namedtuples take fields)."""
    if isinstance(like, tuple) and hasattr(like, "_fields"):
        return type(like)(*items)
    return type(like)(items)


def pattern_map(f, pattern, leaf_type=()):
    """`pattern` with every leaf `x` replaced by `f(x)`.

    `leaf_type`: classes to treat as leaves although they are lists or
    tuples (a namedtuple that stands for one value, for instance).
    """
    if not _is_node(pattern, leaf_type):
        return f(pattern)
    return _rebuilt(pattern, [pattern_map(f, p, leaf_type) for p in pattern])


def pattern_traverse(pattern, leaf_type=()):
    """Yields the leaves of `pattern`, depth first, left to right."""
    if not _is_node(pattern, leaf_type):
        yield pattern
        return
    for part in pattern:
        yield from pattern_traverse(part, leaf_type)


def pattern_flatten(pattern, leaf_type=()):
    """The leaves of `pattern` as a list, depth first, left to right."""
    return list(pattern_traverse(pattern, leaf_type))


def _check_matches(pattern1, pattern2, leaf_type):
    """Raises ValueError unless `pattern2` is a container of pattern1's length."""
    if not _is_node(pattern2, leaf_type):
        raise ValueError(f"patterns differ: expected a list or tuple, got {pattern2!r}")
    if len(pattern1) != len(pattern2):
        raise ValueError(
            f"patterns differ: expected {len(pattern1)} items, got {len(pattern2)}"
        )


def pattern_zip(pattern1, pattern2, leaf_type=()):
    """Yields (leaf of pattern1, the part of pattern2 at the same place).

    `pattern2` must have pattern1's structure down to pattern1's leaves;
    below them it may go on (the part yielded is then a sub-pattern).
    Raises ValueError where the structures differ.
    """
    if not _is_node(pattern1, leaf_type):
        yield pattern1, pattern2
        return
    _check_matches(pattern1, pattern2, leaf_type)
    for a, b in zip(pattern1, pattern2):
        yield from pattern_zip(a, b, leaf_type)


def pattern_map2(f, pattern1, pattern2, leaf_type=()):
    """`f(a, b)` for every leaf `a` of pattern1 and the part `b` of pattern2 at
    the same place, in pattern1's structure (see `pattern_zip`)."""
    if not _is_node(pattern1, leaf_type):
        return f(pattern1, pattern2)
    _check_matches(pattern1, pattern2, leaf_type)
    return _rebuilt(
        pattern1, [pattern_map2(f, a, b, leaf_type) for a, b in zip(pattern1, pattern2)]
    )
