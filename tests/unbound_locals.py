"""Locals that some path reads before assigning (Python's UnboundLocalError).

Shared by tests/test_unbound_locals.py.  Generated modules go to a
temporary folder.
"""

import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-unbound-"))


@ctx.batch
def assigned_in_one_arm(v, x):
    if x > 3:
        y = v[0]
    return y + 1  # <-- unbound where x <= 3


@ctx.batch
def loop_variable_after(v, k):
    for i in range(k):
        v[0] += i
    return i  # <-- unbound where k <= 0


@ctx.batch
def last_match(v, x):
    """The common search idiom: `found` is assigned on every path first."""
    found = -1
    for i in range(len(v)):
        if v[i] == x:
            found = i
    return found


@ctx.batch
def first_pass_sets_previous(v):
    """`previous` is read only on trips after the first assigned it: no
    example raises, though the analysis cannot prove it."""
    total = 0
    for i in range(len(v)):
        if i > 0:
            total += v[i] - previous
        previous = v[i]
    return total
