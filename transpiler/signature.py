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


def of_value(value, name="1") -> T.Pattern:
    """The per-example pattern of one batched argument, `name` in its errors.

    Raises TypeError for what is not numbers (strings, object arrays, other
    objects) and ValueError for a ragged nested list, naming the argument:
    these would otherwise fail deep inside NumPy or the compiler.
    """
    if value is None:
        return T.NONE
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return T.TupleType(
            tuple(of_value(v, f"{name}.{f}") for f, v in zip(value._fields, value)), type(value)
        )
    if isinstance(value, (str, bytes)):
        raise TypeError(f"argument {name} is a string ({value!r:.40}); {_NUMBERS}")
    if isinstance(value, (tuple, list)) and not _is_numeric_list(value):
        # A list of arrays (a list of chain states) stays a list on the way out.
        return T.TupleType(
            tuple(of_value(v, f"{name}[{i}]") for i, v in enumerate(value)),
            list if isinstance(value, list) else None,
        )
    if isinstance(value, (bool, int, float, complex)):
        return T.TensorType(np.asarray(value).dtype, ())
    dtype, shape = _dtype_and_shape(value, name)
    # The batch size may be unknown (a tensor inside the user's tf.function
    # traced for any batch size); the per-example shape must be known.
    if any(d is None for d in shape[1:]):
        raise TypeError(f"argument {name} has shape {shape}, not fully known")
    return T.TensorType(dtype, tuple(shape[1:]) if len(shape) else ())


_NUMBERS = "batched arguments are numbers, arrays of numbers, or tuples of them"


def _dtype_and_shape(value, name):
    """A value's NumPy dtype and shape, or a clear error if it holds no numbers."""
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    if dtype is None or shape is None:
        try:
            array = np.asarray(value)
        except ValueError:  # NumPy refuses rows of different lengths
            raise ValueError(
                f"argument {name} is ragged (its rows have different lengths); pad it to a "
                "rectangular array, and pass the lengths as another argument"
            ) from None
        if array.dtype == object and array.ndim == 0:
            raise TypeError(f"argument {name} is a {type(value).__name__}; {_NUMBERS}")
        dtype, shape = array.dtype, array.shape
    dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))  # a TensorFlow dtype too
    if dtype.kind in "US":
        raise TypeError(f"argument {name} holds strings (dtype {dtype}); {_NUMBERS}")
    if dtype.kind not in "biufc":
        raise TypeError(
            f"argument {name} is an array of dtype {dtype}, not numbers (ragged rows or mixed "
            f"values make an object array); {_NUMBERS}"
        )
    return dtype, tuple(shape)


def _is_numeric_list(value):
    return isinstance(value, list) and all(
        isinstance(v, (bool, int, float, list)) for v in value
    )


def of_args(args, names=None) -> tuple:
    names = names or [str(k + 1) for k in range(len(args))]
    return tuple(of_value(a, n) for a, n in zip(args, names))


def check_declared(declared, args, names, where):
    """Raises TypeError where an argument contradicts a declared signature.

    A declared signature fixes the program, so a contradicting argument
    would fail in the generated module with a message about regenerating;
    here it names the argument and the declaration (`where`).
    """
    for pattern, value, name in zip(declared, args, names):
        _check_pattern(pattern, value, name, where)


def _check_pattern(pattern, value, name, where):
    if isinstance(pattern, T.TupleType):
        if not isinstance(value, (tuple, list)) or len(value) != len(pattern.elements):
            raise TypeError(f"argument {name} should be a tuple of {len(pattern.elements)} as declared {where}")
        for k, (element, item) in enumerate(zip(pattern.elements, value)):
            _check_pattern(element, item, f"{name}[{k}]", where)
        return
    if not isinstance(pattern, T.TensorType):
        return
    if isinstance(value, (bool, int, float, complex)):
        return  # a Python number takes the declared dtype
    dtype, shape = _dtype_and_shape(value, name)
    if dtype != pattern.dtype:
        raise TypeError(
            f"argument {name} has dtype {dtype}, but {pattern} is declared {where}; convert it "
            f"(np.asarray(..., {pattern.dtype.name})) or change the declaration"
        )
    if not (_fits(shape[1:], pattern.shape) or _fits(shape, pattern.shape)):
        raise TypeError(
            f"argument {name} has per-example shape {shape[1:]}, but {pattern} is declared {where}"
        )


def _fits(shape, declared):
    """A per-example shape against a declared one (a symbolic size takes any)."""
    return len(shape) == len(declared) and all(
        isinstance(d, T.Size) or int(s) == int(d) for s, d in zip(shape, declared)
    )


def check_batch_sizes(args, signature, names):
    """Raises ValueError, naming the arguments, if batch sizes are not equal or 1."""
    sizes = []
    for value, pattern, name in zip(args, signature, names):
        sizes.extend(_leaf_batch_sizes(value, pattern, name))
    if len({s for _, s in sizes} - {1, None}) > 1:  # None: known when the graph runs
        described = ", ".join(f"{n}: {s}" for n, s in sizes)
        raise ValueError(f"batch sizes must be equal or 1 (broadcast), got {described}")


def _leaf_batch_sizes(value, pattern, name):
    """[(leaf name, leading dimension)]: 1 for a single example or a Python number."""
    if isinstance(pattern, T.TupleType):
        out = []
        for k, (element, item) in enumerate(zip(pattern.elements, value)):
            out.extend(_leaf_batch_sizes(item, element, f"{name}[{k}]"))
        return out
    if not isinstance(pattern, T.TensorType) or value is None:
        return []
    shape = tuple(np.shape(value) if getattr(value, "shape", None) is None else value.shape)
    return [(name, shape[0] if len(shape) > len(pattern.shape) else 1)]


_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z_0-9]*|\[|\]|\(|\)|,|-?\d+)")


def parse(text: str, classes=None) -> tuple:
    """Parses "(int64[], Point(float32[3], bool[n]))" into a tuple of patterns.

    A size written as a name (`n`) is symbolic (transpiler/sizes.py); the
    symbols are renamed in order of appearance, so `float64[d]` is the
    program `float64[n]`.
    """
    tokens = [m.group(1) for m in _TOKEN.finditer(text)]
    pos = [0]
    classes = classes or {}
    symbols = {}  # a symbolic size's name -> its Size (in order of appearance)

    def symbol(name):
        if name not in symbols:
            symbols[name] = T.Size(-(len(symbols) + 1), name)
        return symbols[name]

    def peek():
        return tokens[pos[0]] if pos[0] < len(tokens) else None

    def take(expected=None):
        token = peek()
        if expected is not None and token != expected:
            raise ValueError(f"bad signature {text!r}: expected {expected!r} at {token!r}")
        pos[0] += 1
        return token

    def sequence(opening="(", closing=")"):
        take(opening)
        items = []
        while peek() != closing:
            items.append(pattern())
            if peek() == ",":
                take(",")
        take(closing)
        return tuple(items)

    def pattern():
        token = peek()
        if token == "(":
            return T.TupleType(sequence())
        if token == "[":  # a list: "[float32[3], int64[]]"
            return T.TupleType(sequence("[", "]"), list)
        name = take()
        if name == "NONE":
            return T.NONE
        if peek() == "[":
            take("[")
            dims = []
            while peek() != "]":
                token = take()
                dims.append(int(token) if token.lstrip("-").isdigit() else symbol(token))
                if peek() == ",":
                    take(",")
            take("]")
            return T.TensorType(np.dtype(name), tuple(dims))
        if name not in classes:
            raise ValueError(f"unknown class {name!r} in signature {text!r}")
        return T.TupleType(sequence(), classes[name])

    from transpiler import sizes

    return sizes.canonical(sequence())
