"""
Displays: coreset accuracy, posteriors, calibration, MCMC chains
================================================================

The pictures of :mod:`skcoreset.plotting`, built like scikit-learn's
``RocCurveDisplay`` or ``CalibrationDisplay``: a class method computes the values
and draws them, and the returned display keeps both (``ax_``, ``figure_`` and the
artists), so ``display.plot(ax=...)`` draws it again elsewhere.

* :class:`~skcoreset.plotting.CoresetAccuracyDisplay`: how far the coreset posterior
  is from the full posterior, in nats, against the number of coreset rows;
* :class:`~skcoreset.plotting.PosteriorComparisonDisplay`: coefficient posteriors of
  several fits side by side;
* :class:`~skcoreset.plotting.PredictiveCalibrationDisplay`: predicted probability
  against observed frequency, with the posterior predictive band of that frequency;
* :class:`~skcoreset.plotting.MCMCDiagnosticsDisplay`: the chains of an MCMC fit, a
  trace and a rank plot per parameter, with its R-hat and effective sample size.

The data are 100,000 rows of a rare-event logistic model (5 % positives): the
case where a uniform subsample loses most of the information and a coreset must keep
the rare rows.
"""

# %%
# Coreset accuracy against size
# -----------------------------
# ``from_estimator`` fits a constructor at each size and measures it with
# :func:`~skcoreset.metrics.coreset_quality`; ``from_coreset`` shows the sizes a
# :class:`~skcoreset.QuasiNewtonCoreset` with ``M="auto"`` tried before meeting its
# ``target_kl`` (its ``kl_path_``). Below about 0.1 nats the coreset posterior is hard
# to tell from the full one.
import matplotlib.pyplot as plt
from sklearn.model_selection import train_test_split

from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset, UniformCoreset
from skcoreset.datasets import make_rare_events
from skcoreset.pipeline import Pipeline
from skcoreset.plotting import (CoresetAccuracyDisplay, MCMCDiagnosticsDisplay,
                                PosteriorComparisonDisplay,
                                PredictiveCalibrationDisplay)

X, y = make_rare_events(100_000, n_features=8, positive_rate=0.05, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)

sizes = [100, 200, 500, 1000, 2000]
fig, ax = plt.subplots(figsize=(6.4, 4.2))
CoresetAccuracyDisplay.from_estimator(UniformCoreset(random_state=0), X_train,
                                      y_train, sizes=sizes, ax=ax)
CoresetAccuracyDisplay.from_estimator(QuasiNewtonCoreset(random_state=0), X_train,
                                      y_train, sizes=sizes, ax=ax)
coreset = QuasiNewtonCoreset(target_kl=0.01, random_state=0).fit(X_train, y_train)
CoresetAccuracyDisplay.from_coreset(coreset, name="QuasiNewtonCoreset(M='auto')",
                                    ax=ax, marker="*", markersize=14, linestyle="none")
ax.set_title("Rare events: uniform subsampling against a quasi-Newton coreset")
ax.legend(loc="lower left")
plt.show()

# %%
# Coefficient posteriors: coreset + NUTS against all rows
# -------------------------------------------------------
# MCMC (the no-U-turn sampler) on the coreset's weighted rows, against the Laplace
# approximation on all 75,000 training rows. Each marker is a posterior mean, each bar
# its 95 % credible interval; the intercept (about -7, the log-odds of a rare event)
# is left out so that the coefficients' intervals stay readable. The pipeline keeps the
# sampler's draws as they are (``exact_correction=False``) so that its chains can be
# shown below: by default it ends by resampling them towards the exact posterior of all
# rows, after which they are no longer chains.
coreset_nuts = Pipeline([
    ("coreset", QuasiNewtonCoreset(target_kl=0.01, random_state=0)),
    ("clf", BayesianLogisticRegression(method="mcmc", sampler="nuts", random_state=0)),
], exact_correction=False).fit(X_train, y_train)
all_rows = BayesianLogisticRegression().fit(X_train, y_train)
print(f"coreset: {len(coreset_nuts[0].sample_indices_)} of {len(X_train)} rows")

display = PosteriorComparisonDisplay.from_estimators(
    {"coreset + NUTS": coreset_nuts, "all rows, Laplace": all_rows},
    feature_names=[f"feature {j}" for j in range(X.shape[1])], include_intercept=False)
display.ax_.set_title("Posterior of the coefficients")
plt.show()

# %%
# Predictive calibration with its posterior predictive band
# ---------------------------------------------------------
# The held-out rows are binned by predicted probability (here in ten bins of equal
# counts, since most probabilities are close to 0); each point is a bin's mean
# predicted probability against its observed frequency of positives. The band is where
# that frequency falls in data sets drawn from the fitted model (``sample_y``): a point
# inside it is as calibrated as the posterior and the bin's size can tell.
fig, axes = plt.subplots(1, 2, figsize=(9, 4.5), sharey=True)
for ax, (name, estimator) in zip(axes, [("coreset + NUTS", coreset_nuts),
                                        ("all rows, Laplace", all_rows)]):
    PredictiveCalibrationDisplay.from_estimator(
        estimator, X_test, y_test, n_bins=10, strategy="quantile", name=name,
        random_state=0, ax=ax)
    ax.set_xlim(-0.01, 0.35)
    ax.set_ylim(-0.01, 0.35)
    ax.set_title(name)
plt.show()

# %%
# The chains of the sampler
# -------------------------
# Before reading an MCMC posterior, check that its chains agree. For each parameter,
# the trace of each chain (left: chains that converged overlap and wander over the same
# range) and the histogram of each chain's ranks among all draws (right: flat, near
# the dashed line, when the chains sample the same distribution), with the R-hat and
# effective sample size of the fit's ``summary()``. Here the intercept and the first
# three coefficients of the coreset's NUTS fit.
display = MCMCDiagnosticsDisplay.from_estimator(
    coreset_nuts, parameters=["intercept", 0, 1, 2],
    feature_names=[f"feature {j}" for j in range(X.shape[1])])
display.figure_.suptitle("NUTS on the coreset: traces and rank plots")
plt.show()
