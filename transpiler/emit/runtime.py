"""The runtime helpers as every generated module carries them.

A module holds the helpers of templates/runtime_common.py and
runtime_tf.py (or runtime_np.py), unparsed and black-formatted.  Formatting
them is most of a module's generation time (about 0.45 s of fib's first XLA
call, 1.85 s in all, in a fresh process), yet they change only with the
templates or with black.  So their formatted text is stored beside the
templates (templates/runtime_tf.formatted, runtime_np.formatted) under a
key that hashes the template sources and black's version.  A stored text
whose key does not match is not used: the helpers are formatted anew, and
tests/test_generated.py fails until `python -m transpiler.emit.runtime`
stores them again.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import os
import sys
from typing import Callable, List, Optional

from transpiler.emit.template import render_comments

BACKENDS = ("tensorflow", "numpy")


def unparsed(statements: List[ast.stmt]) -> str:
    """Top-level statements as Python text, comments rendered, not formatted."""
    module = ast.Module(body=statements, type_ignores=[])
    return render_comments(ast.unparse(ast.fix_missing_locations(module)))


def _template_files(backend_name: str) -> List[str]:
    names = ("runtime_common", "runtime_tf" if backend_name == "tensorflow" else "runtime_np")
    return [importlib.util.find_spec(f"templates.{name}").origin for name in names]


def statements(backend_name: str) -> List[ast.stmt]:
    """The runtime helpers' source, read from templates/ (not imported: the
    TensorFlow template would import TensorFlow into NumPy-only builds)."""
    out: List[ast.stmt] = []
    for template in _template_files(backend_name):
        with open(template, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # the template module's docstring
            out.append(node)
    return out


def key(backend_name: str) -> str:
    """sha256 over what the formatted text depends on: templates and black."""
    import black

    digest = hashlib.sha256(f"{backend_name}\0black {black.__version__}\0".encode())
    for template in _template_files(backend_name):
        with open(template, "rb") as f:
            digest.update(f.read() + b"\0")
    return digest.hexdigest()


def stored_path(backend_name: str) -> str:
    folder = os.path.dirname(importlib.util.find_spec("templates").origin)
    suffix = "tf" if backend_name == "tensorflow" else "np"
    return os.path.join(folder, f"runtime_{suffix}.formatted")


def _first_line(backend_name: str, digest: str) -> str:
    return (
        f"# autobatch: the {backend_name} runtime helpers, black-formatted; "
        f"key={digest}; regenerate: python -m transpiler.emit.runtime\n"
    )


def stored(backend_name: str) -> Optional[str]:
    """The stored formatted text, if its key matches the templates and black."""
    try:
        with open(stored_path(backend_name), encoding="utf-8", newline="") as f:
            first, text = f.readline(), f.read()
    except OSError:
        return None
    return text if first == _first_line(backend_name, key(backend_name)) else None


@functools.lru_cache(maxsize=None)
def formatted(backend_name: str, formatter: Callable[[str], str], use_stored: bool) -> str:
    """The helpers' text for a module: the stored text when `use_stored` (the
    formatter is black) and its key matches, else formatted here.  Once per
    process, backend and formatter: the fuzzer swaps in a formatter that
    leaves the text alone, and its modules must not leak into others."""
    text = stored(backend_name) if use_stored else None
    return text if text is not None else formatter(unparsed(statements(backend_name)))


def store(formatter: Callable[[str], str]) -> List[str]:
    """Formats the helpers of every backend and stores them; returns the paths
    whose text changed."""
    changed = []
    for backend_name in BACKENDS:
        text = _first_line(backend_name, key(backend_name))
        text += formatter(unparsed(statements(backend_name)))
        path = stored_path(backend_name)
        old = None
        if os.path.exists(path):
            with open(path, encoding="utf-8", newline="") as f:
                old = f.read()
        if old != text:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            changed.append(path)
    return changed


def main() -> int:
    from transpiler.emit.module import _format

    for path in store(_format):
        print(f"autobatch: wrote {os.path.relpath(path)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
