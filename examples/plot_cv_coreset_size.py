"""
Choosing the coreset size by cross-validation
=============================================

The coreset size trades speed against accuracy. Because a coreset constructor is an
ordinary estimator step of a :class:`skcoreset.pipeline.Pipeline`,
:class:`~sklearn.model_selection.GridSearchCV` can choose it like any hyper-parameter,
here together with the constructor itself. Each candidate pipeline builds its coreset on
the training folds only, fits :class:`~skcoreset.BayesianLogisticRegression` on the
weighted coreset rows and is scored on every row of the validation fold. The smallest
budget whose score is within one standard error of the best is a common, cheaper choice;
the last section checks what that choice does to the posterior itself.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

from skcoreset import BayesianLogisticRegression, GIGACoreset, UniformCoreset
from skcoreset.datasets import make_logistic_regression
from skcoreset.metrics import coreset_quality
from skcoreset.pipeline import Pipeline

X, y = make_logistic_regression(4000, n_features=5, random_state=0)
cv = KFold(n_splits=3, shuffle=True, random_state=0)

pipe = Pipeline([("coreset", GIGACoreset(random_state=0)),
                 ("clf", BayesianLogisticRegression())])
param_grid = {
    "coreset": [UniformCoreset(random_state=0),
                GIGACoreset(projection_dim=200, random_state=0)],
    "coreset__M": [10, 20, 50, 100, 200],
}
search = GridSearchCV(pipe, param_grid, scoring="neg_log_loss", cv=cv).fit(X, y)
full_scores = -cross_val_score(BayesianLogisticRegression(), X, y,
                               scoring="neg_log_loss", cv=cv)
print("best:", search.best_params_, f"CV log-loss {-search.best_score_:.4f}")
print(f"full data: CV log-loss {full_scores.mean():.4f}")

# %%
# CV log-loss of each constructor against its budget, and the one-standard-error choice.
results = search.cv_results_
fig, ax = plt.subplots(figsize=(6, 4))
for constructor in param_grid["coreset"]:
    name = type(constructor).__name__
    rows = [i for i, params in enumerate(results["params"])
            if type(params["coreset"]) is type(constructor)]
    M = np.array([results["params"][i]["coreset__M"] for i in rows])
    mean = -results["mean_test_score"][rows]
    sem = results["std_test_score"][rows] / np.sqrt(cv.get_n_splits())
    ax.errorbar(M, mean, yerr=sem, marker="o", capsize=3, label=name)
    good = M[mean <= mean.min() + sem[np.argmin(mean)]]
    print(f"{name}: smallest M within one standard error of its best: {good.min()}")
ax.axhline(full_scores.mean(), color="k", ls="--", label="full data")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("coreset budget M")
ax.set_ylabel("3-fold CV log-loss (+- s.e.)")
ax.set_title(f"N = {len(X)} training rows, 5 features")
ax.legend()
fig.tight_layout()
plt.show()

# %%
# What the log-loss does not show
# -------------------------------
# Predictive log-loss is flat in the coefficients near their optimum, so a coreset whose
# posterior is several standard deviations off can still score close to the full data.
# :func:`~skcoreset.metrics.coreset_quality` measures the posterior itself: KL
# divergence to the full-data posterior in nats (below about 0.1 the two are hard to
# tell apart) and the largest difference between the posterior means in full-posterior
# standard deviations. Here the budgets that cross-validation finds good enough for
# prediction leave the posterior means more than a standard deviation off; when the
# posterior itself matters (credible intervals, decisions under uncertainty), choose M
# by these numbers instead.
full = None  # the full-data posterior: fitted by the first call, then reused
for constructor in param_grid["coreset"]:
    for M in (20, 200):
        coreset = clone(constructor).set_params(M=M).fit(X, y)
        quality = coreset_quality(coreset, X, y, full_posterior=full)
        full = quality.full_posterior
        print(f"{type(constructor).__name__:>14} M={M:3d}: {quality.size:3d} rows, "
              f"KL {quality.kl:8.3g} nats, "
              f"mean error {quality.max_mean_error_sd:5.2f} sd")
