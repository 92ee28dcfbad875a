"""Sorts built from in-place helpers and recursion: heap sort, quicksort,
bottom-up merge sort, stooge sort, pancake sort, counting sort.
"""

import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def heapify(arr, heap_size, index):
    """Sift arr[index] down so the subtree rooted there is a max-heap.

    Works in place and returns nothing.
    """
    largest = index
    left_index = 2 * index + 1
    right_index = 2 * index + 2

    if left_index < heap_size and arr[left_index] > arr[largest]:
        largest = left_index
    if right_index < heap_size and arr[right_index] > arr[largest]:
        largest = right_index

    if largest != index:
        arr[largest], arr[index] = arr[index], arr[largest]
        heapify(arr, heap_size, largest)


@ctx.batch
def heap_sort(unsorted):
    """Build a max-heap, then move the maximum to the end repeatedly."""
    n = len(unsorted)
    for i in range(n // 2 - 1, -1, -1):
        heapify(unsorted, n, i)
    for i in range(n - 1, 0, -1):
        unsorted[0], unsorted[i] = unsorted[i], unsorted[0]
        heapify(unsorted, i, 0)
    return unsorted


@ctx.batch
def counting_sort_digits(collection):
    """Counting sort for values 0..9."""
    counts = [0] * 10
    for number in collection:
        counts[number] += 1

    index = 0
    for digit in range(10):
        while counts[digit] > 0:
            collection[index] = digit
            index += 1
            counts[digit] -= 1
    return collection


@ctx.batch
def flip(arr, k):
    """Reverse arr[0..k] in place."""
    start = 0
    while start < k:
        arr[start], arr[k] = arr[k], arr[start]
        start += 1
        k -= 1


@ctx.batch
def pancake_sort(arr):
    """Flip the largest unsorted item to the front, then to its place."""
    cur = len(arr)
    while cur > 1:
        mi = 0
        for i in range(cur):
            if arr[i] > arr[mi]:
                mi = i
        flip(arr, mi)
        flip(arr, cur - 1)
        cur -= 1
    return arr


@ctx.batch
def quick_sort_partition(arr, low, high):
    """Lomuto partition; sorts around the pivot in place and returns its index."""
    pivot = arr[high]
    i = low - 1
    for j in range(low, high):
        if arr[j] <= pivot:
            i += 1
            arr[i], arr[j] = arr[j], arr[i]
    arr[i + 1], arr[high] = arr[high], arr[i + 1]
    return i + 1


@ctx.batch
def quick_sort_range(arr, low, high):
    """Recursive in-place quicksort of arr[low..high]."""
    if low < high:
        pi = quick_sort_partition(arr, low, high)
        quick_sort_range(arr, low, pi - 1)
        quick_sort_range(arr, pi + 1, high)


@ctx.batch
def quick_sort(arr):
    quick_sort_range(arr, 0, len(arr) - 1)
    return arr


@ctx.batch
def merge(arr, left, mid, right):
    """Merge the sorted runs arr[left:mid] and arr[mid:right] in place."""
    aux = arr.copy()
    i, j, k = left, mid, left
    while i < mid and j < right:
        if aux[i] <= aux[j]:
            arr[k] = aux[i]
            i += 1
        else:
            arr[k] = aux[j]
            j += 1
        k += 1
    while i < mid:
        arr[k] = aux[i]
        i += 1
        k += 1
    while j < right:
        arr[k] = aux[j]
        j += 1
        k += 1


@ctx.batch
def merge_sort_bottom_up(arr):
    """Iterative merge sort: merge runs of width 1, 2, 4, ..."""
    n = len(arr)
    width = 1
    while width < n:
        for left in range(0, n, 2 * width):
            mid = min(left + width, n)
            right = min(left + 2 * width, n)
            merge(arr, left, mid, right)
        width *= 2
    return arr


@ctx.batch
def stooge(arr, i, h):
    if i >= h:
        return

    # If first element is larger than the last then swap them
    if arr[i] > arr[h]:
        arr[i], arr[h] = arr[h], arr[i]

    # If there are more than 2 elements in the array
    if h - i + 1 > 2:
        t = (h - i + 1) // 3

        # Recursively sort first 2/3 elements
        stooge(arr, i, h - t)
        # Recursively sort last 2/3 elements
        stooge(arr, i + t, h)
        # Recursively sort first 2/3 elements
        stooge(arr, i, h - t)


@ctx.batch
def stooge_sort(arr):
    """Stooge sort: sort 2/3, the last 2/3, and the first 2/3 again."""
    stooge(arr, 0, len(arr) - 1)
    return arr
