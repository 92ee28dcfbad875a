"""Formulas and small geometry: series sums, distances, dot products,
Horner's rule, triangles, calendars, fractions.
"""

import math
import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def sum_of_arithmetic_series(first_term, common_diff, num_of_terms):
    total = (num_of_terms / 2) * (2 * first_term + (num_of_terms - 1) * common_diff)
    return total


@ctx.batch
def sum_of_geometric_progression(first_term, common_ratio, num_of_terms):
    if common_ratio == 1:
        # Formula for sum if common ratio is 1
        return num_of_terms * first_term

    # Formula for finding sum of n terms of a GeometricProgression
    return (first_term / (1 - common_ratio)) * (1 - common_ratio**num_of_terms)


@ctx.batch
def euclidean_distance(vector_1, vector_2):
    total = 0.0
    for a, b in zip(vector_1, vector_2):
        total += (a - b) ** 2
    return math.sqrt(total)


@ctx.batch
def manhattan_distance(point_a, point_b):
    total = 0
    for a, b in zip(point_a, point_b):
        total += abs(a - b)
    return total


@ctx.batch
def dot_product(a, b):
    result = 0
    for x, y in zip(a, b):
        result += x * y
    return result


@ctx.batch
def horner(poly, x):
    """Evaluate the polynomial with coefficients poly (lowest first) at x."""
    result = 0.0
    for coeff in reversed(poly):
        result = result * x + coeff
    return result


@ctx.batch
def triangle_type(a, b, c):
    """0: not a triangle, 1: scalene, 2: isosceles, 3: equilateral."""
    a, b, c = sorted((a, b, c))
    if a <= 0 or a + b <= c:
        return 0
    if a == c:
        return 3
    if a == b or b == c:
        return 2
    return 1


@ctx.batch
def is_leap_year(year):
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


@ctx.batch
def zeller_day_of_week(day, month, year):
    """Zeller's congruence: 0 = Saturday, 1 = Sunday, ..., 6 = Friday."""
    if month < 3:
        month += 12
        year -= 1
    k = year % 100
    j = year // 100
    return (day + (13 * (month + 1)) // 5 + k + k // 4 + j // 4 + 5 * j) % 7


@ctx.batch
def decimal_to_fraction_denominator(numerator, denominator):
    """The denominator of numerator / denominator in lowest terms."""
    a, b = abs(numerator), abs(denominator)
    while b:
        a, b = b, a % b
    return abs(denominator) // a
