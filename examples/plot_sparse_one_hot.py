"""
Sparse one-hot features: ColumnTransformer, coreset and posterior
=================================================================

Categorical columns one-hot encoded by
:class:`~sklearn.preprocessing.OneHotEncoder` come as a scipy.sparse matrix, and a
:class:`~sklearn.compose.ColumnTransformer` keeps its output sparse when most entries
are zero. Every skcoreset estimator and coreset constructor takes that matrix as it is:
products with it run through sparse BLAS, the Hessians are summed over blocks of
rows, and no dense copy of the rows is made. The coreset's rows reach the estimator
sparse too.
"""

# %%
# Real-shaped data: a rare-level categorical column, a device type and a skewed amount
# -------------------------------------------------------------------------------------
import warnings

import numpy as np
import pandas as pd
from scipy.special import expit
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset
from skcoreset.metrics import coreset_quality
from skcoreset.pipeline import Pipeline

rng = np.random.default_rng(0)
n = 50_000
shops = [f"shop{i}" for i in range(40)]
frame = pd.DataFrame({
    "shop": rng.choice(shops, size=n, p=rng.dirichlet(np.full(40, 0.3))),
    "device": rng.choice(["phone", "tablet", "desktop"], size=n, p=[0.6, 0.1, 0.3]),
    "amount": rng.lognormal(3.0, 1.0, size=n),
})
shop_effect = dict(zip(shops, rng.normal(0.0, 1.0, size=40)))
eta = (frame["shop"].map(shop_effect) + 0.8 * (frame["device"] == "tablet")
       + 0.5 * np.log(frame["amount"]) - 3.5)
y = (rng.random(n) < expit(eta)).astype(int)

columns = ColumnTransformer([("cat", OneHotEncoder(), ["shop", "device"]),
                             ("num", StandardScaler(with_mean=False), ["amount"])])
X = columns.fit_transform(frame)
print(f"{type(X).__name__}: {X.shape[0]} rows, {X.shape[1]} columns, "
      f"{X.nnz / X.shape[0]:.0f} nonzeros per row, positives {y.mean():.1%}")

# %%
# The pipeline: one-hot columns, a quasi-Newton coreset, the Bayesian model
# ---------------------------------------------------------------------------
# The ColumnTransformer's sparse output goes through the coreset to the estimator; at
# prediction time the coreset step passes every row on.
pipe = Pipeline([("columns", columns),
                 ("coreset", QuasiNewtonCoreset(M=1000, random_state=0)),
                 ("clf", BayesianLogisticRegression())]).fit(frame, y)
proba, proba_std = pipe.predict_proba(frame.iloc[:5], return_std=True)
print("P(y = 1):", np.round(proba[:, 1], 3), " posterior sd:", np.round(proba_std, 3))

# %%
# In a plain scikit-learn Pipeline the coreset hands on its rows as a
# :class:`~skcoreset.SparseWeightedSubset`: a CSR matrix carrying the weights.
subset = QuasiNewtonCoreset(M=1000, random_state=0).fit_transform(X, y)
print(f"{type(subset).__name__} of {subset.shape[0]} rows, weights summing to "
      f"{subset.sample_weight.sum():.0f}")

# %%
# How close is the coreset posterior to the posterior of all rows?
# ----------------------------------------------------------------
# In nats, against the Laplace fit on all rows, which the sparse matrix makes cheap too.
quality = coreset_quality(pipe.named_steps["coreset"], X, y)
print(f"KL(coreset || all rows) = {quality.kl:.3f} nats, largest posterior-mean error "
      f"{quality.max_mean_error_sd:.2f} sd")

# %%
# Many columns: when no coreset can stand in for the data
# -------------------------------------------------------
# A coreset matches the posterior of ``p`` parameters to second order only with about
# ``p (p + 3) / 2`` rows. With a 400-level column next to the others that is about
# 100,000 rows, more than these 50,000: the default ``QuasiNewtonCoreset()`` then
# hands on every row (the exact answer, without copying the matrix) and says so.
frame["customer"] = rng.integers(0, 400, size=n).astype(str)
wide = ColumnTransformer([("cat", OneHotEncoder(), ["shop", "device", "customer"]),
                          ("num", StandardScaler(with_mean=False), ["amount"])])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    wide_pipe = Pipeline([("columns", wide),
                          ("coreset", QuasiNewtonCoreset(random_state=0)),
                          ("clf", BayesianLogisticRegression())]).fit(frame, y)
coreset = wide_pipe.named_steps["coreset"]
print(f"{len(coreset.sample_indices_)} of {n} rows ({coreset.stop_reason_});")
print(str(caught[0].message)[:160], "...")
