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


@ctx.batch
def guard_in_and(v, x):
    position = find(v, x)
    return position is not None and position > 1


@ctx.batch
def guard_in_or(v, x):
    position = find(v, x)
    if position is None or position < 2:
        return 0
    return position


@ctx.batch
def guard_in_conditional(v, x):
    position = find(v, x)
    return position * 10 if position is not None else -1


@ctx.batch
def guard_negated(v, x):
    position = find(v, x)
    if not (position is None or x > 4):
        return position + 1
    return 0


@ctx.batch
def flag_guard(v, x):
    # a flag, not a None test, guards the read: Python never evaluates it where None
    position = find(v, x)
    found = position is not None
    return found and position >= 1


@ctx.batch
def best_so_far(v, x):
    # `best = None` then a running maximum, as public code keeps one
    best = None
    for i in range(len(v)):
        if v[i] > x and (best is None or v[i] > best):
            best = v[i]
    return best


@ctx.batch
def hop(links, i):
    j = links[i]
    if j < 0:
        return None
    return j


@ctx.batch
def chain_sum(links, start):
    # walks a linked list whose end is None: `while node is not None`
    total = 0
    node = hop(links, start)
    while node is not None:
        total += node
        node = hop(links, node)
    return total


# Used as a number where it is None: Python raises TypeError in those examples.


@ctx.batch
def unguarded_arithmetic(v, x):
    position = find(v, x)
    return position * 2 + 1


@ctx.batch
def unguarded_order(v, x):
    position = find(v, x)
    if position < 2:
        return 1
    return 0


@ctx.batch
def unguarded_builtin(v, x):
    position = find(v, x)
    return max(abs(position), 1)


@ctx.batch
def unguarded_after_wrong_guard(v, x):
    # the guard tests another value: the read is not safe
    position = find(v, x)
    if x is not None:
        return -position
    return 0
