"""NUTS (NumPyro) on weighted GLM rows: the exact-posterior reference of the benchmarks.

Benchmark-only and optional: ``pip install numpyro jax`` (CPU). The model is the
package's: ``N(0, prior_scale^2)`` on the coefficients, ``N(0, intercept_prior_scale^2)``
on the intercept, the weighted log-likelihood ``sum_n w_n log p(y_n | eta_n)`` of the
logistic or Poisson (log link) model, in float64 on one CPU thread. The chain starts at a
given point with a given dense inverse mass matrix (the Laplace approximation's mode and
covariance: near-Gaussian posteriors then need a few leapfrog steps per draw) and adapts
only its step size. Draws are cached under ``benchmarks/results`` by a key, so a long
reference run is paid once.
"""

import os
import time

import numpy as np

from _common import results_dir


def _import_numpyro():
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1")
    try:
        import jax
        import numpyro  # noqa: F401
    except ImportError as error:  # pragma: no cover - benchmark-only dependency
        raise ImportError("the NUTS reference needs NumPyro: pip install numpyro jax") from error
    jax.config.update("jax_enable_x64", True)
    return jax


def _glm(X, y, w, model, prior_scale, intercept_prior_scale):
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    coef = numpyro.sample("coef", dist.Normal(0.0, prior_scale).expand([X.shape[1]])
                          .to_event(1))
    intercept = numpyro.sample("intercept", dist.Normal(0.0, intercept_prior_scale))
    eta = X @ coef + intercept
    if model == "logistic":
        loglik = y * eta - jnp.logaddexp(0.0, eta)
    else:
        loglik = y * eta - jnp.exp(eta)
    numpyro.factor("loglik", jnp.sum(w * loglik))


def nuts_draws(X, y, model, *, sample_weight=None, start, inverse_mass, n_draws=2000,
               n_warmup=300, seed=0, prior_scale=1.0, intercept_prior_scale=10.0, key=None):
    """``(draws, seconds)``: ``n_draws`` NUTS draws of ``[coef..., intercept]``.

    ``y`` holds labels in {0, 1} (logistic) or counts (Poisson). With ``key`` the draws are
    read from / written to ``benchmarks/results/nuts_<key>.npz`` (seconds as measured when
    they were drawn).
    """
    path = None if key is None else results_dir() / f"nuts_{key}.npz"
    if path is not None and path.exists():
        cached = np.load(path)
        return cached["draws"], float(cached["seconds"])
    jax = _import_numpyro()
    import jax.numpy as jnp
    from numpyro.infer import MCMC, NUTS

    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    kernel = NUTS(_glm, dense_mass=True, inverse_mass_matrix=jnp.asarray(inverse_mass),
                  adapt_mass_matrix=False)
    chain = MCMC(kernel, num_warmup=n_warmup, num_samples=n_draws, progress_bar=False)
    start_time = time.perf_counter()
    chain.run(jax.random.PRNGKey(seed), jnp.asarray(X, dtype=jnp.float64),
              jnp.asarray(y, dtype=jnp.float64), jnp.asarray(w), model, prior_scale,
              intercept_prior_scale,
              init_params={"coef": jnp.asarray(start[:-1]), "intercept": jnp.asarray(start[-1])})
    samples = chain.get_samples()
    draws = np.column_stack([np.asarray(samples["coef"]), np.asarray(samples["intercept"])])
    seconds = time.perf_counter() - start_time
    if path is not None:
        np.savez(path, draws=draws, seconds=seconds)
    return draws, seconds
