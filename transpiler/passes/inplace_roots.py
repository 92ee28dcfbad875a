"""Which objects the in-place analysis's roots stand for, and how two paths'
roots join (passes/inplace_analysis.py).

A root labels one object made at some site of the function (`("site",
block, index)`, `("old", site)` once the site runs again), a parameter's or
a global's.  Lists and arrays differ in what their items are
(inplace_sharing.makes_list); labels of one path may be permuted before a
join, which is what keeps two lists apart when they trade names.
"""

from __future__ import annotations

import ast
import itertools

from transpiler.ir import instructions as ir
from transpiler.passes.inplace_sharing import join, makes_list, parse


def join_relabelled(before, incoming, is_list):
    """`before` joined with `incoming`, whose new objects may first be
    relabelled: `prev, cur = cur, prev` at the end of a loop body swaps
    which name holds which of two lists, and joined as they are, both
    names would seem to hold both lists (a write into `cur` would then
    reach `prev`).  A root is only a label for one object made at some
    site; any one-to-one relabelling of those of one path keeps every
    name's sharing as it was.  The relabelling that joins into the
    fewest pairs wins (the identity first among equals)."""
    plain = join(before, incoming)
    if before is None or plain == before:
        return plain
    # (candidates: the lists of the names whose sharing differs)
    labels = sorted(
        {
            r
            for name, roots in incoming.items()
            if roots != before.get(name)
            for r, _ in roots
            if r[0] in ("site", "old") and is_list(r)
        }
    )
    if not 2 <= len(labels) <= 5:
        return plain
    best, best_size = plain, sum(len(v) for v in plain.values())
    for order in itertools.permutations(labels):
        mapping = dict(zip(labels, order))
        if all(a == b for a, b in mapping.items()):
            continue
        renamed = {
            name: frozenset((mapping.get(r, r), h) for r, h in roots)
            for name, roots in incoming.items()
        }
        joined = join(before, renamed)
        size = sum(len(v) for v in joined.values())
        if size < best_size:
            best, best_size = joined, size
    return best


def same_statement(block, index, value) -> bool:
    """Whether `value` (a stored value) is a name the same statement
    defined just before: a tuple assignment's temporary
    (`m[i], m[j] = m[j], m[i]`, a row swap: a permutation of the rows,
    which leaves no two slots one object)."""
    if not isinstance(value, ast.Name):
        return False
    origin = block.instructions[index].origin
    for ins in reversed(block.instructions[:index]):
        pattern = getattr(ins, "vars_out", ())
        if value.id in ir.pattern_names(pattern):
            # (`dp[i] = dp[i - 1]` reads its value into a name of its own)
            return not isinstance(pattern, str) and ins.origin == origin
    return False


def is_list(blocks, root) -> bool:
    """Whether the object `root` stands for was made as a Python list
    (inplace_sharing.makes_list); parameters and globals are arrays."""
    if root[0] == "old":
        root = root[1]
    if root[0] != "site":
        return False
    ins = blocks[root[1]].instructions[root[2]]
    if not isinstance(getattr(ins, "expr", None), str):
        return False
    node = parse(ins.expr)
    if len(root) > 3 and isinstance(node, (ast.Tuple, ast.List)):
        node = node.elts[root[3]]
    return makes_list(node)
