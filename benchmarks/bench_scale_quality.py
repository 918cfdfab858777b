"""Coreset quality at scale, in nats, against what the user would do instead.

Run by hand: ``python benchmarks/bench_scale_quality.py [--quick] [--N 1e5 1e6] [--d 10 50]
[--models logistic poisson] [--M 100 300 1000] [--constructors ...] [--budget SECONDS]
[--no-mcmc]``.

Synthetic data (``make_logistic_regression`` / ``make_poisson_regression`` with the log link,
N(0, I) covariates, coefficients of norm 2 for logistic and 0.5 for Poisson, intercept 0.5).
For every constructor and coreset size M: build time, KL(coreset Laplace || full Laplace) in
nats and the largest |mean difference| in full-posterior sd (``skcoreset.metrics.
coreset_quality``), and the coreset size. Beside them, in the same run: the full-data Laplace
fit (``BayesianLogisticRegression`` / ``BayesianPoissonRegression`` defaults), and the
full-data MCMC time of the estimators' default chain, extrapolated from the measured time of
one ensemble step on all rows (the chain would take hours). Then coreset + MCMC: the
``QuasiNewtonCoreset`` with the largest M, followed by the default MCMC on its rows, timed
end to end, its KL (moment-matched draws against the full Laplace posterior, so it includes
the Monte Carlo error of the draws) and its speed-up over full-data MCMC.

A constructor is skipped at a size when its time at the previous size, scaled linearly in M,
exceeds ``--budget`` seconds (default 600); the table says so. BLAS is limited to one thread
(threadpoolctl), so times are single-core.

Targets (issue 10): QuasiNewtonCoreset at N = 1e6, d = 10, M = 1000: KL <= 0.1 nats and build
<= 60 s; at N = 1e5: KL <= 0.05 nats and <= 10 s; coreset + MCMC >= 50x faster than full-data
MCMC at N = 1e6 with KL <= 0.2 nats.
"""

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from skcoreset import (BayesianLogisticRegression, BayesianPoissonRegression,
                       FrankWolfeCoreset, GIGACoreset, QuasiNewtonCoreset, SensitivityCoreset,
                       SparseVICoreset, UniformCoreset)
from skcoreset.families import make_family
from skcoreset._inference import prior_precision
from skcoreset._inference.mcmc import _chain_plan, log_probability
from skcoreset.datasets import make_logistic_regression, make_poisson_regression
from skcoreset.metrics import coreset_quality, mean_error_sd, posterior_kl

CONSTRUCTORS = {
    "uniform": UniformCoreset,
    "sensitivity": SensitivityCoreset,
    "giga": GIGACoreset,
    "frank-wolfe": FrankWolfeCoreset,
    "sparsevi": SparseVICoreset,
    "quasi-newton": QuasiNewtonCoreset,
}
ESTIMATORS = {"logistic": BayesianLogisticRegression, "poisson": BayesianPoissonRegression}


def make_data(model, n, d, seed=0):
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=d)
    direction /= np.linalg.norm(direction)
    if model == "logistic":
        return make_logistic_regression(n, coef=2.0 * direction, intercept=0.5,
                                        random_state=seed)
    return make_poisson_regression(n, coef=0.5 * direction, intercept=0.5, link="log",
                                   random_state=seed)


def full_mcmc_seconds(model, X, y, laplace_seconds, n_steps_timed=3):
    """Extrapolated time of the default MCMC chain on all rows: the Laplace start plus the
    default number of ensemble steps times the measured time of one step (one vectorised
    log-posterior evaluation of every walker on all rows)."""
    p = X.shape[1] + 1
    n_walkers, draws_per_walker, thin, n_burnin = _chain_plan(p, None, 4000, None, None)
    n_steps = n_burnin + thin * draws_per_walker
    family = make_family(model, link="log")
    y_enc = np.where(y == 1, 1.0, -1.0) if model == "logistic" else y.astype(float)
    prior = prior_precision(X.shape[1], prior_scale=1.0, intercept_prior_scale=10.0,
                            fit_intercept=True)
    log_post = log_probability(X, y_enc, family, sample_weight=np.ones(len(y)),
                               prior_prec=prior, fit_intercept=True)
    walkers = 0.01 * np.random.default_rng(0).normal(size=(n_walkers, p))
    start = time.perf_counter()
    for _ in range(n_steps_timed):
        log_post(walkers)
    per_step = (time.perf_counter() - start) / n_steps_timed
    return laplace_seconds + n_steps * per_step, n_steps, n_walkers


def build(name, M, model, random_state=0):
    kwargs = dict(M=M, model=model, random_state=random_state)
    if model == "poisson":
        kwargs["link"] = "log"
    return CONSTRUCTORS[name](**kwargs)


def run_setting(model, n, d, sizes, names, budget, with_mcmc):
    X, y = make_data(model, n, d)
    estimator = ESTIMATORS[model]
    start = time.perf_counter()
    full = estimator().fit(X, y)
    laplace_seconds = time.perf_counter() - start
    print(f"\n== {model}, N = {n:.0e}, d = {d}: full-data Laplace {laplace_seconds:.2f} s",
          flush=True)
    if with_mcmc:
        mcmc_seconds, n_steps, n_walkers = full_mcmc_seconds(model, X, y, laplace_seconds)
        print(f"   full-data MCMC (default chain: {n_walkers} walkers x {n_steps} steps), "
              f"extrapolated: {mcmc_seconds:.0f} s", flush=True)
    print(f"{'constructor':>13} {'M':>5} {'size':>5} {'build s':>8} {'KL nats':>10} "
          f"{'max|dmean|/sd':>13} {'build/Laplace':>13}")
    full_posterior = full.posterior_
    for name in names:
        if name == "sensitivity" and model != "logistic":
            continue
        last = None
        for M in sizes:
            if last is not None and last[1] * M / last[0] > budget:
                print(f"{name:>13} {M:5d}  skipped: ~{last[1] * M / last[0]:.0f} s "
                      f"predicted from M = {last[0]} (budget {budget:.0f} s)", flush=True)
                continue
            coreset = build(name, M, model)
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                coreset.fit(X, y)
            seconds = time.perf_counter() - start
            last = (M, seconds)
            quality = coreset_quality(coreset, X, y, full_posterior=full_posterior)
            print(f"{name:>13} {M:5d} {quality.size:5d} {seconds:8.2f} {quality.kl:10.3g} "
                  f"{quality.max_mean_error_sd:13.3g} {seconds / laplace_seconds:13.1f}",
                  flush=True)
    if with_mcmc:
        M = max(sizes)
        start = time.perf_counter()
        coreset = build("quasi-newton", M, model).fit(X, y)
        rows = coreset.sample_indices_
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sampled = estimator(method="mcmc", random_state=0).fit(
                X[rows], y[rows], sample_weight=coreset.sample_weight_)
        seconds = time.perf_counter() - start
        print(f"   quasi-newton M = {M} + MCMC: {seconds:.1f} s, "
              f"{mcmc_seconds / seconds:.0f}x faster than full-data MCMC; "
              f"KL(draws || full Laplace) {posterior_kl(sampled, full):.3g} nats, "
              f"max|dmean|/sd {mean_error_sd(sampled, full):.3g}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="N = 1e5, d = 10, M in {100, 1000}, logistic only")
    parser.add_argument("--N", type=float, nargs="+", default=[1e5, 1e6])
    parser.add_argument("--d", type=int, nargs="+", default=[10, 50])
    parser.add_argument("--models", nargs="+", default=["logistic", "poisson"])
    parser.add_argument("--M", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--constructors", nargs="+", default=list(CONSTRUCTORS),
                        choices=list(CONSTRUCTORS))
    parser.add_argument("--budget", type=float, default=600.0)
    parser.add_argument("--no-mcmc", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.N, args.d, args.M, args.models = [1e5], [10], [100, 1000], ["logistic"]
    with threadpool_limits(limits=1):
        for model in args.models:
            for n in args.N:
                for d in args.d:
                    run_setting(model, int(n), d, sorted(args.M), args.constructors,
                                args.budget, not args.no_mcmc)


if __name__ == "__main__":
    main()
