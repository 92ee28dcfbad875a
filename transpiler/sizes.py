"""Symbolic sizes: one program for every length of a per-example vector.

A signature names its sizes by symbols (`insertion_sort(int64[n])`); the
program generated for it reads each size off its arguments when called
(`size_n = rt.event_size(v, 0)`), so a call with a vector of another length
runs the same program: nothing under `generated/` changes, no lock line is
added.  XLA still compiles once per concrete shape, as it must; that cache
is the runtime's.

How the compiler stays sound without a symbolic algebra: it compiles the
program twice, with every symbol bound to a different *probe value* each
time (primes that no literal of the user's code holds or neighbours: from
101 up the first time, from 2 up the second, so that a size is once above
and once below the code's constants).  During a compile,
a dimension equal to a probe value is that symbol (`types.symbolic_sizes`):
a placeholder's shape, what `np.zeros_like(v)` returns, a folded `len(v)`.
Anything the program computes from a size (`np.zeros(len(v) + 1)`) is a
plain number that differs between the two compiles; so does any structure
that depends on a size (a loop unrolled over `range(len(v))` at build
time).  Equal lowered programs are therefore the same program for every
size; unequal ones raise `NotSizeGeneric`, and the caller keeps the
concrete signature (one program per shape, as before).

`generalize` turns the signature of a call into its symbolic form: every
per-example size above 0 becomes a symbol, equal sizes the same symbol (so
`dot(u, v)` of two length-8 vectors is `dot(float64[n], float64[n])`).  An
empty axis stays 0.  A length-1 axis is a symbol too (a model of one
dimension runs the sampler's program for every dimension); code that needs
it to be 1 (it broadcasts it against another size, `float(v)`) fails to
compile at the probe sizes, and the call keeps its concrete program.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, Iterable, List, Sequence

from transpiler import types as T
from transpiler.backends import PLACEHOLDER_BATCH  # a probe size must not look like the batch

# Canonical symbol names, in order of first appearance in a signature.
SYMBOLS = ("n", "m", "k", "l", "p", "q", "r", "s", "t", "u")

FIRST_PROBE = 101  # the first compile's probe values are primes from here up (above small constants)


class NotSizeGeneric(Exception):
    """The program's text depends on a symbolic size's value."""


def symbol_name(index: int) -> str:
    return SYMBOLS[index] if index < len(SYMBOLS) else f"n{index}"


def nominal(index: int) -> int:
    """The value a symbol holds in a signature at rest: negative, so that
    nothing can allocate with it before `bind` gives it a probe value, and
    distinct per symbol, so that `(n, m)` and `(n, n)` are different keys."""
    return -(index + 1)


def _map_leaves(pattern, leaf_fn):
    if isinstance(pattern, T.TensorType):
        return leaf_fn(pattern)
    if isinstance(pattern, T.TupleType):
        return T.TupleType(tuple(_map_leaves(e, leaf_fn) for e in pattern.elements), pattern.cls)
    return pattern


def _with_shape(leaf: T.TensorType, shape) -> T.TensorType:
    return T.TensorType(leaf.dtype, tuple(shape), weak=leaf.weak)


def generalize(signature: Sequence) -> tuple:
    """A concrete signature's symbolic form: sizes above 0 become symbols,
    equal sizes one symbol, named in order of first appearance (symbols it
    already has are renamed in the same order: `canonical`)."""
    return _renamed(signature, numbers=True)


def canonical(signature: Sequence) -> tuple:
    """A symbolic signature with its symbols renamed in order of first
    appearance (`float64[d], int64[d, k]` -> `float64[n], int64[n, m]`), so
    that two declarations of one structure are one program."""
    return _renamed(signature, numbers=False)


def _renamed(signature, numbers):
    names: Dict[tuple, T.Size] = {}

    def dim(d):
        if isinstance(d, T.Size):
            key = ("symbol", d.symbol)
        elif numbers and int(d) >= 1:
            key = ("size", int(d))
        else:
            return d
        if key not in names:
            k = len(names)
            names[key] = T.Size(nominal(k), symbol_name(k))
        return names[key]

    return tuple(_map_leaves(p, lambda leaf: _with_shape(leaf, map(dim, leaf.shape))) for p in signature)


# A per-example shape in a signature's text: the brackets right after a dtype.
_DIMS = re.compile(r"(?<=[A-Za-z0-9_])\[([A-Za-z0-9_,\s-]*)\]")


def generalize_text(text: str) -> str:
    """`generalize` on a signature's text, for tools that read headers and
    declarations without the compiler: "(int64[8], float64[8, 3])" ->
    "(int64[n], float64[n, m])"."""
    names: Dict[tuple, str] = {}

    def dim(token):
        token = token.strip()
        if token.lstrip("-").isdigit():
            if int(token) < 1:
                return token
            key = ("size", int(token))
        else:
            key = ("symbol", token)
        if key not in names:
            names[key] = symbol_name(len(names))
        return names[key]

    def dims(match):
        inner = match.group(1).strip()
        return "[" + ", ".join(dim(t) for t in inner.split(",")) + "]" if inner else "[]"

    return _DIMS.sub(dims, text)


def bind(signature: Sequence, values: Sequence[int]) -> tuple:
    """The signature with its k-th symbol (in order of appearance) holding values[k]."""
    order = list(T.symbols_of(signature))
    value = {s: values[k] for k, s in enumerate(order)}

    def dim(d):
        return T.Size(value[d.symbol], d.symbol) if isinstance(d, T.Size) else d

    return tuple(_map_leaves(p, lambda leaf: _with_shape(leaf, map(dim, leaf.shape))) for p in signature)


def matches(program: Sequence, concrete: Sequence) -> bool:
    """True if a call of signature `concrete` can run the program of
    signature `program`: the same structure and dtypes, equal numeric sizes,
    and each symbol one size throughout (a call of two length-8 vectors runs
    `float64[n], float64[m]` as well as `float64[n], float64[n]`)."""
    if len(program) != len(concrete):
        return False
    bound: Dict[str, int] = {}

    def same(p, c):
        if isinstance(p, T.TensorType) and isinstance(c, T.TensorType):
            if p.dtype != c.dtype or len(p.shape) != len(c.shape):
                return False
            for d, size in zip(p.shape, c.shape):
                if isinstance(d, T.Size):
                    if bound.setdefault(d.symbol, int(size)) != int(size):
                        return False
                elif int(d) != int(size):
                    return False
            return True
        if isinstance(p, T.TupleType) and isinstance(c, T.TupleType):
            return (
                p.cls is c.cls
                and len(p.elements) == len(c.elements)
                and all(same(a, b) for a, b in zip(p.elements, c.elements))
            )
        return p is c

    return all(same(p, c) for p, c in zip(program, concrete))


def probe_values(count: int, avoid: Iterable[int], skip: int = 0, start: int = FIRST_PROBE) -> List[int]:
    """`count` primes from `start` up, none of them in `avoid` (the integer
    literals of the code being compiled) or next to one, after the first
    `skip` such primes."""
    avoid = set(avoid)
    out: List[int] = []
    candidate = start
    wanted = count + skip
    while len(out) < wanted:
        if _is_prime(candidate) and not (avoid & {candidate - 1, candidate, candidate + 1}):
            out.append(candidate)
        candidate += 1
    return out[skip:]


def _is_prime(k: int) -> bool:
    return k > 1 and all(k % d for d in range(2, int(k**0.5) + 1))


def literals(texts: Iterable[str]) -> set:
    """Every integer written in the given source texts."""
    return {int(m) for text in texts for m in re.findall(r"\d+", text)}


def compile_generic(signature: Sequence, compile_at: Callable, fingerprint: Callable, avoid: Iterable[int]):
    """Compiles a symbolic signature twice, at two sets of probe values;
    returns the first result if both compiles agree (`fingerprint(result)`,
    a text in which symbols read as their names), else raises NotSizeGeneric
    naming the first line where they differ."""
    count = len(T.symbols_of(signature))
    avoid = set(avoid)
    first = probe_values(count, avoid)
    # Small values, in the opposite order: a program that depends on which
    # side of a constant a size is (`np.zeros(max(len(v), 5))`: its length is
    # len(v) at 101 but 5 at 3) or which of two sizes is the larger differs.
    second = probe_values(count, avoid | {PLACEHOLDER_BATCH}, start=2)[::-1]
    results = []
    for values in (first, second):
        bound = bind(signature, values)
        sizes = [d for d in _dims(bound) if isinstance(d, T.Size)]
        with T.symbolic_sizes(sizes):
            result = compile_at(bound)
            results.append((result, fingerprint(result)))
    (result, a), (_, b) = results
    if a != b:
        raise NotSizeGeneric(_first_difference(a, b))
    return result


def _dims(signature):
    return [d for p in signature for leaf in T.leaves(p) for d in leaf.shape]


def _first_difference(a: str, b: str) -> str:
    """Where two fingerprints first differ, with the source line nearest before it."""
    k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    origins = re.findall(r"origin=Origin\([^)]*\)|[\w./-]+\.py:\d+", a[:k])
    where = f" (near {origins[-1]})" if origins else ""
    return f"the program computes with a size's value{where}: ...{a[max(0, k - 60):k + 40]}..."
