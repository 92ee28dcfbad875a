"""Integer sequences and counting: factorials, binomials, Catalan, Fibonacci,
Tribonacci, Ackermann, the juggler sequence.
"""

import math
import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def binomial_coefficient(n, k):
    """n choose k without factorials."""
    if k < 0 or k > n:
        return 0
    k = min(k, n - k)
    result = 1
    for i in range(k):
        result = result * (n - i) // (i + 1)
    return result


@ctx.batch
def catalan_number(n):
    """The n-th Catalan number, iteratively."""
    if not isinstance(n, int):
        return -1
    if n < 0:
        return -1
    current = 1
    for i in range(1, n + 1):
        current *= 4 * i - 2
        current //= i + 1
    return current


@ctx.batch
def factorial(n):
    """n!, recursively; None for a negative n."""
    if n < 0:
        return None
    return 1 if n in (0, 1) else n * factorial(n - 1)


@ctx.batch
def ackermann(m, n):
    """The Ackermann function, for small arguments."""
    if m == 0:
        return n + 1
    if n == 0:
        return ackermann(m - 1, 1)
    return ackermann(m - 1, ackermann(m, n - 1))


@ctx.batch
def fibonacci(n):
    """The n-th Fibonacci number, the slow recursive way."""
    if n < 2:
        return n
    return fibonacci(n - 1) + fibonacci(n - 2)


@ctx.batch
def tribonacci(n):
    """T(0)=0, T(1)=0, T(2)=1, T(n) = sum of the previous three."""
    a, b, c = 0, 0, 1
    if n < 2:
        return 0
    for _ in range(n - 2):
        a, b, c = b, c, a + b + c
    return c


@ctx.batch
def factorial_trailing_zeros(n):
    """How many zeros n! ends with."""
    count = 0
    while n >= 5:
        n //= 5
        count += n
    return count


@ctx.batch
def sum_of_multiples(limit):
    """Sum of the natural numbers below limit that are multiples of 3 or 5."""
    total = 0
    for i in range(limit):
        if i % 3 == 0 or i % 5 == 0:
            total += i
    return total


@ctx.batch
def juggler_steps(number):
    """Steps of the juggler sequence from number to 1; -1 for bad input."""
    if not isinstance(number, int) or number < 1:
        return -1
    steps = 0
    while number != 1:
        if number % 2 == 0:
            number = math.isqrt(number)
        else:
            number = math.floor(math.sqrt(number) * number)
        steps += 1
    return steps
