"""The exact calibration step of ``QuasiNewtonCoreset`` with and without the reuse of a
block's factorisation as rows leave it at zero.

Run by hand: ``python benchmarks/bench_calibration.py [--n 1e5] [--shapes rare clustered
heavy] [--repeats 3]``, one BLAS thread. For each shape of ``bench_exact_auto.py`` the
coreset is built as a Pipeline builds it before ``BayesianLogisticRegression(method="mcmc")``
(the exact sizing rule, which calibrates at every candidate size), alternately with the
solver as it is and with the baseline, the same solver factorising a block again whenever
its rows change (as it did before the reuse). Printed: the build time and its parts (the
exact step, ``SecondOrderFit.solve`` at every size; the passes over all rows, the
``ExactDistance`` proposals), means over the repeats, the rows and the rule's estimate (equal
in both: the weights agree to rounding).
"""

import argparse
import time
import warnings
from unittest import mock

import numpy as np
from threadpoolctl import threadpool_limits

from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset
from skcoreset.coreset import _calibration, _exact_distance

from bench_exact_auto import SHAPES


def _refactor_on_change(self, free):
    """The baseline's ``_BlockFactor.restrict``: serve only the rows it was made for."""
    if not np.array_equal(self.rows, free):
        return False
    self.kept = np.arange(len(free))
    return True


def _timed(spent, key, method):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            spent[key] = spent.get(key, 0.0) + time.perf_counter() - start
    return wrapper


def _build(X, y, baseline):
    """(build s, exact step s, passes s, rows, estimate)."""
    spent = {}
    patches = [
        mock.patch.object(_calibration.SecondOrderFit, "solve",
                          _timed(spent, "step", _calibration.SecondOrderFit.solve)),
        mock.patch.object(_exact_distance.ExactDistance, "_propose",
                          _timed(spent, "pass", _exact_distance.ExactDistance._propose))]
    if baseline:
        patches.append(mock.patch.object(_calibration._BlockFactor, "restrict",
                                         _refactor_on_change))
    clf = BayesianLogisticRegression(method="mcmc", random_state=0)
    coreset = QuasiNewtonCoreset(random_state=0)
    for patch in patches:
        patch.start()
    try:
        start = time.perf_counter()
        coreset.fit_coreset(X, y, estimator=clf)
        build = time.perf_counter() - start
    finally:
        for patch in patches:
            patch.stop()
    return (build, spent.get("step", 0.0), spent.get("pass", 0.0),
            len(coreset.sample_indices_), coreset.exact_kl_estimate_)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=float, default=1e5)
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n = int(args.n)
    print(f"N = {n:.0e}; means of {args.repeats} alternated runs; one BLAS thread\n")
    print("| shape | rows | estimate | build s: baseline / reuse | exact step s: baseline / "
          "reuse | passes over all rows s: baseline / reuse |")
    print("|---|---|---|---|---|---|")
    for name in args.shapes:
        make, label = SHAPES[name]
        X, y = make(n)
        runs = {True: [], False: []}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(args.repeats):
                for baseline in (True, False):
                    runs[baseline].append(_build(X, y, baseline))
        base, reuse = (np.mean([run[:3] for run in runs[key]], axis=0) for key in (True, False))
        rows, estimate = runs[False][0][3:]
        assert rows == runs[True][0][3]  # the same weights, so the same rows
        cells = [f"{b:.1f} / {r:.1f}" for b, r in zip(base, reuse)]
        print(f"| {label} | {rows:,} | {estimate:.4f} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
