"""Fit time of the Laplace fit against scikit-learn's MAP solvers on the same data.

Run by hand: ``python benchmarks/bench_laplace.py [--quick] [--n N ...] [--d D ...]``
(``--n 1e6 --d 100``: that size only). For each (N, d) it times
``BayesianLogisticRegression`` (MAP + posterior covariance) against
``LogisticRegression(solver="lbfgs")`` and ``BayesianPoissonRegression(link="log")`` against
``PoissonRegressor`` with the matching penalty, all in the same run, and prints the ratio and,
for each scikit-learn fit, its largest error to our mode in our posterior sd. scikit-learn runs
with its default tolerance (1e-4: at N = 1e6 L-BFGS stops about 0.1 sd from the mode), with
``tol=1e-6`` (about 3e-4 sd: the answer of equal quality) and with ``tol=1e-8``, closest to
the accuracy of our fit (Newton to a decrement of 1e-10). Target: ratio <= 1.5.
"""

import argparse
import time

import numpy as np
from scipy.special import expit
from sklearn.linear_model import LogisticRegression, PoissonRegressor

from skcoreset import BayesianLogisticRegression, BayesianPoissonRegression

TOLERANCES = (1e-4, 1e-6, 1e-8)


def _time(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def _data(n, d, model, rng):
    X = rng.standard_normal((n, d))
    theta = rng.standard_normal(d) / np.sqrt(d)
    eta = X @ theta
    if model == "logistic":
        return X, (rng.random(n) < expit(eta)).astype(int)
    return X, rng.poisson(np.exp(0.5 * eta + 0.5))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 1e5 only")
    parser.add_argument("--n", type=float, nargs="+", help="only these N (e.g. 1e6)")
    parser.add_argument("--d", type=int, nargs="+", default=[10, 100], help="only these d")
    args = parser.parse_args()
    sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    if args.n:
        sizes = [int(n) for n in args.n]
    rng = np.random.default_rng(0)
    s = 1.0
    print("scikit-learn columns: time [s] / our time over it / its largest error to our mode "
          "in our posterior sd")
    print(f"{'model':9s} {'N':>9s} {'d':>4s} {'ours [s]':>9s} "
          + " ".join(f"{'sklearn tol=' + tol:>27s}" for tol in ("1e-4", "1e-6", "1e-8")))
    for model in ("logistic", "poisson"):
        for n in sizes:
            for d in args.d:
                X, y = _data(n, d, model, rng)
                repeats = 5 if n * d <= 1e7 else 3
                if model == "logistic":
                    ours = BayesianLogisticRegression(prior_scale=s)
                    refs = [LogisticRegression(C=s**2, solver="lbfgs", max_iter=1000, tol=tol)
                            for tol in TOLERANCES]
                else:
                    ours = BayesianPoissonRegression(prior_scale=s)
                    refs = [PoissonRegressor(alpha=1 / (n * s**2), max_iter=1000, tol=tol)
                            for tol in TOLERANCES]
                t_ours, fitted = _time(lambda: ours.fit(X, y), repeats)
                mode = np.r_[np.ravel(fitted.coef_), np.ravel(fitted.intercept_)]
                sd = np.sqrt(np.diag(fitted.posterior_.cov))
                cells = []
                for ref in refs:
                    t_ref, _ = _time(lambda ref=ref: ref.fit(X, y), repeats)
                    theta = np.r_[np.ravel(ref.coef_), np.ravel(ref.intercept_)]
                    error = np.max(np.abs(theta - mode) / sd)
                    cells.append(f"{t_ref:8.3f} {t_ours / t_ref:6.2f}x {error:9.1e} sd")
                print(f"{model:9s} {n:9d} {d:4d} {t_ours:9.3f} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
