"""A decorated function: the call on a batch (`Context.batch` makes it).

The call checks its arguments and keywords here, where the user's frame is
the one of ours they see in a traceback, asks its Context for the entry
that runs its signature (transpiler/build/entries.py), and runs it: on one
device, on the device a backend names, or in pieces over a strategy's
replicas (autobatch_runtime/distribute.py).
"""

from __future__ import annotations

import functools
import inspect

from transpiler import backends as B
from transpiler.paths import project_root, relative_path
from transpiler import signature as S
from transpiler import types as T

DEFAULT_MAX_STACK_DEPTH = 15
_CALL_KEYWORDS = (
    "dry_run",
    "stackless",
    "max_stack_depth",
    "max_iterations",
    "max_stack_bytes",
    "trace_after",
    "backend",
    "xla",
    "block_code_cache",
    "profile",
    "strategy",
    "max_batch",
)


class BatchedFunction:
    """A decorated function: call it on batches (see `Context.batch`)."""

    # Called inside the user's tf.function, AutoGraph would convert this
    # call and the generated entry beneath it (and warn that it cannot read
    # the entry's source): they hold no data-dependent Python control flow
    # to convert.  AutoGraph calls what carries this marker as it is.
    autograph_info__ = None

    def __init__(self, context, function, type_inference=None, signature=None):
        self.context = context
        self.function = function
        self.type_inference = type_inference
        self.signature = None if signature is None else tuple(T.from_user(s) for s in signature)
        self.name = function.__name__
        self.parameters = inspect.signature(function).parameters
        # Plain positional parameters only: else the fence explains at build time.
        self.plain_parameters = all(
            p.kind == p.POSITIONAL_OR_KEYWORD for p in self.parameters.values()
        )
        # A closure's entries, by their key (transpiler/build/entries.py):
        # they hold this function's own closed-over values, so they are
        # never shared by name with another closure of the same factory.
        self.closure_entries = {}
        functools.update_wrapper(self, function)

    def __call__(self, *args, **kwargs):
        params = self.parameters
        unknown = sorted(set(kwargs) - set(_CALL_KEYWORDS) - set(params))
        if unknown:
            raise TypeError(
                f"{self.name}() got unexpected keyword argument(s) {unknown}; "
                f"batched functions take their parameters and {list(_CALL_KEYWORDS)}"
            )
        arguments = {k: kwargs.pop(k) for k in list(kwargs) if k in params and k not in _CALL_KEYWORDS}
        args = self._bound(args, arguments)
        if kwargs.get("dry_run") or self.context._dry_run_depth():
            mode = kwargs.get("dry_run")
            if mode is True and self.type_inference is not None:
                # Written for the predecessor (its types by hand, its code for
                # batch arrays, as TFP's NUTS client): its meaning of dry_run.
                mode = "as_given"
            return self.context._dry_run(self.function, args, mode)
        backend = B.resolve(kwargs.get("backend"))
        device = backend.basic_block_xla_device
        xla = bool(kwargs.get("xla", False)) or device is not None
        if xla and backend.name == "numpy":
            raise ValueError("xla=True needs the TensorFlow backend (JAX programs are always XLA's)")
        depth = kwargs.get("max_stack_depth")
        depth = DEFAULT_MAX_STACK_DEPTH if depth is None else int(depth)
        if depth < 1:
            raise ValueError(f"max_stack_depth must be at least 1, got {depth}")
        limits = self.context._limits(kwargs, backend)
        if self.plain_parameters and len(args) != len(self.parameters):
            raise TypeError(
                f"{self.name}() takes {len(self.parameters)} positional argument(s) "
                f"but {len(args)} were given"
            )
        names = self._argument_names(args)
        try:  # raised here: the user's call is the one frame of ours they see
            signature = self._checked_signature(args, names)
        except (TypeError, ValueError) as error:
            raise self._caller_error(error) from None
        cache = kwargs.get("block_code_cache")
        mode = "stackless" if kwargs.get("stackless") else ""
        entry = self.context._entry(self.name, signature, backend, cache, mode, caller=self)
        try:  # after generating: the fence speaks first of a non-literal default
            S.check_batch_sizes(args, signature, names)
        except ValueError as error:
            raise self._caller_error(error) from None
        if backend.name == "numpy":
            args = tuple(_to_numpy(a) for a in args)
        profile = bool(kwargs.get("profile", False))
        options = dict(max_stack_depth=depth, xla=xla, profile=profile, **limits)
        options.update(backend.call_options())
        if kwargs.get("trace_after") is not None:  # TensorFlow's eager start
            options["trace_after"] = int(kwargs["trace_after"])
        call = functools.partial(entry, *args, **options)
        strategy, max_batch = self.context._pieces(kwargs)
        if strategy is not None or max_batch is not None:
            if mode:
                raise ValueError(
                    f"{self.name}: strategy= and max_batch= need the stack-based program "
                    "(drop stackless=True)"
                )
            if strategy is not None and (backend.name != "tensorflow" or device is not None):
                raise ValueError(
                    f"{self.name}: strategy= needs the TensorFlow backend, without a "
                    "basic_block_xla_device (the strategy places each replica)"
                )
            from autobatch_runtime.distribute import shard_call

            call = functools.partial(
                shard_call, entry, args, strategy=strategy, max_batch=max_batch, **options
            )
        if device is None:
            return call()
        import tensorflow as tf

        with tf.device(device):
            return call()

    def prepare(self, *args, backend=None, stackless=False, **arguments):
        """Generates (or finds fresh) and imports the program a call with
        these arguments would run, without running it.

        What a call does before it runs, so a build step can fill the
        generated folder, or a benchmark keep generation out of a timed
        first call.  Under `AUTOBATCH_FROZEN=1` a missing program raises
        StaleGeneratedCodeError, as the call would.
        """
        args = self._bound(args, arguments)
        try:  # raised here, as a call raises from __call__
            signature = self._checked_signature(args, self._argument_names(args))
        except (TypeError, ValueError) as error:
            raise self._caller_error(error) from None
        mode = "stackless" if stackless else ""
        self.context._entry(self.name, signature, B.resolve(backend), None, mode, caller=self)

    def _bound(self, args, arguments):
        """The call's positional arguments: keywords placed, defaults filled in."""
        if self.plain_parameters and (arguments or len(args) < len(self.parameters)):
            return self._bind(args, arguments)
        return args

    def _bind(self, args, arguments):
        """Positional arguments, with keywords placed and literal defaults filled in."""
        try:
            bound = inspect.signature(self.function).bind(*args, **arguments)
        except TypeError as e:
            raise TypeError(f"{self.name}(): {e}") from None
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def _argument_names(self, args):
        """The parameter names, for messages (positions if they are not plain)."""
        if self.plain_parameters:
            return list(self.parameters)
        return [str(k + 1) for k in range(len(args))]

    def _checked_signature(self, args, names):
        """The call's signature, once the arguments are known to fit it.

        Raises TypeError or ValueError naming the argument: a string, a
        ragged or object array, a contradiction of `signature=`.  Nothing
        is generated for such a call.
        """
        if self.signature is None:
            return S.of_args(args, names)
        S.check_declared(self.signature, args, names, f"by signature= at {self._where()}")
        return self.signature

    def _caller_error(self, error):
        """The caller's mistake, to raise from the call itself (no chain into the checks)."""
        return type(error)(f"{self.name}: {error}")

    def _where(self):
        """`examples/fib.py:8`: where the decorated function is defined."""
        code = inspect.unwrap(self.function).__code__
        return f"{relative_path(code.co_filename, project_root(code.co_filename))}:{code.co_firstlineno}"

    def __repr__(self):
        return f"<batched function {self.name}>"



def _to_numpy(value):
    if hasattr(value, "numpy") and not isinstance(value, type):
        return value.numpy()
    if isinstance(value, tuple):
        converted = [_to_numpy(v) for v in value]
        return type(value)(*converted) if hasattr(value, "_fields") else tuple(converted)
    return value
