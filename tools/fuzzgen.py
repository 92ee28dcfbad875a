"""Random programs in autobatch's Python subset, for differential fuzzing.

One grammar, two sources of randomness: `generate(random.Random(seed))` for
the long-running `tools/fuzz.py` (cheap, and a program is reproducible from
its seed), and the hypothesis strategy `programs()` for the test suite, where
hypothesis can shrink a failing program toward a small one.  Both drive the
same `_Writer` through `Choices.integer`, the only random primitive.

A program is a module of a few functions `f0, f1, ...` decorated with
`@ctx.batch`; `f0` is the entry.  The rules that keep every program valid,
terminating and deterministic for the plain Python oracle:

- Ints stay within +-INT_BOUND at every assignment and return (an expression
  whose worst case is larger is wrapped in `% m`), and an expression has at
  most MAX_LEAVES leaves, so no intermediate value leaves int64: Python's
  unbounded ints and int64 agree.  Floats are bounded the same way, so no
  computation overflows (junk lanes may still produce inf/NaN: they are
  thrown away).
- Divisors are never zero: `e % k + 1`, its negation, or a nonzero literal.
- Every loop's trip count is fixed before it starts: a `while` counter that
  moves one step toward its limit as the body's first statement (so
  `continue` cannot skip it), or `range(lo, hi, step)` with bounded `lo`,
  `hi` and a nonzero literal step.
- Every call passes `d - 1` for the first parameter `d` and runs only where
  `d > 0` (inside `if d > 0:`, or as `f(...) if d > 0 else e`, or after
  `d > 0 and`), so recursion, mutual recursion included, ends.
- Each name has one type (int, float or bool, or a one-leaf tuple of an
  int or a float: `(e,)`, `Box(e)`, `((e,),)` or `(e, None)`, read as
  `t[0]`, `t.v`, `t[0][0]`, `t[0]`, so that such tuples live across
  recursive calls and in loops), and fresh names are never reused.  An
  int operand may meet a float one in `+`, `-`, `*` and comparisons:
  Python promotes it, and so must the batched code.

With `vectors=True` (per-example subscripts) a program also has int64 and
float64 arrays of a fixed small shape (`int[4]`, `float[2,3]`): parameters,
results, locals made with `np.zeros`/`np.arange`/arithmetic, and module-level
constant tables `T0, T1, ...` (NumPy arrays or tuples of numbers).  They are
read element by element (`v[i]`, `v[-1]`, `m[i, j]`, `m[i][j]`, `v[1:3][k]`,
`(v + w)[k]`, `T0[k]`), measured (`len(v)`, `v.shape[0]`, `v.size`) and
updated in place (`v[i] = x`, `v[i] += x`, `m[i] = row`, `v[1:3] = x`):

- An index is in range on every example by construction: a literal, a
  `for` variable over `range(len(v))` and the like, a name inside
  `if 0 <= i < len(v):`, `e % n` (or `-(e % n) - 1`), an index table's entry,
  or a read behind `0 <= i < n and v[i]` / `v[i] if 0 <= i < n else e`.
  Only in a program with `Program.raises` may an index be out of range
  (`v[n0]`, `e % (n + 1)`): then the batched call must raise IndexError
  exactly when some example's plain run does.
- Item assignment has value semantics when batched and reference semantics
  in Python, so no array is ever reachable from two names: an array value
  stored in a name is fresh (`w + 0` where it could be a name, a slice or a
  table), a parameter that the callee assigns into gets a fresh argument,
  and a result is never an alias of anything the caller still holds.
  Parameters the callee does not own (`Signature.mutable`) are never
  assigned into, and those it owns are never rebound (passes/inplace.py
  refuses a parameter rebound after its items were assigned).
- Element values keep the bounds above: an assignment whose worst case
  leaves them is followed by `v[i] %= m`.
- The constructs of KNOWN_BUGS (compiler bugs still open) are left out
  unless `avoid` says otherwise.

With `features` (a family name -> probability, FEATURES lists them) a
program also uses the Python constructs of issue 29, each family drawn at the
places where it fits with its own probability (a family at 0 draws nothing,
so without `features` a seed gives the program it gave before they existed):

- "builtins": `min`/`max` of 2-3 numbers and of a vector, `abs`, `divmod`
  (tuple-unpacked), `pow(a, b, m)` and `pow(a, k)`, `round(x)`, `round(n, 2)`
  (of an int: `round(x, 2)` of a float is refused at build time, Python
  rounding the exact decimal value, tests/test_fuzz_regressions.py), `int(x)`, `float(n)`, `bool(n)`, `sum(v)`, `any(v)`/`all(v)`,
  `sorted(v)[k]`, `math.sqrt/floor/ceil/isqrt/gcd/log` (on arguments made
  valid: `math.sqrt(abs(x))`), `isinstance`, `len(str(n))`,
  `bin(n).count("1")`;
- "identity": `flag is True`, `flag is not False`, `x is None`;
- "membership": `x in (a, b, c)`, `x not in [...]`, `x in v`, `x in T0`,
  `x in range(a, b[, step])`;
- "bits": `<<` (counts 0..8 of a non-negative int), `>>`, `&`, `|`, `^`, `~`;
- "bool_arith": a comparison as an int operand, `n + (a != b)`,
  `total += (x > 0)`;
- "swaps" (arrays): `v[i], v[j] = v[j], v[i]`, `v[i], n = n, v[i]`;
- "for_vectors" (arrays): `for x in v`, `for i, x in enumerate(v)`,
  `for a, b in zip(v, w)`, `for x in reversed(v)`, `for k in T0`;
- "inplace" (arrays): helpers that assign items of their array parameters
  and return nothing or an int, called with the caller's own array (Python
  passes the object: the caller sees the changes) as a statement, as the
  value of an assignment, or inside an expression.

Python's answer must not depend on NumPy scalars, which some of these see:
`isinstance(v[0], int)` is False, `(v[0] > 1) is True` is False,
`pow(v[0], 2, 5)` raises.  In programs with arrays, the writer tracks which
names may hold a NumPy scalar (`_pure`) and asks those questions of plain
Python values only (`pow` takes `int(...)` of the others).  A comparison
used as a number is always the right operand of an int or float (a NumPy
bool minus a NumPy bool raises; True + True is 2 in Python, True in NumPy),
so no int is ever a bool (`len(str(True))` is 4).
"""

from __future__ import annotations

import dataclasses
import random
import re
from typing import Dict, FrozenSet, List, Optional, Tuple

INT_BOUND = 10_000
FLOAT_BOUND = 1e6
MAX_LEAVES = 4
MAX_NESTING = 3

INT, FLOAT, BOOL = "int", "float", "bool"
RETURN_TYPES = ((INT,), (FLOAT,), (INT, INT), (INT, FLOAT), (FLOAT, INT))
INT_LITERALS = (0, 1, 2, 3, -1, 5, 7, 10, -4, 100)
FLOAT_LITERALS = (0.0, 1.0, 0.5, -1.5, 2.25, 3.0, -0.25, 10.0)
INT_WRAPS = (1000, 97, 10, 7, -13)
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
# One-leaf tuples: (display of the element, how to read it back).
BOX_FORMS = (("({},)", "[0]"), ("Box({})", ".v"), ("(({},),)", "[0][0]"), ("({}, None)", "[0]"))
VECTOR_LENGTHS = (2, 3, 4, 5, 6)
# Static slices of a 1-D array, as written.
SLICES = ("1:3", "::-1", ":2", "-2:", "::2", "1:", "1:-1", "-3:-1", "::-2", ":-1", "2:", "0:1")


# Constructs that trip a known, still open compiler bug: left out of the
# programs with arrays or features (unless `avoid` says otherwise,
# `tools/fuzz.py --allow-known`), so that a run finds the other bugs.  Drop
# an entry when its bug is fixed.
KNOWN_BUGS: Dict[str, str] = {
    # None open.  Fixed, with the names the generator still checks:
    # "scalar_with_constant_array", "constant_arrays", "slice_assignment",
    # "array_result_of_another_function", "subscript_of_broadcast",
    # "constant_scalar_with_array", "constant_table_index",
    # "constant_into_region" (tests/test_subscripts.py, "constants meeting
    # per-example values"); "in_range_of_per_example_bounds",
    # "sum_of_a_table_from_a_per_example_start", "float_in_range",
    # "index_error_inside_isinstance" (5eef39b), "inplace_call_in_expression"
    # (7df8e7a), "divisor_made_per_example" (5b3cbac): the constructs of
    # issue 29 (tests/test_fuzz_regressions.py).
}


# The construct families of issue 29 and their default probabilities (the
# chance that a place where the family fits uses it; see the docstring).
FEATURES: Dict[str, float] = {
    "builtins": 0.12,
    "identity": 0.08,
    "membership": 0.08,
    "bits": 0.06,
    "bool_arith": 0.05,
    "swaps": 0.06,
    "for_vectors": 0.08,
    "inplace": 0.4,
}
# Families that need per-example arrays (ignored in programs without).
ARRAY_FEATURES = frozenset(("swaps", "for_vectors", "inplace"))


def array_type(elem: str, shape) -> str:
    """`int[4]`, `float[2,3]`: an array of `elem` per example."""
    return f"{elem}[{','.join(str(s) for s in shape)}]"


def is_array(kind) -> bool:
    return isinstance(kind, str) and "[" in kind


def elem_of(kind: str) -> str:
    return kind.partition("[")[0]


def shape_of(kind: str) -> Tuple[int, ...]:
    """The per-example shape of a type: () for a scalar."""
    if not is_array(kind):
        return ()
    return tuple(int(s) for s in kind[kind.index("[") + 1:-1].split(","))


def slice_length(text: str, size: int) -> int:
    parts = [int(p) if p else None for p in text.split(":")]
    return len(range(size)[slice(*parts)])

HEADER = '''"""Generated by tools/fuzzgen.py{note}."""

import collections
import os

from transpiler import Context

Box = collections.namedtuple("Box", ["v"])

ctx = Context(
    generated_dir=os.path.join(os.path.dirname(os.path.abspath(__file__)), "generated"),
    frozen=False,
)
'''


class Choices:
    """The grammar's randomness: everything is drawn through `integer`.

    `chance` and `choice` are written so that the draws hypothesis shrinks
    toward (zero) give the simplest program: no optional construct, the first
    option.
    """

    def integer(self, low: int, high: int) -> int:
        raise NotImplementedError

    def choice(self, options):
        return options[self.integer(0, len(options) - 1)]

    def chance(self, probability: float) -> bool:
        return self.integer(0, 999) >= 1000 - round(probability * 1000)


class RandomChoices(Choices):
    def __init__(self, rng: random.Random):
        self.rng = rng

    def integer(self, low, high):
        return self.rng.randint(low, high)


class DrawChoices(Choices):
    """Choices drawn from a hypothesis `draw`, so that failures shrink."""

    def __init__(self, draw):
        from hypothesis import strategies as st

        self.draw = draw
        self.st = st

    def integer(self, low, high):
        return self.draw(self.st.integers(low, high))


@dataclasses.dataclass(frozen=True)
class Signature:
    name: str
    params: Tuple[Tuple[str, str], ...]  # (name, type); the first is ("d", INT)
    returns: Tuple[str, ...]
    mutable: FrozenSet[str] = frozenset()  # array parameters the function assigns into
    inplace: bool = False  # a helper whose callers pass their own arrays ("inplace"); returns () or (INT,)


@dataclasses.dataclass(frozen=True)
class Program:
    """A generated module: its source and how to call its entry."""

    source: str
    entry: str
    params: Tuple[Tuple[str, str], ...]
    returns: Tuple[str, ...]
    max_depth: int  # the entry's `d` is drawn from 0..max_depth
    raises: bool = False  # an index may be out of range: plain Python may raise IndexError


@dataclasses.dataclass
class _Expr:
    text: str
    bound: float  # |value| <= bound (of every element, for an array)
    leaves: int
    fresh: bool = True  # an array: a new one (not a name, a slice, a table)
    const: bool = False  # an array: the same on every example (np.zeros(3), a table)


@dataclasses.dataclass(frozen=True)
class _Table:
    """A module-level constant table."""

    name: str
    elem: str
    shape: Tuple[int, ...]
    flat: Tuple[float, ...]
    is_tuple: bool

    @property
    def bound(self):
        return max(abs(v) for v in self.flat)

    def fits(self, size):
        """Whether every entry is an index into an axis of `size`."""
        return self.elem == INT and len(self.shape) == 1 and all(-size <= v < size for v in self.flat)

    def line(self):
        values = list(self.flat)
        if len(self.shape) == 2:
            cols = self.shape[1]
            values = [values[k:k + cols] for k in range(0, len(values), cols)]
        if self.is_tuple:
            return f"{self.name} = {tuple(values)!r}"
        return f"{self.name} = np.array({values!r})"


class _Writer:
    """Writes one module; `scope` maps the names readable here to their types."""

    def __init__(self, choices: Choices, max_depth: int, statements: int, vectors: bool = False,
                 avoid=None, features=None):
        self.c = choices
        # family -> probability, only those that can draw here (none: no draws at all)
        self.features = {
            name: p for name, p in (features or {}).items()
            if p > 0 and (vectors or name not in ARRAY_FEATURES)
        }
        unknown = set(self.features) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown feature families {sorted(unknown)}; choose from {sorted(FEATURES)}")
        known = frozenset(KNOWN_BUGS if avoid is None else avoid)
        self.avoid = known if vectors or self.features else frozenset()
        self.numpy_names = set()  # names that may hold a NumPy scalar in the plain run (see _pure)
        self.max_depth = max_depth
        self.budget = statements  # tracing and XLA time grow with the program's size
        self.lines: List[str] = []
        self.vectors = vectors  # per-example arrays, subscripts and tables (all draws behind it)
        self.tables: List[_Table] = []
        self.array_types: List[str] = []
        self.unsafe = False  # may write an index out of range
        self.raises = False  # did write one
        self.ranges: Dict[str, Tuple[int, int]] = {}  # int names of a known range, while it holds
        self.frozen = set()  # arrays this function must not assign into
        self.reads = 0  # nesting of subscripts being written (index expressions)
        self.same_rank = False  # array expressions without a number or row broadcast per example

    # ---- module and functions ------------------------------------------

    def module(self, note="") -> Program:
        count = self.c.integer(1, 4)
        if self.vectors:
            self._plan_arrays()
        self.signatures = [self._signature(f"f{k}") for k in range(count)]
        header = HEADER.format(note=note)
        if self.vectors:
            header = header.replace("import os\n", "import os\n\nimport numpy as np\n", 1)
        if "builtins" in self.features:
            header = header.replace("import collections\n", "import collections\nimport math\n", 1)
        self.lines = header.splitlines()
        if self.tables:
            self.lines += [""] + [t.line() for t in self.tables]
        for sig in self.signatures:
            self._function(sig)
        entry = self.signatures[0]
        source = "\n".join(self.lines) + "\n"
        return Program(source, entry.name, entry.params, entry.returns, self.max_depth, self.raises)

    def _plan_arrays(self):
        """The array types of this program, its tables, and whether it may index out of range."""
        lengths = sorted({self.c.choice(VECTOR_LENGTHS) for _ in range(self.c.integer(1, 2))})
        self.array_types = [array_type(e, (n,)) for n in lengths for e in (INT, FLOAT)]
        if self.c.chance(0.3):
            shape = (self.c.integer(2, 3), self.c.integer(2, 4))
            self.array_types.append(array_type(self.c.choice((INT, FLOAT)), shape))
        self.unsafe = self.c.chance(0.2)
        for k in range(self.c.integer(0, 3)):
            self.tables.append(self._table(f"T{k}", lengths))

    def _table(self, name, lengths):
        form = self.c.choice(("ints", "floats", "index", "index", "matrix"))
        n = self.c.choice(lengths) if self.c.chance(0.6) else self.c.integer(2, 7)
        shape = (n,) if form != "matrix" else (self.c.integer(2, 3), self.c.integer(2, 4))
        size = n if form != "matrix" else shape[0] * shape[1]
        if form == "index":  # entries index every array of the program
            flat = [self.c.integer(-lengths[0], lengths[0] - 1) for _ in range(size)]
        elif form == "floats":
            flat = [self.c.integer(-40, 40) / 4 for _ in range(size)]
        else:
            flat = [self.c.integer(-20, 20) for _ in range(size)]
        is_tuple = form != "matrix" and self.c.chance(0.35)
        return _Table(name, FLOAT if form == "floats" else INT, shape, tuple(flat), is_tuple)

    def _signature(self, name):
        if name != "f0" and self._use("inplace"):
            return self._inplace_signature(name)
        params = [("d", INT)]
        mutable = set()
        for k in range(self.c.integer(1, 3)):
            if self.vectors and self.c.chance(0.5):
                kind = self.c.choice(self.array_types)
                params.append((f"{'m' if len(shape_of(kind)) == 2 else 'v'}{k}", kind))
                if self.c.chance(0.5):
                    mutable.add(params[-1][0])
                continue
            kind = self.c.choice((INT, FLOAT))
            params.append((f"{'n' if kind == INT else 'x'}{k}", kind))
        returns = self.c.choice(RETURN_TYPES)
        if self.vectors and self.c.chance(0.4):
            kind = self.c.choice(self.array_types)
            returns = self.c.choice(((kind,), (INT, kind), (kind, FLOAT), (kind, kind)))
            if "constant_arrays" in self.avoid and kind not in dict(params).values():
                # a new array needs a per-example one of its type to start from
                params.append((f"{'m' if len(shape_of(kind)) == 2 else 'v'}{len(params) - 1}", kind))
        return Signature(name, tuple(params), returns, frozenset(mutable))

    def _function(self, sig):
        self.sig = sig
        self.fresh = 0
        self.calls_left = self.c.integer(0, 3)
        self.scope: Dict[str, str] = dict(sig.params)
        # a parameter whose items the function assigns is never rebound: the
        # change reaches the caller's array (passes/inplace.py refuses the
        # rebinding, which would leave it to some paths only)
        self.readonly = {"d"} | set(sig.mutable)
        self.frozen = {p for p, t in sig.params if is_array(t) and p not in sig.mutable}
        self.ranges = {}
        self.loops = 0
        self.guarded = False  # inside `if d > 0:`
        self.indent = 1
        # in the plain run any parameter but `d` may be a NumPy scalar (a caller passed `v[0]`)
        self.numpy_names = {p for p, _ in sig.params[1:]} if self.vectors else set()
        self.lines += ["", "", "@ctx.batch", f"def {sig.name}({', '.join(p for p, _ in sig.params)}):"]
        if sig.inplace:  # the caller's arrays: assigned into, never rebound
            arrays = [p for p, t in sig.params if is_array(t)]
            self.readonly.update(arrays)
            self._assign_item(self.c.choice(arrays))
        if self.c.chance(0.4):
            self._stmt_box()  # in scope for the whole body: the calls in it save it
        self._block(self.c.integer(1, 5))
        value = self._return_value()
        if value or self.c.chance(0.5):
            self._emit(f"return {value}".rstrip())

    # ---- statements ------------------------------------------------------

    def _emit(self, line):
        self.lines.append("    " * self.indent + line)

    def _block(self, count):
        """`count` statements at the current indentation; the scope is restored after."""
        saved = dict(self.scope)
        for k in range(count):
            if k and self.budget <= 0:
                break
            self.budget -= 1
            self._statement()
        self.scope = saved

    def _nested(self, count, guarded=None):
        self.indent += 1
        old = self.guarded
        if guarded is not None:
            self.guarded = guarded
        self._block(count)
        self.guarded = old
        self.indent -= 1

    def _statement(self):
        if self.features and self._feature_statement():
            return
        deep = self.indent > MAX_NESTING or self.budget < 2
        kinds = ["assign", "assign", "update", "augment", "pair", "box"]
        if not deep:
            kinds += ["if", "if", "while", "for"]
            if self._may_call() and not self.guarded:
                kinds.append("guard")
        if self.loops:
            kinds += ["jump"]
        if self._may_call() and self.guarded and self._tuple_callees():
            kinds.append("unpack")
        kinds.append("return")
        if self.vectors:
            kinds += ["array", "array", "set_item", "set_item", "set_item", "augment_item", "augment_item"]
            if self._arrays(writable=True):
                kinds.append("rebind_array")
            if not deep:
                kinds += ["index_loop", "index_loop", "index_guard"]
        getattr(self, "_stmt_" + self.c.choice(kinds))()

    def _new_name(self, kind):
        self.fresh += 1  # never a parameter's (n0, x1) or a function's (f0) name
        if is_array(kind):
            return f"{'w' if len(shape_of(kind)) == 1 else 'g'}{self.fresh}"
        return f"{dict(int='i', float='r', bool='b')[kind]}{self.fresh}"

    def _writable(self, kind):
        return [n for n, t in self.scope.items() if t == kind and n not in self.readonly]

    def _stmt_assign(self):
        kind = self.c.choice((INT, FLOAT, BOOL))
        value = self._value(kind)
        name = self._new_name(kind)
        self._emit(f"{name} = {value}")
        self.scope[name] = kind
        self._taint([name], value)

    def _stmt_update(self):
        kind = self.c.choice((INT, FLOAT, BOOL))
        names = self._writable(kind)
        if not names:
            return self._stmt_assign()
        name, value = self.c.choice(names), self._value(kind)
        self._emit(f"{name} = {value}")
        self._taint([name], value)

    def _stmt_augment(self):
        kind = self.c.choice((INT, FLOAT))
        names = self._writable(kind)
        if not names:
            return self._stmt_assign()
        name = self.c.choice(names)
        if self._use("bool_arith"):  # `total += (x > 0)`
            cond = self._cond(1)
            self._emit(f"{name} {self.c.choice(('+=', '-='))} ({cond})")
            self._taint([name], cond)
            if kind == INT:  # one step past the bound at most: back within it
                self._emit(f"{name} = {name} % {self.c.choice(self._positive((1000, 97, -13)))}")
            return
        op = self.c.choice(("+=", "-=", "*="))
        e = self._expr(kind, self.c.integer(1, 2))
        self._taint([name], e.text)
        limit = INT_BOUND if kind == INT else FLOAT_BOUND
        worst = limit * e.bound if op == "*=" else limit + e.bound
        if worst > limit:  # the result would leave the bound: wrap instead
            bare = "*" if op == "*=" else op[0]
            self._emit(f"{name} = {self._wrap(_Expr(f'{name} {bare} {_paren(e.text)}', worst, 2), kind)}")
        else:
            self._emit(f"{name} {op} {e.text}")

    def _stmt_pair(self):
        """`a, b = e1, e2`: a swap, or two assignments at once."""
        kinds = (self.c.choice((INT, FLOAT)), self.c.choice((INT, FLOAT)))
        targets = []
        for kind in kinds:
            names = [n for n in self._writable(kind) if n not in targets]
            if names and self.c.chance(0.7):
                targets.append(self.c.choice(names))
            else:
                targets.append(self._new_name(kind))
        values = [self._value(k) for k in kinds]
        self._emit(f"{targets[0]}, {targets[1]} = {values[0]}, {values[1]}")
        self.scope.update(zip(targets, kinds))
        for target, value in zip(targets, values):
            self._taint([target], value)

    def _stmt_box(self):
        """`t = (e,)` and the other BOX_FORMS: a tuple of one leaf, rebound
        (a loop carries it) or new (the calls after it save it)."""
        kind = self.c.choice((INT, FLOAT))
        form = self.c.integer(0, len(BOX_FORMS) - 1)
        names = [n for n, t in self.scope.items() if t == (kind, form)]
        if names and self.c.chance(0.5):
            name = self.c.choice(names)
        else:
            self.fresh += 1
            name = f"t{self.fresh}"
        value = self._value(kind)
        self._emit(f"{name} = {BOX_FORMS[form][0].format(value)}")
        self.scope[name] = (kind, form)
        self._taint([name], value)

    def _stmt_unpack(self):
        callee = self.c.choice(self._tuple_callees())
        call = self._call_text(callee)
        targets = [self._new_name(k) for k in callee.returns]
        self._emit(f"{', '.join(targets)} = {call}")
        self.scope.update(zip(targets, callee.returns))
        self._taint(targets, call)

    # ---- array statements (vectors=True) ----------------------------------

    def _arrays(self, elem=None, rank=None, writable=False, owned=False):
        """Array names in scope: of `elem` and `rank` if given; `writable`: may
        be rebound; `owned`: may be assigned into."""
        return [
            n for n, t in self.scope.items()
            if is_array(t)
            and (elem is None or elem_of(t) == elem)
            and (rank is None or len(shape_of(t)) == rank)
            and not (writable and n in self.readonly)
            and not (owned and n in self.frozen)
        ]

    def _kinds(self):
        """The array types a new array may have here."""
        if "constant_arrays" in self.avoid:
            return sorted({t for t in self.scope.values() if is_array(t)})
        return self.array_types

    def _based(self, kind) -> bool:
        """Whether an array of `kind` can be made here (see "constant_arrays")."""
        return "constant_arrays" not in self.avoid or kind in self.scope.values()

    def _stmt_array(self):
        """`w = <a new array>`."""
        kinds = self._kinds()
        if not kinds:
            return self._stmt_assign()
        kind = self.c.choice(kinds)
        value = self._array_value(kind)
        name = self._new_name(kind)
        self._emit(f"{name} = {value}")
        self.scope[name] = kind

    def _stmt_rebind_array(self):
        name = self.c.choice(self._arrays(writable=True))
        self._emit(f"{name} = {self._array_value(self.scope[name])}")

    def _stmt_set_item(self):
        """`v[i] = x`, `m[i, j] = x`, `m[i][j] = x`, `m[i] = row`, `v[1:3] = x`."""
        names = self._arrays(owned=True)
        if not names:
            return self._stmt_array()
        name = self.c.choice(names)
        elem = elem_of(self.scope[name])
        target, region = self._item_target(name, reads=True, slices=True)
        if region:
            if self.c.chance(0.5) and self._based(array_type(elem, region)):
                value = self._array_value(array_type(elem, region), fresh=False)
            else:
                value = self._scalar_for_array(self._value(elem))
        elif elem == FLOAT and self.c.chance(0.2):
            value = self._value(INT)  # numpy converts it
        elif elem == INT and self.c.chance(0.05):
            # numpy truncates a float toward zero (within the int bound)
            e = self._expr(FLOAT, self.c.integer(1, 2))
            value = f"{_paren(e.text)} % {self.c.choice(self._positive(('1000.0', '-20.0', '7.5')))}"
        else:
            value = self._value(elem)
        self._emit(f"{target} = {value}")

    def _stmt_augment_item(self):
        """`v[i] += e` (then `v[i] %= m` where the bound could be left)."""
        names = self._arrays(owned=True)
        if not names:
            return self._stmt_array()
        name = self.c.choice(names)
        elem = elem_of(self.scope[name])
        # no reads in the index: the wrap below must index the same element
        target, region = self._item_target(name, reads=False, slices=True)
        if elem == INT:
            op = self.c.choice(("+=", "-=", "*=", "+=", "//=", "%="))
        else:
            op = self.c.choice(("+=", "-=", "*=", "+="))
        if op in ("//=", "%="):
            self._emit(f"{target} {op} {self.c.choice(self._positive((2, 3, 7, -3, 10)))}")
            return
        limit = INT_BOUND if elem == INT else FLOAT_BOUND
        if region and self.c.chance(0.3) and self._based(array_type(elem, region)):
            e = self._vexpr(array_type(elem, region), self.c.integer(1, 2))
        else:
            mixed = elem == FLOAT and self.c.chance(0.2)
            e = self._expr(INT if mixed else elem, self.c.integer(1, 2))
            if region:
                e.text = self._scalar_for_array(e.text)
        self._emit(f"{target} {op} {e.text}")
        worst = limit * e.bound if op == "*=" else limit + e.bound
        if worst > limit:
            wrap = self.c.choice(self._positive(INT_WRAPS if elem == INT else (100.0, 7.5, -20.0)))
            self._emit(f"{target} %= {wrap}")

    def _item_target(self, name, reads, slices):
        """The text of an assignment target into array `name`, and the
        per-example shape of the region it names (() for one element)."""
        shape = shape_of(self.scope[name])
        saved = self.reads
        if not reads:
            self.reads = 2  # no subscripts inside the indices
        try:
            slices = slices and "slice_assignment" not in self.avoid
            if len(shape) == 1:
                if slices and self.c.chance(0.12):
                    sl = self._slice(shape[0])
                    return f"{name}[{sl}]", (slice_length(sl, shape[0]),)
                return f"{name}[{self._index(shape[0])}]", ()
            form = self.c.choice(("pair", "pair", "chain", "row", "column") if slices else ("pair", "chain"))
            if form == "row":
                return f"{name}[{self._index(shape[0])}]", (shape[1],)
            if form == "column":
                return f"{name}[:, {self._index(shape[1])}]", (shape[0],)
            i, j = self._index(shape[0]), self._index(shape[1])
            return (f"{name}[{i}, {j}]" if form == "pair" else f"{name}[{i}][{j}]"), ()
        finally:
            self.reads = saved

    def _sized(self):
        """(text of its length, length, range of its indices' text) of an array or table in scope."""
        options = [(f"len({n})", shape_of(t)[0]) for n, t in self.scope.items() if is_array(t)]
        options += [(f"{n}.shape[{self.c.choice((0, -1))}]", shape_of(t)[-1]) for n, t in self.scope.items()
                    if is_array(t) and len(shape_of(t)) == 1 and self.c.chance(0.2)]
        options += [(f"{n}.shape[1]", shape_of(t)[1]) for n, t in self.scope.items()
                    if is_array(t) and len(shape_of(t)) == 2]
        options += [(f"len({t.name})", t.shape[0]) for t in self.tables]
        if not options:
            n = self.c.choice(VECTOR_LENGTHS)
            return str(n), n
        return self.c.choice(options)

    def _stmt_index_loop(self):
        """`for i in range(len(v))` and its variants: `i` indexes `v` in the body."""
        size_text, size = self._sized()
        var = self._new_name(INT)
        form = self.c.choice(("all", "all", "literal", "from1", "reverse", "but_last", "step2"))
        if form == "literal":
            header, span = f"range({size})", (0, size - 1)
        elif form == "from1":
            header, span = f"range(1, {size_text})", (1, size - 1)
        elif form == "reverse":
            header, span = f"range({size_text} - 1, -1, -1)", (0, size - 1)
        elif form == "but_last":
            header, span = f"range({size_text} - 1)", (0, size - 2)
        elif form == "step2":
            header, span = f"range(0, {size_text}, 2)", (0, size - 1)
        else:
            header, span = f"range({size_text})", (0, size - 1)
        self._emit(f"for {var} in {header}:")
        self.readonly.add(var)
        self.ranges[var] = span
        self._loop_body(loop_var=var)
        self.ranges.pop(var, None)

    def _stmt_index_guard(self):
        """`if 0 <= i < len(v):`: inside, `i` indexes `v` (and is not rebound)."""
        ints = [n for n, t in self.scope.items() if t == INT]
        name = self.c.choice(ints)
        size_text, size = self._sized()
        form = self.c.choice(("chain", "chain", "and", "negative", "le"))
        if form == "chain":
            test, span = f"0 <= {name} < {size_text}", (0, size - 1)
        elif form == "and":
            test, span = f"{name} >= 0 and {name} < {size_text}", (0, size - 1)
        elif form == "negative":
            test, span = f"-{size_text} <= {name} < {size_text}", (-size, size - 1)
        else:
            test, span = f"0 <= {name} <= {size_text} - 1", (0, size - 1)
        if self.c.chance(0.2):
            test = f"{test} and {_paren(self._cond(1))}"
        self._emit(f"if {test}:")
        was_readonly, old = name in self.readonly, self.ranges.get(name)
        self.readonly.add(name)
        self.ranges[name] = span
        self._nested(self.c.integer(1, 3))
        if not was_readonly:
            self.readonly.discard(name)
        if old is None:
            self.ranges.pop(name, None)
        else:
            self.ranges[name] = old
        if self.c.chance(0.4):
            self._emit("else:")
            self._nested(self.c.integer(1, 2))

    def _stmt_if(self):
        self._emit(f"if {self._cond(self.c.integer(1, 3))}:")
        self._nested(self.c.integer(1, 3))
        for _ in range(self.c.integer(0, 2)):
            self._emit(f"elif {self._cond(self.c.integer(1, 3))}:")
            self._nested(self.c.integer(1, 2))
        if self.c.chance(0.5):
            self._emit("else:")
            self._nested(self.c.integer(1, 3))

    def _stmt_guard(self):
        """`if d > 0:` around statements that may call (recursion ends at d == 0)."""
        self._emit(f"if {self.c.choice(('d > 0', 'd >= 1', '0 < d'))}:")
        self._nested(self.c.integer(1, 3), guarded=True)
        if self.c.chance(0.3):
            self._emit("else:")
            self._nested(self.c.integer(1, 2))

    def _loop_body(self, counter_line=None, loop_var=None, loop_vars=None):
        """The body (first the counter's step), then maybe an `else:` clause.

        A `for` variable is readable in the body only: after a loop of zero
        trips, Python has never bound it.  `loop_vars`: name -> type of the
        variables of a `for` over arrays.
        """
        loop_vars = dict(loop_vars or {})
        if loop_var:
            loop_vars[loop_var] = INT
        self.loops += 1
        self.indent += 1
        if counter_line:
            self._emit(counter_line)
        self.indent -= 1
        self.scope.update(loop_vars)
        self._nested(self.c.integer(1, 3))
        for name in loop_vars:
            self.scope.pop(name, None)
        self.loops -= 1
        if self.c.chance(0.15):
            self._emit("else:")
            self._nested(1)

    def _stmt_while(self):
        counter = self._new_name(INT)
        limit = self.c.integer(1, 6)
        if self.c.chance(0.5):
            start = self._expr(INT, self.c.integer(1, 2)).text
            self._emit(f"{counter} = {_paren(start)} % {limit}")
            self._taint([counter], start)
            test, step = f"{counter} > 0", f"{counter} -= 1"
        else:
            self._emit(f"{counter} = 0")
            bound = _paren(self._expr(INT, self.c.integer(1, 2)).text)
            test, step = f"{counter} < {bound} % {limit}", f"{counter} += 1"
        if self.c.chance(0.3):  # `and` only: `or` could keep it going past the counter
            test += f" and {_paren(self._cond(1))}"
        self.scope[counter] = INT
        self.readonly.add(counter)
        self._emit(f"while {test}:")
        self._loop_body(counter_line=step)

    def _stmt_for(self):
        var = self._new_name(INT)
        low = self._bounded_int(self.c.integer(0, 2), 6)
        high = self._bounded_int(self.c.integer(1, 2), 8)
        step = self.c.choice((1, 1, 2, -1, 3, -2))
        if step == 1 and self.c.chance(0.5):
            args = high if self.c.chance(0.4) else f"{low}, {high}"
        else:
            args = f"{low}, {high}, {step}" if step > 0 else f"{high}, {low}, {step}"
        self._emit(f"for {var} in range({args}):")
        if self.c.chance(0.9):
            self.readonly.add(var)  # else the body may rebind it (no effect on the trips)
        self._loop_body(loop_var=var)

    def _bounded_int(self, leaves, limit):
        """An int in (-limit, limit): a literal or `e % limit` (or its negation)."""
        if leaves == 0:
            return str(self.c.integer(-2, limit - 1))
        e = _paren(self._expr(INT, leaves).text)
        return f"{e} % {limit}" if self.c.chance(0.7) else f"-({e} % {limit})"

    def _stmt_jump(self):
        self._emit(f"if {self._cond(self.c.integer(1, 2))}:")
        self.indent += 1
        self._emit(self.c.choice(("break", "continue")))
        self.indent -= 1

    def _stmt_return(self):
        self._emit(f"if {self._cond(self.c.integer(1, 2))}:")
        self.indent += 1
        self._emit(f"return {self._return_value()}".rstrip())
        self.indent -= 1

    def _return_value(self):
        returns = self.sig.returns
        if not returns:  # an in-place helper: nothing, or a tail call of one
            same = [s for s in self._callees() if s.returns == ()]
            if self.guarded and same and self._may_call() and self.c.chance(0.25):
                return self._call_text(self.c.choice(same), byref=True)
            return ""
        if self._may_call() and self.c.chance(0.25):
            same = [s for s in self._callees() if s.returns == returns]
            callee = self.c.choice(same)
            call = self._call_text(callee, byref=True)  # the whole value: nothing reads after it
            if self.guarded:
                return call  # a tail call
            other = self._results(returns)
            return f"{call} if d > 0 else {_paren(other) if len(returns) > 1 else other}"
        return self._results(returns)

    def _results(self, returns):
        """Return values; of the arrays, only the first may be a name (a
        result must not alias another one, nor an array the caller holds)."""
        values, bare = [], True
        for kind in returns:
            if is_array(kind):
                values.append(self._array_value(kind, bare_ok=bare))
                bare = False
            else:
                values.append(self._value(kind))
        return ", ".join(values)

    # ---- expressions -----------------------------------------------------

    def _value(self, kind):
        """An expression of `kind` within its bound (wrapped if it could leave it)."""
        if kind == BOOL:
            return self._cond(self.c.integer(1, 3))
        if is_array(kind):
            return self._array_value(kind)
        e = self._expr(kind, self.c.integer(1, MAX_LEAVES))
        return self._wrap(e, kind)

    # ---- arrays (vectors=True) -------------------------------------------

    def _array_value(self, kind, fresh=True, bare_ok=False):
        """An array expression of `kind` within the bounds.  `fresh`: a new
        array (`+ 0` after a name, a slice or a table), unless `bare_ok` and
        it is a name that no other name can reach (the function's own)."""
        e = self._vexpr(kind, self.c.integer(1, 3))
        text = self._wrap(e, elem_of(kind))
        if not fresh or e.fresh or text != e.text:
            return text
        if bare_ok and text in self.scope and text not in self.frozen:
            return text
        return f"{_paren(text)} + {'0' if elem_of(kind) == INT else self.c.choice(('0', '0.0'))}"

    def _vexpr(self, kind, leaves, const_ok=False) -> _Expr:
        """An array expression of `kind` (`int[4]`): elementwise arithmetic.
        `const_ok`: it may be the same on every example (else, where
        "constant_arrays" is avoided, it is per example)."""
        elem, shape = elem_of(kind), shape_of(kind)
        if leaves <= 1:
            return self._vatom(kind, const_ok)
        op = self.c.choice(("+", "-", "*", "scalar", "scalar", "neg", "abs", "mod", "ifexp", "call"))
        if op == "ifexp" and not self._based(kind):  # both sides could be constants
            op = "+"
        if op == "scalar" and self.same_rank:  # see "subscript_of_broadcast"
            op = "*"
        if op in ("neg", "abs"):
            inner = self._vexpr(kind, leaves - 1, const_ok)
            text = f"-{_paren(inner.text)}" if op == "neg" else f"abs({inner.text})"
            return _Expr(text, inner.bound, inner.leaves, const=inner.const)
        if op == "mod":
            inner = self._vexpr(kind, leaves - 1, const_ok)
            if elem == INT:
                k = self.c.choice(self._positive((7, 10, 97, -13)))
                return _Expr(f"{_paren(inner.text)} % {k}", abs(k), inner.leaves + 1, const=inner.const)
            return _Expr(f"{_paren(inner.text)} % 2.5", 2.5, inner.leaves + 1, const=inner.const)
        if op == "call":
            call = self._call_expr(kind)
            return call if call is not None else self._vexpr(kind, leaves - 1, const_ok)
        if op == "ifexp":
            left, right = self._vexpr(kind, leaves - 1), self._vatom(kind)
            return _Expr(f"{_paren(left.text)} if {self._cond(1)} else {_paren(right.text)}",
                         max(left.bound, right.bound), left.leaves + right.leaves, left.fresh and right.fresh)
        split = self.c.integer(1, leaves - 1)
        left = self._vexpr(kind, split, const_ok)
        if op == "scalar":  # an array with a number per example
            mixed = elem == FLOAT and self.c.chance(0.25)
            if left.const and "scalar_with_constant_array" in self.avoid:
                right = self._leaf_literal(INT if mixed else elem)
            else:
                right = self._expr(INT if mixed else elem, leaves - split)
                right.text = self._scalar_for_array(right.text)
            right.const = left.const
            op = self.c.choice(("+", "-", "*"))
            if self.c.chance(0.3):
                left, right = right, left
        else:
            mixed = elem == FLOAT and self.c.chance(0.2)
            other = array_type(INT if mixed else elem, shape)
            lower_ok = not (left.const and "scalar_with_constant_array" in self.avoid)
            if len(shape) == 2 and not self.same_rank and lower_ok and self.c.chance(0.3):  # a row per example
                other = array_type(INT if mixed else elem, shape[1:])
            # a constant meets a per-example array here: broadcast from the right
            right = self._vexpr(other, leaves - split, const_ok=True)
            if left.const and not right.const:
                left, right = right, left
        bound = left.bound * right.bound if op == "*" else left.bound + right.bound
        return _Expr(f"{_paren(left.text)} {op} {_paren(right.text)}", bound, left.leaves + right.leaves,
                     const=left.const and right.const)

    def _table_index(self, text):
        """A constant table's index: per example unless it is a literal (see
        "constant_table_index")."""
        if "constant_table_index" in self.avoid and not re.fullmatch(r"-?\d+", text):
            return f"{_paren(text)} + d * 0"
        return text

    def _scalar_for_array(self, text):
        """A number that meets an array: made per example where a constant
        would trip "constant_scalar_with_array" or "constant_into_region"."""
        if {"constant_scalar_with_array", "constant_into_region"} & self.avoid:
            return f"{_paren(text)} + d * 0"
        return text

    def _leaf_literal(self, kind):
        value = self.c.choice(INT_LITERALS if kind == INT else FLOAT_LITERALS)
        return _Expr(repr(value), abs(value), 1)

    def _vatom(self, kind, const_ok=False) -> _Expr:
        """A name, a new array, a slice or row of another, a table or a call."""
        const_ok = const_ok or "constant_arrays" not in self.avoid
        elem, shape = elem_of(kind), shape_of(kind)
        limit = INT_BOUND if elem == INT else FLOAT_BOUND
        options = ["new", "new"]
        names = [n for n, t in self.scope.items() if t == kind]
        options += ["name"] * (3 * bool(names))
        longer = [n for n, t in self.scope.items() if is_array(t) and elem_of(t) == elem
                  and len(shape_of(t)) == 1 and len(shape) == 1
                  and any(slice_length(sl, shape_of(t)[0]) == shape[0] for sl in SLICES)]
        options += ["slice"] * bool(longer)
        rows = [n for n, t in self.scope.items() if is_array(t) and elem_of(t) == elem
                and len(shape_of(t)) == 2 and len(shape) == 1 and shape[0] in shape_of(t)]
        options += ["row"] * bool(rows)
        tables = [t for t in self.tables if not t.is_tuple and t.elem == elem
                  and ((t.shape == shape and const_ok) or (len(t.shape) == 2 and t.shape[1:] == shape))]
        options += ["table"] * bool(tables)
        if self._may_call() and any(kind in s.returns for s in self.signatures):
            options.append("call")
        form = self.c.choice(options) if self.reads < 2 else self.c.choice(("new", "name") if names else ("new",))
        if form == "call" and "constant_arrays" in self.avoid and not self._callees(kind):
            form = "new"
        if form == "name":
            return _Expr(self.c.choice(names), limit, 1, fresh=False)
        if form == "slice":
            name = self.c.choice(longer)
            size = shape_of(self.scope[name])[0]
            sl = self.c.choice([sl for sl in SLICES if slice_length(sl, size) == shape[0]])
            return _Expr(f"{name}[{sl}]", limit, 1, fresh=False)
        if form == "row":
            name = self.c.choice(rows)
            rows_, cols = shape_of(self.scope[name])
            if cols == shape[0] and (rows_ != shape[0] or self.c.chance(0.5)):
                return _Expr(f"{name}[{self._index(rows_)}]", limit, 1, fresh=False)
            return _Expr(f"{name}[:, {self._index(cols)}]", limit, 1, fresh=False)
        if form == "table":
            table = self.c.choice(tables)
            if table.shape == shape:
                return _Expr(table.name, table.bound, 1, fresh=False, const=True)
            index = self._table_index(self._index(table.shape[0]))
            const = _is_constant(index)
            if const_ok or not const:
                return _Expr(f"{table.name}[{index}]", table.bound, 1, fresh=False, const=const)
        if form == "call":
            call = self._call_expr(kind)
            if call is not None:
                return call
        return self._new_array(kind, const_ok)

    def _new_array(self, kind, const_ok=True):
        e = self._constant_array(kind)
        names = [n for n, t in self.scope.items() if t == kind]
        if not const_ok and names:  # see "constant_arrays"
            return _Expr(f"{self.c.choice(names)} * 0 + {e.text}", e.bound, 1)
        return e

    def _constant_array(self, kind):
        elem, shape = elem_of(kind), shape_of(kind)
        dims = str(shape[0]) if len(shape) == 1 else str(shape)
        size = 1
        for n in shape:
            size *= n
        options = ["zeros", "ones"] + (["arange"] if elem == INT or len(shape) == 1 else [])
        form = self.c.choice(options)
        if form == "arange":
            text = f"np.arange({size})" if len(shape) == 1 else f"np.arange({size}).reshape{shape}"
            if elem == FLOAT:
                text = self.c.choice((f"np.arange({size}.0)", f"np.linspace(-1.0, 1.0, {size})"))
            return _Expr(text, size, 1, const=True)
        dtype = ", dtype=np.int64" if elem == INT else ""
        return _Expr(f"np.{form}({dims}{dtype})", 1, 1, const=True)

    def _slice(self, size):
        """A static slice of an axis of `size` with at least one element."""
        return self.c.choice([sl for sl in SLICES if slice_length(sl, size) > 0])

    def _index(self, size):
        """An int index into an axis of `size` elements: in range on every
        example (but, rarely, not, in a program that may raise)."""
        if self.unsafe and self.c.chance(0.08):
            return self._unsafe_index(size)
        self.reads += 1
        try:
            named = [n for n, (lo, hi) in self.ranges.items() if n in self.scope and -size <= lo and hi < size]
            tables = [t for t in self.tables if t.fits(size)] if self.reads < 2 else []
            sizes = [f"len({n})" for n, t in self.scope.items() if is_array(t) and shape_of(t)[0] == size]
            forms = ["literal", "mod", "mod", "negative"] + ["name"] * (4 * bool(named)) + ["table"] * bool(tables)
            form = self.c.choice(forms)
            if form == "literal":
                return str(self.c.integer(-size, size - 1))
            if form == "name":
                name = self.c.choice(named)
                lo, hi = self.ranges[name]
                step = self.c.integer(0, 3)
                if step == 1 and lo >= 0:  # counts down while `name` counts up
                    return f"{self.c.choice(sizes) if sizes else size} - 1 - {name}"
                if step == 2 and hi + 1 < size:
                    return f"{name} + 1"
                if step == 3 and lo - 1 >= -size:
                    return f"{name} - 1"
                return name
            if form == "table":
                table = self.c.choice(tables)
                return f"{table.name}[{self._table_index(self._index(table.shape[0]))}]"
            e = _paren(self._expr(INT, self.c.integer(1, 2)).text)
            modulus = self.c.choice(sizes) if sizes and self.c.chance(0.4) else str(size)
            if "divisor_made_per_example" in self.avoid:
                modulus = str(size)  # not `len(v)`
            if form == "negative":
                return f"-({e} % {modulus}) - 1" if self.c.chance(0.5) else f"{e} % {modulus} - {modulus}"
            return f"{e} % {modulus}"
        finally:
            self.reads -= 1

    def _unsafe_index(self, size):
        """An index that may be out of range (the batched call must raise IndexError then)."""
        self.raises = True
        ints = [n for n, t in self.scope.items() if t == INT]
        form = self.c.choice(("name", "wide", "shifted"))
        if form == "name" and ints:
            return self.c.choice(ints)
        # a name, not a constant: a constant index out of range is refused when compiling
        e = self.c.choice(ints) if ints else "d"
        if form == "wide":
            return f"{e} % {size + self.c.integer(1, 3)}"  # a literal
        return f"{e} % {size} + 1" if self.c.chance(0.5) else f"-({e} % {size}) - 2"

    def _element(self, kind) -> Optional[_Expr]:
        """A read of one element (`v[i]`, `m[i, j]`, `T0[k]`, `v[1:3][k]`,
        `(v + w)[k]`), or for an int a length (`len(v)`), or None."""
        arrays = [n for n, t in self.scope.items() if is_array(t) and elem_of(t) == kind]
        tables = [t for t in self.tables if t.elem == kind]
        options = ["array"] * (3 * bool(arrays)) + ["table"] * bool(tables)
        if kind == INT and (self.tables or any(is_array(t) for t in self.scope.values())):
            options.append("length")
        if self.reads < 1 and self.c.chance(0.1):
            options.append("expression")
        if not options:
            return None
        form = self.c.choice(options)
        limit = INT_BOUND if kind == INT else FLOAT_BOUND
        if form == "length":
            forms = [(f"len({t.name})", t.shape[0]) for t in self.tables]
            for n, t in self.scope.items():
                if is_array(t):
                    shape = shape_of(t)
                    k = self.c.integer(0, len(shape) - 1)
                    size = 1
                    for m in shape:
                        size *= m
                    forms += [(f"len({n})", shape[0]), (f"{n}.shape[{k}]", shape[k]), (f"{n}.size", size),
                              (f"{n}.ndim", len(shape))]
            text, value = self.c.choice(forms)
            return _Expr(text, value, 1)
        if form == "table":
            table = self.c.choice(tables)
            if len(table.shape) == 1:
                return _Expr(f"{table.name}[{self._table_index(self._index(table.shape[0]))}]", table.bound, 1)
            i, j = self._table_index(self._index(table.shape[0])), self._table_index(self._index(table.shape[1]))
            text = f"{table.name}[{i}, {j}]" if self.c.chance(0.6) else f"{table.name}[{i}][{j}]"
            return _Expr(text, table.bound, 1)
        if form == "expression":  # an element of an array expression
            kinds = [t for t in self.array_types if elem_of(t) == kind and self._based(t)]
            if not kinds:
                return self._leaf_literal(kind)
            kind_ = self.c.choice(kinds)
            self.same_rank = "subscript_of_broadcast" in self.avoid
            try:
                e = self._vexpr(kind_, self.c.integer(1, 2))
            finally:
                self.same_rank = False
            base = _paren(self._wrap(e, kind))
        else:
            name = self.c.choice(arrays)
            kind_, base = self.scope[name], name
        shape = shape_of(kind_)
        bound = limit  # what every element of an array stays within
        if len(shape) == 1:
            if self.c.chance(0.15):
                sl = self._slice(shape[0])
                return _Expr(f"{base}[{sl}][{self._index(slice_length(sl, shape[0]))}]", bound, 1)
            return _Expr(f"{base}[{self._index(shape[0])}]", bound, 1)
        i, j = self._index(shape[0]), self._index(shape[1])
        form = self.c.choice(("pair", "pair", "chain", "column"))
        if form == "pair":
            return _Expr(f"{base}[{i}, {j}]", bound, 1)
        if form == "chain":
            return _Expr(f"{base}[{i}][{j}]", bound, 1)
        return _Expr(f"{base}[:, {j}][{i}]", bound, 1)

    def _guarded_read(self, kind) -> Optional[Tuple[str, str, str]]:
        """(test, read, name): a read of `v[i]` for any int `i`, behind a test
        that it is in range (`0 <= i < len(v)`), as `and`/`or`/`if-else` would
        put it: the batched code must not read it (nor raise) elsewhere."""
        arrays = [(n, shape_of(t)[0]) for n, t in self.scope.items()
                  if is_array(t) and elem_of(t) == kind and len(shape_of(t)) == 1]
        arrays += [(t.name, t.shape[0]) for t in self.tables if t.elem == kind and len(t.shape) == 1]
        ints = [n for n, t in self.scope.items() if t == INT]
        if not arrays or not ints:
            return None
        array, size = self.c.choice(arrays)
        name = self.c.choice(ints)
        size_text = self.c.choice((str(size), f"len({array})"))
        index = self._table_index(name) if re.fullmatch(r"T\d+", array) else name
        return f"0 <= {name} < {size_text}", f"{array}[{index}]", f"{name} < 0 or {name} >= {size_text}"

    def _positive(self, options):
        """Literal divisors: `options` without the negative ones while
        "divisor_made_per_example" is avoided."""
        if "divisor_made_per_example" in self.avoid:
            return tuple(o for o in options if float(o) > 0)
        return options

    def _varying(self, text):
        """`text`, the numerator of a computed divisor (`(e % k + 1)`):
        made per example (`+ d * 0`) where it is the same on every example,
        while "divisor_made_per_example" is avoided (a divisor is then a
        positive literal or differs per example)."""
        if "divisor_made_per_example" in self.avoid and _is_constant(text):
            return f"({text} + d * 0)"
        return text

    def _wrap(self, e, kind):
        assert kind != INT or e.bound < 2**62, e
        if kind == INT and e.bound > INT_BOUND:
            wrap = self.c.choice(self._positive(INT_WRAPS))
            shift = f" - {wrap // 2}" if wrap > 0 and self.c.chance(0.3) else ""
            return f"{_paren(e.text)} % {wrap}{shift}"
        if kind == FLOAT and e.bound > FLOAT_BOUND:
            return f"{_paren(e.text)} % {self.c.choice(self._positive((100.0, 7.5, -20.0)))}"
        return e.text

    def _expr(self, kind, leaves) -> _Expr:
        if self.features:
            e = self._feature_expr(kind, leaves)
            if e is not None:
                return e
        if leaves <= 1:
            return self._leaf(kind)
        ops = ("+", "-", "*", "ifexp", "neg", "div", "mod", "abs", "call", "value_or")
        op = self.c.choice(ops + (("guarded_read",) if self.vectors else ()))
        if op == "guarded_read":  # `v[i] if 0 <= i < len(v) else e`: reads only where in range
            guarded = self._guarded_read(kind)
            if guarded is None:
                return self._expr(kind, leaves)
            test, read, outside = guarded
            other = self._expr(kind, leaves - 1)
            bound = max(other.bound, INT_BOUND if kind == INT else FLOAT_BOUND)
            if self.c.chance(0.5):
                return _Expr(f"{read} if {test} else {_paren(other.text)}", bound, other.leaves + 1)
            return _Expr(f"{_paren(other.text)} if {outside} else {read}", bound, other.leaves + 1)
        if op in ("neg", "abs"):
            inner = self._expr(kind, leaves)
            text = f"-{_paren(inner.text)}" if op == "neg" else f"abs({inner.text})"
            return _Expr(text, inner.bound, inner.leaves)
        if op == "call":
            return self._call_expr(kind) or self._expr(kind, leaves)
        if op == "ifexp":
            test = self._cond(1)
            left = self._expr(kind, leaves - 1)
            right = self._expr(kind, 1)
            return _Expr(f"{_paren(left.text)} if {test} else {_paren(right.text)}",
                         max(left.bound, right.bound), left.leaves + right.leaves + 1)
        if op == "value_or":  # Python's `a or b` is a value: a if a else b
            if kind != INT:
                return self._expr(kind, leaves)
            left, right = self._expr(kind, 1), self._expr(kind, 1)
            word = self.c.choice(("or", "and"))
            return _Expr(f"{_paren(left.text)} {word} {_paren(right.text)}",
                         max(left.bound, right.bound), 2)
        split = self.c.integer(1, leaves - 1)
        left = self._expr(kind, split)
        if op in ("div", "mod"):
            return self._divide(kind, op, left, leaves - split)
        # An int may meet a float, as in Python (which promotes it; so must
        # the batched code, where TensorFlow alone would refuse).
        mixed = kind == FLOAT and self.c.chance(0.2)
        right = self._expr(INT if mixed else kind, leaves - split)
        bound = left.bound * right.bound if op == "*" else left.bound + right.bound
        return _Expr(f"{_paren(left.text)} {op} {_paren(right.text)}", bound, left.leaves + right.leaves)

    def _divide(self, kind, op, left, leaves):
        if kind == INT:
            k = self.c.integer(2, 9)
            if self.c.chance(0.4):
                divisor = self.c.choice(self._positive((1, 2, 3, 7, -1, -3)))
                text, size = str(divisor), abs(divisor)
            else:
                inner = _paren(self._varying(self._expr(INT, leaves).text))
                text, size = f"({inner} % {k} + 1)", k
                if self.c.chance(0.3):
                    text = f"(-{text})"
            if op == "div":
                return _Expr(f"{_paren(left.text)} // {text}", left.bound, left.leaves + 1)
            return _Expr(f"{_paren(left.text)} % {text}", size, left.leaves + 1)
        inner = _paren(self._expr(FLOAT, leaves).text)
        if op == "div":
            return _Expr(f"{_paren(left.text)} / ({inner} * {inner} + 1.0)", left.bound, left.leaves + 1)
        return _Expr(f"{_paren(left.text)} % 2.5", 2.5, left.leaves + 1)

    def _leaf(self, kind) -> _Expr:
        if self.vectors and self.reads < 2 and self.c.chance(0.3):
            element = self._element(kind)
            if element is not None:
                return element
        names = [n for n, t in self.scope.items() if t == kind]
        names += [n + BOX_FORMS[t[1]][1] for n, t in self.scope.items() if isinstance(t, tuple) and t[0] == kind]
        if names and self.c.chance(0.7):
            return _Expr(self.c.choice(names), INT_BOUND if kind == INT else FLOAT_BOUND, 1)
        value = self.c.choice(INT_LITERALS if kind == INT else FLOAT_LITERALS)
        return _Expr(repr(value), abs(value), 1)

    def _cond(self, leaves) -> str:
        """A bool expression with about `leaves` comparisons."""
        if leaves > 1:
            op = self.c.choice(("and", "or", "not"))
            if op == "not":
                return f"not {_paren(self._cond(leaves - 1))}"
            split = self.c.integer(1, leaves - 1)
            return f"{_paren(self._cond(split))} {op} {_paren(self._cond(leaves - split))}"
        if self.features:
            cond = self._feature_cond()
            if cond is not None:
                return cond
        bools = [n for n, t in self.scope.items() if t == BOOL]
        if bools and self.c.chance(0.2):
            return self.c.choice(bools)
        if not self.guarded and self._may_call() and self.c.chance(0.1):
            call = self._call_expr(INT, guarded=True)
            if call is not None:  # short-circuit: the call runs only where d > 0
                return f"d > 0 and {call.text} {self.c.choice(COMPARISONS)} {self._leaf(INT).text}"
        if self.vectors and self.c.chance(0.12):
            kind = self.c.choice((INT, FLOAT))
            guarded = self._guarded_read(kind)
            if guarded is not None:  # the read runs only where the test lets it
                test, read, outside = guarded
                comparison = f"{read} {self.c.choice(COMPARISONS)} {_paren(self._leaf(kind).text)}"
                if self.c.chance(0.5):
                    return f"{test} and {comparison}"
                return f"{outside} or {comparison}"
        kind = self.c.choice((INT, INT, FLOAT))
        mixed = kind == FLOAT and self.c.chance(0.2)  # a float compared with an int
        left, right = self._expr(kind, self.c.integer(1, 2)), self._expr(INT if mixed else kind, 1)
        if self.c.chance(0.1):
            third = self._expr(kind, 1)
            return f"{_paren(left.text)} < {_paren(right.text)} <= {_paren(third.text)}"
        return f"{_paren(left.text)} {self.c.choice(COMPARISONS)} {_paren(right.text)}"

    # ---- the construct families of issue 29 (features) ----------------------

    def _use(self, family, scale=1.0) -> bool:
        """Whether this place uses `family` (no draw at all where it is off)."""
        p = self.features.get(family, 0.0)
        return p > 0 and self.c.chance(min(1.0, p * scale))

    def _pure(self, text) -> bool:
        """Whether `text` is a plain Python number or bool in the plain run,
        never a NumPy scalar (which `isinstance(n, int)`, `is True` and
        `pow(a, b, m)` tell apart): always, without arrays; with them, when
        it reads no element, table, reduction or call (lengths are ints) and
        no name that may hold a NumPy scalar."""
        if not self.vectors:
            return True
        text = re.sub(r"len\(\w+\)|\w+\.(shape\[-?\d+\]|size|ndim)", "0", text)
        if "[" in text or re.search(r"\bf\d+\(", text):
            return False
        numpy = self.numpy_names | {n for n, t in self.scope.items() if is_array(t)}
        numpy |= {t.name for t in self.tables}
        return not set(re.findall(r"[A-Za-z_]\w*", text)) & numpy

    def _taint(self, names, text):
        """`names` were assigned `text`: they may hold a NumPy scalar if it may."""
        if self.vectors and not self._pure(text):
            self.numpy_names.update(names)

    def _fit(self, e: _Expr, kind) -> _Expr:
        """`e` within the bound of its type (wrapped if it could leave it)."""
        text = self._wrap(e, kind)
        if text == e.text:
            return e
        return _Expr(text, 1000 if kind == INT else 100.0, e.leaves)

    def _named(self, kind) -> str:
        """A name of `kind` (a number per example, not a literal), else `d`."""
        names = [n for n, t in self.scope.items() if t == kind]
        if not names:
            return "d" if kind == INT else "float(d)"
        return self.c.choice(names)

    def _vectors(self, elem=None, tables=True):
        """1-D arrays in scope (and 1-D tables) of `elem` if given: (text, length)."""
        found = [(n, shape_of(t)[0]) for n, t in self.scope.items()
                 if is_array(t) and len(shape_of(t)) == 1 and (elem is None or elem_of(t) == elem)]
        if tables:
            found += [(t.name, t.shape[0]) for t in self.tables
                      if len(t.shape) == 1 and (elem is None or t.elem == elem)]
        return found

    def _feature_statement(self) -> bool:
        """A statement of a family (True), or nothing drawn here (False)."""
        deep = self.indent > MAX_NESTING or self.budget < 2
        inplace = [s for s in self._callees() if s.inplace]
        if inplace and self._may_call() and self._use("inplace"):
            self._stmt_inplace_call(inplace)
            return True
        if self._arrays(owned=True) and self._use("swaps"):
            self._stmt_swap()
            return True
        if not deep and self._vectors() and self._use("for_vectors"):
            self._stmt_for_vector()
            return True
        if self._use("builtins", 0.3):
            self._stmt_divmod()
            return True
        return False

    def _feature_expr(self, kind, leaves) -> Optional[_Expr]:
        if self._use("builtins"):
            e = self._builtin_expr(kind, leaves)
            if e is not None:
                return e
        if kind == INT and self._use("bits"):
            return self._bits_expr(leaves)
        if leaves > 1 and self._use("bool_arith"):
            # a comparison as a number: always the right operand of an int or float
            left = self._expr(kind, leaves - 1)
            op = self.c.choice(("+", "-", "*", "+"))
            bound = left.bound if op == "*" else left.bound + 1
            return _Expr(f"{_paren(left.text)} {op} ({self._cond(1)})", bound, left.leaves + 1)
        return None

    def _feature_cond(self) -> Optional[str]:
        if self._use("identity"):
            return self._identity_cond()
        if self._use("membership"):
            return self._membership_cond()
        if self._use("builtins", 0.5):
            return self._builtin_cond()
        return None

    # builtins

    def _builtin_expr(self, kind, leaves) -> Optional[_Expr]:
        """A builtin or `math` call of type `kind`, within its bound."""
        if kind == INT:
            forms = ["minmax", "minmax", "pow", "powmod", "round", "int", "floor", "ceil", "isqrt",
                     "gcd", "digits", "popcount", "round2"]
        else:
            forms = ["minmax", "minmax", "float", "sqrt", "log", "log"]
        if self.reads < 2 and self._vectors(kind):
            forms += ["sum", "extremum"]
        if self.reads < 2 and self._vectors(kind, tables=False):
            forms += ["sorted"]
        form = self.c.choice(forms)
        small = max(1, min(2, leaves))
        if form == "minmax":
            args = [self._expr(kind, self.c.integer(1, small)) for _ in range(self.c.integer(2, 3))]
            text = f"{self.c.choice(('min', 'max'))}({', '.join(a.text for a in args)})"
            return self._fit(_Expr(text, max(a.bound for a in args), sum(a.leaves for a in args)), kind)
        if form in ("sum", "extremum", "sorted"):
            name, size = self.c.choice(self._vectors(kind, tables=form != "sorted"))
            bound = INT_BOUND if kind == INT else FLOAT_BOUND
            table = next((t for t in self.tables if t.name == name), None)
            if table is not None:
                bound = table.bound
            if form == "sum":
                start = ""
                refused = table is not None and "sum_of_a_table_from_a_per_example_start" in self.avoid
                if self.c.chance(0.2) and not refused:
                    start = f", {self._leaf(kind).text}"
                return self._fit(_Expr(f"sum({name}{start})", size * bound + bound, 1), kind)
            if form == "extremum":
                return _Expr(f"{self.c.choice(('min', 'max'))}({name})", bound, 1)
            reverse = ", reverse=True" if self.c.chance(0.3) else ""
            return _Expr(f"sorted({name}{reverse})[{self._index(size)}]", bound, 1)
        if form in ("round", "int", "floor", "ceil"):
            x = self._fit(self._expr(FLOAT, small), FLOAT)
            call = {"round": "round", "int": "int", "floor": "math.floor", "ceil": "math.ceil"}[form]
            return self._fit(_Expr(f"{call}({x.text})", x.bound + 1, x.leaves), INT)
        if form == "pow":  # a small power: |base| <= 100
            base = self._fit(self._expr(INT, small), INT)
            k = self.c.integer(0, 3)
            text = f"pow({_paren(base.text)} % 100, {k})" if base.bound > 100 else f"pow({base.text}, {k})"
            return self._fit(_Expr(text, min(base.bound, 100) ** k, base.leaves), INT)
        if form == "powmod":  # pow(a, b, m): non-negative ints, m >= 1
            base = self._fit(self._expr(INT, small), INT)
            args = [f"abs({base.text})", f"abs({_paren(self._expr(INT, 1).text)}) % 20"]
            if self.c.chance(0.5):
                m = self.c.choice((1, 2, 7, 10, 97, 1000))
                args.append(str(m))
                bound = m
            else:
                k = self.c.integer(2, 9)
                args.append(f"{_paren(self._expr(INT, 1).text)} % {k} + 1")
                bound = k
            # 3-argument pow() of a NumPy int raises TypeError: int() makes it a Python int
            args = [a if self._pure(a) else f"int({a})" for a in args]
            return _Expr(f"pow({', '.join(args)})", bound, base.leaves + 2)
        if form == "isqrt":
            n = self._fit(self._expr(INT, small), INT)
            return _Expr(f"math.isqrt(abs({n.text}))", int(n.bound ** 0.5) + 1, n.leaves)
        if form == "gcd":
            a, b = self._fit(self._expr(INT, 1), INT), self._fit(self._expr(INT, small), INT)
            return _Expr(f"math.gcd({a.text}, {b.text})", max(a.bound, b.bound), a.leaves + b.leaves)
        if form == "digits":
            n = self._expr(INT, small)
            return _Expr(f"len(str({n.text}))", 20, n.leaves)
        if form == "popcount":
            n = self._expr(INT, small)
            return _Expr(f'bin({n.text}).count("1")', 63, n.leaves)
        if form == "float":
            n = self._fit(self._expr(INT, small), INT)
            return _Expr(f"float({n.text})", n.bound, n.leaves)
        if form == "round2":  # of an int: the int (of a float it is refused, see the docstring)
            n = self._expr(INT, small)
            return _Expr(f"round({n.text}, 2)", n.bound, n.leaves)
        if form == "sqrt":
            x = self._fit(self._expr(FLOAT, small), FLOAT)
            return _Expr(f"math.sqrt(abs({x.text}))", x.bound ** 0.5 + 1, x.leaves)
        # log of a positive number
        if self.c.chance(0.3):
            n = self._expr(INT, small)
            return _Expr(f"math.log(abs({n.text}) + 1)", 50.0, n.leaves)
        x = self._expr(FLOAT, small)
        return _Expr(f"math.log(abs({x.text}) + 1.0)", 60.0, x.leaves)

    def _builtin_cond(self) -> str:
        forms = ["bool", "isinstance", "isinstance"]
        if self._vectors(tables=False):
            forms += ["any", "any"]
        form = self.c.choice(forms)
        if form == "bool":
            kind = self.c.choice((INT, INT, FLOAT))
            text = f"bool({self._expr(kind, self.c.integer(1, 2)).text})"
            return f"not {text}" if self.c.chance(0.3) else text
        if form == "any":
            name, _ = self.c.choice(self._vectors(tables=False))
            text = f"{self.c.choice(('any', 'all'))}({name})"
            return f"not {text}" if self.c.chance(0.25) else text
        kind = self.c.choice((INT, FLOAT))
        value = self._operand(kind, self.c.integer(1, 2))
        # `isinstance(n, int)` is False of a NumPy int (np.float64 is a float)
        classes = ["float", "int" if kind == FLOAT or self._pure(value) else "float", "bool"]
        if kind == FLOAT or self._pure(value):
            classes.append("(int, float)")
        text = f"isinstance({value}, {self.c.choice(classes)})"
        return f"not {text}" if self.c.chance(0.3) else text

    def _stmt_divmod(self):
        """`q, r = divmod(a, b)` with b never zero."""
        kind = self.c.choice((INT, INT, FLOAT))
        a = self._fit(self._expr(kind, self.c.integer(1, 2)), kind)
        if kind == INT:
            if self.c.chance(0.4):
                b = str(self.c.choice(self._positive((1, 2, 3, 7, -1, -3, 10))))
            else:
                b = f"{_paren(self._varying(self._expr(INT, 1).text))} % {self.c.integer(2, 9)} + 1"
                if self.c.chance(0.3):
                    b = f"-({b})"
        elif self.c.chance(0.5):
            b = str(self.c.choice(self._positive((2.5, -1.5, 1.0, 4.0))))
        else:
            inner = _paren(self._varying(self._expr(FLOAT, 1).text))
            b = f"{inner} * {inner} + 1.0"
        targets = []
        for _ in range(2):
            names = [n for n in self._writable(kind) if n not in targets]
            targets.append(self.c.choice(names) if names and self.c.chance(0.5) else self._new_name(kind))
        self._emit(f"{targets[0]}, {targets[1]} = divmod({a.text}, {b})")
        self.scope.update((t, kind) for t in targets)
        self._taint(targets, f"{a.text}, {b}")

    # identity and membership

    def _operand(self, kind, leaves) -> str:
        """The operand of `isinstance` or `is None`, which the batched code
        does not evaluate: no index out of range in it (see
        "index_error_inside_isinstance")."""
        unsafe = self.unsafe
        if "index_error_inside_isinstance" in self.avoid:
            self.unsafe = False
        try:
            return self._expr(kind, leaves).text
        finally:
            self.unsafe = unsafe

    def _identity_cond(self) -> str:
        form = self.c.choice(("flag", "flag", "none"))
        if form == "flag":
            bools = [n for n, t in self.scope.items() if t == BOOL and self._pure(n)]
            flag = self.c.choice(bools) if bools and self.c.chance(0.4) else f"({self._cond(1)})"
            if self._pure(flag):  # a NumPy bool is never the object True
                return f"{flag} {self.c.choice(('is True', 'is not False', 'is False', 'is not True'))}"
        kind = self.c.choice((INT, FLOAT))
        value = self._named(kind) if self.c.chance(0.5) else self._operand(kind, 2)
        if not re.search(r"[A-Za-z_]", value):  # `5 is None`: a SyntaxWarning, and not per example
            value = self._named(kind)
        return f"{_paren(value)} {self.c.choice(('is None', 'is not None'))}"

    def _membership_cond(self) -> str:
        form = self.c.choice(("tuple", "tuple", "range", "range", "vector"))
        containers = [(n, elem_of(t)) for n, t in self.scope.items() if is_array(t)]
        containers += [(t.name, t.elem) for t in self.tables]
        if form == "vector" and containers:
            name, elem = self.c.choice(containers)
            kind = elem if self.c.chance(0.8) else self.c.choice((INT, FLOAT))
            item = self._expr(kind, self.c.integer(1, 2)).text
            return f"{_paren(item)} {self.c.choice(('in', 'not in', 'in'))} {name}"
        word = self.c.choice(("in", "in", "not in"))
        if form == "range":
            # a float is in a range only if it equals one of its ints
            floats = "float_in_range" not in self.avoid and self.c.chance(0.1)
            item = self._expr(FLOAT if floats else INT, self.c.integer(1, 2)).text
            per_example = "in_range_of_per_example_bounds" not in self.avoid and self.c.chance(0.5)
            bounds = [self._expr(INT, 1).text if per_example and self.c.chance(0.7)
                      else str(self.c.integer(-5, 12)) for _ in range(2)]
            shape = self.c.choice(("stop", "start", "start", "step"))
            if shape == "stop":
                return f"{_paren(item)} {word} range({bounds[1]})"
            if shape == "start":
                return f"{_paren(item)} {word} range({bounds[0]}, {bounds[1]})"
            return f"{_paren(item)} {word} range({bounds[0]}, {bounds[1]}, {self.c.choice((2, 3, -1, -2))})"
        kind = INT if self.c.chance(0.85) else FLOAT
        item = self._expr(kind, self.c.integer(1, 2)).text
        elements = []
        for _ in range(self.c.integer(1, 4)):
            if self.c.chance(0.25):
                elements.append(self._leaf(self.c.choice((INT, kind))).text)
            else:
                elements.append(repr(self.c.choice(INT_LITERALS)))
        if len(elements) == 1:
            display = f"({elements[0]},)" if self.c.chance(0.7) else f"[{elements[0]}]"
        else:
            display = f"({', '.join(elements)})" if self.c.chance(0.8) else f"[{', '.join(elements)}]"
        return f"{_paren(item)} {word} {display}"

    # bits

    def _bits_expr(self, leaves) -> _Expr:
        """`a << k`, `a >> k`, `a & b`, `a | b`, `a ^ b`, `~a`.  What grows
        the value uses up leaves (a shift by up to 8 of a non-negative int of
        at most INT_BOUND, an operator of two expressions); with one leaf only
        the forms that keep it about where it is, so that a product of
        MAX_LEAVES leaves stays within int64."""
        if leaves <= 1:
            op = self.c.choice((">>", "~", "&", "|", "^"))
        else:
            op = self.c.choice(("<<", ">>", "&", "|", "^", "~", "<<", ">>"))
        if op == "~":
            inner = self._expr(INT, leaves)
            return _Expr(f"~{_paren(inner.text)}", inner.bound + 1, inner.leaves)
        if op == ">>":
            left = self._expr(INT, max(1, leaves - 1))
            if leaves > 1 and self.c.chance(0.4):
                count = f"{_paren(self._expr(INT, 1).text)} % 9"
            else:
                count = str(self.c.integer(0, 8))
            return _Expr(f"{_paren(left.text)} >> {_paren(count)}", left.bound, left.leaves + 1)
        if op == "<<":  # a non-negative int, shifted 0..8 places
            left = self._fit(self._expr(INT, leaves - 1), INT)
            if self.c.chance(0.3):
                count, most = f"{_paren(self._expr(INT, 1).text)} % 9", 8
            else:
                most = self.c.integer(0, 8)
                count = str(most)
            return _Expr(f"abs({left.text}) << {_paren(count)}", left.bound * 2**most, left.leaves + 1)
        if leaves <= 1:  # with a small mask: about the size of the other operand
            left = self._expr(INT, 1)
            mask = self.c.choice((1, 3, 7, 15, 255, 8))
            bound = mask if op == "&" else left.bound + mask
            return _Expr(f"{_paren(left.text)} {op} {mask}", bound, left.leaves)
        split = self.c.integer(1, leaves - 1)
        left = self._expr(INT, split)
        right = self._expr(INT, leaves - split)
        bound = 2 * max(left.bound, right.bound) + 1  # two's complement: within the next power of two
        return _Expr(f"{_paren(left.text)} {op} {_paren(right.text)}", bound, left.leaves + right.leaves)

    # arrays: swaps, for over arrays, in-place helpers

    def _stmt_swap(self):
        """`v[i], v[j] = v[j], v[i]` (elements, not rows: NumPy's rows are
        views, and the compiler refuses to swap them), or an element with a
        name or with another array's element."""
        name = self.c.choice(self._arrays(owned=True))
        kind = self.scope[name]
        calls, self.calls_left = self.calls_left, 0  # indices are written twice: no calls in them
        try:
            first = self._element_target(name)
            form = self.c.choice(("same", "same", "same", "name", "other"))
            names = [n for n in self._writable(elem_of(kind))]
            others = [n for n in self._arrays(owned=True, elem=elem_of(kind)) if n != name]
            if form == "name" and names:
                second = self.c.choice(names)
                self.numpy_names.add(second)
            elif form == "other" and others:
                second = self._element_target(self.c.choice(others))
            else:
                second = self._element_target(name)
        finally:
            self.calls_left = calls
        self._emit(f"{first}, {second} = {second}, {first}")

    def _element_target(self, name) -> str:
        shape = shape_of(self.scope[name])
        if len(shape) == 1:
            return f"{name}[{self._index(shape[0])}]"
        i, j = self._index(shape[0]), self._index(shape[1])
        return f"{name}[{i}, {j}]" if self.c.chance(0.6) else f"{name}[{i}][{j}]"

    def _assign_item(self, name):
        """`name[i] = e`: one element of an array this function owns."""
        target = self._element_target(name)
        self._emit(f"{target} = {self._value(elem_of(self.scope[name]))}")

    def _stmt_for_vector(self):
        """`for x in v`, `for i, x in enumerate(v)`, `for a, b in zip(v, w)`,
        `for x in reversed(v)`, `for k in T0`: the variables are readable in
        the body only (and not rebound); Python iterates the array as the
        body changes it."""
        vectors = self._vectors(tables=False) or self._vectors()
        name, size = self.c.choice(vectors)
        form = self.c.choice(("plain", "plain", "enumerate", "enumerate", "zip", "reversed", "table"))
        x = self._new_name(self._elem_kind(name))
        loop_vars = {x: self._elem_kind(name)}
        if form == "enumerate":
            i = self._new_name(INT)
            start = self.c.choice((0, 0, 1))
            header = f"for {i}, {x} in enumerate({name}{', 1' if start else ''}):"
            loop_vars[i] = INT
            self.ranges[i] = (start, start + size - 1)
        elif form == "zip":
            other, _ = self.c.choice(self._vectors())
            y = self._new_name(self._elem_kind(other))
            loop_vars[y] = self._elem_kind(other)
            header = f"for {x}, {y} in zip({name}, {other}):"
        elif form == "reversed":
            header = f"for {x} in reversed({name}):"
        elif form == "table" and self._vectors() != vectors:
            table, _ = self.c.choice([v for v in self._vectors() if v not in vectors])
            x = self._new_name(self._elem_kind(table))
            loop_vars = {x: self._elem_kind(table)}
            header = f"for {x} in {table}:"
        else:
            header = f"for {x} in {name}:"
        self._emit(header)
        self.readonly.update(loop_vars)
        self.numpy_names.update(n for n, t in loop_vars.items() if n not in self.ranges)
        # the arrays iterated are not rebound in the body: Python would go on
        # over the original while item assignments went to the new one (refused)
        iterated = {n for n in re.findall(r"\w+", header.partition(" in ")[2]) if is_array(self.scope.get(n))}
        pinned = iterated - self.readonly
        self.readonly |= pinned
        self._loop_body(loop_vars=loop_vars)
        self.readonly -= pinned
        for n in loop_vars:
            self.ranges.pop(n, None)

    def _elem_kind(self, name):
        table = next((t for t in self.tables if t.name == name), None)
        return table.elem if table is not None else elem_of(self.scope[name])

    def _inplace_signature(self, name):
        """A helper that assigns items of its arrays (all of them its
        callers' own: never rebound) and returns nothing or an int."""
        params = [("d", INT)]
        for k in range(self.c.integer(1, 3)):
            if k == 0 or self.c.chance(0.3):
                kind = self.c.choice(self.array_types)
                params.append((f"{'m' if len(shape_of(kind)) == 2 else 'v'}{k}", kind))
            else:
                kind = self.c.choice((INT, FLOAT))
                params.append((f"{'n' if kind == INT else 'x'}{k}", kind))
        arrays = frozenset(p for p, t in params if is_array(t))
        return Signature(name, tuple(params), self.c.choice(((), (INT,))), arrays, inplace=True)

    def _stmt_inplace_call(self, callees):
        """`g(d - 1, w)` or `i = g(d - 1, w)`: the helper changes this function's `w`."""
        callee = self.c.choice(callees)
        target = ""
        if callee.returns and self.c.chance(0.6):
            target = self._new_name(INT)
        call = self._call_text(callee, byref=True)
        line = f"{target} = {call}" if target else call
        if self.guarded:
            self._emit(line)
        elif target and self.c.chance(0.4):
            default = self._leaf(INT).text
            self._emit(f"{target} = {call} if d > 0 else {_paren(default)}")
        else:
            self._emit(f"if {self.c.choice(('d > 0', 'd >= 1'))}:")
            self.indent += 1
            self._emit(line)
            self.indent -= 1
            if target:  # bound on every path
                self._emit("else:")
                self.indent += 1
                self._emit(f"{target} = {self._leaf(INT).text}")
                self.indent -= 1
        if target:
            self.scope[target] = INT
            self.numpy_names.add(target)

    # ---- calls -----------------------------------------------------------

    def _tuple_callees(self):
        return [s for s in self._callees() if len(s.returns) > 1]

    def _callees(self, kind=None):
        """The functions this one can pass arguments to (an array argument
        needs an array of its type here, see "constant_arrays"), returning
        `kind` (or an element of a tuple of that type) if given."""
        return [s for s in self.signatures
                if all(self._based(t) for _, t in s.params if is_array(t))
                and (kind is None or kind in s.returns)
                and not ("array_result_of_another_function" in self.avoid and s is not self.sig
                         and any(is_array(t) for t in s.returns))]

    def _call_text(self, callee, byref=False):
        """`callee(d - 1, ...)`; `byref`: an in-place helper may be passed
        arrays of this function by name (the call is a statement or a whole
        value, see "inplace_call_in_expression")."""
        self.calls_left -= 1
        args = ["d - 1"]
        passed = set()
        for name, kind in callee.params[1:]:
            if is_array(kind) and callee.inplace and byref:
                # the caller's own array, changed by the call (never the same one twice)
                names = [n for n in self._arrays(owned=True) if self.scope[n] == kind and n not in passed]
                if names and self.c.chance(0.8):
                    chosen = self.c.choice(names)
                    passed.add(chosen)
                    args.append(chosen)
                    continue
            if is_array(kind):  # a new array where the callee assigns into it
                args.append(self._array_value(kind, fresh=name in callee.mutable))
                continue
            args.append(self._wrap(self._expr(kind, self.c.integer(1, 2)), kind))
        return f"{callee.name}({', '.join(args)})"

    def _may_call(self):
        """Calls left, and not inside two loops (the work would multiply)."""
        return self.calls_left > 0 and self.loops < 2

    def _call_expr(self, kind, guarded=False):
        """A call returning `kind` (an element of a tuple return too), or None.

        Outside `if d > 0:` (and unless `guarded`: the caller writes the
        test) it is `(call if d > 0 else leaf)`.
        """
        if not self._may_call():
            return None
        options = [(s, k) for s in self._callees() for k, r in enumerate(s.returns) if r == kind]
        if not options:
            return None
        callee, index = self.c.choice(options)
        text = self._call_text(callee, byref="inplace_call_in_expression" not in self.avoid)
        if len(callee.returns) > 1:
            text = f"{text}[{index}]"
        bound = INT_BOUND if elem_of(kind) == INT else FLOAT_BOUND
        if not (self.guarded or guarded):
            default = self._vatom(kind, const_ok=True) if is_array(kind) else self._leaf(kind)
            text = f"({text} if d > 0 else {default.text})"
            return _Expr(text, max(bound, default.bound), 2, fresh=default.fresh)
        return _Expr(text, bound, 2)


def _is_constant(text: str) -> bool:
    """Whether an int expression is the same on every example: no names but
    tables and lengths (`len(v)`, `v.shape[0]`, `v.size`, `v.ndim`)."""
    text = re.sub(r"len\(\w+\)|\w+\.(shape\[-?\d+\]|size|ndim)", "0", text)
    return all(re.fullmatch(r"T\d+", name) for name in re.findall(r"[A-Za-z_]\w*", text))


def _paren(text: str) -> str:
    """`text` in parentheses unless it is a name or a non-negative literal."""
    if text.replace("_", "").replace(".", "").isalnum() and not text.startswith("-"):
        return text
    if text.startswith("(") and _balanced_outer(text):
        return text
    return f"({text})"


def _balanced_outer(text):
    depth = 0
    for k, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and k < len(text) - 1:
            return False
    return True


def generate(rng: random.Random, statements: int = 30, max_depth: int = 2, note: str = "",
             vectors: bool = False, avoid=None, features=None) -> Program:
    """A random program from a seeded `random.Random` (same seed, same program).

    `statements`: about how many statements in all (each function has at
    least its return); `max_depth`: the entry's largest `d`; `vectors`:
    per-example arrays, subscripts and constant tables too (without it, a
    seed gives the program it gave before they existed); `avoid`: the
    KNOWN_BUGS constructs to leave out (None: all of them); `features`: the
    construct families of issue 29 to draw, name -> probability (FEATURES
    has them all; None: none, the programs each seed gave before).
    """
    return _Writer(RandomChoices(rng), max_depth, statements, vectors, avoid, features).module(note)


def parse_features(text: str) -> Dict[str, float]:
    """`builtins=0.2,bits=0`, `all`, `none` (or ''): a `features` dict.
    Families not named keep their FEATURES probability after `all`, and
    are off otherwise; a bare name takes its FEATURES probability."""
    features: Dict[str, float] = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        if item == "all":
            features.update(FEATURES)
            continue
        if item == "none":
            features.clear()
            continue
        name, _, value = item.partition("=")
        name = name.strip()
        if name not in FEATURES:
            raise ValueError(f"unknown feature family {name!r}; choose from {', '.join(FEATURES)}")
        features[name] = float(value) if value else FEATURES[name]
    return {name: p for name, p in features.items() if p > 0}


def format_features(features: Dict[str, float]) -> str:
    """The text `parse_features` reads back as `features`."""
    return ",".join(f"{name}={p:g}" for name, p in sorted(features.items())) or "none"


def uses_vectors(seed: int, probability: float) -> bool:
    """Whether program `seed` of `tools/fuzz.py` has arrays (its own draw, so
    that the program's other draws do not depend on `probability`)."""
    return random.Random(f"vectors:{seed}").random() < probability


def programs(statements: int = 30, max_depth: int = 2, vectors: bool = False, avoid=None, features=None):
    """A hypothesis strategy of programs (shrinks toward fewer, smaller constructs)."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw):
        return _Writer(DrawChoices(draw), max_depth, statements, vectors, avoid, features).module()

    return strategy()
