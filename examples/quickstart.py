"""
Quick start: a Bayesian coreset in a pipeline, with posterior uncertainty
=========================================================================

1. Fit :class:`skcoreset.BayesianLogisticRegression` (Laplace approximation) on scikit-learn's
   breast-cancer data: test accuracy, log-loss, and the five test predictions the posterior is
   least sure about, with the posterior standard deviation of P(y | x).
2. Put a :class:`skcoreset.GIGACoreset` in front of it in a :class:`skcoreset.pipeline.Pipeline`,
   choose the coreset size M by cross-validated log-loss with ``GridSearchCV``, and compare the
   coreset posterior with the full-data posterior (KL divergence) and the fit times.
"""

import time

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

# 1. The full-data posterior -------------------------------------------------------------
start = time.perf_counter()
full = BayesianLogisticRegression(prior_scale=1.0).fit(X_train, y_train)
full_time = time.perf_counter() - start
proba, proba_std = full.predict_proba(X_test, return_std=True)
print(f"BayesianLogisticRegression (method={full.method!r}) on breast cancer, "
      f"{len(X_train)} train / {len(X_test)} test rows")
print(f"  Newton iterations: {full.n_iter_}, log evidence: {full.log_evidence_:.2f}")
print(f"  test accuracy: {accuracy_score(y_test, full.predict(X_test)):.3f}")
print(f"  test log-loss: {log_loss(y_test, proba):.4f}")

positive = str(data.target_names[full.classes_[1]])
print(f"\nFive most uncertain test predictions (P = P(y = {positive} | x)):")
print(f"  {'row':>4}  {'P':>6}  {'posterior std':>13}  {'true label':>10}")
for i in np.argsort(-proba_std)[:5]:
    print(f"  {i:4d}  {proba[i, 1]:6.3f}  {proba_std[i]:13.3f}  "
          f"{data.target_names[y_test[i]]:>10}")

# 2. A coreset in the pipeline, its size chosen by cross-validation ----------------------
pipe = Pipeline([("coreset", GIGACoreset(M=50, random_state=0)),
                 ("clf", BayesianLogisticRegression(prior_scale=1.0))])
search = GridSearchCV(pipe, {"coreset__M": [10, 25, 50, 100]}, scoring="neg_log_loss", cv=5)
search.fit(X_train, y_train)
best = search.best_estimator_

start = time.perf_counter()
best.fit(X_train, y_train)
coreset_time = time.perf_counter() - start
coreset = best.named_steps["coreset"]
proba_core, std_core = best.predict_proba(X_test, return_std=True)

print("\nGIGA coreset + BayesianLogisticRegression, M chosen by 5-fold CV log-loss:")
for M, score in zip(search.cv_results_["param_coreset__M"],
                    search.cv_results_["mean_test_score"]):
    print(f"  M = {M:4d}: CV log-loss {-score:.4f}")
print(f"  chosen M = {search.best_params_['coreset__M']}: {len(coreset.sample_indices_)} "
      f"weighted rows stand in for {len(X_train)}")
print(f"  fit time: coreset pipeline {coreset_time:.3f} s (construction + fit on the coreset) "
      f"vs full-data fit {full_time:.3f} s\n"
      "  (on a few hundred rows the full fit is already instant: coresets pay off when N is "
      "large, see benchmarks/)")
print(f"  KL(coreset posterior || full-data posterior) = "
      f"{posterior_kl(best[-1], full):.4f} nats")
print(f"  test accuracy {accuracy_score(y_test, best.predict(X_test)):.3f}, "
      f"test log-loss {log_loss(y_test, proba_core):.4f}")
