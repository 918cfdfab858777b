"""The exact correction's cost against the coreset route's, alternated in one run.

Run by hand: ``python benchmarks/bench_correction_cost.py [--n 1e6] [--repeats 3]
[--profile]``. Data: ``make_rare_events`` (d = 30, AR(0.6) features, 0.1 % positives,
seed 0), one BLAS thread. Each repeat fits the route ``QuasiNewtonCoreset()`` + NUTS
(``method="mcmc"``) once, then runs the correction on it as ``Pipeline(exact_correction=True)``
does (``correction_draws`` draws, float32 differences) and as it was before (every draw of
the run, float64); the best of the repeats of each is printed (the least disturbed by other
load on a shared machine) with the ratio to the route's. ``--profile`` prints a pyinstrument
profile of one default correction.
"""

import argparse
import os
import warnings

import arviz  # noqa: F401  (its import is not timed as the correction's)
import numpy as np
from threadpoolctl import threadpool_limits

from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset
from skcoreset.datasets import make_rare_events
from skcoreset.metrics._exact import correction_draws, exact_correction
from skcoreset.pipeline import Pipeline

from _common import timed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    n = int(args.n)
    X, y = make_rare_events(n, 30, positive_rate=0.001, correlation=0.6, random_state=0)
    print(f"make_rare_events(N={n:.0e}, d=30, 0.1 % positives); one thread; "
          f"load average at start {os.getloadavg()}")
    times = {"route": [], "default": [], "before": []}
    for repeat in range(args.repeats):
        pipe = Pipeline([("coreset", QuasiNewtonCoreset(random_state=repeat)),
                         ("clf", BayesianLogisticRegression(method="mcmc",
                                                            random_state=repeat))])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seconds, _ = timed(lambda: pipe.fit(X, y))
        times["route"].append(seconds)
        times["default"].append(timed(lambda: exact_correction(pipe, X, y,
                                                               random_state=0))[0])
        n_run = len(pipe[-1].posterior_samples_)
        times["before"].append(timed(lambda: exact_correction(
            pipe, X, y, n_draws=n_run, dtype=np.float64, random_state=0))[0])
        print(f"repeat {repeat}: route {times['route'][-1]:.1f} s, correction "
              f"({correction_draws(n, n_run)} draws, float32) {times['default'][-1]:.1f} s, "
              f"as before ({n_run} draws, float64) {times['before'][-1]:.1f} s", flush=True)
    best = {key: min(value) for key, value in times.items()}
    print(f"\nbest of {args.repeats}: route {best['route']:.1f} s; correction "
          f"{best['default']:.1f} s ({best['default'] / best['route']:.2f}x the route); "
          f"as before {best['before']:.1f} s ({best['before'] / best['route']:.2f}x); "
          f"load average at end {os.getloadavg()}")
    if args.profile:
        from pyinstrument import Profiler

        profiler = Profiler()
        profiler.start()
        exact_correction(pipe, X, y, random_state=0)
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False, show_all=False))


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
