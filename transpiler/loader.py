"""Stage 7: find, check, write and import generated modules.

A generated module is *fresh* when its header's source hash equals the hash
of the current sources of every function listed in it, and its body hash
matches its body (so a hand edit is noticed).  Checking freshness reads
source text with `inspect` only: the compiler (gast, black, the passes) is
not imported unless something has to be generated.

Writes are atomic (a temporary file in the same folder, then `os.replace`),
so a reader never sees a half-written module and an interrupted run leaves
the previous file intact.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import inspect
import os
import stat
import tempfile
import textwrap
import time
from typing import Dict, Iterable, List, Optional, Tuple

from autobatch_runtime import RUNTIME_VERSION, freshness
from transpiler import __version__

HEADER_PREFIX = "# autobatch:"


def module_path(generated_dir: str, source_relpath: str, backend_suffix: str) -> str:
    stem = source_relpath[:-3] if source_relpath.endswith(".py") else source_relpath
    return os.path.join(generated_dir, *f"{stem}_{backend_suffix}.py".split("/"))


def function_source(fn) -> str:
    return textwrap.dedent(inspect.getsource(inspect.unwrap(fn)))


# autobatch_runtime/freshness.py is the one runtime file among them: the
# compiler writes the digests its `function_digest` computes into every module.
_COMPILER_PARTS = ("templates", "transpiler/frontend", "transpiler/ir", "transpiler/passes",
                   "transpiler/emit", "transpiler/pipeline.py", "transpiler/types.py",
                   "transpiler/backends.py", "autobatch_runtime/freshness.py")


@functools.lru_cache(maxsize=None)
def compiler_fingerprint() -> str:
    """sha256 of the compiler's own sources (read as bytes, not imported).

    Part of every module's source hash: a new compiler makes generated code
    stale, so `autobatch check` notices output that a compiler change altered.
    The runtime's sources (autobatch_runtime/) are not part of it, but for
    freshness.py, whose digests the compiler writes into modules: generated
    text depends only on the runtime's version, which each module states
    (`autobatch_runtime.require(1, ...)`), so a runtime change that keeps the
    version is one diff of the runtime and restamps no module, and a new
    version restamps every module, whose text changes.
    """
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = hashlib.sha256(f"runtime {RUNTIME_VERSION}\0".encode())
    for part in _COMPILER_PARTS:
        path = os.path.join(top, *part.split("/"))
        files = [path] if path.endswith(".py") else [
            os.path.join(path, f) for f in sorted(os.listdir(path)) if f.endswith(".py")
        ] if os.path.isdir(path) else []
        for f in files:
            with open(f, "rb") as handle:
                digest.update(os.path.relpath(f, top).replace(os.sep, "/").encode() + b"\0")
                digest.update(handle.read() + b"\0")
    return digest.hexdigest()


def source_hash(backend_name: str, programs_text: str, functions: Iterable[Tuple[str, str, str]]) -> str:
    """sha256 over the compiler, backend, programs and function sources.

    `functions` holds (relative path, name, source text) of every function
    that went into the module, callees from other files included.
    """
    digest = hashlib.sha256()
    for part in (__version__, compiler_fingerprint(), backend_name, programs_text):
        digest.update(part.encode() + b"\0")
    for path, name, text in sorted(functions):
        digest.update(f"{path}::{name}\0{text}\0".encode())
    return digest.hexdigest()


def body_hash(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()


def read_header(text: str) -> Dict[str, str]:
    """The `# autobatch: key=value` lines at the top of a generated module."""
    out = {}
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if line.startswith(HEADER_PREFIX):
            key, _, value = line[len(HEADER_PREFIX) :].strip().partition("=")
            out[key] = value
    return out


def split_header(text: str) -> Tuple[str, str]:
    lines = text.splitlines(keepends=True)
    k = 0
    while k < len(lines) and lines[k].startswith("#"):
        k += 1
    return "".join(lines[:k]), "".join(lines[k:])


def header_functions(header: Dict[str, str]) -> List[Tuple[str, str]]:
    """[(relative path, function name)] listed in a header."""
    out = []
    for item in filter(None, header.get("functions", "").split(",")):
        path, _, name = item.strip().rpartition("::")
        out.append((path, name))
    return out


def header_programs(header: Dict[str, str]) -> List[Tuple[str, str, str]]:
    """[(entry name, signature text, mode)] listed in a header.

    The mode is "" for the stack-based program, "stackless" for the other.
    """
    out = []
    for item in filter(None, header.get("programs", "").split("; ")):
        name, _, rest = item.partition("(")
        signature, _, mode = ("(" + rest).partition(") ")
        if mode:
            signature += ")"
        out.append((name, signature, mode))
    return out


def is_hand_edited(text: str) -> bool:
    header, body = split_header(text)
    recorded = read_header(header).get("body-sha256")
    return recorded is not None and recorded != body_hash(body)


def read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


TEMPORARY_PREFIX = ".autobatch-"
# A writer holds its temporary file for milliseconds; one this old was left
# by a process that was killed between writing and renaming it.
STALE_TEMPORARY_SECONDS = 3600


def remove_stale_temporaries(folder: str, now: Optional[float] = None) -> None:
    """Deletes `.autobatch-*.tmp` files in `folder` that a killed writer left behind."""
    now = time.time() if now is None else now
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    for name in names:
        if not (name.startswith(TEMPORARY_PREFIX) and name.endswith(".tmp")):
            continue
        path = os.path.join(folder, name)
        try:
            if now - os.path.getmtime(path) > STALE_TEMPORARY_SECONDS:
                os.unlink(path)
        except FileNotFoundError:
            pass  # another process removed or renamed it first


def write_atomic(path: str, text: str, package_root: Optional[str] = None) -> None:
    """Writes `text` to `path` so that readers see the old or the new file, whole.

    Folders from `package_root` (the generated folder) down to the file get
    an empty `__init__.py`, so generated modules import as a package.
    """
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    if package_root is not None:
        _ensure_packages(folder, package_root)
    remove_stale_temporaries(folder)
    fd, tmp = tempfile.mkstemp(prefix=TEMPORARY_PREFIX, suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp makes the file private (0600); a module is read by everyone
        # who imports it, so it keeps the old file's mode, or gets 0644.
        os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode) if os.path.exists(path) else 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _ensure_packages(folder: str, package_root: str) -> None:
    root = os.path.abspath(package_root)
    probe = os.path.abspath(folder)
    if os.path.commonpath([root, probe]) != root:
        return  # the file is not under the package root: add nothing
    while True:
        init = os.path.join(probe, "__init__.py")
        if not os.path.exists(init):
            with open(init, "w", encoding="utf-8"):
                pass
        if probe == root:
            return
        probe = os.path.dirname(probe)


_IMPORTED: Dict[Tuple[str, str], object] = {}


def import_file(path: str, text: str):
    """Imports a generated module from its file (cached on path and content).

    The module runs `text`, the content the caller checked or wrote, not
    what the file holds by the time it is read: another process generating
    the same module may have replaced it in between (with its own
    programs), and reading it back lost the program this call needs.

    The module's own freshness check (autobatch_runtime/freshness.py, for
    direct imports) is skipped: the caller, a Context, has just checked the
    text against more than the sources, or written it.
    """
    key = (os.path.abspath(path), hashlib.sha256(text.encode()).hexdigest())
    if key not in _IMPORTED:
        name = "autobatch_generated_" + key[1][:16]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        module.__dict__[freshness.CHECKED_BY_LOADER] = True
        exec(compile(text, path, "exec"), module.__dict__)  # noqa: S102
        _IMPORTED[key] = module
    return _IMPORTED[key]


def recorded_digests(text: str) -> Dict[str, Dict[str, str]]:
    """{module: {qualified name: digest}} a generated module's `rt.check_fresh`
    call records ({} where it has none, or the call cannot be read).

    Read from the text without running it: what the module was built from,
    function by function (autobatch_runtime/freshness.py), for a decorated
    function to tell at import whether its text is the one compiled.
    """
    lines = text.splitlines()
    start = next((k for k, line in enumerate(lines) if ".check_fresh(" in line), None)
    if start is None:
        return {}
    # One line, or black's layout: the arguments below, `)` alone on the last line.
    end = start if lines[start].rstrip().endswith(")") else start + 1
    while end < len(lines) and lines[end] != ")":
        end += 1
    try:
        call = ast.parse("\n".join(lines[start : end + 1])).body[0].value
        digests = ast.literal_eval(call.args[2])
    except (SyntaxError, ValueError, AttributeError, IndexError):
        return {}
    return digests if isinstance(digests, dict) else {}
