"""The IR builder's loops: `while`, and `for` as a counted loop.

Part of the builder (ir/builder.py), whose `_FunctionBuilder` these methods
belong to.  `for i in range(...)` becomes a counted `while` with
per-example bounds; `for` over an array, `enumerate`, `zip` and `reversed`
(described by frontend/iterables.py) becomes a counted loop that reads each
element by a subscript.  `loop` lays out the blocks of every loop: test,
body, `else:` and exit, in source order.
"""

from __future__ import annotations

import gast

from transpiler.frontend.iterables import iterable, stores, target_names
from transpiler.frontend.source import origin_of
from transpiler.ir import instructions as ir
from transpiler.ir.builder_support import RANGE_STEP, is_literal_int, unparse


class Loops:
    """Loops (a base of `_FunctionBuilder`)."""

    def while_statement(self, stmt, origin):
        header = self.new_block(origin)
        self.terminate(ir.Goto(header.name, origin))
        self.start(header)
        if isinstance(stmt.test, gast.Constant) and stmt.test.value:
            # `while True:` leaves only by `break` or `return`: no test, and
            # with no `break` the code after it (an implicit `return None`
            # too) is unreachable.
            self.loop(stmt, None, header.name, origin, before_body=None)
            return
        condition = self.condition(stmt.test, origin)
        self.loop(stmt, condition, header.name, origin, before_body=None)

    def for_statement(self, stmt, origin):
        """`for i in range(a, b, s)` as a counted `while` (per-example bounds).

        The counter is advanced before the body runs, so `continue` can jump
        straight back to the test; `i` keeps its last value after the loop.
        """
        # evaluated once, as Python does: the body may rebind the names they read
        args = [self.evaluated_once(a, origin, "range") for a in stmt.iter.args]
        if len(args) == 1:
            start, stop, step = "0", args[0], "1"
        else:
            start, stop = args[0], args[1]
            step = args[2] if len(args) == 3 else "1"
        try:
            literal = int(step)  # a literal step: its sign known, one comparison
        except ValueError:
            literal = 0
        if literal == 0:
            # a per-example step: where it is 0, Python raises ValueError (the example stops)
            checked = self.fresh("range_step")
            self.primop_text(checked, f"{RANGE_STEP}({step})", origin)
            step = checked
        target = stmt.target.id
        counter = self.fresh(f"{target if target != '_' else 'loop'}_next")
        self.primop_text(counter, start, origin)
        header = self.new_block(origin)
        self.terminate(ir.Goto(header.name, origin))
        self.start(header)
        condition = self.fresh("in_range")
        if literal > 0:
            test = f"{counter} < ({stop})"
        elif literal < 0:
            test = f"{counter} > ({stop})"
        else:
            test = f"(({step}) > 0) & ({counter} < ({stop})) | (({step}) < 0) & ({counter} > ({stop}))"
        self.primop_text(condition, test, origin)

        def advance():
            self.primop_text(target, counter, origin)
            self.primop_text(counter, f"{counter} + ({step})", origin)

        self.loop(stmt, condition, header.name, origin, before_body=advance)

    def for_each(self, stmt, origin):
        """`for` over anything but `range(...)` (frontend/iterables.py), as a counted
        loop that reads each element by a subscript:

            for i, x in enumerate(v, 1):        x_index = 0
                body                            while x_index < len(v):
                                                    i, x = (x_index + 1, v[x_index])
                                                    x_index = x_index + 1
                                                    body

        Per-example lengths are fixed, so `len(v)` is a constant (type
        inference).  Python iterates the object the loop started with: a
        local array the body never rebinds is read as it is, so item
        assignments to it show (`v[k + 1] += x`), as in NumPy; anything else
        (an expression, an array the body rebinds, range bounds, enumerate's
        start) is evaluated once, into fresh variables, before the loop.
        `zip` stops at its shortest part; `reversed` reads from the end.
        """
        spec = iterable(stmt.iter, self.source, self.locals)
        rebound = stores(stmt.body)[0]
        prepared = self.prepare_iterable(spec, rebound, origin)
        names = target_names(stmt.target)
        counter = self.fresh(f"{names[0] if names and names[0] != '_' else 'loop'}_index")
        self.primop_text(counter, "0", origin)
        header = self.new_block(origin)
        self.terminate(ir.Goto(header.name, origin))
        self.start(header)
        condition = self.fresh("in_range")
        self.primop_text(condition, _has_element(prepared, counter), origin)

        def advance():
            element = gast.parse(_element(prepared, counter), mode="eval").body
            self.assign([stmt.target], element, origin)
            self.primop_text(counter, f"{counter} + 1", origin)

        self.loop(stmt, condition, header.name, origin, before_body=advance)

    def prepare_iterable(self, spec, rebound, origin):
        """`spec` with its parts evaluated (see `for_each`), as a tree of
        ("sequence", text, length text), ("range", start, step, count),
        ("enumerate", inner, start), ("zip", parts) and ("reversed", inner)."""
        kind = spec.kind
        if kind == "value":
            node = spec.node
            if isinstance(node, gast.Name) and node.id in self.locals and node.id not in rebound:
                return ("sequence", node.id, f"len({node.id})")
            name = self.fresh(f"{node.id if isinstance(node, gast.Name) else 'loop'}_items")
            self.evaluate_into(name, node, origin)
            return ("sequence", name, f"len({name})")
        if kind == "table":
            return ("sequence", spec.node.id, f"len({spec.node.id})")
        if kind == "constant":
            elements = [unparse(e) for e in spec.node.elts]
            return ("sequence", "(" + "".join(e + ", " for e in elements) + ")", str(len(elements)))
        if kind == "range":
            args = [self.evaluated_once(a, origin, "range") for a in spec.node.args]
            start, stop, step = ("0", args[0], "1") if len(args) == 1 else (args + ["1"])[:3]
            count = self.fresh("range_length")
            s = int(step)  # a literal (the fence)
            if s == 1:
                self.primop_text(count, f"{stop} - {start}", origin)
            else:  # len(range(start, stop, s)) where positive
                rounding = s - 1 if s > 0 else s + 1
                self.primop_text(count, f"({stop} - {start} + ({rounding})) // ({s})", origin)
            return ("range", start, step, count)
        if kind == "enumerate":
            inner = self.prepare_iterable(spec.parts[0], rebound, origin)
            start = "0" if spec.start is None else self.evaluated_once(spec.start, origin, "start")
            return ("enumerate", inner, start)
        if kind == "zip":
            return ("zip", tuple(self.prepare_iterable(p, rebound, origin) for p in spec.parts))
        return ("reversed", self.prepare_iterable(spec.parts[0], rebound, origin))

    def evaluated_once(self, node, origin, base) -> str:
        """An integer literal's text, or a fresh variable holding `node`'s value
        (a copy: the loop's body may rebind the names `node` reads)."""
        if is_literal_int(node):
            return unparse(node)
        name = self.fresh(base)
        self.evaluate_into(name, node, origin)
        return name

    def loop(self, stmt, condition, header, origin, before_body):
        body = self.new_block(origin_of(stmt.body[0], origin))
        # `else:` runs when the test fails, so never after `while True:`.
        has_else = stmt.orelse and condition is not None
        orelse = self.new_block(origin_of(stmt.orelse[0], origin)) if has_else else None
        exit_block = self.new_block(None)
        if condition is None:
            self.terminate(ir.Goto(body.name, origin))
        else:
            self.terminate(ir.Branch(condition, body.name, (orelse or exit_block).name, origin))
        self.loops.append((header, exit_block.name))
        self.start(body)
        if before_body is not None:
            before_body()
        self.statements(stmt.body)
        self.terminate(ir.Goto(header, origin))
        self.loops.pop()
        if orelse is not None:  # runs when the test fails, not after `break`
            self.blocks.remove(orelse)
            self.blocks.append(orelse)
            self.start(orelse)
            self.statements(stmt.orelse)
            self.terminate(ir.Goto(exit_block.name, origin))
        # Keep blocks in source order: the exit comes after the body.
        self.blocks.remove(exit_block)
        self.blocks.append(exit_block)
        self.start(exit_block)


def _element(prepared, index) -> str:
    """The text of the element at `index` (a text) of a prepared iterable."""
    kind = prepared[0]
    if kind == "sequence":
        return f"{prepared[1]}[{index}]"
    if kind == "range":
        _, start, step, _ = prepared
        offset = index if step == "1" else f"({index}) * ({step})"
        return offset if start == "0" else f"{start} + {offset}"
    if kind == "enumerate":
        _, inner, start = prepared
        number = index if start == "0" else f"{index} + {start}"
        return f"({number}, {_element(inner, index)})"
    if kind == "zip":
        return "(" + "".join(_element(p, index) + ", " for p in prepared[1]) + ")"
    inner = prepared[1]  # reversed
    return _element(inner, f"{_length(inner)} - 1 - {index}")


def _length(prepared) -> str:
    kind = prepared[0]
    if kind == "sequence":
        return prepared[2]
    if kind == "range":
        return prepared[3]
    return _length(prepared[1])  # enumerate, reversed


def _has_element(prepared, index) -> str:
    """The text of `index < length` (of every part of a zip: the shortest)."""
    if prepared[0] == "zip":
        return " & ".join(f"({_has_element(p, index)})" for p in prepared[1])
    return f"{index} < {_length(prepared)}"
