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

This module is the pass's entry point and the refusals that wait for
types; the analysis is passes/inplace_analysis.py, its lattice
passes/inplace_sharing.py, and the rewrite passes/inplace_rewrite.py.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Dict, FrozenSet, List, Tuple

from transpiler.errors import UnsupportedSyntaxError
from transpiler.ir import instructions as ir
from transpiler.passes.inplace_analysis import Analysis, Deferred
from transpiler.passes.inplace_rewrite import VARIANT_SUFFIX, Rewrite


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
            result = Analysis(f, inplace, flows, functions, first_writes).run(check=False)
            if (result.inplace, result.flows) != (inplace[f.name], flows[f.name]):
                inplace[f.name], flows[f.name] = result.inplace, result.flows
                changed = True
    deferred: List[Deferred] = []
    for f in program.functions:
        analysis = Analysis(f, inplace, flows, functions, first_writes)
        analysis.called = f.name in called
        deferred.extend(analysis.run(check=True).deferred)
    if not any(params for name, params in inplace.items() if name in called):
        return Rewritten(program, tuple(deferred), {})  # only the entry's own arrays change
    rewrite = Rewrite(program, inplace, called)
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
            if d.also is not None:
                also = types.get(d.also)
                if not (_elements_hold_arrays(also) if d.also_elements else _holds_arrays(also)):
                    continue
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
