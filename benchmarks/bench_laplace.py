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

``--floor`` (logistic, ``--n``/``--d`` default 1e6 / 100): the hardware cost of each piece of
our fit's path, in numpy alone, beside the fit itself and scikit-learn's default in the same
run: one read of X for the value and gradient (``X_b @ v`` and ``r_b @ X_b`` per block of 4096
rows, as our passes do), the weighted Gram ``X^T diag(c) X`` in float32 (the Hessian steering a
step) and in float64 (the returned precision), and the contiguous copy of every 8th row (the
thinned start's data). The Newton trace of our fit (``verbose=1``) says which passes it made.
"""

import argparse

import numpy as np
from scipy.special import expit
from sklearn.linear_model import LogisticRegression, PoissonRegressor

from skcoreset import BayesianLogisticRegression, BayesianPoissonRegression

from _common import best_of

TOLERANCES = (1e-4, 1e-6, 1e-8)


def _data(n, d, model, rng):
    X = rng.standard_normal((n, d))
    theta = rng.standard_normal(d) / np.sqrt(d)
    eta = X @ theta
    if model == "logistic":
        return X, (rng.random(n) < expit(eta)).astype(int)
    return X, rng.poisson(np.exp(0.5 * eta + 0.5))


_FLOOR_BLOCK = 4096


def _blocked(X, per_block):
    for start in range(0, len(X), _FLOOR_BLOCK):
        per_block(slice(start, start + _FLOOR_BLOCK))


def _floor(n, d, repeats):
    """Times of the pieces of a Laplace fit's path at (n, d), against the fit and scikit-learn."""
    X, y = _data(n, d, "logistic", np.random.default_rng(0))
    v, r, c = np.full(d, 0.1), np.linspace(-1.0, 1.0, n), np.linspace(0.01, 0.25, n)
    buffers = {dtype: np.empty((_FLOOR_BLOCK, d), dtype) for dtype in (np.float32, np.float64)}

    def read():
        eta, grad = np.empty(n), np.zeros(d)

        def block(rows):
            np.dot(X[rows], v, out=eta[rows])
            grad[:] += r[rows] @ X[rows]
        _blocked(X, block)

    def gram(dtype):
        out, buffer = np.zeros((d, d)), buffers[dtype]

        def block(rows):
            scaled = buffer[:len(X[rows])]
            np.multiply(X[rows], np.sqrt(c[rows])[:, None], out=scaled, casting="same_kind")
            out[:] += scaled.T @ scaled
        _blocked(X, block)

    pieces = [("one read of X (value and gradient)", read),
              ("float32 weighted Gram", lambda: gram(np.float32)),
              ("float64 weighted Gram", lambda: gram(np.float64)),
              ("copy of every 8th row", lambda: np.ascontiguousarray(X[::8]))]
    t_sk, _ = best_of(lambda: LogisticRegression(max_iter=1000).fit(X, y), repeats)
    t_ours, _ = best_of(lambda: BayesianLogisticRegression().fit(X, y), repeats)
    print(f"N = {n}, d = {d}, best of {repeats}")
    print(f"  {'scikit-learn LogisticRegression (default tol=1e-4)':52s} {t_sk:7.3f} s")
    print(f"  {'ours, BayesianLogisticRegression':52s} {t_ours:7.3f} s  {t_ours / t_sk:.2f}x")
    for name, fn in pieces:
        t, _ = best_of(fn, repeats)
        print(f"  {name:52s} {t:7.3f} s  {t / t_sk:.2f}x scikit-learn")
    print("  our Newton trace:")
    BayesianLogisticRegression(verbose=1).fit(X, y)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 1e5 only")
    parser.add_argument("--n", type=float, nargs="+", help="only these N (e.g. 1e6)")
    parser.add_argument("--d", type=int, nargs="+",
                        help="only these d (default 10 and 100; 100 with --floor)")
    parser.add_argument("--floor", action="store_true",
                        help="the cost of each piece of the logistic fit's path (see above)")
    args = parser.parse_args()
    if args.floor:
        for n in args.n or [1e6]:
            for d in args.d or [100]:
                _floor(int(n), d, repeats=3)
        return
    dims = args.d or [10, 100]
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
            for d in dims:
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
                t_ours, fitted = best_of(lambda: ours.fit(X, y), repeats)
                mode = np.r_[np.ravel(fitted.coef_), np.ravel(fitted.intercept_)]
                sd = np.sqrt(np.diag(fitted.posterior_.cov))
                cells = []
                for ref in refs:
                    t_ref, _ = best_of(lambda ref=ref: ref.fit(X, y), repeats)
                    theta = np.r_[np.ravel(ref.coef_), np.ravel(ref.intercept_)]
                    error = np.max(np.abs(theta - mode) / sd)
                    cells.append(f"{t_ref:8.3f} {t_ours / t_ref:6.2f}x {error:9.1e} sd")
                print(f"{model:9s} {n:9d} {d:4d} {t_ours:9.3f} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
