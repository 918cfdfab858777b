"""
Coreset points on 2-D logistic data
===================================

Every coreset constructor selects a few weighted rows of a 2-D logistic-regression data
set (N = 2,000, true coefficients [3, 3] as in the papers' synthetic data). The full
data are drawn in light colours; coreset points are drawn with an area that grows with
their weight (relative to the largest weight in the panel). Uniform subsampling spreads
its points like the data, with equal weights; the other constructors choose points by
how they shape the log-likelihood, with weights that vary widely: Frank-Wolfe along the
decision boundary, GIGA and sparse variational inference with a few heavy points far
from it. Each panel's title gives the KL divergence from the posterior fitted on the
coreset to the full-data posterior.
"""

import matplotlib.pyplot as plt
import numpy as np

from skcoreset import (BayesianLogisticRegression, FrankWolfeCoreset, GIGACoreset,
                       SensitivityCoreset, SparseVICoreset, UniformCoreset)
from skcoreset.datasets import make_logistic_regression
from skcoreset.metrics import posterior_kl

X, y = make_logistic_regression(2000, coef=[3.0, 3.0], random_state=0)
full = BayesianLogisticRegression().fit(X, y)
constructors = {
    "Uniform": UniformCoreset(M=40, random_state=0),
    "Sensitivity": SensitivityCoreset(M=40, random_state=0),
    "Frank-Wolfe": FrankWolfeCoreset(M=40, random_state=0),
    "GIGA": GIGACoreset(M=40, random_state=0),
    "Sparse VI": SparseVICoreset(M=40, n_iter_opt=50, random_state=0),
}

fig, axes = plt.subplots(1, len(constructors), figsize=(3.6 * len(constructors), 4.2),
                         sharex=True, sharey=True)
for ax, (name, coreset) in zip(axes, constructors.items()):
    X_core, y_core, w_core = coreset.fit_coreset(X, y)
    fitted = BayesianLogisticRegression().fit(X_core, y_core, sample_weight=w_core)
    kl = posterior_kl(fitted, full)
    ax.scatter(X[:, 0], X[:, 1], c=np.where(y == 1, "#f4a582", "#92c5de"), s=4,
               alpha=0.4, linewidths=0)
    sizes = 10 + 400 * np.sqrt(w_core / w_core.max())  # area grows with the weight
    colors = np.where(y_core == 1, "#b2182b", "#2166ac")
    ax.scatter(X_core[:, 0], X_core[:, 1], s=sizes, c=colors, edgecolors="k",
               linewidths=0.5)
    ax.set_title(f"{name}: {len(w_core)} points\nKL to full posterior {kl:.3g}")
    ax.set_xlabel("$x_1$")
axes[0].set_ylabel("$x_2$")
fig.tight_layout()
plt.show()
