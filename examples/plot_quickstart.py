"""
Quick start: a Bayesian coreset in a pipeline, with uncertain predictions
=========================================================================

A :class:`~skcoreset.BayesianLogisticRegression` fitted on scikit-learn's breast-cancer
data gives, for every test row, a probability *and* the posterior standard deviation of
that probability. A :class:`~skcoreset.GIGACoreset` placed in front of it in a
:class:`skcoreset.pipeline.Pipeline` fits the same model on a few dozen weighted rows;
its size ``M`` is chosen by cross-validated log-loss with
:class:`~sklearn.model_selection.GridSearchCV`, and its posterior is compared with the
full-data posterior by KL divergence.
"""

# %%
# Data and the full-data posterior
# --------------------------------
# Standardised features keep the Gaussian prior ``N(0, I)`` on the coefficients
# meaningful.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.preprocessing import StandardScaler

from skcoreset import BayesianLogisticRegression, GIGACoreset
from skcoreset.metrics import posterior_kl
from skcoreset.pipeline import Pipeline

data = load_breast_cancer()
X_train, X_test, y_train, y_test = train_test_split(
    data.data, data.target, test_size=0.3, stratify=data.target, random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

full = BayesianLogisticRegression(prior_scale=1.0).fit(X_train, y_train)
proba, proba_std = full.predict_proba(X_test, return_std=True)
print(f"full data ({len(X_train)} rows): accuracy "
      f"{accuracy_score(y_test, full.predict(X_test)):.3f}, log-loss "
      f"{log_loss(y_test, proba):.4f}, log evidence {full.log_evidence_:.1f}")

# %%
# A coreset pipeline, its size chosen by cross-validation
# -------------------------------------------------------
# The coreset step acts during ``fit`` only: the classifier is fitted on the weighted
# coreset rows, and predictions are made for every test row.
pipe = Pipeline([("coreset", GIGACoreset(M=50, random_state=0)),
                 ("clf", BayesianLogisticRegression(prior_scale=1.0))])
search = GridSearchCV(pipe, {"coreset__M": [10, 25, 50, 100]}, scoring="neg_log_loss",
                      cv=5)
search.fit(X_train, y_train)
best = search.best_estimator_
coreset = best.named_steps["coreset"]
proba_core, std_core = best.predict_proba(X_test, return_std=True)
print(f"chosen M = {search.best_params_['coreset__M']}: {len(coreset.sample_indices_)} "
      f"weighted rows stand in for {len(X_train)}")
print(f"coreset pipeline: accuracy {accuracy_score(y_test, best.predict(X_test)):.3f}, "
      f"log-loss {log_loss(y_test, proba_core):.4f}")
print(f"KL(coreset posterior || full-data posterior) = "
      f"{posterior_kl(best, full):.3f} nats")

# %%
# Probabilities with their posterior uncertainty
# ----------------------------------------------
# Each test row's predicted probability of the positive class against the posterior
# standard deviation of that probability. The posterior is least sure where the
# probability is close to 1/2, and the misclassified rows (crosses) lie there; the
# coreset posterior, fitted on fewer (weighted) rows, is somewhat wider.
positive = data.target_names[full.classes_[1]]
fig, ax = plt.subplots(figsize=(7, 4.5))
for p, s, name, color in [
        (proba[:, 1], proba_std, f"full data ({len(X_train)} rows)", "C0"),
        (proba_core[:, 1], std_core,
         f"GIGA coreset ({len(coreset.sample_indices_)} rows)", "C1")]:
    wrong = (p > 0.5) != (y_test == full.classes_[1])
    ax.scatter(p[~wrong], s[~wrong], s=12, color=color, alpha=0.7, label=name)
    ax.scatter(p[wrong], s[wrong], s=40, color=color, marker="x",
               label=f"{name}, misclassified")
ax.set_xlabel(f"P(y = {positive} | x), integrated over the posterior")
ax.set_ylabel("posterior std of that probability")
ax.legend(fontsize=8)
fig.tight_layout()

# %%
# Cross-validated log-loss against the coreset size
# -------------------------------------------------
M_values = np.asarray(search.cv_results_["param_coreset__M"], dtype=int)
fig, ax = plt.subplots(figsize=(5, 3.5))
ax.errorbar(M_values, -search.cv_results_["mean_test_score"],
            yerr=search.cv_results_["std_test_score"], marker="o", capsize=3,
            label="GIGA coreset + BayesianLogisticRegression")
ax.axhline(log_loss(y_test, proba), color="k", ls="--",
           label="full data (test log-loss)")
ax.set_xscale("log")
ax.set_xlabel("coreset budget M")
ax.set_ylabel("5-fold CV log-loss")
ax.legend()
fig.tight_layout()
plt.show()
