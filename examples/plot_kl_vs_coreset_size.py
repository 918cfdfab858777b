"""
Posterior KL divergence against coreset size
============================================

The quality measure of the coreset papers: fit the posterior on the weighted coreset and
measure its KL divergence to the full-data posterior,
:func:`~skcoreset.metrics.posterior_kl`, as the coreset grows. The data are the papers'
synthetic logistic regression (``theta = [3, 3, 0]``) with N = 2,000 rows. Each point is the
median over two random seeds, plotted against the number of distinct rows the coreset
actually kept (the greedy constructors may stop below their budget ``M``).

Uniform subsampling and sensitivity sampling are random importance samples: their weighted
log-likelihood is unbiased but noisy, so the KL falls slowly with the size (on this
well-conditioned 2-D problem sensitivity sampling's varying weights do not pay off at these
sizes; it is meant for data with rare, informative rows). The Hilbert coresets (Frank-Wolfe
and GIGA) choose and weight the rows to match the log-likelihood directly and need far fewer
of them for the same KL. Sparse variational inference optimises the KL divergence itself,
with weights fitted under the coreset posterior: the most accurate per row, at the highest
construction cost.
"""

import time
from functools import partial

import matplotlib.pyplot as plt
import numpy as np

from skcoreset import (BayesianLogisticRegression, FrankWolfeCoreset, GIGACoreset,
                       SensitivityCoreset, SparseVICoreset, UniformCoreset)
from skcoreset.datasets import make_logistic_regression
from skcoreset.metrics import posterior_kl

X, y = make_logistic_regression(2000, coef=[3.0, 3.0], random_state=0)
full = BayesianLogisticRegression().fit(X, y)

constructors = {
    "Uniform": UniformCoreset,
    "Sensitivity": SensitivityCoreset,
    "Frank-Wolfe": FrankWolfeCoreset,
    "GIGA": GIGACoreset,
    "Sparse VI": partial(SparseVICoreset, n_iter_opt=25, n_samples=50),
}
budgets = [10, 20, 50, 100]
seeds = [0, 1]

results = {}
for name, constructor in constructors.items():
    start = time.perf_counter()
    sizes, kls = [], []
    for M in budgets:
        size_m, kl_m = [], []
        for seed in seeds:
            X_core, y_core, w_core = constructor(M=M, random_state=seed).fit_coreset(X, y)
            fitted = BayesianLogisticRegression().fit(X_core, y_core, sample_weight=w_core)
            size_m.append(len(w_core))
            kl_m.append(posterior_kl(fitted, full))
        sizes.append(np.median(size_m))
        kls.append(np.median(kl_m))
    results[name] = (np.array(sizes), np.array(kls))
    print(f"{name:12s} {time.perf_counter() - start:5.1f} s   KL at M={budgets[-1]}: "
          f"{kls[-1]:.3g} with {sizes[-1]:.0f} rows")

# %%
# The figure: KL on a log scale against the coreset size (left) and the budget M (right).
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for name, (sizes, kls) in results.items():
    axes[0].plot(sizes, kls, marker="o", label=name)
    axes[1].plot(budgets, kls, marker="o", label=name)
for ax, xlabel in zip(axes, ["coreset size (distinct rows, median)", "budget M"]):
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.grid(True, which="major", alpha=0.3)
axes[0].set_ylabel("KL(coreset posterior || full posterior)")
axes[0].legend()
fig.suptitle(f"Logistic regression, N = {len(X)}: median over {len(seeds)} seeds")
fig.tight_layout()
plt.show()
