"""
Predictive uncertainty over a 2-D grid
======================================

:meth:`BayesianLogisticRegression.predict_proba(X, return_std=True)
<skcoreset.BayesianLogisticRegression.predict_proba>`
returns, besides the probability ``P(y = 1 | x)`` integrated over the posterior, the
posterior standard deviation of that probability. Evaluated over a grid, it shows where
the model is unsure: along the decision boundary, and increasingly so far away from the
training data, where the direction of the boundary is least constrained.

Top row: the posterior fitted on all 400 rows. Bottom row: the posterior fitted on a
:class:`~skcoreset.GIGACoreset` of those rows (points drawn with an area growing with
their weight). The coreset keeps the probability map but is more uncertain, as a
posterior fitted on less information should be.
"""

import matplotlib.pyplot as plt
import numpy as np

from skcoreset import BayesianLogisticRegression, GIGACoreset
from skcoreset.datasets import make_logistic_regression

X, y = make_logistic_regression(400, coef=[2.0, -1.0], intercept=0.5, random_state=1)
X = X * [1.0, 0.6]  # anisotropic data: less information along the second feature

full = BayesianLogisticRegression().fit(X, y)
X_core, y_core, w_core = GIGACoreset(M=15, random_state=0).fit_coreset(X, y)
core = BayesianLogisticRegression().fit(X_core, y_core, sample_weight=w_core)

xx, yy = np.meshgrid(np.linspace(-5, 5, 201), np.linspace(-5, 5, 201))
grid = np.column_stack([xx.ravel(), yy.ravel()])

# %%
# Probability (left) and its posterior standard deviation (right) over the grid; the two
# standard-deviation maps share one colour scale.
predictions = [model.predict_proba(grid, return_std=True) for model in (full, core)]
std_levels = np.linspace(0.0, max(std.max() for _, std in predictions), 21)
fig, axes = plt.subplots(2, 2, figsize=(10, 9), sharex=True, sharey=True)
for row, (model, title, points, weights) in enumerate([
        (full, f"full data, {len(X)} rows", X, np.ones(len(X))),
        (core, f"GIGA coreset, {len(X_core)} weighted rows", X_core, w_core)]):
    proba, std = predictions[row]
    labels = y if row == 0 else y_core
    sizes = 6 if row == 0 else 20 + 300 * np.sqrt(weights / weights.max())
    for col, (values, cmap, levels, label) in enumerate([
            (proba[:, 1], "RdBu_r", np.linspace(0, 1, 21), "P(y = 1 | x)"),
            (std, "viridis", std_levels, "posterior std of P(y = 1 | x)")]):
        ax = axes[row, col]
        image = ax.contourf(xx, yy, values.reshape(xx.shape), levels=levels, cmap=cmap)
        ax.contour(xx, yy, proba[:, 1].reshape(xx.shape), levels=[0.5], colors="k",
                   linewidths=1)
        ax.scatter(points[:, 0], points[:, 1], s=sizes,
                   c=np.where(labels == 1, "w", "k"), edgecolors="k", linewidths=0.4)
        fig.colorbar(image, ax=ax, label=label, format="%.2f")
        ax.set_title(title)
    axes[row, 0].set_ylabel("$x_2$")
axes[1, 0].set_xlabel("$x_1$")
axes[1, 1].set_xlabel("$x_1$")
fig.tight_layout()
plt.show()

# %%
# The largest standard deviation on the grid, full data versus coreset:
print(f"max std, full data: {predictions[0][1].max():.3f}")
print(f"max std, coreset:   {predictions[1][1].max():.3f}")
