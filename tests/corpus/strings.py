"""String algorithms over arrays of character codes (what a `str` becomes
when it is batched): palindromes, counts, anagrams, distances, words.
"""

import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))

VOWELS = (ord("a"), ord("e"), ord("i"), ord("o"), ord("u"))
SPACE = ord(" ")


@ctx.batch
def is_palindrome(s):
    """Two pointers walking towards the middle."""
    start_i = 0
    end_i = len(s) - 1
    while start_i < end_i:
        if s[start_i] == s[end_i]:
            start_i += 1
            end_i -= 1
        else:
            return False
    return True


@ctx.batch
def count_vowels(s):
    """How many of the characters are lowercase vowels."""
    count = 0
    for char in s:
        if char in VOWELS:
            count += 1
    return count


@ctx.batch
def check_anagrams(first_str, second_str):
    """Same letters with the same counts (lowercase a-z)."""
    if len(first_str) != len(second_str):
        return False

    count = [0] * 26
    for i in range(len(first_str)):
        count[first_str[i] - ord("a")] += 1
        count[second_str[i] - ord("a")] -= 1

    for _count in count:
        if _count != 0:
            return False
    return True


@ctx.batch
def hamming_distance(string1, string2):
    """Number of positions where the two equal-length strings differ."""
    if len(string1) != len(string2):
        return -1

    count = 0
    for char1, char2 in zip(string1, string2):
        if char1 != char2:
            count += 1
    return count


@ctx.batch
def count_distinct_letters(text):
    """How many different lowercase letters occur."""
    seen = [False] * 26
    distinct = 0
    for char in text:
        if ord("a") <= char <= ord("z"):
            index = char - ord("a")
            if not seen[index]:
                seen[index] = True
                distinct += 1
    return distinct


@ctx.batch
def longest_run(s):
    """Length of the longest block of one repeated character."""
    best = 1
    current = 1
    for i in range(1, len(s)):
        if s[i] == s[i - 1]:
            current += 1
            best = max(best, current)
        else:
            current = 1
    return best


@ctx.batch
def word_count(sentence):
    """Words separated by runs of spaces."""
    count = 0
    in_word = False
    for char in sentence:
        if char == SPACE:
            in_word = False
        elif not in_word:
            in_word = True
            count += 1
    return count


@ctx.batch
def common_prefix_length(first, second):
    """How many leading characters the two strings share."""
    length = 0
    for a, b in zip(first, second):
        if a != b:
            break
        length += 1
    return length
