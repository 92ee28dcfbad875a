"""Copy-in/copy-out: a callee's item assignments reach its caller, as in Python.

In Python a parameter and the caller's variable are one object, so a callee
that assigns `arr[i] = x` changes the caller's array.  The IR has value
semantics (`arr = __setitem__(arr, (i,), x)` rebinds the callee's own
`arr`), so this pass gives such callees Python's effect:

- It finds, for every function, the parameters whose items it assigns
  while the name still refers to the caller's object (directly, or by
  passing them to a callee that does: a fixpoint over the call graph,
  through recursion).  A parameter rebound first (`arr = arr.copy()`,
  `arr = np.array(arr)`) and then changed is a new array: not the caller's.
- Such a function also returns the final value of those parameters:
  `return x` becomes `return (x, arr)`; every call of it becomes
  `(p, arr) = call partition(arr, low, high)`, which rebinds the caller's
  variable to the changed array.  An argument that is an expression
  (`f(v.copy())`) is a temporary: its changes are dropped, as in Python.
- The entry keeps its public result (the caller's own batch arrays are never
  modified: return the array).  When the entry is itself called from the
  program (recursion) and changes its parameters, its internal calls go to
  a copy of it, `<entry>__inplace`, that returns the extras.

A function that returns the array it was given with nothing left to do
(`return reverse(v, i + 1, j - 1)`, same parameters in the same places)
still ends in a plain `t = call ...; return t`, so tail calls stay jumps.

Where Python's sharing makes a difference the IR cannot reproduce, the
program is refused at build time, naming both lines: a name that shares an
array with another (`w = v`, a slice or row view `s = v[1:3]`,
`row = m[i]`, a tuple holding it) and is read after an item assignment
through the other; the same array passed twice to a callee that assigns
items of one of them; an item assignment that may or may not reach the
caller's array (a parameter rebound on some paths only, an assignment
through another name); a parameter rebound after its items were assigned;
an item assignment to a module global through another name.  Copies
(`v.copy()`, `np.array(v)`, arithmetic) share nothing, and a read that
gives a number (`t = v[i]` of a vector) is a copy: whether `m[i]` is a
row view or a number is known only once types are, so that check waits
for type inference (`Rewritten.check`).  So does one more refusal: a callee
that returns None on some paths (an optional) and hands arrays back, since
an optional cannot sit in a tuple yet.

The analysis is a forward may-alias dataflow over each function's blocks:
every variable maps to the objects it may share storage with (a parameter's
caller object, a module global, or the object an instruction made, with a
recency split so that a loop's new array is not its previous one), each
marked how it is shared: `same` (may be that very object), `view`
(definitely an array sharing its storage: a slice, `.T`, `np.reshape`, a
tuple holding it), `part` (may be an element of it, which may be a number,
or a view: decided by its type) or `items` (a new container of its
elements, `list(m)`: decided by its elements' type).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
import types as pytypes
from typing import Dict, FrozenSet, List, Optional, Tuple

from transpiler.errors import UnsupportedSyntaxError
from transpiler.ir import instructions as ir
from transpiler.passes import liveness

SET_ITEM = "__setitem__"  # the builder's item assignment (ir/builder.py)
REPEAT = "repeat"  # the builder's list comprehension, `repeat(x, n)` (ir/builder.py)
VARIANT_SUFFIX = "__inplace"

SAME, VIEW, PART, ITEMS = "same", "view", "part", "items"

# NumPy functions and array methods that return a view of (or the very)
# array they are given; every other NumPy/TensorFlow function returns a new
# array.  An unknown callable (a helper of your module) may return either.
VIEW_FUNCTIONS = frozenset(
    """asarray asanyarray ascontiguousarray asfortranarray asarray_chkfinite
    require reshape ravel transpose permute_dims matrix_transpose swapaxes
    moveaxis rollaxis squeeze expand_dims atleast_1d atleast_2d atleast_3d
    broadcast_to broadcast_arrays flip fliplr flipud rot90 diagonal real imag
    split array_split hsplit vsplit dsplit unstack view as_strided""".split()
)
VIEW_METHODS = frozenset(
    "reshape view ravel transpose swapaxes squeeze diagonal __getitem__".split()
)
COPY_METHODS = frozenset(
    """copy astype flatten tolist item sum prod mean std var min max argmin
    argmax argsort cumsum cumprod dot round clip any all nonzero repeat take
    compress conj conjugate trace ptp searchsorted numpy""".split()
)
VIEW_ATTRIBUTES = frozenset("T mT real imag flat base".split())
# Builtins that return a new value (a number, a new list of numbers); the
# others (`list(m)`, `min(a, b)`) may hand back what they were given.
FRESH_BUILTINS = frozenset(
    """len int float bool complex abs round range str repr isinstance type hash
    divmod pow sum any all sorted bin oct hex ord chr format""".split()
)


@dataclasses.dataclass(frozen=True)
class Deferred:
    """A refusal that holds only if `variable` (qualified) holds arrays."""

    variable: str
    message: str
    origin: Optional[ir.Origin]
    hint: str
    elements: bool = False  # only if its elements hold arrays (`list(m)`: rows)


# ---- the pass -----------------------------------------------------------------


def copy_in_copy_out(program: ir.Program) -> "Rewritten":
    """The program with Python's in-place effects made explicit, and the
    refusals that wait for types (`Rewritten.check`, after type inference).

    Raises UnsupportedSyntaxError for aliasing it can decide is out of reach.
    """
    functions = {f.name: f for f in program.functions}
    called = {
        ins.function
        for f in program.functions
        for b in f.blocks
        for ins in b.instructions
        if isinstance(ins, ir.Call)
    }
    inplace: Dict[str, Tuple[str, ...]] = {name: () for name in functions}
    flows: Dict[str, FrozenSet[int]] = {name: frozenset() for name in functions}
    first_writes: Dict[Tuple[str, str], ir.Origin] = {}
    changed = True
    while changed:
        changed = False
        for f in program.functions:
            result = _Analysis(f, inplace, flows, functions, first_writes).run(check=False)
            if (result.inplace, result.flows) != (inplace[f.name], flows[f.name]):
                inplace[f.name], flows[f.name] = result.inplace, result.flows
                changed = True
    deferred: List[Deferred] = []
    for f in program.functions:
        analysis = _Analysis(f, inplace, flows, functions, first_writes)
        analysis.called = f.name in called
        deferred.extend(analysis.run(check=True).deferred)
    if not any(params for name, params in inplace.items() if name in called):
        return Rewritten(program, tuple(deferred), {})  # only the entry's own arrays change
    rewrite = _Rewrite(program, inplace, called)
    rewritten = rewrite.run()
    extras = {
        name: tuple(functions[rewrite.original(name)].params.index(p) for p in params)
        for name, params in rewrite.inplace.items()
        if params and (name != program.main)
    }
    return Rewritten(rewritten, tuple(deferred), extras)


@dataclasses.dataclass(frozen=True)
class Rewritten:
    """What `copy_in_copy_out` made: the program, the refusals that wait for
    types, and the functions that return extras ({name: parameter indices})."""

    program: ir.Program
    deferred: Tuple[Deferred, ...]
    extras: Dict[str, Tuple[int, ...]]

    def check(self, typed: ir.Program) -> None:
        """Raises the refusals whose variable holds arrays once types are known."""
        from transpiler import types as T

        returns = dict(typed.returns or ())
        for name in sorted(self.extras):
            result = returns.get(name)
            if isinstance(result, T.TupleType) and T.is_optional(result.elements[0]):
                fn = typed.function(name)
                params = ", ".join(repr(fn.params[k]) for k in self.extras[name])
                raise UnsupportedSyntaxError(
                    f"{name!r} returns None in some examples and a value in others, and "
                    f"assigns items of its parameter(s) {params}, which the caller sees: "
                    "the compiler hands the arrays back beside the result, and a value "
                    "that is None in some examples cannot be part of a tuple yet",
                    fn.origin,
                    "return a value on every path (a flag or -1 for 'none'), or return "
                    "the array and let the caller use the result",
                )
        types = dict(typed.types or ())
        _refuse_augmented_array_parameters(typed, types)
        for d in self.deferred:
            if d.variable not in types:
                continue  # a function never reached with known types
            t = types[d.variable]
            if _elements_hold_arrays(t) if d.elements else _holds_arrays(t):
                raise UnsupportedSyntaxError(d.message, d.origin, d.hint)

    def namespaces(self, mapping: dict) -> dict:
        """`mapping` (function name -> namespace) with each entry copy given
        its original's."""
        return with_variants(mapping, self.program)

    def overrides(self, overrides):
        """`type_inference=` callables of functions that return extras return
        them too (the types of the parameters handed back)."""
        if not overrides:
            return overrides
        out = dict(overrides)
        for name, extras in self.extras.items():
            if name in overrides:
                out[name] = _with_extras(overrides[name], extras)
        return out


def variants(program: ir.Program) -> Tuple[Tuple[str, str], ...]:
    """(variant, original) for the entry copies this pass made."""
    names = {f.name for f in program.functions}
    return tuple(
        (name, name[: -len(VARIANT_SUFFIX)])
        for name in sorted(names)
        if name.endswith(VARIANT_SUFFIX) and name[: -len(VARIANT_SUFFIX)] == program.main
    )


def with_variants(mapping: dict, program: ir.Program) -> dict:
    """`mapping` (function name -> namespace, module...) with each entry copy
    given its original's value."""
    out = dict(mapping)
    for variant, original in variants(program):
        if original in out:
            out[variant] = out[original]
    return out


def source_function(name: str, known) -> str:
    """The user's function a program function comes from (an entry copy's
    original)."""
    if name in known or not name.endswith(VARIANT_SUFFIX):
        return name
    return name[: -len(VARIANT_SUFFIX)]


def _with_extras(override, extras):
    def typed(args):
        given = override(args)
        if isinstance(given, (list, tuple)) and not hasattr(given, "_fields"):
            given = list(given)
            given = given[0] if len(given) == 1 else tuple(given)
        return (given,) + tuple(args[k] for k in extras)

    return typed


# ---- the analysis ---------------------------------------------------------------


@dataclasses.dataclass
class _Result:
    inplace: Tuple[str, ...]
    flows: FrozenSet[int]
    deferred: List[Deferred]


def _param(name):
    return ("param", name)


class _Analysis:
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
        self.local_names = _names_of(fn, expressions=False)

    # ---- dataflow -----------------------------------------------------------

    def run(self, check) -> _Result:
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
                    joined = _join(states.get(succ), out)
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
        return _Result(params, flows, self.deferred)

    def block(self, block, state, check):
        state = dict(state)
        for index, ins in enumerate(block.instructions):
            site = ("site", block.name, index)
            if isinstance(ins, ir.PrimOp):
                written = _written(ins)
                if written is not None:
                    self.write(written, state, block, index, ins.origin, check)
                else:
                    self.define(ins, state, site)
            elif isinstance(ins, ir.Select):
                sources = []
                for text in (ins.if_true, ins.if_false):
                    sources += self.sources(_parse(text), None)
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
        node = _parse(ins.expr)
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
                sources = self.sources(e, ins.namespace)
                fresh = not isinstance(e, ast.Name)
                self.bind(p, sources, state, site + (k,), ins.origin, fresh, before=before)
            return
        fresh = not isinstance(node, ast.Name)
        self.bind(pattern, self.sources(node, ins.namespace), state, site, ins.origin, fresh)

    def bind(self, pattern, sources, state, site, origin, fresh, before=None):
        """`pattern` gets the objects of `sources`: [(name or global, how)]."""
        before = state if before is None else before
        roots = set()
        for name, how in sources:
            if isinstance(name, tuple):  # a module global or closed-over value
                roots.add((name, how))
                continue
            for root, held in before.get(name, ()):
                roots.add((root, _compose(held, how)))
        if not isinstance(pattern, str):  # unpacked: each name may be any element
            roots = {(r, _compose(h, PART)) for r, h in roots}
        if fresh:
            _age(state, site)
            roots.add((site, SAME))
        for name in ir.pattern_names(pattern):
            state[name] = frozenset(roots)
            for root, _ in roots:
                self.acquired[(name, root)] = origin

    def sources(self, node, namespace) -> List[tuple]:
        """The variables (or globals) whose storage the value of `node` may
        share, each with how it shares it."""
        if node is None:
            return []
        if isinstance(node, ast.Name):
            if node.id in self.local_names:
                return [(node.id, SAME)]
            if node.id in ("None", "True", "False") or _is_module(node.id, namespace):
                return []
            return [(("global", node.id), SAME)]
        if isinstance(node, ast.Subscript):
            how = VIEW if _has_slice(node.slice) else PART
            return [(n, _compose(h, how)) for n, h in self.sources(node.value, namespace)]
        if isinstance(node, ast.Attribute):
            how = VIEW if node.attr in VIEW_ATTRIBUTES else PART
            return [(n, _compose(h, how)) for n, h in self.sources(node.value, namespace)]
        if isinstance(node, (ast.Tuple, ast.List)):
            out = []
            for e in node.elts:
                out += [(n, _compose(h, VIEW)) for n, h in self.sources(e, namespace)]
            return out
        if isinstance(node, ast.Starred):
            return self.sources(node.value, namespace)
        if isinstance(node, ast.Call):
            return self.call_sources(node, namespace)
        if isinstance(node, ast.IfExp):
            return self.sources(node.body, namespace) + self.sources(node.orelse, namespace)
        if isinstance(node, ast.BoolOp):  # `a or b` is one of them
            return [s for v in node.values for s in self.sources(v, namespace)]
        return []  # arithmetic, comparisons, literals: a new value

    def call_sources(self, node, namespace):
        arguments = []
        for a in list(node.args) + [k.value for k in node.keywords]:
            arguments += self.sources(a, namespace)
        no_copy = any(
            k.arg == "copy"
            and isinstance(k.value, ast.Constant)
            and k.value.value in (False, None)
            for k in node.keywords
        )
        callee = _resolve(node.func, namespace, self.local_names)
        if callee is not _UNKNOWN:
            module = getattr(callee, "__module__", None) or ""
            name = getattr(callee, "__name__", "")
            if module == "builtins" and name in FRESH_BUILTINS:
                return []
            if module.split(".")[0] in ("numpy", "tensorflow", "math"):
                if name in VIEW_FUNCTIONS or no_copy:
                    return [(n, _compose(h, VIEW)) for n, h in arguments]
                return []
            if callee in (list, tuple, reversed, iter, zip, enumerate):
                # a new container of the argument's elements: numbers of a
                # vector, but the rows (views) of a matrix
                return [(n, _compose(h, ITEMS)) for n, h in arguments]
            # min(a, b), a helper of your module: may hand back what it was
            # given, or part of it
            return [(n, _compose(h, PART)) for n, h in arguments]
        if isinstance(node.func, ast.Name) and node.func.id == REPEAT and node.args:
            # `[x for _ in range(n)]` (ir/builder.py): n elements that in
            # Python are x itself; n is a number
            return [(n, _compose(h, ITEMS)) for n, h in self.sources(node.args[0], namespace)]
        if isinstance(node.func, ast.Attribute):  # a method of a value
            receiver = self.sources(node.func.value, namespace)
            if node.func.attr in COPY_METHODS and not no_copy:
                return []
            how = VIEW if node.func.attr in VIEW_METHODS else PART
            return [(n, _compose(h, how)) for n, h in receiver + arguments]
        return [(n, _compose(h, PART)) for n, h in arguments]

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
            mine = _with_how(state, ins.vars_in[k])
            for j, other in enumerate(ins.vars_in):
                if j == k:
                    continue
                theirs = _with_how(state, other)
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

    def write(self, var, state, block, index, origin, check, via=None):
        """An item assignment through `var` (or a callee assigning items of
        the array `var` passes it)."""
        held = _with_how(state, var)
        for root in held:
            if root[0] == "param":
                self.mutated.setdefault(root[1], origin)
                self.first_writes.setdefault((self.fn.name, root[1]), origin)
        if not check:
            return
        what = _at(origin)
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
            self.param_rule(var, state.get(var, frozenset()), origin, what)
        live = self.live.get((block.name, index), frozenset())
        defined = set(liveness.defs(block.instructions[index]))
        conflicts = []  # (how, name, root): a plain alias is named first
        for other in live - defined - {var}:
            theirs = _with_how(state, other)
            for root in set(theirs) & set(held):
                conflicts.append((_ORDER[theirs[root]], other, root))
        for _, other, root in sorted(conflicts):
            theirs = _with_how(state, other)
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
            if theirs[root] in (SAME, VIEW):
                raise UnsupportedSyntaxError(message, origin, hint)
            self.deferred.append(
                Deferred(
                    ir.qualify(self.fn.name, other),
                    message,
                    origin,
                    hint,
                    elements=theirs[root] == ITEMS,
                )
            )

    def param_rule(self, var, held, origin, what):
        """A write that reaches a parameter's object must go through the
        parameter itself, while it surely is the caller's array: then the
        final value of the parameter is what the caller gets back."""
        params = sorted({root[1] for root, _ in held if root[0] == "param"})
        if not params:
            return
        p = params[0]
        if var == p and held == frozenset({(_param(p), SAME)}):
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
            if state.get(p, frozenset()) == frozenset({(_param(p), SAME)}):
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
                if p in ir.pattern_names(ins.vars_out) and _written(ins) != p:
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


# ---- the rewrite ----------------------------------------------------------------


class _Rewrite:
    """Makes the in-place functions return their changed parameters, and
    their calls rebind the caller's variables to them."""

    def __init__(self, program, inplace, called):
        self.program = program
        self.inplace = dict(inplace)
        self.main = program.main
        self.variant = None
        if self.inplace.get(self.main) and self.main in called:
            # The entry returns its own result; its calls inside the program
            # go to a copy that hands its changes back.
            names = {f.name for f in program.functions}
            self.variant = self.main + VARIANT_SUFFIX
            if self.variant in names:
                raise UnsupportedSyntaxError(
                    f"a batched function may not be called {self.variant!r}: the compiler "
                    f"uses that name for a copy of {self.main!r}",
                    program.function(self.variant).origin,
                    "rename it",
                )
            self.inplace[self.variant] = self.inplace[self.main]

    def original(self, name):
        return self.main if name == self.variant else name

    def run(self) -> ir.Program:
        functions = []
        for fn in self.program.functions:
            if fn.name == self.main:
                functions.append(self.function(fn, extras=()))
                if self.variant is not None:
                    variant = _renamed(fn, self.variant)
                    functions.append(self.function(variant, self.inplace[self.variant]))
            else:
                functions.append(self.function(fn, self.inplace[fn.name]))
        return ir.Module(tuple(functions)).program(self.main)

    def function(self, fn, extras):
        self.names = _names_of(fn)
        blocks = []
        for block in fn.blocks:
            instructions = [
                self.call(dataclasses.replace(ins, function=self.callee(ins.function)))
                if isinstance(ins, ir.Call)
                else ins
                for ins in block.instructions
            ]
            terminator = block.terminator
            if extras and isinstance(terminator, ir.Return):
                last = block.instructions[-1] if block.instructions else None
                if isinstance(last, ir.Call):
                    last = dataclasses.replace(last, function=self.callee(last.function))
                if isinstance(last, ir.Call) and self.hands_back_the_same(extras, last, terminator):
                    # `return g(...)` with g handing back what fn hands back:
                    # g's result is fn's, and the call stays a tail call.
                    result = self.fresh(f"{last.function}_result")
                    instructions[-1] = dataclasses.replace(last, vars_out=result)
                    terminator = ir.Return(result, terminator.origin)
                else:
                    value = terminator.value
                    parts = ["None" if value is None else _pattern_source(value)] + list(extras)
                    vars_in = []
                    for n in ir.pattern_names(value) + tuple(extras):
                        if n not in vars_in:
                            vars_in.append(n)
                    result = self.fresh("returned")
                    instructions.append(
                        ir.PrimOp(
                            tuple(vars_in),
                            result,
                            "(" + ", ".join(parts) + ")",
                            origin=terminator.origin,
                            namespace={},
                        )
                    )
                    terminator = ir.Return(result, terminator.origin)
            blocks.append(
                dataclasses.replace(block, instructions=tuple(instructions), terminator=terminator)
            )
        return dataclasses.replace(fn, blocks=tuple(blocks))

    def callee(self, name):
        return self.variant if (self.variant and name == self.main) else name

    def hands_back_the_same(self, extras, call, ret) -> bool:
        """Whether `return g(...)` may stay a tail call: g hands back, in
        order, exactly the parameters the caller hands back, and its result
        is the caller's."""
        theirs = self.inplace.get(call.function, ())
        callee = self.program.function(self.original(call.function))
        if len(extras) != len(theirs):
            return False
        if any(call.vars_in[callee.params.index(q)] != p for q, p in zip(theirs, extras)):
            return False
        if ret.value is not None:
            return isinstance(call.vars_out, str) and ret.value == call.vars_out
        # `g(...)` then `return`: g must return None on every path
        return call.vars_out is None and all(
            b.terminator.value is None for b in callee.blocks if isinstance(b.terminator, ir.Return)
        )

    def call(self, ins):
        changed = self.inplace.get(ins.function, ())
        if not changed:
            return ins
        callee = self.program.function(self.original(ins.function))
        bound = set(ir.pattern_names(ins.vars_out))
        extras = []
        for p in changed:
            arg = ins.vars_in[callee.params.index(p)]
            # Python binds the call's result after the callee ran: a name the
            # result rebinds keeps the result, not the changed argument.
            extras.append(self.fresh("unused") if arg in bound or arg in extras else arg)
        first = ins.vars_out if ins.vars_out is not None else self.fresh("unused")
        return dataclasses.replace(ins, vars_out=(first,) + tuple(extras))

    def fresh(self, base):
        k, name = 0, base
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name


# ---- helpers ---------------------------------------------------------------------


def _renamed(fn: ir.Function, name: str) -> ir.Function:
    """A copy of `fn` called `name` (its blocks renamed to match)."""

    def block_name(old):
        prefix = fn.name + "_"
        return name + "_" + old[len(prefix):] if old.startswith(prefix) else f"{name}_{old}"

    def terminator(t):
        if isinstance(t, ir.Goto):
            return dataclasses.replace(t, target=block_name(t.target))
        if isinstance(t, ir.Branch):
            return dataclasses.replace(
                t, true_target=block_name(t.true_target), false_target=block_name(t.false_target)
            )
        return t

    blocks = tuple(
        dataclasses.replace(
            b, name=block_name(b.name), terminator=terminator(b.terminator), function=name
        )
        for b in fn.blocks
    )
    return dataclasses.replace(fn, name=name, blocks=blocks)


def _names_of(fn, expressions=True):
    """Every variable of `fn`; with `expressions`, every identifier its
    expressions mention too (fresh names must not shadow a global)."""
    names = set(fn.params)
    for b in fn.blocks:
        for ins in b.instructions:
            names.update(ir.pattern_names(ins.vars_out))
            names.update(getattr(ins, "vars_in", ()))
            if expressions:
                for text in (getattr(ins, "expr", None), getattr(ins, "condition", None)):
                    if isinstance(text, str):
                        names.update(re.findall(r"[A-Za-z_]\w*", text))
    return names


def _at(origin) -> str:
    """`` `w = v` at f.py:3 `` (a line of your source), for messages."""
    if origin is None:
        return "an instruction built by hand"
    return f"`{origin.text}` at {origin}"


def _pattern_source(pattern) -> str:
    if isinstance(pattern, str):
        return pattern.lstrip("*")
    return "(" + ", ".join(_pattern_source(p) for p in pattern) + ("," if len(pattern) == 1 else "") + ")"


def _written(ins) -> Optional[str]:
    """The variable an item assignment `v = __setitem__(v, ...)` changes."""
    if not isinstance(ins, ir.PrimOp) or not isinstance(ins.vars_out, str):
        return None
    if callable(ins.expr) or SET_ITEM not in ins.expr:
        return None
    node = _parse(ins.expr)
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == SET_ITEM
        and node.args
    ):
        node = node.args[0]
    if isinstance(node, ast.Name) and node.id == ins.vars_out:
        return node.id
    return None


@functools.lru_cache(maxsize=4096)
def _parse(text):
    return ast.parse(text.strip(), mode="eval").body


def _has_slice(node) -> bool:
    if isinstance(node, ast.Slice):
        return True
    if isinstance(node, ast.Tuple):
        return any(isinstance(e, ast.Slice) for e in node.elts)
    return False


# The closest way first: SAME and VIEW are refused at once, PART waits for
# the variable's type (an array?), ITEMS for its elements' (arrays?); where
# paths disagree, PART's question is the safer one.
_ORDER = {SAME: 0, VIEW: 1, PART: 2, ITEMS: 3}


def _compose(held, how):
    """How a value shares an object, from how its source does (`held`) and
    how the value shares its source (`how`)."""
    if held == SAME:
        return how
    if how == SAME:
        return held
    if how == ITEMS:
        # a container of the elements of a view, an element or a container
        # of elements: its elements are arrays only where they share storage
        return ITEMS
    if how == VIEW:
        return VIEW if held == VIEW else PART
    return PART


def _join(a, b):
    if a is None:
        return dict(b)
    out = dict(a)
    for name, roots in b.items():
        out[name] = out.get(name, frozenset()) | roots
    return out


def _age(state, site):
    """A site makes a new object: what other names hold from it is older."""
    old = ("old", site)
    for name, roots in list(state.items()):
        if any(r == site for r, _ in roots):
            state[name] = frozenset((old if r == site else r, h) for r, h in roots)


def _with_how(state, name):
    """{root: the closest way `name` may share it}."""
    out = {}
    for r, h in state.get(name, ()):
        if r not in out or _ORDER[h] < _ORDER[out[r]]:
            out[r] = h
    return out


_UNKNOWN = object()


def _resolve(func, namespace, local_names):
    """The object a callee expression names (`np.reshape`, `helper`), or _UNKNOWN."""
    path = []
    node = func
    while isinstance(node, ast.Attribute):
        path.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id in local_names:
        return _UNKNOWN
    import builtins

    if namespace is not None and node.id in namespace:
        value = namespace[node.id]
    elif hasattr(builtins, node.id):
        value = getattr(builtins, node.id)
    else:
        return _UNKNOWN
    for attr in reversed(path):
        try:
            value = getattr(value, attr)
        except AttributeError:
            return _UNKNOWN
    return value


def _is_module(name, namespace):
    return isinstance(name, tuple) and isinstance(
        (namespace or {}).get(name[1]), pytypes.ModuleType
    )


def _elements_hold_arrays(pattern) -> bool:
    """Whether the elements of a value of this type hold arrays (a matrix's
    rows do, a vector's numbers do not)."""
    from transpiler import types as T

    if isinstance(pattern, T.TensorType):
        return len(tuple(pattern.shape)) >= 2
    if isinstance(pattern, T.TupleType):
        return any(_holds_arrays(e) for e in pattern.elements)
    return False


def _holds_arrays(pattern) -> bool:
    from transpiler import types as T

    if isinstance(pattern, T.TensorType):
        return tuple(pattern.shape) != ()
    if isinstance(pattern, T.TupleType):
        return any(_holds_arrays(e) for e in pattern.elements)
    return False


_AUGMENTED = re.compile(r"^(\w+)\s*(\*\*|//|<<|>>|[-+*/%&|^@])=")


def _refuse_augmented_array_parameters(typed: ir.Program, types: dict) -> None:
    """`v += x` of an array parameter: NumPy changes the array in place, so
    in Python the caller's array (and every alias of it) changes; the
    builder makes it `v = v + x`, a new array.  Refused rather than silently
    different: say which is meant.  The entry's own arrays are never changed
    (its caller gets what it returns), so there it is allowed unless the
    entry also calls itself."""
    called = {
        ins.function for f in typed.functions for b in f.blocks for ins in b.instructions if isinstance(ins, ir.Call)
    }
    for fn in typed.functions:
        if fn.name == typed.main and fn.name not in called:
            continue
        for block in fn.blocks:
            for ins in block.instructions:
                if not isinstance(ins, ir.PrimOp) or ins.vars_out not in fn.params or ins.origin is None:
                    continue
                match = _AUGMENTED.match(ins.origin.text)
                if match is None or match.group(1) != ins.vars_out:
                    continue
                if _holds_arrays(types.get(ir.qualify(fn.name, ins.vars_out))):
                    name = ins.vars_out
                    raise UnsupportedSyntaxError(
                        f"`{ins.origin.text}` changes the array parameter {name!r} in place "
                        "(NumPy's augmented assignment), which the caller's array would see in "
                        f"Python; this compiler makes a new array here (in batched function {fn.name!r})",
                        ins.origin,
                        f"write `{name} = {name} {match.group(2)} ...` for a new array, or "
                        f"`{name}[:] {match.group(2)}= ...` to change the caller's array",
                    )

