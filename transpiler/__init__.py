"""autobatch: batch control-heavy per-example Python into one masked loop.

    from transpiler import Context
    ctx = Context()

    @ctx.batch
    def fib(n):
        if n <= 1:
            return 1
        return fib(n - 1) + fib(n - 2)

    fib(np.array([6, 7, 8, 9]))  # -> [13, 21, 34, 55]

Importing this package is cheap: the compiler (gast, black, the passes) is
imported only when a generated module has to be written, and its front end
(gast) when a function is decorated whose generated modules were not built
from its current text (transpiler/decoration.py).
"""

__version__ = "0.1.0"

from transpiler.backends import JaxBackend, NumpyBackend, TensorFlowBackend  # noqa: E402
from transpiler.context import Context, truthy  # noqa: E402
from transpiler.errors import (  # noqa: E402
    BatchTypeError,
    IterationLimitError,
    StackMemoryError,
    StackOverflowError,
    StaleGeneratedCodeError,
    UnsupportedSyntaxError,
)
from transpiler.types import TensorType, Type  # noqa: E402

__all__ = [
    "BatchTypeError",
    "Context",
    "IterationLimitError",
    "JaxBackend",
    "NumpyBackend",
    "StackMemoryError",
    "StackOverflowError",
    "StaleGeneratedCodeError",
    "TensorFlowBackend",
    "TensorType",
    "Type",
    "UnsupportedSyntaxError",
    "instructions",
    "truthy",
]


def __getattr__(name):
    # `transpiler.instructions` without importing it (and gast) eagerly.
    if name == "instructions":
        import importlib

        return importlib.import_module("transpiler.instructions")
    raise AttributeError(f"module 'transpiler' has no attribute {name!r}")
