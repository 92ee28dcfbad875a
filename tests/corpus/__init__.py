"""A held-in corpus of ordinary algorithm code (issue 29, "Real Python, as written").

Searches, sorts, number theory, dynamic programming, string algorithms, bit
manipulation and small maths, written the way public algorithm collections
write them: docstrings, early returns, helper functions, `while` loops,
`for x in arr`, builtins, `isinstance` input checks, `None` for "not found",
swaps, in-place helpers, DP tables and recursion.

The only adaptations are the ones the README asks of a user: each function
is decorated with `@ctx.batch`, and inputs that would be Python lists are
NumPy arrays (a string is a NumPy int array of character codes).  Nothing
else is shaped to suit the compiler.

`tests/corpus/cases.py` pairs every function with inputs whose examples take
different paths; `tests/test_corpus.py` checks batched == per-example Python
on NumPy, TF graph and TF+XLA.
"""
