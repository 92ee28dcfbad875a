"""The batched helpers of `examples/nuts.py`: they live in `autobatch.mcmc.ops`
(installed with autobatch, used by its sampler); this name is kept for the
example and the generated modules that import it."""

from autobatch.mcmc.ops import (  # noqa: F401
    accept_probability,
    as_count,
    dot,
    is_tensor,
    log_uniform,
    normal,
    tf,
    uniform,
)
