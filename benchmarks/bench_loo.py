"""PSIS-LOO in blocks of rows (``est.loo()``) against ArviZ's ``az.loo`` of the same draws
(``est.to_arviz()``), and at sizes ArviZ's draw-by-row groups cannot hold.

Usage: ``python benchmarks/bench_loo.py [--rows 20000 100000 1000000] [--draws 250]``
(draws per chain, 4 chains). One BLAS thread; logistic rows with 3 features; the fit is not
timed. ArviZ runs only where ``to_arviz`` holds the log-likelihood (at most 5e7 values).
"""

import argparse
import os
import resource
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from skcoreset import BayesianLogisticRegression  # noqa: E402


def _rows(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, rng.random(n) < 1 / (1 + np.exp(-(X @ [1.0, -0.5, 0.3])))


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[20_000, 100_000, 1_000_000])
    parser.add_argument("--draws", type=int, default=250)
    args = parser.parse_args()
    print("| rows | draws | loo() s | az.loo(to_arviz()) s | ratio | max abs diff of elpd "
          "| peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    for n in args.rows:
        X, y = _rows(n)
        est = BayesianLogisticRegression().fit(X, y)
        start = time.perf_counter()
        ours = est.loo(n_draws=args.draws, random_state=0)
        seconds = time.perf_counter() - start
        theirs, diff, az_seconds = None, None, None
        if n * 4 * args.draws <= 50_000_000:
            import arviz as az

            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = az.loo(est.to_arviz(n_draws=args.draws, random_state=0), reff=1.0)
            az_seconds = time.perf_counter() - start
            diff = abs(float(theirs.elpd_loo) - ours.elpd_loo)
        print(f"| {n:,} | {4 * args.draws} | {seconds:.1f} | "
              f"{'-' if az_seconds is None else f'{az_seconds:.1f}'} | "
              f"{'-' if az_seconds is None else f'{az_seconds / seconds:.2f}'} | "
              f"{'-' if diff is None else f'{diff:.1e}'} | {_peak_mb():.0f} |")


if __name__ == "__main__":
    main()
