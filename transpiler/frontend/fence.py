"""Stage 2: reject what autobatch cannot batch, before anything runs.

The fence walks the parsed function once and raises `UnsupportedSyntaxError`
(file, line, column, source text and a hint) at the first construct outside
the supported subset.  Later stages may assume the subset:

- `def` with plain positional parameters;
- statements: assignment to names, to items of a local array (`v[i] = x`,
  `m[i][j] += 1`) and to (nested, starred) tuple/list patterns of both
  (`v[i], v[j] = v[j], v[i]`), chained assignment (`a[i] = b = 0`),
  augmented assignment to a name or an item, expression statements,
  `if`/`elif`/`else`, `while`, and `for` (with `else:`) over `range(...)`,
  a per-example array or an expression giving one, a module-level constant
  table, a literal tuple of numbers, and `enumerate`, `zip` and `reversed`
  of those (`iterable` below); `break`, `continue`, `return` (with or
  without a value), `pass`;
- expressions: anything without hidden per-example control flow (no
  lambdas, generators, walrus, await or yield); list comprehensions only as
  fixed-size arrays, `[x for _ in range(n)]` with `n` known when the program
  is built (`static_count`); a generator expression or list comprehension
  reduced where it is made (`sum(x for x in v if x > 0)`: checked as the
  loop frontend/comprehensions.py writes); `and`, `or`, `not`, chained comparisons and
  `x if c else y` (per example); calls of batched functions by name.

What a `for` may iterate is described in frontend/iterables.py, and which
list lengths are known when the program is built in
frontend/static_lengths.py: the builder reads both, so the fence and the
builder agree on the subset.
"""

from __future__ import annotations

import gast

from transpiler.errors import UnsupportedSyntaxError
from transpiler.frontend import comprehensions
from transpiler.frontend.iterables import Refusal, is_range_call, iterable, live_names, stores, target_names
from transpiler.frontend.source import FunctionSource, node_text, origin_of
from transpiler.frontend.static_lengths import static_count

_STATEMENT_HINTS = {
    gast.AsyncFor: "async code cannot be batched; use a plain `while` loop",
    gast.Try: "handle errors outside the batched function",
    gast.With: "move the `with` block outside the batched function",
    gast.AsyncWith: "move the `with` block outside the batched function",
    gast.Raise: "raising depends on one example; return a flag instead",
    gast.Assert: "check inputs before calling the batched function",
    gast.Delete: "leave the variable unused instead of deleting it",
    gast.Global: "pass the value as an argument or read it without assigning",
    gast.Nonlocal: "pass the value as an argument and return the new value",
    gast.Import: "import at module level; the batched function can read it",
    gast.ImportFrom: "import at module level; the batched function can read it",
    gast.FunctionDef: "define helper functions at module level",
    gast.AsyncFunctionDef: "define helper functions at module level",
    gast.ClassDef: "define classes at module level",
}

_EXPRESSION_HINTS = {
    gast.Lambda: "define a helper function at module level and call it",
    gast.SetComp: "compute the set with batched array operations",
    gast.DictComp: "compute the dict with batched array operations",
    gast.GeneratorExp: "compute the values with batched array operations",
    gast.NamedExpr: "assign the value in a statement of its own",
    gast.Await: "async code cannot be batched",
    gast.Yield: "return a tuple of values instead of yielding",
    gast.YieldFrom: "return a tuple of values instead of yielding",
}

_NAMES = {
    gast.AsyncFor: "`async for` loop",
    gast.Try: "`try` statement",
    gast.With: "`with` statement",
    gast.AsyncWith: "`async with` statement",
    gast.Raise: "`raise` statement",
    gast.Assert: "`assert` statement",
    gast.Delete: "`del` statement",
    gast.Global: "`global` statement",
    gast.Nonlocal: "`nonlocal` statement",
    gast.Import: "`import` statement",
    gast.ImportFrom: "`import` statement",
    gast.FunctionDef: "nested function definition",
    gast.AsyncFunctionDef: "nested function definition",
    gast.ClassDef: "class definition",
    gast.Lambda: "lambda",
    gast.ListComp: "list comprehension",
    gast.SetComp: "set comprehension",
    gast.DictComp: "dict comprehension",
    gast.GeneratorExp: "generator expression",
    gast.NamedExpr: "assignment expression (:=)",
    gast.Await: "`await`",
    gast.Yield: "`yield`",
    gast.YieldFrom: "`yield from`",
}


# List methods that change a list's length (no fixed per-example size).
_GROWING_METHODS = frozenset(("append", "extend", "insert", "pop", "remove", "clear"))


def check(source: FunctionSource, batched_names) -> None:
    """Raises UnsupportedSyntaxError at the first unsupported construct."""
    _Fence(source, frozenset(batched_names)).check_function(source.node)


class _Fence:
    def __init__(self, source, batched_names):
        self.source = source
        self.batched = batched_names
        self.locals = _local_names(source.node)

    def fail(self, node, message, hint):
        raise UnsupportedSyntaxError(
            f"{message} in batched function {self.source.name!r}",
            origin_of(node, getattr(self.source.node, "origin", None)),
            hint,
        )

    def check_function(self, fn):
        args = fn.args
        if args.vararg or args.kwarg:
            self.fail(
                fn,
                "`*args`/`**kwargs` parameters are not supported",
                "list every parameter by name",
            )
        if args.kwonlyargs:
            self.fail(
                fn,
                "keyword-only parameters are not supported",
                "make them positional parameters",
            )
        for stmt in fn.body:
            self.check_statement(stmt, in_loop=False)

    def check_statement(self, stmt, in_loop):
        kind = type(stmt)
        if kind in _STATEMENT_HINTS:
            self.fail(stmt, f"{_NAMES[kind]} is not supported", _STATEMENT_HINTS[kind])
        if isinstance(stmt, gast.Assign):
            for target in stmt.targets:  # `v[i], v[j] = ...`, `a[i] = b = 0` too
                self.check_target(target)
            self.check_expression(stmt.value)
        elif isinstance(stmt, gast.AugAssign):
            if isinstance(stmt.target, gast.Subscript):
                self.check_item_target(stmt.target)
            elif not isinstance(stmt.target, gast.Name):
                self.check_target(stmt.target)
            self.check_expression(stmt.value)
        elif isinstance(stmt, gast.AnnAssign):
            if stmt.value is None:
                return
            self.check_target(stmt.target)
            self.check_expression(stmt.value)
        elif isinstance(stmt, gast.Expr):
            self.check_expression(stmt.value)
        elif isinstance(stmt, gast.If):
            self.check_expression(stmt.test)
            for s in stmt.body + stmt.orelse:
                self.check_statement(s, in_loop)
        elif isinstance(stmt, gast.While):
            self.check_expression(stmt.test)
            for s in stmt.body:
                self.check_statement(s, in_loop=True)
            for s in stmt.orelse:
                self.check_statement(s, in_loop)
        elif isinstance(stmt, gast.For):
            self.check_for(stmt)
            for s in stmt.body:
                self.check_statement(s, in_loop=True)
            for s in stmt.orelse:
                self.check_statement(s, in_loop)
        elif isinstance(stmt, (gast.Break, gast.Continue)):
            if not in_loop:
                self.fail(stmt, "`break`/`continue` outside a loop", "remove it")
        elif isinstance(stmt, gast.Return):
            if stmt.value is not None:
                self.check_expression(stmt.value)
        elif isinstance(stmt, gast.Pass):
            pass
        else:
            self.fail(
                stmt,
                f"`{kind.__name__}` statement is not supported",
                "rewrite it with assignments, `if` and `while`",
            )

    def check_for(self, stmt):
        iterator = stmt.iter
        if is_range_call(iterator, self.source, self.locals):
            if not isinstance(stmt.target, gast.Name):
                self.fail(stmt.target, "a `for` target must be one name", "write `for i in range(...)`")
            self.check_target(stmt.target)
            for arg in iterator.args:
                self.check_expression(arg)
            return
        try:
            spec = iterable(iterator, self.source, self.locals)
        except Refusal as refusal:
            self.fail(refusal.node, refusal.message, refusal.hint)
        self.check_loop_target(stmt.target)
        rebound, items, augmented = stores(stmt.body)
        for name in target_names(stmt.target):
            if name in items:
                self.fail(
                    stmt,
                    f"the loop changes items of its target {name!r}; in Python a row of an array "
                    "is a view, so that would change the array being iterated",
                    f"index the array instead (`for k in range(len(m)): m[k][j] = ...`), "
                    f"or copy the row to a new name first (`row = np.array({name})`)",
                )
        for name in live_names(spec):
            if name in rebound and name in items | augmented:
                self.fail(
                    stmt,
                    f"the loop both rebinds {name!r}, which it iterates, and changes its items: "
                    "Python would iterate the original array and see only the changes made "
                    "before the rebinding",
                    f"iterate a copy (`for x in np.array({name})`) or index it "
                    f"(`for k in range(len({name}))`)",
                )
        self.check_expression(iterator)

    def check_loop_target(self, target):
        if isinstance(target, (gast.Tuple, gast.List)):
            for element in target.elts:
                self.check_loop_target(element)
            return
        if not isinstance(target, gast.Name):
            self.fail(
                target,
                "a `for` target over an array must be a name or a tuple of names",
                "write `for x in v:` or `for i, x in enumerate(v):` and assign inside the loop",
            )
        self.check_target(target)

    def check_target(self, target):
        if isinstance(target, gast.Name):
            # Assigning makes the name local to this function, as in Python:
            # it shadows a batched function of that name here (is_batched_call
            # and _check_batched_uses skip locals), never calls it.
            return
        if isinstance(target, (gast.Tuple, gast.List)):
            for element in target.elts:
                self.check_target(element)
            return
        if isinstance(target, gast.Starred) and isinstance(target.value, gast.Name):
            self.check_target(target.value)
            return
        if isinstance(target, gast.Subscript):
            self.check_item_target(target)
            return
        if isinstance(target, gast.Starred):
            self.fail(
                target,
                "a starred target must be a name",
                "unpack into a name (`first, *rest = t`) and assign its items after",
            )
        if isinstance(target, gast.Attribute):
            self.fail(
                target,
                "assignment to an attribute is not supported",
                "build a new value (e.g. `state = state._replace(...)`) and assign it to a name",
            )
        self.fail(target, "this assignment target is not supported", "assign to a name")

    def check_item_target(self, target):
        """`v[i] = x`, `m[i, j] += 1`, `m[i][j] = x`: a functional update of a
        local array (passes/subscripts.py gives it its per-example meaning)."""
        root = target
        while isinstance(root, gast.Subscript):
            self.check_expression(root.slice)
            root = root.value
        if not isinstance(root, gast.Name):
            self.fail(
                target,
                "item assignment is supported on a variable's elements only (`v[i] = x`)",
                "assign the inner value to a name first",
            )
        if root.id not in self.locals:
            self.fail(
                target,
                f"item assignment to {root.id!r}, which is not a variable of this function",
                f"copy it into a local first (`{root.id.lower()}_copy = np.array({root.id})`)"
                " and assign to that",
            )

    def is_batched_call(self, node):
        return (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Name)
            and node.func.id in self.batched
            and node.func.id not in self.locals
        )

    def check_expression(self, expr):
        reduced = set()  # comprehensions a reduction consumes, checked as its loop
        for node in gast.walk(expr):
            kind = type(node)
            if id(node) in reduced:
                continue
            name = comprehensions.reduction(node, self.source, self.locals)
            if name is not None:
                self.check_reduction(node, name)
                reduced.add(id(node.args[0]))
            elif kind is gast.ListComp:
                self.check_list_comprehension(node)
            elif kind in _EXPRESSION_HINTS:
                self.fail(
                    node, f"{_NAMES[kind]} is not supported", _EXPRESSION_HINTS[kind]
                )
            elif (
                kind is gast.Call
                and isinstance(node.func, gast.Attribute)
                and node.func.attr in _GROWING_METHODS
                and isinstance(node.func.value, gast.Name)
                and node.func.value.id in self.locals
            ):
                self.fail(
                    node,
                    f"`.{node.func.attr}()` changes the length of a list, which has no "
                    "fixed per-example size",
                    "preallocate `[0] * n` (n known when the program is built) and keep a count: "
                    "`items[count] = x; count += 1`",
                )
        self._check_batched_uses(expr)

    def check_reduction(self, node, name):
        """`sum(E for x in v if c)`: the loop it is built as
        (frontend/comprehensions.py), checked as any `for` statement."""
        problem = comprehensions.problem(node, name)
        if problem is not None:
            self.fail(node, problem, "write the loop: `total = 0`, `for x in v: total += ...`")
        counter = iter(range(1, 1 << 30))
        loop = comprehensions.as_loop(node, name, lambda base: f"{base}_{next(counter)}")
        for stmt in loop.first + [loop.loop]:
            self.check_statement(stmt, in_loop=False)

    def check_list_comprehension(self, node):
        """`[x for _ in range(n)]`: an array of n elements, n known when the
        program is built (the builder makes it `repeat(x, n)`, or a loop that
        fills one when `x` reads the loop variable); `[f(x) for x in v]` of a
        name, one element per item of v."""
        hint = (
            "write `[x for _ in range(n)]` with n a literal, a module constant or len(...) "
            "of an array, or fill a preallocated array in a `for` loop"
        )
        if len(node.generators) != 1:
            self.fail(node, "a list comprehension with several `for`s is not supported", hint)
        generator = node.generators[0]
        if generator.ifs:
            self.fail(
                node,
                "a list comprehension with `if` has no fixed per-example length",
                "preallocate `[0] * n` and keep a count in a `for` loop",
            )
        if not isinstance(generator.target, gast.Name):
            self.fail(generator.target, "a list comprehension's target must be one name", hint)
        iterator = generator.iter
        if isinstance(iterator, gast.Name):
            # `[x * x for x in v]`: built as `[v[k] * v[k] for k in range(len(v))]`
            # (ir/builder_expressions.py), a length known when the program is built.
            if any(self.is_batched_call(n) for n in gast.walk(node.elt)):
                self.fail(
                    node,
                    "a list comprehension that calls a batched function is not supported",
                    "fill a preallocated array in a `for` loop",
                )
            return
        if not (is_range_call(iterator, self.source, self.locals) and len(iterator.args) == 1):
            self.fail(
                node,
                "a list comprehension over something other than `range(n)` or a name is "
                "not supported",
                f"name it first (`items = {node_text(iterator)}`, then `for x in items`), or "
                + hint,
            )
        if static_count(iterator.args[0], self.source, self.locals) is None:
            self.fail(
                node,
                f"the length of this list, `{node_text(iterator.args[0])}`, is not known when the "
                "program is built (a value per example)",
                "use a literal, a module constant or an expression of len(...) of an array "
                "(per-example lengths are fixed), or a variable assigned once from one",
            )
        if any(self.is_batched_call(n) for n in gast.walk(node.elt)):
            self.fail(
                node,
                "a list comprehension that calls a batched function is not supported",
                "fill a preallocated array in a `for` loop",
            )

    def _check_batched_uses(self, node):
        if self.is_batched_call(node):
            name = node.func.id
            for kw in node.keywords:
                if kw.arg is None:
                    self.fail(
                        node,
                        f"`**` arguments in a call of batched function {name!r}",
                        "pass the arguments by name, one by one",
                    )
                self._check_batched_uses(kw.value)
            for arg in node.args:
                if isinstance(arg, gast.Starred):
                    self.fail(
                        arg,
                        f"`*` arguments in a call of batched function {name!r}",
                        "pass the arguments one by one",
                    )
                self._check_batched_uses(arg)
            return
        if (
            isinstance(node, gast.Name)
            and node.id in self.batched
            and node.id not in self.locals
        ):
            self.fail(
                node,
                f"batched function {node.id!r} used as a value",
                "call batched functions directly by name",
            )
        for child in gast.iter_child_nodes(node):
            self._check_batched_uses(child)


def _local_names(fn):
    """Names Python would treat as local: parameters and assigned names."""
    names = {a.id for a in fn.args.args}
    for node in gast.walk(fn):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            names.add(node.id)
    return names


local_names = _local_names

