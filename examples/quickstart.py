"""
Quick start: posterior uncertainty, and a coreset where it pays off
===================================================================

1. Small data -- scikit-learn's breast-cancer set, 398 training rows: fit
   :class:`skcoreset.BayesianLogisticRegression` (Laplace approximation) on all of them
   and print the test accuracy, the log-loss and the five test predictions the posterior
   is least sure about, with the posterior standard deviation of P(y | x). At this size
   a coreset cannot pay off: the full fit takes milliseconds.
2. Large data -- 200,000 synthetic rows
   (:func:`skcoreset.datasets.make_logistic_regression`). The full-data Laplace fit
   still takes well under a second, and it is the right answer when a Gaussian posterior
   is enough. MCMC on all rows, for the exact posterior, takes minutes: each of its tens
   of thousands of gradient evaluations is a pass over all rows. The
   pattern that pays off: a :class:`skcoreset.QuasiNewtonCoreset` sized for 0.1 nats
   (``target_kl``; a few hundred weighted rows), then MCMC on those rows only, in one
   :class:`skcoreset.pipeline.Pipeline`. Its quality is printed in nats --
   KL(coreset posterior || full posterior) -- and as the largest error of a posterior
   mean in posterior standard deviations.
"""

import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset
from skcoreset.datasets import make_logistic_regression
from skcoreset.metrics import mean_error_sd, posterior_kl
from skcoreset.pipeline import Pipeline

# 1. Small data: fit all rows ----------------------------------------------------------
data = load_breast_cancer()
X_train, X_test, y_train, y_test = train_test_split(
    data.data, data.target, test_size=0.3, stratify=data.target, random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

start = time.perf_counter()
clf = BayesianLogisticRegression(prior_scale=1.0).fit(X_train, y_train)
fit_time = time.perf_counter() - start
proba, proba_std = clf.predict_proba(X_test, return_std=True)
print(f"1. BayesianLogisticRegression on breast cancer ({len(X_train)} train / "
      f"{len(X_test)} test rows), Laplace fit in {fit_time * 1000:.0f} ms")
print(f"   test accuracy {accuracy_score(y_test, clf.predict(X_test)):.3f}, "
      f"test log-loss {log_loss(y_test, proba):.4f}, "
      f"log evidence {clf.log_evidence_:.2f}")
positive = str(data.target_names[clf.classes_[1]])
print(f"   five most uncertain test predictions (P = P(y = {positive} | x)):")
print(f"   {'row':>4}  {'P':>6}  {'posterior std':>13}  {'true label':>10}")
for i in np.argsort(-proba_std)[:5]:
    print(f"   {i:4d}  {proba[i, 1]:6.3f}  {proba_std[i]:13.3f}  "
          f"{data.target_names[y_test[i]]:>10}")

# 2. Large data: a coreset for MCMC ----------------------------------------------------
X, y = make_logistic_regression(200_000, coef=np.linspace(-1.0, 1.0, 10), intercept=0.5,
                                random_state=0)
X_new = X[:5] + 0.5
start = time.perf_counter()
full = BayesianLogisticRegression().fit(X, y)
laplace_time = time.perf_counter() - start
print(f"\n2. {len(X):,} rows, {X.shape[1]} features: full-data Laplace fit in "
      f"{laplace_time:.2f} s")

start = time.perf_counter()
coreset = QuasiNewtonCoreset(target_kl=0.1, random_state=0).fit(X, y)
build_time = time.perf_counter() - start
print(f"   QuasiNewtonCoreset: {len(coreset.sample_indices_)} weighted rows stand in "
      f"for {len(X):,}, built in {build_time:.1f} s "
      f"(estimated KL {coreset.kl_estimate_:.3g} nats)")

# the same coreset (same random_state) followed by MCMC on its rows, as one estimator
pipe = Pipeline([("coreset", QuasiNewtonCoreset(target_kl=0.1, random_state=0)),
                 ("clf", BayesianLogisticRegression(method="mcmc", random_state=0))])
start = time.perf_counter()
with warnings.catch_warnings():
    # MCMC diagnostics warnings; the KL below is the check
    warnings.simplefilter("ignore")
    pipe.fit(X, y)
pipe_time = time.perf_counter() - start
posterior = pipe.named_steps["clf"]
mcmc_time = max(pipe_time - build_time, 1e-3)
steps = int(posterior.sample_stats_["n_steps"].sum())
print(f"   coreset + MCMC ({len(posterior.posterior_samples_)} posterior draws, "
      f"{steps:,} gradient evaluations after the warm-up) in {pipe_time:.1f} s, of "
      f"which MCMC {mcmc_time:.1f} s; on all rows each gradient would be a pass over "
      f"{len(X):,} rows instead of {len(coreset.sample_indices_)}")
print(f"   KL(coreset MCMC posterior || full-data Laplace posterior) = "
      f"{posterior_kl(posterior, full):.3f} nats; largest posterior-mean error "
      f"{mean_error_sd(posterior, full):.2f} posterior sd")
proba, proba_std = pipe.predict_proba(X_new, return_std=True)
proba_full, std_full = full.predict_proba(X_new, return_std=True)
print("   predictions on new rows, coreset + MCMC vs full-data Laplace:")
print(f"   {'P(y=1)':>8} {'std':>7}   {'P(y=1)':>8} {'std':>7}")
for p, s, pf, sf in zip(proba[:, 1], proba_std, proba_full[:, 1], std_full):
    print(f"   {p:8.3f} {s:7.4f}   {pf:8.3f} {sf:7.4f}")
print("   Rule: when a Gaussian posterior is enough, fit all rows with Laplace; "
      "for MCMC at large N, build a coreset first.")
