"""Is a generated module still the program its source says?  Checked at import.

A module imported through a `Context` is checked by the Context, which
regenerates it when stale.  A module imported directly
(`import generated.examples.fib_np`) has no compiler behind it, so without
this check an edited `examples/fib.py` would leave the old program running
silently.  Each generated module therefore records, for every batched
function it was built from, a digest of that function's source, and calls

    rt.check_fresh(globals(), "examples/fib.py", {"examples.fib": {"fib": "d78a7c7a8f0dfb95"}})

next to `rt.require(...)`.  The check needs only the standard library: it
finds the source file without importing it (`importlib.util.find_spec`),
parses it with `ast` and hashes each function's text.  The compiler records
the digests with the same `function_digest`, so both sides cannot disagree
on what a function's text is.

What a digest covers: the function's lines in the file, decorators to last
line, as `ast` locates the `def` by its qualified name (`fib`,
`make_nuts_programs.<locals>.nuts_step`).  An edit elsewhere in the file (a
comment, another function) leaves the module fresh; the `Context` and
`autobatch check` look at more (callees' batching, closures, the compiler).

`AUTOBATCH_FRESHNESS` chooses what a stale module does: `error` (the
default) raises `StaleSourceError`, `warn` warns (`StaleSourceWarning`) and
runs the old program, `off` skips the check.  A source that cannot be found
(a deployment that ships only generated code, a function defined in
`__main__` or by `exec`) is not compared: there is nothing to compare with.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import warnings
from typing import Dict, Iterator, List, Mapping, Optional, Tuple

ENVIRONMENT = "AUTOBATCH_FRESHNESS"
MODES = ("error", "warn", "off")

# Set in a module's globals before its text runs by a loader that checks
# freshness itself (transpiler.loader.import_file, for a Context): the
# Context decides with more than sources (compiler, closures, callees).
CHECKED_BY_LOADER = "__autobatch_checked_by_loader__"

# Hex digits kept of each sha256: enough to notice an edit (this guards
# against mistakes, not an adversary) and short enough to keep the call in
# the generated module readable.
DIGEST_LENGTH = 16


class StaleSourceError(ImportError):
    """A generated module was imported while a function it was built from has
    changed (or is gone) in its source file."""


class StaleSourceWarning(UserWarning):
    """As StaleSourceError, under AUTOBATCH_FRESHNESS=warn: the old program runs."""


def check_fresh(module_globals: Mapping, source: str, digests: Mapping[str, Mapping[str, str]]) -> None:
    """Refuses (or warns about) a generated module whose functions' sources changed.

    `module_globals`: the generated module's `globals()` (its name, file and
    whether a loader checked it already); `source`: the source file it was
    generated from, relative to the project root (what `autobatch generate`
    takes); `digests`: {module name: {qualified name: digest}} of every
    function it was built from, callees in other files included.
    """
    if module_globals.get(CHECKED_BY_LOADER):
        return
    mode = _mode()
    if mode == "off":
        return
    changes = stale_functions(digests)
    if not changes:
        return
    message = _message(module_globals, source, changes)
    if mode == "warn":
        warnings.warn(message, StaleSourceWarning, stacklevel=3)
    else:
        raise StaleSourceError(message)


def stale_functions(digests: Mapping[str, Mapping[str, str]]) -> List[str]:
    """What changed, one phrase per function whose text differs from its
    recorded digest ("fib changed in /src/examples/fib.py"); modules whose
    source cannot be found are left out."""
    out = []
    for module, functions in sorted(digests.items()):
        path = source_file(module)
        if path is None:
            continue  # no source here (generated code shipped alone): nothing to compare
        current = file_digests(path)
        for name, digest in sorted(functions.items()):
            if name not in current:
                out.append(f"{name} is no longer defined in {path}")
            elif current[name] != digest:
                out.append(f"{name} changed in {path}")
    return out


def _mode() -> str:
    mode = os.environ.get(ENVIRONMENT, "error").strip().lower() or "error"
    if mode not in MODES:
        raise ValueError(f"{ENVIRONMENT}={mode!r}: expected one of {', '.join(MODES)}")
    return mode


def _message(module_globals: Mapping, source: str, changes: List[str]) -> str:
    name = module_globals.get("__name__", "a generated module")
    where = module_globals.get("__file__")
    return (
        f"{name}{f' ({where})' if where else ''} is stale: since it was generated, "
        f"{'; '.join(changes)}. Regenerate it with "
        f"`autobatch generate {source}`, or set {ENVIRONMENT}=warn to run the old program "
        f"with a warning ({ENVIRONMENT}=off skips this check)"
    )


def source_file(module: str) -> Optional[str]:
    """The `.py` file that defines module `module`, found without importing it
    (its parent packages are imported), or None where there is none.

    `__main__` is never looked up: in the importing process it is another
    program than the one the function came from.
    """
    if module == "__main__":
        return None
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a missing parent package; a spec-less module
        return None
    origin = getattr(spec, "origin", None)
    if not origin or not origin.endswith(".py") or not os.path.isfile(origin):
        return None
    return origin


def function_digest(path: str, qualname: str) -> Optional[str]:
    """The digest of function `qualname`'s text in file `path`, or None if the
    file does not define it.  The compiler records it; the check compares it."""
    return file_digests(path).get(qualname)


def qualname_at(path: str, line: int) -> Optional[str]:
    """The qualified name of the function whose `def` (or decorator) is on
    `line` of `path`: how the compiler names a function it knows by its origin."""
    for qualname, node in _definitions(_parse(path)[0]):
        if _first_line(node) <= line <= node.lineno:
            return qualname
    return None


_CACHE: Dict[Tuple[str, int, int], Dict[str, str]] = {}


def file_digests(path: str) -> Dict[str, str]:
    """{qualified name: digest} of every function defined in `path`.

    Cached on the file's modification time and size, so the NumPy and the
    TensorFlow module of one source parse it once.  Where a name is defined
    twice, the last definition counts (the one Python binds last).
    """
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return {}
    key = (path, stat.st_mtime_ns, stat.st_size)
    if key not in _CACHE:
        tree, lines = _parse(path)
        _CACHE[key] = {
            qualname: _digest(lines[_first_line(node) - 1 : node.end_lineno])
            for qualname, node in _definitions(tree)
        }
    return _CACHE[key]


def _parse(path: str):
    """(ast.Module, lines) of a source file, decoded as Python decodes it."""
    with open(path, "rb") as f:
        text = importlib.util.decode_source(f.read())
    return ast.parse(text, path), text.splitlines(keepends=True)


def _digest(lines) -> str:
    return hashlib.sha256("".join(lines).encode()).hexdigest()[:DIGEST_LENGTH]


def _first_line(node) -> int:
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


_SCOPES = (ast.stmt, ast.excepthandler, ast.match_case)


def _definitions(node, prefix: str = "") -> Iterator[Tuple[str, ast.AST]]:
    """(qualified name, def node) of every function under `node`, in file order.

    Qualified names follow Python's `__qualname__`: `f.<locals>.g` for a
    function defined in `f`, `C.m` for a method.  Only statements are
    searched (a def is always one), so expressions cost nothing.
    """
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qualname = prefix + child.name
            yield qualname, child
            yield from _definitions(child, qualname + ".<locals>.")
        elif isinstance(child, ast.ClassDef):
            yield from _definitions(child, prefix + child.name + ".")
        elif isinstance(child, _SCOPES):
            yield from _definitions(child, prefix)
