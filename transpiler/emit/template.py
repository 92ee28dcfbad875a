"""Templates: real Python functions whose UPPER_CASE parameters are placeholders.

A template in `templates/` is an ordinary function, so it is parsed, linted
and read like any code.  `expand(template, NAME=...)` returns the statements
of its body with every placeholder replaced, and checks that the replacements
given are exactly the template's parameters.  A placeholder may stand:

- where an expression goes: `NAME` is replaced by an `ast.expr` (strings
  become names, other Python values constants);
- as a statement of its own: replaced by a list of statements;
- as `*NAME` / `**NAME` in a call: replaced by a list of arguments /
  of `ast.keyword`;
- as the name of a nested `def`: replaced by a string;
- as a parameter of a nested `def`: replaced by a list of `ast.arg`.

Templates are parsed once per process (cached by function).
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import textwrap


@functools.lru_cache(maxsize=None)
def _parsed(template):
    source = textwrap.dedent(inspect.getsource(template))
    fn = ast.parse(source).body[0]
    return fn, tuple(a.arg for a in fn.args.args)


def expand(template, **replacements):
    """The template's body (a list of statements) with placeholders replaced."""
    fn, params = _parsed(template)
    missing = set(params) - set(replacements)
    extra = set(replacements) - set(params)
    if missing or extra:
        raise TypeError(
            f"template {template.__name__}: missing {sorted(missing)}, "
            f"unexpected {sorted(extra)}"
        )
    body = copy.deepcopy(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the template's own docstring
    module = ast.Module(body=body, type_ignores=[])
    module = _Replacer(replacements).visit(module)
    return module.body


def _as_expr(value):
    if isinstance(value, ast.AST):
        return value
    if isinstance(value, str):
        return ast.Name(id=value, ctx=ast.Load())
    return ast.Constant(value=value)


class _Replacer(ast.NodeTransformer):
    def __init__(self, replacements):
        self.r = replacements

    def visit_Name(self, node):
        if node.id in self.r:
            value = self.r[node.id]
            if isinstance(value, str) and not isinstance(node.ctx, ast.Load):
                return ast.Name(id=value, ctx=node.ctx)
            return _as_expr(value)
        return node

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Name) and node.value.id in self.r:
            value = self.r[node.value.id]
            if isinstance(value, list):
                return list(value)
        return self.generic_visit(node)

    def visit_Call(self, node):
        args = []
        for a in node.args:
            if (
                isinstance(a, ast.Starred)
                and isinstance(a.value, ast.Name)
                and isinstance(self.r.get(a.value.id), list)
            ):
                args.extend(_as_expr(v) for v in self.r[a.value.id])
            else:
                args.append(a)
        node.args = args
        keywords = []
        for kw in node.keywords:
            if kw.arg is None and isinstance(kw.value, ast.Name) and kw.value.id in self.r:
                keywords.extend(self.r[kw.value.id])
            else:
                keywords.append(kw)
        node.keywords = keywords
        return self.generic_visit(node)

    def visit_FunctionDef(self, node):
        if node.name in self.r:
            node.name = self.r[node.name]
        args = []
        for a in node.args.args:
            if a.arg in self.r and isinstance(self.r[a.arg], list):
                args.extend(self.r[a.arg])
            else:
                args.append(a)
        node.args.args = args
        return self.generic_visit(node)


def comment(text: str) -> ast.stmt:
    """A statement that becomes `# text` on its own line after unparsing."""
    return ast.Expr(
        ast.Call(ast.Name(COMMENT_MARKER, ast.Load()), [ast.Constant(text)], [])
    )


def trailing_comment(text: str) -> ast.stmt:
    """A statement that becomes `  # text` at the end of the line before it
    (a one-line statement) after unparsing; black leaves it there."""
    return ast.Expr(
        ast.Call(ast.Name(TRAILING_MARKER, ast.Load()), [ast.Constant(text)], [])
    )


COMMENT_MARKER = "__autobatch_comment__"
TRAILING_MARKER = "__autobatch_trailing_comment__"


def render_comments(source: str) -> str:
    """Turns the marker statements left by `comment` into real comments."""
    out = []
    prefix = f"{COMMENT_MARKER}("
    trailing = f"{TRAILING_MARKER}("
    for line in source.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(trailing) and stripped.endswith(")") and out:
            text = ast.literal_eval(stripped[len(trailing) : -1])
            out[-1] += f"  # {text}"
        elif stripped.startswith(prefix) and stripped.endswith(")"):
            indent = line[: len(line) - len(stripped)]
            text = ast.literal_eval(stripped[len(prefix) : -1])
            out.append(f"{indent}# {text}")
        else:
            out.append(line)
    return "\n".join(out) + "\n"
