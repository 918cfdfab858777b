"""
Sensitivity sampling on data with rare features
===============================================

:class:`~skcoreset.SensitivityCoreset` (Huggins, Campbell & Broderick, 2016) samples
rows with probability proportional to an upper bound on their sensitivity -- the largest
share of the log-likelihood a row can carry -- and reweights them so that the coreset's
log-likelihood stays unbiased. It pays off when a few rows matter a lot. The paper's
BINARY10 data (:func:`~skcoreset.datasets.make_binary`) has binary features that are
present in as few as 0.1 % of the rows but carry large coefficients; uniform subsampling
rarely draws those rows, and up to a few thousand rows its posterior is much further
from the full-data one. On the MIXTURE data (:func:`~skcoreset.datasets.make_mixture`,
two Gaussian classes) no row is special, and the two constructors are close.

The quality measures are the paper's: the maximum mean discrepancy with a polynomial
kernel between posterior samples given the coreset and given all the data
(:func:`~skcoreset.metrics.polynomial_mmd`), and the largest relative error of the
coreset's weighted log-likelihood over draws from the full-data posterior
(:func:`~skcoreset.metrics.loglik_relative_error`). Lower is better; each point is the
median over three seeds, with N = 50,000 rows.
"""

import matplotlib.pyplot as plt
import numpy as np

from skcoreset import BayesianLogisticRegression, SensitivityCoreset, UniformCoreset
from skcoreset.datasets import make_binary, make_mixture
from skcoreset.metrics import loglik_relative_error, polynomial_mmd

datasets = {
    # BINARY10's first column is the constant 1: the model has no separate intercept
    "BINARY10": (make_binary(50_000, n_features=10, random_state=0), False),
    "MIXTURE": (make_mixture(50_000, random_state=0), True),
}
budgets = [100, 300, 1000, 3000]
seeds = [0, 1, 2]

fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
for col, (data_name, ((X, y), fit_intercept)) in enumerate(datasets.items()):
    full = BayesianLogisticRegression(fit_intercept=fit_intercept).fit(X, y)
    full_draws = full.posterior_.sample(1000, random_state=0)
    for constructor in (UniformCoreset, SensitivityCoreset):
        mmd, loglik_error = [], []
        for M in budgets:
            mmd_m, error_m = [], []
            for seed in seeds:
                coreset = constructor(M=M, fit_intercept=fit_intercept,
                                      random_state=seed)
                X_core, y_core, w_core = coreset.fit_coreset(X, y)
                fitted = BayesianLogisticRegression(fit_intercept=fit_intercept).fit(
                    X_core, y_core, sample_weight=w_core)
                draws = fitted.posterior_.sample(1000, random_state=1)
                mmd_m.append(polynomial_mmd(full_draws, draws))
                error_m.append(np.max(loglik_relative_error(
                    X, y, coreset.sample_indices_, coreset.sample_weight_,
                    full_draws[:50], fit_intercept=fit_intercept)))
            mmd.append(np.median(mmd_m))
            loglik_error.append(np.median(error_m))
        name = constructor.__name__
        axes[0, col].plot(budgets, mmd, marker="o", label=name)
        axes[1, col].plot(budgets, loglik_error, marker="o", label=name)
        print(f"{data_name:9s} {name:19s} M = {budgets[-1]}: MMD^2 {mmd[-1]:.3g}, "
              f"max relative log-likelihood error {loglik_error[-1]:.3g}")
    axes[0, col].set_title(data_name)
    axes[1, col].set_xlabel("coreset budget M")
for ax in axes.ravel():
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
axes[0, 0].set_ylabel("polynomial MMD$^2$ to full posterior")
axes[1, 0].set_ylabel("max relative log-likelihood error")
axes[0, 0].legend()
fig.tight_layout()
plt.show()
