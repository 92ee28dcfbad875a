"""`MCMC(NUTS(log_density))`: the sampler's user API around `autobatch.mcmc.nuts`."""

import collections
import math
import sys

import numpy as np

from autobatch.mcmc import compile_cache, nuts
from autobatch.mcmc.ops import tf  # imported on first use

# Stan's warm-up windows: initial fast, first slow, terminal fast.
INIT_BUFFER = 75
BASE_WINDOW = 25
TERM_BUFFER = 50
# The most bytes one chunk's draw buffers may take (chains x rows x dims x 8).
MAX_BUFFER_BYTES = 1 << 28
# Rows per chunk when a progress bar is shown.  Without one the run is one
# chunk: chains meet at a chunk's end, which costs a wait for the slowest
# chain (Neal's funnel at 256 chains, 200 + 200, JAX: 14.2 s in one chunk,
# 25.8 s in chunks of 128; eight schools 2.6 s against 3.0 s).
PROGRESS_ROWS = 100
# The batched programs of the last few models, shared by MCMC objects of
# the same model: each program is compiled (jax.jit, XLA) once per shape,
# and a new program for every MCMC object would compile again (7 s on 2
# cores for a 3-d model on JAX).  Least recently used first.
PROGRAM_CACHE_SIZE = 8
_PROGRAMS = collections.OrderedDict()
# InferenceData's sample_stats (`MCMC.stats`, [chains, draws] each, ArviZ's
# names), and the field of `nuts.Chunk` each is read from.
_STAT_FIELDS = {
    "lp": "lps",
    "diverging": "diverging",
    "tree_depth": "depths",
    "n_steps": "leapfrogs",
    "energy": "energies",
    "step_size": "step_sizes",
    "acceptance_rate": "accepts",
}
SAMPLE_STATS = tuple(_STAT_FIELDS)


class GradientTapeTarget:
    """`(log_prob, grad)` of a TensorFlow log density, the gradient by
    `tf.GradientTape`.  One class for every model, so that the generated
    program (a factory taking the target) is shared by all models of the
    same dimension."""

    def __init__(self, log_density):
        self.log_density = log_density

    def __call__(self, x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            log_prob = self.log_density(x)
        return log_prob, tape.gradient(log_prob, x)

    def at_start(self, x):
        """For the chains' starts: eagerly (TensorFlow runs its ops without compiling them)."""
        return self(x)


class JaxGradTarget:
    """`(log_prob, grad)` of a `jax.numpy` log density, the gradient by
    `jax.vjp` with a cotangent of ones: the gradient of the sum over chains,
    which is each chain's own gradient because chains do not interact (as
    `tf.GradientTape` gives it on TensorFlow).  One class for every model,
    like `GradientTapeTarget`, so one generated program serves all models
    of a dimension."""

    def __init__(self, log_density):
        from autobatch_runtime import jax_backend  # noqa: F401 - float64 and int64 on

        self.log_density = log_density
        self._at_start = None

    def __call__(self, x):
        import jax
        import jax.numpy as jnp

        log_prob, pullback = jax.vjp(self.log_density, x)  # log_prob: [chains]
        (grad,) = pullback(jnp.ones_like(log_prob))  # grad: [chains, dims]
        return log_prob, grad

    def at_start(self, x):
        return _jitted_at_start(self, x)


def _jitted_at_start(target, x):
    """`target(x)` for the chains' starts, outside the batched program, as
    one `jax.jit` kept on the target: run op by op, JAX compiles every op of
    the model apart (eight schools: about 50 compilations, 1.5 s of a 7 s first
    call on 2 cores)."""
    if target._at_start is None:
        import jax

        target._at_start = jax.jit(target.__call__)
    return target._at_start(x)


class UserGradientTarget:
    """`(log_prob, grad)` from the user's own `value_and_grad` function
    (jitted for the starts on JAX, where it is traced in the program anyway)."""

    def __init__(self, value_and_grad, jax_start=False):
        self.value_and_grad = value_and_grad
        self.jax_start = jax_start
        self._at_start = None

    def __call__(self, x):
        return self.value_and_grad(x)

    def at_start(self, x):
        return _jitted_at_start(self, x) if self.jax_start else self(x)


class NUTS:
    """The No-U-Turn Sampler with Stan's warm-up, run per chain.

    `log_density(x)`: the target's log density (up to a constant) for
    x: float64 [chains, dims] -> [chains], written with TensorFlow ops for
    the tensorflow backend (its gradient from `tf.GradientTape`) or with
    `jax.numpy` ops for the jax backend (its gradient from `jax.vjp`).  For
    the NumPy backend (or to supply your own gradient) give
    `value_and_grad(x) -> (log_prob [chains], grad [chains, dims])` instead,
    with the backend's own ops (NumPy for NumPy).

    `dense_mass=True` adapts a dense inverse mass matrix per chain (the
    draws' regularized covariance, in Stan's windows) instead of its
    diagonal: for posteriors whose parameters are strongly correlated
    (numpyro's `dense_mass`, Stan's `metric="dense_e"`).  Each leapfrog then
    costs O(dims^2) more and each window end a Cholesky factorization, so
    the default stays diagonal.

    `inverse_mass_matrix`, optional: the metric chains start from (and keep,
    with `adapt_mass_matrix=False`), the diagonal [dims] or, with
    `dense_mass=True`, the matrix [dims, dims]; the identity by default.

    `constrain(x)`, optional: maps unconstrained draws x [n, dims] (NumPy)
    to a dict of named parameters, each [n, ...] (what `posterior` holds);
    without it the posterior holds `x`.
    """

    def __init__(
        self,
        log_density=None,
        *,
        value_and_grad=None,
        target_accept=0.8,
        max_tree_depth=10,
        step_size=1.0,
        adapt_step_size=True,
        adapt_mass_matrix=True,
        dense_mass=False,
        inverse_mass_matrix=None,
        constrain=None,
    ):
        if (log_density is None) == (value_and_grad is None):
            raise TypeError(
                "NUTS: give log_density (TensorFlow or jax.numpy ops) or value_and_grad, not both"
            )
        self.log_density = log_density
        self.value_and_grad = value_and_grad
        self.target_accept = float(target_accept)
        self.max_tree_depth = int(max_tree_depth)
        self.step_size = float(step_size)
        self.adapt_step_size = adapt_step_size
        self.adapt_mass_matrix = adapt_mass_matrix
        self.dense_mass = bool(dense_mass)
        self.inverse_mass_matrix = (
            None if inverse_mass_matrix is None else np.asarray(inverse_mass_matrix, np.float64)
        )
        self.constrain = constrain

    def target(self, backend):
        """The `(log_prob, grad)` function the batched program calls on `backend`."""
        if self.value_and_grad is not None:
            return UserGradientTarget(self.value_and_grad, jax_start=backend == "jax")
        if backend == "jax":
            return JaxGradTarget(self.log_density)
        if backend != "tensorflow":
            raise ValueError(
                f"NUTS: the {backend} backend needs the gradient: give "
                "NUTS(value_and_grad=f) with f(x) -> (log_prob, grad) in NumPy; "
                "a log_density's gradient comes from tf.GradientTape on the "
                "tensorflow backend and from jax.vjp on the jax backend"
            )
        return GradientTapeTarget(self.log_density)


def _program(kernel, backend):
    """`(target, program)`: the model's `(log_prob, grad)` function and the
    batched program calling it on `backend`, shared with earlier MCMC
    objects of the same model function and settings (so their compilations
    are too); built anew for a model that cannot be a key."""
    model = kernel.log_density if kernel.value_and_grad is None else kernel.value_and_grad
    key = (
        backend,
        model,
        kernel.value_and_grad is None,
        kernel.max_tree_depth,
        kernel.target_accept,
    )

    def build():
        target = kernel.target(backend)
        return target, nuts.make_programs(target, kernel.max_tree_depth, kernel.target_accept)

    try:
        built = _PROGRAMS.pop(key, None)
    except TypeError:  # an unhashable callable
        return build()
    if built is None:
        built = build()
    _PROGRAMS[key] = built
    while len(_PROGRAMS) > PROGRAM_CACHE_SIZE:
        _PROGRAMS.popitem(last=False)
    return built


def warmup_schedule(num_warmup, adapt_mass):
    """Stan's windows for `num_warmup` transitions: (slow_start,
    terminal_start, first window's last transition, first window's size,
    adapt_mass).  Under 20 transitions the mass matrix is not adapted; under
    150, the buffers are 15% and 10% of warm-up (as Stan)."""
    init, term, base = INIT_BUFFER, TERM_BUFFER, BASE_WINDOW
    if num_warmup < 20:
        adapt_mass = False
    elif init + term + base > num_warmup:
        init = int(0.15 * num_warmup)
        term = int(0.1 * num_warmup)
        base = num_warmup - (init + term)
    return init, num_warmup - term, init + base - 1, base, adapt_mass


def chain_seeds(seed, chains):
    """Each chain's seed: a hash of (seed, chain index) alone."""
    return np.array(
        [np.random.SeedSequence([seed, k]).generate_state(1)[0] for k in range(chains)], np.int64
    )


def _numpy(value):
    if isinstance(value, tuple):
        return type(value)(*(_numpy(v) for v in value))
    return np.asarray(value)


def _interactive():
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class MCMC:
    """Runs a kernel's chains in one batched program: `MCMC(NUTS(f)).run(seed, init)`.

    Every chain's warm-up and draws run per chain inside the batched
    program (`autobatch.mcmc.nuts`): chains adapt their step size and mass
    matrix on their own and drift out of step; they meet only between
    chunks (the progress bar's updates, `chunk_size`).  The program for a new model
    dimension is generated on first use into the per-user cache
    (`~/.cache/autobatch`, `AUTOBATCH_CACHE_DIR`), never into a project.

    `compilation_cache` (JAX): keep XLA's compilation of the program on
    disk, so that the same model's first call in a later process skips it
    (`autobatch.mcmc.compile_cache`): True, the default, keeps it in
    `~/.cache/autobatch/xla/jax`, around the sampler's calls only; False
    does not; a path keeps it there.  On TensorFlow, set
    `TF_XLA_FLAGS=--tf_xla_persistent_cache_directory=DIR` before the
    process starts.
    """

    def __init__(
        self,
        kernel,
        num_warmup=1000,
        num_samples=1000,
        num_chains=4,
        backend="tensorflow",
        xla=True,
        progress_bar=None,
        chunk_size=None,
        compilation_cache=True,
    ):
        self.kernel = kernel
        self.num_warmup = int(num_warmup)
        self.num_samples = int(num_samples)
        self.num_chains = int(num_chains)
        self.backend = backend
        self.xla = xla if backend == "tensorflow" else False
        self.progress_bar = _interactive() if progress_bar is None else progress_bar
        self.chunk_size = chunk_size
        self.cache_dir = compile_cache.directory(backend, compilation_cache)
        self.target, self.program = _program(kernel, backend)
        self.samples = None
        self.stats = None
        self.inference_data = None

    def _rows(self, dims):
        total = self.num_warmup + self.num_samples
        if self.chunk_size is not None:
            rows = int(self.chunk_size)
        elif self.progress_bar:
            rows = PROGRESS_ROWS
        else:
            rows = total
        limit = max(1, MAX_BUFFER_BYTES // (8 * self.num_chains * max(dims, 1)))
        rows = max(1, min(rows, total, limit))
        # The buffers' rows are part of the program's signature: a power of
        # two (the chunk writes `count` <= rows of them) keeps programs few.
        return 1 << (rows - 1).bit_length()

    def initial_state(self, init, seeds):
        x = np.asarray(init, np.float64)
        log_prob, grad = (np.asarray(v, np.float64) for v in self.target.at_start(self._array(x)))
        chains, dims = x.shape
        slow_start, terminal_start, window_end, window_size, adapt_mass = warmup_schedule(
            self.num_warmup, self.kernel.adapt_mass_matrix
        )
        step = self.kernel.step_size
        metric = self.initial_metric(chains, dims)
        adaptation = nuts.Adaptation(
            mu=np.full(chains, math.log(10.0 * step)),
            s_bar=np.zeros(chains),
            x_bar=np.zeros(chains),
            steps=np.zeros(chains),
            n=np.zeros(chains),
            mean=np.zeros((chains, dims)),
            m2=np.zeros(metric.shape),
            window_end=np.full(chains, window_end, np.int64),
            window_size=np.full(chains, window_size, np.int64),
        )
        state = nuts.State(
            nuts.Point(x, log_prob, grad),
            np.zeros(chains, np.int64),
            np.full(chains, step),
            metric,
            adaptation,
        )
        warmup = self.num_warmup if self.kernel.adapt_step_size else 0
        schedule = nuts.Schedule(
            np.full(chains, warmup, np.int64),
            np.full(chains, slow_start, np.int64),
            np.full(chains, terminal_start, np.int64),
            np.full(chains, bool(adapt_mass and warmup), bool),
        )
        return state, schedule

    def initial_metric(self, chains, dims):
        """The metric every chain starts from: the inverse mass diagonal
        [chains, dims], or dense the Cholesky factor L of the matrix
        (M^-1 = L L^T) [chains, dims, dims]; the metric's shape picks the
        program's signature."""
        given = self.kernel.inverse_mass_matrix
        shape = (dims, dims) if self.kernel.dense_mass else (dims,)
        if given is None:
            given = np.eye(dims) if self.kernel.dense_mass else np.ones(dims)
        elif given.shape != shape:
            raise ValueError(
                f"NUTS: inverse_mass_matrix has shape {given.shape}; the model has "
                f"{dims} dimensions, so give {list(shape)}"
                + ("" if self.kernel.dense_mass else " (a matrix needs dense_mass=True)")
            )
        if self.kernel.dense_mass:
            # Cholesky reads one triangle only: an asymmetric matrix would
            # be taken for another one without a word.
            try:
                if not np.allclose(given, given.T):
                    raise np.linalg.LinAlgError
                given = np.linalg.cholesky(given)
            except np.linalg.LinAlgError:
                raise ValueError(
                    "NUTS: inverse_mass_matrix is not symmetric positive definite"
                ) from None
        elif not np.all(given > 0):
            raise ValueError("NUTS: inverse_mass_matrix's diagonal must be positive")
        return np.broadcast_to(given, (chains,) + shape).copy()

    def _array(self, x):
        """x (NumPy) as the backend's array, for calling the target outside the program."""
        if self.backend == "tensorflow":
            return tf.constant(x)
        if self.backend == "jax":
            import jax.numpy as jnp

            return jnp.asarray(x)
        return x

    def run(self, seed=0, init=None, dims=None):
        """Samples: `init` [chains, dims] (or [dims], the same start for
        every chain), or None with `dims`: Stan's uniform(-2, 2) starts,
        drawn per chain from (seed, chain).  Returns the InferenceData
        (also `self.inference_data`)."""
        chains = self.num_chains
        seeds = chain_seeds(seed, chains)
        if init is None:
            if dims is None:
                raise TypeError("MCMC.run: give init ([chains, dims] starts) or dims")
            init = np.stack(
                [np.random.default_rng([seed, k]).uniform(-2.0, 2.0, dims) for k in range(chains)]
            )
        init = np.asarray(init, np.float64)
        if init.ndim == 1:
            init = np.broadcast_to(init, (chains, init.shape[0])).copy()
        if init.shape[0] != chains:
            raise ValueError(f"MCMC.run: init has {init.shape[0]} rows for {chains} chains")
        state, schedule = self.initial_state(init, seeds)
        dims = init.shape[1]
        total = self.num_warmup + self.num_samples
        rows = self._rows(dims)
        kept = []
        bar = None
        if self.progress_bar:
            tqdm = _sampler_extra("tqdm.auto").tqdm

            bar = tqdm(total=total, unit="it", desc=f"{chains} chains")
        try:
            for first in range(0, total, rows):
                count = min(rows, total - first)
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    out = self._call(state, seeds, first, count, schedule, rows, dims)
                out = _numpy(out)
                state = out.state
                kept.append(nuts.Chunk(state, *(v[:, :count] for v in out[1:])))
                if bar is not None:
                    bar.update(count)
        finally:
            if bar is not None:
                bar.close()
        self._collect(kept, state)
        return self.inference_data

    def _call(self, state, seeds, first, count, schedule, rows, dims):
        """One chunk: transitions first .. first + count - 1 of every chain."""
        chains = self.num_chains
        with compile_cache.jax_cache(self.cache_dir):  # None (no cache) off JAX
            return self.program(
                state,
                seeds,
                np.full(chains, first, np.int64),
                np.full(chains, count, np.int64),
                schedule,
                np.zeros((chains, rows, dims)),
                np.zeros((chains, rows)),
                np.zeros((chains, rows), bool),
                np.zeros((chains, rows), np.int64),
                np.zeros((chains, rows), np.int64),
                np.zeros((chains, rows)),
                np.zeros((chains, rows)),
                np.zeros((chains, rows)),
                backend=self.backend,
                xla=self.xla,
                max_stack_depth=self.kernel.max_tree_depth + 3,
            )

    def _collect(self, kept, state):
        total = self.num_warmup + self.num_samples
        self.last_state = state
        whole = [
            np.concatenate([c[i] for c in kept], axis=1) for i in range(1, len(nuts.Chunk._fields))
        ]
        chunk = nuts.Chunk(state, *whole)
        keep = slice(self.num_warmup, total)
        x = chunk.draws[:, keep]
        self.samples = x  # [chains, draws, dims], unconstrained
        self.stats = {name: getattr(chunk, _STAT_FIELDS[name])[:, keep] for name in SAMPLE_STATS}
        self.warmup_stats = {
            "diverging": chunk.diverging[:, : self.num_warmup],
            "step_size": chunk.step_sizes[:, : self.num_warmup],
            "n_steps": chunk.leapfrogs[:, : self.num_warmup],
        }
        self.inference_data = self._inference_data()

    @property
    def inverse_mass_matrix(self):
        """Each chain's adapted inverse mass matrix after `run`: the diagonal
        [chains, dims], or with `dense_mass=True` the matrix [chains, dims,
        dims] (the state holds its Cholesky factor L; this is L L^T)."""
        metric = np.asarray(self.last_state.inv_mass)
        if metric.ndim == 3:
            return metric @ np.swapaxes(metric, -1, -2)
        return metric

    def get_samples(self):
        """The posterior draws as a dict of [chains, draws, ...] arrays."""
        x = self.samples
        chains, draws, dims = x.shape
        if self.kernel.constrain is None:
            return {"x": x}
        named = self.kernel.constrain(x.reshape(chains * draws, dims))
        return {
            k: np.asarray(v).reshape((chains, draws) + np.shape(v)[1:]) for k, v in named.items()
        }

    def _inference_data(self):
        az = _sampler_extra("arviz")

        return az.from_dict(posterior=self.get_samples(), sample_stats=self.stats)

    def summary(self, **kwargs):
        """ArviZ's summary of the posterior: mean, sd, HDI, MCSE, bulk and tail ESS, R-hat."""
        az = _sampler_extra("arviz")

        return az.summary(self.inference_data, **kwargs)


def _sampler_extra(module):
    """ArviZ or tqdm, the sampler's own dependencies, or an ImportError
    that says how to install them."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"autobatch.mcmc needs {module.split('.')[0]} for this: pip install 'autobatch[mcmc]'"
        ) from error
