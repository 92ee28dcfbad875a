"""tools/fuzzrun.memoized_emission (the tests' generation, tests/conftest.py)
writes the text `ast.unparse` gives for the whole module."""

import ast
import glob
import os

from tools import fuzzrun
from transpiler.emit import module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _joined(statements):
    text = lambda s: ast.unparse(ast.fix_missing_locations(s))  # noqa: E731
    return fuzzrun.joined_unparse(statements, text, module.unparsed)


def test_statement_by_statement_is_the_whole_modules_text():
    # Every checked-in module: imports, assignments, defs (a factory, a
    # dispatcher), the PROGRAMS table; its docstring first, then without it.
    paths = sorted(glob.glob(os.path.join(ROOT, "generated", "examples", "*.py")))
    assert paths
    for path in paths:
        with open(path) as f:
            body = ast.parse(f.read()).body
        for statements in (body, body[1:], [s for s in body if isinstance(s, ast.FunctionDef)]):
            assert _joined(statements) == module.unparsed(statements), path


def test_a_def_or_class_after_a_statement():
    body = ast.parse("x = 1\ndef f():\n    return 2\ny = [1, 2]\nclass C:\n    pass\n").body
    for statement in ast.walk(ast.Module(body, [])):  # as emitted: no locations
        for name in ("lineno", "end_lineno", "col_offset", "end_col_offset"):
            if hasattr(statement, name):
                delattr(statement, name)
    assert _joined(body) == module.unparsed(body)
    assert _joined([]) == module.unparsed([])
    # a change the join would get wrong is seen: no blank line before a def
    assert _joined(body).replace("\n\ndef", "\ndef") != module.unparsed(body)
