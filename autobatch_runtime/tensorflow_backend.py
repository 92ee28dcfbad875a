"""The runtime of generated TensorFlow modules (`from autobatch_runtime import
tensorflow_backend as rt`); it imports NumPy and TensorFlow only.

This module is the one they import, and names every helper they call: its
parts are tensorflow_ops.py (block bodies' selection and indexing),
tensorflow_stacks.py (stacks), tensorflow_loop.py (the driver, `rt.run`)
and tensorflow_compiled.py (traced programs and the eager start); here
are the checks of a call's arguments and results, and `call`.

The same helper names exist in `numpy_backend.py`, which is why block
functions read the same for both backends.  Shapes: `batch` is the number
of examples, `depth` the stack depth, `event` a variable's per-example shape.
"""

import sys
import warnings

import numpy as np

from autobatch_runtime.quiet import import_tensorflow

tf = import_tensorflow()  # without its start-up log lines (quiet.py)

from autobatch_runtime.common import (  # re-exported: generated code reads rt.<name>
    DEFAULT_MAX_STACK_BYTES,
    Entry,
    Profile,
    check_errors,
    check_results,
    check_stack_bytes,
    make_profile,
    note_source_line,
    optional_argument,
    with_profile,
)
from autobatch_runtime import common
from autobatch_runtime.common import call as _call
from autobatch_runtime import RUNTIME_VERSION, require  # noqa: F401 (rt.require)
from autobatch_runtime.freshness import check_fresh  # noqa: F401 (rt.check_fresh)
from autobatch_runtime.builtins_tensorflow import *  # noqa: F401,F403 - rt.py_*: Python's builtins per example
from autobatch_runtime import tensorflow_numpy as tf_numpy  # noqa: F401,E402 - rt.tf_numpy.exp: NumPy's functions
from autobatch_runtime.tensorflow_ops import (  # noqa: F401 - rt.<name>
    select,
    choose,
    where,
    as_tensors,
    safe_divisor,
    divisor_or_one,
    exponent_or_zero,
    cast,
    index_positions,
    take,
    stack_items,
    unpack_rows,
    lookup,
    spread,
    put,
    repeat,
    index_fault,
    negative_power,
    zeros,
    event_size,
    batch_size,
)
from autobatch_runtime.tensorflow_stacks import (  # noqa: F401 - rt.<name>
    rows,
    read,
    push,
    save,
    stack_writes,
    select_fields,
    save_all,
    apply_write,
    after_reads,
    pop,
    pop_return,
    hide_constants,
    carried_of,
    merged,
)
from autobatch_runtime.tensorflow_loop import (  # noqa: F401 - rt.<name>
    busiest_first,
    COMPARE_BLOCKS,
    next_block,
    sweeps,
    run,
)
from autobatch_runtime.tensorflow_compiled import (  # noqa: F401 - rt.<name>
    TRIPS_PER_BLOCK,
    EAGER_CALLS,
    EagerTier,
    run_op_by_op,
    continuation,
    _COMPILED,
    _EAGER_CALLS,
    release_compiled,
    compiled,
    eager_call,
    legacy_graph,
    traced_outside_legacy_graph,
    static_batch,
    run_stackless,
)


def checked(function, result, errors, pc, error_lines, max_stack_depth, max_iterations):
    """`result`, once no example stopped early; else the error.

    Called eagerly (the usual call), the loop's final state is read and an
    early stop raises StackOverflowError, IndexError or IterationLimitError.
    Called inside the user's own `tf.function`, the values are symbolic and
    nothing can be read yet: each check becomes a `tf.debugging.Assert` that
    the results depend on, so running the graph raises
    `tf.errors.InvalidArgumentError` with the same words (the error's name,
    the examples, the source line).  XLA drops Assert ops, so inside a
    `jit_compile=True` function no check can stop the computation: the
    call warns once, when it is traced, and returns what the examples hold.
    """
    if tf.executing_eagerly():
        check_results(
            function,
            [e.numpy() for e in errors],
            pc.numpy(),
            error_lines,
            max_stack_depth,
            max_iterations,
        )
        return result
    if in_xla_function():
        warnings.warn(
            f"{function}: called inside an XLA-compiled function (jit_compile=True), "
            "where errors cannot stop the computation (XLA drops assertions): an "
            "example that overflows its stack, indexes out of range or runs past "
            "max_iterations would return its last values unnoticed. Call it outside "
            "jit_compile with xla=True (errors are then raised), or pass "
            "backend=TensorFlowBackend(safety_checks=False) to accept this",
            stacklevel=4,
        )
        return result
    block_lines = tf.constant(list(error_lines[0]))
    asserts = [
        assert_none_stopped(
            function,
            errors[0],
            block_lines,
            "StackOverflowError",
            f"recursed deeper than max_stack_depth={max_stack_depth} at",
            "; call again with a larger max_stack_depth",
        )
    ]
    if len(errors) > 1:
        asserts.append(
            assert_none_stopped(
                function,
                errors[1],
                tf.constant(list(error_lines[1])),
                "IndexError",
                "indexed out of range at",
                "; each stopped there, as it would on its own",
            )
        )
    if max_iterations is not None:
        halt = len(error_lines[0])
        earliest = tf.reduce_min(tf.concat([pc, [halt]], 0))
        waiting = tf.logical_and(tf.equal(pc, earliest), pc < halt)
        running = tf.where(waiting, earliest, -1)
        asserts.append(
            assert_none_stopped(
                function,
                running,
                block_lines,
                "IterationLimitError",
                f"still running after max_iterations={max_iterations} loop iterations, at",
                "; a loop that never ends? If they only need longer, call again with a "
                "larger max_iterations",
            )
        )
    with tf.control_dependencies(asserts):
        return tuple(tf.identity(leaf) for leaf in result)


def assert_none_stopped(function, stopped_at, lines, error, words, hint):
    """An Assert op that fails when some example stopped (`stopped_at` >= 0).

    stopped_at: [batch] int32, the block or subscript index where each
    example stopped, or -1; lines: the source line of each index, a string
    tensor.  The message names the error, up to ten examples and the line
    where the first of them stopped.
    """
    stopped = stopped_at >= 0
    examples = tf.reshape(tf.where(stopped), [-1])[:10]
    first = tf.gather(stopped_at, examples[:1])
    where = tf.gather(lines, tf.clip_by_value(first, 0, tf.size(lines) - 1))
    return tf.debugging.Assert(
        tf.logical_not(tf.reduce_any(stopped)),
        [f"{function}: {error}: example(s)", examples, words, where, hint],
        summarize=10,
    )


def in_xla_function():
    """Whether the graph being built is compiled by XLA (a jit_compile function)."""
    try:
        from tensorflow.python.ops import control_flow_util
    except ImportError:  # a TensorFlow without the module: assume not
        return False
    return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())


def check_stackless(function, recursive):
    """Recursion in stackless mode is the host's: it cannot be traced into a graph."""
    if recursive and not tf.executing_eagerly():
        raise RuntimeError(
            f"{function}: stackless mode runs recursive programs eagerly (the host's "
            "recursion is the stack); call it outside tf.function and without "
            "xla=True, or drop stackless=True"
        )


def to_leaf(function, name, value, dtype, event_shape):
    """One argument leaf as a [batch, *event] tensor of `dtype`, or a clear error."""
    value = common.python_numbers(function, name, value, dtype)
    if isinstance(value, np.ndarray) and value.dtype == object:
        raise TypeError(f"{function}: argument {name} is an object array, not numbers")
    value = tf.convert_to_tensor(value)
    if value.dtype.as_numpy_dtype != np.dtype(dtype):
        raise TypeError(
            f"{function}: argument {name} has dtype {value.dtype.name}; this "
            f"program was generated for {np.dtype(dtype).name} (a call through "
            "its Context builds the program for the new signature)"
        )
    if value.shape.rank == len(event_shape):
        value = value[None]  # a single example: batch of one
    if not common.fits(tuple(value.shape[1:]), event_shape):
        raise TypeError(
            f"{function}: argument {name} has per-example shape "
            f"{tuple(value.shape[1:])}; expected {common.shape_text(event_shape)}"
        )
    return value


def broadcast_batch(function, names, leaves):
    """Broadcasts size-1 batch dimensions; all sizes must be equal or 1.

    Inside the user's `tf.function` a batch size may be unknown until the
    graph runs: the leaves are then broadcast by `tf.broadcast_to`, which
    raises InvalidArgumentError at run time if the sizes do not fit.
    """
    sizes = [leaf.shape[0] for leaf in leaves]
    if any(s is None for s in sizes):
        batch = tf.reduce_max(tf.stack([tf.shape(leaf)[0] for leaf in leaves]))
        return [
            tf.broadcast_to(leaf, tf.concat([[batch], tf.shape(leaf)[1:]], 0))
            for leaf in leaves
        ]
    others = sorted(set(sizes) - {1})
    batch = others[0] if others else 1
    if len(others) > 1:
        described = ", ".join(f"{n}: {s}" for n, s in zip(names, sizes))
        raise ValueError(
            f"{function}: batch sizes must be equal or 1, got {described}"
        )
    return [
        leaf if s == batch else tf.repeat(leaf, batch, axis=0)
        for leaf, s in zip(leaves, sizes)
    ]


def call(entry, values, **options):
    """Runs a generated program on a batch with this backend's helpers
    (see autobatch_runtime.common.call): (result leaves, Profile or None)."""
    return _call(sys.modules[__name__], entry, values, **options)
