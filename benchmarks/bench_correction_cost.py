"""The exact correction's cost against the coreset route's, alternated in one run.

Run by hand: ``python benchmarks/bench_correction_cost.py [--n 1e6] [--repeats 3]
[--profile]``. Data: ``make_rare_events`` (d = 30, AR(0.6) features, 0.1 % positives,
seed 0), one BLAS thread. Each repeat fits the route ``QuasiNewtonCoreset()`` + NUTS
(``method="mcmc"``) once, then runs the correction on it as ``Pipeline(exact_correction=True)``
does (``correction_draws`` draws, float32 differences) and, in the first repeat, as it was
before (every draw of the run, float64). Times are wall-clock and CPU seconds of this process
(one thread: its CPU time is what the work costs on a machine shared with other jobs); the
best of the repeats of each is printed with the ratio to the route's. ``--profile`` prints a
pyinstrument profile of one default correction.
"""

import argparse
import os
import time
import warnings

import arviz  # noqa: F401  (its import is not timed as the correction's)
import numpy as np
from threadpoolctl import threadpool_limits

from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset
from skcoreset.datasets import make_rare_events
from skcoreset.metrics._exact import correction_draws, exact_correction
from skcoreset.pipeline import Pipeline


def timed(fn):
    """``((wall seconds, CPU seconds), fn())``."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return (time.perf_counter() - wall, time.process_time() - cpu), out


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
                                                            random_state=repeat))],
                        exact_correction=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seconds, _ = timed(lambda: pipe.fit(X, y))
        times["route"].append(seconds)
        times["default"].append(timed(lambda: exact_correction(pipe, X, y,
                                                               random_state=0))[0])
        n_run = len(pipe[-1].posterior_samples_)
        if repeat == 0:
            times["before"].append(timed(lambda: exact_correction(
                pipe, X, y, n_draws=n_run, dtype=np.float64, random_state=0))[0])
        print(f"repeat {repeat}: wall / CPU seconds: route {_pair(times['route'][-1])}, "
              f"correction ({correction_draws(n, n_run)} of {n_run} draws, float32) "
              f"{_pair(times['default'][-1])}"
              + (f", as before ({n_run} draws, float64) {_pair(times['before'][-1])}"
                 if repeat == 0 else ""), flush=True)
    for label, index in (("wall", 0), ("CPU", 1)):
        best = {key: min(value[index] for value in values)
                for key, values in times.items()}
        print(f"best of {args.repeats}, {label}: route {best['route']:.1f} s; correction "
              f"{best['default']:.1f} s ({best['default'] / best['route']:.2f}x the route); "
              f"as before {best['before']:.1f} s ({best['before'] / best['route']:.2f}x)")
    print(f"load average at end {os.getloadavg()}")
    if args.profile:
        from pyinstrument import Profiler

        profiler = Profiler()
        profiler.start()
        exact_correction(pipe, X, y, random_state=0)
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False, show_all=False))


def _pair(seconds):
    return f"{seconds[0]:.1f} / {seconds[1]:.1f}"


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
