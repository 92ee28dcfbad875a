"""Decimal digits: sums, counts, reversals, Armstrong, happy, Harshad and
Krishnamurthy numbers.
"""

import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def sum_of_digits(n):
    """Sum of the decimal digits of abs(n).

    >>> sum_of_digits(-123)
    6
    """
    n = abs(n)
    res = 0
    while n > 0:
        res += n % 10
        n //= 10
    return res


@ctx.batch
def num_digits(n):
    """How many decimal digits n has."""
    if not isinstance(n, int):
        return -1
    return len(str(abs(n)))


@ctx.batch
def is_armstrong_number(n):
    """True when n equals the sum of its digits each raised to the number of digits."""
    if not isinstance(n, int) or n < 1:
        return False

    number_of_digits = len(str(n))
    total = 0
    temp = n
    while temp > 0:
        rem = temp % 10
        total += rem**number_of_digits
        temp //= 10
    return n == total


@ctx.batch
def is_palindrome_number(num):
    """True when the decimal digits of num read the same backwards."""
    if num < 0:
        return False

    num_copy = num
    rev_num = 0
    while num > 0:
        rev_num = rev_num * 10 + (num % 10)
        num //= 10

    return num_copy == rev_num


@ctx.batch
def digit_square_sum(n):
    total = 0
    while n:
        n, digit = divmod(n, 10)
        total += digit * digit
    return total


@ctx.batch
def is_happy_number(n):
    """Iterate the digit-square sum until it reaches 1 (happy) or 4 (a cycle)."""
    if not isinstance(n, int) or n <= 0:
        return False
    while n not in (1, 4):
        n = digit_square_sum(n)
    return n == 1


@ctx.batch
def decimal_to_binary_digits(n):
    """The binary digits of n read as a decimal number: 5 -> 101."""
    result = 0
    place = 1
    while n > 0:
        n, remainder = divmod(n, 2)
        result += remainder * place
        place *= 10
    return result


@ctx.batch
def digit_factorial(d):
    return 1 if d < 2 else d * digit_factorial(d - 1)


@ctx.batch
def is_krishnamurthy(number):
    """True when number equals the sum of the factorials of its digits (145)."""
    fact_sum = 0
    duplicate = number
    while duplicate > 0:
        duplicate, digit = divmod(duplicate, 10)
        fact_sum += digit_factorial(digit)
    return fact_sum == number


@ctx.batch
def is_harshad_number(n):
    """True when n is divisible by the sum of its digits."""
    if n <= 0:
        return False
    digit_sum = 0
    temp = n
    while temp > 0:
        digit_sum += temp % 10
        temp //= 10
    return n % digit_sum == 0
