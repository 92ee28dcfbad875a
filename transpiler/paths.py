"""Where a source file's project is, and its path relative to it (no heavy imports)."""

from __future__ import annotations

import os


def project_root(filename: str) -> str:
    """The nearest folder above `filename` holding pyproject.toml or .git."""
    folder = os.path.dirname(os.path.abspath(filename))
    probe = folder
    while True:
        if os.path.exists(os.path.join(probe, "pyproject.toml")) or os.path.exists(
            os.path.join(probe, ".git")
        ):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return folder
        probe = parent


def relative_path(filename: str, root: str) -> str:
    """`filename` relative to `root`, '/'-separated (its base name if outside)."""
    rel = os.path.relpath(os.path.abspath(filename), root)
    if rel.startswith(".."):
        rel = os.path.basename(filename)
    return rel.replace(os.sep, "/")
