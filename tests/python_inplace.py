"""Programs whose callees assign items of the arrays they are given.

In Python a callee that assigns `arr[i] = x` changes its caller's array: the
parameter and the caller's variable are one object.  These programs rely on
it (heap sort with `heapify`, an in-place quicksort with a `partition` that
returns an index, bubble sort with a `swap` helper, helpers that mutate and
recurse), and the refusals at the end are the aliasing the compiler cannot
reproduce.  Shared by tests/test_python_inplace.py; generated modules go to a
temporary folder.
"""

import tempfile

import numpy as np

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-test-inplace-"))

TABLE = np.arange(4)


# ---- heap sort: heapify sorts in place and returns nothing --------------


@ctx.batch
def heapify(arr, n, i):
    largest = i
    left = 2 * i + 1
    right = 2 * i + 2
    if left < n and arr[left] > arr[largest]:
        largest = left
    if right < n and arr[right] > arr[largest]:
        largest = right
    if largest != i:
        t = arr[i]
        arr[i] = arr[largest]
        arr[largest] = t
        heapify(arr, n, largest)


@ctx.batch
def heap_sort(arr):
    n = len(arr)
    for i in range(n // 2 - 1, -1, -1):
        heapify(arr, n, i)
    for i in range(n - 1, 0, -1):
        t = arr[i]
        arr[i] = arr[0]
        arr[0] = t
        heapify(arr, i, 0)
    return arr


# ---- quicksort: partition mutates and returns the pivot's index ----------


@ctx.batch
def swap(a, i, j):
    t = a[i]
    a[i] = a[j]
    a[j] = t


@ctx.batch
def partition(arr, low, high):
    pivot = arr[high]
    i = low - 1
    for j in range(low, high):
        if arr[j] <= pivot:
            i += 1
            swap(arr, i, j)
    swap(arr, i + 1, high)
    return i + 1


@ctx.batch
def quick_sort(arr, low, high):
    if low < high:
        p = partition(arr, low, high)
        quick_sort(arr, low, p - 1)
        quick_sort(arr, p + 1, high)


@ctx.batch
def sort_quick(arr):
    quick_sort(arr, 0, len(arr) - 1)
    return arr


@ctx.batch
def quick_sorted(arr, low, high):
    """The entry itself sorts in place, recursively, and returns the array:
    its recursive calls must hand their changes back, its own result is the
    array."""
    if low < high:
        p = partition(arr, low, high)
        quick_sorted(arr, low, p - 1)
        quick_sorted(arr, p + 1, high)
    return arr


# ---- bubble sort calling a swap helper -----------------------------------


@ctx.batch
def bubble_sort(v):
    n = len(v)
    swaps = 0
    for i in range(n):
        swapped = False
        for j in range(n - 1 - i):
            if v[j] > v[j + 1]:
                swap(v, j, j + 1)
                swapped = True
                swaps += 1
        if not swapped:
            break
    return v, swaps


# ---- helpers that mutate and recurse ------------------------------------


@ctx.batch
def fill_down(v, k, value):
    """v[k - 1], ..., v[0] = value, value + 1, ...; returns how many."""
    if k <= 0:
        return 0
    v[k - 1] = value
    return 1 + fill_down(v, k - 1, value + 1)


@ctx.batch
def fill_twice(v, k):
    count = fill_down(v, k, 10)
    first = v[0]
    count += fill_down(v, k // 2, 20)
    return v, count, first


@ctx.batch
def reverse_range(v, i, j):
    """Reverses v[i..j] in place by a tail call: no stack grows."""
    if i >= j:
        return
    swap(v, i, j)
    return reverse_range(v, i + 1, j - 1)


@ctx.batch
def reversed_vector(v):
    reverse_range(v, 0, len(v) - 1)
    return v


@ctx.batch
def bump_rows(m, i):
    """A 2-D array changed through a callee, row `i` and a fixed corner."""
    m[i, 0] += 100
    m[0, 1] = -1


@ctx.batch
def matrix_caller(m, i):
    bump_rows(m, i)
    total = m[i, 0] + m[0, 1]
    return m, total


# ---- what is not the caller's array is not changed ------------------------


@ctx.batch
def zero_first(arr):
    arr[0] = 0
    return arr[1]


@ctx.batch
def rebinds_first(arr):
    """A parameter rebound to a copy before its items are assigned: the
    caller's array is not this one."""
    arr = arr.copy()
    arr[0] = -5
    return arr


@ctx.batch
def rebinds_np_array(arr):
    arr = np.array(arr)
    arr[1] = -7
    return arr[1]


@ctx.batch
def copies_and_expressions(v):
    a = rebinds_first(v)  # v itself unchanged
    b = rebinds_np_array(v)
    c = zero_first(v.copy())  # an expression: the temporary is changed
    d = zero_first(v + 0)
    w = v.copy()
    e = zero_first(w)  # w is changed, v is not
    return v, w, a, b, c + d + e


@ctx.batch
def keeps_result(v):
    """`v = f(v)`: the callee's result is what `v` names afterwards."""
    v = heap_sort(v)
    v[0] = v[0] - 1
    return v


@ctx.batch
def dead_alias(v):
    """Reads that Python and value semantics agree on: the alias is read
    before the write, a scalar read before the write, and copies (`list(v)`
    of a vector is a list of numbers)."""
    w = v
    first = w[0]
    x = v[1]
    c = v.copy()
    a = np.array(v)
    items = list(v)
    v[1] = 99
    zero_first(v)
    return v, first, x, c, a, items[0] + items[2]


@ctx.batch
def nested_mutator(v, n):
    """Passes its parameter on to an in-place callee: in place itself."""
    heapify(v, n, 0)
    return n


@ctx.batch
def transitive(v):
    n = nested_mutator(v, len(v))
    return v, n


# ---- refusals: aliasing the compiler cannot reproduce -------------------


@ctx.batch
def alias_then_write(v):
    w = v
    v[0] = 1
    return w


@ctx.batch
def write_through_alias(v):
    w = v
    w[0] = 1
    return v


@ctx.batch
def slice_view_then_write(v):
    s = v[1:3]
    v[1] = 0
    return s


@ctx.batch
def row_view_then_write(m, i):
    row = m[i]
    m[i, 0] = 5
    return row


@ctx.batch
def swap_rows(a, b):
    t = a[0]
    a[0] = b[0]
    b[0] = t


@ctx.batch
def same_array_twice(a):
    swap_rows(a, a)
    return a


@ctx.batch
def maybe_copied(arr, c):
    if c > 0:
        arr = arr.copy()
    arr[0] = 1


@ctx.batch
def calls_maybe_copied(v, c):
    maybe_copied(v, c)
    return v


@ctx.batch
def mutates_then_rebinds(arr):
    arr[0] = 1
    arr = arr * 2
    return arr


@ctx.batch
def calls_mutates_then_rebinds(v):
    w = mutates_then_rebinds(v)
    return v, w


@ctx.batch
def writes_global_alias(i):
    t = TABLE
    t[0] = i
    return i


@ctx.batch
def view_to_callee(v):
    zero_first(v[1:3])
    return v


@ctx.batch
def take_out(v, x):
    # None on some paths, a value on others, and in place: not yet
    for i in range(len(v)):
        if v[i] == x:
            v[i] = 0
            return i
    return None


@ctx.batch
def calls_take_out(v, x):
    r = take_out(v, x)
    if r is None:
        return v[0]
    return r + v[0]


@ctx.batch
def augmented_array_parameter(v, n):
    """Augmented assignment of an array parameter: in place in NumPy (refused)."""
    v += n
    return n


@ctx.batch
def calls_augmented(v, n):
    augmented_array_parameter(v, n)
    return v


@ctx.batch
def augmented_entry(v, n):
    """The entry's own array: what it returns is what Python returns."""
    v += n
    return v


def bump_first(a):
    """Not batched: a library-style helper that writes into its argument."""
    a[0] = a[0] + 100


@ctx.batch
def calls_a_plain_helper_that_writes(v):
    bump_first(v)  # <-- writes through an undecorated helper
    return v[0] + v[1]


# ---- items of a list made from an array's rows ------------------------------


@ctx.batch
def rows_rebound(m):
    """`rows[0] = ...` rebinds a slot of the new list: m is unchanged."""
    rows = list(m)
    rows[0] = m[1] * 2
    return m[0][0] + rows[0][0]


@ctx.batch
def row_stored_then_written(m):
    """b's first item becomes m's row; writing into it changes m."""
    b = [m[1] * 0 for _ in range(2)]
    b[0] = m[0]
    b[0][1] = 5
    return m[0][1]


# ---- augmented assignment of a shared array ---------------------------------


@ctx.batch
def augmented_alias(v):
    """NumPy's augmented assignment changes the array v names too."""
    w = v
    w += 1
    return v[0]


@ctx.batch
def augmented_original(v):
    w = v
    v += 1
    return w[0]


@ctx.batch
def augmented_numbers(n, v):
    """Numbers are values: `m += 1` leaves n as it was."""
    m = n
    m += 1
    return n + m + v[0]


@ctx.batch
def augmented_item(v):
    """An item of an array is a number: `j += 1` leaves v as it was (the
    prefix function's `j = table[j - 1]` ... `j += 1`)."""
    j = v[1]
    j += 1
    v[0] = j
    return v[0] + v[1]


@ctx.batch
def bump_through_alias(arr):
    w = arr
    w += 1
    return 0


@ctx.batch
def calls_bump_through_alias(v):
    bump_through_alias(v)
    return v[0]


# ---- rows of a list and rows of an array -------------------------------------


@ctx.batch
def eliminate_with_pivoting(a):
    """Gaussian elimination on a list of rows, the textbook way: the pivot
    row swap rebinds two slots of the list (no row changes), and the
    elimination writes into rows."""
    n = len(a)
    m = [[a[i][j] for j in range(n)] for i in range(n)]
    for i in range(n):
        best = i
        for k in range(i + 1, n):
            if abs(m[k][i]) > abs(m[best][i]):
                best = k
        m[i], m[best] = m[best], m[i]
        for k in range(i + 1, n):
            f = m[k][i] / m[i][i]
            for j in range(i, n):
                m[k][j] -= f * m[i][j]
    return m[n - 1][n - 1]


@ctx.batch
def row_copied_then_written(n):
    """`list(dp[i - 1])` is a new row: writing it leaves dp[i - 1] alone."""
    dp = [[0] * 3 for _ in range(3)]
    for i in range(1, 3):
        dp[i] = list(dp[i - 1])
        dp[i][1] = n + i
    return dp[0][1] + dp[2][1]


@ctx.batch
def array_row_assigned_then_written(n):
    """On a NumPy array `dp[i] = dp[i - 1]` copies the row."""
    dp = np.zeros((3, 3))
    for i in range(1, 3):
        dp[i] = dp[i - 1]
        dp[i][1] = n + i
    return dp[0][1] + dp[2][1]


@ctx.batch
def row_shared_then_written(n):
    """On a list, storing the row before makes two slots one row: Python's
    write to dp[i] changes dp[0] too."""
    dp = [[0] * 3 for _ in range(3)]
    for i in range(1, 3):
        dp[i] = dp[i - 1]
        dp[i][1] = n + i
    return dp[0][1]


@ctx.batch
def row_shared_through_a_name(n):
    dp = [[0] * 3 for _ in range(3)]
    r = dp[0]
    dp[1] = r
    dp[1][1] = n
    return dp[0][1]


@ctx.batch
def array_rows_swapped(a, i, j):
    """NumPy's row swap by a tuple assignment leaves both rows equal to a[j]."""
    a[i], a[j] = a[j], a[i]
    return a[0][0] + 10 * a[1][0]
