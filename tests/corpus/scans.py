"""Linear scans over an array: find, count, extremes, membership, and a
quickselect that partitions in place.
"""

import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def linear_search(sequence, target):
    """Return the index of the first occurrence of target, or -1.

    >>> linear_search([0, 5, 7, 10, 15], 15)
    4
    >>> linear_search([0, 5, 7, 10, 15], 6)
    -1
    """
    for index, item in enumerate(sequence):
        if item == target:
            return index
    return -1


@ctx.batch
def double_linear_search(array, search_item):
    """Scan from both ends at once; the index found, or -1."""
    start_ind, end_ind = 0, len(array) - 1
    while start_ind <= end_ind:
        if array[start_ind] == search_item:
            return start_ind
        elif array[end_ind] == search_item:
            return end_ind
        else:
            start_ind += 1
            end_ind -= 1
    return -1


@ctx.batch
def index_of_max(arr):
    """Index of the largest value (the first one on ties)."""
    best_index = 0
    best = arr[0]
    for i, value in enumerate(arr):
        if value > best:
            best = value
            best_index = i
    return best_index


@ctx.batch
def count_occurrences(arr, target):
    count = 0
    for x in arr:
        if x == target:
            count += 1
    return count


@ctx.batch
def contains(arr, target):
    """True when target is one of the values of arr."""
    return target in arr


@ctx.batch
def first_missing_positive(nums):
    """The smallest positive integer that does not occur in nums."""
    for candidate in range(1, len(nums) + 2):
        if candidate not in nums:
            return candidate
    return len(nums) + 1


@ctx.batch
def min_and_max(arr):
    """Return (smallest, largest) in a single pass."""
    smallest = arr[0]
    largest = arr[0]
    for value in arr:
        smallest = min(smallest, value)
        largest = max(largest, value)
    return smallest, largest


@ctx.batch
def lomuto_partition(arr, low, high):
    """Lomuto partition around arr[high], in place; the pivot's final index."""
    pivot = arr[high]
    i = low - 1
    for j in range(low, high):
        if arr[j] <= pivot:
            i += 1
            arr[i], arr[j] = arr[j], arr[i]
    arr[i + 1], arr[high] = arr[high], arr[i + 1]
    return i + 1


@ctx.batch
def quick_select(arr, k):
    """The k-th smallest value (k counts from 0), partitioning in place."""
    if k < 0 or k >= len(arr):
        return None
    low = 0
    high = len(arr) - 1
    while low <= high:
        pivot_index = lomuto_partition(arr, low, high)
        if pivot_index == k:
            return arr[pivot_index]
        elif pivot_index < k:
            low = pivot_index + 1
        else:
            high = pivot_index - 1
    return None
