"""A coreset built under the model that is fitted on it, and how far each constructor is.

Run by hand: ``python benchmarks/bench_model_match.py [--mcmc] [--n-large 1000000]``.

**Part 1, negative binomial counts**: the RAND Health Insurance Experiment's doctor visits
(``statsmodels.datasets.randhie``: 20,190 people, ``mdvis`` on 9 covariates, standardised),
overdispersed counts (alpha about 1.3). ``Pipeline([("coreset", QuasiNewtonCoreset(...)),
("reg", BayesianNegativeBinomialRegression())])`` against the same estimator on all rows,
both by Laplace (alpha estimated, coefficients given it), for three coreset steps:

* ``poisson``: ``model="poisson"``, the model ``model="auto"`` read from the counts before
  a pipeline passed the final estimator's model on (the weights match the Poisson
  likelihood);
* ``NB, fixed alpha``: ``model=NegativeBinomialFamily(alpha=a)`` with ``a`` the coreset's own
  estimate of alpha, the negative binomial calibrated at a fixed alpha (what
  ``model="negative_binomial"`` did before the joint calibration);
* ``default``: ``QuasiNewtonCoreset()`` as it is now (``model="auto"``: the final
  estimator's negative binomial, calibrated in the coefficients and log alpha jointly).

Columns: KL(pipeline posterior || full-data posterior) of the coefficients in nats
(``skcoreset.metrics.posterior_kl``), the largest posterior-mean difference in full-data sds,
the ratio of the coefficients' sds (smallest and largest), alpha, and its difference from
the maximum-likelihood alpha of all rows by statsmodels' ``NegativeBinomial`` (an
independent implementation; the coefficient prior N(0, 1) on standardised covariates barely
moves it) in statsmodels' standard errors, and the ratio of the sd of log alpha to
statsmodels' (``bse / alpha``); coreset rows and the pipeline's time. The estimator's own
alpha on all rows is printed beside it: it estimates alpha on at most 10,000 of the rows.
``--mcmc`` adds NUTS (``method="mcmc"``, alpha sampled jointly) on the default coreset and
on all rows, twice (two seeds: the differences between them are NUTS's Monte Carlo floor).

**Part 2, every constructor's own distance**: ``kl_estimate_`` of ``GIGACoreset(M=200)``
(the papers' Hilbert coreset), ``UniformCoreset(M=1000)`` and ``QuasiNewtonCoreset()`` on the
papers' count data (bike trips, airport delays, synthetic Poisson; ``../shared/data``, log
link) and synthetic logistic data (1e5 rows, 10 features), with the fit time and whether a
``CoresetAccuracyWarning`` was issued; and ``coreset_quality`` (both Laplace fits from
scratch) as the independent check of the number. Last, the cost of the estimate at
``--n-large`` rows: ``UniformCoreset`` builds in milliseconds, so its fit time there is
mostly that of ``kl_estimate_`` (a Laplace fit of the coreset and one of all rows), set
against the Laplace fit of all rows by the estimator.

BLAS is limited to one thread (threadpoolctl), so times are single-core.
"""

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       GIGACoreset, QuasiNewtonCoreset, UniformCoreset)
from skcoreset.datasets import make_logistic_regression
from skcoreset.exceptions import CoresetAccuracyWarning
from skcoreset.families import NegativeBinomialFamily
from skcoreset.metrics import coreset_quality, mean_error_sd, posterior_kl
from skcoreset.pipeline import Pipeline

from _common import DATA_DIR


def rand_hie():
    from statsmodels.datasets import randhie

    frame = randhie.load_pandas().data
    X = frame.drop(columns="mdvis").to_numpy(float)
    return (X - X.mean(0)) / X.std(0), frame["mdvis"].to_numpy(float)


def statsmodels_alpha(X, y):
    import statsmodels.api as sm

    fit = sm.NegativeBinomial(y, sm.add_constant(X)).fit(disp=0, maxiter=200)
    return fit.params[-1], fit.bse[-1]


def sd_of(reg):
    return np.sqrt(np.diag(reg.posterior_.cov))


def negative_binomial_part(mcmc):
    X, y = rand_hie()
    print(f"RAND HIE doctor visits: N = {len(y)}, d = {X.shape[1]}, mean {y.mean():.2f}, "
          f"variance {y.var():.1f}")
    start = time.perf_counter()
    full = BayesianNegativeBinomialRegression().fit(X, y)
    full_time = time.perf_counter() - start
    sm_alpha, sm_se = statsmodels_alpha(X, y)
    print(f"full data, Laplace: alpha {full.alpha_:.4f} +- {full.alpha_std_:.4f} "
          f"({full_time:.2f} s); statsmodels NegativeBinomial MLE: alpha {sm_alpha:.4f} "
          f"+- {sm_se:.4f}")
    own_alpha = QuasiNewtonCoreset(model="negative_binomial", random_state=0).fit(
        X, y).family_.alpha
    steps = {"poisson": QuasiNewtonCoreset(model="poisson", random_state=0),
             "NB, fixed alpha": QuasiNewtonCoreset(
                 model=NegativeBinomialFamily(alpha=own_alpha), random_state=0),
             "default": QuasiNewtonCoreset(random_state=0)}
    print("\n| coreset step | KL (nats) | max mean error (sd) | coef sd ratio | alpha | "
          "alpha - MLE (se) | log-alpha sd / MLE's | rows | time (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, step in steps.items():
        pipe = Pipeline([("coreset", step), ("reg", BayesianNegativeBinomialRegression())])
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the mismatch is the point
            pipe.fit(X, y)
        elapsed = time.perf_counter() - start
        reg = pipe.named_steps["reg"]
        ratio = sd_of(reg) / sd_of(full)
        print(f"| {name} | {posterior_kl(reg, full):.3g} | {mean_error_sd(reg, full):.3f} | "
              f"{ratio.min():.3f}-{ratio.max():.3f} | {reg.alpha_:.4f} | "
              f"{(reg.alpha_ - sm_alpha) / sm_se:+.2f} | "
              f"{reg.log_alpha_std_ / (sm_se / sm_alpha):.3f} | "
              f"{len(step.sample_indices_)} | {elapsed:.2f} |")
    if mcmc:
        runs = {}
        for name, pipe in {
                "default coreset + NUTS": Pipeline([
                    ("coreset", QuasiNewtonCoreset(random_state=0)),
                    ("reg", BayesianNegativeBinomialRegression(method="mcmc",
                                                               random_state=0))]),
                "NUTS on all rows": BayesianNegativeBinomialRegression(method="mcmc",
                                                                       random_state=1),
                # its Monte Carlo floor: the same run with another seed
                "NUTS on all rows, another seed": BayesianNegativeBinomialRegression(
                    method="mcmc", random_state=2)}.items():
            start = time.perf_counter()
            pipe.fit(X, y)
            reg = pipe.named_steps["reg"] if isinstance(pipe, Pipeline) else pipe
            runs[name] = (reg, time.perf_counter() - start)
        ref = runs["NUTS on all rows"][0]
        print("\n| route | alpha (mean +- sd) | largest coef mean diff (ref sd) | "
              "coef sd ratio | time (s) |")
        print("|---|---|---|---|---|")
        for name, (reg, elapsed) in runs.items():
            ratio = sd_of(reg) / sd_of(ref)
            diff = np.max(np.abs(reg.posterior_.mean - ref.posterior_.mean) / sd_of(ref))
            print(f"| {name} | {reg.alpha_:.4f} +- {reg.alpha_std_:.4f} | {diff:.3f} | "
                  f"{ratio.min():.3f}-{ratio.max():.3f} | {elapsed:.1f} |")


def paper_set(name):
    data = np.load(DATA_DIR / f"{name}.npz")
    X = data["X"][:, :-1]
    return (X - X.mean(0)) / X.std(0), data["y"].astype(int)


def constructors_part(n_large):
    sets = {}
    for name in ["biketrips_large", "airportdelays_large", "synth_poiss_large"]:
        if (DATA_DIR / f"{name}.npz").exists():
            sets[name] = paper_set(name)
    sets["logistic (synthetic)"] = make_logistic_regression(100_000, n_features=10,
                                                            random_state=0)
    print("\n| data | N | d | constructor | rows | kl_estimate_ (nats) | coreset_quality KL | "
          "warned | fit (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (X, y) in sets.items():
        for coreset in [GIGACoreset(M=200, random_state=0),
                        UniformCoreset(M=1000, random_state=0),
                        QuasiNewtonCoreset(random_state=0)]:
            start = time.perf_counter()
            with warnings.catch_warnings(record=True) as record:
                warnings.simplefilter("always")
                coreset.fit(X, y)
            elapsed = time.perf_counter() - start
            warned = any(issubclass(w.category, CoresetAccuracyWarning) for w in record)
            label = f"{type(coreset).__name__}(M={coreset.M!r})"
            print(f"| {name} | {len(y):,} | {X.shape[1]} | {label} | "
                  f"{len(coreset.sample_indices_)} | {coreset.kl_estimate_:.3g} | "
                  f"{coreset_quality(coreset, X, y).kl:.3g} | {'yes' if warned else 'no'} | "
                  f"{elapsed:.2f} |")
    X, y = make_logistic_regression(n_large, n_features=10, random_state=1)
    print(f"\nCost of kl_estimate_ at N = {n_large:,}, d = 10 (logistic):")
    print("| fit | time (s) |")
    print("|---|---|")
    for label, fit in [("UniformCoreset(M=1000).fit (build + kl_estimate_)",
                        lambda: UniformCoreset(M=1000, random_state=0).fit(X, y)),
                       ("QuasiNewtonCoreset().fit", lambda: QuasiNewtonCoreset(
                           random_state=0).fit(X, y)),
                       ("BayesianLogisticRegression().fit (all rows)",
                        lambda: BayesianLogisticRegression().fit(X, y))]:
        best = np.inf
        for _ in range(2):
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                fit()
            best = min(best, time.perf_counter() - start)
        print(f"| {label} | {best:.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mcmc", action="store_true", help="add NUTS on the coreset and "
                        "on all rows (minutes)")
    parser.add_argument("--n-large", type=float, default=1e6)
    args = parser.parse_args()
    with threadpool_limits(limits=1):
        negative_binomial_part(args.mcmc)
        constructors_part(int(args.n_large))


if __name__ == "__main__":
    main()
