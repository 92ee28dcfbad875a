"""Functions that rule out None before they go on, as public code writes them
(tests/test_none_guards.py).  Generated modules go to a temporary folder."""

import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-none-guards-"))


@ctx.batch
def find(v, x):
    for i in range(len(v)):
        if v[i] == x:
            return i
    return None


@ctx.batch
def index_or_minus_one(v, x):
    position = find(v, x)
    if position is None:
        return -1
    return position


@ctx.batch
def doubled_if_found(v, x):
    position = find(v, x)
    if position is not None:
        return position * 2
    else:
        return 0


@ctx.batch
def first_of_two(v, x, y):
    # a guard that raises, one that continues a loop, a guard inside a guard
    found = find(v, x)
    if found is None:
        found = find(v, y)
        if found is None:
            return -1
        return found + 100
    total = 0
    for k in range(3):
        other = find(v, y + k)
        if other is None:
            continue
        total += other
    return found + total


@ctx.batch
def assigned_again(v, x):
    # after `position = None` the value may be None again: it stays optional
    position = find(v, x)
    if position is None:
        return -5
    nxt = position + 1
    position = None
    if x > 2:
        position = nxt
    return position
