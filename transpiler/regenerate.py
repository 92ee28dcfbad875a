"""Regenerating checked-in modules: what `generated/` should hold.

A generated module's header lists its programs (entry and signature), so
the file can be rebuilt exactly from the current sources: `expected_text`
does that for one file, `stale_files` for a whole folder.  Used by the
golden tests, `autobatch demo` and `autobatch check`.
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from typing import List, Tuple

from transpiler import backends as B
from transpiler import loader
from transpiler import signature as S
from transpiler.context import Context


def source_module_name(source_relpath: str) -> str:
    return source_relpath[:-3].replace("/", ".")


def contexts_of(module) -> List[Context]:
    return [v for v in vars(module).values() if isinstance(v, Context)]


def expected_text(path: str, root: str) -> str:
    """What the generated module at `path` should contain now."""
    text = loader.read(path)
    header = loader.read_header(loader.split_header(text)[0])
    relpath = _source_path(text)
    if root not in sys.path:
        sys.path.insert(0, root)
    module = importlib.import_module(source_module_name(relpath))
    backend = B.resolve(header["backend"])
    programs = []
    for name, sig_text in loader.header_programs(header):
        ctx = _context_with(module, name)
        classes = dict(vars(module))
        programs.append((ctx, name, S.parse(sig_text, classes)))
    if not programs:
        raise ValueError(f"{path}: no programs in its header")
    ctx = programs[0][0]
    return ctx.module_text(relpath, root, backend, [(n, s) for _, n, s in programs])


def _source_path(text: str) -> str:
    first = text.splitlines()[0]
    marker = " from "
    return first[first.index(marker) + len(marker) : first.rindex(". DO NOT EDIT")]


def _context_with(module, name) -> Context:
    for ctx in contexts_of(module):
        if name in ctx.function_names():
            return ctx
    raise ValueError(f"{module.__name__} has no batched function {name!r}")


def generated_files(generated_dir: str) -> List[str]:
    out = []
    for folder, dirs, files in os.walk(generated_dir):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".py")) and f != "__init__.py":
                out.append(os.path.join(folder, f))
    return out


def stale_files(root: str, generated_dir: str = None) -> List[Tuple[str, str, str]]:
    """[(path, unified diff, expected text)] for every module that is not current."""
    generated_dir = generated_dir or os.path.join(root, "generated")
    out = []
    for path in generated_files(generated_dir):
        actual = loader.read(path)
        expected = expected_text(path, root)
        if actual != expected:
            rel = os.path.relpath(path, root)
            diff = "".join(
                difflib.unified_diff(
                    actual.splitlines(keepends=True),
                    expected.splitlines(keepends=True),
                    rel,
                    rel + " (expected)",
                )
            )
            out.append((path, diff, expected))
    return out
