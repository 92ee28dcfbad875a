"""`autobatch check`'s survey of the generated tree, cheap when nothing changed.

Without importing the sources, TensorFlow, black or the compiler, it finds:

- *missing* modules: a source file that the inputs give programs (a lock
  line, a pyproject signature, `@ctx.batch(signature=...)`) lacks one per
  configured backend;
- *orphans*: a module under the output folder that no input asks for;
- *current* modules: the header's `inputs-sha256` equals the hash of the
  inputs now (transpiler/inputs.py), the body matches its hash and black is
  the version that formatted it;
- *unreached* functions: a `@X.batch` function in `sources` listed in no
  module's `functions=` (no declared program reaches it);
- *bad lock lines*: a lock line naming no batched function of its file;
- *runtime mismatches*: a module whose header (`runtime=`, the version its
  `rt.require(...)` asks for) names another version than the installed
  autobatch_runtime's; such a module is never current.

Everything else is a *candidate*: the caller regenerates its text (this
costs the compiler) and compares it with the file.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
from typing import Dict, List, Optional, Sequence, Set, Tuple

from autobatch_runtime import RUNTIME_VERSION
from transpiler import inputs, loader
from transpiler.config import Config
from transpiler.paths import relative_path

SUFFIXES = {"tensorflow": "tf", "tf": "tf", "numpy": "np", "np": "np"}


@dataclasses.dataclass
class Survey:
    sources: List[str]  # relative paths of the source files looked at
    expected: Dict[str, Tuple[str, str]]  # module path -> (source relpath, backend name)
    current: Dict[str, str] = dataclasses.field(default_factory=dict)  # path -> text
    candidates: List[str] = dataclasses.field(default_factory=list)  # missing or changed
    orphans: List[str] = dataclasses.field(default_factory=list)
    unreached: List[Tuple[str, str]] = dataclasses.field(default_factory=list)
    bad_lock_lines: List[str] = dataclasses.field(default_factory=list)
    batched: Dict[str, List[str]] = dataclasses.field(default_factory=dict)  # relpath -> names
    # path -> the runtime version its header asks for ("" if none), when not the installed one
    runtime_mismatch: Dict[str, str] = dataclasses.field(default_factory=dict)


def source_files(config: Config, paths: Optional[Sequence[str]] = None) -> List[str]:
    """The .py files under the given paths (default: the configured sources)."""
    out = []
    for given in paths or config.sources:
        full = os.path.join(config.root, given)
        if os.path.isfile(full):
            out.append(os.path.abspath(full))
            continue
        if not os.path.isdir(full):
            raise FileNotFoundError(f"no such source file or folder: {given}")
        for folder, dirs, files in os.walk(full):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
            out.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(".py"))
    return out


def generated_files(generated_dir: str) -> List[str]:
    """Every generated module under a folder (not the package `__init__` files)."""
    out = []
    for folder, dirs, files in os.walk(generated_dir):
        dirs.sort()
        out.extend(
            os.path.join(folder, f)
            for f in sorted(files)
            if f.endswith(".py") and f != "__init__.py"
        )
    return out


def installed_black() -> Optional[str]:
    try:
        return importlib.metadata.version("black")
    except importlib.metadata.PackageNotFoundError:
        return None


def survey(config: Config, paths: Optional[Sequence[str]] = None) -> Survey:
    files = [relative_path(f, config.root) for f in source_files(config, paths)]
    lock = inputs.read_lock(config.root)
    locked: Dict[str, Set[str]] = {}
    for line in lock:
        path, name, _, _ = inputs.parse_line(line)
        locked.setdefault(path, set()).add(name)
    configured: Dict[str, Set[str]] = {}
    for key in config.signatures:
        path, _, name = key.rpartition("::")
        configured.setdefault(path, set()).add(name)
    expected: Dict[str, Tuple[str, str]] = {}
    result = Survey(files, expected)
    for relpath in files:
        found = inputs.scan_batched(os.path.join(config.root, *relpath.split("/")))
        names = [n for n, _ in found]
        result.batched[relpath] = names
        for name in sorted(locked.get(relpath, ())):
            if name not in names:
                result.bad_lock_lines.extend(
                    line for line in lock if line.startswith(f"{relpath}::{name}(")
                )
        wanted = {n for n, declared in found if declared}
        wanted |= (locked.get(relpath, set()) | configured.get(relpath, set())) & set(names)
        if not wanted:
            continue
        for backend in config.backends:
            path = loader.module_path(config.output_dir, relpath, SUFFIXES[backend])
            expected[path] = (relpath, {"tf": "tensorflow", "np": "numpy"}.get(backend, backend))
    black = installed_black()
    reached: Set[Tuple[str, str]] = set()
    for path in generated_files(config.output_dir):
        text = loader.read(path) or ""
        header = loader.read_header(loader.split_header(text)[0])
        reached.update(loader.header_functions(header))
        if path not in expected:
            source = header.get("source") or _source_of(config, path)
            if paths is None or source in files:
                result.orphans.append(path)
            continue
        relpath, backend = expected[path]
        if text and header.get("runtime") != str(RUNTIME_VERSION):
            result.runtime_mismatch[path] = header.get("runtime", "")
        functions = [p for p, _ in loader.header_functions(header)]
        fresh = path not in result.runtime_mismatch and (
            header.get("inputs-sha256")
            == inputs.inputs_hash(
                config.root, backend, relpath, functions, config.signatures, config.closures
            )
            and header.get("backend") == backend
            and header.get("black") == black
            and not loader.is_hand_edited(text)
        )
        if fresh:
            result.current[path] = text
    result.candidates = [p for p in expected if p not in result.current]
    for relpath in files:
        for name in result.batched[relpath]:
            if (relpath, name) not in reached:
                result.unreached.append((relpath, name))
    return result


def _source_of(config, path):
    """The source file a module's path names (`generated/a/b_tf.py` -> `a/b.py`)."""
    rel = relative_path(path, config.output_dir)
    stem, _, _ = rel[:-3].rpartition("_")
    return stem + ".py"
