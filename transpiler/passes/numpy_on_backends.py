"""NumPy's functions of per-example values, on the JAX and TensorFlow backends.

Public code computes with NumPy (`np.abs(grad).max()`, `np.where(v > 0, v,
0)`, `np.exp(v - v.max())`).  The JAX backend runs the program as one
jitted `lax.while_loop` and the TensorFlow backend as a graph, where a NumPy
function meets traced arrays or symbolic tensors and fails.  So a call of
`np.<path>` whose arguments hold a per-example value calls the backend's
twin of the same name instead: `jax_numpy.<path>` in the JAX program (the
runtime's `rt.jax_numpy`, which is `jax.numpy`: NumPy's functions with
NumPy's meaning), `tf_numpy.<name>` in the TensorFlow program (the
runtime's `rt.tf_numpy`, NumPy's elementwise functions written with
TensorFlow ops, autobatch_runtime/tensorflow_numpy.py).  The NumPy program
keeps the call as written.  A call on constants alone (`np.zeros(3)`)
stays NumPy's: it is computed once, a constant of the program.

Only NumPy's top level, `np.linalg` and `np.fft` are mapped (on TensorFlow,
only the top-level functions tensorflow_numpy.py has), never `np.random`,
another API in JAX; a NumPy function the backend's twin lacks is left as
written, to the backend's refusal (transpiler/backends.py).
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

import numpy as np

from transpiler.passes.subscripts import SubscriptError

# Shape queries, which passes/subscript_syntax.py answers per example by
# their identity (`np.shape(m)[1]` is a constant of the program).
_KEPT = (np.shape, np.ndim, np.size)

# the runtime's name for each backend's twin of NumPy (rt.jax_numpy, rt.tf_numpy)
HELPERS = {"jax": "jax_numpy", "tensorflow": "tf_numpy"}
_SUBMODULES = ("", "linalg", "fft")


def mentions(expr: str) -> bool:
    """Whether `expr` may call a NumPy function (a cheap test)."""
    return "." in expr and "(" in expr


def rewrite(
    expr: str,
    backend: str,
    evaluate: Callable[[str], object],
    per_example: Callable[[object], bool],
) -> str:
    """`expr` with each NumPy function called on a per-example value named
    as the twin of `backend` ("jax" or "tensorflow") names it.
    `evaluate(text)` gives a subexpression's value (or raises),
    `per_example(value)` whether it holds the batch axis."""
    tree = ast.parse(expr, mode="eval")
    mapper = _Mapper(backend, evaluate, per_example)
    new = mapper.visit(tree)
    if not mapper.changed:
        return expr
    return ast.unparse(ast.fix_missing_locations(new))


def twin(backend: str):
    """The module of NumPy's twins on `backend`."""
    if backend == "jax":
        import jax.numpy

        return jax.numpy
    from autobatch_runtime import tensorflow_numpy

    return tensorflow_numpy


def twin_path(function, backend: str, written: Optional[str] = None) -> Optional[str]:
    """ "linalg.norm" for np.linalg.norm (where the backend's twin has it),
    else None.  `written`: the name the code called it by (`np.abs`, whose
    own name is "absolute"), tried first so that the program reads as the
    source."""
    if not callable(function) or any(function is kept for kept in _KEPT):
        return None
    module = twin(backend)
    for name in (written, getattr(function, "__name__", None)):
        for submodule in _SUBMODULES if name else ():
            numpy_module = getattr(np, submodule) if submodule else np
            if getattr(numpy_module, name, None) is not function:
                continue
            twin_module = getattr(module, submodule, None) if submodule else module
            if callable(getattr(twin_module, name, None)):
                return f"{submodule}.{name}" if submodule else name
    return None


class _Mapper(ast.NodeTransformer):
    def __init__(self, backend, evaluate, per_example):
        self.backend = backend
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
        path = twin_path(function, self.backend, written)
        if path is None and isinstance(function, np.ufunc) and not _given_meaning_later(function):
            if any(self._per_example(a) for a in _arguments(node)):
                where = (
                    "jax.numpy lacks it"
                    if self.backend == "jax"
                    else "the NumPy functions it runs are in autobatch_runtime/tensorflow_numpy.py"
                )
                raise SubscriptError(
                    f"`{ast.unparse(node)}`: NumPy's {function.__name__} has no twin on the "
                    f"{self.backend} backend ({where}); write it with the backend's own "
                    "functions, or run on the NumPy backend"
                )
        if path is None or not any(self._per_example(a) for a in _arguments(node)):
            return node
        func = ast.Name(HELPERS[self.backend], ast.Load())
        for part in path.split("."):
            func = ast.Attribute(func, part, ast.Load())
        node.func = ast.copy_location(func, node.func)
        self.changed = True
        return node

    def _per_example(self, argument):
        """Whether `argument` holds a per-example value; where it cannot be
        evaluated as written (`v - np.max(v)` of a tensor, before python_calls.py
        makes the max the example's), whether a name it reads does."""
        try:
            return self.per_example(self.evaluate(ast.unparse(argument)))
        except Exception:  # noqa: BLE001 - judged by the names it reads
            pass
        for node in ast.walk(argument):
            if isinstance(node, ast.Name):
                try:
                    if self.per_example(self.evaluate(node.id)):
                        return True
                except Exception:  # noqa: BLE001 - unknown: not per example
                    continue
        return False


def _given_meaning_later(function) -> bool:
    """NumPy's functions that python_calls.py makes the example's
    (`np.matmul`, `np.sum`): not refused here."""
    from transpiler.passes.array_calls import library_method
    from transpiler.passes.matrix_calls import matrix_function

    return library_method(function) is not None or matrix_function(function) is not None


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
