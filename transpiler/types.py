"""Per-example types of program variables.

A variable's type describes ONE example: the batch dimension is never part of
it.  A type is a *pattern*: a `TensorType` leaf, `NONE` (the value `None`,
which has no leaves), or a `TupleType` of patterns (a tuple, list or
namedtuple built in the user's code).

Literals in the user's code (`return 1`) produce *weak* types, as in JAX and
NumPy 2: a weak type gives way to a strong one when the two meet at a join, so
`fib` on int64 inputs returns int64 even though one of its returns is the
literal `1`.  Two different strong dtypes meeting is an error, never a silent
cast.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np


class TypeJoinError(TypeError):
    """Two values of incompatible types flow into one variable."""


class Size(int):
    """A per-example size that is a symbol (`n` in `float64[n]`), bound at call time.

    While a program is compiled, a symbol stands for a *probe value*: an
    integer no literal of the user's code holds (`probe_values`).  Every
    primitive runs on arrays of that size, so NumPy, TensorFlow and JAX
    compute as they would on any size; a `TensorType` built while the probe
    is active turns a dimension equal to a probe value back into its symbol
    (`symbolic_sizes`).  A size the code computes from a symbol (`n + 1`)
    is a plain int and stays one: the second probe of `transpiler.sizes`
    sees it change and refuses the program as not size-generic.

    `str` gives the symbol (`float64[n]` in headers and comments); `repr`
    gives the name that holds its value in generated code (`size_n`), so a
    folded `len(v)` or a shape written through `ast.unparse` reads the size
    of this call, not the probe's.
    """

    symbol: str

    def __new__(cls, value: int, symbol: str):
        self = super().__new__(cls, value)
        self.symbol = symbol
        return self

    @property
    def variable(self) -> str:
        return size_variable(self.symbol)

    def __repr__(self):
        return self.variable

    def __str__(self):
        return self.symbol

    def __reduce__(self):
        return (Size, (int(self), self.symbol))


SIZE_PREFIX = "size_"


def size_variable(symbol: str) -> str:
    """The generated code's name for the value of size `symbol`."""
    return SIZE_PREFIX + symbol


def is_symbolic(pattern) -> bool:
    """True if any leaf of `pattern` (or of a tuple of patterns) has a symbolic size."""
    if isinstance(pattern, tuple) and not isinstance(pattern, TupleType):
        return any(is_symbolic(p) for p in pattern)
    return any(isinstance(d, Size) for leaf in leaves(pattern) for d in leaf.shape)


def symbols_of(signature) -> Dict[str, int]:
    """{symbol: probe value} of a signature's symbolic sizes, first seen first."""
    out: Dict[str, int] = {}
    for pattern in signature:
        for leaf in leaves(pattern):
            for d in leaf.shape:
                if isinstance(d, Size):
                    out.setdefault(d.symbol, int(d))
    return out


_ACTIVE = threading.local()  # .sizes: {probe value: Size} while a program compiles


@contextlib.contextmanager
def symbolic_sizes(sizes):
    """Within: a `TensorType` dimension equal to one of `sizes` (Size objects)
    becomes that Size, whatever computed it (a placeholder's shape, a
    primitive's result)."""
    old = getattr(_ACTIVE, "sizes", None)
    _ACTIVE.sizes = {int(s): s for s in sizes}
    try:
        yield
    finally:
        _ACTIVE.sizes = old


def active_sizes() -> Dict[str, "Size"]:
    """{variable name: Size} of the sizes bound while a program compiles
    (the names generated expressions use: `size_n`)."""
    sizes = getattr(_ACTIVE, "sizes", None) or {}
    return {s.variable: s for s in sizes.values()}


def _dimension(d):
    if isinstance(d, Size):
        return d
    d = int(d)
    sizes = getattr(_ACTIVE, "sizes", None)
    return sizes.get(d, d) if sizes else d


@dataclasses.dataclass(frozen=True)
class TensorType:
    """One array leaf: `dtype` and the per-example `shape` (no batch dim)."""

    dtype: Any
    shape: Tuple[int, ...] = ()
    weak: bool = dataclasses.field(default=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "dtype", _as_numpy_dtype(self.dtype))
        object.__setattr__(self, "shape", tuple(_dimension(d) for d in self.shape))

    def __str__(self):
        dims = ", ".join(str(d) for d in self.shape)
        return f"{self.dtype.name}[{dims}]"


class _NoneType:
    """The type of `None`: a value with no array leaves."""

    def __repr__(self):
        return "NONE"

    __str__ = __repr__

    def __reduce__(self):
        return "NONE"


NONE = _NoneType()


@dataclasses.dataclass(frozen=True)
class TupleType:
    """A fixed-length tuple of patterns; `cls` is the namedtuple class, `list`
    for a list (kept a list on the way out, as code written for the
    predecessor expects of a list of chain states), or None for a tuple."""

    elements: Tuple["Pattern", ...]
    cls: Any = None

    def __str__(self):
        inner = ", ".join(str(e) for e in self.elements)
        if self.cls is list:
            return f"[{inner}]"
        if self.cls is None:
            return f"({inner}{',' if len(self.elements) == 1 else ''})"
        return f"{self.cls.__name__}({inner})"


Pattern = Union[TensorType, _NoneType, TupleType]


def optional(inner: Pattern) -> TupleType:
    """The type of a value that is `inner` in some examples and None in
    others: an `autobatch_runtime.optional.Optional(present, value)`, a
    namedtuple of a bool and the value, so that registers, stacks and
    choices hold it as they hold any tuple."""
    from autobatch_runtime.optional import Optional

    return TupleType((TensorType(np.bool_), inner), Optional)


def is_optional(pattern) -> bool:
    from autobatch_runtime.optional import Optional

    return isinstance(pattern, TupleType) and pattern.cls is Optional


def ragged(leaf: TensorType) -> TupleType:
    """The type of a vector whose length differs per example (a slice with
    per-example bounds, a parameter a recursion passes `s[1:-1]`): an
    `autobatch_runtime.ragged.Ragged(values, length)` of `leaf`'s dtype
    whose `values` has `leaf`'s length as its capacity."""
    from autobatch_runtime.ragged import Ragged

    return TupleType((TensorType(leaf.dtype, leaf.shape[:1]), TensorType(np.int64)), Ragged)


def is_ragged(pattern) -> bool:
    from autobatch_runtime.ragged import Ragged

    return isinstance(pattern, TupleType) and pattern.cls is Ragged


def capacity(pattern):
    """A Ragged's capacity (a size: a symbol or an int)."""
    return pattern.elements[0].shape[0]


def _join_ragged(a, b):
    """A vector meets a vector of another length, or a Ragged: a Ragged
    whose capacity holds both (`join`)."""
    vectors = [x.elements[0] if is_ragged(x) else x for x in (a, b)]
    if not all(isinstance(v, TensorType) and len(v.shape) == 1 for v in vectors):
        raise TypeJoinError(
            f"per-example shapes differ: {a} vs {b} (only a vector, one axis, may have a "
            "length that differs per example)"
        )
    u, v = vectors
    dtype = join(TensorType(u.dtype, (), weak=u.weak), TensorType(v.dtype, (), weak=v.weak))
    size = u.shape[0] if u.shape[0] >= v.shape[0] else v.shape[0]
    return ragged(TensorType(dtype.dtype, (size,)))


@dataclasses.dataclass(frozen=True)
class Type:
    """The predecessor's wrapper of a pattern of `TensorType`s (`Type.tensors`).

    Kept so that `type_inference=` callables written for TFP's auto_batching
    work unchanged: they receive a list of `Type` and return a list of `Type`.
    """

    tensors: Any


def _as_numpy_dtype(dtype) -> np.dtype:
    as_numpy = getattr(dtype, "as_numpy_dtype", None)  # a tf.DType
    if as_numpy is not None:
        dtype = as_numpy
    return np.dtype(dtype)


def from_user(spec) -> Pattern:
    """Normalizes a user-written type (TensorType, Type, tuple/list of them)."""
    if isinstance(spec, Type):
        return from_user(spec.tensors)
    if isinstance(spec, TensorType):
        return spec
    if spec is None or spec is NONE:
        return NONE
    if isinstance(spec, TupleType):
        # What a `type_inference=` callable receives for a tuple argument;
        # handing it back (`lambda args: args[0]`) means "same type".  Its
        # elements may themselves be user-written (a Type, a plain tuple).
        return TupleType(tuple(from_user(e) for e in spec.elements), spec.cls)
    if isinstance(spec, tuple) and hasattr(spec, "_fields"):
        return TupleType(tuple(from_user(s) for s in spec), type(spec))
    if isinstance(spec, (tuple, list)):
        return TupleType(tuple(from_user(s) for s in spec))
    raise TypeError(
        f"expected a TensorType(dtype, shape) or a tuple of them, got {spec!r}"
    )


def leaves(pattern: Pattern):
    """The `TensorType` leaves of a pattern, depth first, left to right."""
    if isinstance(pattern, TensorType):
        return [pattern]
    if isinstance(pattern, TupleType):
        return [leaf for e in pattern.elements for leaf in leaves(e)]
    return []


def named_classes(pattern: Pattern):
    """The namedtuple classes a pattern holds, outermost first (no tuples or lists)."""
    if not isinstance(pattern, TupleType):
        return []
    own = [] if pattern.cls in (None, list) else [pattern.cls]
    return own + [c for e in pattern.elements for c in named_classes(e)]


def strong(pattern: Pattern) -> Pattern:
    """The same pattern with every weak flag dropped (types as finally stored)."""
    if isinstance(pattern, TensorType):
        return TensorType(pattern.dtype, pattern.shape)
    if isinstance(pattern, TupleType):
        return TupleType(tuple(strong(e) for e in pattern.elements), pattern.cls)
    return pattern


def join(a: Optional[Pattern], b: Optional[Pattern]) -> Optional[Pattern]:
    """The least type holding both `a` and `b` (None means "not known yet")."""
    if a is None:
        return b
    if b is None:
        return a
    if (a is NONE) != (b is NONE) or is_optional(a) != is_optional(b):
        # None meets a value (`return None` on one path, `return i` on
        # another; `best = None` then `best = x`): an optional of it.
        a, b = (x.elements[1] if is_optional(x) else x for x in (a, b))
        inner = b if a is NONE else a if b is NONE else join(a, b)
        return NONE if inner is NONE else optional(inner)
    if is_ragged(a) or is_ragged(b):
        if a == b:
            return a
        return _join_ragged(a, b)
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        if a.shape != b.shape and len(a.shape) == len(b.shape) == 1:
            # `s` and `s[1:-1]`: one vector of per-example length
            return _join_ragged(a, b)
        if a.shape != b.shape:
            raise TypeJoinError(f"per-example shapes differ: {a} vs {b}")
        if a.dtype == b.dtype:
            return a if not a.weak else b
        if a.weak != b.weak:
            weak, strong_one = (a, b) if a.weak else (b, a)
            if _KIND_ORDER[weak.dtype.kind] > _KIND_ORDER[strong_one.dtype.kind]:
                # `x = v[0]` (an int) then `x = 0.5`: in Python x holds a
                # float; the literal must not be cut to the int's dtype.  Still
                # weak, so the strong int meeting it again keeps the float.
                return TensorType(np.promote_types(weak.dtype, strong_one.dtype), a.shape, weak=True)
            return strong_one
        if a.weak and b.weak:
            return TensorType(np.promote_types(a.dtype, b.dtype), a.shape, weak=True)
        if {a.dtype.kind, b.dtype.kind} in ({"i", "f"}, {"u", "f"}):
            # An int on one path, a float on another (`x = n` then
            # `x /= 2`; `return n` or `return n / 2`): in Python the
            # variable holds either; here it is a float throughout, as
            # where one of them is a literal (ints beyond 2**53 round).
            return TensorType(np.promote_types(a.dtype, b.dtype), a.shape)
        raise TypeJoinError(f"dtypes differ: {a} vs {b}")
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        # A list meets a tuple of its length: both are sequences of those
        # elements, and the list wins (the predecessor returned lists).
        sequences = {a.cls, b.cls} <= {None, list}
        if len(a.elements) != len(b.elements) and sequences:
            raise TypeJoinError(
                f"tuple structures differ: {a} vs {b}. A list's or tuple's length is part of "
                "its type, so one variable cannot hold both (a slice of it passed down a "
                "recursion, say): make the sequence an argument given as an array (a vector "
                "per example, whose slices are vectors of per-example length), or pass an "
                "index down instead of a slice (`f(s, i + 1)`)"
            )
        if len(a.elements) != len(b.elements) or (a.cls is not b.cls and not sequences):
            raise TypeJoinError(f"tuple structures differ: {a} vs {b}")
        return TupleType(
            tuple(join(x, y) for x, y in zip(a.elements, b.elements)),
            list if list in (a.cls, b.cls) else a.cls,
        )
    if a is NONE and b is NONE:
        return NONE
    raise TypeJoinError(f"incompatible values: {a} vs {b}")


# bool < int < float < complex: a weak literal of a higher kind widens a
# strong type instead of giving way to it.
_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def signature_text(signature) -> str:
    """A stable one-line text for a list of parameter patterns."""
    return "(" + ", ".join(str(p) for p in signature) + ")"
