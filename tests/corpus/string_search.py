"""Pattern search in strings of character codes: naive, KMP, the prefix
function, Rabin-Karp, overlapping counts, rotations.
"""

import tempfile

from transpiler import Context

# get_failure_array is refused (it appends): the corpus keeps it beside the
# others and tests its refusal at the call (tests/test_corpus.py, REFUSED).
ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"), check_when_decorated=False)


@ctx.batch
def naive_pattern_search(s, pattern):
    """Index of the first occurrence of pattern in s, or -1."""
    pat_len = len(pattern)
    for i in range(len(s) - pat_len + 1):
        match_found = True
        for j in range(pat_len):
            if s[i + j] != pattern[j]:
                match_found = False
                break
        if match_found:
            return i
    return -1


@ctx.batch
def get_failure_array(pattern):
    """KMP failure function: longest proper prefix that is also a suffix."""
    failure = [0]
    i = 0
    j = 1
    while j < len(pattern):
        if pattern[i] == pattern[j]:
            i += 1
        elif i > 0:
            i = failure[i - 1]
            continue
        j += 1
        failure.append(i)
    return failure


@ctx.batch
def kmp_search(pattern, text):
    """True when pattern occurs in text, Knuth-Morris-Pratt."""
    failure = get_failure_array(pattern)

    i, j = 0, 0  # index into text, pattern
    while i < len(text):
        if pattern[j] == text[i]:
            if j == (len(pattern) - 1):
                return True
            j += 1
        # if this is a prefix in our pattern
        # just go back far enough to continue
        elif j > 0:
            j = failure[j - 1]
            continue
        i += 1
    return False


@ctx.batch
def prefix_function(input_string):
    """For each position the length of the longest border of the prefix."""
    prefix_result = [0] * len(input_string)

    for i in range(1, len(input_string)):
        # use last results for better performance - dynamic programming
        j = prefix_result[i - 1]
        while j > 0 and input_string[i] != input_string[j]:
            j = prefix_result[j - 1]

        if input_string[i] == input_string[j]:
            j += 1
        prefix_result[i] = j

    return prefix_result


@ctx.batch
def rabin_karp(pattern, text):
    """Rolling-hash search; True when pattern occurs in text."""
    alphabet_size = 256
    modulus = 1000003
    p_len = len(pattern)
    t_len = len(text)
    if p_len > t_len:
        return False

    p_hash = 0
    text_hash = 0
    modulus_power = 1

    # Calculating the hash of pattern and substring of text
    for i in range(p_len):
        p_hash = (pattern[i] + p_hash * alphabet_size) % modulus
        text_hash = (text[i] + text_hash * alphabet_size) % modulus
        if i == p_len - 1:
            continue
        modulus_power = (modulus_power * alphabet_size) % modulus

    for i in range(t_len - p_len + 1):
        if text_hash == p_hash:
            matched = True
            for k in range(p_len):
                if text[i + k] != pattern[k]:
                    matched = False
                    break
            if matched:
                return True
        if i == t_len - p_len:
            continue
        # Calculate the https://en.wikipedia.org/wiki/Rolling_hash
        text_hash = ((text_hash - text[i] * modulus_power) * alphabet_size + text[i + p_len]) % modulus
    return False


@ctx.batch
def count_overlapping(text, pattern):
    """Occurrences of pattern in text, overlaps included."""
    count = 0
    for i in range(len(text) - len(pattern) + 1):
        j = 0
        while j < len(pattern) and text[i + j] == pattern[j]:
            j += 1
        if j == len(pattern):
            count += 1
    return count


@ctx.batch
def is_rotation(first, second):
    """Is second a rotation of first?"""
    n = len(first)
    if n != len(second):
        return False
    for shift in range(n):
        k = 0
        while k < n and first[(shift + k) % n] == second[k]:
            k += 1
        if k == n:
            return True
    return False
