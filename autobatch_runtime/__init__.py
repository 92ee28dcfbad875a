"""autobatch's runtime: what every generated module imports, and nothing else.

A generated module (`generated/examples/fib_tf.py`) holds only its programs
(state, blocks, tables, entry) and calls the helpers here through one name:

    from autobatch_runtime import tensorflow_backend as rt

    rt.require(3, __name__)
    rt.check_fresh(globals(), "examples/fib.py", {"examples.fib": {"fib": "d78a..."}})

so a runtime change is a diff of this package, not of every generated module,
and a user's own names (a function called `select` or `run`) cannot collide
with a helper's.  `require` refuses a runtime of another version;
`check_fresh` (freshness.py) refuses a module whose functions' sources have
changed since it was generated, when it is imported directly rather than
through a Context.  The package needs NumPy (`numpy_backend`) or NumPy and
TensorFlow (`tensorflow_backend`); never the compiler, gast or black, so it
can be installed or vendored alone (see docs/artifact.md).

`RUNTIME_VERSION` changes when a helper's name, signature or meaning
changes in a way that generated modules can see; each module states the
version it was generated for, and `require` refuses another at import time.
"""

# 2: Python builtins per example (py_*), repeat, Optional
# 3: check_fresh (freshness.py): a module refuses sources edited since it was generated
# 4: jax_backend; stack_items (a tuple of like values indexed per example)
# 5: symbolic sizes: event_size, Entry.types naming sizes ("n",), stack_bytes of sizes
# 6: compact blocks: select_fields, save_all; WRITES lists as strings of names (common.block_writes)
# 7: negative_power: an int to a negative per-example int power stops the example
# 8: python_error, py_divisor, py_power, py_bound: where Python raises (python_errors.py), the example stops
# 9: py_not_none, py_shift_count, py_range_step: None as a number (TypeError), a negative
#    shift count or a zero range() step (ValueError) stop the example
# 10: py_matmul (`a @ b`, np.dot per example), py_array_method's "norm", py_nonempty
#     (max/min of an empty comprehension), py_times_flag (nan * False under XLA), py_join (np.concatenate, np.stack per example), the JAX runtime's jax_numpy and the
#     TensorFlow runtime's tf_numpy (NumPy's functions of per-example values)
RUNTIME_VERSION = 10


class RuntimeVersionError(ImportError):
    """A generated module needs a runtime version that is not installed."""


def require(version, module):
    """Refuses to import `module` (a generated module's `__name__`) unless
    this runtime is the version it was generated for.

    An ImportError at import time, naming both versions and the fix, rather
    than an AttributeError or a wrong result in the middle of a batched call.
    """
    if version != RUNTIME_VERSION:
        raise RuntimeVersionError(
            f"{module} was generated for autobatch_runtime version {version}, but the "
            f"installed autobatch_runtime ({__file__}) is version {RUNTIME_VERSION}. "
            "Install the runtime that matches the compiler that generated it, or "
            "regenerate the module with the installed compiler (autobatch generate)"
        )
