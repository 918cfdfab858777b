"""
Posterior KL divergence against coreset size
============================================

The quality measure of the coreset papers: fit the posterior on the weighted coreset and
measure its KL divergence to the full-data posterior as the coreset grows.
:func:`~skcoreset.metrics.coreset_quality` does both with Laplace approximations, under
the constructor's own likelihood and prior, and reports two numbers that read without a
reference:

* ``kl``, KL(coreset posterior || full posterior) in **nats**: below about 0.1 the two
  are hard to tell apart, tens of nats mean a visibly different posterior;
* ``max_mean_error_sd``, the largest difference between the posterior means in
  **standard deviations of the full posterior**: above 1, the coreset posterior is
  centred where the full one has little mass.

The papers plot the KL divided by KL(prior || full posterior). That denominator grows in
proportion to the number of rows N (here about 9,000 nats), so the ratio makes every
coreset look better the more data there is; it is printed here only next to the nats.
Uniform subsampling with 100 rows, for instance, has a ratio of about 1e-3 and yet a
posterior mean several standard deviations away from the full one.

The data are the papers' synthetic logistic regression (``theta = [3, 3, 0]``) with
N = 2,000 rows. Each point is the median over two random seeds, plotted against the
number of distinct rows the coreset actually kept (the greedy constructors may stop
below their budget ``M``).

Uniform subsampling and sensitivity sampling are random importance samples: their
weighted log-likelihood is unbiased but noisy, so the KL falls slowly with the size (on
this well-conditioned 2-D problem sensitivity sampling's varying weights do not pay off
at these sizes; it is meant for data with rare, informative rows). The Hilbert coresets
(Frank-Wolfe and GIGA) choose and weight the rows to match the log-likelihood directly
and need far fewer of them for the same KL. Sparse variational inference optimises the
KL divergence itself, with weights fitted under the coreset posterior: the most accurate
per row, at the highest construction cost.
"""

import time
from functools import partial

import matplotlib.pyplot as plt
import numpy as np

from skcoreset import (FrankWolfeCoreset, GIGACoreset, SensitivityCoreset,
                       SparseVICoreset, UniformCoreset)
from skcoreset.datasets import make_logistic_regression
from skcoreset.metrics import coreset_quality

X, y = make_logistic_regression(2000, coef=[3.0, 3.0], random_state=0)
# the full-data posterior: fitted by the first coreset_quality call, then reused
full = None

constructors = {
    "Uniform": UniformCoreset,
    "Sensitivity": SensitivityCoreset,
    "Frank-Wolfe": FrankWolfeCoreset,
    "GIGA": GIGACoreset,
    "Sparse VI": partial(SparseVICoreset, n_iter_opt=25, n_draws=50),
}
budgets = [10, 20, 50, 100]
seeds = [0, 1]

results = {}
for name, constructor in constructors.items():
    start = time.perf_counter()
    per_budget = []
    for M in budgets:
        per_seed = []
        for seed in seeds:
            coreset = constructor(M=M, random_state=seed).fit(X, y)
            quality = coreset_quality(coreset, X, y, full_posterior=full)
            full = quality.full_posterior
            per_seed.append((quality.size, quality.kl, quality.max_mean_error_sd,
                             quality.relative_kl))
        per_budget.append(np.median(per_seed, axis=0))
    results[name] = np.array(per_budget).T  # rows: size, kl, mean error sd, ratio
    size, kl, sd, ratio = results[name][:, -1]
    print(f"{name:12s} {time.perf_counter() - start:5.1f} s   at M={budgets[-1]}: "
          f"{size:.0f} rows, KL {kl:.3g} nats, mean error {sd:.2f} sd "
          f"(ratio to the prior's KL {ratio:.2g})")

# %%
# The figure: KL in nats (left) and the largest mean error in posterior standard
# deviations (right) against the coreset size, on log scales.
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for name, (sizes, kls, sds, _) in results.items():
    axes[0].plot(sizes, kls, marker="o", label=name)
    axes[1].plot(sizes, sds, marker="o", label=name)
for ax in axes:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("coreset size (distinct rows, median)")
    ax.grid(True, which="major", alpha=0.3)
axes[0].set_ylabel("KL(coreset posterior || full posterior) [nats]")
axes[1].set_ylabel("max |mean error| [full-posterior sd]")
axes[1].axhline(1.0, color="k", ls=":", lw=1)
axes[0].legend()
fig.suptitle(f"Logistic regression, N = {len(X)}: median over {len(seeds)} seeds")
fig.tight_layout()
plt.show()
