"""Programs where Python raises on some numbers, written as people write them.

Shared by tests/test_python_errors.py.  On one example, `x / 0.0`,
`math.sqrt(-1.0)`, `math.exp(1000.0)`, `int(float("nan"))` and
`(-8.0) ** 0.5` raise (or, for the last, go complex); array libraries
give inf or NaN instead.  The batched program must stop those examples with
Python's error, naming the line, and must not stop an example whose
guard (`if d != 0`, `x >= 0 and ...`, `... if x > 0 else ...`) keeps
Python from evaluating the operation.

Generated modules go to a temporary folder.
"""

import math
import tempfile
from math import sqrt

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-errors-"))


@ctx.batch
def risky(op, x, y):
    """One risky operation per `op`, unguarded: Python raises where the
    numbers leave its domain."""
    if op == 0:
        return x / y
    if op == 1:
        return x // y
    if op == 2:
        return x % y
    if op == 3:
        return math.sqrt(x)
    if op == 4:
        return math.log(x)
    if op == 5:
        return math.exp(x)
    if op == 6:
        return x**y
    if op == 7:
        return float(int(x))
    if op == 8:
        return math.acos(x)
    if op == 9:
        return float(math.floor(x))
    if op == 10:
        return math.pow(x, y)
    if op == 11:
        return math.log(x, y)
    if op == 12:
        return x**0.5
    return float(round(x))


@ctx.batch
def int_division(a, b):
    """Integers: `//`, `%` and `/` by a per-example zero raise."""
    q = a // b
    r = a % b
    return q * b + r + a / b


@ctx.batch
def guarded(x, d):
    """Every risky operation behind a guard, in the forms public code uses:
    conditional expressions, `and`/`or`, `if` statements, early returns."""
    ratio = x / d if d != 0 else 0.0
    root = math.sqrt(x) if x >= 0 else -sqrt(-x)
    log = math.log(x) if x > 0 else -math.inf
    divides = d != 0 and int(x) % d == 0
    small = d == 0 or x / d < 1.0
    half_power = x**0.5 if x >= 0 else 0.0
    growth = math.exp(x) if x < 700.0 else math.inf
    if d > 0:
        ratio += math.log(d)
    if x <= 0:
        return ratio + root + log + divides + small + half_power
    return ratio + root + log + divides + small + half_power + math.log(growth)


@ctx.batch
def quadratic_root(a, b, c):
    """The larger real root of a x**2 + b x + c, the textbook way: a
    negative discriminant returns NaN on purpose, a == 0 divides by zero."""
    discriminant = b * b - 4.0 * a * c
    if discriminant < 0:
        return math.nan
    return (-b + math.sqrt(discriminant)) / (2.0 * a)


@ctx.batch
def scaled(v, s):
    """An example's own NumPy vector divided by a number: NumPy's meaning
    (inf where s == 0, no error), as on one example."""
    return v / s


@ctx.batch
def shifted(a, k):
    """A negative shift count raises ValueError; a guard keeps it out."""
    high = (1 << k) > a if k >= 0 else False
    return (a << k) - (a >> k) + high


@ctx.batch
def stepped_sum(n, step):
    """range() with a per-example step of 0 raises ValueError."""
    total = 0
    for i in range(0, n, step):
        total += i
    return total


@ctx.batch
def counting(n, k):
    """math.comb, perm and factorial of ints: exact while they fit in 64 bits."""
    ways = math.comb(n, k) % 1000003 if n >= 0 or k < 0 else -1  # a guard: not evaluated where n < 0 <= k
    if k <= 12:
        ways += math.perm(n, k) % 1000003 + math.factorial(k)
    return ways


@ctx.batch
def int_powers(b, e):
    """Python's ints grow: a power beyond int64 stops the example."""
    return b**e - b**2
