"""autobatch: batch control-heavy per-example Python into one masked loop.

    import numpy as np
    from autobatch import Context

    ctx = Context()

    @ctx.batch
    def fib(n):
        if n <= 1:
            return 1
        return fib(n - 1) + fib(n - 2)

    fib(np.array([6, 7, 8, 9]))  # -> [13, 21, 34, 55]

This is the part users import and deployments install: it needs NumPy, and
TensorFlow (or JAX) only for that backend.  Decorating a function whose
generated modules were built from its current text reads them and loads
nothing more; another one is checked at import by the compiler's front end
(gast), so that a refused construct raises there.  A call whose generated
module is present and current imports the module and runs it; only a
missing or stale program loads the whole compiler (the `transpiler` package
with gast and black, `pip install "autobatch[compiler]"`), and under
`AUTOBATCH_FROZEN=1` nothing is ever compiled.  See
docs/contract.md and docs/artifact.md.
"""

from autobatch_runtime.freshness import StaleSourceError, StaleSourceWarning
from transpiler import __version__
from transpiler.backends import JaxBackend, NumpyBackend, TensorFlowBackend
from transpiler.context import BatchedFunction, Context, truthy
from transpiler.errors import (
    BatchTypeError,
    IterationLimitError,
    StackMemoryError,
    StackOverflowError,
    StaleGeneratedCodeError,
    UnsupportedSyntaxError,
)
from transpiler.types import TensorType, Type

__all__ = [
    "BatchTypeError",
    "BatchedFunction",
    "Context",
    "IterationLimitError",
    "JaxBackend",
    "NumpyBackend",
    "StackMemoryError",
    "StackOverflowError",
    "StaleGeneratedCodeError",
    "StaleSourceError",
    "StaleSourceWarning",
    "TensorFlowBackend",
    "TensorType",
    "Type",
    "UnsupportedSyntaxError",
    "__version__",
    "truthy",
]


def __getattr__(name):
    # `autobatch.instructions` (the predecessor's IR constructors) loads the
    # compiler's IR, and gast with it, only when asked for.
    if name == "instructions":
        import transpiler

        return transpiler.instructions  # transpiler's own lazy attribute
    raise AttributeError(f"module 'autobatch' has no attribute {name!r}")
