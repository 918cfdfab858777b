"""``QuasiNewtonCoreset(M="auto")`` before NUTS: sized by the Laplace-level rule or by the
distance between exact posteriors (``distance="exact"``, the default when the final step
samples).

Run by hand: ``python benchmarks/bench_exact_auto.py [--n 1e5] [--shapes rare clustered
heavy] [--draws 2000]``, one BLAS thread. Shapes (logistic, seed 0):

* rare: ``make_rare_events(d=30, positive_rate=0.001)`` (AR(0.6)-correlated features);
* clustered: ``make_clustered(d=50)`` (a fifth of the rows shifted by 3 sd and scaled by a
  half) with the intercept set for 3 % positives;
* heavy: d = 60, half binary features (rates 5-50 %), half Student t3 (standardised),
  coefficients of norm 2, the intercept set for 1 % positives.

For each: the baseline, the Laplace fit on all rows (``BayesianLogisticRegression()``), with
its KL to the exact posterior of all rows; then the coreset route, ``QuasiNewtonCoreset``
built for ``BayesianLogisticRegression(method="mcmc")`` (as a Pipeline builds it) and NUTS on
its rows, once with ``distance="laplace"`` (the old rule) and once with the default (the
exact rule): the coreset's build time, rows, NUTS time, and the KL of the NUTS draws to the
exact posterior with its k-hat, measured by :func:`skcoreset.metrics.exact_kl` (``--draws``
of the NUTS draws weighted over all rows: the independent reference of the rule's own
estimate, ``exact_kl_estimate_``, which the last columns print with ``laplace_exact_kl_``,
the rule's reading of the Laplace baseline).
"""

import argparse
import warnings

import arviz  # noqa: F401  (its import is not timed as exact_kl's)
import numpy as np
from scipy.optimize import brentq
from scipy.special import expit
from threadpoolctl import threadpool_limits

from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset
from skcoreset.datasets import make_clustered, make_rare_events
from skcoreset.metrics import exact_kl

from _common import timed


def _labels(eta, rate, rng):
    """Bernoulli labels of ``sigmoid(eta + b)``, ``b`` set for a mean rate of ``rate``."""
    shift = brentq(lambda b: expit(eta + b).mean() - rate, -40.0, 40.0)
    return (rng.random(len(eta)) < expit(eta + shift)).astype(np.int64)


def rare(n):
    return make_rare_events(n, 30, positive_rate=0.001, correlation=0.6, random_state=0)


def clustered(n):
    X, _, coef = make_clustered(n, 50, return_coef=True, random_state=0)
    return X, _labels(X @ coef, 0.03, np.random.default_rng(1))


def heavy(n):
    rng = np.random.default_rng(0)
    half = 30
    binary = (rng.random((n, half)) < rng.uniform(0.05, 0.5, half)).astype(float)
    X = np.hstack([binary, rng.standard_t(3, size=(n, half)) / np.sqrt(3.0)])
    coef = rng.standard_normal(2 * half)
    coef *= 2.0 / np.linalg.norm(coef)
    return X, _labels(X @ coef, 0.01, rng)


SHAPES = {"rare": (rare, "rare 0.1 %, d = 30"),
          "clustered": (clustered, "clustered, 3 %, d = 50"),
          "heavy": (heavy, "binary + t3, 1 %, d = 60")}


def _route(X, y, distance, draws):
    """(coreset, build s, NUTS s, ExactKL of the NUTS draws)."""
    clf = BayesianLogisticRegression(method="mcmc", random_state=0)
    coreset = QuasiNewtonCoreset(distance=distance, random_state=0)
    build, (Xc, yc, wc) = timed(lambda: coreset.fit_coreset(X, y, estimator=clf))
    nuts, _ = timed(lambda: clf.fit(Xc, yc, sample_weight=wc))
    return coreset, build, nuts, exact_kl(clf, X, y, n_draws=draws, fit_rows=(Xc, yc, wc))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=float, default=1e5)
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--draws", type=int, default=2000)
    args = parser.parse_args()
    n = int(args.n)
    print(f"N = {n:.0e}; exact_kl of every fit with {args.draws} draws; one BLAS thread\n")
    print("| shape | Laplace all rows: s / KL (k-hat) | old rule: build s / rows / NUTS s / "
          "KL (k-hat) | exact rule: build s / rows / NUTS s / KL (k-hat) | exact rule's "
          "estimate (k-hat) / its Laplace reading | sizes measured (M: estimate) |")
    print("|---|---|---|---|---|---|")
    for name in args.shapes:
        make, label = SHAPES[name]
        X, y = make(n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit_time, laplace = timed(lambda: BayesianLogisticRegression().fit(X, y))
            base = exact_kl(laplace, X, y, n_draws=args.draws, random_state=1)
            routes = [_route(X, y, distance, args.draws) for distance in ("laplace", "auto")]
        cells = [f"{fit_time:.2f} / {base.kl:.3f} ({base.pareto_k:.2f})"]
        for coreset, build, nuts, result in routes:
            cells.append(f"{build:.1f} / {len(coreset.sample_indices_)} / {nuts:.1f} / "
                         f"{result.kl:.4f} ({result.pareto_k:.2f})")
        coreset = routes[1][0]
        assert coreset.distance_ == "exact"
        cells.append(f"{coreset.exact_kl_estimate_:.4f} ({coreset.exact_pareto_k_:.2f}) / "
                     f"{coreset.laplace_exact_kl_:.3f}")
        cells.append(", ".join(f"{int(m)}: {kl:.3g}" for m, kl, _ in coreset.exact_kl_path_))
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
