"""Primes and divisors: primality, prime factors, perfect numbers, square roots."""

import math
import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def is_prime(number):
    """Trial division by 6k +- 1.

    >>> is_prime(2)
    True
    >>> is_prime(27)
    False
    """
    if not isinstance(number, int) or number < 0:
        return False

    if 1 < number < 4:
        # 2 and 3 are primes
        return True
    elif number < 2 or number % 2 == 0 or number % 3 == 0:
        # Negatives, 0, 1, all even numbers, all multiples of 3 are not primes
        return False

    # All primes number are in format of 6k +/- 1
    for i in range(5, int(math.sqrt(number) + 1), 6):
        if number % i == 0 or number % (i + 2) == 0:
            return False
    return True


@ctx.batch
def count_primes_below(n):
    """How many primes are smaller than n."""
    count = 0
    for k in range(2, n):
        if is_prime(k):
            count += 1
    return count


@ctx.batch
def largest_prime_factor(n):
    """The largest prime factor of n (n >= 2)."""
    i = 2
    ans = 0
    if n == 2:
        return 2
    while n > 2:
        while n % i != 0:
            i += 1
        ans = i
        while n % i == 0:
            n = n // i
        i += 1
    return int(ans)


@ctx.batch
def count_prime_factors(n):
    """Number of prime factors of n counted with multiplicity."""
    count = 0
    i = 2
    while i * i <= n:
        if n % i:
            i += 1
        else:
            n //= i
            count += 1
    if n > 1:
        count += 1
    return count


@ctx.batch
def is_perfect_number(number):
    """True when number equals the sum of its proper divisors."""
    if number <= 1:
        return False
    total = 0
    for i in range(1, number // 2 + 1):
        if number % i == 0:
            total += i
    return total == number


@ctx.batch
def aliquot_sum(input_num):
    """Sum of the proper divisors of input_num; None for a non-positive input."""
    if input_num <= 0:
        return None
    return_sum = 0
    divisor = 1
    while divisor <= input_num // 2:
        if input_num % divisor == 0:
            return_sum += divisor
        divisor += 1
    return return_sum


@ctx.batch
def perfect_square(num):
    """True when num is the square of an integer."""
    if num < 0:
        return False
    root = math.isqrt(num)
    return root * root == num


@ctx.batch
def integer_square_root(n):
    """floor(sqrt(n)) by Newton's method on integers."""
    if n < 2:
        return n
    x = n
    y = (x + 1) // 2
    while y < x:
        x = y
        y = (x + n // x) // 2
    return x
