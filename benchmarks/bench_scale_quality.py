"""Coreset quality at scale, in nats, against what the user would do instead.

Run by hand: ``python benchmarks/bench_scale_quality.py [--quick] [--N 1e5 1e6] [--d 10 50]
[--models logistic poisson] [--M 100 300 1000] [--constructors ...]
[--budget SECONDS] [--no-mcmc | --full-mcmc run]``, or the data-shapes suite:
``python benchmarks/bench_scale_quality.py --shapes [--N 1e6] [--shape-names ...]
[--nuts-shapes ...] [--nuts-draws 2000]``.

Synthetic data (``make_logistic_regression`` / ``make_poisson_regression`` with the log link,
N(0, I) covariates, coefficients of norm 2 for logistic and 0.5 for Poisson, intercept 0.5).
For every constructor and coreset size M: build time, KL(coreset Laplace || full Laplace) in
nats and the largest |mean difference| in full-posterior sd (``skcoreset.metrics.
coreset_quality``), and the coreset size. Beside them, in the same run: the full-data Laplace
fit (``BayesianLogisticRegression`` / ``BayesianPoissonRegression`` defaults). Then coreset +
MCMC: the ``QuasiNewtonCoreset`` with the largest M, followed by the default MCMC (NUTS) on
its rows, timed end to end, its KL (moment-matched draws against the full Laplace
posterior, so it includes the Monte Carlo error of the draws) and its speed-up over the
same MCMC on all rows. That baseline is the package's default NUTS run on all rows
(``--full-mcmc run``: run and timed, minutes to hours at N = 1e6), by default
extrapolated: the Laplace fit plus the number of gradients the same NUTS run takes on the
coreset's rows (the same stopping rule on a posterior of the same shape, whitened alike)
times the time of one gradient on all rows, measured by a short NUTS run on all rows (one
chain, 20 warm-up iterations and about 10 draws). ``--full-mcmc run`` prints both, with
the gradients and the time per gradient of the full run, to check the extrapolation.

A constructor is skipped at a size when its time at the previous size, scaled linearly in M,
exceeds ``--budget`` seconds (default 600); the table says so. BLAS is limited to one thread
(threadpoolctl), so times are single-core.

Targets: QuasiNewtonCoreset at N = 1e6, d = 10, M = 1000: KL <= 0.1 nats and build
<= 60 s; at N = 1e5: KL <= 0.05 nats and <= 10 s; coreset + MCMC >= 50x faster than full-data
MCMC at N = 1e6 with KL <= 0.2 nats (set against emcee's default chain; NUTS on all rows is
the stronger baseline now).

**Data shapes** (``--shapes``): real-shaped data from :mod:`skcoreset.datasets` at N = 1e6 --
rare events (5 %, 1 %, 0.1 % positives, AR(0.6)-correlated features), heavy-tailed features
(standardised log-normal under a Poisson log link, Student t under a logistic link), clustered
rows, d in {10, 30, 50, 100}, and a misspecified count model (capped rates, t3 features). Per
shape, one seed: the full-data Laplace fit, then the quasi-Newton coreset as it was before
importance candidates (``previous``: a uniform class-stratified subset of M = 1000 rows and
50 Monte Carlo quasi-Newton iterations of 100 draws, rebuilt from the package's pieces with
the same seed), ``QuasiNewtonCoreset(M=1000)`` and ``QuasiNewtonCoreset(M="auto",
target_kl=0.1)``: build time, coreset size, KL(coreset Laplace || full Laplace) in nats,
the largest mean error in full-posterior sd, and the ratio of the constructor's
``kl_estimate_`` to that KL. For the shapes in ``--nuts-shapes`` (where the full-data
Laplace approximation is itself off), two references for the exact posterior: NUTS (NumPyro)
on all rows (``--nuts-draws`` draws, cached in ``benchmarks/results``; the KL between its two
halves shows its noise floor) and self-normalised importance sampling from the Laplace fit
with the exact full-data posterior as the target (``--coreset-draws`` draws; its effective
sample size is printed). Against both: the KL of the moment-matched Gaussians and the largest
mean error in sd of the full-data Laplace fit and of NUTS on the ``M="auto"`` coreset's rows
(``--coreset-draws`` draws).
"""

import argparse
import time
import warnings
from functools import partial

import numpy as np
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from skcoreset import (BayesianLogisticRegression, BayesianPoissonRegression,
                       FrankWolfeCoreset, GIGACoreset, QuasiNewtonCoreset, SensitivityCoreset,
                       SparseVICoreset, UniformCoreset)
from skcoreset.families import make_family
from skcoreset._inference import prior_precision
from skcoreset._inference.nuts import nuts
from skcoreset._backend import uniform_subset
from skcoreset._posterior import GaussianPosterior, SamplePosterior
from skcoreset.coreset._quasi_newton_weights import ExactPotentialSums, quasi_newton_weights
from skcoreset.datasets import (make_clustered, make_heavy_tailed, make_logistic_regression,
                                make_misspecified_counts, make_poisson_regression,
                                make_rare_events)
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

# name: (model, generator of (X, y) from (n, random_state))
_rare = partial(make_rare_events, correlation=0.6)
SHAPES = {
    "rare 5 %, d = 30": ("logistic", partial(_rare, n_features=30, positive_rate=0.05)),
    "rare 1 %, d = 30": ("logistic", partial(_rare, n_features=30, positive_rate=0.01)),
    "rare 0.1 %, d = 30": ("logistic", partial(_rare, n_features=30, positive_rate=0.001)),
    "d = 10 (5 %)": ("logistic", partial(_rare, n_features=10, positive_rate=0.05)),
    "d = 50 (5 %)": ("logistic", partial(_rare, n_features=50, positive_rate=0.05)),
    "d = 100 (5 %)": ("logistic", partial(_rare, n_features=100, positive_rate=0.05)),
    "log-normal, Poisson, d = 20": ("poisson", partial(make_heavy_tailed, n_features=20)),
    "Student t3, logistic, d = 30": (
        "logistic", partial(make_heavy_tailed, n_features=30, distribution="t",
                            model="logistic")),
    "clustered, d = 50": ("logistic", partial(make_clustered, n_features=50)),
    "misspecified Poisson, t3, d = 20": (
        "poisson", partial(make_misspecified_counts, n_features=20)),
}


def make_data(model, n, d, seed=0):
    rng = np.random.default_rng(seed)
    direction = rng.normal(size=d)
    direction /= np.linalg.norm(direction)
    if model == "logistic":
        return make_logistic_regression(n, coef=2.0 * direction, intercept=0.5,
                                        random_state=seed)
    return make_poisson_regression(n, coef=0.5 * direction, intercept=0.5, link="log",
                                   random_state=seed)


def _encoded(model, y):
    return np.where(y == 1, 1.0, -1.0) if model == "logistic" else y.astype(float)


def _prior(d):
    return prior_precision(d, prior_scale=1.0, intercept_prior_scale=10.0, fit_intercept=True)


def nuts_on_rows(model, X, y, sample_weight=None, **params):
    """(seconds, result) of the package's NUTS (what ``method="mcmc"`` runs, with the
    estimators' prior and ``random_state=0``) on these rows."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = nuts(X, _encoded(model, y), make_family(model, link="log"),
                      sample_weight=np.ones(len(y)) if sample_weight is None else sample_weight,
                      prior_prec=_prior(X.shape[1]), fit_intercept=True, random_state=0,
                      **params)
    return time.perf_counter() - start, result


def seconds_per_gradient(model, X, y, laplace_seconds):
    """Seconds of one gradient of the sampler on all rows, from a short NUTS run (one chain,
    20 warm-up iterations, about 10 draws: a few hundred gradients; its Laplace start,
    counted as ``laplace_seconds``, taken off)."""
    seconds, result = nuts_on_rows(model, X, y, n_draws=10, n_burnin=20, n_chains=1)
    return max(seconds - laplace_seconds, 0.0) / result.extra["n_gradients"]


def build(name, M, model, random_state=0):
    kwargs = dict(M=M, model=model, random_state=random_state)
    if model == "poisson":
        kwargs["link"] = "log"
    return CONSTRUCTORS[name](**kwargs)


def run_setting(model, n, d, sizes, names, budget, full_mcmc):
    X, y = make_data(model, n, d)
    estimator = ESTIMATORS[model]
    start = time.perf_counter()
    full = estimator().fit(X, y)
    laplace_seconds = time.perf_counter() - start
    print(f"\n== {model}, N = {n:.0e}, d = {d}: full-data Laplace {laplace_seconds:.2f} s",
          flush=True)
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
    if full_mcmc != "none":
        M = max(sizes)
        start = time.perf_counter()
        coreset = build("quasi-newton", M, model).fit(X, y)
        rows = coreset.sample_indices_
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sampled = estimator(method="mcmc", random_state=0).fit(
                X[rows], y[rows], sample_weight=coreset.sample_weight_)
        seconds = time.perf_counter() - start
        # the same run on the coreset's rows: a posterior of the same shape, whitened alike
        n_gradients = nuts_on_rows(model, X[rows], y[rows],
                                   coreset.sample_weight_)[1].extra["n_gradients"]
        per_gradient = seconds_per_gradient(model, X, y, laplace_seconds)
        extrapolated = laplace_seconds + n_gradients * per_gradient
        print(f"   NUTS on all rows, extrapolated: {extrapolated:.0f} s (Laplace "
              f"{laplace_seconds:.1f} s + {n_gradients} gradients, as on the coreset's "
              f"rows, x {per_gradient * 1e3:.2f} ms per gradient on all rows)", flush=True)
        baseline, how = extrapolated, "extrapolated"
        if full_mcmc == "run":
            baseline, result = nuts_on_rows(model, X, y)
            how = "measured"
            measured_gradients = result.extra["n_gradients"]
            print(f"   NUTS on all rows, measured: {baseline:.0f} s "
                  f"({baseline / extrapolated:.2f}x the extrapolation: "
                  f"{measured_gradients} gradients, "
                  f"{(baseline - laplace_seconds) / measured_gradients * 1e3:.2f} ms each), "
                  f"KL(draws || full Laplace) {posterior_kl(result.posterior, full):.3g} "
                  f"nats, max|dmean|/sd {mean_error_sd(result.posterior, full):.3g}",
                  flush=True)
        print(f"   quasi-newton M = {M} + MCMC: {seconds:.1f} s, "
              f"{baseline / seconds:.0f}x faster than NUTS on all rows ({how}); "
              f"KL(draws || full Laplace) {posterior_kl(sampled, full):.3g} nats, "
              f"max|dmean|/sd {mean_error_sd(sampled, full):.3g}", flush=True)


def previous_quasi_newton(X, y, model, M, random_state=0):
    """``(indices, weights, kl_estimate)`` of the quasi-Newton coreset before importance
    candidates: a uniform subset (per class for logistic), refined by 50 Monte Carlo
    quasi-Newton iterations of 100 draws (50,000-row control-variate subsamples above
    200,000 rows), as ``QuasiNewtonCoreset(M)`` built it in the development snapshots
    before importance candidates."""
    rng = check_random_state(random_state)
    family = make_family(model, link="log")
    y_enc = _encoded(model, y)
    w = np.ones(len(y))
    indices, weights = uniform_subset(M, w, rng, strata=y_enc if model == "logistic" else None)
    order = np.argsort(indices)
    prior = _prior(X.shape[1])
    with threadpool_limits(limits=1, user_api="blas"):
        result = quasi_newton_weights(
            X, y_enc, family, indices=indices[order], weights=weights[order], sample_weight=w,
            prior_prec=prior, fit_intercept=True, n_draws=100, max_iter=50, tol=1e-3,
            n_iter_no_change=4, n_subsample=None if len(y) <= 200_000 else 50_000,
            random_state=rng)
    keep = result.weights > 0
    return indices[order][keep], result.weights[keep], result.kl_estimate


def _laplace_quality(model, X, y, indices, weights, full):
    """``(KL, largest mean error in sd)`` of the coreset's Laplace fit against the full one
    (what ``coreset_quality`` computes, for a coreset built from pieces)."""
    core = ESTIMATORS[model]().fit(X[indices], y[indices], sample_weight=weights)
    return posterior_kl(core, full), mean_error_sd(core, full)


def _cell(seconds, kl, sd, ratio, size=None):
    size = "" if size is None else f" ({size} rows)"
    return f"{seconds:.1f} s{size} / {kl:.3g} / {sd:.3g} / {ratio:.2g}"


def run_shape(name, n, nuts, nuts_draws, coreset_draws):
    """One row of the data-shapes table (markdown), and the NUTS comparison if asked."""
    model, make = SHAPES[name]
    X, y = make(n, random_state=0)
    start = time.perf_counter()
    full = ESTIMATORS[model]().fit(X, y)
    laplace_seconds = time.perf_counter() - start
    cells = [name, f"{laplace_seconds:.1f} s"]
    start = time.perf_counter()
    indices, weights, estimate = previous_quasi_newton(X, y, model, 1000)
    seconds = time.perf_counter() - start
    kl, sd = _laplace_quality(model, X, y, indices, weights, full)
    cells.append(_cell(seconds, kl, sd, estimate / kl))
    fitted = {}
    for label, make_coreset in [("M=1000", partial(QuasiNewtonCoreset, M=1000)),
                                ("auto", partial(QuasiNewtonCoreset, M="auto", target_kl=0.1))]:
        coreset = make_coreset(model=model, random_state=0)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            coreset.fit(X, y)
        seconds = time.perf_counter() - start
        quality = coreset_quality(coreset, X, y, full_posterior=full.posterior_)
        ratio = coreset.kl_estimate_ / quality.kl if quality.kl > 0 else float("nan")
        cells.append(_cell(seconds, quality.kl, quality.max_mean_error_sd, ratio,
                           quality.size if label != "M=1000" else None))
        fitted[label] = coreset
    print("| " + " | ".join(cells) + " |", flush=True)
    if nuts:
        _nuts_comparison(name, model, X, y, full, fitted, n, nuts_draws, coreset_draws)


def importance_reference(X, y, model, full, n_draws, seed=0):
    """Exact posterior moments by self-normalised importance sampling: ``n_draws`` draws of
    the full-data Laplace approximation, weighted by the exact full-data posterior over the
    proposal (every row's log-likelihood at every draw). Returns the moment-matched
    posterior and the effective sample size of the weights."""
    family = make_family(model, link="log")
    y_enc = _encoded(model, y)
    prior = _prior(X.shape[1])
    post = full.posterior_
    z = np.random.default_rng(seed).standard_normal((n_draws, len(post.mean)))
    thetas = post.mean + z @ post.cov_cholesky.T
    loglik = np.concatenate([
        ExactPotentialSums(X, y_enc, np.ones(len(y)), family, True, len(block))(block, None)
        for block in np.array_split(thetas, max(1, n_draws // 500))])
    log_weights = loglik - 0.5 * (thetas**2) @ prior + 0.5 * np.sum(z**2, axis=1)
    weights = np.exp(log_weights - log_weights.max())
    weights /= weights.sum()
    mean = weights @ thetas
    centred = thetas - mean
    return GaussianPosterior(mean, (centred.T * weights) @ centred), 1.0 / (weights @ weights)


def _nuts_comparison(name, model, X, y, full, fitted, n, nuts_draws, coreset_draws):
    from _nuts import nuts_draws as run_nuts

    key = name.replace(" ", "").replace("%", "pc").replace(",", "_").replace("=", "")
    post = full.posterior_
    draws, seconds = run_nuts(X, y, model, start=post.mean, inverse_mass=post.cov,
                              n_draws=nuts_draws, key=f"{key}_{n}_all_{nuts_draws}")
    nuts = SamplePosterior(draws)
    half = len(draws) // 2
    floor = SamplePosterior(draws[:half]).kl(SamplePosterior(draws[half:]))
    start = time.perf_counter()
    exact, ess = importance_reference(X, y, model, full, coreset_draws)
    is_seconds = time.perf_counter() - start
    coreset = fitted["auto"]
    rows = coreset.sample_indices_
    start = time.perf_counter()
    core_draws, _ = run_nuts(X[rows], y[rows], model, sample_weight=coreset.sample_weight_,
                             start=post.mean, inverse_mass=post.cov, n_draws=coreset_draws,
                             seed=1)
    core_seconds = time.perf_counter() - start
    candidates = [("full-data Laplace", post),
                  (f"QNC M=\"auto\" ({len(rows)} rows) + NUTS ({coreset_draws} draws, "
                   f"{core_seconds:.0f} s)", SamplePosterior(core_draws))]
    print(f"\n{name}, N = {n:.0e}: references for the exact posterior -- NUTS on all rows "
          f"({nuts_draws} draws, {seconds:.0f} s; KL between its two halves {floor:.2f} nats, "
          f"its noise floor) and importance sampling from the Laplace fit ({coreset_draws} "
          f"draws weighted by the full-data posterior, ESS {ess:.0f}, {is_seconds:.0f} s; KL "
          f"to NUTS {exact.kl(nuts):.2f} nats, max|dmean| {mean_error_sd(exact, nuts):.3f} "
          "sd)")
    print("| posterior | KL to NUTS, nats | max\\|dmean\\| to NUTS, sd | KL to IS, nats "
          "| max\\|dmean\\| to IS, sd |")
    print("|---|---|---|---|---|")
    for label, candidate in candidates:
        print(f"| {label} | {candidate.kl(nuts):.3g} | {mean_error_sd(candidate, nuts):.3g} | "
              f"{candidate.kl(exact):.3g} | {mean_error_sd(candidate, exact):.3g} |",
              flush=True)


def run_shapes(args):
    print("| shape (N = %.0e) | full Laplace | previous QNC, M = 1000: s / KL / sd / "
          "estimate÷KL | QNC M = 1000 | QNC M = \"auto\" (target 0.1) |" % args.N[0])
    print("|---|---|---|---|---|")
    for name in args.shape_names:
        run_shape(name, int(args.N[0]), name in args.nuts_shapes, args.nuts_draws,
                  args.coreset_draws)


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
    parser.add_argument("--no-mcmc", action="store_true", help="no MCMC rows")
    parser.add_argument("--full-mcmc", choices=["extrapolate", "run"], default="extrapolate",
                        help="NUTS on all rows extrapolated from a few gradients, or run")
    parser.add_argument("--shapes", action="store_true", help="the data-shapes suite")
    parser.add_argument("--shape-names", nargs="+", default=list(SHAPES), choices=list(SHAPES),
                        metavar="SHAPE")
    parser.add_argument("--nuts-shapes", nargs="*", default=["rare 0.1 %, d = 30"],
                        choices=list(SHAPES), metavar="SHAPE",
                        help="shapes compared with NUTS on all rows (needs numpyro)")
    parser.add_argument("--nuts-draws", type=int, default=2000)
    parser.add_argument("--coreset-draws", type=int, default=20000)
    args = parser.parse_args()
    if args.shapes:
        if args.N == [1e5, 1e6]:
            args.N = [1e6]
        with threadpool_limits(limits=1):
            run_shapes(args)
        return
    if args.quick:
        args.N, args.d, args.M, args.models = [1e5], [10], [100, 1000], ["logistic"]
    with threadpool_limits(limits=1):
        for model in args.models:
            for n in args.N:
                for d in args.d:
                    run_setting(model, int(n), d, sorted(args.M), args.constructors,
                                args.budget, "none" if args.no_mcmc else args.full_mcmc)


if __name__ == "__main__":
    main()
