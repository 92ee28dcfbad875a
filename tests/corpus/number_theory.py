"""Number theory: gcd and lcm, extended Euclid, modular inverse and power,
fast exponentiation, Euler's totient.
"""

import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def euclidean_gcd_recursive(a, b):
    """Greatest common divisor, recursively.

    >>> euclidean_gcd_recursive(3, 5)
    1
    >>> euclidean_gcd_recursive(6, 3)
    3
    """
    return a if b == 0 else euclidean_gcd_recursive(b, a % b)


@ctx.batch
def euclidean_gcd(a, b):
    """Greatest common divisor, iteratively, with a tuple swap."""
    while b:
        a, b = b, a % b
    return a


@ctx.batch
def greatest_common_divisor(a, b):
    """gcd that also accepts negative numbers."""
    return abs(b) if a == 0 else greatest_common_divisor(b % a, a)


@ctx.batch
def least_common_multiple(first_num, second_num):
    """lcm(a, b) = a // gcd(a, b) * b."""
    if first_num == 0 or second_num == 0:
        return 0
    return first_num // euclidean_gcd(first_num, second_num) * second_num


@ctx.batch
def extended_euclid(a, b):
    """(g, x, y) with a * x + b * y == g == gcd(a, b)."""
    if b == 0:
        return a, 1, 0
    q, r = divmod(a, b)
    g, x, y = extended_euclid(b, r)
    return g, y, x - q * y


@ctx.batch
def modular_inverse(a, m):
    """x with a * x % m == 1, or None when a and m are not coprime."""
    g, x, _ = extended_euclid(a, m)
    if g != 1:
        return None
    return x % m


@ctx.batch
def modular_exponential(base, power, mod):
    """base ** power % mod by square and multiply; -1 for a negative power."""
    if power < 0:
        return -1
    base %= mod
    result = 1

    while power > 0:
        if power & 1:
            result = (result * base) % mod
        power = power >> 1
        base = (base * base) % mod

    return result


@ctx.batch
def binary_exponentiation(base, exponent):
    """Recursive fast power."""
    if exponent == 0:
        return 1

    if exponent % 2 == 1:
        return binary_exponentiation(base, exponent - 1) * base

    half = binary_exponentiation(base, exponent // 2)
    return half * half


@ctx.batch
def totient(n):
    """Euler's phi: how many of 1..n are coprime with n."""
    result = n
    p = 2
    while p * p <= n:
        if n % p == 0:
            while n % p == 0:
                n //= p
            result -= result // p
        p += 1
    if n > 1:
        result -= result // n
    return result
