"""Searching a sorted array: binary (iterative and recursive), interpolation,
jump, exponential and ternary search.
"""

import math
import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def binary_search(sorted_collection, item):
    """Iterative binary search over an ascending collection.

    Returns the index of item, or None when it is not there.

    >>> binary_search([0, 5, 7, 10, 15], 10)
    3
    >>> binary_search([0, 5, 7, 10, 15], 6) is None
    True
    """
    left = 0
    right = len(sorted_collection) - 1

    while left <= right:
        midpoint = left + (right - left) // 2
        current_item = sorted_collection[midpoint]
        if current_item == item:
            return midpoint
        elif item < current_item:
            right = midpoint - 1
        else:
            left = midpoint + 1
    return None


@ctx.batch
def binary_search_by_recursion(sorted_collection, item, left=0, right=None):
    """Recursive binary search; -1 when item is missing.

    >>> binary_search_by_recursion([0, 5, 7, 10, 15], 0)
    0
    """
    if right is None:
        right = len(sorted_collection) - 1
    if right < left:
        return -1

    midpoint = left + (right - left) // 2

    if sorted_collection[midpoint] == item:
        return midpoint
    elif sorted_collection[midpoint] > item:
        return binary_search_by_recursion(sorted_collection, item, left, midpoint - 1)
    else:
        return binary_search_by_recursion(sorted_collection, item, midpoint + 1, right)


@ctx.batch
def interpolation_search(sorted_collection, item):
    """Search a sorted collection by guessing where item would sit.

    Returns the index of item or None.
    """
    left = 0
    right = len(sorted_collection) - 1

    while left <= right:
        # avoid dividing by zero when the ends are equal
        if sorted_collection[left] == sorted_collection[right]:
            if sorted_collection[left] == item:
                return left
            else:
                return None

        point = left + ((item - sorted_collection[left]) * (right - left)) // (
            sorted_collection[right] - sorted_collection[left]
        )

        # out of range check
        if point < 0 or point >= len(sorted_collection):
            return None

        current_item = sorted_collection[point]
        if current_item == item:
            return point
        else:
            if point < left:
                right = left
                left = point
            elif point > right:
                left = right
                right = point
            else:
                if item < current_item:
                    right = point - 1
                else:
                    left = point + 1
    return None


@ctx.batch
def jump_search(arr, item):
    """Jump ahead in blocks of sqrt(n), then scan back linearly.

    >>> jump_search([0, 1, 2, 3, 4, 5], 3)
    3
    >>> jump_search([0, 1, 2, 3, 4, 5], 8)
    -1
    """
    arr_size = len(arr)
    block_size = int(math.sqrt(arr_size))

    prev = 0
    step = block_size
    while arr[min(step, arr_size) - 1] < item:
        prev = step
        step += block_size
        if prev >= arr_size:
            return -1

    while arr[prev] < item:
        prev += 1
        if prev == min(step, arr_size):
            return -1
    if arr[prev] == item:
        return prev
    return -1


@ctx.batch
def binary_search_in_range(arr, left, right, item):
    """Binary search in arr[left:right + 1]; -1 when item is missing."""
    while left <= right:
        mid = (left + right) // 2
        if arr[mid] == item:
            return mid
        if arr[mid] < item:
            left = mid + 1
        else:
            right = mid - 1
    return -1


@ctx.batch
def exponential_search(arr, item):
    """Find a range where item may be by doubling, then binary search it."""
    if arr[0] == item:
        return 0

    bound = 1
    while bound < len(arr) and arr[bound] <= item:
        bound *= 2

    return binary_search_in_range(arr, bound // 2, min(bound, len(arr) - 1), item)


@ctx.batch
def ternary_search(array, target):
    """Iterative ternary search; -1 when not found."""
    left = 0
    right = len(array) - 1
    while left <= right:
        one_third = left + (right - left) // 3
        two_third = right - (right - left) // 3

        if array[one_third] == target:
            return one_third
        elif array[two_third] == target:
            return two_third
        elif target < array[one_third]:
            right = one_third - 1
        elif array[two_third] < target:
            left = two_third + 1
        else:
            left = one_third + 1
            right = two_third - 1
    return -1
