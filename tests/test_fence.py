"""The fence: unsupported Python is rejected with the user's file and line.

Each case writes a small module holding one batched function into tmp_path,
imports it and checks the `UnsupportedSyntaxError` that decorating raises at
import (a name only the finished module can bind waits for the first call):
its type, file, exact line, the line's text and a message naming the
construct.  The offending line is marked `# <-- here` in the case's source,
so the expected line number is read off the file itself.

Generated code goes to `tmp_path / "generated"`, never to the repository's
generated/ (the folder is named `generated` because the loader adds
`__init__.py` files to every parent folder up to one of that name).
"""

import importlib.util
import itertools
import sys
import textwrap

import numpy as np
import pytest

import transpiler
from transpiler import UnsupportedSyntaxError

MARK = "# <-- here"

_counter = itertools.count()


def _header(gen_dir, context_args=""):
    return (
        "import numpy as np\n"
        "from transpiler import Context\n"
        "\n"
        f"ctx = Context(generated_dir={str(gen_dir)!r}{context_args})\n"
        "\n"
    )


def write_file(tmp_path, body, context_args=""):
    """Writes header + `body` to a fresh .py file in tmp_path: (module name, path)."""
    name = f"autobatch_fence_case_{next(_counter)}"
    path = tmp_path / f"{name}.py"
    path.write_text(_header(tmp_path / "generated", context_args) + textwrap.dedent(body))
    return name, path


def import_file(monkeypatch, name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def write_module(tmp_path, monkeypatch, body, context_args=""):
    """Writes header + `body` to a fresh .py file in tmp_path and imports it."""
    name, path = write_file(tmp_path, body, context_args)
    return import_file(monkeypatch, name, path), path


def refused_at_import(tmp_path, monkeypatch, body):
    """(the UnsupportedSyntaxError importing `body` raises, its file)."""
    name, path = write_file(tmp_path, textwrap.dedent(body) + "\nIMPORTED = True\n")
    with pytest.raises(UnsupportedSyntaxError) as info:
        import_file(monkeypatch, name, path)
    return info.value, path


def marked_line(path):
    """(1-based number, text) of the single line marked `# <-- here`."""
    hits = [
        (number, line)
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if MARK in line
    ]
    assert len(hits) == 1, hits
    return hits[0]


def files_under(folder):
    return sorted(p for p in folder.rglob("*")) if folder.exists() else []


# (id, module body defining the batched function `f`, number of positional
# arguments `f` is called with, a fragment the message must contain)
CASES = [
    (
        "non_literal_default",
        """
        @ctx.batch
        def f(n, table=np.zeros(3)):  # <-- here
            return n
        """,
        1,
        "default value of parameter 'table' is not a literal",
    ),
    (
        "unknown_keyword_in_batched_call",
        """
        @ctx.batch
        def other(n):
            return n + 1

        @ctx.batch
        def f(n):
            return other(m=n)  # <-- here
        """,
        1,
        "'other' has no parameter 'm'",
    ),
    (
        "for_over_a_string",
        """
        @ctx.batch
        def f(n):
            total = 0
            for c in "abc":  # <-- here
                total = total + n
            return total
        """,
        1,
        "a `for` loop over a string",
    ),
    (
        "try",
        """
        @ctx.batch
        def f(n):
            try:  # <-- here
                n = n + 1
            except ValueError:
                n = n - 1
            return n
        """,
        1,
        "`try` statement",
    ),
    (
        "with",
        """
        @ctx.batch
        def f(n):
            with open("somewhere") as handle:  # <-- here
                n = n + 1
            return n
        """,
        1,
        "`with` statement",
    ),
    (
        "raise",
        """
        @ctx.batch
        def f(n):
            if n < 0:
                raise ValueError("negative")  # <-- here
            return n
        """,
        1,
        "`raise` statement",
    ),
    (
        "assert",
        """
        @ctx.batch
        def f(n):
            assert n >= 0  # <-- here
            return n
        """,
        1,
        "`assert` statement",
    ),
    (
        "del",
        """
        @ctx.batch
        def f(n):
            m = n + 1
            del m  # <-- here
            return n
        """,
        1,
        "`del` statement",
    ),
    (
        "global",
        """
        COUNTER = 0

        @ctx.batch
        def f(n):
            global COUNTER  # <-- here
            return n + COUNTER
        """,
        1,
        "`global` statement",
    ),
    (
        "nonlocal",
        """
        def outer():
            offset = 1

            @ctx.batch
            def f(n):
                nonlocal offset  # <-- here
                return n + offset

            return f

        f = outer()
        """,
        1,
        "`nonlocal` statement",
    ),
    (
        "import",
        """
        @ctx.batch
        def f(n):
            import math  # <-- here
            return n + 1
        """,
        1,
        "`import` statement",
    ),
    (
        "import_from",
        """
        @ctx.batch
        def f(n):
            from math import pi  # <-- here
            return n + 1
        """,
        1,
        "`import` statement",
    ),
    (
        "nested_def",
        """
        @ctx.batch
        def f(n):
            def helper(x):  # <-- here
                return x + 1
            return n
        """,
        1,
        "nested function definition",
    ),
    (
        "class_def",
        """
        @ctx.batch
        def f(n):
            class Box:  # <-- here
                pass
            return n
        """,
        1,
        "class definition",
    ),
    (
        "lambda",
        """
        @ctx.batch
        def f(n):
            m = n + 1
            g = lambda x: x + 1  # <-- here
            return m
        """,
        1,
        "lambda",
    ),
    (
        "list_comprehension_with_if",
        """
        @ctx.batch
        def f(n):
            m = n * 2
            xs = [i for i in range(3) if i > 1]  # <-- here
            return m
        """,
        1,
        "list comprehension with `if`",
    ),
    (
        "set_comprehension",
        """
        @ctx.batch
        def f(n):
            xs = {i for i in range(3)}  # <-- here
            return n
        """,
        1,
        "set comprehension",
    ),
    (
        "dict_comprehension",
        """
        @ctx.batch
        def f(n):
            xs = {i: i for i in range(3)}  # <-- here
            return n
        """,
        1,
        "dict comprehension",
    ),
    (
        "generator_expression",
        """
        @ctx.batch
        def f(n):
            total = (i for i in range(3))  # <-- here
            return n + sum(total)
        """,
        1,
        "generator expression",
    ),
    (
        "walrus",
        """
        @ctx.batch
        def f(n):
            m = (k := n + 1) * 2  # <-- here
            return m
        """,
        1,
        "assignment expression (:=)",
    ),
    (
        "yield",
        """
        @ctx.batch
        def f(n):
            m = n + 1
            yield m  # <-- here
        """,
        1,
        "`yield`",
    ),
    (
        # Called with one argument: with `def f(n, *args)` the call would be
        # refused before the fence (see test_signature_check_hides_the_fence).
        "star_args",
        """
        @ctx.batch
        def f(*args):  # <-- here
            return 1
        """,
        1,
        "`*args`/`**kwargs` parameters",
    ),
    (
        "star_star_kwargs",
        """
        @ctx.batch
        def f(**kwargs):  # <-- here
            return 1
        """,
        1,
        "`*args`/`**kwargs` parameters",
    ),
    (
        "keyword_only_parameter",
        """
        @ctx.batch
        def f(n, *, k):  # <-- here
            return n + k
        """,
        2,
        "keyword-only parameters",
    ),
    (
        "starred_item_in_a_tuple_target",
        """
        @ctx.batch
        def f(n):
            m = n + 1
            k, *m[1:] = 2, 3  # <-- here
            return m
        """,
        1,
        "a starred target must be a name",
    ),
    (
        "assign_to_attribute",
        """
        @ctx.batch
        def f(n):
            m = n + 1
            m.value = 2  # <-- here
            return m
        """,
        1,
        "assignment to an attribute",
    ),
    (
        "batched_function_as_value",
        """
        @ctx.batch
        def other(n):
            return n + 1

        @ctx.batch
        def f(n):
            g = other  # <-- here
            return n
        """,
        1,
        "batched function 'other' used as a value",
    ),
    (
        "batched_call_with_star_argument",
        """
        @ctx.batch
        def other(n):
            return n + 1

        @ctx.batch
        def f(n):
            pair = (n,)
            return other(*pair)  # <-- here
        """,
        1,
        "`*` arguments in a call of batched function 'other'",
    ),
    (
        "nested_inside_if_and_while",
        """
        @ctx.batch
        def f(n):
            i = 0
            while i < n:
                if i > 1:
                    i = i + 1
                else:
                    assert i >= 0  # <-- here
                i = i + 1
            return i
        """,
        1,
        "`assert` statement",
    ),
    (
        "undefined_name",
        """
        @ctx.batch
        def f(n):
            m = n + 1
            return m + not_defined_anywhere  # <-- here
        """,
        1,
        "name 'not_defined_anywhere' is not defined",
    ),
]


# Refused by the first call, not at import: only the finished module says
# whether a name is defined (it may be bound below the function).
AT_FIRST_CALL = {"undefined_name"}


def check_refusal(err, path, fragment):
    lineno, line = marked_line(path)
    assert type(err) is transpiler.UnsupportedSyntaxError
    assert isinstance(err, SyntaxError)
    assert err.filename == str(path)
    assert err.lineno == lineno
    assert err.text == line.strip()
    assert fragment in err.msg
    if "is not defined" not in fragment:
        assert "in batched function 'f'" in err.msg
    assert err.hint and f"hint: {err.hint}" in err.msg


@pytest.mark.parametrize(
    "body, nargs, fragment",
    [c[1:] for c in CASES if c[0] not in AT_FIRST_CALL],
    ids=[c[0] for c in CASES if c[0] not in AT_FIRST_CALL],
)
def test_fence_rejects_at_import_with_file_and_line(tmp_path, monkeypatch, body, nargs, fragment):
    err, path = refused_at_import(tmp_path, monkeypatch, body)
    check_refusal(err, path, fragment)
    # Nothing was generated for the rejected function.
    assert files_under(tmp_path / "generated") == []


@pytest.mark.parametrize(
    "body, nargs, fragment",
    [c[1:] for c in CASES if c[0] in AT_FIRST_CALL],
    ids=[c[0] for c in CASES if c[0] in AT_FIRST_CALL],
)
def test_fence_rejects_at_the_first_call_what_the_module_may_still_define(
    tmp_path, monkeypatch, body, nargs, fragment
):
    module, path = write_module(tmp_path, monkeypatch, body)
    with pytest.raises(UnsupportedSyntaxError) as info:
        module.f(*[np.array([1, 2])] * nargs, backend="numpy")
    check_refusal(info.value, path, fragment)
    assert files_under(tmp_path / "generated") == []


@pytest.mark.parametrize("body, nargs, fragment", [c[1:] for c in CASES[:4]], ids=[c[0] for c in CASES[:4]])
def test_a_context_that_checks_nothing_when_decorating_refuses_at_the_first_call(
    tmp_path, monkeypatch, body, nargs, fragment
):
    # Context(check_when_decorated=False): a module that keeps refused
    # functions on purpose imports, and each call of one refuses it.
    module, path = write_module(tmp_path, monkeypatch, body, ", check_when_decorated=False")
    for _ in range(2):
        with pytest.raises(UnsupportedSyntaxError) as info:
            module.f(*[np.array([1, 2])] * nargs, backend="numpy")
        check_refusal(info.value, path, fragment)
    assert files_under(tmp_path / "generated") == []


def test_fence_error_points_at_the_first_offending_construct(tmp_path, monkeypatch):
    err, path = refused_at_import(
        tmp_path,
        monkeypatch,
        """
        @ctx.batch
        def f(n):
            m = n + 1
            del m  # <-- here
            for i in range(3):
                n = n + i
            return n
        """,
    )
    lineno, _ = marked_line(path)
    assert err.lineno == lineno
    assert "`del` statement" in err.msg


def test_fence_rejects_on_every_import_not_just_the_first(tmp_path, monkeypatch):
    body = """
        @ctx.batch
        def f(n):
            assert n > 0  # <-- here
            return n
        """
    name, path = write_file(tmp_path, body)
    lineno, _ = marked_line(path)
    for _ in range(2):
        with pytest.raises(UnsupportedSyntaxError) as info:
            import_file(monkeypatch, name, path)
        assert info.value.lineno == lineno
    assert files_under(tmp_path / "generated") == []


def test_unreadable_source_is_an_unsupported_syntax_error(tmp_path, monkeypatch):
    module, _ = write_module(
        tmp_path,
        monkeypatch,
        """
        namespace = {}
        exec("def f(n):\\n    return n + 1\\n", namespace)
        f = ctx.batch(namespace["f"])
        """,
    )
    assert module.f(5, dry_run=True) == 6  # the function itself is fine

    with pytest.raises(UnsupportedSyntaxError) as info:
        module.f(np.array([1, 2]), backend="numpy")

    err = info.value
    assert type(err) is transpiler.UnsupportedSyntaxError
    assert "cannot read the source of 'f'" in err.msg
    assert "exec" in err.hint
    assert files_under(tmp_path / "generated") == []


def test_supported_function_in_the_same_setup_is_generated(tmp_path, monkeypatch):
    # The control for the cases above: the same harness with nothing
    # unsupported compiles, runs and writes its module under tmp_path.
    module, _ = write_module(
        tmp_path,
        monkeypatch,
        """
        @ctx.batch
        def f(n):
            i = 0
            while i < n:
                i = i + 2
            return i
        """,
    )
    result = module.f(np.array([1, 2, 5]), backend="numpy")
    assert np.asarray(result).tolist() == [2, 2, 6]
    written = [p.name for p in files_under(tmp_path / "generated")]
    assert any(name.endswith("_np.py") for name in written)


# ---- the fence runs before the argument count is checked --------------


@pytest.mark.parametrize(
    "signature, nargs",
    [("n, *args", 1), ("n, **kwargs", 1), ("*args", 2)],
    ids=["n_star_args", "n_star_star_kwargs", "star_args_two_values"],
)
def test_signature_check_hides_the_fence(tmp_path, monkeypatch, signature, nargs):
    # refused at import, before any call could count its arguments
    err, path = refused_at_import(
        tmp_path,
        monkeypatch,
        f"""
        @ctx.batch
        def f({signature}):  # <-- here
            return 1
        """,
    )
    lineno, _ = marked_line(path)
    assert err.lineno == lineno
    assert "`*args`/`**kwargs` parameters" in err.msg
