"""Bit twiddling with << >> & | ^ ~: get/set/clear/flip, Gray code,
reversal, XOR tricks, two's complement, carries.
"""

import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def bit_operations(number, position):
    """(get, set, clear, flip) of bit `position` of number."""
    get = (number >> position) & 1
    set_ = number | (1 << position)
    clear = number & ~(1 << position)
    flipped = number ^ (1 << position)
    return get, set_, clear, flipped


@ctx.batch
def gray_code(number):
    """Binary-reflected Gray code of number and back again."""
    gray = number ^ (number >> 1)
    decoded = gray
    mask = gray >> 1
    while mask:
        decoded ^= mask
        mask >>= 1
    return gray, decoded


@ctx.batch
def reverse_bits_8(number):
    """Reverse the low 8 bits of number."""
    result = 0
    for _ in range(8):
        result = (result << 1) | (number & 1)
        number >>= 1
    return result


@ctx.batch
def single_number(nums):
    """XOR of every value: the one that occurs an odd number of times."""
    result = 0
    for num in nums:
        result ^= num
    return result


@ctx.batch
def swap_odd_even_bits(num):
    """Swap every bit at an even position with its odd neighbour (32 bits)."""
    even_bits = num & 0xAAAAAAAA
    odd_bits = num & 0x55555555
    return (even_bits >> 1) | (odd_bits << 1)


@ctx.batch
def twos_complement(number, width):
    """The two's complement of number in `width` bits, as an unsigned value."""
    return (~number + 1) & ((1 << width) - 1)


@ctx.batch
def find_missing_number(nums):
    """nums holds 0..n except one value (in any order): which one?"""
    missing_number = len(nums)
    for i, value in enumerate(nums):
        missing_number ^= i ^ value
    return missing_number


@ctx.batch
def next_power_of_two(n):
    """Smallest power of two >= n (n >= 1, below 2 ** 32)."""
    n -= 1
    n |= n >> 1
    n |= n >> 2
    n |= n >> 4
    n |= n >> 8
    n |= n >> 16
    return n + 1


@ctx.batch
def add_without_plus(a, b):
    """a + b for non-negative ints with carries done by & and <<."""
    while b != 0:
        carry = a & b
        a = a ^ b
        b = carry << 1
    return a
