"""The three backends a program can be generated for.

A backend object names the generated module's flavour (`_tf.py` / `_np.py` /
`_jax.py`)
and knows how to make placeholder values for type inference and how to read a
per-example type back off a value.  NumPy, TensorFlow and JAX are imported only
when a backend is used, so the generated modules and the thin `Context` API
stay importable without the compiler.
"""

from __future__ import annotations

import contextlib
from typing import Optional

import numpy as np

from transpiler import types as T

def _tensorflow():
    """TensorFlow, imported without its start-up log lines the first time
    (autobatch_runtime/quiet.py): compiling is often what imports it first."""
    from autobatch_runtime.quiet import import_tensorflow

    return import_tensorflow()


# An unusual batch size, so a result's batch dimension is not mistaken for
# an event dimension of a constant (NumPy has no symbolic dimensions).
PLACEHOLDER_BATCH = 13


class NumpyBackend:
    """Run the generated NumPy module (no TensorFlow needed).

    Like the predecessor's, it takes no constructor arguments; its checks
    are always on (NumPy runs eagerly, so an early stop is always raised).
    """

    name = "numpy"
    suffix = "np"
    safety_checks = True
    while_maximum_iterations = None
    basic_block_xla_device = None

    def call_options(self):
        """Keywords of the generated entry that this backend sets."""
        return {}

    def inference_scope(self):
        return contextlib.nullcontext()

    def placeholder(self, leaf: T.TensorType):
        # Read-only, as the batch is at run time: a library helper that
        # writes into its argument (`a[0] = ...` in an undecorated function)
        # is refused here, naming the line, instead of failing at run time.
        value = np.ones((PLACEHOLDER_BATCH,) + leaf.shape, dtype=leaf.dtype)
        value.setflags(write=False)
        return value

    def leaf_type(self, value, batch_of_one=False) -> T.TensorType:
        if isinstance(value, (bool, int, float, complex)):
            return T.TensorType(np.asarray(value).dtype, (), weak=True)
        array = np.asarray(value)
        if array.dtype == object:
            raise TypeError(f"a value of type {type(value).__name__} is not an array")
        shape = array.shape
        if shape and (shape[0] == PLACEHOLDER_BATCH or (batch_of_one and shape[0] == 1)):
            shape = shape[1:]
        return T.TensorType(array.dtype, shape)

    @staticmethod
    def cast(value, dtype):
        """The generated module's `cast`, for expressions evaluated in inference."""
        return np.asarray(value).astype(dtype)

    def batched_rank(self, value) -> Optional[int]:
        """Per-example rank of a placeholder-derived array; None if not batched."""
        # An array, or anything with a shape that came from one (a TensorFlow
        # eager tensor: `tf.math.sqrt(x)` runs on NumPy batches too).
        if not hasattr(value, "dtype") or isinstance(value, type):
            return None  # a module, a function, a class: not a value
        try:
            shape = tuple(value.shape)
        except (AttributeError, TypeError):
            return None
        return len(shape) - 1 if shape and shape[0] == PLACEHOLDER_BATCH else None

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return "NumpyBackend()"


class JaxBackend(NumpyBackend):
    """Run the generated JAX module: the whole program one `jax.jit`ted
    `lax.while_loop` (autobatch_runtime/jax_backend.py); it imports nothing
    of TensorFlow.

    Type inference runs the primitives on concrete JAX arrays of batch
    PLACEHOLDER_BATCH (as NumPy's does on NumPy arrays), so a primitive
    written with `jnp` types as it will run.  Its checks are always on:
    outside a transformation an early stop raises, inside the user's
    `jax.jit` it raises when the computation runs.
    """

    name = "jax"
    suffix = "jax"

    def placeholder(self, leaf: T.TensorType):
        from autobatch_runtime import jax_backend  # noqa: F401 - 64-bit types on
        import jax.numpy as jnp

        return jnp.ones((PLACEHOLDER_BATCH,) + leaf.shape, dtype=leaf.dtype)

    def abstract_placeholder(self, leaf: T.TensorType):
        import jax

        return jax.ShapeDtypeStruct((PLACEHOLDER_BATCH,) + leaf.shape, np.dtype(leaf.dtype))

    def evaluate_abstractly(self, run, env):
        """`run(env)` traced under `jax.eval_shape`, its array leaves
        returned as `jax.ShapeDtypeStruct`s (see `abstract_evaluate`).

        The env's shape-and-dtype leaves become the traced inputs; what
        `run` returns is read off its tracers after the trace (their
        shapes and dtypes), and its other leaves (Python numbers, NumPy
        constants, functions) are returned as they are."""
        import jax

        abstract = {
            name: value for name, value in env.items() if _holds_abstract(value, jax.ShapeDtypeStruct)
        }
        if not abstract:
            return run(dict(env))
        results = []

        def traced(values):
            results.append(run({**env, **values}))

        try:
            jax.eval_shape(traced, abstract)
        except Exception:  # noqa: BLE001 - concrete placeholders give the real answer or error
            import jax.numpy as jnp

            from autobatch_runtime import jax_backend  # noqa: F401 - 64-bit types on

            concrete = jax.tree.map(lambda spec: jnp.ones(spec.shape, spec.dtype), abstract)
            return run({**env, **concrete})

        def described(leaf):
            if isinstance(leaf, jax.core.Tracer):
                return jax.ShapeDtypeStruct(leaf.shape, leaf.dtype)
            return leaf

        return jax.tree.map(described, results[0])

    def leaf_type(self, value, batch_of_one=False) -> T.TensorType:
        import jax

        if isinstance(value, jax.ShapeDtypeStruct):  # abstract: as np.asarray would type it
            shape = tuple(value.shape)
            if shape and (shape[0] == PLACEHOLDER_BATCH or (batch_of_one and shape[0] == 1)):
                shape = shape[1:]
            return T.TensorType(np.dtype(value.dtype), shape)
        return super().leaf_type(value, batch_of_one)

    def check_leaf(self, value):
        """Refuses a primitive's per-example value that is not a JAX array.

        Inference runs on concrete arrays, where np.sqrt or tf.exp of a
        batch would work; in the jitted loop they meet tracers and fail.
        """
        import jax

        if isinstance(value, jax.ShapeDtypeStruct):
            return  # traced: computed with JAX
        if not isinstance(value, jax.Array) and self.batched_rank(value) is not None:
            raise TypeError(
                f"a {type(value).__module__.split('.')[0]} value, not a JAX array: on the "
                "JAX backend a primitive must compute with JAX (jax.numpy, jax.lax) "
                "functions, which the jitted loop can trace"
            )

    @staticmethod
    def cast(value, dtype):
        """The generated module's `cast`, for expressions evaluated in inference."""
        from autobatch_runtime import jax_backend

        return jax_backend.cast(value, dtype)

    def __repr__(self):
        return "JaxBackend()"


class TensorFlowBackend:
    """Run the generated TensorFlow module (the default backend).

    The predecessor's constructor keywords keep their meaning:

    - `safety_checks` (default True): stop on, and report, an example that
      overflows its stack (and here also one that indexes out of range or
      runs past the iteration limit).  False skips the checks: such examples
      return whatever they hold, as the predecessor's unchecked stacks did.
    - `while_parallel_iterations` (default 10): `parallel_iterations` of the
      batched `tf.while_loop`; 1 keeps stateful random primitives
      reproducible under a seed.
    - `while_maximum_iterations` (default None): our `max_iterations`, the
      limit on the batched loop's iterations; a call's own `max_iterations`
      wins.  Unlike the predecessor's silent stop, reaching it raises
      IterationLimitError naming the examples still running.
    - `basic_block_xla_device` (default None): the predecessor compiled each
      block with XLA for that device ('CPU:0', 'GPU:0'); here the whole loop
      is compiled (as `xla=True`) and placed on that device.
    """

    name = "tensorflow"
    suffix = "tf"

    def __init__(
        self,
        safety_checks=True,
        while_parallel_iterations=10,
        while_maximum_iterations=None,
        basic_block_xla_device=None,
    ):
        if while_parallel_iterations is not None and int(while_parallel_iterations) < 1:
            raise ValueError(
                f"while_parallel_iterations must be at least 1, got {while_parallel_iterations}"
            )
        self.safety_checks = bool(safety_checks)
        self.while_parallel_iterations = (
            10 if while_parallel_iterations is None else int(while_parallel_iterations)
        )
        self.while_maximum_iterations = while_maximum_iterations
        self.basic_block_xla_device = basic_block_xla_device

    def call_options(self):
        """Keywords of the generated entry that this backend sets."""
        return dict(
            safety_checks=self.safety_checks,
            parallel_iterations=self.while_parallel_iterations,
        )

    def inference_scope(self):
        # A function graph, as under tf.function: there `a == b` on tensors is
        # elementwise (and raises on an int meeting a float), while a plain
        # tf.Graph compares them by identity and returns a Python bool.  With
        # eager execution outermost, even where the call builds a TF1 graph
        # (issue 35): `==` is elementwise only when the outermost context is
        # eager, and `probe_scope`'s tf.init_scope would lift probe values
        # into that graph, where they have no values, instead of running them.
        tf = _tensorflow()
        from tensorflow.python.eager import context
        from tensorflow.python.framework import func_graph

        scope = contextlib.ExitStack()
        if not tf.compat.v1.executing_eagerly_outside_functions():
            scope.enter_context(context.eager_mode())
        scope.enter_context(func_graph.FuncGraph("autobatch_type_inference").as_default())
        return scope

    def placeholder(self, leaf: T.TensorType):
        tf = _tensorflow()

        return tf.compat.v1.placeholder(leaf.dtype, (None,) + leaf.shape)

    def leaf_type(self, value, batch_of_one=False) -> T.TensorType:
        tf = _tensorflow()

        # Python numbers are weak (they take the type they meet); left alone
        # they become int64 / float64 as in NumPy, so a program has the same
        # types on both backends.
        if isinstance(value, bool):
            return T.TensorType(np.bool_, (), weak=True)
        if isinstance(value, int):
            return T.TensorType(np.int64, (), weak=True)
        if isinstance(value, float):
            return T.TensorType(np.float64, (), weak=True)
        tensor = tf.convert_to_tensor(value)
        shape = tensor.shape.as_list()
        if shape and (shape[0] is None or (batch_of_one and shape[0] == 1)):
            shape = shape[1:]
        if any(d is None for d in shape):
            raise TypeError(f"per-example shape {shape} is not static")
        return T.TensorType(tensor.dtype.as_numpy_dtype, tuple(shape))

    @staticmethod
    def cast(value, dtype):
        """The generated module's `cast`, for expressions evaluated in inference."""
        tf = _tensorflow()

        return tf.cast(value, dtype)

    def batched_rank(self, value) -> Optional[int]:
        """Per-example rank of a symbolic tensor; None if not batched."""
        tf = _tensorflow()

        if not isinstance(value, (tf.Tensor, tf.Variable)):
            return None
        shape = value.shape
        if shape.rank is None or shape.rank == 0 or shape[0] is not None:
            return None
        return shape.rank - 1

    def __eq__(self, other):
        # Backends that generate the same module: options change calls, not code.
        return type(self) is type(other)

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        defaults = dict(
            safety_checks=True,
            while_parallel_iterations=10,
            while_maximum_iterations=None,
            basic_block_xla_device=None,
        )
        changed = [
            f"{k}={getattr(self, k)!r}" for k, v in defaults.items() if getattr(self, k) != v
        ]
        return f"TensorFlowBackend({', '.join(changed)})"


def _holds_abstract(value, spec_type) -> bool:
    """Whether a placeholder value (a leaf, or tuples of them) is abstract."""
    if isinstance(value, (tuple, list)):
        return any(_holds_abstract(v, spec_type) for v in value)
    return isinstance(value, spec_type)


def resolve(backend) -> object:
    """Accepts "tensorflow"/"tf", "numpy"/"np", "jax", or a backend object."""
    if isinstance(backend, (NumpyBackend, TensorFlowBackend)):
        return backend
    if backend in (None, "tensorflow", "tf"):
        return TensorFlowBackend()
    if backend in ("numpy", "np"):
        return NumpyBackend()
    if backend == "jax":
        return JaxBackend()
    raise ValueError(
        f"unknown backend {backend!r}; use 'tensorflow', 'numpy', 'jax', "
        "TensorFlowBackend(), NumpyBackend() or JaxBackend()"
    )


def helpers(backend) -> dict:
    """The runtime helpers that rewritten expressions call (`cast`, `take`,
    `lookup`, `put`, `spread`), as the generated module will call them."""
    if backend.name == "numpy":
        from autobatch_runtime import numpy_backend as runtime
    elif backend.name == "jax":
        from autobatch_runtime import jax_backend as runtime
    else:
        from autobatch_runtime import tensorflow_backend as runtime
    from transpiler import expression_helpers

    # a helper one backend alone has (`jax_numpy`) is absent from the others
    return {name: getattr(runtime, name) for name in sorted(expression_helpers.NAMES) if hasattr(runtime, name)}


def probe(backend, pattern, rng):
    """Like `placeholder`, with values: each leaf a batch of random examples
    that differ from one another (passes/batch_axis.check_values).  Small
    positive numbers, so that divisions, logarithms and small indices work.
    Call inside `probe_scope(backend)`."""

    def leaf(tensor_type):
        shape = (PLACEHOLDER_BATCH,) + tuple(tensor_type.shape)
        kind = np.dtype(tensor_type.dtype).kind
        if kind == "b":
            value = rng.random(shape) < 0.5
        elif kind in "iu":
            value = rng.integers(1, 4, shape)
        else:
            value = rng.uniform(0.5, 2.0, shape)
        value = value.astype(tensor_type.dtype)
        if backend.name == "numpy":
            return value
        if backend.name == "jax":
            import jax.numpy as jnp

            return jnp.asarray(value)
        tf = _tensorflow()

        return tf.constant(value)

    return _build(pattern, leaf)


def probe_scope(backend):
    """Where probe values compute: eagerly (type inference itself runs
    inside a TensorFlow function graph, where tensors have no values)."""
    if backend.name in ("numpy", "jax"):
        return contextlib.nullcontext()
    tf = _tensorflow()

    return tf.init_scope()


def placeholder(backend, pattern):
    """A value of the given pattern, each leaf a batch of placeholders."""
    return _build(pattern, backend.placeholder)


def abstract_placeholder(backend, pattern):
    """Like `placeholder`, for `abstract_evaluate`: on JAX each leaf is a
    shape and dtype only (`jax.ShapeDtypeStruct`), made without creating
    an array; elsewhere the same as `placeholder`."""
    return _build(pattern, getattr(backend, "abstract_placeholder", backend.placeholder))


def abstract_evaluate(backend, run, env):
    """`run(copy of env)`, abstractly where the backend can (JAX).

    On JAX, concrete placeholders would run each operation of each
    expression eagerly, and JAX compiles every operation for every new
    shape: type inference of a program cost about a second of XLA
    compilations, and symbolic sizes, which infer twice, doubled it.
    Traced instead (`jax.eval_shape`), nothing is compiled.  An expression
    that cannot be traced (it converts a value to NumPy or to a Python
    number, or calls TensorFlow) runs on concrete placeholders as before,
    so its result, or its error message, is what it was."""
    evaluate = getattr(backend, "evaluate_abstractly", None)
    if evaluate is None:
        return run(dict(env))
    return evaluate(run, env)


def _build(pattern, leaf):
    """A value of the given pattern, `leaf(tensor_type)` at each leaf;
    tuples, lists and namedtuples as the pattern says."""
    if isinstance(pattern, T.TensorType):
        return leaf(pattern)
    if isinstance(pattern, T.TupleType):
        values = [_build(e, leaf) for e in pattern.elements]
        if pattern.cls is list:
            return values
        if pattern.cls is not None:
            return pattern.cls(*values)
        return tuple(values)
    return None


def type_of(backend, value, batch_of_one=False) -> T.Pattern:
    """The per-example pattern of a (placeholder-derived) value.

    `batch_of_one`: the predecessor's convention, kept for functions batched
    with `type_inference=` (code written for it): every value a primitive
    returns has a batch dimension, so an unbatched value whose leading
    dimension is 1 (`tf.constant([0])`) is a batch of one, broadcast: one
    scalar per example.  In code written for this compiler, the same value
    is what it is on one example, a vector of length 1.
    """
    if value is None:
        return T.NONE
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return T.TupleType(
            tuple(type_of(backend, v, batch_of_one) for v in value), type(value)
        )
    if isinstance(value, (tuple, list)):
        return T.TupleType(
            tuple(type_of(backend, v, batch_of_one) for v in value),
            list if isinstance(value, list) else None,
        )
    return backend.leaf_type(value, batch_of_one)


def value_leaves(value):
    """The array leaves of a value (tuples, lists and namedtuples walked
    depth first; None has none), in the order of `types.leaves`."""
    if value is None:
        return []
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in value_leaves(v)]
    return [value]
