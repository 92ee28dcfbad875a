import time, numpy as np
t0=time.perf_counter()
from transpiler import Context
from examples import nuts_sampler
print("import", time.perf_counter()-t0)
target = nuts_sampler.standard_normal(100)
for backend, xla in [("tensorflow", True), ("tensorflow", False), ("numpy", False)]:
  for chains in [16]:
    s = nuts_sampler.Sampler(target, 0.3, backend=backend, xla=xla, context=Context(frozen=True))
    x0 = np.random.default_rng(0).normal(size=(chains,100))
    seeds = np.arange(chains)
    t=time.perf_counter(); out = s.sample(x0, seeds, 1); f=time.perf_counter()-t
    t=time.perf_counter(); out = s.sample(x0, seeds, 5); w=time.perf_counter()-t
    print(backend, xla, chains, "first", f, "5 steps", w, "leapfrogs", out.leapfrogs.sum(), out.depth.mean())
    pt = s.initial_point(x0)
    t=time.perf_counter()
    r = s.step(pt, seeds, np.zeros(chains, np.int64), backend=backend, xla=xla, max_stack_depth=12, profile=True)
    print("profile call", time.perf_counter()-t, type(r), r[1].utilization)
