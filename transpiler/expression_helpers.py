"""The runtime helpers that rewritten expressions call, by name.

Passes write them as bare names in the IR's expression text (`take(v, (i,))`,
`py_min(a, b)`); type inference evaluates them from the runtime module of its
backend, the batch-axis checks leave them alone (they are per example by
construction), and the emitter writes them as `rt.<name>`.  One list, so the
three always agree.
"""

from transpiler.passes import broadcast, numpy_on_backends, python_builtins

# passes/subscripts.py and type inference's `spread`/`cast`
SUBSCRIPT_HELPERS = ("cast", "take", "lookup", "put", "spread", "repeat", "stack_items", "unpack_rows")

# python_builtins.HELPERS: Python's builtins per example; broadcast.HELPERS:
# its operators (shifts on TensorFlow, divisors and exponents junk cannot break)
# numpy_on_backends.HELPERS: NumPy's twins in a JAX or TensorFlow program
NAMES = frozenset(
    SUBSCRIPT_HELPERS
    + python_builtins.HELPERS
    + broadcast.HELPERS
    + tuple(numpy_on_backends.HELPERS.values())
)
