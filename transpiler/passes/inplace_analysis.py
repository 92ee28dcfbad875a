"""The in-place analysis: which parameters each function changes, and refusals.

A forward may-alias dataflow over each function's blocks (the lattice is
passes/inplace_sharing.py): every variable maps to the objects it may share
storage with (a parameter's caller object, a module global, or the object
an instruction made, with a recency split so that a loop's new array is not
its previous one).  `Analysis.run` says which parameters a function assigns
items of while they are still the caller's arrays (`inplace`), and which
parameters its result may hand back (`flows`); passes/inplace.py runs it to
a fixpoint over the call graph.  Run with `check=True` it also refuses the
sharing the compiler cannot reproduce, at once where the kind of sharing
decides it (`same`, `view`) and as a `Deferred` refusal where only types can
(`part`, `items`: `Rewritten.check`, after type inference).
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, FrozenSet, List, Optional, Tuple

from transpiler.errors import UnsupportedSyntaxError
from transpiler.ir import instructions as ir
from transpiler.passes import liveness
from transpiler.passes import inplace_roots
from transpiler.passes.inplace_sharing import (
    ITEMS,
    augmented_name,
    ORDER,
    PART,
    SAME,
    VIEW,
    age,
    compose,
    names_of,
    parse,
    rebinds_one_slot,
    sources_of,
    stored_value,
    with_how,
    written_variable,
)


@dataclasses.dataclass(frozen=True)
class Deferred:
    """A refusal that holds only if `variable` (qualified) holds arrays."""

    variable: str
    message: str
    origin: Optional[ir.Origin]
    hint: str
    elements: bool = False  # only if its elements hold arrays (`list(m)`: rows)
    also: Optional[str] = None  # and only if this variable (qualified) holds arrays
    also_elements: bool = False  # ... in its elements


@dataclasses.dataclass
class Result:
    inplace: Tuple[str, ...]
    flows: FrozenSet[int]
    deferred: List[Deferred]


def _param(name):
    return ("param", name)


class Analysis:
    """One function's may-alias dataflow; `run(check=True)` also refuses."""

    def __init__(self, fn, inplace, flows, functions, first_writes):
        self.fn = fn
        self.inplace = inplace
        self.flows = flows
        self.functions = functions
        self.first_writes = first_writes  # (function, parameter) -> first write, shared
        self.called = True
        self.mutated: Dict[str, ir.Origin] = {}
        self.returned: set = set()
        self.deferred: List[Deferred] = []
        self.acquired: Dict[Tuple[str, tuple], ir.Origin] = {}
        self.live = {}
        self.blocks = {b.name: b for b in fn.blocks}
        self.local_names = names_of(fn, expressions=False)

    # ---- dataflow -----------------------------------------------------------

    def run(self, check) -> Result:
        if check:
            self.live = liveness.live_after(self.fn)
        entry = {p: frozenset({(_param(p), SAME)}) for p in self.fn.params}
        states = {self.fn.entry: entry}
        order = [b.name for b in self.fn.blocks]
        changed = True
        while changed:
            changed = False
            for name in order:
                if name not in states:
                    continue
                out = self.block(self.blocks[name], states[name], check=False)
                for succ in liveness.successors(self.blocks[name].terminator):
                    joined = self.join_relabelled(states.get(succ), out)
                    if joined != states.get(succ):
                        states[succ] = joined
                        changed = True
        # Once more over the settled states: what is changed, what is
        # returned, and (checking) the refusals.
        self.mutated, self.returned, self.acquired = {}, set(), {}
        for name in order:
            if name in states:
                self.block(self.blocks[name], states[name], check=check)
        params = tuple(p for p in self.fn.params if p in self.mutated)
        flows = frozenset(self.fn.params.index(p) for p in self.returned)
        return Result(params, flows, self.deferred)

    def join_relabelled(self, before, incoming):
        return inplace_roots.join_relabelled(before, incoming, self.is_list)

    def block(self, block, state, check):
        state = dict(state)
        for index, ins in enumerate(block.instructions):
            site = ("site", block.name, index)
            if isinstance(ins, ir.PrimOp):
                written = written_variable(ins)
                if written is not None:
                    slot = rebinds_one_slot(ins)
                    self.write(written, state, block, index, ins.origin, check, slot=slot)
                    if slot:
                        value = stored_value(ins)
                        temporary = self.same_statement(block, index, value)
                        self.store(written, value, ins.namespace, state, ins.origin, temporary)
                else:
                    augmented = augmented_name(ins)
                    before = state.get(augmented, frozenset())
                    if augmented is not None:
                        self.augmented(augmented, state, block, index, ins.origin, check)
                    self.define(ins, state, site)
                    if augmented is not None:
                        # An array stays the object it was (NumPy changed it
                        # in place): whoever shares it still does.
                        state[augmented] = state[augmented] | before
            elif isinstance(ins, ir.Select):
                sources = []
                for text in (ins.if_true, ins.if_false):
                    sources += sources_of(parse(text), None, self.local_names)
                self.bind(ins.vars_out, sources, state, site, ins.origin, fresh=False)
            elif isinstance(ins, ir.Call):
                self.call(ins, state, block, index, site, check)
        if isinstance(block.terminator, ir.Return):
            self.return_(block.terminator, state, check)
        return state

    def define(self, ins, state, site):
        if callable(ins.expr):  # a primitive given by hand: it may return anything it reads
            sources = [(v, PART) for v in ins.vars_in]
            self.bind(ins.vars_out, sources, state, site, ins.origin, fresh=True)
            return
        node = parse(ins.expr)
        pattern = ins.vars_out
        if (
            isinstance(pattern, tuple)
            and isinstance(node, (ast.Tuple, ast.List))
            and len(node.elts) == len(pattern)
            and not any(isinstance(e, ast.Starred) for e in node.elts)
            and not any(isinstance(p, str) and p.startswith("*") for p in pattern)
        ):
            # `a, b = b, a`: element by element, as one simultaneous assignment
            before = dict(state)
            for k, (p, e) in enumerate(zip(pattern, node.elts)):
                sources = sources_of(e, ins.namespace, self.local_names)
                fresh = not isinstance(e, ast.Name)
                self.bind(p, sources, state, site + (k,), ins.origin, fresh, before=before)
            return
        fresh = not isinstance(node, ast.Name)
        self.bind(pattern, sources_of(node, ins.namespace, self.local_names), state, site, ins.origin, fresh)

    def bind(self, pattern, sources, state, site, origin, fresh, before=None):
        """`pattern` gets the objects of `sources`: [(name or global, how)]."""
        before = state if before is None else before
        roots = set()
        for name, how in sources:
            if isinstance(name, tuple):  # a module global or closed-over value
                roots.add((name, how))
                continue
            for root, held in before.get(name, ()):
                if how == VIEW and held == SAME and self.is_list(root):
                    # `row[:]` of a list (NumPy's `asarray` of one too) is a
                    # new list of the same items, where an array's is a view
                    roots.add((root, ITEMS))
                    continue
                roots.add((root, compose(held, how)))
        if not isinstance(pattern, str):  # unpacked: each name may be any element
            roots = {(r, compose(h, PART)) for r, h in roots}
        if fresh:
            age(state, site)
            roots.add((site, SAME))
        for name in ir.pattern_names(pattern):
            state[name] = frozenset(roots)
            for root, _ in roots:
                self.acquired[(name, root)] = origin

    # ---- calls, writes, returns -------------------------------------------------

    def call(self, ins, state, block, index, site, check):
        callee = self.functions.get(ins.function)
        changed = self.inplace.get(ins.function, ())
        if changed and callee is not None:
            positions = [callee.params.index(p) for p in changed]
            if check:
                self.passed_twice(ins, positions, state)
            for k in positions:
                via = (ins.function, callee.params[k])
                self.write(ins.vars_in[k], state, block, index, ins.origin, check, via)
        sources = [
            (ins.vars_in[k], PART)
            for k in sorted(self.flows.get(ins.function, ()))
            if k < len(ins.vars_in)
        ]
        if ins.vars_out is not None:
            self.bind(ins.vars_out, sources, state, site, ins.origin, fresh=True)

    def passed_twice(self, ins, positions, state):
        """A callee that assigns items of one parameter, given the same array
        (or arrays that share storage) for two: Python's callee sees its
        change through the other parameter, the compiler's copies do not."""
        callee = self.functions[ins.function]
        for k in positions:
            mine = with_how(state, ins.vars_in[k])
            for j, other in enumerate(ins.vars_in):
                if j == k:
                    continue
                theirs = with_how(state, other)
                shared = sorted(set(mine) & set(theirs))
                if not shared:
                    continue
                root = shared[0]
                same = other == ins.vars_in[k]
                where = self.first_writes.get((ins.function, callee.params[k]))
                inside = f" (`{where.text}` at {where})" if where else ""
                message = (
                    f"{_at(ins.origin)} passes "
                    + ("the same array" if same else "arrays that share storage")
                    + f" as {callee.params[k]!r} and {callee.params[j]!r} of "
                    f"{ins.function!r}, which assigns items of {callee.params[k]!r}{inside}"
                    + ("" if same else self.shared_since(other, ins.vars_in[k], root))
                    + ": in Python the other parameter would see the change; "
                    "the compiler copies each argument"
                )
                hint = "pass a copy (`x.copy()`) as one of them"
                if same or theirs[root] in (SAME, VIEW):
                    raise UnsupportedSyntaxError(message, ins.origin, hint)
                self.deferred.append(
                    Deferred(
                        ir.qualify(self.fn.name, other),
                        message,
                        ins.origin,
                        hint,
                        elements=theirs[root] == ITEMS,
                    )
                )

    def same_statement(self, block, index, value) -> bool:
        return inplace_roots.same_statement(block, index, value)

    def is_list(self, root) -> bool:
        return inplace_roots.is_list(self.blocks, root)

    def store(self, var, value, namespace, state, origin, temporary=False):
        """After `var[i] = value`, `var` holds the objects value is part of
        as its items: `b[0] = m[0]` makes b's first item m's row, and
        `b[0][1] = 5` then changes m (b: ITEMS of m).  Not followed, for the
        lattice has no depth: a value that is a whole object (`b[0] = m`, a
        fresh temporary: "an item is this very array"), and a value stored
        deeper (`dp[0][0] = grid[0][0]`, a number, whose root's items are
        rows)."""
        added, rows = set(), set()
        for name, how in sources_of(value, namespace, self.local_names):
            if isinstance(name, tuple):
                roots = [(name, how)]
            else:
                roots = [(root, compose(held, how)) for root, held in state.get(name, ())]
            added.update((root, ITEMS) for root, held in roots if held in (PART, ITEMS))
            rows.update(root for root, held in roots if held == PART)
        # A root var holds already (`arr[i], arr[j] = arr[j], arr[i]`) it
        # holds at least as closely.
        mine = {root for root, _ in state.get(var, ())}
        own_rows = [root for root in rows if root in mine and self.is_list(root)]
        if own_rows and not temporary:
            # `dp[i] = dp[i - 1]`: on a list of rows, two slots are now one
            # object, and a later `dp[i][j] = x` changes both; the compiler
            # copied the row.  Marked by a root of its own, which every name
            # sharing var's items carries along (refused in `write`).
            added.add((("rows", str(origin), origin.text if origin else ""), ITEMS))
        added = {(root, how) for root, how in added if root not in mine}
        if added:
            state[var] = state.get(var, frozenset()) | frozenset(added)
            for root, _ in added:
                self.acquired.setdefault((var, root), origin)

    def augmented(self, var, state, block, index, origin, check):
        """`var += x`: where var holds an array (known once types are),
        NumPy changes it in place, and every name sharing it sees the
        change in Python; the compiler makes a new array.  Refused then,
        if such a name is read afterwards (`w = v; w += 1; return v[0]`)."""
        if not check:
            return
        held = with_how(state, var)
        params = sorted(root[1] for root in held if root[0] == "param" and root[1] != var)
        if self.called and params:
            # (`v += x` of the parameter itself: inplace.py refuses it.)
            self.deferred.append(
                Deferred(
                    ir.qualify(self.fn.name, var),
                    f"`{origin.text}` at {origin} changes the caller's array (parameter "
                    f"{params[0]!r}) in place through {var!r} (NumPy's augmented "
                    "assignment); the compiler makes a new array here, which the caller "
                    "would not see",
                    origin,
                    f"write `{params[0]}[:] += ...` to change the caller's array, or "
                    f"copy it (`{var} = {params[0]}.copy()`) for a new one",
                )
            )
            return
        live = self.live.get((block.name, index), frozenset())
        for other in sorted(live - {var}):
            theirs = with_how(state, other)
            shared = sorted(set(theirs) & set(held))
            if not shared:
                continue
            # The closest way `other` shares any of them decides the question.
            shared.sort(key=lambda root: ORDER[theirs[root]])
            read = self.read_after(block, index, other)
            if read is None:
                continue
            message = (
                f"`{origin.text}` at {origin} changes the array {var!r} in place "
                f"(NumPy's augmented assignment), and {other!r} refers to it too"
                f"{self.shared_since(other, var, shared[0])}, read afterwards "
                f"(`{read.text}` at {read}): Python would change {other!r} too; "
                f"the compiler makes a new array for {var!r}"
            )
            hint = (
                f"write `{var} = {var} {origin.text.split('=')[0].strip()[len(var):].strip()} ...` "
                f"for a new array, or make {other!r} a copy where it is made (`.copy()`)"
            )
            # Refused where `other` holds arrays there (an item x of v, in
            # `for x in v: v += 1`, is a number: nothing shared changes).
            self.deferred.append(
                Deferred(
                    ir.qualify(self.fn.name, other),
                    message,
                    origin,
                    hint,
                    elements=theirs[shared[0]] == ITEMS,
                    # ... and where `var` is an array (`j = table[j - 1]`
                    # then `j += 1`: j is a number, table is unchanged).
                    also=ir.qualify(self.fn.name, var),
                )
            )

    def write(self, var, state, block, index, origin, check, via=None, slot=False):
        """An item assignment through `var` (or a callee assigning items of
        the array `var` passes it); `slot`: it is `var[i] = x`.

        Where `var` is a new list of an object's elements (`b = list(m)`,
        `[m[0][0] for _ in range(n)]`), `var[i] = x` rebinds a slot of that
        list: the object and its elements are unchanged in Python, as they
        are in the compiler's copy."""
        held = with_how(state, var)
        if slot:
            held = {root: how for root, how in held.items() if how != ITEMS}
        # `m[i] = x` on a list itself rebinds slot i: the row that was there
        # is unchanged, as is every copy of the list (`m[1:]`, `list(m)`);
        # only a name that is the list (`w = m`) sees the new item.
        rebound = {
            root for root, how in held.items() if slot and how == SAME and self.is_list(root)
        }
        for root in held:
            if root[0] == "param":
                self.mutated.setdefault(root[1], origin)
                self.first_writes.setdefault((self.fn.name, root[1]), origin)
        if not check:
            return
        what = _at(origin)
        if not slot:
            self.self_rows(var, held, origin, what)
        if via is not None:
            where = self.first_writes.get(via)
            inside = f", `{where.text}` at {where}" if where else ""
            what += f" (where {via[0]!r} assigns items of {via[1]!r}{inside})"
        for root in sorted(held):
            if root[0] == "global":
                since = self.acquired.get((var, root))
                line = f" since `{since.text}` at {since}" if since else ""
                raise UnsupportedSyntaxError(
                    f"{what} changes the module global {root[1]!r}, which {var!r} "
                    f"refers to{line}: Python would change it for every later call too",
                    origin,
                    f"copy it into a local first (`{var} = np.array({root[1]})`)",
                )
        if self.called:
            reached = frozenset((r, h) for r, h in state.get(var, ()) if r in held)
            self.param_rule(var, reached, origin, what)
        live = self.live.get((block.name, index), frozenset())
        defined = set(liveness.defs(block.instructions[index]))
        conflicts = []  # (how, name, root): a plain alias is named first
        for other in live - defined - {var}:
            theirs = with_how(state, other)
            for root in set(theirs) & set(held):
                if root in rebound and theirs[root] != SAME:
                    continue
                conflicts.append((ORDER[theirs[root]], other, root))
        for _, other, root in sorted(conflicts):
            theirs = with_how(state, other)
            read = self.read_after(block, index, other)
            reads = f", and {other!r} is read afterwards (`{read.text}` at {read})" if read else ""
            message = (
                f"{what} changes an array that {other!r} also refers to"
                f"{self.shared_since(other, var, root)}{reads}: Python would change "
                f"{other!r} too; the compiler gives each name its own value"
            )
            hint = (
                f"make {other!r} a copy where it is made (`.copy()`), or finish "
                f"reading {other!r} before the assignment"
            )
            if self.same_statement(block, index, ast.Name(id=other)):
                # `a[i], a[j] = a[j], a[i]` on an array's rows: NumPy reads both
                # as views, copies row j into row i, then row i (now j's) back
                message = (
                    f"{what} swaps rows of an array: NumPy's values on the right are "
                    f"views of {var!r}, so after the first row is written the second "
                    "is the new one, and Python leaves both rows equal (the compiler "
                    "would swap them)"
                )
                hint = (
                    "swap through a copy: `row = a[i].copy()`, `a[i] = a[j]`, `a[j] = row` "
                    "(or build the matrix as a list of lists, whose rows swap)"
                )
            # `b = list(v)` then `b[0] = 9`: b is a new list of v's elements,
            # and the write changes v only if those elements are arrays (rows)
            ours_items = held[root] == ITEMS
            if theirs[root] in (SAME, VIEW) and not ours_items:
                raise UnsupportedSyntaxError(message, origin, hint)
            self.deferred.append(
                Deferred(
                    ir.qualify(self.fn.name, other),
                    message,
                    origin,
                    hint,
                    elements=theirs[root] == ITEMS or ours_items,
                    # `parent[ra] = rb` with rb read from edges: parent's
                    # items are numbers, and no write through it reaches edges
                    also=ir.qualify(self.fn.name, var) if ours_items else None,
                    also_elements=True,
                )
            )

    def self_rows(self, var, held, origin, what):
        """A write into an item of `var` after `var[i] = var[j]` (a row of
        itself): in Python the two rows of a list are one object, and both
        change; the compiler's rows are copies.  Refused where var's items
        are arrays (rows; on a vector the items are numbers, copied alike)."""
        for root in sorted(r for r in held if r[0] == "rows"):
            since = self.acquired.get((var, root))
            line = f"`{since.text}` at {since}" if since else f"`{root[2]}` at {root[1]}"
            self.deferred.append(
                Deferred(
                    ir.qualify(self.fn.name, var),
                    f"{what} changes a row of {var!r} that another of its rows is too "
                    f"(since {line}): in Python a list's slots then hold one row, and "
                    f"both change; the compiler copied the row",
                    origin,
                    f"store a copy of the row (`{var}[i] = list({var}[j])`, or "
                    "`.copy()` on a NumPy array)",
                    elements=True,
                )
            )
            return

    def param_rule(self, var, held, origin, what):
        """A write that reaches a parameter's object must go through the
        parameter itself, while it surely is the caller's array: then the
        final value of the parameter is what the caller gets back."""
        params = sorted({root[1] for root, _ in held if root[0] == "param"})
        if not params:
            return
        p = params[0]
        if var == p and _identity(held) == frozenset({(_param(p), SAME)}):
            return
        if var == p:
            rebound = self.rebinding(p)
            line = f" (`{rebound.text}` at {rebound})" if rebound else ""
            raise UnsupportedSyntaxError(
                f"{what}: {p!r} may or may not be the caller's array here, since it "
                f"is rebound on some paths only{line}; Python would change the "
                f"caller's array on the others, and the compiler cannot tell which",
                origin,
                f"rebind it on every path, or give the copy a new name",
            )
        since = self.acquired.get((var, _param(p)))
        line = f" (since `{since.text}` at {since})" if since else ""
        raise UnsupportedSyntaxError(
            f"{what} changes the caller's array (parameter {p!r}) through another "
            f"name, {var!r}{line}: the compiler hands a callee's changes back only "
            f"through the parameter itself",
            origin,
            f"assign items of {p!r} itself, or copy it (`{var} = {p}.copy()`)",
        )

    def return_(self, t, state, check):
        if t.value is not None:
            for name in ir.pattern_names(t.value):
                for root, _ in state.get(name, ()):
                    if root[0] == "param":
                        self.returned.add(root[1])
        if not (check and self.called):
            return
        for p in self.inplace.get(self.fn.name, ()):
            if _identity(state.get(p, frozenset())) == frozenset({(_param(p), SAME)}):
                continue
            write = self.first_writes.get((self.fn.name, p))
            rebound = self.rebinding(p)
            raise UnsupportedSyntaxError(
                f"{self.fn.name!r} assigns items of its parameter {p!r}"
                + (f" (`{write.text}` at {write})" if write else "")
                + f", which changes the caller's array, but {p!r} may be rebound"
                + (f" (`{rebound.text}` at {rebound})" if rebound else "")
                + f" before this return (at {t.origin}): the compiler cannot hand "
                "the caller's array back",
                t.origin,
                "give the new value a new name",
            )

    # ---- messages ----------------------------------------------------------------

    def shared_since(self, other, var, root):
        """` (since `w = v` at f.py:3)`: where one of the two names came to
        share `root` (not where the array was made)."""
        for name in (other, var):
            origin = self.acquired.get((name, root))
            if origin is None or self.made(name, root, origin):
                continue
            return f" (since `{origin.text}` at {origin})"
        return ""

    def made(self, name, root, origin):
        if root[0] == "param":
            return name == root[1]
        site = root[1] if root[0] == "old" else root
        if site[0] != "site":
            return False
        return self.blocks[site[1]].instructions[site[2]].origin == origin

    def rebinding(self, p):
        """Where parameter `p` is rebound (not by an item assignment)."""
        for b in self.fn.blocks:
            for ins in b.instructions:
                if p in ir.pattern_names(ins.vars_out) and written_variable(ins) != p:
                    return ins.origin
        return None

    def read_after(self, block, index, var):
        """Where `var` is read after instruction `index` of `block`, if anywhere."""
        seen = set()
        queue = [(block.name, index + 1)]
        while queue:
            name, start = queue.pop(0)
            b = self.blocks[name]
            redefined = False
            for ins in b.instructions[start:]:
                if var in liveness.uses(ins):
                    return ins.origin
                if var in liveness.defs(ins):
                    redefined = True
                    break
            if redefined:
                continue
            if var in liveness.uses(b.terminator):
                return b.terminator.origin
            for succ in liveness.successors(b.terminator):
                if succ not in seen:
                    seen.add(succ)
                    queue.append((succ, 0))
        return None


def _at(origin) -> str:
    """`` `w = v` at f.py:3 `` (a line of your source), for messages."""
    if origin is None:
        return "an instruction built by hand"
    return f"`{origin.text}` at {origin}"


def _identity(held):
    """What a variable may be (or be a view of), without the objects it
    holds as items (`arr[k] = aux[i]` puts aux's numbers in arr; arr is
    still the caller's array)."""
    return frozenset((root, how) for root, how in held if how != ITEMS)
