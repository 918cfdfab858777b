"""Offsets and exposures on data shaped like real data, against independent references.

Hand-run (one BLAS thread); prints tables. Two parts:

1. Real data with exposures or known terms (statsmodels' bundled sets, offline): the
   all-rows Laplace fit with its offset against statsmodels' ``GLM(offset=/exposure=)`` of
   the same family and link (largest coefficient difference in statsmodels standard errors;
   a wide prior, sd 1000, so the posterior mode is the MLE), and coreset pipelines
   (``QuasiNewtonCoreset``, ``GIGACoreset``, ``StreamingCoreset``) with the offsets given to
   the coreset step: KL (nats) of the pipeline's Laplace posterior to the all-rows Laplace
   posterior (:func:`skcoreset.metrics.posterior_kl`) and its largest mean error in
   all-rows posterior sd (:func:`skcoreset.metrics.mean_error_sd`). Control rows: the same
   fits with the offsets dropped.

2. Held-out synthetic shapes at N = 1e5 (``--n``): discrete-time survival (rare events,
   binary complementary log-log with offset = log(time at risk) over several units,
   heavy-tailed correlated covariates, clustered rows, d = 40) and negative binomial counts
   whose exposures span four orders of magnitude (d = 30). Time and accuracy of the
   all-rows Laplace fit, the default pipeline (``QuasiNewtonCoreset`` then the estimator
   with ``method="mcmc"``, exact correction on) with the offsets routed to the coreset
   step, and statsmodels' GLM. Accuracy: ``exact_kl`` (importance sampling over every row,
   KL(fit || exact posterior of all rows) in nats, with its Pareto k-hat) and the largest
   coefficient difference from statsmodels in its standard errors.

Usage: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_offsets.py [--n N]
       [--part 1|2]
"""

import argparse
import os
import time
import warnings

import numpy as np
import statsmodels.api as sm

from skcoreset import (BayesianBinaryRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, GIGACoreset, QuasiNewtonCoreset, StreamingCoreset)
from skcoreset.metrics import exact_kl, mean_error_sd, posterior_kl
from skcoreset.pipeline import Pipeline

WIDE = dict(prior_scale=1e3, intercept_prior_scale=1e3)
LINKS = {"logit": sm.families.links.Logit(), "cloglog": sm.families.links.CLogLog()}


def _standardise(X):
    X = np.asarray(X, dtype=float)
    return (X - X.mean(axis=0)) / X.std(axis=0)


# ---------------------------------------------------------------- part 1: real data sets


def real_sets():
    """(name, kind, X, y, fit keywords with the offsets, statsmodels model, note)."""
    sets = []
    data = sm.datasets.cancer.load_pandas().data
    population = data["population"].to_numpy(float)
    X = _standardise(np.log(population)[:, None])
    y = data["cancer"].to_numpy(float)
    sets.append(("cancer", "negbin", X, y, dict(exposure=population),
                 "cancer counts over population (exposure), x = log population"))
    sets.append(("cancer", "poisson", X, y, dict(exposure=population),
                 "the same counts, Poisson"))

    data = sm.datasets.fair.load_pandas().data
    yrs = data["yrs_married"].to_numpy(float)
    cols = ["rate_marriage", "age", "children", "religious", "educ", "occupation",
            "occupation_husb"]
    X = _standardise(data[cols].to_numpy(float))
    y = np.ceil(data["affairs"].to_numpy(float))
    sets.append(("fair", "negbin", X, y, dict(exposure=yrs),
                 "affairs (rounded up) over yrs_married (exposure)"))
    sets.append(("fair", "poisson", X, y, dict(exposure=yrs),
                 "the same counts, Poisson (the exposure enters as weights of rates)"))
    sets.append(("fair", "cloglog", X, (y > 0).astype(int), dict(offset=np.log(yrs)),
                 "any affair, cloglog, offset = log(yrs_married)"))

    data = sm.datasets.star98.load_pandas().data
    cols = ["PERASIAN", "PERBLACK", "PERHISP", "PERMINTE", "AVYRSEXP", "AVSALK",
            "PERSPENK", "PTRATIO", "PCTAF"]
    X = _standardise(data[cols].to_numpy(float))
    k = data["NABOVE"].to_numpy(float)
    n = k + data["NBELOW"].to_numpy(float)
    # LOWINC's coefficient held at statsmodels' published value (-0.0168): a known term
    offset = -0.0168 * data["LOWINC"].to_numpy(float)
    sets.append(("star98", "logit", X, k, dict(offset=offset, n_trials=n),
                 "NABOVE of NABOVE+NBELOW, logit, offset = -0.0168 LOWINC"))
    return sets


def _estimator(kind, alpha=None, **kw):
    if kind == "negbin":
        return BayesianNegativeBinomialRegression(alpha=alpha, **WIDE, **kw)
    if kind == "poisson":
        return BayesianPoissonRegression(**WIDE, **kw)
    return BayesianBinaryRegression(link=kind, **WIDE, **kw)


def _statsmodels(kind, X, y, params, alpha=None):
    exog = sm.add_constant(X, prepend=False)
    if kind in ("negbin", "poisson"):
        family = (sm.families.NegativeBinomial(alpha=alpha) if kind == "negbin"
                  else sm.families.Poisson())
        model = sm.GLM(y, exog, family=family, exposure=params.get("exposure"),
                       offset=params.get("offset"))
    elif "n_trials" in params:
        endog = np.column_stack([y, params["n_trials"] - y])
        model = sm.GLM(endog, exog, family=sm.families.Binomial(link=LINKS[kind]),
                       offset=params.get("offset"))
    else:
        model = sm.GLM(y, exog, family=sm.families.Binomial(link=LINKS[kind]),
                       offset=params.get("offset"))
    return model.fit()


def _theta(est):
    return np.append(est.coef_.ravel(), est.intercept_)


def _coresets(n):
    m = max(50, min(500, n // 10))
    return [("QuasiNewton", QuasiNewtonCoreset(random_state=0)),
            ("GIGA", GIGACoreset(M=m, random_state=0)),
            ("Streaming", StreamingCoreset(QuasiNewtonCoreset(random_state=0),
                                           block_size=max(100, n // 4), random_state=0))]


def part1():
    print("\n## Part 1: real data with exposures or offsets (all-rows Laplace, wide prior)")
    print("\n| data | model | N | d | all rows vs statsmodels (se) | offsets dropped vs "
          "statsmodels (se) |")
    print("|---|---|---|---|---|---|")
    rows = []
    for name, kind, X, y, params, note in real_sets():
        # the files are sorted (fair by affairs): shuffled once, so that the streaming
        # blocks are not blocks of one outcome
        order = np.random.default_rng(0).permutation(len(y))
        X, y = X[order], y[order]
        params = {key: value[order] for key, value in params.items()}
        full = _estimator(kind, alpha="auto" if kind == "negbin" else None).fit(X, y, **params)
        alpha = getattr(full, "alpha_", None)
        ref = _statsmodels(kind, X, y, params, alpha)
        err = np.max(np.abs(_theta(full) - ref.params) / ref.bse)
        dropped_params = {k: v for k, v in params.items() if k == "n_trials"}
        dropped = _estimator(kind, alpha=alpha).fit(X, y, **dropped_params)
        err_dropped = np.max(np.abs(_theta(dropped) - ref.params) / ref.bse)
        print(f"| {name} | {kind} | {X.shape[0]} | {X.shape[1]} | {err:.2e} | "
              f"{err_dropped:.1f} |")
        rows.append((name, kind, X, y, params, note, full, alpha))
    print("\n| data | model | coreset | size | KL to all rows (nats) | mean error (sd) | "
          "baseline, no offsets either side: KL | mean error (sd) | offsets dropped: KL | "
          "mean error (sd) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, kind, X, y, params, note, full, alpha in rows:
        without = {k: v for k, v in params.items() if k == "n_trials"}
        full_without = _estimator(kind, alpha=alpha).fit(X, y, **without)
        for label, coreset in _coresets(X.shape[0]):
            out = []
            for given, reference in ((params, full), (without, full_without),
                                     (without, full)):
                pipe = Pipeline([("coreset", coreset), ("clf", _estimator(kind, alpha=alpha))])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pipe.fit(X, y, **{f"coreset__{k}": v for k, v in given.items()})
                out.append((len(pipe.named_steps["coreset"].sample_indices_),
                            posterior_kl(pipe, reference), mean_error_sd(pipe, reference)))
            (size, kl, me), (_, kl_b, me_b), (_, kl0, me0) = out
            print(f"| {name} | {kind} | {label} | {size} | {kl:.3g} | {me:.2f} | "
                  f"{kl_b:.3g} | {me_b:.2f} | {kl0:.3g} | {me0:.1f} |")
    print("\nData: " + "; ".join(f"{r[0]} ({r[1]}): {r[5]}" for r in rows) + ".")
    print("\nStreamingCoreset on the file's order (fair is sorted by affairs: the first "
          "blocks hold one outcome)\n")
    print("| data | model | with offsets: KL | mean error (sd) | no offsets either side: KL | "
          "mean error (sd) |")
    print("|---|---|---|---|---|---|")
    for name, kind, X, y, params, note in real_sets():
        if name != "fair":
            continue
        out = []
        for given in (params, {}):
            reference = _estimator(kind, alpha=1.0 if kind == "negbin" else None).fit(
                X, y, **given)
            coreset = _coresets(X.shape[0])[2][1]
            pipe = Pipeline([("coreset", coreset),
                             ("clf", _estimator(kind, alpha=1.0 if kind == "negbin" else None))])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pipe.fit(X, y, **{f"coreset__{k}": v for k, v in given.items()})
            out.append((posterior_kl(pipe, reference), mean_error_sd(pipe, reference)))
        print(f"| {name} | {kind} | {out[0][0]:.3g} | {out[0][1]:.2f} | {out[1][0]:.3g} | "
              f"{out[1][1]:.2f} |")


# ---------------------------------------------------------------- part 2: synthetic shapes


def _heavy_correlated(rng, n, d, n_clusters):
    """Student-t (3 dof) covariates with an AR(1) correlation of 0.6, rows in clusters that
    share half their covariate values (and a cluster effect on the outcome)."""
    chol = np.linalg.cholesky(0.6 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d))))
    z = rng.standard_t(3, size=(n, d)) @ chol.T
    cluster = rng.integers(0, n_clusters, n)
    centre = rng.standard_t(3, size=(n_clusters, d)) @ chol.T
    X = (z + centre[cluster]) / np.sqrt(2.0)
    return X / X.std(axis=0), cluster


def survival_data(n, d=40, seed=0):
    """Discrete-time survival: P(event in a period of length t) = 1 - exp(-t exp(eta)),
    the complementary log-log model with offset log(t); t over 10^-1.5 .. 10^1.5."""
    rng = np.random.default_rng(seed)
    X, cluster = _heavy_correlated(rng, n, d, n // 50)
    beta = rng.normal(scale=0.3, size=d) * (rng.random(d) < 0.5)
    log_t = rng.uniform(-1.5, 1.5, n) * np.log(10)
    frailty = rng.normal(scale=0.3, size=cluster.max() + 1)[cluster]
    eta = -5.5 + X @ beta + frailty + log_t
    y = (rng.random(n) < -np.expm1(-np.exp(np.minimum(eta, 30)))).astype(int)
    return X, y, dict(offset=log_t)


def negbin_data(n, d=30, seed=1):
    """Counts over exposures spanning four orders of magnitude (10^-2 .. 10^2)."""
    rng = np.random.default_rng(seed)
    X, cluster = _heavy_correlated(rng, n, d, n // 50)
    beta = rng.normal(scale=0.15, size=d)
    exposure = 10 ** rng.uniform(-2, 2, n)
    mu = exposure * np.exp(0.5 + X @ beta + rng.normal(scale=0.2, size=cluster.max() + 1)[cluster])
    y = rng.negative_binomial(1 / 0.5, 1 / (1 + 0.5 * mu))  # var = mu + 0.5 mu^2
    return X, y.astype(float), dict(exposure=exposure)


def _timed(f):
    start = time.perf_counter()
    out = f()
    return out, time.perf_counter() - start


def part2(n):
    print(f"\n## Part 2: synthetic shapes, N = {n:,}")
    print("\n| shape | fit | time (s) | KL to exact posterior (nats) | Pareto k | "
          "mean error vs exact (exact sd) | max coef diff vs statsmodels (se) | notes |")
    print("|---|---|---|---|---|---|---|---|")
    for shape, kind, (X, y, params) in [
            ("survival cloglog, d=40", "cloglog", survival_data(n)),
            ("negbin, exposure 1e-2..1e2, d=30", "negbin", negbin_data(n))]:
        note = (f"event rate {y.mean():.2%}" if kind == "cloglog"
                else f"mean count {y.mean():.1f}")
        full, t_full = _timed(lambda: _estimator(
            kind, alpha="auto" if kind == "negbin" else None).fit(X, y, **params))
        alpha = getattr(full, "alpha_", None)
        ref, t_ref = _timed(lambda: _statsmodels(kind, X, y, params, alpha))
        if alpha is not None:
            note += f", alpha_ {alpha:.3f} (true 0.5)"

        def se(theta):
            return np.max(np.abs(theta - ref.params) / ref.bse)

        # the exact posterior's moments: importance sampling from the all-rows Laplace fit
        exact = exact_kl(full, X, y, **params, n_draws=4000, random_state=0)

        def vs_exact(theta):
            return np.max(np.abs(theta - exact.mean[:len(theta)]) / exact.sd[:len(theta)])

        print(f"| {shape} | all-rows Laplace | {t_full:.1f} | {exact.kl:.3f} | "
              f"{exact.pareto_k:.2f} | {exact.max_mean_error_sd:.3f} | {se(_theta(full)):.3f} | "
              f"{note} |")
        pipe = Pipeline([("coreset", QuasiNewtonCoreset(random_state=0)),
                         ("clf", _estimator(kind, alpha=alpha, method="mcmc", random_state=0))])
        _, t_pipe = _timed(lambda: pipe.fit(X, y, **{f"coreset__{k}": v
                                                     for k, v in params.items()}))
        size = len(pipe.named_steps["coreset"].sample_indices_)
        mean = pipe.named_steps["clf"].posterior_.mean
        print(f"| {shape} | QuasiNewton + mcmc pipeline, corrected | {t_pipe:.1f} | "
              f"{pipe.kl_before_:.3f} (before correction) | {pipe.pareto_k_:.2f} | "
              f"{vs_exact(mean):.3f} | {se(mean):.3f} | coreset {size} rows, corrected "
              f"{pipe.exact_corrected_} |")
        print(f"| {shape} | statsmodels GLM (MLE) | {t_ref:.1f} | | | "
              f"{vs_exact(np.asarray(ref.params)):.3f} | 0 | |")
        dropped = _estimator(kind, alpha=alpha).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kl_drop = exact_kl(dropped, X, y, **params, random_state=0)
        print(f"| {shape} | control: all rows, offsets dropped | | {kl_drop.kl:.3g} "
              f"(unreliable) | {kl_drop.pareto_k:.2f} | {vs_exact(_theta(dropped)):.1f} | "
              f"{se(_theta(dropped)):.1f} | |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--part", choices=["1", "2", "all"], default="all")
    args = parser.parse_args()
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, load {os.getloadavg()[0]:.1f}")
    if args.part in ("1", "all"):
        part1()
    if args.part in ("2", "all"):
        part2(args.n)


if __name__ == "__main__":
    main()
