"""Stage 1: the decorated function's source, parsed, with origins on every node.

Reads the source text (never runs it), parses it with gast, shifts line
numbers to the file's and attaches an `Origin` to every node as
`node.origin`, so that every later error can name the user's line.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import linecache
import textwrap
from typing import Any, Dict

import gast

from transpiler.errors import UnsupportedSyntaxError
from transpiler.ir.instructions import Origin
from transpiler.paths import project_root, relative_path


@dataclasses.dataclass
class FunctionSource:
    """What the compiler knows about one decorated function before building IR."""

    name: str
    node: Any  # gast.FunctionDef, decorators removed
    filename: str  # absolute
    path: str  # relative to the project root, '/'-separated
    module: str  # the defining module's __name__
    text: str  # the function's source, dedented
    globals: Dict[str, Any]
    closure: Dict[str, Any]


def load(fn, root=None) -> FunctionSource:
    """Reads and parses `fn`'s source; raises UnsupportedSyntaxError if unreadable."""
    fn = inspect.unwrap(fn)
    filename = inspect.getsourcefile(fn) or getattr(fn.__code__, "co_filename", "?")
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise UnsupportedSyntaxError(
            f"cannot read the source of {fn.__name__!r} ({e})",
            hint="define batched functions with `def` in a .py file "
            "(not in a REPL, exec or lambda)",
        ) from None
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    indent = len(lines[0]) - len(lines[0].lstrip())
    if root is None:
        root = project_root(filename)
    path = relative_path(filename, root)
    tree = gast.parse(text)
    node = tree.body[0]
    if not isinstance(node, gast.FunctionDef):
        raise UnsupportedSyntaxError(
            f"{fn.__name__!r} is not defined with `def`",
            hint="batch a function defined with `def`, not a lambda",
        )
    node.decorator_list = []
    _attach_origins(node, filename, path, first_line - 1, indent)
    closure = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell: assigned later in the outer scope
                pass
    return FunctionSource(
        name=fn.__name__,
        node=node,
        filename=filename,
        path=path,
        module=fn.__module__,
        text=text,
        globals=fn.__globals__,
        closure=closure,
    )


def _attach_origins(tree, filename, path, line_offset, col_offset):
    for node in gast.walk(tree):
        if getattr(node, "lineno", None) is None:
            continue
        node.lineno += line_offset
        node.col_offset = getattr(node, "col_offset", 0) + col_offset
        if getattr(node, "end_lineno", None) is not None:
            node.end_lineno += line_offset
        text = linecache.getline(filename, node.lineno).strip()
        node.origin = Origin(filename, path, node.lineno, node.col_offset, text)


def origin_of(node, fallback=None) -> Origin:
    return getattr(node, "origin", None) or fallback


def node_text(node) -> str:
    """The Python source text of a gast expression (for messages)."""
    import ast

    tree = gast.gast_to_ast(gast.Expression(body=copy.deepcopy(node)))
    return ast.unparse(ast.fix_missing_locations(tree))
