"""The five posteriordb posteriors of tests/posteriordb/, as TensorFlow log densities.

Each model keeps Stan's parameterisation: a constrained parameter
(`real<lower=0> sigma`) is sampled as its logarithm, and the log density
adds the log-Jacobian of exp (log_sigma), as Stan does.  Constant terms are
left out.  `log_density(x)` takes x: float64 [chains, dims] (unconstrained);
`constrain(x)` maps NumPy draws [n, dims] to the named parameters that
`reference.json` summarises (transformed parameters included).
"""

import json
import math
import os

import numpy as np

from autobatch_runtime.quiet import import_tensorflow


class _LazyTensorFlow:
    """`tf`, imported on first use and without its start-up lines
    (autobatch_runtime/quiet.py): `judge` and `reference` need no
    TensorFlow (tests/test_mcmc_jax.py judges JAX runs with them)."""

    def __getattr__(self, name):
        return getattr(import_tensorflow(), name)


tf = _LazyTensorFlow()

FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "posteriordb")


def _data(name):
    with open(os.path.join(FOLDER, name, "data.json")) as f:
        return json.load(f)


def reference(name):
    """{parameter: {mean, sd, q05, q95}} and the reference's draw count."""
    with open(os.path.join(FOLDER, name, "reference.json")) as f:
        ref = json.load(f)
    return ref["params"], ref["chains"] * ref["draws_per_chain"]


def _normal(value, mean, sd):
    """log N(value; mean, sd) up to a constant (sd a tensor or a number)."""
    return -0.5 * tf.square((value - mean) / sd) - tf.math.log(tf.cast(sd, tf.float64))


def _half_cauchy_log_sigma(log_sigma, scale):
    """Cauchy(0, scale) on sigma = exp(log_sigma) > 0, plus the log-Jacobian."""
    sigma = tf.exp(log_sigma)
    return -tf.math.log1p(tf.square(sigma / scale)) + log_sigma


class Posterior:
    def __init__(self, name, dims):
        self.name = name
        self.dims = dims


class ArK(Posterior):
    """arK: an autoregression of order K = 5 on T = 200 points."""

    def __init__(self):
        data = _data("arK-arK")
        self.K, y = data["K"], np.asarray(data["y"], np.float64)
        super().__init__("arK-arK", self.K + 2)
        T = len(y)
        # lags[t, k] = y[t - k - 1] for t = K .. T - 1 (0-based).
        self.lags = tf.constant(np.stack([y[self.K - k - 1 : T - k - 1] for k in range(self.K)], 1))
        self.y = tf.constant(y[self.K :])

    def log_density(self, x):
        alpha, beta, log_sigma = x[:, 0], x[:, 1 : 1 + self.K], x[:, -1]
        sigma = tf.exp(log_sigma)
        mu = alpha[:, None] + tf.linalg.matmul(beta, self.lags, transpose_b=True)
        return (
            _normal(alpha, 0.0, 10.0)
            + tf.reduce_sum(_normal(beta, 0.0, 10.0), axis=-1)
            + _half_cauchy_log_sigma(log_sigma, 2.5)
            + tf.reduce_sum(_normal(self.y, mu, sigma[:, None]), axis=-1)
        )

    def constrain(self, x):
        return {"alpha": x[:, 0], "beta": x[:, 1 : 1 + self.K], "sigma": np.exp(x[:, -1])}


class EightSchools(Posterior):
    """Eight schools, non-centred."""

    def __init__(self):
        data = _data("eight_schools-eight_schools_noncentered")
        self.J = data["J"]
        super().__init__("eight_schools-eight_schools_noncentered", self.J + 2)
        self.y = tf.constant(np.asarray(data["y"], np.float64))
        self.sigma = tf.constant(np.asarray(data["sigma"], np.float64))

    def log_density(self, x):
        theta_trans, mu, log_tau = x[:, : self.J], x[:, self.J], x[:, self.J + 1]
        theta = theta_trans * tf.exp(log_tau)[:, None] + mu[:, None]
        return (
            -0.5 * tf.reduce_sum(tf.square(theta_trans), axis=-1)
            + tf.reduce_sum(-0.5 * tf.square((self.y - theta) / self.sigma), axis=-1)
            + _normal(mu, 0.0, 5.0)
            + _half_cauchy_log_sigma(log_tau, 5.0)
        )

    def constrain(self, x):
        tau = np.exp(x[:, self.J + 1])
        mu = x[:, self.J]
        return {"theta": x[:, : self.J] * tau[:, None] + mu[:, None], "mu": mu, "tau": tau}


class GpPoisRegr(Posterior):
    """A Gaussian process (exponentiated quadratic kernel) in a Poisson regression."""

    def __init__(self):
        data = _data("gp_pois_regr-gp_pois_regr")
        self.N = data["N"]
        super().__init__("gp_pois_regr-gp_pois_regr", self.N + 2)
        x = np.asarray(data["x"], np.float64)
        self.sq_dist = (x[:, None] - x[None, :]) ** 2
        self.k = tf.constant(np.asarray(data["k"], np.float64))

    def _f(self, rho, alpha, f_tilde, ops):
        cov = alpha[:, None, None] ** 2 * ops.exp(
            -0.5 * self.sq_dist / rho[:, None, None] ** 2
        ) + 1e-10 * np.eye(self.N)
        chol = ops.cholesky(cov)
        return ops.squeeze(ops.matmul(chol, f_tilde[:, :, None]), -1)

    def log_density(self, x):
        log_rho, log_alpha, f_tilde = x[:, 0], x[:, 1], x[:, 2:]
        rho, alpha = tf.exp(log_rho), tf.exp(log_alpha)
        f = self._f(rho, alpha, f_tilde, _TF)
        return (
            24.0 * log_rho
            - 4.0 * rho
            + log_rho  # gamma(25, 4), log-Jacobian
            - 0.5 * tf.square(alpha / 2.0)
            + log_alpha  # normal(0, 2), log-Jacobian
            - 0.5 * tf.reduce_sum(tf.square(f_tilde), axis=-1)
            + tf.reduce_sum(self.k * f - tf.exp(f), axis=-1)  # poisson_log
        )

    def constrain(self, x):
        rho, alpha = np.exp(x[:, 0]), np.exp(x[:, 1])
        return {"rho": rho, "alpha": alpha, "f": self._f(rho, alpha, x[:, 2:], _NP)}


class _TF:
    """GpPoisRegr._f's ops on TensorFlow, looked up when called (`tf` is lazy)."""

    @staticmethod
    def exp(x):
        return tf.exp(x)

    @staticmethod
    def cholesky(x):
        return tf.linalg.cholesky(x)

    @staticmethod
    def matmul(a, b):
        return tf.linalg.matmul(a, b)

    @staticmethod
    def squeeze(x, axis):
        return tf.squeeze(x, axis)


class _NP:
    exp, cholesky, matmul, squeeze = np.exp, np.linalg.cholesky, np.matmul, np.squeeze


class KidIQ(Posterior):
    """kidscore_momiq: a linear regression with an improper flat prior on beta."""

    def __init__(self):
        data = _data("kidiq-kidscore_momiq")
        super().__init__("kidiq-kidscore_momiq", 3)
        self.kid = tf.constant(np.asarray(data["kid_score"], np.float64))
        self.mom = tf.constant(np.asarray(data["mom_iq"], np.float64))

    def log_density(self, x):
        b1, b2, log_sigma = x[:, 0], x[:, 1], x[:, 2]
        mu = b1[:, None] + b2[:, None] * self.mom
        sigma = tf.exp(log_sigma)
        return _half_cauchy_log_sigma(log_sigma, 2.5) + tf.reduce_sum(
            _normal(self.kid, mu, sigma[:, None]), axis=-1
        )

    def constrain(self, x):
        return {"beta": x[:, :2], "sigma": np.exp(x[:, 2])}


class BLR(Posterior):
    """sblrc-blr: Bayesian linear regression, D = 5, N = 100."""

    def __init__(self):
        data = _data("sblrc-blr")
        self.D = data["D"]
        super().__init__("sblrc-blr", self.D + 1)
        self.X = tf.constant(np.asarray(data["X"], np.float64))
        self.y = tf.constant(np.asarray(data["y"], np.float64))

    def log_density(self, x):
        beta, log_sigma = x[:, : self.D], x[:, self.D]
        sigma = tf.exp(log_sigma)
        mu = tf.linalg.matmul(beta, self.X, transpose_b=True)
        return (
            tf.reduce_sum(_normal(beta, 0.0, 10.0), axis=-1)
            + _normal(sigma, 0.0, 10.0)
            + log_sigma
            + tf.reduce_sum(_normal(self.y, mu, sigma[:, None]), axis=-1)
        )

    def constrain(self, x):
        return {"beta": x[:, : self.D], "sigma": np.exp(x[:, self.D])}


POSTERIORS = [ArK, EightSchools, GpPoisRegr, KidIQ, BLR]


def flat(named):
    """{name: [chains, draws, ...]} -> {"name[i]" (1-based, as posteriordb): [chains, draws]}."""
    out = {}
    for name, value in named.items():
        value = np.asarray(value)
        if value.ndim == 2:
            out[name] = value
        else:
            for i in range(value.shape[-1]):
                out[f"{name}[{i + 1}]"] = value[..., i]
    return out


def judge(named, name):
    """posteriordb's rule (tests/posteriordb/README.md) for draws {param:
    [chains, draws]}: a list of failures, each a line of text, empty when right."""
    import arviz as az

    params, ref_draws = reference(name)
    failures = []
    draws = flat(named)
    for param, ref in params.items():
        d = draws[param]
        mean, sd = float(np.mean(d)), float(np.std(d))
        mcse_mean = float(az.mcse(d, method="mean"))
        mcse_sd = float(az.mcse(d, method="sd"))
        rhat = float(az.rhat(d))
        se_mean = math.sqrt(mcse_mean**2 + (ref["sd"] / math.sqrt(ref_draws)) ** 2)
        se_sd = math.sqrt(mcse_sd**2 + (ref["sd"] / math.sqrt(2 * ref_draws)) ** 2)
        if abs(mean - ref["mean"]) > 4 * se_mean:
            failures.append(
                f"{param}: mean {mean:.4g}, reference {ref['mean']:.4g} (4 se = {4 * se_mean:.3g})"
            )
        if abs(sd - ref["sd"]) > max(0.1 * ref["sd"], 4 * se_sd):
            failures.append(f"{param}: sd {sd:.4g}, reference {ref['sd']:.4g}")
        if not rhat < 1.01:
            failures.append(f"{param}: r_hat {rhat:.4f}")
    return failures
