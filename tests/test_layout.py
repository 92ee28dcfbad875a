"""The layout's rules, read from the sources (docs/layout.md; issue 34).

- No module of the packages is over 600 lines: a module that size has more
  than one job, and is split along its seams.
- No import cycle among the packages' modules, counting the imports a
  module runs when it is imported (its top level, not its functions').
- The user's side is apart from the build: `Context` (transpiler/context.py)
  and the call (transpiler/batched.py) import neither the compiler nor the
  regeneration path at import time, and the build (transpiler/build/)
  imports nothing of the user's API but the decorated function's type;
  `autobatch generate`/`check`/`diff` (regenerate.py, gate.py, cli.py)
  call no method of a Context, reading it only as the registry of its
  decorated functions.

Nothing is imported: the rules read the files with `ast`, so they hold of
the tree as checked in, whatever a test imported before.
"""

from __future__ import annotations

import ast
import os

from tests.conftest import ROOT

PACKAGES = ("transpiler", "autobatch_runtime", "autobatch")
MAX_LINES = 600
# Modules over the limit that another change is splitting, each with the
# size it may not grow past: remove an entry once its module fits.
KNOWN_OVER = {}
# What loads only to build a program: the compiler's stages and tools.
COMPILER = (
    "gast",
    "black",
    "templates",
    "transpiler.pipeline",
    "transpiler.frontend",
    "transpiler.ir",
    "transpiler.passes",
    "transpiler.emit",
    "transpiler.regenerate",
    "transpiler.gate",
    "transpiler.cli",
)
# The generate/check/diff path, which reads a Context as data only.
REGENERATION = ("transpiler/regenerate.py", "transpiler/gate.py", "transpiler/cli.py")


def _files(packages=PACKAGES):
    """{module name: path relative to ROOT} of every .py of `packages`."""
    out = {}
    for package in packages:
        for folder, dirs, files in os.walk(os.path.join(ROOT, package)):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
            for name in sorted(files):
                if name.endswith(".py"):
                    rel = os.path.relpath(os.path.join(folder, name), ROOT).replace(os.sep, "/")
                    module = rel[: -len(".py")].replace("/", ".")
                    if module.endswith(".__init__"):
                        module = module[: -len(".__init__")]
                    out[module] = rel
    return out


def _tree(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return ast.parse(f.read(), rel)


def _top_level(tree):
    """The import statements a module runs when imported: those outside
    functions and classes (inside a top-level `if` or `try` too)."""
    out, todo = [], list(tree.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        elif isinstance(node, (ast.If, ast.Try)):
            for block in (node.body, node.orelse, getattr(node, "finalbody", []),
                          *[h.body for h in getattr(node, "handlers", [])]):
                todo.extend(block)
    return out


def _imported(module, node, known):
    """The modules an import statement of `module` names (submodules where a
    `from package import name` names one)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".")
        package = package[: len(package) - node.level + (1 if _is_package(module, known) else 0)]
        base = ".".join(package + ([base] if base else []))
    out = []
    for alias in node.names:
        full = f"{base}.{alias.name}"
        out.append(full if full in known else base)
    return out


def _is_package(module, known):
    return known.get(module, "").endswith("__init__.py")


def _graph():
    """{module: [modules of the packages it imports at its top level]}."""
    known = _files()
    graph = {}
    for module, rel in known.items():
        names = []
        for node in _top_level(_tree(rel)):
            names.extend(_imported(module, node, known))
        # A name from the module's own package (`from transpiler import
        # __version__`) is not an edge: Python initializes the package
        # before its modules, and the package defines such names before
        # it imports any module of its own.
        graph[module] = sorted(
            {n for n in names if n in known and n != module and not module.startswith(n + ".")}
        )
    return graph


def _cycle(graph):
    """One import cycle as [a, b, ..., a], or None."""
    state = {}  # module -> "open" while on the path, "done" after

    def visit(module, path):
        state[module] = "open"
        path.append(module)
        for nxt in graph.get(module, ()):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path)
                if found:
                    return found
        path.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module, [])
            if found:
                return found
    return None


def _reached(graph, start, seen=None):
    """Every module `start` imports at import time, directly or not."""
    seen = set() if seen is None else seen
    for nxt in graph.get(start, ()):
        if nxt not in seen:
            seen.add(nxt)
            _reached(graph, nxt, seen)
    return seen


def _all_imports(rel):
    """Every module an import statement of the file names, at any depth."""
    out = set()
    for node in ast.walk(_tree(rel)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def _in(module, prefixes):
    return any(module == p or module.startswith(p + ".") for p in prefixes)


# ---- the rules ------------------------------------------------------------


def test_no_module_is_over_600_lines():
    offenders = []
    for rel in _files().values():
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            lines = sum(1 for _ in f)
        limit = KNOWN_OVER.get(rel, MAX_LINES)
        if lines > limit:
            offenders.append(f"{rel}: {lines} lines (at most {limit})")
    assert not offenders, "split these modules along their seams:\n  " + "\n  ".join(offenders)


def test_known_oversized_modules_still_are():
    """An entry of KNOWN_OVER whose module now fits goes (or no longer exists)."""
    fitted = []
    for rel in KNOWN_OVER:
        path = os.path.join(ROOT, rel)
        if not os.path.exists(path):
            fitted.append(f"{rel}: gone")
            continue
        with open(path, encoding="utf-8") as f:
            if sum(1 for _ in f) <= MAX_LINES:
                fitted.append(f"{rel}: now fits")
    assert not fitted, "remove from KNOWN_OVER:\n  " + "\n  ".join(fitted)


def test_no_import_cycles():
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle (top-level imports): " + " -> ".join(cycle)


def test_the_users_side_imports_neither_the_compiler_nor_the_regeneration_path():
    graph = _graph()
    for start in ("transpiler.context", "transpiler.batched", "transpiler.build", "autobatch"):
        reached = sorted(m for m in _reached(graph, start) | set(graph[start]) if _in(m, COMPILER))
        assert not reached, f"{start} imports at import time: {reached}"
    build = [m for m in _files() if _in(m, ("transpiler.build",))]
    for start in build:
        reached = sorted(m for m in _reached(graph, start) if _in(m, COMPILER))
        assert not reached, f"{start} imports at import time: {reached}"


def test_the_build_does_not_import_the_users_api():
    files = _files()
    for module, rel in files.items():
        if _in(module, ("transpiler.build",)):
            api = sorted(m for m in _all_imports(rel) if _in(m, ("transpiler.context", "autobatch")))
            assert not api, f"{rel} imports the user's API: {api}"


def test_regeneration_calls_no_method_of_a_context():
    """No call of a Context method that hands work to transpiler/build/ (the
    delegates kept for the predecessor's API and tools): the regeneration
    path calls the build itself."""
    context = _tree("transpiler/context.py")
    build = {
        alias.asname or alias.name
        for node in context.body
        if isinstance(node, ast.ImportFrom) and node.module == "transpiler.build"
        for alias in node.names
    }
    delegates = set()
    for node in context.body:
        if isinstance(node, ast.ClassDef) and node.name == "Context":
            for method in node.body:
                if isinstance(method, ast.FunctionDef) and any(
                    isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in build
                    for n in ast.walk(method)
                ):
                    delegates.add(method.name)
    assert {"module_text", "declared_programs", "_entry"} <= delegates
    for rel in REGENERATION:
        tree = _tree(rel)
        # `writer.module_text(ctx, ...)`: a function of an imported module, not a method
        modules = {
            alias.asname or alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        }
        used = sorted(
            {
                node.attr
                for node in ast.walk(tree)
                if isinstance(node, ast.Attribute)
                and node.attr in delegates
                and not (isinstance(node.value, ast.Name) and node.value.id in modules)
            }
        )
        assert not used, f"{rel} calls Context methods {used}: call transpiler/build/ instead"
