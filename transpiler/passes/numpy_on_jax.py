"""NumPy's functions of per-example values, on the JAX backend: jax.numpy's.

Public code computes with NumPy (`np.abs(grad).max()`, `np.where(v > 0, v,
0)`, `np.linalg.norm(c)`).  The JAX backend runs the program as one jitted
`lax.while_loop`, where a NumPy function meets traced arrays and fails.
jax.numpy offers the same functions under the same names with NumPy's
meaning, so a call of `np.<path>` whose arguments hold a per-example value
becomes `jax_numpy.<path>` (the runtime's `rt.jax_numpy`, which is
`jax.numpy`) in the JAX program only; the NumPy and TensorFlow programs keep
the call as written.  A call on constants alone (`np.zeros(3)`) stays
NumPy's: it is computed once, a constant of the program.

Only NumPy's top level, `np.linalg` and `np.fft` are mapped, and only where
jax.numpy has the function: `np.random` is another API in JAX, and a NumPy
function JAX lacks is left as written, to the backend's refusal of a
primitive that does not compute with JAX (transpiler/backends.py).
"""

from __future__ import annotations

import ast
import sys
from typing import Callable

import numpy as np

# Shape queries, which passes/subscript_syntax.py answers per example by
# their identity (`np.shape(m)[1]` is a constant of the program).
_KEPT = (np.shape, np.ndim, np.size)

HELPER = "jax_numpy"  # the runtime's name for jax.numpy (autobatch_runtime/jax_backend.py)
_SUBMODULES = ("", "linalg", "fft")


def mentions(expr: str) -> bool:
    """Whether `expr` may call a NumPy function (a cheap test)."""
    return "." in expr and "(" in expr


def rewrite(
    expr: str, evaluate: Callable[[str], object], per_example: Callable[[object], bool]
) -> str:
    """`expr` with each NumPy function called on a per-example value named
    as jax.numpy's.  `evaluate(text)` gives a subexpression's value (or
    raises), `per_example(value)` whether it holds the batch axis."""
    tree = ast.parse(expr, mode="eval")
    mapper = _Mapper(evaluate, per_example)
    new = mapper.visit(tree)
    if not mapper.changed:
        return expr
    return ast.unparse(ast.fix_missing_locations(new))


def jax_path(function, written: str | None = None) -> str | None:
    """ "linalg.norm" for np.linalg.norm (where jax.numpy has it), else None.
    `written`: the name the code called it by (`np.abs`, whose own name is
    "absolute"), tried first so that the JAX program reads as the source."""
    jnp = sys.modules.get("jax.numpy")
    if jnp is None or not callable(function) or any(function is kept for kept in _KEPT):
        return None
    for name in (written, getattr(function, "__name__", None)):
        for submodule in _SUBMODULES if name else ():
            numpy_module = getattr(np, submodule) if submodule else np
            if getattr(numpy_module, name, None) is not function:
                continue
            jax_module = getattr(jnp, submodule, None) if submodule else jnp
            if callable(getattr(jax_module, name, None)):
                return f"{submodule}.{name}" if submodule else name
    return None


class _Mapper(ast.NodeTransformer):
    def __init__(self, evaluate, per_example):
        self.evaluate = evaluate
        self.per_example = per_example
        self.changed = False

    def visit_Call(self, node):
        self.generic_visit(node)
        if not isinstance(node.func, (ast.Attribute, ast.Name)):
            return node
        try:
            function = self.evaluate(ast.unparse(node.func))
        except Exception:  # noqa: BLE001 - the whole expression reports it
            return node
        written = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        path = jax_path(function, written)
        if path is None or not any(self._per_example(a) for a in _arguments(node)):
            return node
        func = ast.Name(HELPER, ast.Load())
        for part in path.split("."):
            func = ast.Attribute(func, part, ast.Load())
        node.func = ast.copy_location(func, node.func)
        self.changed = True
        return node

    def _per_example(self, argument):
        try:
            return self.per_example(self.evaluate(ast.unparse(argument)))
        except Exception:  # noqa: BLE001 - unknown: left as written
            return False


def _arguments(node: ast.Call):
    """The call's arguments, the items of list and tuple displays among
    them (`np.stack([a, b], axis=-1)`) too."""
    for argument in list(node.args) + [k.value for k in node.keywords]:
        if isinstance(argument, ast.Starred):
            argument = argument.value
        if isinstance(argument, (ast.List, ast.Tuple)):
            yield from argument.elts
        else:
            yield argument
