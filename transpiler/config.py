"""The `[tool.autobatch]` table of a project's pyproject.toml.

    [tool.autobatch]
    sources = ["examples"]          # files or packages with batched functions
    output = "generated"            # where generated modules go
    backends = ["tensorflow", "numpy"]   # also "jax"

    [tool.autobatch.source_backends]  # a file's (or folder's) own list
    "examples/nuts.py" = ["tensorflow", "numpy"]

    [tool.autobatch.signatures]     # programs to generate ahead of any call
    "examples/fib.py::fib" = ["(int64[])"]

    [tool.autobatch.closures]       # values a factory's closures close over
    "examples/nuts.py::make_nuts_programs" = { target = "examples.nuts:standard_normal", step_size = 0.25 }

(see transpiler/closures.py).

A source file's modules are generated for `source_backends`' list of the
longest key that is the file or a folder above it, else for `backends`: a
file whose primitives are TensorFlow (or NumPy) functions cannot run on
JAX, and says so at build time.

Every key is optional; the defaults are the values above (with no
signatures: a module then holds the programs already listed in its header,
plus those declared with `@ctx.batch(signature=...)`).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from typing import Dict, List, Tuple


@dataclasses.dataclass(frozen=True)
class Config:
    root: str
    sources: Tuple[str, ...] = ("examples",)
    output: str = "generated"
    backends: Tuple[str, ...] = ("tensorflow", "numpy")
    signatures: Dict[str, List[str]] = dataclasses.field(default_factory=dict)
    closures: Dict[str, dict] = dataclasses.field(default_factory=dict)
    source_backends: Dict[str, Tuple[str, ...]] = dataclasses.field(default_factory=dict)

    def backends_for(self, relpath: str) -> Tuple[str, ...]:
        """The backends of source file `relpath` (relative to the root)."""
        keys = [
            k for k in self.source_backends
            if relpath == k or relpath.startswith(k.rstrip("/") + "/")
        ]
        return self.source_backends[max(keys, key=len)] if keys else self.backends

    @property
    def output_dir(self) -> str:
        return os.path.join(self.root, self.output)


def load(root: str) -> Config:
    path = os.path.join(root, "pyproject.toml")
    table = {}
    if os.path.exists(path):
        with open(path, "rb") as f:
            table = tomllib.load(f).get("tool", {}).get("autobatch", {})
    known = {"sources", "output", "backends", "signatures", "closures", "source_backends"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ValueError(f"{path}: unknown [tool.autobatch] keys {unknown}; known: {sorted(known)}")
    backends = _backends(path, "backends", table.get("backends", Config.backends))
    source_backends = {
        k: _backends(path, f"source_backends {k!r}", v)
        for k, v in table.get("source_backends", {}).items()
    }
    return Config(
        root=root,
        sources=tuple(table.get("sources", Config.sources)),
        output=table.get("output", Config.output),
        backends=backends,
        source_backends=source_backends,
        signatures={k: list(v) for k, v in table.get("signatures", {}).items()},
        closures=_closures(path, table.get("closures", {})),
    )


BACKENDS = ("tensorflow", "numpy", "jax", "tf", "np")  # the last two: aliases


def _backends(path, key, names):
    """A list of backend names, checked: a typo would generate nothing for it."""
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"{path}: [tool.autobatch] {key} wants a list of backend names")
    unknown = [n for n in names if n not in BACKENDS]
    if unknown:
        raise ValueError(
            f"{path}: [tool.autobatch] {key} names unknown backend(s) {unknown}; "
            f"known: {list(BACKENDS[:3])}"
        )
    return tuple(names)


def _closures(path, table):
    """`[tool.autobatch.closures]`: "FILE::FACTORY" -> {name: value} tables."""
    out = {}
    for key, values in table.items():
        if "::" not in key or not isinstance(values, dict):
            raise ValueError(
                f"{path}: [tool.autobatch.closures] wants `\"FILE::FACTORY\" = "
                f"{{name = value, ...}}`, got {key!r} = {values!r}"
            )
        out[key] = dict(values)
    return out
