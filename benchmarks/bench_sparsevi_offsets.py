"""SparseVICoreset on counts over exposures, without exposures, and logistic, under the
default and a vague prior: KL to the exact all-rows posterior, against GIGA.

Hand-run (one BLAS thread); prints a markdown table. Each coreset is fitted in a
``Pipeline`` with the Laplace estimator of the same model and prior (the coreset takes the
estimator's prior), and measured with :func:`skcoreset.metrics.exact_kl` (importance
sampling over every row: KL(pipeline posterior || exact posterior of all rows), nats) and
its largest posterior-mean error in exact posterior sd. Per cell: median and range over
the seeds; the coreset size is the median number of rows.

Data: statsmodels' bundled ``cancer`` (301 counts over population, the exposure; x = log
population, standardised), Poisson and negative binomial (``alpha`` estimated on all rows);
synthetic Poisson counts, N = 2000, d = 5, exposures 10^-2 .. 10^2 (and the same
covariates with unit exposures); synthetic logistic, N = 2000, d = 5. Priors: the default
(coefficient sd 1, intercept sd 10) and a vague one (sd 1000 for all, as in
``bench_offsets.py``).

Usage: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_sparsevi_offsets.py
       [--seeds 5] [--m 30 100] [--quick]
"""

import argparse
import os
import time
import warnings

import numpy as np
import statsmodels.api as sm

from skcoreset import (BayesianBinaryRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, GIGACoreset, SparseVICoreset)
from skcoreset.metrics import exact_kl
from skcoreset.pipeline import Pipeline

PRIORS = {"default": dict(prior_scale=1.0, intercept_prior_scale=10.0),
          "vague": dict(prior_scale=1e3, intercept_prior_scale=1e3)}


def _standardise(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


def data_sets():
    """(name, kind, X, y, fit keywords)."""
    cancer = sm.datasets.cancer.load_pandas().data
    population = cancer["population"].to_numpy(float)
    Xc = _standardise(np.log(population)[:, None])
    yc = cancer["cancer"].to_numpy(float)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 5))
    beta = rng.normal(scale=0.3, size=5)
    exposure = 10 ** rng.uniform(-2, 2, 2000)
    counts = rng.poisson(exposure * np.exp(0.5 + X @ beta)).astype(float)
    unit = rng.poisson(np.exp(0.5 + X @ beta)).astype(float)
    labels = (X @ rng.normal(size=5) + rng.logistic(size=2000) > 0).astype(int)
    return [("cancer, exposure = population", "poisson", Xc, yc, dict(exposure=population)),
            ("cancer, exposure = population", "negbin", Xc, yc, dict(exposure=population)),
            ("synthetic, exposures 1e-2..1e2", "poisson", X, counts, dict(exposure=exposure)),
            ("synthetic, no exposures", "poisson", X, unit, {}),
            ("synthetic", "logistic", X, labels, {})]


def _estimator(kind, prior, alpha=None):
    if kind == "poisson":
        return BayesianPoissonRegression(**prior)
    if kind == "negbin":
        return BayesianNegativeBinomialRegression(alpha=alpha, **prior)
    return BayesianBinaryRegression(**prior)


def _measure(coreset, X, y, params, estimator):
    pipe = Pipeline([("coreset", coreset), ("clf", estimator)], exact_correction=False)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y, **{f"coreset__{k}": v for k, v in params.items()})
        elapsed = time.perf_counter() - start
        result = exact_kl(pipe, X, y, **params, n_draws=2000, random_state=0)
    return (len(coreset.sample_indices_), result.kl, result.max_mean_error_sd,
            result.pareto_k, elapsed)


def _cell(values, fmt):
    values = np.asarray(values)
    return f"{fmt(np.median(values))} [{fmt(values.min())}-{fmt(values.max())}]"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--m", type=int, nargs="+", default=[30, 100])
    parser.add_argument("--priors", nargs="+", default=list(PRIORS))
    parser.add_argument("--sets", type=int, nargs="+", default=None,
                        help="indices into the data sets (default: all)")
    parser.add_argument("--quick", action="store_true", help="M = 30, 2 seeds")
    args = parser.parse_args()
    if args.quick:
        args.m, args.seeds = [30], 2
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, "
          f"load {os.getloadavg()[0]:.1f}, {args.seeds} seeds\n")
    print("| data | model | prior | M | coreset | size | KL to exact (nats) | "
          "mean error (sd) | max Pareto k | time (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    sets = data_sets()
    for i in args.sets if args.sets is not None else range(len(sets)):
        name, kind, X, y, params = sets[i]
        for prior_name in args.priors:
            prior = PRIORS[prior_name]
            alpha = None
            if kind == "negbin":
                alpha = BayesianNegativeBinomialRegression(alpha="auto", **prior).fit(
                    X, y, **params).alpha_
            for M in args.m:
                for label, make in (("SparseVI", SparseVICoreset), ("GIGA", GIGACoreset)):
                    out = np.array([_measure(make(M=M, random_state=seed), X, y, params,
                                             _estimator(kind, prior, alpha))
                                    for seed in range(args.seeds)])
                    print(f"| {name} | {kind} | {prior_name} | {M} | {label} | "
                          f"{np.median(out[:, 0]):.0f} | {_cell(out[:, 1], '{:.2g}'.format)} | "
                          f"{_cell(out[:, 2], '{:.2f}'.format)} | {out[:, 3].max():.2f} | "
                          f"{np.median(out[:, 4]):.1f} |", flush=True)


if __name__ == "__main__":
    main()
