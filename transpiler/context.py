"""The user's API: `Context`, its decorator, and the dry run.

Thin on purpose.  Decorating (at import) checks the function alone
(transpiler/decoration.py): one whose text its generated modules were built
from costs a file read, and only another one loads the compiler's first
stages, so that a refused construct raises at import.  The call
(transpiler/batched.py) looks for the generated module of a new signature
(transpiler/build/entries.py); only when it is missing or stale is the
whole compiler (transpiler.pipeline) imported and run.

A Context is also the registry the build reads: its decorated functions
(`_functions`), by name.  What it builds from them, and the memos of that,
live in transpiler/build/ (declarations, compiled programs, the module
writer, the entries of calls); the methods below that reach there only
delegate, for the predecessor's API and for tools that call them.
"""

from __future__ import annotations

import inspect
import math
import os
import threading

from typing import Callable, Dict, Optional

from autobatch_runtime import common as runtime_common
from transpiler.batched import (  # noqa: F401 (re-exported: the API's names)
    _CALL_KEYWORDS,
    DEFAULT_MAX_STACK_DEPTH,
    BatchedFunction,
)
from transpiler.build import compiled, declarations, entries, function_texts, writer
from transpiler.paths import project_root, relative_path
from transpiler import signature as S
from transpiler import types as T
from transpiler.markers import truthy  # noqa: F401 (re-exported; dry runs call it)

# Stacks larger than this are refused before they are allocated (4 GiB): the
# runtime's figure, also the default of generated modules called directly.
DEFAULT_MAX_STACK_BYTES = runtime_common.DEFAULT_MAX_STACK_BYTES


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
            callees = function_texts.referenced_names(fn.__code__) | {batched.name}
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
        if fn.__closure__ or entries.builds_elsewhere(self, name, root):
            return None
        complete = declarations.uses_lock(self, root)
        if complete:
            config = decoration.project_config(root)
            signatures = config.signatures if config else {}
            programs = declarations.declared_programs(self, relpath, root, signatures, names=[name])
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
        compiled.forget(self)
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

    # ---- what the build reads, and delegates for callers of these names --

    def _generated_dir(self, root):
        return self.generated_dir or os.path.join(root, "generated")

    def _entry(self, name, signature, backend, cache=None, mode="", caller=None):
        """The generated entry function that runs `name` on a call of `signature`."""
        return entries.entry(self, name, signature, backend, cache, mode, caller)

    def _closure_value(self, name, caller=None, signature=()):
        return entries.closure_value(self, name, caller, signature)

    def _namespaces(self, main, root=None):
        return compiled.namespaces(self, main, root)

    def declared_programs(self, relpath, root, signatures=None, names=None):
        """[(entry, signature, mode)] the inputs declare for source file `relpath`."""
        return declarations.declared_programs(self, relpath, root, signatures, names)

    def module_text(self, relpath, root, backend, programs, required=None):
        """The generated module for source file `relpath` holding `programs`."""
        return writer.module_text(self, relpath, root, backend, programs, required)

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

        return instructions.Module(tuple(b[0] for b in compiled.built_functions(self).values()))

    def program(self, main, root=None):
        """The (untyped) IR program with entry point `main`."""
        return compiled.program(self, main, root)

    def program_compiled(self, main, sig=None, backend=None):
        """The typed program (types inferred for `sig`; untyped if sig or backend is None)."""
        return compiled.program_compiled(self, main, sig, backend)

    def program_lowered(self, main, sig=None, backend=None):
        """The lowered program: one flat list of blocks with explicit stacks."""
        return compiled.program_lowered(self, main, sig, backend)

    def lowered_for_args(self, name, args, backend):
        """`program_lowered` at the signature of actual arguments."""
        return self.program_lowered(name, S.of_args(args), backend)
