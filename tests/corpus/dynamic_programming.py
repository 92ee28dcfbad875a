"""Dynamic programming over one array: `[0] * n` tables, rolling values,
Kadane-style scans.
"""

import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def climb_stairs(number_of_steps):
    """Ways to climb number_of_steps taking 1 or 2 steps at a time."""
    if number_of_steps <= 0:
        return 0
    if number_of_steps == 1:
        return 1
    previous, current = 1, 1
    for _ in range(number_of_steps - 1):
        current, previous = current + previous, current
    return current


@ctx.batch
def longest_increasing_subsequence_length(arr):
    """O(n^2) LIS: lis[i] is the longest increasing run ending at i."""
    n = len(arr)
    lis = [1] * n
    for i in range(1, n):
        for j in range(i):
            if arr[i] > arr[j] and lis[i] < lis[j] + 1:
                lis[i] = lis[j] + 1
    return max(lis)


@ctx.batch
def max_subarray_sum(arr):
    """Kadane's algorithm."""
    best_sum = arr[0]
    current_sum = 0
    for num in arr:
        current_sum = max(num, current_sum + num)
        best_sum = max(best_sum, current_sum)
    return best_sum


@ctx.batch
def rod_cutting(prices):
    """Best revenue from a rod of length len(prices); prices[i] sells length i + 1."""
    n = len(prices)
    max_rev = [0] * (n + 1)
    for i in range(1, n + 1):
        max_revenue_i = -1
        for j in range(1, i + 1):
            max_revenue_i = max(max_revenue_i, prices[j - 1] + max_rev[i - j])
        max_rev[i] = max_revenue_i
    return max_rev[n]


@ctx.batch
def max_product_subarray(numbers):
    """Largest product of a contiguous run."""
    max_till_now = min_till_now = max_prod = numbers[0]

    for i in range(1, len(numbers)):
        # update the maximum and minimum subarray products
        number = numbers[i]
        if number < 0:
            max_till_now, min_till_now = min_till_now, max_till_now
        max_till_now = max(number, max_till_now * number)
        min_till_now = min(number, min_till_now * number)

        # update the maximum product found till now
        max_prod = max(max_prod, max_till_now)

    return max_prod


@ctx.batch
def house_robber(nums):
    """Most money from houses that are not next to each other."""
    prev_max = 0
    curr_max = 0
    for num in nums:
        prev_max, curr_max = curr_max, max(curr_max, prev_max + num)
    return curr_max


@ctx.batch
def can_jump(nums):
    """Can we reach the last index, where nums[i] is the longest jump from i?"""
    farthest = 0
    for i, jump in enumerate(nums):
        if i > farthest:
            return False
        farthest = max(farthest, i + jump)
    return True


@ctx.batch
def trapped_rainwater(heights):
    """Water held between bars after rain."""
    length = len(heights)
    left_max = [0] * length
    left_max[0] = heights[0]
    for i in range(1, length):
        left_max[i] = max(heights[i], left_max[i - 1])

    right_max = [0] * length
    right_max[length - 1] = heights[length - 1]
    for i in range(length - 2, -1, -1):
        right_max[i] = max(heights[i], right_max[i + 1])

    total = 0
    for i in range(length):
        total += min(left_max[i], right_max[i]) - heights[i]
    return total


@ctx.batch
def max_profit(prices):
    """Best single buy-then-sell profit."""
    min_price = float("inf")
    profit = 0
    for price in prices:
        min_price = min(price, min_price)
        profit = max(price - min_price, profit)
    return profit


@ctx.batch
def max_sum_increasing_subsequence(arr):
    """Largest sum of a strictly increasing subsequence."""
    n = len(arr)
    msis = [0] * n
    for i in range(n):
        msis[i] = arr[i]

    for i in range(1, n):
        for j in range(i):
            if arr[i] > arr[j] and msis[i] < msis[j] + arr[i]:
                msis[i] = msis[j] + arr[i]

    best = 0
    for value in msis:
        if value > best:
            best = value
    return best
