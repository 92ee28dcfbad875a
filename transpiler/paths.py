"""Where a source file's project is, and its path relative to it (no heavy imports)."""

from __future__ import annotations

import os


def is_project(folder: str) -> bool:
    """True if `folder` holds pyproject.toml or .git: a project's root."""
    return os.path.exists(os.path.join(folder, "pyproject.toml")) or os.path.exists(
        os.path.join(folder, ".git")
    )


def is_installed(folder: str) -> bool:
    """True for a folder inside site-packages (an installed distribution)."""
    parts = os.path.abspath(folder).split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


def project_root(filename: str) -> str:
    """The nearest folder above `filename` holding pyproject.toml or .git."""
    folder = os.path.dirname(os.path.abspath(filename))
    probe = folder
    while True:
        if is_project(probe):
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


def calling_project() -> str:
    """The project being run from: the one holding the current directory.

    A project's Context writes generated modules and lock lines only into
    this project; programs another project lacks go to `cache_dir()`.
    """
    return project_root(os.path.join(os.getcwd(), "__main__.py"))


def cache_dir() -> str:
    """Where programs built at run time outside a project's tree are kept.

    `AUTOBATCH_CACHE_DIR`, else `$XDG_CACHE_HOME/autobatch`, else
    `~/.cache/autobatch`.  Deleting it is always safe: what it held is
    built again on first use.
    """
    configured = os.environ.get("AUTOBATCH_CACHE_DIR")
    if configured:
        return os.path.abspath(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "autobatch")
