"""Rewriting and parsing text as character codes: case changes, Caesar
cipher, atoi, bracket matching.
"""

import tempfile

from transpiler import Context

ctx = Context(generated_dir=tempfile.mkdtemp(prefix="autobatch-corpus-"))


@ctx.batch
def to_upper(word):
    """Uppercase the ASCII letters a-z in place."""
    for i, char in enumerate(word):
        if ord("a") <= char <= ord("z"):
            word[i] = char - 32
    return word


@ctx.batch
def swap_case(sentence):
    """Flip the case of every ASCII letter (bit 5 is the case bit)."""
    for i in range(len(sentence)):
        char = sentence[i]
        if 65 <= char <= 90 or 97 <= char <= 122:
            sentence[i] = char ^ 32
    return sentence


@ctx.batch
def caesar_encrypt(text, key):
    """Shift lowercase letters by key places, wrapping around z."""
    for i, char in enumerate(text):
        if ord("a") <= char <= ord("z"):
            text[i] = (char - ord("a") + key) % 26 + ord("a")
    return text


@ctx.batch
def string_to_int(s):
    """atoi: skip spaces, read a sign and digits, stop at anything else.

    Returns None when no digit was read.
    """
    i = 0
    n = len(s)
    while i < n and s[i] == ord(" "):
        i += 1

    sign = 1
    if i < n and s[i] in (ord("+"), ord("-")):
        if s[i] == ord("-"):
            sign = -1
        i += 1

    result = 0
    digits = 0
    while i < n and ord("0") <= s[i] <= ord("9"):
        result = result * 10 + (s[i] - ord("0"))
        digits += 1
        i += 1

    if digits == 0:
        return None
    return sign * result


@ctx.batch
def balanced_brackets(s):
    """Are the ( ) [ ] brackets balanced?  Other characters are ignored."""
    stack = [0] * len(s)
    top = 0
    for char in s:
        if char == ord("(") or char == ord("["):
            stack[top] = char
            top += 1
        elif char == ord(")") or char == ord("]"):
            if top == 0:
                return False
            top -= 1
            opening = stack[top]
            if char == ord(")") and opening != ord("("):
                return False
            if char == ord("]") and opening != ord("["):
                return False
    return top == 0
