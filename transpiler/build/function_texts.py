"""What of a batched function goes into a module's source hash and a cache key.

A generated module is fresh when its hash matches the text of the functions
it was built from (`function_text`), and a program built into the cache is
keyed by what its closures hold (`value_kind`, `callable_text`).  The text
is deterministic (no addresses, no set order): the same sources give the
same hash in every process.
"""

from __future__ import annotations

import inspect

import numpy as np

from transpiler import loader
from transpiler.batched import BatchedFunction
from transpiler.paths import project_root, relative_path


def source_info(ctx, name):
    fn = inspect.unwrap(ctx._functions[name].function)
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    root = project_root(filename)
    return filename, root, relative_path(filename, root)


def referenced_names(code):
    """Global and free names read by `code` and the code objects nested in it."""
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= referenced_names(const)
    return names


def callable_text(fn):
    """A `type_inference=` callable as text: its source and what it closes over."""
    fn = inspect.unwrap(fn)
    try:
        text = inspect.getsource(fn).strip()
    except (OSError, TypeError):
        # A builtin, or a callable object (TFP's SeedStream): named by its
        # class, never by a repr with an address, or each new object would
        # key a new cache module (issue 35: one per NUTS kernel, 3 s each).
        named = fn if hasattr(fn, "__qualname__") else type(fn)
        text = f"{getattr(named, '__module__', '')}.{named.__qualname__}"
    code = getattr(fn, "__code__", None)
    for free, cell in zip(code.co_freevars if code else (), getattr(fn, "__closure__", None) or ()):
        try:
            text += f"\n  {free} = {value_kind(cell.cell_contents, repr_small=True)}"
        except ValueError:
            pass
    return text


def value_kind(value, repr_small=False):
    """What a closed-over value contributes to types: dtype and shape, or its kind.

    Deterministic text (no addresses): an array's dtype and shape, a
    number's type, "callable" for a function.  With `repr_small`,
    numbers, strings, dtypes and types are written out too (a
    `type_inference` callable closing over `dtype` depends on its value).
    """
    if isinstance(value, BatchedFunction):
        return f"batched function {value.name}"
    if repr_small and isinstance(value, (bool, int, float, str, type, np.dtype)):
        return repr(value)
    if repr_small and hasattr(value, "as_numpy_dtype"):  # a tf.DType
        return repr(value)
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    if dtype is not None and shape is not None:
        return f"array {np.dtype(getattr(dtype, 'as_numpy_dtype', dtype)).name}{list(shape)}"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(value_kind(v, repr_small) for v in value)
        return f"{type(value).__name__}({inner})"
    if callable(value):
        # Any function: the module is a factory taking it (a NUTS sampler's
        # target), and one module serves every target of the same types.
        return "callable"
    return type(value).__name__


def function_text(ctx, name):
    """What a module's source hash covers of batched function `name`.

    Its source, and what this Context adds to it that shapes the
    program: which names it calls are batched here (in another Context
    the same call may be a primitive), its `type_inference=` callable,
    and the kinds of the values it closes over (their dtypes and shapes
    become types).  Two Contexts whose functions share a name and a
    file write the same module; without these, the second would find
    the first's program fresh and run it (frontend-style tests defining
    `function` in one test after another got each other's programs,
    depending on test order).
    """
    batched = ctx._functions[name]
    fn = inspect.unwrap(batched.function)
    parts = [loader.function_source(fn)]
    callees = sorted(n for n in referenced_names(fn.__code__) if n in ctx._functions)
    parts.append("batched callees: " + ", ".join(callees))
    if batched.type_inference is not None:
        parts.append("type_inference: " + callable_text(batched.type_inference))
    for free, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # a cell not yet filled
            continue
        parts.append(f"closes over {free}: {value_kind(value)}")
    return "\n".join(parts)
