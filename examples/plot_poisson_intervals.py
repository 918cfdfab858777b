"""
Poisson regression on counts with predictive intervals
======================================================

:class:`~skcoreset.BayesianPoissonRegression` fits a posterior over the coefficients of
a Poisson rate ``exp(x . coef + intercept)``. Its
:meth:`predict(X, return_std=True) <skcoreset.BayesianPoissonRegression.predict>`
returns the posterior predictive mean count and its standard deviation, which combines
the Poisson noise of a new count with the posterior uncertainty of the rate:
``sqrt(E[rate] + Var[rate])``.

Exact predictive intervals come from simulation: draw coefficients from ``posterior_``
(:meth:`GaussianPosterior.sample <skcoreset.GaussianPosterior.sample>`), then a count
for each draw, and take quantiles. The same model fitted through a
:class:`~skcoreset.GIGACoreset` with a budget of 30 rows (``model="auto"`` recognises
the counts; it keeps fewer) gives nearly the same intervals from a handful of weighted
rows.
"""

import matplotlib.pyplot as plt
import numpy as np

from skcoreset import BayesianPoissonRegression, GIGACoreset
from skcoreset.datasets import make_poisson_regression
from skcoreset.pipeline import make_pipeline

X, y = make_poisson_regression(3000, coef=[0.8], intercept=1.0, random_state=0)
X_train, y_train, X_test, y_test = X[:2000], y[:2000], X[2000:], y[2000:]

full = BayesianPoissonRegression().fit(X_train, y_train)
pipe = make_pipeline(GIGACoreset(M=30, random_state=0), BayesianPoissonRegression())
pipe.fit(X_train, y_train)
coreset = pipe[0]
print(f"GIGA coreset: {len(coreset.sample_indices_)} rows, model {coreset.model_!r}")

# %%
# Predictive mean and standard deviation, and simulated 95% predictive intervals.
rng = np.random.default_rng(0)
grid = np.linspace(-3, 3, 121)[:, None]


def predictive_interval(model, X, n_draws=4000):
    """2.5% and 97.5% quantiles of the posterior predictive count and the rate band."""
    theta = model.posterior_.sample(n_draws, random_state=rng)  # [coef, intercept]
    rate = np.exp(X @ theta[:, :-1].T + theta[:, -1])  # (n_points, n_draws)
    counts = rng.poisson(rate)
    return (np.percentile(counts, [2.5, 97.5], axis=1),
            np.percentile(rate, [2.5, 97.5], axis=1))


fig, axes = plt.subplots(1, 2, figsize=(11, 5), sharey=True)
n_coreset_rows = len(coreset.sample_indices_)
for ax, (name, model) in zip(axes, [(f"full data, {len(X_train)} rows", full),
                                    (f"GIGA coreset, {n_coreset_rows} rows", pipe)]):
    estimator = model[-1] if hasattr(model, "steps") else model
    mean, std = model.predict(grid, return_std=True)
    (low, high), (rate_low, rate_high) = predictive_interval(estimator, grid)
    (test_low, test_high), _ = predictive_interval(estimator, X_test)
    coverage = np.mean((y_test >= test_low) & (y_test <= test_high))
    ax.scatter(X_train[:, 0], y_train, s=3, c="0.6", alpha=0.5, label="training counts")
    if hasattr(model, "steps"):
        w = coreset.sample_weight_
        rows = coreset.sample_indices_
        ax.scatter(X_train[rows, 0], y_train[rows],
                   s=15 + 200 * np.sqrt(w / w.max()), facecolors="none", edgecolors="k",
                   label="coreset rows (area ~ weight)")
    ax.fill_between(grid[:, 0], low, high, color="tab:blue", alpha=0.2,
                    label="95% predictive interval (simulated)")
    ax.fill_between(grid[:, 0], rate_low, rate_high, color="tab:orange", alpha=0.6,
                    label="95% posterior band of the rate")
    ax.plot(grid[:, 0], mean, color="tab:blue", label="predictive mean")
    ax.plot(grid[:, 0], mean + 2 * std, color="tab:blue", ls="--", lw=1,
            label="mean + 2 std (return_std=True)")
    ax.set_title(f"{name}\ntest coverage of the 95% interval: {coverage:.1%}")
    ax.set_xlabel("$x$")
    ax.set_ylim(0, 40)
axes[0].set_ylabel("count $y$")
axes[1].legend(loc="upper left", fontsize=8)
fig.tight_layout()
plt.show()
