"""
Quick start: Bayesian logistic regression with posterior uncertainty
====================================================================

Fit :class:`skcoreset.BayesianLogisticRegression` (Laplace approximation) on scikit-learn's
breast-cancer data, report test accuracy and log-loss, and list the five test predictions the
posterior is least sure about, with the posterior standard deviation of P(malignant | x).
"""

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skcoreset import BayesianLogisticRegression

data = load_breast_cancer()
X_train, X_test, y_train, y_test = train_test_split(
    data.data, data.target, test_size=0.3, stratify=data.target, random_state=0)

model = make_pipeline(StandardScaler(), BayesianLogisticRegression(prior_scale=1.0))
model.fit(X_train, y_train)
clf = model[-1]

proba, proba_std = model.predict_proba(X_test, return_std=True)
print(f"BayesianLogisticRegression (method={clf.method!r}) on breast cancer, "
      f"{len(X_train)} train / {len(X_test)} test rows")
print(f"  Newton iterations: {clf.n_iter_}, log evidence: {clf.log_evidence_:.2f}")
print(f"  test accuracy: {accuracy_score(y_test, model.predict(X_test)):.3f}")
print(f"  test log-loss: {log_loss(y_test, proba):.4f}")

positive = str(data.target_names[clf.classes_[1]])
print(f"\nFive most uncertain test predictions (P = P(y = {positive} | x)):")
print(f"  {'row':>4}  {'P':>6}  {'posterior std':>13}  {'true label':>10}")
for i in np.argsort(-proba_std)[:5]:
    print(f"  {i:4d}  {proba[i, 1]:6.3f}  {proba_std[i]:13.3f}  "
          f"{data.target_names[y_test[i]]:>10}")
