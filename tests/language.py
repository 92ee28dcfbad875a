"""Programs exercising the Python subset (loops, logic, assignments, calls).

Shared by tests/test_language.py; generated modules go to a temporary folder.
"""

import collections
import tempfile

import numpy as np
import tensorflow as tf

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-language-"))

Pair = collections.namedtuple("Pair", ["low", "high"])


@ctx.batch
def collatz_steps(x):
    steps = 0
    while x != 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    return steps


@ctx.batch
def range_sum(a, b, s):
    total = 0
    for i in range(a, b, s):
        total += i
    return total


@ctx.batch
def skip_and_stop(n):
    # while with continue and break, and an `else:` that runs without break
    total = 0
    i = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        if total > 40:
            break
        total += i
    else:
        total = -total
    return total


@ctx.batch
def first_divisor(n):
    # a search loop that returns from inside
    for d in range(2, n):
        if n % d == 0:
            return d
    return n


@ctx.batch
def nested_loops(n):
    count = 0
    for i in range(n):
        for j in range(i):
            if (i + j) % 2 == 0:
                count += 1
    return count


@ctx.batch
def logic(x, y):
    a = x > 0 and y > 0
    b = x > 0 or y > 0
    c = not (x == y)
    d = 0 < x <= y < 10
    e = x if x > y else y
    return a, b, c, d, e


@ctx.batch
def value_logic(x, y):
    # Python's `and`/`or` return an operand, not a bool
    return (x and y), (x or y)


def expensive_positive(x):
    return x > 0


@ctx.batch
def count_down(n):
    if n <= 0:
        return 0
    return count_down(n - 1) + 1


@ctx.batch
def guarded(n):
    # the recursive call runs only where n > 0 (or the stack would overflow)
    ok = n > 0 and count_down(n) == n
    other = n <= 0 or count_down(n) > 0
    pick = count_down(n) if n > 0 else -1
    return ok, other, pick


@ctx.batch
def assignments(x, y):
    a, (b, c) = x, (y, x + y)
    a, b = b, a
    first, *rest = (x, y, a, b)
    _ = c * 2
    p = Pair(x, y)
    q = p._replace(high=p.high + 1)
    x *= 2
    x -= 1
    return a + b + c + first + rest[0] + rest[2] + q.high + p.low + x


@ctx.batch
def loop_with_recursion(n):
    total = 0
    for i in range(n):
        total += count_down(i)
    return total


@ctx.batch
def no_return(x):
    y = x + 1  # noqa: F841 - a function without a return


@ctx.batch
def bare_return(x):
    if x > 0:
        return
    y = x  # noqa: F841


@ctx.batch
def shadowing(np):
    # the parameter `np` shadows the module: it must mean the parameter
    return np + 1


def merged(a, b):
    # a plain helper that shares its name with a runtime helper of the
    # generated module: it must stay the user's
    return a * 10 + b


@ctx.batch
def runtime_names(sweeps):
    carried_of = merged(sweeps, 1)
    while carried_of > 30:
        carried_of = carried_of - 7
    return carried_of


@ctx.batch
def uses_numpy(x):
    # module attributes, nested attributes, any arguments to plain helpers
    return np.sqrt(np.abs(x)) + np.maximum(x, 0.0) + np.hypot(x, 1.0)


@ctx.batch
def uses_tensorflow(x):
    return tf.math.sqrt(tf.math.abs(x)) + tf.nn.relu(x) + tf.math.log1p(tf.math.abs(x))


@ctx.batch
def scaled(x, factor=2, offset=0):
    return x * factor + offset


@ctx.batch
def calls_with_keywords(x):
    # keywords, defaults left out, and keywords out of order
    return scaled(x) + scaled(x, offset=1) + scaled(offset=x, x=3, factor=x)


def make_climber(log_density, step, table):
    """A batched function closing over a function, a float and an array."""
    inner = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-closure-"))

    @inner.batch
    def climb(x, n):
        for _ in range(n):
            if log_density(x + step) > log_density(x):
                x = x + step
            else:
                x = x - step * table[0]
        return x

    return climb


def bump(x):
    return -((x - 1.0) ** 2)


def valley(x):
    return (x - 1.0) ** 2


def checked_sqrt(x):
    if np.any(np.asarray(x) < 0):
        raise ValueError("checked_sqrt of a negative number")
    return np.sqrt(x)


@ctx.batch
def raises_inside(x):
    y = x + 1
    return checked_sqrt(y)
