"""The user's API: `Context` and the batched functions it makes.

Thin on purpose.  Decorating (at import) checks the function alone
(transpiler/decoration.py): one whose text its generated modules were built
from costs a file read, and only another one loads the compiler's first
stages, so that a refused construct raises at import.  The first call with a
new signature looks for the generated module; only when it is missing or
stale is the whole compiler (transpiler.pipeline) imported and run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import inspect
import math
import os
import threading
import warnings

import numpy as np
from typing import Callable, Dict, Optional

from autobatch_runtime import common as runtime_common
from transpiler import backends as B
from transpiler import inputs, loader
from transpiler.paths import (
    cache_dir,
    calling_project,
    is_installed,
    is_project,
    project_root,
    relative_path,
)
from transpiler import signature as S
from transpiler import types as T
from transpiler.errors import BatchTypeError, StaleGeneratedCodeError, UnsupportedSyntaxError
from transpiler.markers import truthy  # noqa: F401 (re-exported; dry runs call it)

DEFAULT_MAX_STACK_DEPTH = 15
# Stacks larger than this are refused before they are allocated (4 GiB): the
# runtime's figure, also the default of generated modules called directly.
DEFAULT_MAX_STACK_BYTES = runtime_common.DEFAULT_MAX_STACK_BYTES
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
        # A closure's entries, by _entry's key: they hold this function's own
        # closed-over values, so they are never shared by name with another
        # closure of the same factory.
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


def _referenced_names(code):
    """Global and free names read by `code` and the code objects nested in it."""
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _referenced_names(const)
    return names


def _callable_text(fn):
    """A `type_inference=` callable as text: its source and what it closes over."""
    fn = inspect.unwrap(fn)
    try:
        text = inspect.getsource(fn).strip()
    except (OSError, TypeError):
        # A builtin, or a callable object (TFP's SeedStream): named by its
        # class, never by a repr with an address, or each new object would
        # key a new cache module (issue 35: one per NUTS kernel, 3 s each).
        named = fn if hasattr(fn, "__qualname__") else type(fn)
        text = f"{getattr(named, '__module__', '')}.{named.__qualname__}"
    code = getattr(fn, "__code__", None)
    for free, cell in zip(code.co_freevars if code else (), getattr(fn, "__closure__", None) or ()):
        try:
            text += f"\n  {free} = {_value_kind(cell.cell_contents, repr_small=True)}"
        except ValueError:
            pass
    return text


def _value_kind(value, repr_small=False):
    """What a closed-over value contributes to types: dtype and shape, or its kind.

    Deterministic text (no addresses): an array's dtype and shape, a
    number's type, "callable" for a function.  With `repr_small`,
    numbers, strings, dtypes and types are written out too (a
    `type_inference` callable closing over `dtype` depends on its value).
    """
    if isinstance(value, BatchedFunction):
        return f"batched function {value.name}"
    if repr_small and isinstance(value, (bool, int, float, str, type, np.dtype)):
        return repr(value)
    if repr_small and hasattr(value, "as_numpy_dtype"):  # a tf.DType
        return repr(value)
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    if dtype is not None and shape is not None:
        return f"array {np.dtype(getattr(dtype, 'as_numpy_dtype', dtype)).name}{list(shape)}"
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_value_kind(v, repr_small) for v in value)
        return f"{type(value).__name__}({inner})"
    if callable(value):
        # Any function: the module is a factory taking it (a NUTS sampler's
        # target), and one module serves every target of the same types.
        return "callable"
    return type(value).__name__


def _project_config(root):
    """The `[tool.autobatch]` table of the project at `root` (None without one)."""
    from transpiler import config as configuration

    if root is None:
        return None
    try:
        return configuration.load(root)
    except (OSError, ValueError):
        return None


def _config_signatures(root):
    """`[tool.autobatch.signatures]` of the project at `root` ({} without one)."""
    config = _project_config(root)
    return config.signatures if config else {}


@contextlib.contextmanager
def inputs_kept_on_failure(root):
    """Restores the lock file at `root` if the block raises: a build that
    fails adds nothing to the inputs (else `check` would ask for a program
    that cannot be built, and the next regeneration would fail on it)."""
    path = inputs.lock_path(root)
    old = loader.read(path)
    try:
        yield
    except BaseException:
        if old is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        elif loader.read(path) != old:
            loader.write_atomic(path, old)
        raise


def _require_compiler(path, state, key_text, relpath):
    """Raises StaleGeneratedCodeError, with the fix, where the compiler is not installed.

    A deployment installs `autobatch` without it; a call there whose module
    is missing or stale would otherwise fail on `import gast` deep inside.
    """
    import importlib.util

    missing = [p for p in ("gast", "black") if importlib.util.find_spec(p) is None]
    if missing:
        raise StaleGeneratedCodeError(
            f"generated module {path} is {state} for {key_text}, and building it needs the "
            f"compiler, which is not installed here ({', '.join(missing)} missing): "
            "pip install 'autobatch[compiler]', or run `autobatch generate "
            f"{relpath}` where it is and ship the module (AUTOBATCH_FROZEN=1 says so at "
            "once, without looking for the compiler)"
        )


def _with_message(error, message):
    """`error` again, of its own type where it takes one message, saying `message`.

    A SyntaxError (UnsupportedSyntaxError) keeps its file, line and text:
    tools and tracebacks still point at the user's line.
    """
    if isinstance(error, SyntaxError):
        located = SyntaxError.__new__(type(error))
        where = (error.filename, error.lineno, error.offset, error.text)
        SyntaxError.__init__(located, message, where)
        located.__dict__.update(vars(error))  # its hint
        return located
    try:
        return type(error)(message)
    except Exception:
        return RuntimeError(message)


def _to_numpy(value):
    if hasattr(value, "numpy") and not isinstance(value, type):
        return value.numpy()
    if isinstance(value, tuple):
        converted = [_to_numpy(v) for v in value]
        return type(value)(*converted) if hasattr(value, "_fields") else tuple(converted)
    return value


class Context:
    """A set of functions batched together; they may call each other.

    `generated_dir`: where generated modules go (default: `generated/` in the
    project holding the source, found by its pyproject.toml or .git).
    `frozen`: never generate; a missing or stale module raises
    StaleGeneratedCodeError (default: the AUTOBATCH_FROZEN environment variable).
    `max_iterations`: stop a call after that many loop iterations with
    IterationLimitError (default None: no limit); a call's keyword wins.
    `max_stack_bytes`: refuse, with StackMemoryError, a call whose stacks
    would take more (default 4 GiB; None: no check); a call's keyword wins.
    `strategy`: a `tf.distribute.Strategy` whose replicas share every call's
    batch, one shard each (default None: one device); `max_batch`: the most
    examples one program call holds, larger batches run in chunks (default
    None: no limit).  A call's keywords win (`strategy=None` runs on one
    device); see autobatch_runtime/distribute.py.
    `check_when_decorated`: decorating (at import) raises what the function
    alone makes certain: a construct the fence or the builder refuses, and,
    frozen, a declared program no generated module can run
    (transpiler/decoration.py).  False leaves all of it to the first call
    (a module that keeps refused functions on purpose, as a corpus of them).
    """

    def __init__(
        self,
        generated_dir: Optional[str] = None,
        frozen: Optional[bool] = None,
        max_iterations: Optional[int] = None,
        max_stack_bytes: Optional[int] = DEFAULT_MAX_STACK_BYTES,
        strategy=None,
        max_batch: Optional[int] = None,
        check_when_decorated: bool = True,
    ):
        self.generated_dir = generated_dir
        self.check_when_decorated = check_when_decorated
        if frozen is None:
            frozen = os.environ.get("AUTOBATCH_FROZEN", "") not in ("", "0")
        self.frozen = frozen
        self.max_iterations = max_iterations
        self.max_stack_bytes = max_stack_bytes
        self.strategy = strategy
        self.max_batch = max_batch
        self._functions: Dict[str, BatchedFunction] = {}
        self._entries: Dict[tuple, Callable] = {}
        self._definitions = 0  # redefinitions so far: part of every entry's cache key
        self._local = threading.local()

    def _limits(self, kwargs, backend=None):
        """The call's max_iterations and max_stack_bytes: its own, else the
        backend's (`while_maximum_iterations`), else the Context's."""
        iterations = getattr(backend, "while_maximum_iterations", None)
        if iterations is None:
            iterations = self.max_iterations
        iterations = kwargs.get("max_iterations", iterations)
        if iterations is not None:
            iterations = int(iterations)
            if iterations < 1:
                raise ValueError(f"max_iterations must be at least 1 (or None), got {iterations}")
        stack_bytes = kwargs.get("max_stack_bytes", self.max_stack_bytes)
        stack_bytes = math.inf if stack_bytes is None else stack_bytes
        return dict(max_iterations=iterations, max_stack_bytes=stack_bytes)

    def _pieces(self, kwargs):
        """The call's strategy and max_batch: its own keywords, else the Context's."""
        max_batch = kwargs.get("max_batch", self.max_batch)
        if max_batch is not None and (int(max_batch) != max_batch or max_batch < 1):
            raise ValueError(f"max_batch must be a positive integer (or None), got {max_batch!r}")
        return kwargs.get("strategy", self.strategy), max_batch

    # ---- decorating ------------------------------------------------------

    def batch(self, function=None, *, type_inference=None, signature=None):
        """Decorator: `@ctx.batch` or `@ctx.batch(type_inference=..., signature=...)`."""
        if function is not None and not callable(function):
            raise TypeError("batch() takes the function to decorate")
        if function is None:
            return lambda f: self.batch_uncurried(f, type_inference, signature=signature)
        return self.batch_uncurried(function, type_inference, signature=signature)

    def batch_uncurried(self, function, type_inference=None, signature=None):
        """The non-decorator form of `batch`."""
        name = function.__name__
        if name == "<lambda>":
            raise ValueError("batched functions must be defined with `def`, not lambda")
        previous = self._functions.get(name)
        if previous is not None:
            self._redefine(previous.function, function)
        batched = BatchedFunction(self, function, type_inference, signature)
        self._functions[name] = batched
        problem = self._decoration_problem(batched) if self.check_when_decorated else None
        if problem is not None:
            # As a module with a syntax error: nothing of the refused function is kept.
            if previous is None:
                del self._functions[name]
            else:
                self._functions[name] = previous
            raise problem.with_traceback(None)  # the user's decorator line, not the compiler's
        return batched

    def _decoration_problem(self, batched):
        """What the first call would certainly raise, known when decorating
        (at import): an UnsupportedSyntaxError, or, frozen, a
        StaleGeneratedCodeError for a declared program; else None.

        Only the function alone is looked at (its callees may be decorated
        further down): see transpiler/decoration.py.  Any other failure here
        is left to the call, so decorating never fails where calling works.
        """
        from transpiler import decoration

        fn = inspect.unwrap(batched.function)
        try:
            filename = decoration.source_file(fn)
            if filename is None:
                return None
            root = project_root(filename)
            relpath = relative_path(filename, root)
            if self.frozen:
                if not decoration.frozen_checks_on():
                    return None
                return self._frozen_problem(batched, root, relpath)
            modules = decoration.module_texts(
                self._generated_dir(root), relpath, decoration.SUFFIXES
            )
            if decoration.built_before(fn, filename, (text for _, text in modules)):
                return None
            if not decoration.compiler_installed():
                return None  # the call says what to install
            callees = _referenced_names(fn.__code__) | {batched.name}
            functions = {n: b.function for n, b in self._functions.items() if n in callees}
            return decoration.refusal(batched.function, list(self._functions), functions, root)
        except Exception:  # noqa: BLE001 - the call reports it, with the module complete
            return None

    def _frozen_problem(self, batched, root, relpath):
        """A declared program of `batched` that no generated module can run
        (decoration.frozen_problem), or None; a program built at run time
        into the cache (a closure's, another project's) is the call's."""
        from transpiler import decoration

        name = batched.name
        fn = inspect.unwrap(batched.function)
        if fn.__closure__ or self._builds_elsewhere(name, root):
            return None
        complete = self._uses_lock(root)
        if complete:
            config = decoration.project_config(root)
            signatures = config.signatures if config else {}
            programs = self.declared_programs(relpath, root, signatures, names=[name])
            backends = config.backends_for(relpath) if config else decoration.SUFFIXES
        else:
            programs = [] if batched.signature is None else [(name, batched.signature, "")]
            backends = decoration.SUFFIXES
        if not programs:
            return None
        keys = [(entry, T.signature_text(sig), mode) for entry, sig, mode in programs]
        modules = decoration.module_texts(
            self._generated_dir(root), relpath, [b for b in backends if b in decoration.SUFFIXES]
        )
        return decoration.frozen_problem(relpath, keys, modules, complete)

    def _redefine(self, old, new):
        """A second definition of a name: the newest wins, as in Python.

        Re-running a module or a notebook cell defines the function again at
        the same place (module and qualified name); calls by name then mean
        the new one, so everything compiled from the old one is forgotten.
        Another function of the same name is a clash: calls between batched
        functions go by name, so it is refused.
        """
        old, new = inspect.unwrap(old), inspect.unwrap(new)
        if (old.__module__, old.__qualname__) != (new.__module__, new.__qualname__):
            raise ValueError(
                f"a function named {new.__name__!r} is already batched in this Context "
                f"({old.__module__}.{old.__qualname__}); batched functions are called by "
                "name, so names must be unique: rename one, or use another Context"
            )
        self._entries.clear()
        self.__dict__.pop("_built_cache", None)
        self.__dict__.pop("_program_cache", None)
        self.__dict__.pop("_compiled", None)
        self._definitions += 1

    def function_names(self):
        return list(self._functions)

    # ---- dry runs --------------------------------------------------------

    def _dry_run_depth(self):
        return getattr(self._local, "dry_run", 0)

    def _dry_run(self, function, args, mode):
        """The function as Python (transpiler/dry_run.py); calls it makes run as given."""
        from transpiler import dry_run

        dry_run.check_mode(mode)
        nested = self._dry_run_depth() > 0
        self._local.dry_run = self._dry_run_depth() + 1
        try:
            return function(*args) if nested else dry_run.run(function, args, mode)
        finally:
            self._local.dry_run -= 1

    # ---- compiling -------------------------------------------------------

    def _source_info(self, name):
        fn = inspect.unwrap(self._functions[name].function)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
        root = project_root(filename)
        return filename, root, relative_path(filename, root)

    def _generated_dir(self, root):
        return self.generated_dir or os.path.join(root, "generated")

    def _entry(self, name, signature, backend, cache=None, mode="", caller=None):
        """The generated entry function that runs `name` on a call of `signature`.

        A call's signature has numbers for sizes; it runs the program of its
        structure (`sizes.generalize`: `int64[12]` runs `int64[n]`), so a new
        length is not a new program.  A module that holds the concrete
        program instead (the function computes with a size's value, so no
        program serves every size) runs that; a development call that finds
        neither builds the symbolic one, and the concrete one if the
        symbolic one is not size-generic.
        """
        from transpiler import sizes

        # Every call comes here: the program signature a call signature runs
        # is worked out once (generalizing and reading the module's header).
        memo = self.__dict__.setdefault("_program_signatures", {})
        key = (name, signature, backend.name, mode, self._definitions)
        chosen = memo.get(key)
        if chosen is not None:
            return self._entry_at(name, chosen, backend, cache, mode, caller)
        general = signature if T.is_symbolic(signature) else sizes.generalize(signature)
        if T.signature_text(general) == T.signature_text(signature):
            memo[key] = signature
            return self._entry_at(name, signature, backend, cache, mode, caller)
        chosen = self._held_signature(name, (general, signature), backend, mode)
        try:
            entry = self._entry_at(name, chosen, backend, cache, mode, caller)
        except sizes.NotSizeGeneric:
            if chosen is signature:
                raise
            chosen = signature
            entry = self._entry_at(name, chosen, backend, cache, mode, caller)
        memo[key] = chosen
        return entry

    def _held_signature(self, name, candidates, backend, mode):
        """The first of `candidates` (signatures) whose program a fresh
        generated module holds (the project's module, or the cache's for a
        program built elsewhere), then any other program of the module that
        the call can run (`sizes.matches`: sizes that happen to be equal run
        the program declared for unequal ones); the first candidate if none."""
        from transpiler import sizes

        filename, root, relpath = self._source_info(name)
        paths = [loader.module_path(self._generated_dir(root), relpath, backend.suffix)]
        if self._builds_elsewhere(name, root):
            paths += [self._cache_path(name, c, backend, mode, relpath, root) for c in candidates]
        texts = [t for t in (loader.read(p) for p in paths) if t is not None]
        classes = dict(self._functions[name].function.__globals__)
        held = []
        for text in texts:
            header = loader.read_header(loader.split_header(text)[0])
            for fname, signature_text, program_mode in loader.header_programs(header):
                if fname != name or program_mode != mode:
                    continue
                try:
                    program = S.parse(signature_text, classes)
                except (ValueError, TypeError):
                    continue
                if sizes.matches(program, candidates[-1]) and program not in held:
                    held.append(program)
        candidates = list(candidates) + sorted(
            (p for p in held if p not in candidates), key=T.signature_text
        )
        for candidate in candidates:
            wanted = (name, T.signature_text(candidate), mode)
            if any(self._is_fresh(text, wanted) for text in texts):
                return candidate
        return candidates[0]

    def _entry_at(self, name, signature, backend, cache=None, mode="", caller=None):
        """The generated entry function for `name` at `signature` ("stackless" mode too).

        `caller`, the BatchedFunction called: a program that closes over
        values is built by the module's factory from the caller's own values
        and cached on the caller, since two closures made by one factory
        share the name (and the module) but not the values.
        """
        key = (name, signature, backend.name, mode, self._definitions)
        if caller is not None and key in caller.closure_entries:
            return caller.closure_entries[key]
        if cache is not None and key in cache:
            return cache[key]
        if key in self._entries:
            # A caller's cache holds what its calls ran, whichever call of
            # the process loaded it first (an earlier call without a cache).
            if cache is not None:
                cache[key] = self._entries[key]
            return self._entries[key]
        filename, root, relpath = self._source_info(name)
        path = loader.module_path(self._generated_dir(root), relpath, backend.suffix)
        text = loader.read(path)
        wanted = (name, T.signature_text(signature), mode)
        key_text = name + T.signature_text(signature) + (f" {mode}" if mode else "")
        if (text is None or not self._is_fresh(text, wanted)) and self._builds_elsewhere(name, root):
            # Not a program this project declares for itself: a closure of
            # the caller's own values, or a function of another project.
            path = self._cache_path(name, signature, backend, mode, relpath, root)
            text = loader.read(path)
        if text is None or not self._is_fresh(text, wanted):
            line = inputs.program_line(relpath, name, T.signature_text(signature), mode)
            elsewhere = self._builds_elsewhere(name, root)
            undeclared = (
                not elsewhere
                and self._uses_lock(root)
                and (name, signature, mode) not in set(self.declared_programs(relpath, root))
            )
            if self.frozen:
                state = "missing" if text is None else "stale"
                fix = f"regenerate it with `autobatch generate {relpath}`"
                if undeclared:
                    fix = (
                        f"no input declares it: add the line `{line}` to {inputs.LOCK_NAME} "
                        f"(or declare signature=), then run `autobatch generate {relpath}`"
                    )
                elif elsewhere:
                    fix = (
                        f"no module of {root} holds it: declare `{line}` in that project's "
                        f"[tool.autobatch.signatures] and run `autobatch generate {relpath}` "
                        "there, or run once unfrozen to fill the cache"
                    )
                raise StaleGeneratedCodeError(
                    f"generated module {path} is {state} for {key_text}; {fix} "
                    "(or unset AUTOBATCH_FROZEN)"
                )
            _require_compiler(path, "missing" if text is None else "stale", key_text, relpath)
            if elsewhere:
                text = self._generate_cached(relpath, root, path, backend, (name, signature, mode))
            elif undeclared:  # a development call: its program becomes an input
                with inputs_kept_on_failure(root):
                    inputs.add_to_lock(root, [line])
                    text = self._generate(relpath, root, path, backend, text, (name, signature, mode))
            else:
                text = self._generate(relpath, root, path, backend, text, (name, signature, mode))
        module = loader.import_file(path, text)
        entry = module.PROGRAMS[key_text]
        if module.CLOSURES[key_text]:
            entry = entry(
                **{c: self._closure_value(c, caller, signature) for c in module.CLOSURES[key_text]}
            )
            if caller is not None:
                caller.closure_entries[key] = entry
                return entry
        self._entries[key] = entry
        if cache is not None:
            cache[key] = entry
        return entry

    def _closure_value(self, name, caller=None, signature=()):
        """The value a batched function of this context closes over as `name`:
        the called function's own first, then its callees' (by name), then a
        namedtuple class of the call's `signature`, then what the functions
        they close over close over (`closures.find_value`)."""
        from transpiler import closures

        batched = ([caller] if caller is not None else []) + list(self._functions.values())
        classes = [c for pattern in signature for c in T.named_classes(pattern)]
        try:
            return closures.find_value(name, [b.function for b in batched], classes)
        except LookupError:
            raise StaleGeneratedCodeError(
                f"no batched function closes over {name!r} any more"
            ) from None

    def _builds_elsewhere(self, name, root):
        """True when a program of `name` that its project's modules lack is
        built into the cache (`cache_dir()`), never into a checked-in module.

        Two cases, for a project's Context (the default generated folder):
        a function that closes over values or is defined inside a function
        (a factory's product: the sampler specialised to the caller's
        model; a test method's own `def function`), whose checked-in module
        holds the programs its project declared, built from the values
        its `[tool.autobatch.closures]` names, and which the caller's
        values must not rebuild; and a function whose project is not the
        one being run from (an installed or neighbouring library), whose
        generated tree belongs to that project.
        """
        if not self._uses_lock(root):
            return False
        return self._closes_over_values(name) or self._belongs_elsewhere(root)

    @staticmethod
    def _belongs_elsewhere(root):
        """True if `root` is another project than the one being run from
        (it has a pyproject.toml or .git of its own, or is installed in
        site-packages).  A loose folder of scripts, with neither, keeps
        its generated modules beside it, wherever it is run from."""
        if root == calling_project():
            return False
        return is_project(root) or is_installed(root)

    def _closes_over_values(self, name):
        """True if `name`, or a batched function it calls, closes over values
        or is defined inside a function.  No input can name such a function
        (one file may define several `function`s in several test methods, as
        the predecessor's tests do), so its programs go to the cache, one
        module per program, never into the lock (issue 35)."""
        seen, todo = set(), [name]
        while todo:
            fname = todo.pop()
            if fname in seen or fname not in self._functions:
                continue
            seen.add(fname)
            fn = inspect.unwrap(self._functions[fname].function)
            if fn.__closure__ or "<locals>" in fn.__qualname__:
                return True
            todo.extend(_referenced_names(fn.__code__))
        return False

    def _cache_path(self, name, signature, backend, mode, relpath, root):
        """Where the cache keeps the program `name` at `signature`: one module per key.

        The key covers the project, the entry, the signature, the backend
        and what the closures hold (a callable's source, another value's
        kind), so two models of different types, or two targets that give
        different types, never share (and overwrite) a module.
        """
        closures = []
        for fname in sorted(self._functions):
            fn = inspect.unwrap(self._functions[fname].function)
            for free, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
                try:
                    value = cell.cell_contents
                except ValueError:
                    continue
                kind = _value_kind(value)
                if kind == "callable":
                    kind = _callable_text(value)
                closures.append(f"{fname}.{free}: {kind}")
        key = "\0".join(
            [root, relpath, name, T.signature_text(signature), mode, backend.name] + closures
        )
        digest = hashlib.sha256(key.encode()).hexdigest()
        project = hashlib.sha256(root.encode()).hexdigest()[:12]
        stem = relpath[:-3] if relpath.endswith(".py") else relpath
        filename = f"{stem.replace('/', '.')}_{backend.suffix}_{digest[:16]}.py"
        return os.path.join(cache_dir(), project, filename)

    def _generate_cached(self, relpath, root, path, backend, requested):
        """Writes a cache module holding the one program `requested`."""
        text = self.module_text(relpath, root, backend, [tuple(requested)])
        loader.write_atomic(path, text)
        return text

    def _is_fresh(self, text, wanted):
        header = loader.read_header(loader.split_header(text)[0])
        if wanted not in loader.header_programs(header):
            return False
        if loader.is_hand_edited(text):
            return False
        sources = []
        for path, fname in loader.header_functions(header):
            if fname not in self._functions:
                return False
            sources.append((path, fname, self._function_text(fname)))
        expected = loader.source_hash(header.get("backend", ""), header.get("programs", ""), sources)
        return expected == header.get("source-sha256")

    def _function_text(self, name):
        """What a module's source hash covers of batched function `name`.

        Its source, and what this Context adds to it that shapes the
        program: which names it calls are batched here (in another Context
        the same call may be a primitive), its `type_inference=` callable,
        and the kinds of the values it closes over (their dtypes and shapes
        become types).  Two Contexts whose functions share a name and a
        file write the same module; without these, the second would find
        the first's program fresh and run it (frontend-style tests defining
        `function` in one test after another got each other's programs,
        depending on test order).
        """
        batched = self._functions[name]
        fn = inspect.unwrap(batched.function)
        parts = [loader.function_source(fn)]
        callees = sorted(n for n in _referenced_names(fn.__code__) if n in self._functions)
        parts.append("batched callees: " + ", ".join(callees))
        if batched.type_inference is not None:
            parts.append("type_inference: " + _callable_text(batched.type_inference))
        for free, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # a cell not yet filled
                continue
            parts.append(f"closes over {free}: {_value_kind(value)}")
        return "\n".join(parts)

    def _uses_lock(self, root=None):
        """True for a project's Context: the default generated folder, or a
        `generated_dir` that is the project's configured output folder.  Its
        programs come from inputs only (signature=, pyproject, autobatch.lock).
        A Context given a folder of its own (a scratch folder, tests) keeps
        the programs its modules already hold instead."""
        if self.generated_dir is None:
            return True
        config = _project_config(root)
        return config is not None and os.path.abspath(self.generated_dir) == os.path.abspath(
            config.output_dir
        )

    def declared_programs(self, relpath, root, signatures=None, names=None):
        """[(entry, signature, mode)] the inputs declare for source file `relpath`.

        `signature=` of this Context's functions defined in `relpath`, the
        `[tool.autobatch.signatures]` of `root`'s pyproject.toml (or
        `signatures`) and the lock file at `root`.  Lines whose signature names
        a class that no longer exists are skipped.
        """
        if names is None:
            names = [n for n in self._functions if self._source_info(n)[2] == relpath]
        if signatures is None:
            signatures = _config_signatures(root)
        programs = set()
        for name in names:
            batched = self._functions[name]
            if batched.signature is not None:
                programs.add((name, batched.signature, ""))
        texts = [(n, t, "") for k, v in signatures.items() for t in v
                 for p, _, n in [k.rpartition("::")] if p == relpath]
        texts += inputs.lock_entries(root, relpath)
        for name, text, mode in texts:
            if name not in names:
                continue
            classes = dict(self._functions[name].function.__globals__)
            try:
                programs.add((name, S.parse(text, classes), mode))
            except (ValueError, TypeError):
                continue  # a class that no longer exists: that program goes
        return self._generalized(programs)

    def _generalized(self, programs):
        """Declared programs with their sizes symbolic: a declaration written
        with numbers (`int64[8]`, the lock lines of earlier versions) means
        its structure (transpiler/sizes.py).  What each symbolic program was
        written as is kept (`_written_as`): a program that is not
        size-generic is built at those signatures instead."""
        from transpiler import sizes

        out = set()
        for name, signature, mode in programs:
            general = sizes.generalize(signature)
            if general != signature:
                self._written_as.setdefault((name, general, mode), set()).add(signature)
            out.add((name, general, mode))
        return sorted(out, key=lambda p: (p[0], p[2], T.signature_text(p[1])))

    @property
    def _written_as(self):
        return self.__dict__.setdefault("_written_as_cache", {})

    def _file_programs(self, relpath, text, backend, requested, root=None):
        """Programs the regenerated file holds: the declared ones plus `requested`
        (without a lock file: its old ones still valid, plus `requested`)."""
        programs = {tuple(requested)}
        if self._uses_lock(root) and root is not None:
            programs.update(self.declared_programs(relpath, root))
        elif text is not None:
            header = loader.read_header(loader.split_header(text)[0])
            for fname, sig_text, mode in loader.header_programs(header):
                if fname not in self._functions or self._source_info(fname)[2] != relpath:
                    continue
                classes = dict(self._functions[fname].function.__globals__)
                try:
                    programs.add((fname, S.parse(sig_text, classes), mode))
                except (ValueError, TypeError):
                    continue  # a class that no longer exists: drop that program
        return sorted(programs, key=lambda p: (p[0], p[2], T.signature_text(p[1])))

    def _generate(self, relpath, root, path, backend, old_text, requested):
        if old_text is not None and loader.is_hand_edited(old_text):
            raise StaleGeneratedCodeError(
                f"{path} was edited by hand (its body no longer matches its hash); "
                "move your changes into the source and delete the file, or run "
                f"`autobatch generate --force {relpath}`"
            )
        programs = self._file_programs(relpath, old_text, backend, requested, root)
        text = self.module_text(relpath, root, backend, programs, required=tuple(requested))
        loader.write_atomic(path, text, package_root=self._generated_dir(root))
        return text

    def _declaration_site(self, relpath, root, entry, signature, mode):
        """Which input declares a program: for messages that name it."""
        text = T.signature_text(signature)
        line = inputs.program_line(relpath, entry, text, mode)
        if line in inputs.read_lock(root):
            return f"in {inputs.LOCK_NAME} (`{line}`)"
        batched = self._functions.get(entry)
        if batched is not None and batched.signature == signature:
            return f"by signature= at {batched._where()}"
        return f"in [tool.autobatch.signatures] of {os.path.join(root, 'pyproject.toml')}"

    def module_text(self, relpath, root, backend, programs, required=None):
        """The generated module for source file `relpath` holding `programs`.

        `programs`: [(entry name, signature, mode)], in the order they appear.
        A declared program (the project's inputs) that no longer compiles
        fails, naming its declaration.  Only in a module a Context keeps in
        a folder of its own (no inputs: it holds what earlier calls built),
        and with `required` (the program a call asked for), another program
        that no longer compiles is dropped with a warning.
        """
        from transpiler import pipeline  # the compiler, imported only when needed
        from transpiler.emit.module import programs_text
        from transpiler.passes import inplace

        declared = set()
        if self._uses_lock(root) and root is not None:
            declared = set(self.declared_programs(relpath, root))
        specs, functions = [], set()
        programs = self._size_generic(programs, backend, root)
        for entry, signature, mode in programs:
            try:
                spec = self._compile(entry, signature, backend, root, mode)
            except Exception as error:
                program = (entry, signature, mode)
                if program in declared and program != required:
                    # A declared program is never dropped: say which declaration.
                    # (The call's own program raises its own error: a
                    # development call adds its lock line before building.)
                    where = self._declaration_site(relpath, root, entry, signature, mode)
                    raise _with_message(
                        error,
                        f"{relpath}: {entry}{T.signature_text(signature)}, declared {where}, "
                        f"no longer compiles: {error} (fix the source, or remove the "
                        "declaration and run `autobatch generate`)",
                    ) from error
                # A module kept without inputs (a Context's own generated_dir)
                # holds what earlier calls built; an edited function may not
                # take an old signature any more.
                if required is None or (entry, signature, mode) == required:
                    raise
                warnings.warn(
                    f"{relpath}: dropped {entry}{T.signature_text(signature)} from the "
                    f"generated module, which no longer compiles here: {error}",
                    stacklevel=2,
                )
                continue
            specs.append(spec)
            for fname in spec.functions:
                fname = inplace.source_function(fname, self._functions)  # an entry's copy
                functions.add((self._source_info(fname)[2], fname))
        functions = sorted(functions)
        sources = [(p, f, self._function_text(f)) for p, f in functions]
        digest = loader.source_hash(backend.name, programs_text(specs), sources)
        config = _project_config(root)
        inputs_digest = inputs.inputs_hash(
            root,
            backend.name,
            relpath,
            [p for p, _ in functions],
            config.signatures if config else {},
            config.closures if config else {},
        )
        return pipeline.emit_module(relpath, backend, specs, digest, functions, inputs_digest)

    def _size_generic(self, programs, backend, root):
        """`programs` with each symbolic one that is not size-generic (its
        program computes with a size's value: transpiler/sizes.py) replaced
        by the signatures it was declared as, one program each."""
        from transpiler import sizes

        out = []
        for program in programs:
            name, signature, mode = program
            written = sorted(self._written_as.get(program, ()), key=T.signature_text)
            if written and not self._is_size_generic(name, signature, backend, root, mode):
                out.extend((name, w, mode) for w in written if (name, w, mode) not in out)
            elif program not in out:
                out.append(program)
        return out

    def _is_size_generic(self, name, signature, backend, root, mode):
        from transpiler import sizes

        key = (name, signature, backend.name, mode, self._definitions)
        verdicts = self.__dict__.setdefault("_size_generic_cache", {})
        if key not in verdicts:
            try:
                self._compile(name, signature, backend, root, mode)  # kept for module_text (_compiled)
                verdicts[key] = True
            except sizes.NotSizeGeneric:
                verdicts[key] = False
            except Exception:  # noqa: BLE001 - the build reports it with its declaration
                verdicts[key] = True
        return verdicts[key]

    def _compile(self, entry, signature, backend, root, mode=""):
        """Stages 1-5 for one program; returns an emit.module.ProgramSpec.

        A signature with symbolic sizes compiles twice, at two sets of probe
        values, and must give the same program (transpiler/sizes.py).
        """
        # A module is rebuilt whole each time a call adds a program to it
        # (a Context's own folder keeps what earlier calls built): its other
        # programs come from this memo instead of compiling again.  The key
        # holds what the program is compiled from: the entry, the signature,
        # the backend, the mode, the project root, the Context's definitions,
        # and the text (`_function_text`: source, batched callees,
        # type_inference=, the kinds of closed-over values) of every function
        # it reaches.
        try:
            texts = tuple(self._function_text(f) for f in self._built(root, entry))
        except Exception:  # noqa: BLE001 - the build below raises it as it always has
            texts = None
        memo = self.__dict__.setdefault("_compiled", {})
        key = (entry, signature, backend.name, mode, self._definitions, root, texts)
        if texts is not None and key in memo:
            return memo[key]
        spec = self._compile_uncached(entry, signature, backend, root, mode, texts)
        if texts is not None:
            memo[key] = spec
        return spec

    def _compile_uncached(self, entry, signature, backend, root, mode, texts):
        from transpiler import sizes

        if not T.is_symbolic(signature):
            return self._compile_at(entry, signature, backend, root, mode)
        if texts is None:
            texts = [self._function_text(f) for f in self._built(root, entry)]
        try:
            spec = sizes.compile_generic(
                signature,
                lambda bound: self._compile_at(entry, bound, backend, root, mode),
                lambda spec: repr((spec.lowered, sorted(spec.stackless.items()))),
                sizes.literals(texts),
            )
        except (sizes.NotSizeGeneric, UnsupportedSyntaxError):
            raise
        except Exception as error:  # noqa: BLE001 - code that needs one size: `float(v)`, `v.reshape(2, 4)`
            raise sizes.NotSizeGeneric(
                f"{entry}{T.signature_text(signature)} does not compile for every size: {error}"
            ) from error
        return dataclasses.replace(spec, signature=tuple(signature))

    def _compile_at(self, entry, signature, backend, root, mode=""):
        from transpiler import pipeline
        from transpiler.emit.module import ProgramSpec
        from transpiler.passes import inplace

        typed = self._typed_program(entry, signature, backend, root)
        lowered = pipeline.lower_program(typed)
        stackless = pipeline.lower_stackless(typed) if mode == "stackless" else {}
        built = self._built(root, entry)
        namespaces = {name: b[2] for name, b in built.items()}
        modules = {f: self._functions[f].function.__module__ for f in namespaces}
        closures = {name: frozenset(b[1].closure) for name, b in built.items()}
        # an entry that changes its own arrays recursively has a copy (passes/inplace.py)
        namespaces, modules, closures = (
            inplace.with_variants(m, typed) for m in (namespaces, modules, closures)
        )
        return ProgramSpec(
            entry, signature, typed, lowered, namespaces, modules, closures, mode, stackless
        )

    def _built(self, root=None, main=None):
        """{name: (IR function, source, namespace)} of every batched function,
        or (with `main`) of those `main` reaches, in call order.

        A function that cannot be built (the fence refused it) raises only
        when it is needed: for itself, and for the functions that call it.
        The other functions of its file keep working.
        """
        from transpiler import pipeline
        from transpiler.ir import instructions as ir

        cache = self.__dict__.setdefault("_built_cache", {})
        batched = {n: f.function for n, f in self._functions.items()}

        def build(name):
            if name not in cache:
                try:
                    cache[name] = pipeline.build_function(batched[name], batched, root)
                except UnsupportedSyntaxError as error:
                    cache[name] = error
            if isinstance(cache[name], Exception):
                raise cache[name]
            return cache[name]

        names = list(batched) if main is None else [main]
        out = {}
        while names:
            name = names.pop(0)
            if name in out:
                continue
            out[name] = build(name)
            if main is not None:
                calls = (
                    ins.function
                    for block in out[name][0].blocks
                    for ins in block.instructions
                    if isinstance(ins, ir.Call)
                )
                names.extend(c for c in calls if c not in out and c in batched)
        return out

    def _namespaces(self, main, root=None):
        return {name: built[2] for name, built in self._built(root, main).items()}

    def _typed_program(self, main, signature, backend, root=None):
        from transpiler import pipeline

        program = self.program(main, root)
        overrides = {
            n: f.type_inference for n, f in self._functions.items() if f.type_inference
        }
        from transpiler import closures

        # Inference runs primitives: what they change is put back (a seed stream).
        with closures.left_as_found(f.function for f in self._functions.values()):
            return pipeline.infer_types(
                program, signature, backend, self._namespaces(main, root), overrides
            )

    def plain(self, name):
        """The per-example Python function, with batched callees plain too.

        What the batched program must agree with: calls between the context's
        functions go to their undecorated versions, so it runs at full
        Python speed with no batching machinery in the way.
        """
        import types as pytypes

        originals = {n: inspect.unwrap(f.function) for n, f in self._functions.items()}
        copies = {}
        for n, fn in originals.items():
            namespace = dict(fn.__globals__)
            copies[n] = pytypes.FunctionType(
                fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__
            )
        for fn in copies.values():
            fn.__globals__.update(copies)
        return copies[name]

    # ---- the predecessor's inspection API --------------------------------

    def module(self):
        """Every function of this Context, as an `instructions.Module`."""
        from transpiler.ir import instructions

        return instructions.Module(tuple(b[0] for b in self._built().values()))

    def program(self, main, root=None):
        """The (untyped) IR program with entry point `main`."""
        from transpiler import pipeline

        if main not in self._functions:
            raise ValueError(
                f"{main!r} is not a batched function of this Context "
                f"(known: {self.function_names()})"
            )
        built = {name: b[0] for name, b in self._built(root, main).items()}
        return pipeline.build_program(main, built)

    def program_compiled(self, main, sig=None, backend=None):
        """The typed program (types inferred for `sig`; untyped if sig or backend is None)."""
        if sig is None or backend is None:
            return self.program(main)
        key = ("compiled", main, tuple(T.from_user(s) for s in sig), B.resolve(backend).name)
        cache = self.__dict__.setdefault("_program_cache", {})
        if key not in cache:
            cache[key] = self._typed_program(main, key[2], B.resolve(backend))
        return cache[key]

    def program_lowered(self, main, sig=None, backend=None):
        """The lowered program: one flat list of blocks with explicit stacks."""
        from transpiler import pipeline

        if sig is None or backend is None:
            # Untyped, as the predecessor's: not executable, but readable.
            return pipeline.lower_program(self.program(main))
        key = ("lowered", main, tuple(T.from_user(s) for s in sig), B.resolve(backend).name)
        cache = self.__dict__.setdefault("_program_cache", {})
        if key not in cache:
            cache[key] = pipeline.lower_program(self.program_compiled(main, sig, backend))
        return cache[key]

    def lowered_for_args(self, name, args, backend):
        """`program_lowered` at the signature of actual arguments."""
        return self.program_lowered(name, S.of_args(args), backend)
