"""Matrix products of per-example arrays: `np.dot(a, b)`, `np.matmul`,
`np.inner`, `a.dot(b)` (and jax.numpy's).

Run on the batch as written, each takes the batch axis for a matrix's rows:
`np.dot(v, w)` of two [batch, n] vectors is refused by NumPy (or, where n
equals the batch size, is the [batch, batch] matrix product: a wrong
answer).  They become the operator `a @ b`, which passes/broadcast.py makes
`py_matmul(a, b, a_rank, b_rank)`, NumPy's matmul of each example's arrays
(autobatch_runtime/array_methods.py), or `a * b` where np.dot multiplies by a
number.
"""

from __future__ import annotations

import ast
import sys

import numpy as np

from transpiler.passes.python_values import ValueQueries, text_of
from transpiler.passes.subscripts import SubscriptError


class MatrixCalls(ValueQueries):
    """The rule for matrix-product calls (a base of passes/python_calls.py's
    rules)."""

    def matrix_call(self, node):
        """`np.dot(a, b)`, `np.matmul(a, b)`, `np.inner(a, b)`, `a.dot(b)` (and
        jax.numpy's) with a per-example operand: the operator `a @ b`, which
        passes/broadcast.py makes each example's product, or `a * b` where
        one is a number (np.dot's product).  Run on the batch, np.dot would
        take the batch axis for a matrix's rows."""
        function = self.function(node)
        name = matrix_function(function)
        arguments = list(node.args)
        if name is None and isinstance(node.func, ast.Attribute) and node.func.attr == "dot":
            owner = self.info(node.func.value)
            if owner is None or not (owner.batched or isinstance(owner.value, np.ndarray)):
                return None
            name, arguments = "dot", [node.func.value] + arguments
        if name is None or len(arguments) != 2 or node.keywords:
            return None
        if not any(self.per_example(a) for a in arguments):
            return None  # the same for every example: the library's own product
        infos = [self.info(a) for a in arguments]
        if None in infos:
            return None
        ranks = [len(i.shape) if i.batched else np.ndim(i.value) for i in infos]
        left, right = (self.visit(a) for a in arguments)
        if name != "matmul" and 0 in ranks:
            return self.done(ast.BinOp(left, ast.Mult(), right))
        if name == "dot" and max(ranks) > 2 and ranks[1] != 1:
            raise SubscriptError(
                f"`{text_of(node)}`: np.dot of arrays of more than two axes per example sums over "
                "other axes than `@` does, which is not supported here; write `a @ b` "
                "(np.matmul) or np.einsum with the axes spelled out"
            )
        if name == "inner" and ranks[1] != 1:
            raise SubscriptError(
                f"`{text_of(node)}`: np.inner is supported where its second argument is a "
                "vector per example (`np.inner(v, w)`, `np.inner(m, v)`); write `a @ b.T`"
            )
        return self.done(ast.BinOp(left, ast.MatMult(), right))


def matrix_function(function):
    """The product `function` is, if NumPy's or jax.numpy's: "dot", "matmul" or "inner"."""
    jnp = sys.modules.get("jax.numpy")
    for name in ("dot", "matmul", "inner"):
        if function is getattr(np, name) or (jnp is not None and function is getattr(jnp, name)):
            return name
    return None
