"""Every function of the corpus with a maker of inputs.

`CASES[name]` is a `Case` (examples/corpus.py): the batched function and
`inputs(rng, batch) -> tuple of arrays`.  The inputs are chosen so that the
examples of one batch take different paths: found and not found, different
trip counts and recursion depths, invalid-input branches, already sorted and
reversed rows.  Per-example vectors have one fixed length per function.
Strings are arrays of character codes.
"""

import numpy as np

from examples.corpus import Case
from tests.corpus import (
    bit_tricks,
    bits,
    digits,
    dp_tables,
    dynamic_programming,
    formulas,
    maths,
    number_theory,
    numerical,
    primes,
    scans,
    searches,
    sequences,
    sorts,
    sorts_by_parts,
    string_search,
    strings,
    text_processing,
)

# ---- input helpers -----------------------------------------------------------


def ints(low, high):
    """One integer per example in [low, high)."""
    return lambda rng, n: (rng.integers(low, high, n),)


def mixed(rng, n, low, high, specials):
    """Integers in [low, high) with about a third replaced by special values."""
    values = rng.integers(low, high, n)
    chosen = rng.random(n) < 0.35
    values[chosen] = rng.choice(np.asarray(specials), int(chosen.sum()))
    return values


def vectors(rng, n, length, low, high):
    return rng.integers(low, high, (n, length))


def sorted_vectors(rng, n, length, low, high):
    return np.sort(rng.integers(low, high, (n, length)), axis=1)


def targets(rng, arrays, low, high):
    """Half the targets are taken from the example's own array, half are random."""
    n, length = arrays.shape
    found = arrays[np.arange(n), rng.integers(0, length, n)]
    missing = rng.integers(low, high, n)
    return np.where(rng.random(n) < 0.5, found, missing)


def sort_inputs(rng, n, length=8, low=0, high=50):
    """Random rows, with some already sorted, reversed, or all equal."""
    rows = rng.integers(low, high, (n, length))
    kind = rng.integers(0, 8, n)
    rows[kind == 0] = np.sort(rows[kind == 0], axis=1)
    rows[kind == 1] = np.sort(rows[kind == 1], axis=1)[:, ::-1]
    rows[kind == 2] = rows[kind == 2][:, :1]
    return rows


def text(rng, n, length, alphabet):
    """Strings as character codes, drawn from alphabet."""
    codes = np.array([ord(c) for c in alphabet])
    return codes[rng.integers(0, len(codes), (n, length))]


def palindromes(rng, n, length, alphabet):
    s = text(rng, n, length, alphabet)
    make = rng.random(n) < 0.5
    s[make] = np.concatenate([s[make][:, : (length + 1) // 2], s[make][:, : length // 2][:, ::-1]], axis=1)
    return s


# ---- searches ----------------------------------------------------------------


def _search_sorted(rng, n):
    arr = sorted_vectors(rng, n, 12, 0, 40)
    return arr, targets(rng, arr, -3, 44)


def _search_unsorted(rng, n):
    arr = vectors(rng, n, 12, 0, 20)
    return arr, targets(rng, arr, -2, 23)


def _interpolation(rng, n):
    arr = sorted_vectors(rng, n, 12, 0, 60)
    flat = rng.random(n) < 0.15
    arr[flat] = arr[flat][:, :1]  # all equal: the division guard
    return arr, targets(rng, arr, -5, 66)


def _quick_select(rng, n):
    return vectors(rng, n, 10, 0, 30), rng.integers(-1, 11, n)


def _first_missing(rng, n):
    return (vectors(rng, n, 8, -2, 10),)


SEARCHES = [
    Case("linear_search", scans.linear_search, _search_unsorted),
    Case("binary_search", searches.binary_search, _search_sorted),
    Case("binary_search_by_recursion", searches.binary_search_by_recursion, _search_sorted),
    Case("interpolation_search", searches.interpolation_search, _interpolation),
    Case("jump_search", searches.jump_search, _search_sorted),
    Case("exponential_search", searches.exponential_search, _search_sorted),
    Case("ternary_search", searches.ternary_search, _search_sorted),
    Case("double_linear_search", scans.double_linear_search, _search_unsorted),
    Case("index_of_max", scans.index_of_max, lambda rng, n: (vectors(rng, n, 12, 0, 10),)),
    Case(
        "count_occurrences",
        scans.count_occurrences,
        lambda rng, n: (vectors(rng, n, 12, 0, 5), rng.integers(-1, 6, n)),
    ),
    Case("contains", scans.contains, _search_unsorted),
    Case("first_missing_positive", scans.first_missing_positive, _first_missing),
    Case("min_and_max", scans.min_and_max, lambda rng, n: (vectors(rng, n, 12, -50, 50),)),
    Case("quick_select", scans.quick_select, _quick_select),
]

# ---- sorts -------------------------------------------------------------------


def _sort(rng, n):
    return (sort_inputs(rng, n),)


SORTS = [
    Case("bubble_sort", sorts.bubble_sort, _sort),
    Case("selection_sort", sorts.selection_sort, _sort),
    Case("insertion_sort", sorts.insertion_sort, _sort),
    Case("heap_sort", sorts_by_parts.heap_sort, _sort),
    Case("shell_sort", sorts.shell_sort, _sort),
    Case("gnome_sort", sorts.gnome_sort, _sort),
    Case("cocktail_shaker_sort", sorts.cocktail_shaker_sort, _sort),
    Case("odd_even_sort", sorts.odd_even_sort, _sort),
    Case(
        "counting_sort_digits",
        sorts_by_parts.counting_sort_digits,
        lambda rng, n: (sort_inputs(rng, n, 8, 0, 10),),
    ),
    Case("pancake_sort", sorts_by_parts.pancake_sort, _sort),
    Case("comb_sort", sorts.comb_sort, _sort),
    Case("quick_sort", sorts_by_parts.quick_sort, _sort),
    Case("merge_sort_bottom_up", sorts_by_parts.merge_sort_bottom_up, _sort),
    Case("is_sorted", sorts.is_sorted, _sort),
    Case("stooge_sort", sorts_by_parts.stooge_sort, _sort),
    Case("count_inversions", sorts.count_inversions, _sort),
]

# ---- number theory -----------------------------------------------------------


def _pairs(low, high, low2=None, high2=None):
    low2 = low if low2 is None else low2
    high2 = high if high2 is None else high2
    return lambda rng, n: (rng.integers(low, high, n), rng.integers(low2, high2, n))


def _modpow(rng, n):
    return rng.integers(0, 50, n), rng.integers(-2, 40, n), rng.integers(2, 50, n)


NUMBER_THEORY = [
    Case("euclidean_gcd_recursive", number_theory.euclidean_gcd_recursive, _pairs(0, 61)),
    Case("euclidean_gcd", number_theory.euclidean_gcd, _pairs(0, 61)),
    Case("greatest_common_divisor", number_theory.greatest_common_divisor, _pairs(-30, 31)),
    Case("least_common_multiple", number_theory.least_common_multiple, _pairs(0, 31)),
    Case("extended_euclid", number_theory.extended_euclid, _pairs(1, 61, 0, 61)),
    Case("modular_inverse", number_theory.modular_inverse, _pairs(1, 31, 2, 31)),
    Case("is_prime", primes.is_prime, ints(-5, 200)),
    Case("count_primes_below", primes.count_primes_below, ints(0, 60)),
    Case("largest_prime_factor", primes.largest_prime_factor, ints(2, 200)),
    Case("count_prime_factors", primes.count_prime_factors, ints(1, 500)),
    Case("totient", number_theory.totient, ints(1, 200)),
    Case("modular_exponential", number_theory.modular_exponential, _modpow),
    Case("binary_exponentiation", number_theory.binary_exponentiation, _pairs(-5, 6, 0, 21)),
    Case("sum_of_digits", digits.sum_of_digits, ints(-(10**6), 10**6)),
    Case("num_digits", digits.num_digits, ints(-(10**6), 10**6)),
    Case(
        "is_armstrong_number",
        digits.is_armstrong_number,
        lambda rng, n: (mixed(rng, n, -5, 10000, [0, 1, 9, 153, 370, 371, 407, 1634, 8208, 9474]),),
    ),
    Case(
        "is_palindrome_number",
        digits.is_palindrome_number,
        lambda rng, n: (mixed(rng, n, -100, 100000, [0, 7, 11, 121, 1221, 12321, 45654]),),
    ),
    Case("binomial_coefficient", sequences.binomial_coefficient, _pairs(0, 21, -2, 23)),
    Case("catalan_number", sequences.catalan_number, ints(-2, 16)),
    Case(
        "perfect_square",
        primes.perfect_square,
        lambda rng, n: (mixed(rng, n, -5, 500, [0, 1, 4, 49, 144, 400, 441]),),
    ),
    Case("factorial", sequences.factorial, ints(-3, 16), max_stack_depth=20),
    Case("ackermann", sequences.ackermann, _pairs(0, 3, 0, 4), max_stack_depth=40),
    Case("fibonacci", sequences.fibonacci, ints(0, 16), max_stack_depth=20),
    Case("tribonacci", sequences.tribonacci, ints(0, 31)),
    Case("integer_square_root", primes.integer_square_root, ints(0, 10000)),
    Case("factorial_trailing_zeros", sequences.factorial_trailing_zeros, ints(0, 1000)),
    Case("sum_of_multiples", sequences.sum_of_multiples, ints(0, 100)),
    Case("is_happy_number", digits.is_happy_number, ints(-3, 200)),
    Case(
        "is_perfect_number",
        primes.is_perfect_number,
        lambda rng, n: (mixed(rng, n, -2, 100, [6, 28, 496]),),
    ),
    Case("decimal_to_binary_digits", digits.decimal_to_binary_digits, ints(0, 1000)),
    Case(
        "is_krishnamurthy",
        digits.is_krishnamurthy,
        lambda rng, n: (mixed(rng, n, 0, 1000, [1, 2, 145, 40585]),),
    ),
    Case("is_harshad_number", digits.is_harshad_number, ints(-5, 200)),
    Case("juggler_steps", sequences.juggler_steps, ints(-1, 31)),
    Case("aliquot_sum", primes.aliquot_sum, ints(-3, 100)),
]

# ---- dynamic programming -----------------------------------------------------


def _two_words(len1, len2, alphabet="abc"):
    return lambda rng, n: (text(rng, n, len1, alphabet), text(rng, n, len2, alphabet))


def _knapsack(rng, n):
    return rng.integers(0, 21, n), vectors(rng, n, 6, 1, 11), vectors(rng, n, 6, 1, 31), rng.integers(0, 7, n)


def _coins(rng, n):
    return vectors(rng, n, 3, 1, 7), rng.choice([0, 1, 2, 3, 3, 3], n), rng.integers(-1, 16, n)


def _subset_sum(rng, n):
    return vectors(rng, n, 6, 1, 11), rng.integers(0, 7, n), rng.integers(0, 41, n)


def _obstacles(rng, n):
    return ((rng.random((n, 4, 4)) < 0.2).astype(np.int64),)


DYNAMIC_PROGRAMMING = [
    Case("climb_stairs", dynamic_programming.climb_stairs, ints(-1, 41)),
    Case("edit_distance", dp_tables.edit_distance, _two_words(7, 6)),
    Case("levenshtein_two_rows", dp_tables.levenshtein_two_rows, _two_words(5, 7)),
    Case("longest_common_subsequence", dp_tables.longest_common_subsequence, _two_words(8, 6)),
    Case(
        "longest_increasing_subsequence_length",
        dynamic_programming.longest_increasing_subsequence_length,
        lambda rng, n: (vectors(rng, n, 10, 0, 20),),
    ),
    Case(
        "max_subarray_sum",
        dynamic_programming.max_subarray_sum,
        lambda rng, n: (vectors(rng, n, 10, -10, 11),),
    ),
    Case("knapsack", dp_tables.knapsack, _knapsack),
    Case("count_coin_ways", dp_tables.count_coin_ways, _coins, max_stack_depth=25),
    Case("min_path_sum", dp_tables.min_path_sum, lambda rng, n: (rng.integers(0, 10, (n, 4, 5)),)),
    Case("rod_cutting", dynamic_programming.rod_cutting, lambda rng, n: (vectors(rng, n, 8, 1, 31),)),
    Case(
        "longest_common_substring_length",
        dp_tables.longest_common_substring_length,
        _two_words(8, 7, "ab"),
    ),
    Case(
        "max_product_subarray",
        dynamic_programming.max_product_subarray,
        lambda rng, n: (vectors(rng, n, 8, -4, 5),),
    ),
    Case("house_robber", dynamic_programming.house_robber, lambda rng, n: (vectors(rng, n, 8, 0, 21),)),
    Case("can_jump", dynamic_programming.can_jump, lambda rng, n: (vectors(rng, n, 8, 0, 4),)),
    Case("is_subset_sum", dp_tables.is_subset_sum, _subset_sum),
    Case("unique_paths_with_obstacles", dp_tables.unique_paths_with_obstacles, _obstacles),
    Case(
        "longest_palindromic_subsequence",
        dp_tables.longest_palindromic_subsequence,
        lambda rng, n: (text(rng, n, 8, "abc"),),
    ),
    Case(
        "trapped_rainwater",
        dynamic_programming.trapped_rainwater,
        lambda rng, n: (vectors(rng, n, 10, 0, 7),),
    ),
    Case("max_profit", dynamic_programming.max_profit, lambda rng, n: (vectors(rng, n, 8, 1, 21),)),
    Case(
        "max_sum_increasing_subsequence",
        dynamic_programming.max_sum_increasing_subsequence,
        lambda rng, n: (vectors(rng, n, 8, 0, 21),),
    ),
]

# ---- strings -----------------------------------------------------------------


def _anagrams(rng, n):
    first = text(rng, n, 6, "abcd")
    second = text(rng, n, 6, "abcd")
    make = rng.random(n) < 0.5
    second[make] = rng.permuted(first[make], axis=1)
    return first, second


def _pattern_text(plen, tlen, alphabet="ab"):
    def make(rng, n):
        return text(rng, n, plen, alphabet), text(rng, n, tlen, alphabet)

    return make


def _text_pattern(tlen, plen, alphabet="ab"):
    def make(rng, n):
        return text(rng, n, tlen, alphabet), text(rng, n, plen, alphabet)

    return make


def _atoi(rng, n):
    rows = []
    for _ in range(n):
        s = " " * int(rng.integers(0, 3)) + str(rng.choice(["", "+", "-", "-"]))
        s += "".join(str(d) for d in rng.integers(0, 10, rng.integers(0, 5)))
        s += str(rng.choice(["", "x", " 7", "-"]))
        s = s.ljust(8)[:8]
        rows.append([ord(c) for c in s])
    return (np.array(rows, dtype=np.int64).reshape(n, 8),)


def _prefix_pairs(rng, n):
    first = text(rng, n, 8, "ab")
    second = first.copy()
    where = rng.integers(0, 9, n)
    for i in range(n):
        if where[i] < 8:
            second[i, where[i]] = ord("a") + ord("b") - second[i, where[i]]
    return first, second


def _rotations(rng, n):
    first = text(rng, n, 6, "ab")
    shifts = rng.integers(0, 6, n)
    second = np.stack([np.roll(row, s) for row, s in zip(first, shifts)]) if n else first.copy()
    mess = rng.random(n) < 0.4
    second[mess] = text(rng, int(mess.sum()), 6, "ab")
    return first, second


def _brackets(rng, n):
    balanced = ["([])x()x", "(())[]xx", "x[()]()x", "()()()()", "[[]]x(x)", "xxxxxxxx", "(x[x]x)x"]
    s = text(rng, n, 8, "()[]x")
    make = rng.random(n) < 0.5
    picks = rng.integers(0, len(balanced), n)
    for i in np.flatnonzero(make):
        s[i] = [ord(c) for c in balanced[picks[i]]]
    return (s,)


def _hamming(rng, n):
    return text(rng, n, 8, "ab"), text(rng, n, 8, "ab")


STRINGS = [
    Case("is_palindrome", strings.is_palindrome, lambda rng, n: (palindromes(rng, n, 7, "ab"),)),
    Case("count_vowels", strings.count_vowels, lambda rng, n: (text(rng, n, 12, "abeiouxyz "),)),
    Case("check_anagrams", strings.check_anagrams, _anagrams),
    Case("naive_pattern_search", string_search.naive_pattern_search, _text_pattern(12, 3)),
    Case("get_failure_array", string_search.get_failure_array, lambda rng, n: (text(rng, n, 8, "ab"),)),
    Case("kmp_search", string_search.kmp_search, _pattern_text(3, 12)),
    Case("prefix_function", string_search.prefix_function, lambda rng, n: (text(rng, n, 8, "ab"),)),
    Case("rabin_karp", string_search.rabin_karp, _pattern_text(3, 12, "abc")),
    Case("hamming_distance", strings.hamming_distance, _hamming),
    Case("to_upper", text_processing.to_upper, lambda rng, n: (text(rng, n, 8, "aZqB 9z"),)),
    Case("swap_case", text_processing.swap_case, lambda rng, n: (text(rng, n, 8, "aZqB 9z@"),)),
    Case(
        "count_distinct_letters",
        strings.count_distinct_letters,
        lambda rng, n: (text(rng, n, 10, "abcdefgh "),),
    ),
    Case("longest_run", strings.longest_run, lambda rng, n: (text(rng, n, 10, "ab"),)),
    Case("word_count", strings.word_count, lambda rng, n: (text(rng, n, 12, "ab  "),)),
    Case("string_to_int", text_processing.string_to_int, _atoi),
    Case("balanced_brackets", text_processing.balanced_brackets, _brackets),
    Case(
        "caesar_encrypt",
        text_processing.caesar_encrypt,
        lambda rng, n: (text(rng, n, 8, "abcxyz "), rng.integers(-30, 31, n)),
    ),
    Case("common_prefix_length", strings.common_prefix_length, _prefix_pairs),
    Case("count_overlapping", string_search.count_overlapping, _text_pattern(12, 2)),
    Case("is_rotation", string_search.is_rotation, _rotations),
]

# ---- bits --------------------------------------------------------------------


def _single_number(rng, n):
    pairs = rng.integers(0, 100, (n, 4))
    single = rng.integers(0, 100, (n, 1))
    return (rng.permuted(np.concatenate([pairs, pairs, single], axis=1), axis=1),)


def _missing(rng, n):
    rows = np.stack([rng.permutation(9) for _ in range(n)]) if n else np.zeros((0, 9), np.int64)
    return (rows[:, :8].astype(np.int64),)


BITS = [
    Case(
        "get_set_bits_count_using_brian_kernighans_algorithm",
        bits.get_set_bits_count_using_brian_kernighans_algorithm,
        ints(-3, 1000),
    ),
    Case(
        "get_set_bits_count_using_modulo_operator",
        bits.get_set_bits_count_using_modulo_operator,
        ints(-3, 1000),
    ),
    Case(
        "is_power_of_two",
        bits.is_power_of_two,
        lambda rng, n: (mixed(rng, n, -4, 1100, [0, 1, 2, 64, 512, 1024]),),
    ),
    Case("bit_operations", bit_tricks.bit_operations, _pairs(0, 1000, 0, 12)),
    Case("highest_set_bit_position", bits.highest_set_bit_position, ints(0, 5000)),
    Case("gray_code", bit_tricks.gray_code, ints(0, 1000)),
    Case("reverse_bits_8", bit_tricks.reverse_bits_8, ints(0, 256)),
    Case("single_number", bit_tricks.single_number, _single_number),
    Case("swap_odd_even_bits", bit_tricks.swap_odd_even_bits, ints(0, 2**31)),
    Case("is_even", bits.is_even, ints(-50, 51)),
    Case("twos_complement", bit_tricks.twos_complement, _pairs(0, 256, 1, 17)),
    Case(
        "lowest_set_bit_index",
        bits.lowest_set_bit_index,
        lambda rng, n: (mixed(rng, n, 0, 1000, [0, 0, 8, 64, 1024]),),
    ),
    Case("find_missing_number", bit_tricks.find_missing_number, _missing),
    Case("different_signs", bits.different_signs, _pairs(-50, 51)),
    Case("next_power_of_two", bit_tricks.next_power_of_two, ints(1, 5000)),
    Case("add_without_plus", bit_tricks.add_without_plus, _pairs(0, 1000)),
    Case("binary_count_trailing_zeros", bits.binary_count_trailing_zeros, ints(-2, 1000)),
    Case("bit_hamming_distance", bits.bit_hamming_distance, _pairs(0, 1000)),
]

# ---- maths -------------------------------------------------------------------


def _floats(low, high, integral=0.3):
    """Floats in [low, high), some of them whole numbers."""

    def make(rng, n):
        x = rng.uniform(low, high, n)
        whole = rng.random(n) < integral
        x[whole] = np.round(x[whole])
        return (x,)

    return make


def _quadratic(rng, n):
    return rng.integers(1, 4, n), rng.integers(-6, 7, n), rng.integers(-3, 4, n)


def _geometric(rng, n):
    return rng.integers(1, 6, n), rng.integers(-3, 4, n), rng.integers(0, 11, n)


def _find_max(rng, n):
    left = rng.integers(0, 4, n)
    right = np.where(rng.random(n) < 0.2, left, rng.integers(4, 8, n))
    return vectors(rng, n, 8, -20, 20), left, right


def _zeller(rng, n):
    return rng.integers(1, 29, n), rng.integers(1, 13, n), rng.integers(1900, 2101, n)


def _power_float(rng, n):
    return rng.uniform(0.5, 2.0, n), rng.integers(-6, 7, n)


def _fraction(rng, n):
    return rng.integers(-50, 51, n), rng.choice([-1, 1], n) * rng.integers(1, 31, n)


MATHS = [
    Case("abs_max", maths.abs_max, lambda rng, n: (vectors(rng, n, 8, -20, 21),)),
    Case("mean", maths.mean, lambda rng, n: (vectors(rng, n, 8, -10, 11),)),
    Case(
        "average_absolute_deviation",
        maths.average_absolute_deviation,
        lambda rng, n: (vectors(rng, n, 8, -10, 11),),
    ),
    Case("max_min_difference", maths.max_min_difference, lambda rng, n: (vectors(rng, n, 8, -10, 11),)),
    Case("factorial_iterative", maths.factorial_iterative, ints(-3, 21)),
    Case("square_root_iterative", numerical.square_root_iterative, _floats(-2.0, 50.0)),
    Case("floor_div_float", numerical.floor_div_float, _floats(-10.0, 10.0)),
    Case("ceil_float", numerical.ceil_float, _floats(-10.0, 10.0)),
    Case("quadratic_roots_count", numerical.quadratic_roots_count, _quadratic),
    Case("larger_quadratic_root", numerical.larger_quadratic_root, _quadratic),
    Case(
        "sum_of_arithmetic_series",
        formulas.sum_of_arithmetic_series,
        lambda rng, n: (rng.integers(-5, 6, n), rng.integers(-3, 4, n), rng.integers(0, 20, n)),
    ),
    Case("sum_of_geometric_progression", formulas.sum_of_geometric_progression, _geometric),
    Case(
        "perfect_cube",
        numerical.perfect_cube,
        lambda rng, n: (mixed(rng, n, 0, 1000, [0, 1, 8, 27, 64, 125, 343, 729]),),
    ),
    Case("greatest_of_three", maths.greatest_of_three, lambda rng, n: tuple(rng.integers(-9, 10, (3, n)))),
    Case("find_max_recursive", maths.find_max_recursive, _find_max),
    Case("signum", maths.signum, ints(-5, 6)),
    Case(
        "euclidean_distance",
        formulas.euclidean_distance,
        lambda rng, n: (rng.normal(size=(n, 4)), rng.normal(size=(n, 4))),
    ),
    Case(
        "manhattan_distance",
        formulas.manhattan_distance,
        lambda rng, n: (vectors(rng, n, 4, -9, 10), vectors(rng, n, 4, -9, 10)),
    ),
    Case(
        "dot_product",
        formulas.dot_product,
        lambda rng, n: (vectors(rng, n, 5, -9, 10), vectors(rng, n, 5, -9, 10)),
    ),
    Case("horner", formulas.horner, lambda rng, n: (rng.normal(size=(n, 5)), rng.normal(size=n))),
    Case("triangle_type", formulas.triangle_type, lambda rng, n: tuple(rng.integers(0, 5, (3, n)))),
    Case("harmonic_number", numerical.harmonic_number, ints(0, 31)),
    Case(
        "is_leap_year",
        formulas.is_leap_year,
        lambda rng, n: (mixed(rng, n, 1800, 2400, [1900, 2000, 2100, 2024]),),
    ),
    Case("zeller_day_of_week", formulas.zeller_day_of_week, _zeller),
    Case("round_to_multiple", numerical.round_to_multiple, _pairs(-50, 51, 1, 11)),
    Case("most_frequent_digit", maths.most_frequent_digit, lambda rng, n: (vectors(rng, n, 10, 0, 10),)),
    Case("power_float", numerical.power_float, _power_float),
    Case("decimal_to_fraction_denominator", formulas.decimal_to_fraction_denominator, _fraction),
    Case(
        "is_in_unit_circle", numerical.is_in_unit_circle, lambda rng, n: tuple(rng.uniform(-1.2, 1.2, (2, n)))
    ),
    Case("split_minutes", maths.split_minutes, ints(0, 1000)),
]

GROUPS = {
    "searches": SEARCHES,
    "sorts": SORTS,
    "number_theory": NUMBER_THEORY,
    "dynamic_programming": DYNAMIC_PROGRAMMING,
    "strings": STRINGS,
    "bits": BITS,
    "maths": MATHS,
}

ALL_CASES = {case.name: case for group in GROUPS.values() for case in group}
GROUP_OF = {case.name: group for group, cases in GROUPS.items() for case in cases}

# Functions whose constructs the rest of the corpus already covers.  They
# run only with AUTOBATCH_CORPUS=full (tests/test_corpus.py): every XLA
# compile costs about a second per batch size, and the default run must
# stay within a few minutes on two cores.
EXTRA = {
    # searches and sorts
    "double_linear_search",
    "index_of_max",
    "count_occurrences",
    "selection_sort",
    "insertion_sort",
    "cocktail_shaker_sort",
    "count_inversions",
    # number theory, primes, digits, sequences
    "euclidean_gcd_recursive",
    "least_common_multiple",
    "totient",
    "count_prime_factors",
    "is_perfect_number",
    "integer_square_root",
    "sum_of_digits",
    "decimal_to_binary_digits",
    "is_palindrome_number",
    "is_harshad_number",
    "catalan_number",
    "tribonacci",
    "factorial_trailing_zeros",
    "sum_of_multiples",
    # dynamic programming
    "climb_stairs",
    "house_robber",
    "max_product_subarray",
    "max_sum_increasing_subsequence",
    "longest_common_substring_length",
    "count_coin_ways",
    "is_subset_sum",
    # strings
    "longest_run",
    "word_count",
    "count_overlapping",
    # bits
    "highest_set_bit_position",
    "is_even",
    "different_signs",
    "bit_hamming_distance",
    "swap_odd_even_bits",
    "next_power_of_two",
    "add_without_plus",
    # maths
    "greatest_of_three",
    "split_minutes",
    "average_absolute_deviation",
    "signum",
    "floor_div_float",
    "ceil_float",
    "quadratic_roots_count",
    "harmonic_number",
    "is_in_unit_circle",
    "is_leap_year",
    "decimal_to_fraction_denominator",
    "sum_of_arithmetic_series",
    "manhattan_distance",
}

CASES = {name: case for name, case in ALL_CASES.items() if name not in EXTRA}
EXTRA_CASES = {name: case for name, case in ALL_CASES.items() if name in EXTRA}
