"""Floating point: Newton's square root, floor and ceil by hand, quadratic
roots, powers, cube roots, rounding, harmonic numbers.
"""

import math
import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def get_initial_point(a):
    start = 2.0
    while start <= a:
        start = math.pow(start, 2)
    return start


@ctx.batch
def square_root_iterative(a, max_iter=9999, tolerance=1e-14):
    """Newton's method for sqrt(a); -1.0 for a negative a."""
    if a < 0:
        return -1.0

    value = get_initial_point(a)

    for _ in range(max_iter):
        prev_value = value
        value = value - (value * value - a) / (2 * value)
        if abs(prev_value - value) < tolerance:
            return value

    return value


@ctx.batch
def floor_div_float(x):
    """floor(x) without math.floor."""
    return int(x) if x - int(x) >= 0 else int(x) - 1


@ctx.batch
def ceil_float(x):
    """ceil(x) without math.ceil."""
    return int(x) if x - int(x) <= 0 else int(x) + 1


@ctx.batch
def quadratic_roots_count(a, b, c):
    """How many distinct real roots a x^2 + b x + c has (a != 0)."""
    delta = b * b - 4 * a * c
    if delta > 0:
        return 2
    elif delta == 0:
        return 1
    return 0


@ctx.batch
def larger_quadratic_root(a, b, c):
    """The larger real root, or None when there is none."""
    delta = b * b - 4 * a * c
    if delta < 0:
        return None
    root1 = (-b + math.sqrt(delta)) / (2 * a)
    root2 = (-b - math.sqrt(delta)) / (2 * a)
    return max(root1, root2)


@ctx.batch
def power_float(base, exponent):
    """base ** exponent for an integer exponent, negative ones too."""
    if exponent < 0:
        return 1 / power_float(base, -exponent)
    if exponent == 0:
        return 1.0
    half = power_float(base, exponent // 2)
    if exponent % 2:
        return half * half * base
    return half * half


@ctx.batch
def perfect_cube(n):
    """True when n (>= 0) is the cube of an integer."""
    val = round(n ** (1 / 3))
    return val * val * val == n


@ctx.batch
def round_to_multiple(x, multiple):
    """x rounded to the nearest multiple (ties to even, as round does)."""
    return round(x / multiple) * multiple


@ctx.batch
def harmonic_number(n):
    """1 + 1/2 + ... + 1/n."""
    total = 0.0
    for i in range(1, n + 1):
        total += 1 / i
    return total


@ctx.batch
def is_in_unit_circle(x, y):
    return math.sqrt(x * x + y * y) <= 1.0
