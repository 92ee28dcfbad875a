"""Counting and testing bits."""

import math
import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def get_set_bits_count_using_brian_kernighans_algorithm(number):
    """Count set bits by clearing the lowest one each time; -1 for a negative."""
    if number < 0:
        return -1

    result = 0
    while number:
        number &= number - 1
        result += 1
    return result


@ctx.batch
def get_set_bits_count_using_modulo_operator(number):
    """Count set bits one at a time from the right; -1 for a negative."""
    if not isinstance(number, int) or number < 0:
        return -1

    result = 0
    while number:
        if number % 2 == 1:
            result += 1
        number >>= 1
    return result


@ctx.batch
def is_power_of_two(number):
    """True for 1, 2, 4, 8, ...; False for 0 and negatives."""
    if number <= 0:
        return False
    return (number & (number - 1)) == 0


@ctx.batch
def highest_set_bit_position(number):
    """1-based position of the highest set bit; 0 for zero."""
    position = 0
    while number:
        position += 1
        number >>= 1
    return position


@ctx.batch
def lowest_set_bit_index(number):
    """0-based index of the lowest set bit; None for zero."""
    if number == 0:
        return None
    index = 0
    while number & 1 == 0:
        number >>= 1
        index += 1
    return index


@ctx.batch
def binary_count_trailing_zeros(a):
    """Trailing zero bits of a, through the lowest set bit's log2."""
    if a < 0:
        return -1
    if a == 0:
        return 0
    return int(math.log2(a & -a))


@ctx.batch
def bit_hamming_distance(a, b):
    """Number of differing bits of two non-negative ints."""
    x = a ^ b
    distance = 0
    while x > 0:
        distance += x & 1
        x = x >> 1
    return distance


@ctx.batch
def is_even(number):
    """Even numbers have a clear lowest bit."""
    return not number & 1


@ctx.batch
def different_signs(num1, num2):
    """True when exactly one of the two is negative."""
    return num1 ^ num2 < 0
