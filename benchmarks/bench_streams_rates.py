"""Rates weighted by exposure, a stream's overdispersion, and streams sorted by outcome.

Hand-run (one BLAS thread); prints markdown tables. Three parts:

``rates``: Poisson counts over an exposure given two ways, ``fit(X, y, exposure=e)`` and
the scikit-learn idiom ``fit(X, y / e, sample_weight=e)`` (``model="poisson"``), to coreset
pipelines (``GIGACoreset``, ``FrankWolfeCoreset``, ``StreamingCoreset(GIGACoreset)``,
``QuasiNewtonCoreset``, ``UniformCoreset``; ``SensitivityCoreset`` is logistic only), on
statsmodels' ``cancer`` data (counts over population) and on 20,000 synthetic counts whose
exposures span four orders of magnitude. Accuracy: :func:`skcoreset.metrics.exact_kl` (KL
in nats of the pipeline's posterior to the exact posterior of all rows, with its Pareto
k-hat) and the largest coefficient difference from statsmodels' ``GLM(exposure=)`` in its
standard errors. The exposure= column is the baseline measured in the same run.

``alpha``: ``StreamingCoreset.partial_fit`` under the negative binomial model with
``alpha="auto"`` on 100,000 simulated counts, for first calls of 100 to 10,000 rows (the
rest in calls of 10,000) and for streams of equal calls: the stream's alpha against
statsmodels' maximum-likelihood ``NegativeBinomial`` on all rows, in its standard errors;
baseline, the first call's own estimate (what the stream held before its calls were
pooled), measured in the same run.

``order``: ``StreamingCoreset`` (10 blocks) over 20,000 logistic rows and 20,000 Poisson
counts in random order and sorted by outcome: KL (nats) of the pipeline's Laplace
posterior to the all-rows Laplace posterior (:func:`skcoreset.metrics.posterior_kl`), the
largest mean error in all-rows posterior sd, and whether the stream warned.

Usage: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_streams_rates.py
       [--part rates|alpha|order|all]
"""

import argparse
import os
import warnings

import numpy as np
import statsmodels.api as sm

from skcoreset import (BayesianLogisticRegression, BayesianPoissonRegression,
                       FrankWolfeCoreset, GIGACoreset, QuasiNewtonCoreset, StreamingCoreset,
                       UniformCoreset)
from skcoreset.metrics import exact_kl, mean_error_sd, posterior_kl
from skcoreset.pipeline import Pipeline

WIDE = dict(prior_scale=1e3, intercept_prior_scale=1e3)


# ------------------------------------------------------------------------------ rates


def cancer():
    data = sm.datasets.cancer.load_pandas().data
    population = data["population"].to_numpy(float)
    x = np.log(population)
    X = ((x - x.mean()) / x.std())[:, None]
    order = np.random.default_rng(0).permutation(len(x))  # the file is sorted
    return X[order], data["cancer"].to_numpy(float)[order], population[order]


def wide_exposures(n=20_000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    exposure = 10 ** rng.uniform(0, 4, n)
    mu = exposure * np.exp(-3 + X @ np.array([0.3, -0.2, 0.1, 0.05, 0.0]))
    return X, rng.poisson(mu).astype(float), exposure


def _rate_coresets(n):
    m = max(50, min(500, n // 10))
    return [("GIGA", GIGACoreset(M=m, random_state=0)),
            ("FrankWolfe", FrankWolfeCoreset(M=m, random_state=0)),
            ("Streaming(GIGA)", StreamingCoreset(GIGACoreset(M=m, random_state=0),
                                                 block_size=max(100, n // 4),
                                                 random_state=0)),
            ("QuasiNewton", QuasiNewtonCoreset(M=m, random_state=0)),
            ("Uniform", UniformCoreset(M=m, random_state=0))]


def _fit_idiom(coreset, X, y, exposure, idiom):
    pipe = Pipeline([("coreset", coreset), ("clf", BayesianPoissonRegression(**WIDE))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if idiom == "exposure":
            return pipe.fit(X, y, coreset__exposure=exposure)
        key = ("coreset__base_coreset__model" if isinstance(coreset, StreamingCoreset)
               else "coreset__model")
        return pipe.set_params(**{key: "poisson"}).fit(X, y / exposure,
                                                       coreset__sample_weight=exposure)


def part_rates():
    print("\n## Rates weighted by exposure vs counts with exposure=\n")
    print("| data | coreset | size | exposure=: KL (nats) | k-hat | coef. error (se) | "
          "rates, sample_weight=exposure: KL (nats) | k-hat | coef. error (se) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (X, y, exposure) in [("cancer (N=301)", cancer()),
                                   ("exposures 1-1e4 (N=20,000)", wide_exposures())]:
        ref = sm.GLM(y, sm.add_constant(X, prepend=False), family=sm.families.Poisson(),
                     exposure=exposure).fit()
        for label, coreset in _rate_coresets(len(y)):
            cells = []
            for idiom in ("exposure", "rates"):
                pipe = _fit_idiom(coreset, X, y, exposure, idiom)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    kl = exact_kl(pipe, X, y, exposure=exposure, n_draws=1000,
                                  random_state=0)
                clf = pipe.named_steps["clf"]
                theta = np.append(clf.coef_, clf.intercept_)
                cells += [f"{kl.kl:.3g}", f"{kl.pareto_k:.2f}",
                          f"{np.max(np.abs(theta - ref.params) / ref.bse):.2f}"]
                size = len(pipe.named_steps["coreset"].sample_indices_)
            print(f"| {name} | {label} | {size} | " + " | ".join(cells) + " |", flush=True)


# ------------------------------------------------------------------------------ alpha


def negative_binomial(n=100_000, d=5, alpha=0.5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    mu = np.exp(0.5 + X @ np.linspace(0.4, -0.2, d))
    return X, rng.negative_binomial(1 / alpha, 1 / (1 + alpha * mu)).astype(float)


def _stream(X, y, calls):
    stream = StreamingCoreset(UniformCoreset(M=200, model="negative_binomial"),
                              block_size=10_000, random_state=0)
    first = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start, stop in zip(calls[:-1], calls[1:]):
            stream.partial_fit(X[start:stop], y[start:stop])
            first = stream.family_.alpha if first is None else first
    return first, stream.family_.alpha


def part_alpha():
    X, y = negative_binomial()
    ref = sm.NegativeBinomial(y, sm.add_constant(X, prepend=False)).fit(disp=0)
    alpha, se = ref.params[-1], ref.bse[-1]
    n = len(y)
    print(f"\n## A stream's alpha='auto' (N={n}; statsmodels on all rows: alpha "
          f"{alpha:.4f}, se {se:.4f})\n")
    print("| calls | first call's alpha (baseline) | (se) | stream's pooled alpha | (se) |")
    print("|---|---|---|---|---|")
    streams = [(f"first {k}, then 10,000 each", [0] + list(range(k, n, 10_000)) + [n])
               for k in (100, 300, 1000, 3000, 10_000)]
    streams += [(f"every call {k}", list(range(0, n, k)) + [n]) for k in (300, 1000, 3000)]
    for label, calls in streams:
        first, pooled = _stream(X, y, calls)
        print(f"| {label} | {first:.4f} | {(first - alpha) / se:+.1f} | {pooled:.4f} | "
              f"{(pooled - alpha) / se:+.1f} |", flush=True)


# ------------------------------------------------------------------------------ order


def part_order():
    rng = np.random.default_rng(0)
    n, d = 20_000, 5
    X = rng.normal(size=(n, d))
    binary = (X @ np.linspace(1, -0.5, d) - 1 + rng.logistic(size=n) > 0).astype(int)
    counts = rng.poisson(np.exp(0.3 + X @ np.linspace(0.3, -0.2, d)))
    print(f"\n## StreamingCoreset over rows sorted by outcome (N={n}, d={d}, 10 blocks, "
          "M=200)\n")
    print("| model | base | shuffled: KL (nats) | mean error (sd) | sorted by y: KL (nats) | "
          "mean error (sd) | sorted: warned |")
    print("|---|---|---|---|---|---|---|")
    for model, y, estimator in [("logistic", binary, BayesianLogisticRegression),
                                ("poisson", counts, BayesianPoissonRegression)]:
        for label, base in [("Uniform", UniformCoreset(M=200)),
                            ("GIGA", GIGACoreset(M=200)),
                            ("QuasiNewton", QuasiNewtonCoreset(M=200))]:
            cells, warned = [], False
            for order in (rng.permutation(n), np.argsort(y, kind="stable")):
                Xo, yo = X[order], y[order]
                full = estimator().fit(Xo, yo)
                pipe = Pipeline([("coreset", StreamingCoreset(base, block_size=n // 10,
                                                              random_state=0)),
                                 ("clf", estimator())])
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    pipe.fit(Xo, yo)
                warned = any("sorted or grouped" in str(w.message) for w in caught)
                cells += [f"{posterior_kl(pipe, full):.3g}",
                          f"{mean_error_sd(pipe, full):.2f}"]
            print(f"| {model} | {label} | " + " | ".join(cells) +
                  f" | {'yes' if warned else 'no'} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["rates", "alpha", "order", "all"], default="all")
    args = parser.parse_args()
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, "
          f"load {os.getloadavg()[0]:.1f}")
    for part, run in [("rates", part_rates), ("alpha", part_alpha), ("order", part_order)]:
        if args.part in (part, "all"):
            run()


if __name__ == "__main__":
    main()
