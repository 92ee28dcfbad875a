"""What decorating a function checks, at import, before any call.

Python reports a syntax error when a module is imported; autobatch reports
what it cannot batch at the same moment (docs/contract.md).
But decorating runs while the rest of the module has not run yet: the
functions it calls may not be decorated yet (calls go by name, and a module
may define a callee further down), a module constant may be assigned below
it, a factory may fill a closure cell after the `def`.  So decorating checks
what the function alone decides, and leaves the rest to the first call:

- `built_before`: a function whose current text a generated module of its
  file was built from (the digest that module records for its own
  `rt.check_fresh`) passed the fence and the builder then.  Nothing more is
  checked and the compiler is not loaded: a current project imports as
  cheaply as before.  The first call checks the rest (callees, closures,
  the compiler's version) as it always did.
- `refusal`: otherwise the stages that need no argument types (read the
  source, fence, canonicalize and build IR: those of
  `pipeline.build_function`) run on the function alone, in an environment
  that may still grow (`_Growing`).  A name the module has not bound yet
  ends the check without a verdict, since the call, which sees the finished
  module, may accept it; every refusal met before that is final, the one
  the call would raise.  Callees not decorated yet count as not batched:
  the fence's refusals only grow with the batched names, and the builder
  checks a call's arguments only against a batched callee it knows.
- `frozen_problem`: frozen, nothing is compiled at import either; the
  function's declared programs are looked up in the generated modules, and
  one that no module can run (missing, or built from a function whose text
  changed since) is refused at import, with the command that regenerates it.

Anything else that goes wrong here is left to the first call, which
reports it as it always did: decorating never fails where calling works.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import functools
import importlib.util
import inspect
import linecache
import os
from collections.abc import Mapping
from typing import Iterable, List, Optional, Sequence, Tuple

from autobatch_runtime import RUNTIME_VERSION, freshness
from transpiler import loader
from transpiler.errors import StaleGeneratedCodeError, UnsupportedSyntaxError

# File suffixes of the generated modules, by backend name (transpiler.backends;
# written out so that nothing here builds a backend object).
SUFFIXES = {"tensorflow": "tf", "numpy": "np", "jax": "jax"}


def source_file(fn) -> Optional[str]:
    """The file defining `fn` (or a notebook cell's name, whose lines Python
    keeps), or None where its source cannot be read (exec of a string, a
    REPL): then there is nothing to check, and the call says so."""
    try:
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except (TypeError, AttributeError):
        return None
    if os.path.isfile(filename) or linecache.getlines(filename):
        return filename
    return None


def module_texts(generated_dir: str, relpath: str, backends: Iterable[str]) -> List[Tuple[str, Optional[str]]]:
    """[(path, text or None)] of the generated module of `relpath`, one per backend."""
    return [
        (path, _read(path))
        for path in (loader.module_path(generated_dir, relpath, SUFFIXES[b]) for b in backends)
    ]


# A module's functions are decorated one after another, each looking at the
# same generated modules: read and parse each once while it is unchanged.
_TEXTS = {}
_DIGESTS = {}


def _read(path: str) -> Optional[str]:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    key = (path, stat.st_mtime_ns, stat.st_size)
    if key not in _TEXTS:
        if len(_TEXTS) > 64:  # tests write many modules: keep the recent ones
            _TEXTS.clear()
        _TEXTS[key] = loader.read(path)
    return _TEXTS[key]


def _recorded(text: str):
    if text not in _DIGESTS:
        if len(_DIGESTS) > 64:
            _DIGESTS.clear()
        _DIGESTS[text] = loader.recorded_digests(text)
    return _DIGESTS[text]


def built_before(fn, filename: str, texts: Iterable[Optional[str]]) -> bool:
    """True if one of the generated modules `texts` was built from `fn` as
    its file defines it now (same qualified name, same digest).

    Compared by qualified name and digest, whatever module name recorded it:
    a file run as `__main__` is the same text as the module imported by name.
    """
    recorded = {
        functions[fn.__qualname__]
        for text in texts
        if text is not None
        for functions in _recorded(text).values()
        if fn.__qualname__ in functions
    }
    # The file is parsed only where a module names the function.
    return bool(recorded) and freshness.function_digest(filename, fn.__qualname__) in recorded


@functools.lru_cache(maxsize=None)
def compiler_installed() -> bool:
    """True where gast and black can be imported (a deployment may lack them:
    the first call then says what to install)."""
    return all(importlib.util.find_spec(p) is not None for p in ("gast", "black"))


class _Unbound(Exception):
    """The check asked about a name the module has not bound yet."""


class _Growing(Mapping):
    """A function's globals or closure as the check sees them while its module
    still runs: a name bound now reads as it is, a name that may be bound
    later raises `_Unbound` instead of answering "absent".

    `open_names(name)` says which absent names may still be bound: for the
    globals, any that is not a builtin; for a closure, its empty cells.  Not
    foreseen: a name bound now and rebound further down, and a builtin
    shadowed further down (`range` is read as Python's).
    """

    def __init__(self, values, open_names):
        self._values = values
        self._open = open_names

    def __getitem__(self, name):
        if name in self._values:
            return self._values[name]
        self._absent(name)
        raise KeyError(name)

    def __contains__(self, name):
        if name in self._values:
            return True
        self._absent(name)
        return False

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def _absent(self, name):
        if self._open(name):
            raise _Unbound(name)


def _growing(source, fn):
    """`source` (frontend.FunctionSource) with its environment as it may still grow."""
    empty = {name for name in fn.__code__.co_freevars if name not in source.closure}
    return dataclasses.replace(
        source,
        globals=_Growing(source.globals, lambda name: not hasattr(builtins, name)),
        closure=_Growing(source.closure, empty.__contains__),
    )


def refusal(
    fn, batched_names: Iterable[str], callees: Mapping, root: Optional[str]
) -> Optional[UnsupportedSyntaxError]:
    """The UnsupportedSyntaxError the fence or the builder certainly raises for
    `fn` (as decorated: the function its Context holds), or None (it passes,
    or the verdict needs what is not bound yet).

    `batched_names`: the names decorated so far in its Context, `fn`'s own
    included; `callees`: {name: function} of those `fn` refers to (itself
    included), whose parameters bind its calls (only those: a Context of
    many functions would otherwise cost its size for every decoration).
    The stages are `pipeline.build_function`'s, its environment replaced by
    one that may still grow.
    """
    from transpiler import pipeline
    from transpiler.frontend import fence
    from transpiler.frontend import source as frontend
    from transpiler.ir import builder

    try:
        source = _growing(frontend.load(fn, root), inspect.unwrap(fn))
    except Exception:  # noqa: BLE001 - an unreadable source: the call says so (a dry run works)
        return None
    try:
        fence.check(source, batched_names)
        params = {
            name: pipeline.parameters(f) if f is fn else pipeline._names_only(f)
            for name, f in callees.items()
        }
        builder.build(source, params)
    except UnsupportedSyntaxError as error:
        return error
    except Exception:  # noqa: BLE001 - _Unbound, or what the finished module may not raise
        return None
    return None


# ---- frozen: the declared programs ------------------------------------------

# `autobatch generate`, `check` and `diff` import the sources whose modules
# they rewrite or report: under AUTOBATCH_FROZEN=1 (a CI that exports it) a
# stale module is theirs to report, not a reason to fail that import.
_frozen_checks_off = 0


@contextlib.contextmanager
def frozen_checks_off():
    """Imports in this block check no declared program (refusals still raise)."""
    global _frozen_checks_off
    _frozen_checks_off += 1
    try:
        yield
    finally:
        _frozen_checks_off -= 1


def frozen_checks_on() -> bool:
    return not _frozen_checks_off



_CONFIGS = {}


def project_config(root: str):
    """`[tool.autobatch]` of the project at `root` (its defaults without one;
    None if unreadable), parsed once while pyproject.toml is unchanged: a
    frozen module's functions would each parse it again (2-3 ms each)."""
    from transpiler import config

    path = os.path.join(root, "pyproject.toml")
    try:
        stat = os.stat(path)
        key = (path, stat.st_mtime_ns, stat.st_size)
    except OSError:
        key = (path, None, None)
    if key not in _CONFIGS:
        try:
            _CONFIGS[key] = config.load(root)
        except (OSError, ValueError):
            _CONFIGS[key] = None
    return _CONFIGS[key]


def frozen_problem(
    relpath: str,
    keys: Sequence[Tuple[str, str, str]],
    modules: Sequence[Tuple[str, Optional[str]]],
    complete: bool,
) -> Optional[StaleGeneratedCodeError]:
    """The error a frozen call of a declared program would certainly raise, or None.

    `keys`: the declared programs as headers list them ((entry, signature
    text, mode)); `modules`: [(path, text or None)], one per backend.
    `complete`: the modules are `autobatch generate`'s, which writes every
    declared program into every backend's module (a project's Context), so
    a module that lacks one is missing it; elsewhere (a Context's own
    folder holds what calls built) only a program no module holds is.

    Certain: no module holds the program; or the module that holds it was
    built from a function whose text changed (or that is gone), was edited
    by hand, or states another runtime version.  What only the Context's
    finer source hash sees (which callees are batched, the values closures
    hold, the compiler) is the first call's to say.
    """
    present = [(path, text) for path, text in modules if text is not None]
    for key in keys:
        key_text = f"{key[0]}{key[1]}" + (f" {key[2]}" if key[2] else "")
        holders = []
        for path, text in present:
            if key in loader.header_programs(loader.read_header(loader.split_header(text)[0])):
                holders.append((path, text))
            elif complete:
                return _frozen_error(path, "missing", key_text, relpath)
        if not holders:
            path = present[0][0] if present else modules[0][0]
            return _frozen_error(path, "missing", key_text, relpath)
        for path, text in holders:
            reasons = stale_reasons(text)
            if reasons:
                return _frozen_error(path, "stale", key_text, relpath, reasons)
    return None


def stale_reasons(text: str) -> List[str]:
    """Why a generated module is certainly stale, read from its text alone
    (what a direct import checks, and a hand edit, and the runtime it needs)."""
    header = loader.read_header(loader.split_header(text)[0])
    reasons = []
    if loader.is_hand_edited(text):
        reasons.append("it was edited by hand")
    if header.get("runtime", str(RUNTIME_VERSION)) != str(RUNTIME_VERSION):
        reasons.append(f"it needs runtime {header['runtime']}, this is {RUNTIME_VERSION}")
    reasons.extend(freshness.stale_functions(_recorded(text)))
    return reasons


def _frozen_error(path, state, key_text, relpath, reasons=()):
    because = f" ({'; '.join(reasons)})" if reasons else ""
    return StaleGeneratedCodeError(
        f"generated module {path} is {state} for {key_text}{because}, found when "
        f"{key_text.partition('(')[0]} was decorated; regenerate it with "
        f"`autobatch generate {relpath}` (or unset AUTOBATCH_FROZEN)"
    )
