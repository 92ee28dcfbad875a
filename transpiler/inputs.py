"""The inputs that decide what `generated/` holds (light: no compiler, no TF).

A project's programs (entry function at one signature, with a mode) come
only from inputs, never from the generated modules themselves:

- `@ctx.batch(signature=...)` in the source;
- `[tool.autobatch.signatures]` in pyproject.toml;
- the lock file `autobatch.lock` at the project root: plain text, sorted,
  one program a line (`examples/fib.py::fib(int64[])`, then ` stackless`
  for that mode), checked in.  A call made during development (not frozen)
  whose program is not declared yet appends its line.

`inputs_hash` covers those inputs and the bytes of the source files a
module was built from; `autobatch check` compares it with the module's
header without importing the sources, TensorFlow or black.
"""

from __future__ import annotations

import ast
import hashlib
import os
import tempfile
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from transpiler.closures import batch_call, declaration_text

LOCK_NAME = "autobatch.lock"
LOCK_HEADER = (
    "# autobatch.lock: the programs (function and signature) to generate, one a line.\n"
    "# Calls made during development append to it; check it in. Sorted; edit freely,\n"
    "# then run `autobatch generate`.\n"
)


def lock_path(root: str) -> str:
    return os.path.join(root, LOCK_NAME)


def program_line(relpath: str, name: str, signature_text: str, mode: str = "") -> str:
    line = f"{relpath}::{name}{signature_text}"
    return f"{line} {mode}" if mode else line


MODES = ("", "stackless")  # the stack-based program, and the one without stacks


def parse_line(line: str) -> Tuple[str, str, str, str]:
    """`examples/fib.py::fib(int64[]) stackless` -> (relpath, name, signature text, mode)."""
    head, sep, rest = line.partition("::")
    name, paren, rest = rest.partition("(")
    if not sep or not paren or not head or not name or ")" not in rest:
        raise ValueError(f"bad line in {LOCK_NAME}: {line!r} (expected FILE::FUNCTION(SIGNATURE))")
    signature, _, mode = ("(" + rest).rpartition(")")
    return head, name.strip(), signature + ")", mode.strip()


def line_problem(line: str) -> Optional[str]:
    """Why a lock line can name no program (its form or its mode), or None.

    Such a line is skipped by `lock_entries` and reported by `autobatch
    check`, so one typo neither stops every generation nor goes unnoticed.
    """
    try:
        mode = parse_line(line)[3]
    except ValueError:
        return "is not FILE::FUNCTION(SIGNATURE) [MODE]"
    if mode not in MODES:
        return f"has mode {mode!r}; a mode is nothing or `stackless`"
    return None


def line_source(line: str) -> str:
    """The source file a lock line names (what precedes `::`), even for a
    malformed line, which `autobatch check` reports with that file."""
    return line.partition("::")[0]


def read_lock(root: str) -> List[str]:
    """The lock file's program lines (comments and blank lines dropped)."""
    try:
        with open(lock_path(root), encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return []
    return [s for s in (line.strip() for line in text.splitlines()) if s and not s.startswith("#")]


def lock_entries(root: str, relpath: str) -> List[Tuple[str, str, str]]:
    """[(name, signature text, mode)] the lock file lists for source file `relpath`."""
    out = []
    for line in read_lock(root):
        if line_source(line) != relpath or line_problem(line) is not None:
            continue  # a malformed line: `autobatch check` names it
        _, name, signature, mode = parse_line(line)
        out.append((name, signature, mode))
    return out


def lock_text(lines: Iterable[str]) -> str:
    return LOCK_HEADER + "".join(f"{line}\n" for line in sorted(set(lines)))


def add_to_lock(root: str, lines: Sequence[str]) -> bool:
    """Adds program lines to the lock file (atomically, kept sorted); True if it changed."""
    old = read_lock(root)
    if set(lines) <= set(old):
        return False
    text = lock_text(list(old) + list(lines))
    fd, tmp = tempfile.mkstemp(prefix=".autobatch-lock-", suffix=".tmp", dir=root)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, lock_path(root))
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True


def configured_signatures(config_signatures: Dict[str, List[str]], relpath: str):
    """[(key, [signature texts])] of pyproject's table for source file `relpath`."""
    return sorted(
        (k, list(v)) for k, v in config_signatures.items() if k.rpartition("::")[0] == relpath
    )


def inputs_hash(
    root: str,
    backend_name: str,
    relpath: str,
    files: Iterable[str],
    config_signatures: Dict[str, List[str]],
    config_closures: Optional[Dict[str, dict]] = None,
    batched: Optional[Iterable[str]] = None,
) -> str:
    """sha256 of what a module is made from, readable without importing anything.

    The autobatch version and compiler, the backend, the lock lines,
    pyproject signatures and closure declarations of `relpath`, and the bytes of `relpath` and of
    every file holding a function the module's programs reach (`files`).
    A declaration that makes no program (a malformed lock line, or one naming
    no `@X.batch` function of `relpath`) is not part of it: `autobatch check`
    reports it once, and the module stays current.  `batched`: the names of
    those functions, when the caller has read them already.
    """
    from transpiler import __version__
    from transpiler.loader import compiler_fingerprint

    names = set(batched) if batched is not None else _batched_names(root, relpath)
    digest = hashlib.sha256()
    for part in (__version__, compiler_fingerprint(), backend_name):
        digest.update(part.encode() + b"\0")
    for line in sorted(read_lock(root)) if root else ():
        if line_source(line) == relpath and line_problem(line) is None:
            if names is None or parse_line(line)[1] in names:
                digest.update(b"lock\0" + line.encode() + b"\0")
    for key, values in configured_signatures(config_signatures, relpath):
        if names is not None and key.rpartition("::")[2].strip() not in names:
            continue
        digest.update(b"signatures\0" + key.encode() + b"\0" + "\0".join(values).encode() + b"\0")
    closures = declaration_text(config_closures or {}, relpath)
    if closures:  # absent from older projects' hashes, which stay as they were
        digest.update(b"closures\0" + closures.encode() + b"\0")
    for path in sorted(set(files) | {relpath}):
        digest.update(b"file\0" + path.encode() + b"\0")
        try:
            with open(os.path.join(root or "", *path.split("/")), "rb") as f:
                digest.update(f.read())
        except FileNotFoundError:
            digest.update(b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()


def _batched_names(root: Optional[str], relpath: str) -> Optional[set]:
    """The `@X.batch` functions of `relpath`, or None if it cannot be read."""
    try:
        return {name for name, _ in scan_batched(os.path.join(root or "", *relpath.split("/")))}
    except (OSError, SyntaxError, ValueError):
        return None


def scan_batched(filename: str) -> List[Tuple[str, bool]]:
    """[(function name, has signature=)] decorated `@X.batch` in a source file.

    Read with `ast`, not imported: `autobatch check` finds the batched
    functions no declared program reaches without running user code.
    Functions defined inside factories count too.
    """
    return [(name, declared) for name, declared, _ in scan_declarations(filename)]


def scan_declarations(filename: str) -> List[Tuple[str, bool, Optional[str]]]:
    """[(function name, has signature=, signature text)] of the `@X.batch`
    functions of a source file, read with `ast`.

    The text is what a generated header writes (`(int64[], float64[3])`)
    when the `signature=` expression is a list of `TensorType(dtype, shape)`
    literals, else None: then only running the file could tell, and
    `autobatch check` does not run user code.
    """
    with open(filename, "rb") as f:
        tree = ast.parse(f.read(), filename)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            call = batch_call(decorator)
            if call is not None:
                given = [k.value for k in call.keywords if k.arg == "signature"]
                text = signature_text_of(given[0]) if given else None
                out.append((node.name, bool(given), text))
                break
    return sorted(out, key=lambda item: item[:2])


def signature_text_of(node: ast.expr) -> Optional[str]:
    """The header text of a `signature=[TensorType(np.int64, ()), ...]`
    expression, or None for any other form (a variable, a namedtuple
    pattern, a computed shape)."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    parts = [_tensor_type_text(element) for element in node.elts]
    if any(part is None for part in parts):
        return None
    return "(" + ", ".join(parts) + ")"


def _tensor_type_text(node: ast.expr) -> Optional[str]:
    """`TensorType(np.float64, (3,))` -> `float64[3]`; None for anything else."""
    if not isinstance(node, ast.Call):
        return None
    callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
    keywords = {k.arg: k.value for k in node.keywords}
    if callee != "TensorType" or len(node.args) > 2 or set(keywords) - {"dtype", "shape"}:
        return None
    given = list(node.args) + [keywords.get("dtype"), keywords.get("shape")][len(node.args):]
    dtype = _dtype_name(given[0])
    dims = _dims(given[1]) if len(given) > 1 and given[1] is not None else ()
    if dtype is None or dims is None:
        return None
    return f"{dtype}[{', '.join(str(d) for d in dims)}]"


def _dtype_name(node: Optional[ast.expr]) -> Optional[str]:
    """`np.int64`, `numpy.int64`, `tf.int64` or `"int64"` -> `int64` (NumPy's name)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        written = node.value
    elif (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("np", "numpy", "tf", "tensorflow")
    ):
        written = node.attr
    else:
        return None
    import numpy as np  # already imported with the transpiler package

    try:
        return np.dtype(written).name
    except TypeError:
        return None


def _dims(node: ast.expr) -> Optional[Tuple[int, ...]]:
    """`(3, 2)` or `[3]` -> the ints; None unless every item is an int literal."""
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    dims = []
    for item in node.elts:
        if not (isinstance(item, ast.Constant) and type(item.value) is int):
            return None
        dims.append(item.value)
    return tuple(dims)


def factory_batched(filename: str) -> List[Tuple[str, str]]:
    """[(function name, factory name)] of the `@X.batch` functions defined
    inside another function of a source file (closures), read with `ast`.

    The compiler needs the values a closure closes over (their types shape
    its program), and only a call of the factory makes them; the CLI names
    these when a module that holds one cannot be generated.
    """
    with open(filename, "rb") as f:
        tree = ast.parse(f.read(), filename)
    out = []
    for outer in ast.walk(tree):
        if not isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(outer):
            if node is outer or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if any(batch_call(d) is not None for d in node.decorator_list):
                out.append((node.name, outer.name))
    return sorted(set(out))
