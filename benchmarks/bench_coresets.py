"""Construction time of every coreset constructor, and the cost of a GIGA iteration.

Run by hand: ``python benchmarks/bench_coresets.py [--quick] [--large]``.

Synthetic logistic data (x ~ N(0, I), d = 10) at N = 1e4, 1e5 and 1e6 (``--quick``: up to 1e5).
Part 1 times ``fit`` of Uniform, Sensitivity, GIGA and Frank-Wolfe (default
``projection_dim="auto"``, full-data Laplace weighting) for M = 100 and 1000 and reports the
coreset size, J and, for the Hilbert coresets, the relative error in the projected space.
Part 2 times one GIGA iteration on N x 500 projected vectors next to one product of that
matrix with a J x 2 matrix (the least an iteration must read), measured in the same run.
Target: a GIGA iteration within 3x of the product, and N = 1e6 fitting in memory.

``--large`` instead fits ``GIGACoreset`` (defaults) at N = 1e6, M = 100 and 1000, each in a
fresh process, and prints its time, peak RSS (``getrusage``: the data, the projection and
every temporary), coreset size, J and KL to the full-data Laplace posterior in nats
(``skcoreset.metrics.coreset_quality``). Target: M = 100 in <= 15 s and <= 1 GB.
"""

import argparse
import resource
import subprocess
import sys
import time

import numpy as np

from skcoreset import FrankWolfeCoreset, GIGACoreset, SensitivityCoreset, UniformCoreset
from skcoreset.families import LogisticFamily
from skcoreset.coreset._hilbert import project_loglik
from skcoreset.datasets import make_logistic_regression
from skcoreset.metrics import coreset_quality
from skcoreset.solvers import giga

from _common import timed

CONSTRUCTORS = {
    "uniform": lambda M: UniformCoreset(M, random_state=0),
    "sensitivity": lambda M: SensitivityCoreset(M, random_state=0),
    "giga": lambda M: GIGACoreset(M, random_state=0),
    "frank-wolfe": lambda M: FrankWolfeCoreset(M, random_state=0),
}


def _peak_rss_gb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def part1(sizes, budgets):
    print('Part 1: construction time (s) on logistic data, d = 10, projection_dim="auto"')
    print(f"{'N':>9} {'M':>5} {'constructor':>12} {'time [s]':>9} {'size':>5} {'error':>9} "
          f"{'J':>5}")
    for n in sizes:
        X, y = make_logistic_regression(n, n_features=10, random_state=0)
        for M in budgets:
            for name, make in CONSTRUCTORS.items():
                start = time.perf_counter()
                coreset = make(M).fit(X, y)
                elapsed = time.perf_counter() - start
                error = getattr(coreset, "error_", float("nan"))
                print(f"{n:9d} {M:5d} {name:>12} {elapsed:9.2f} "
                      f"{len(coreset.sample_indices_):5d} {error:9.2e} "
                      f"{getattr(coreset, 'projection_dim_', ''):>5}", flush=True)
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
        product = min(timed(lambda: vectors @ two)[0] for _ in range(3))
        one = timed(lambda: giga(vectors, n_iter=1))[0]
        many = timed(lambda: giga(vectors, n_iter=n_iter))[0]
        per_iter = (many - one) / (n_iter - 1)
        print(f"{n:9d} {1e3 * product:12.1f} {1e3 * per_iter:14.1f} {per_iter / product:6.2f}",
              flush=True)


def one_large(n, M):
    """One GIGACoreset fit with the defaults (run in a fresh process by ``large``)."""
    X, y = make_logistic_regression(n, n_features=10, random_state=0)
    start, cpu = time.perf_counter(), time.process_time()
    coreset = GIGACoreset(M, random_state=0).fit(X, y)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    rss = _peak_rss_gb()  # before the quality measurement's own fits
    quality = coreset_quality(coreset, X, y)
    print(f"{n:9.0e} {M:5d} {elapsed:9.1f} {cpu:8.1f} {rss:9.2f} {quality.size:5d} "
          f"{coreset.projection_dim_:5d} {quality.kl:10.4g} {quality.max_mean_error_sd:8.3g}",
          flush=True)


def large(n=1_000_000, budgets=(100, 1000)):
    print(f"GIGACoreset defaults, logistic d = 10, N = {n:.0e}, one fresh process per fit")
    # CPU time beside wall time: on a shared machine the wall time includes waiting for a core
    print(f"{'N':>9} {'M':>5} {'time [s]':>9} {'CPU [s]':>8} {'RSS [GiB]':>9} {'size':>5} "
          f"{'J':>5} {'KL [nats]':>10} {'max sd':>8}", flush=True)
    for M in budgets:
        subprocess.run([sys.executable, __file__, "--one", str(n), str(M)], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 1e5 only")
    parser.add_argument("--large", action="store_true",
                        help="only GIGACoreset at N = 1e6, M = 100 and 1000 (fresh processes)")
    parser.add_argument("--one", nargs=2, type=int, metavar=("N", "M"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one_large(*args.one)
        return
    if args.large:
        large()
        return
    sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    part1(sizes, [100, 1000])
    part2(sizes)
    print(f"\npeak RSS: {_peak_rss_gb():.1f} GB")


if __name__ == "__main__":
    main()
