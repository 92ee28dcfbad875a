"""Which library call is an array method per example, and its arguments.

`np.sum(v)`, `jnp.cumsum(v)`, `tf.reduce_max(m, axis=1)`, `np.sort(m,
axis=0)`, `np.roll(v, 2)`, `np.flip(m)`, `np.transpose(m)`, `np.linalg.norm(v)`: run on the batch
as written, each reaches across examples or counts the batch as the
example's axis 0.  python_calls.py rewrites them (and the methods `v.sum()`,
`m.transpose()`) into `py_array_method(method, values, axis, shift)`, the
method on each example's array (autobatch_runtime/array_methods.py); this
module names the method and reads its literal arguments.
"""

from __future__ import annotations

import sys
from typing import Optional

import numpy as np

from autobatch_runtime.array_methods import ARRANGING, REDUCTIONS, RUNNING
from transpiler.passes.subscript_syntax import _static_int

# NumPy's (and jax.numpy's) parameter names of the arranging functions,
# after the array: `np.roll(a, shift, axis=None)`, `np.sort(a, axis=-1)`.
_PARAMETERS = {
    "roll": ("shift", "axis"),
    "sort": ("axis",),
    "flip": ("axis",),
    "transpose": (),
    "norm": ("ord", "axis"),
}


def library_method(function) -> Optional[str]:
    """The array method `function` is where NumPy, jax.numpy or TensorFlow
    names it (`np.sum`, `jnp.argmax`, `np.cumsum`, `np.ravel`, `np.sort`,
    `tf.reduce_max`: "sum", "argmax", "cumsum", "ravel", "sort", "max"),
    else None.  Run on the batch, such a call with no axis reaches across
    examples, and `axis=1` is the example's axis 0: per example it is the
    method of the example's array.  TensorFlow's mean keeps an int dtype
    ("tf_mean": only a float mean is NumPy's), and its cumsum runs along
    axis 0 by default (not translated)."""
    if function is None:
        return None
    if function is np.amax or function is np.amin:
        return function.__name__[1:]
    jnp, tf = sys.modules.get("jax.numpy"), sys.modules.get("tensorflow")
    if function is np.linalg.norm or (jnp is not None and function is jnp.linalg.norm):
        return "norm"  # the 2-norm of a vector, Frobenius of a matrix (no ord=)
    for name in REDUCTIONS + RUNNING + ARRANGING + ("ravel",):
        if function is getattr(np, name) or (jnp is not None and function is getattr(jnp, name, None)):
            return name
        if tf is not None and name in REDUCTIONS and function is getattr(tf, "reduce_" + name, None):
            return "tf_mean" if name == "mean" else name
    return None


def literal_arguments(method, args, keywords):
    """{"axis": int, "shift": int} from the call's arguments after the
    array, or None when one is not a literal int (or is another argument:
    `keepdims`, `kind`, `axes`), which leaves the call to the refusal of
    one that moves the batch axis.  A reduction takes `axis` alone."""
    names = _PARAMETERS.get(method, ("axis",))
    if len(args) > len(names):
        return None
    given = dict(zip(names, args))
    for keyword in keywords:
        if keyword.arg not in names or keyword.arg in given:
            return None
        given[keyword.arg] = keyword.value
    out = {}
    for name, node in given.items():
        value = _static_int(node)
        if value is None:
            return None
        out[name] = value
    if "ord" in out:
        return None  # a norm of another order: left to the refusal
    if method == "roll" and "shift" not in out:
        return None  # np.roll needs its shift: Python's TypeError, as written
    return out
