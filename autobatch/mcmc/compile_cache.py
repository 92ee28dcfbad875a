"""XLA's compiled sampler programs kept on disk, so that a model's first call
in a later process skips XLA's compilation.

The batched program closes over the user's model, so XLA compiles it anew
for every model in every process: on 2 cores that is most of a first call
(`tools/first_call_mcmc.py`).  JAX can keep compiled programs in a directory
(`jax_compilation_cache_dir`); the sampler turns that on around its own calls
only (`jax_cache`), so the user's other `jax.jit` functions are not written
there.  A user who set a cache directory of their own keeps it, and the
sampler's programs go there.

TensorFlow has such a cache too (`TF_XLA_FLAGS=--tf_xla_persistent_cache_directory=DIR`),
but reads the flag once, at the process's first TensorFlow op, before any
sampler exists, and then keeps every XLA compilation of the process: it is
the user's to set in the environment, not the sampler's.

The directory is `xla/jax` in the per-user cache (`~/.cache/autobatch`,
`AUTOBATCH_CACHE_DIR`); deleting it is safe.  A compilation cache is code
the process loads and runs: keep it where only you can write.
"""

import contextlib
import os


def directory(backend, setting):
    """Where the sampler keeps JAX's compilations for `MCMC`'s
    `compilation_cache` setting (True, False or a path), or None for no
    cache (and always on the other backends)."""
    if setting is False or backend != "jax":
        return None
    if setting is True:
        from transpiler.paths import cache_dir

        return os.path.join(cache_dir(), "xla", backend)
    return os.path.abspath(os.fspath(setting))


@contextlib.contextmanager
def jax_cache(path):
    """JAX's persistent compilation cache in `path` for the calls inside,
    and the user's setting (none, by default) restored after.  A user's own
    cache directory wins: the sampler's programs then go there.  With no
    path (no cache, or another backend) nothing is done or imported."""
    if path is None:
        yield
        return
    import jax
    from jax.experimental.compilation_cache import compilation_cache

    previous = jax.config.jax_compilation_cache_dir
    if previous:
        yield
        return
    os.makedirs(path, exist_ok=True)
    # JAX decides once whether its cache is on and remembers it;
    # reset_cache makes the next compilation read the setting again.
    compilation_cache.set_cache_dir(path)
    compilation_cache.reset_cache()
    try:
        yield
    finally:
        jax.config.update("jax_compilation_cache_dir", previous)
        compilation_cache.reset_cache()
