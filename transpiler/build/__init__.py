"""The build system: what a Context's functions become, apart from the user's API.

A Context (transpiler/context.py) is the registry of decorated functions;
these modules read it as data and do the rest, one job each:

- function_texts: what of a function goes into a source hash or cache key;
- declarations: which programs the inputs (signature=, pyproject, lock) declare;
- compiled: one program through the compiler (transpiler/pipeline.py), memoized;
- writer: the generated module for a source file and backend, as text;
- entries: the entry function a call runs, found fresh or (re)generated.

`autobatch generate`, `check` and `diff` (transpiler/regenerate.py) call
`declarations` and `writer` directly, not through a Context.  Every module
here is light at import: the compiler is imported inside the functions that
build.
"""
