"""Small maths over numbers and arrays: extremes, means, factorials, signs."""

import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def abs_max(x):
    """The value with the largest absolute value (the first on ties).

    >>> abs_max([0, 5, 1, 11])
    11
    >>> abs_max([3, -10, -2])
    -10
    """
    j = x[0]
    for i in x:
        if abs(i) > abs(j):
            j = i
    return j


@ctx.batch
def mean(nums):
    """Arithmetic mean."""
    return sum(nums) / len(nums)


@ctx.batch
def average_absolute_deviation(nums):
    """Mean distance from the mean."""
    average = sum(nums) / len(nums)
    total = 0.0
    for x in nums:
        total += abs(x - average)
    return total / len(nums)


@ctx.batch
def max_min_difference(nums):
    return max(nums) - min(nums)


@ctx.batch
def factorial_iterative(number):
    """number! with a loop; -1 for negative or non-integer input."""
    if not isinstance(number, int) or number < 0:
        return -1
    value = 1
    for i in range(1, number + 1):
        value *= i
    return value


@ctx.batch
def signum(num):
    """-1, 0 or 1 by the sign of num."""
    if num < 0:
        return -1
    return 1 if num else 0


@ctx.batch
def greatest_of_three(a, b, c):
    return max(a, b, c)


@ctx.batch
def find_max_recursive(nums, left, right):
    """Largest of nums[left..right] by divide and conquer."""
    if left == right:
        return nums[left]
    mid = (left + right) >> 1  # the middle
    left_max = find_max_recursive(nums, left, mid)  # find max in range[left, mid]
    right_max = find_max_recursive(nums, mid + 1, right)  # find max in range[mid + 1, right]

    return left_max if left_max >= right_max else right_max


@ctx.batch
def most_frequent_digit(digits):
    """The most frequent value 0..9 (the smallest on ties)."""
    counts = [0] * 10
    for d in digits:
        counts[d] += 1
    best = 0
    for d in range(1, 10):
        if counts[d] > counts[best]:
            best = d
    return best


@ctx.batch
def split_minutes(total_minutes):
    """(hours, minutes) of a duration."""
    hours, minutes = divmod(total_minutes, 60)
    return hours, minutes
