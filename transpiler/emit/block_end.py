"""The end of a block function: stacks, calls, returns and the state update.

`BlockEnd` is a part of `_BlockBody` (transpiler/emit/block.py): pushes
and pops of return addresses and saved variables (each stack written at
most once per block, applied by the driver after the block), the
terminator (goto, branch, call, return), overflow flags, and the keywords
of the state update.
"""

from __future__ import annotations

import ast

from transpiler import types as T
from transpiler.emit.syntax import (  # the emitters' shared builders
    _attr,
    _call,
    _index,
    _name,
    _safe,
    _target,
)
from transpiler.emit.template import comment
from transpiler.ir import instructions as ir


class BlockEnd:
    """The block's end (a part of `_BlockBody`)."""

    def return_pointer(self):
        """The return stack's pointer: a local once this block moved it."""
        return _name("return_sp") if self.return_moved else _attr("state", "return_sp")

    def going(self):
        """The mask of the examples that do not return, in a `ReturnIf` block."""
        t = self.block.terminator
        if self.going_mask is None:
            self.going_mask = self.unless(
                "going", "the examples that go on (the others return)", t.condition, t.returns_when
            )
        return self.going_mask

    def unless(self, name, note, condition, when, mask=None):
        """A new local: `mask` (default: active) where `condition` is not `when`."""
        local = _safe(name, self.taken)
        self.taken.add(local)
        sides = (ast.Constant(False), mask or _name("active"))
        if not when:
            sides = sides[::-1]
        self.out.append(comment(note))
        self.out.append(
            ast.Assign([_name(local, True)], _call("where", _name(self.local(condition)), *sides))
        )
        return _name(local)

    def written_stack(self, field):
        if field in self.stack_written:
            raise AssertionError(f"two pushes on stack {field} in one block")
        self.stack_written.append(field)

    def overflow_flag(self):
        flag = f"overflow_{len(self.overflows) + 1}"
        self.overflows.append(flag)
        return flag

    def push(self, field, value, mask=None):
        """A return address onto `returns`."""
        assert field == "returns", field
        self.written_stack(field)
        flag = self.overflow_flag()
        targets = [_name("return_sp", True), _name("returns_write", True), _name(flag, True)]
        value = _call("push", _attr("stacks", field), self.return_pointer(), value, mask or _name("active"))
        self.return_moved = True
        self.out.append(ast.Assign([_target(targets)], value))
        self.write_keywords.append(ast.keyword("returns", _name("returns_write")))

    def save_all(self, values, mask=None):
        """Saved variables into their frame slots: `saved_1, overflow_1 =
        rt.save_all(stacks, state.return_sp, active, fib_n=n, ...)`, the
        frame being return_sp as the block found it (see the module docstring)."""
        if not values:
            return
        for field in values:
            self.written_stack(field)
        saved = _safe(f"saved_{len(self.overflows) + 1}", self.taken)
        self.taken.add(saved)
        flag = self.overflow_flag()
        value = _call("save_all", _name("stacks"), _attr("state", "return_sp"), mask or _name("active"), **values)
        self.out.append(ast.Assign([_target([_name(saved, True), _name(flag, True)])], value))
        self.write_keywords.append(ast.keyword(None, _name(saved)))

    def restore(self, var):
        """`var` as its call site saved it: its slot in the frame (`return_sp`).

        A pop and a peek read the same slot; a peek's value stays there for
        the block's next call, which saves nothing again.  Only a bare
        tensor is its own leaf: a tuple, one-leaf ones too (`(x,)`,
        `(x, None)`), is rebuilt from one read per leaf.
        """
        frame = _attr("state", "return_sp")
        reads = [_call("read", _attr("stacks", field), frame) for _, _, field in self.e.fields[var]]
        bare = isinstance(self.e.types[var], T.TensorType)
        value = reads[0] if bare else self.e.rebuild(self.e.types[var], reads)
        self.defined(var)
        self.out.append(ast.Assign([_name(self.local(var), True)], value))

    def terminator(self, t):
        if isinstance(t, ir.ReturnIf):
            self.return_if(t)
        else:
            self.transfer(t)
        self.finish_terminator()

    def return_if(self, t):
        """The returning examples pop their return address; the others go on."""
        going = self.going()
        returned = _safe("returned_pc", self.taken)
        self.taken.add(returned)
        self.pop_return(returned, _call("where", going, False, _name("active")))
        self.transfer(t.otherwise, mask=going)
        self.out.append(
            ast.Assign([_name("pc", True)], _call("where", going, _name("pc"), _name(returned)))
        )

    def transfer(self, t, mask=None):
        """`pc = ...` for a plain terminator; `mask` limits its push (default: active)."""
        pc = _name("pc", True)
        if isinstance(t, ir.Goto):
            self.out.append(ast.Assign([pc], ast.Constant(self.e.index[t.target])))
        elif isinstance(t, (ir.Branch, ir.PushBranch)):
            if isinstance(t, ir.PushBranch):
                if t.returned_when is not None:
                    mask = self.calling(t, mask)
                self.push("returns", ast.Constant(self.e.index[t.return_block]), mask)
            self.out.append(ast.Assign([pc], self.chosen_block(t)))
        elif isinstance(t, ir.PushGoto):
            self.push("returns", ast.Constant(self.e.index[t.return_block]), mask)
            self.out.append(ast.Assign([pc], ast.Constant(self.e.index[t.target])))
        elif isinstance(t, ir.IndirectGoto):
            self.pop_return("pc", _name("active"))
        else:
            raise TypeError(f"unexpected terminator {t!r}")

    def chosen_block(self, t):
        """`choose(condition, true block, false block)`; a side that is a
        branch itself (passes/branch_threading.py) is a nested `choose`."""
        sides = [
            ast.Constant(self.e.index[s]) if isinstance(s, str) else self.chosen_block(s)
            for s in (t.true_target, t.false_target)
        ]
        return _call("choose", _name(self.local(t.condition)), *sides)

    def calling(self, t, mask):
        """The examples that enter the callee of a `PushBranch` whose other
        examples returned at the call site (`returned_when`)."""
        note = "the examples that enter the call (the others returned here)"
        return self.unless("calling", note, t.condition, t.returned_when, mask)

    def pop_return(self, target, mask):
        """`target, return_sp = pop_return(...)`: the return address, for `mask`."""
        self.out.append(
            ast.Assign(
                [_target([_name(target, True), _name("return_sp", True)])],
                _call(
                    "pop_return",
                    _attr("stacks", "returns"),
                    self.return_pointer(),
                    mask,
                    _name(self.e.const("HALT")),
                ),
            )
        )
        self.return_moved = True

    def finish_terminator(self):
        pc = _name("pc", True)
        self.out.append(
            ast.Assign([pc], _call("select", _name("active"), _name("pc"), _attr("state", "pc")))
        )
        stops = (
            ("overflow", self.overflows, "examples whose stack is full stop here; the caller raises"),
            ("fault", [f for f, _ in self.faults], "examples that indexed out of range or raised stop here; the caller raises"),
        )
        for kind, flags, note in stops:
            if not flags:
                continue
            self.out.append(comment(note))
            name = flags[0]  # one flag: as it is, no `overflow = overflow_1`
            if len(flags) > 1:
                name = kind
                any_flag = _name(flags[0])
                for f in flags[1:]:
                    any_flag = ast.BinOp(any_flag, ast.BitOr(), _name(f))
                self.out.append(ast.Assign([_name(name, True)], any_flag))
            if kind == "overflow":
                self.overflow_name = name
            self.out.append(
                ast.Assign([pc], _call("select", _name(name), _name(self.e.const("HALT")), _name("pc")))
            )

    def updates(self):
        """[(keyword of the state update, whether it is masked by `active`)]."""
        keywords = [(ast.keyword("pc", _name("pc")), False)]
        for var in self.written:
            if var not in self.e.fields:
                continue  # a temporary: lives only in this block
            value = _name(self.local(var))
            if var in self.masked:
                keywords.append((ast.keyword(self.masked[var], value), False))
                continue
            dead = var not in self.e.live_out[self.block.name]
            for path, leaf, field in self.e.fields[var]:
                if dead and leaf.shape:
                    # No later block reads it: skip a [batch, *event] select.
                    # Dead scalars keep their writes: dropping those too made
                    # XLA copy the stacks inside the loop (NUTS 15 -> 55 us
                    # per gradient, measured with the switch_case runtime).
                    continue
                keywords.append((ast.keyword(field, _index(value, path)), True))
        if self.return_moved:
            keywords.append((ast.keyword("return_sp", _name("return_sp")), False))
        if self.overflows:
            keywords.append(
                (
                    ast.keyword(
                        "overflow_at",
                        _call("select", _name(self.overflow_name), self.index, _attr("state", "overflow_at")),
                    ),
                    False,
                )
            )
        if self.faults:
            # the first subscript an example failed at (each has its INDEX_LINES entry)
            where = _attr("state", "index_error_at")
            for flag, site in reversed(self.faults):
                where = _call("select", _name(flag), site, where)
            keywords.append((ast.keyword("index_error_at", where), False))
        return keywords
