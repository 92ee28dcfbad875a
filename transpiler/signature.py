"""Signatures: the per-example types of a call's arguments.

`of_args` reads a signature off actual arguments (the batch dimension
dropped); `parse` reads back the text that `types.signature_text` writes into
generated headers, so a generated module's list of programs can be
regenerated exactly.  Light: importable without the compiler's frontend.
"""

from __future__ import annotations

import re

import numpy as np

from transpiler import types as T


def of_value(value) -> T.Pattern:
    """The per-example pattern of one batched argument."""
    if value is None:
        return T.NONE
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return T.TupleType(tuple(of_value(v) for v in value), type(value))
    if isinstance(value, (tuple, list)) and not _is_numeric_list(value):
        return T.TupleType(tuple(of_value(v) for v in value))
    if isinstance(value, (bool, int, float, complex)):
        return T.TensorType(np.asarray(value).dtype, ())
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    if dtype is None or shape is None:
        array = np.asarray(value)
        if array.dtype == object:
            raise TypeError(
                f"a batched argument must be an array or a number, got "
                f"{type(value).__name__}"
            )
        dtype, shape = array.dtype, array.shape
    shape = tuple(shape)
    if any(d is None for d in shape):
        raise TypeError(f"argument shape {shape} is not fully known")
    return T.TensorType(dtype, tuple(shape[1:]) if len(shape) else ())


def _is_numeric_list(value):
    return isinstance(value, list) and all(
        isinstance(v, (bool, int, float, list)) for v in value
    )


def of_args(args) -> tuple:
    return tuple(of_value(a) for a in args)


_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z_0-9]*|\[|\]|\(|\)|,|-?\d+)")


def parse(text: str, classes=None) -> tuple:
    """Parses "(int64[], Point(float32[3], bool[]))" into a tuple of patterns."""
    tokens = [m.group(1) for m in _TOKEN.finditer(text)]
    pos = [0]
    classes = classes or {}

    def peek():
        return tokens[pos[0]] if pos[0] < len(tokens) else None

    def take(expected=None):
        token = peek()
        if expected is not None and token != expected:
            raise ValueError(f"bad signature {text!r}: expected {expected!r} at {token!r}")
        pos[0] += 1
        return token

    def sequence():
        take("(")
        items = []
        while peek() != ")":
            items.append(pattern())
            if peek() == ",":
                take(",")
        take(")")
        return tuple(items)

    def pattern():
        token = peek()
        if token == "(":
            return T.TupleType(sequence())
        name = take()
        if name == "NONE":
            return T.NONE
        if peek() == "[":
            take("[")
            dims = []
            while peek() != "]":
                dims.append(int(take()))
                if peek() == ",":
                    take(",")
            take("]")
            return T.TensorType(np.dtype(name), tuple(dims))
        if name not in classes:
            raise ValueError(f"unknown class {name!r} in signature {text!r}")
        return T.TupleType(sequence(), classes[name])

    return sequence()
