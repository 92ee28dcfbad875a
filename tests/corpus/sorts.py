"""Exchange and insertion sorts: each sorts its collection in place and
returns it, with swaps and `swapped` flags.
"""

import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def bubble_sort(collection):
    """Sort by repeatedly swapping neighbours that are out of order.

    >>> bubble_sort([0, 5, 2, 3, 2])
    [0, 2, 2, 3, 5]
    """
    length = len(collection)
    for i in range(length - 1):
        swapped = False
        for j in range(length - 1 - i):
            if collection[j] > collection[j + 1]:
                swapped = True
                collection[j], collection[j + 1] = collection[j + 1], collection[j]
        if not swapped:
            break  # Stop iteration if the collection is sorted.
    return collection


@ctx.batch
def selection_sort(collection):
    """Pick the smallest remaining item and swap it to the front."""
    length = len(collection)
    for i in range(length - 1):
        min_index = i
        for k in range(i + 1, length):
            if collection[k] < collection[min_index]:
                min_index = k
        if min_index != i:
            collection[i], collection[min_index] = collection[min_index], collection[i]
    return collection


@ctx.batch
def insertion_sort(collection):
    """Grow a sorted prefix, shifting larger items right."""
    for insert_index in range(1, len(collection)):
        insert_value = collection[insert_index]
        while insert_index > 0 and insert_value < collection[insert_index - 1]:
            collection[insert_index] = collection[insert_index - 1]
            insert_index -= 1
        collection[insert_index] = insert_value
    return collection


@ctx.batch
def shell_sort(collection):
    """Insertion sort over shrinking gaps (Marcin Ciura's sequence)."""
    gaps = [701, 301, 132, 57, 23, 10, 4, 1]
    for gap in gaps:
        for i in range(gap, len(collection)):
            insert_value = collection[i]
            j = i
            while j >= gap and collection[j - gap] > insert_value:
                collection[j] = collection[j - gap]
                j -= gap
            if j != i:
                collection[j] = insert_value
    return collection


@ctx.batch
def gnome_sort(lst):
    """The garden gnome walks forward while in order and swaps back otherwise."""
    if len(lst) <= 1:
        return lst

    i = 1
    while i < len(lst):
        if lst[i - 1] <= lst[i]:
            i += 1
        else:
            lst[i - 1], lst[i] = lst[i], lst[i - 1]
            i -= 1
            if i == 0:
                i = 1
    return lst


@ctx.batch
def cocktail_shaker_sort(arr):
    """Bubble sort that alternates direction on every pass."""
    start, end = 0, len(arr) - 1

    while start < end:
        swapped = False

        # Pass from left to right
        for i in range(start, end):
            if arr[i] > arr[i + 1]:
                arr[i], arr[i + 1] = arr[i + 1], arr[i]
                swapped = True

        if not swapped:
            break

        end -= 1  # Decrease the end pointer after each pass

        # Pass from right to left
        for i in range(end, start, -1):
            if arr[i] < arr[i - 1]:
                arr[i], arr[i - 1] = arr[i - 1], arr[i]
                swapped = True

        if not swapped:
            break

        start += 1  # Increase the start pointer after each pass

    return arr


@ctx.batch
def odd_even_sort(input_list):
    """Brick sort: compare odd/even indexed pairs until nothing moves."""
    is_sorted = False
    while is_sorted is False:
        is_sorted = True
        for i in range(0, len(input_list) - 1, 2):  # even indices
            if input_list[i] > input_list[i + 1]:
                input_list[i], input_list[i + 1] = input_list[i + 1], input_list[i]
                is_sorted = False

        for i in range(1, len(input_list) - 1, 2):  # odd indices
            if input_list[i] > input_list[i + 1]:
                input_list[i], input_list[i + 1] = input_list[i + 1], input_list[i]
                is_sorted = False
    return input_list


@ctx.batch
def comb_sort(data):
    """Bubble sort over gaps that shrink by a factor of 1.3."""
    shrink_factor = 1.3
    gap = len(data)
    completed = False

    while not completed:
        gap = int(gap / shrink_factor)
        if gap <= 1:
            completed = True

        index = 0
        while index + gap < len(data):
            if data[index] > data[index + gap]:
                data[index], data[index + gap] = data[index + gap], data[index]
                completed = False
            index += 1

    return data


@ctx.batch
def is_sorted(arr):
    """True when arr is in ascending order."""
    for i in range(len(arr) - 1):
        if arr[i] > arr[i + 1]:
            return False
    return True


@ctx.batch
def count_inversions(arr):
    """Number of pairs i < j with arr[i] > arr[j] (brute force)."""
    num_inversions = 0
    n = len(arr)
    for i in range(n - 1):
        for j in range(i + 1, n):
            if arr[i] > arr[j]:
                num_inversions += 1
    return num_inversions
