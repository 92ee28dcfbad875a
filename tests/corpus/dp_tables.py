"""Dynamic programming with two-dimensional tables (list of lists) and the
classic exponential recursions.
"""

import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def edit_distance(word1, word2):
    """Levenshtein distance with the full (m + 1) x (n + 1) table."""
    m = len(word1)
    n = len(word2)
    dp = [[0 for _ in range(n + 1)] for _ in range(m + 1)]

    for i in range(m + 1):
        for j in range(n + 1):
            if i == 0:  # first string is empty
                dp[i][j] = j
            elif j == 0:  # second string is empty
                dp[i][j] = i
            elif word1[i - 1] == word2[j - 1]:  # last characters are equal
                dp[i][j] = dp[i - 1][j - 1]
            else:
                insert = dp[i][j - 1]
                delete = dp[i - 1][j]
                replace = dp[i - 1][j - 1]
                dp[i][j] = 1 + min(insert, delete, replace)
    return dp[m][n]


@ctx.batch
def levenshtein_two_rows(first_word, second_word):
    """Levenshtein distance keeping only the previous row."""
    if len(first_word) < len(second_word):
        return levenshtein_two_rows(second_word, first_word)

    previous_row = list(range(len(second_word) + 1))

    for i, c1 in enumerate(first_word):
        current_row = [i + 1] + [0] * len(second_word)
        for j, c2 in enumerate(second_word):
            insertions = previous_row[j + 1] + 1
            deletions = current_row[j] + 1
            substitutions = previous_row[j] + (c1 != c2)
            current_row[j + 1] = min(insertions, deletions, substitutions)
        previous_row = current_row

    return previous_row[-1]


@ctx.batch
def longest_common_subsequence(x, y):
    """Length of the longest common subsequence of x and y."""
    m = len(x)
    n = len(y)
    dp = [[0] * (n + 1) for _ in range(m + 1)]

    for i in range(1, m + 1):
        for j in range(1, n + 1):
            match = 1 if x[i - 1] == y[j - 1] else 0
            dp[i][j] = max(dp[i - 1][j], dp[i][j - 1], dp[i - 1][j - 1] + match)

    return dp[m][n]


@ctx.batch
def longest_common_substring_length(text1, text2):
    """Length of the longest run the two sequences share."""
    text1_length = len(text1)
    text2_length = len(text2)
    dp = [[0] * (text2_length + 1) for _ in range(text1_length + 1)]
    ans_length = 0

    for i in range(1, text1_length + 1):
        for j in range(1, text2_length + 1):
            if text1[i - 1] == text2[j - 1]:
                dp[i][j] = 1 + dp[i - 1][j - 1]
                if dp[i][j] > ans_length:
                    ans_length = dp[i][j]
    return ans_length


@ctx.batch
def min_path_sum(grid):
    """Cheapest path from the top-left to the bottom-right moving right or down."""
    rows = len(grid)
    cols = len(grid[0])
    dp = [[0] * cols for _ in range(rows)]
    dp[0][0] = grid[0][0]
    for j in range(1, cols):
        dp[0][j] = dp[0][j - 1] + grid[0][j]
    for i in range(1, rows):
        dp[i][0] = dp[i - 1][0] + grid[i][0]
    for i in range(1, rows):
        for j in range(1, cols):
            dp[i][j] = grid[i][j] + min(dp[i - 1][j], dp[i][j - 1])
    return dp[-1][-1]


@ctx.batch
def unique_paths_with_obstacles(grid):
    """Right/down paths through a grid whose 1s are walls."""
    rows = len(grid)
    cols = len(grid[0])
    if grid[0][0] == 1:
        return 0
    paths = [[0] * cols for _ in range(rows)]
    paths[0][0] = 1
    for i in range(rows):
        for j in range(cols):
            if grid[i][j] == 1:
                paths[i][j] = 0
                continue
            if i > 0:
                paths[i][j] += paths[i - 1][j]
            if j > 0:
                paths[i][j] += paths[i][j - 1]
    return paths[rows - 1][cols - 1]


@ctx.batch
def longest_palindromic_subsequence(s):
    """Length of the longest palindromic subsequence."""
    n = len(s)
    dp = [[0] * n for _ in range(n)]
    for i in range(n - 1, -1, -1):
        dp[i][i] = 1
        for j in range(i + 1, n):
            if s[i] == s[j]:
                dp[i][j] = dp[i + 1][j - 1] + 2
            else:
                dp[i][j] = max(dp[i + 1][j], dp[i][j - 1])
    return dp[0][n - 1]


@ctx.batch
def knapsack(capacity, weights, values, counter):
    """0/1 knapsack over the first `counter` items, by plain recursion."""
    # Base Case
    if counter == 0 or capacity == 0:
        return 0

    # If weight of the nth item is more than Knapsack of capacity,
    # then this item cannot be included in the optimal solution,
    # else return the maximum of two cases:
    # (1) nth item included
    # (2) not included
    if weights[counter - 1] > capacity:
        return knapsack(capacity, weights, values, counter - 1)
    else:
        left_capacity = capacity - weights[counter - 1]
        new_value_included = values[counter - 1] + knapsack(left_capacity, weights, values, counter - 1)
        without_new_value = knapsack(capacity, weights, values, counter - 1)
        return max(new_value_included, without_new_value)


@ctx.batch
def count_coin_ways(coins, n, amount):
    """Ways to make amount from the first n coin kinds (unlimited supply)."""
    if amount == 0:
        return 1
    if amount < 0 or n <= 0:
        return 0
    return count_coin_ways(coins, n - 1, amount) + count_coin_ways(coins, n, amount - coins[n - 1])


@ctx.batch
def is_subset_sum(arr, n, required_sum):
    """Does some subset of arr[:n] add up to required_sum?"""
    if required_sum == 0:
        return True
    if n == 0:
        return False
    if arr[n - 1] > required_sum:
        return is_subset_sum(arr, n - 1, required_sum)
    return is_subset_sum(arr, n - 1, required_sum) or is_subset_sum(arr, n - 1, required_sum - arr[n - 1])
