"""Construction time of every coreset constructor, and the cost of a GIGA iteration.

Run by hand: ``python benchmarks/bench_coresets.py [--quick]``.

Synthetic logistic data (x ~ N(0, I), d = 10) at N = 1e4, 1e5 and 1e6 (``--quick``: up to 1e5).
Part 1 times ``fit`` of Uniform, Sensitivity, GIGA and Frank-Wolfe (J = 500 projections,
full-data Laplace weighting) for M = 100 and 1000 and reports the coreset size and, for the
Hilbert coresets, the relative error in the projected space. Part 2 times one GIGA iteration on
the N x J projected vectors next to one product of that matrix with a J x 2 matrix (the least an
iteration must read), measured in the same run. Target: a GIGA iteration within 3x of the
product, and N = 1e6 fitting in memory.
"""

import argparse
import resource
import time

import numpy as np

from skcoreset import FrankWolfeCoreset, GIGACoreset, SensitivityCoreset, UniformCoreset
from skcoreset.families import LogisticFamily
from skcoreset.coreset._hilbert import project_loglik
from skcoreset.datasets import make_logistic_regression
from skcoreset.solvers import giga

CONSTRUCTORS = {
    "uniform": lambda M: UniformCoreset(M, random_state=0),
    "sensitivity": lambda M: SensitivityCoreset(M, random_state=0),
    "giga": lambda M: GIGACoreset(M, projection_dim=500, random_state=0),
    "frank-wolfe": lambda M: FrankWolfeCoreset(M, projection_dim=500, random_state=0),
}


def _peak_rss_gb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def part1(sizes, budgets):
    print("Part 1: construction time (s) on logistic data, d = 10, J = 500")
    print(f"{'N':>9} {'M':>5} {'constructor':>12} {'time [s]':>9} {'size':>5} {'error':>9}")
    for n in sizes:
        X, y = make_logistic_regression(n, n_features=10, random_state=0)
        for M in budgets:
            for name, make in CONSTRUCTORS.items():
                start = time.perf_counter()
                coreset = make(M).fit(X, y)
                elapsed = time.perf_counter() - start
                error = getattr(coreset, "error_", float("nan"))
                print(f"{n:9d} {M:5d} {name:>12} {elapsed:9.2f} "
                      f"{len(coreset.sample_indices_):5d} {error:9.2e}", flush=True)
    print(f"peak RSS so far: {_peak_rss_gb():.1f} GB")


def part2(sizes, n_proj=500, n_iter=50):
    print(f"\nPart 2: one GIGA iteration vs one (N x {n_proj}) @ ({n_proj} x 2) product")
    print(f"{'N':>9} {'product [ms]':>12} {'GIGA iter [ms]':>14} {'ratio':>6}")
    rng = np.random.default_rng(0)
    for n in sizes:
        X, y = make_logistic_regression(n, n_features=10, random_state=0)
        thetas = rng.standard_normal((n_proj, 11)) * 0.1
        vectors = project_loglik(X, np.where(y == 1, 1.0, -1.0), np.ones(n), LogisticFamily(),
                                 thetas, True)
        two = rng.standard_normal((n_proj, 2))
        product = min(_timed(lambda: vectors @ two) for _ in range(3))
        one = _timed(lambda: giga(vectors, n_iter=1))
        many = _timed(lambda: giga(vectors, n_iter=n_iter))
        per_iter = (many - one) / (n_iter - 1)
        print(f"{n:9d} {1e3 * product:12.1f} {1e3 * per_iter:14.1f} {per_iter / product:6.2f}",
              flush=True)


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 1e5 only")
    args = parser.parse_args()
    sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    part1(sizes, [100, 1000])
    part2(sizes)
    print(f"\npeak RSS: {_peak_rss_gb():.1f} GB")


if __name__ == "__main__":
    main()
