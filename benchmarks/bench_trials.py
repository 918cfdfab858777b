"""Binomial counts with trials: the cells' fit against the fit of their expanded 0/1 rows.

Run by hand: ``python benchmarks/bench_trials.py [--full]``.

A table of 1e4 cells (x ~ N(0, I), d = 5, logit link) whose trials add up to 1e7 (1,000 per
cell), fitted by Laplace as ``BayesianLogisticRegression().fit(X, k, n_trials=n)``; the
baselines, measured in the same run: a plain fit of 1e4 0/1 rows (the target: the cells fit
in the time of their number of rows), and the fit of the cells expanded into one 0/1 row per
trial. Expanding 1e7 trials needs 1e7 x 5 float64 (400 MB for X alone) and a long fit, so by
default the expansion is fitted at 100 trials per cell (1e6 rows) and the 1e7-row time is
extrapolated linearly (Laplace's Newton iterations are passes over the rows); ``--full``
fits the 1e7 rows too. Also: the largest difference of the posterior means (in posterior
sd) between the cells' fit and the expanded rows' fit at the same trials.

Then the cells through a coreset: ``Pipeline([QuasiNewtonCoreset(M), BayesianLogistic
Regression()])`` fitted with ``coreset__n_trials=n`` (the coreset chosen among the cells'
rows of successes and failures), against the Laplace fit of all cells: the KL divergence
between the two Laplace posteriors (coreset's fit to all cells', in nats; the target is
0.05) and the largest difference of the posterior means in the all-cells fit's sd.
"""

import argparse

import numpy as np
from scipy.special import expit

from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset
from skcoreset.pipeline import Pipeline

from _common import best_of

N_CELLS, D = 10_000, 5


def cells(trials_per_cell, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_CELLS, D))
    n = np.full(N_CELLS, trials_per_cell)
    k = rng.binomial(n, expit(X @ rng.normal(scale=0.5, size=D) - 0.5))
    return X, k, n


def expanded(X, k, n):
    rows = np.repeat(np.arange(len(n)), n)
    # within a cell the first k trials succeed: order does not change the likelihood
    position = np.arange(len(rows)) - np.repeat(np.cumsum(n) - n, n)
    return X[rows], (position < np.repeat(k, n)).astype(float)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true", help="also fit the 1e7 expanded rows")
    args = parser.parse_args()
    print(f"{N_CELLS} cells, d = {D}, Laplace, logit link\n")
    print("| fit | trials | rows | X memory (MB) | time (s) | max mean diff (sd) |")
    print("|---|---|---|---|---|---|")

    def row(name, trials, n_rows, seconds, diff="", measured=True):
        mark = "" if measured else " (extrapolated)"
        print(f"| {name} | {trials:.0e} | {n_rows:.0e} | {n_rows * D * 8 / 1e6:.3g} | "
              f"{seconds:.3g}{mark} | {diff} |")

    X, k, n = cells(1000)
    seconds, est = best_of(lambda: BayesianLogisticRegression().fit(X, k, n_trials=n), 3)
    row("cells, `n_trials=n`", n.sum(), N_CELLS, seconds)
    y01 = (k > 500).astype(float)
    seconds, _ = best_of(lambda: BayesianLogisticRegression().fit(X, y01), 3)
    row("1e4 0/1 rows (baseline)", N_CELLS, N_CELLS, seconds)

    Xs, ks, ns = cells(100)
    seconds, small = best_of(lambda: BayesianLogisticRegression().fit(Xs, ks, n_trials=ns), 3)
    row("cells, `n_trials=n`", ns.sum(), N_CELLS, seconds)
    Xe, ye = expanded(Xs, ks, ns)
    seconds, full = best_of(lambda: BayesianLogisticRegression().fit(Xe, ye), 1)
    sd = np.sqrt(np.diag(full.posterior_.cov))
    diff = np.max(np.abs(small.posterior_.mean - full.posterior_.mean) / sd)
    row("expanded 0/1 rows", ns.sum(), len(ye), seconds, f"{diff:.1e}")
    del Xe, ye
    if args.full:
        Xe, ye = expanded(X, k, n)
        seconds, full = best_of(lambda: BayesianLogisticRegression().fit(Xe, ye), 1)
        sd = np.sqrt(np.diag(full.posterior_.cov))
        diff = np.max(np.abs(est.posterior_.mean - full.posterior_.mean) / sd)
        row("expanded 0/1 rows", n.sum(), len(ye), seconds, f"{diff:.1e}")
    else:
        row("expanded 0/1 rows", n.sum(), n.sum(), seconds * n.sum() / ns.sum(),
            measured=False)

    print("\n| coreset of the cells | rows | time (s) | KL to all cells' fit (nats) | "
          "max mean diff (sd) |")
    print("|---|---|---|---|---|")
    sd = est.posterior_.std
    for M in (100, 300, "auto"):
        def fit():
            return Pipeline([("coreset", QuasiNewtonCoreset(M=M, random_state=0)),
                             ("clf", BayesianLogisticRegression())]).fit(
                                 X, k, coreset__n_trials=n)
        seconds, pipe = best_of(fit, 3)
        kl = pipe[-1].posterior_.kl(est.posterior_)
        diff = np.max(np.abs(pipe[-1].posterior_.mean - est.posterior_.mean) / sd)
        print(f"| QuasiNewtonCoreset(M={M!r}) | {len(pipe[0].sample_indices_)} | "
              f"{seconds:.3g} | {kl:.2e} | {diff:.2e} |")


if __name__ == "__main__":
    main()
