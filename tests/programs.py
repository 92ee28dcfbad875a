"""Small batched programs that exercise particular passes (not user examples).

Their generated modules go to a temporary folder, never to generated/.
"""

import tempfile

import numpy as np

from transpiler import Context, truthy

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-programs-"))


def square(x):
    """A plain (already batched) helper: a primitive."""
    return x * x


@ctx.batch
def helper_sum(n):
    return n + 1


@ctx.batch
def calls_helper(n):
    # n is live across a call that cannot come back here: no stack needed.
    m = helper_sum(n)
    return m + n


@ctx.batch
def divides(n):
    # Divides by data: not safe to run for every example of a call site, so
    # calls to it stay real calls.
    return 60 // (n + 1)


@ctx.batch
def calls_divider(n):
    m = divides(n)
    return m + n


@ctx.batch
def base_returns(n, acc):
    # The base case only returns: each recursive call site returns it itself.
    if n <= 0:
        return acc
    return base_returns(n - 1, acc + n) + 1


@ctx.batch
def base_clobbers(n, acc):
    # The base case rewrites acc, which the recursive arm reads: a call site
    # running it for every example would clobber acc, so it stays a call.
    if n <= 0:
        acc = acc * 3
        return acc
    return base_clobbers(n - 1, acc + n) + 1


@ctx.batch
def reuse_across_calls(n):
    # n survives two recursive calls in a row: pop + push fuse into a peek.
    if n <= 1:
        return n
    a = reuse_across_calls(n - 1)
    b = reuse_across_calls(n - 2)
    return a + b + n


@ctx.batch
def early_return(n):
    # A returning arm and a calling arm: merged into one block.
    x = n * 2
    if n > 5:
        return n - 100
    return divides(x) + x


@ctx.batch
def early_return_clobbers(n):
    # The returning arm rewrites x, which the calling arm reads: not merged.
    x = n * 2
    if n > 5:
        x = n - 100
        return x
    return divides(x) + x


@ctx.batch
def float_or_int(x, n):
    if x > 0:
        y = x
    else:
        y = n
    return y


@ctx.batch
def weak_literal(x):
    if x > 0.5:
        return 0
    return x * 2


@ctx.batch
def uses_globals(x):
    return np.sqrt(square(x)) + OFFSET


OFFSET = 10.0


@ctx.batch
def countdown_loop(n):
    steps = 0
    while n > 0:
        if n % 2 == 0:
            n = n // 2
        else:
            n = n - 1
        steps += 1
    return steps


@ctx.batch
def triangle_sums(n):
    """Nested loops: the inner loop's exit leads straight to the outer
    loop's `i += 1` and test, which the inner body's branch takes at once
    (passes/branch_threading.py), keeping i, which the inner body reads."""
    total = 0
    i = 0
    while i < n:
        j = 0
        while j < i:
            total += j
            j += 1
        i += 1
    return total


@ctx.batch
def first_square_above(n):
    """A loop whose `if` breaks out or goes on to the increment and test:
    the branch takes that test at once; k is dead after the break."""
    k = 1
    found = 0
    while k < 100:
        if k * k > n:
            found = k
            break
        k += 1
    return found


@ctx.batch
def root_by_operators(a, tol):
    """Newton's square root; the loop test is operators only."""
    x = a
    steps = 0
    while (x * x - a) * (x * x - a) > tol * tol:
        x = 0.5 * (x + a / x)
        steps += 1
    return steps


def magnitude(v):
    """abs for NumPy arrays and TF tensors alike: a primitive."""
    return np.abs(v) if isinstance(v, (np.ndarray, float)) else abs(v)


@ctx.batch
def root_by_primitive(a, tol):
    """The same loop, its test calling a primitive (`magnitude`)."""
    x = a
    steps = 0
    while magnitude(x * x - a) > tol:
        x = 0.5 * (x + a / x)
        steps += 1
    return steps


@ctx.batch
def swap_until_sorted(a, b):
    if a > b:
        a, b = b, a
    return a, b


@ctx.batch
def returns_int(n):
    if n <= 0:
        return n
    return returns_literal(n - 1)


@ctx.batch
def returns_literal(n):
    # Left alone the literal is int64; returns_int called on int32 returns int32.
    return 7


@ctx.batch
def returns_float(n):
    return n * 0.5


@ctx.batch
def uses_truthy(x):
    from_truthy = truthy(x < 0)
    if from_truthy:
        return -x
    return x


@ctx.batch
def loop_calls(n):
    total = 0
    for i in range(n):
        total += reuse_across_calls(i) + helper_sum(i)
    return total


EXECUTIONS = []  # batch sizes seen by count_executions


def count_executions(x):
    EXECUTIONS.append(len(x))
    return x


@ctx.batch
def counted(x):
    if x > 0:
        return count_executions(x)
    return count_executions(x)
