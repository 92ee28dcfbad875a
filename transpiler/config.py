"""The `[tool.autobatch]` table of a project's pyproject.toml.

    [tool.autobatch]
    sources = ["examples"]          # files or packages with batched functions
    output = "generated"            # where generated modules go
    backends = ["tensorflow", "numpy"]

    [tool.autobatch.signatures]     # programs to generate ahead of any call
    "examples/fib.py::fib" = ["(int64[])"]

    [tool.autobatch.closures]       # values a factory's closures close over
    "examples/nuts.py::make_nuts_programs" = { target = "examples.nuts:standard_normal", step_size = 0.25 }

(see transpiler/closures.py).

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

    @property
    def output_dir(self) -> str:
        return os.path.join(self.root, self.output)


def load(root: str) -> Config:
    path = os.path.join(root, "pyproject.toml")
    table = {}
    if os.path.exists(path):
        with open(path, "rb") as f:
            table = tomllib.load(f).get("tool", {}).get("autobatch", {})
    known = {"sources", "output", "backends", "signatures", "closures"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ValueError(f"{path}: unknown [tool.autobatch] keys {unknown}; known: {sorted(known)}")
    return Config(
        root=root,
        sources=tuple(table.get("sources", Config.sources)),
        output=table.get("output", Config.output),
        backends=tuple(table.get("backends", Config.backends)),
        signatures={k: list(v) for k, v in table.get("signatures", {}).items()},
        closures=_closures(path, table.get("closures", {})),
    )


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
