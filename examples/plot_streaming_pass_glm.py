"""
Streaming Bayesian logistic regression with PASS-GLM
====================================================

With ``method="pass_glm"`` (Huggins, Adams & Broderick, 2017) the log-likelihood is
replaced by a polynomial approximation whose sufficient statistics are sums over the
rows. They are accumulated chunk by chunk with
:meth:`partial_fit <skcoreset.BayesianLogisticRegression.partial_fit>`, so a stream of
any length is fitted in one pass with memory that does not grow with the number of rows,
and the posterior is available after every chunk. Chunk by chunk gives exactly the
posterior of one :meth:`fit` on all rows.

The stream here is generated on the fly: 40 chunks of 5,000 rows of a 5-feature logistic
regression. The posterior mean and a +-2 standard-deviation band of each coefficient are
tracked as rows arrive, next to the full-data Laplace posterior (dots at the right) and
the true coefficients (dotted).

The degree-2 approximation (the paper's PASS-LR2, a closed-form Gaussian posterior)
trades some accuracy for speed: its constant curvature on
``[-pass_radius, pass_radius]`` shrinks the coefficients here by up to about 10%. Choose
``pass_radius`` to cover the typical margins ``|x . theta|``, or use a higher
``pass_degree`` for few features.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from skcoreset import BayesianLogisticRegression, GaussianPosterior
from skcoreset.datasets import make_logistic_regression
from skcoreset.metrics import gaussian_kl

true_coef = np.array([1.0, -0.5, 0.25, 0.0, 0.75])
true_intercept = -1.0
n_chunks, chunk_size = 40, 5000


def stream(seed=0):
    """Chunks ``(X, y)`` of the stream, generated as they are consumed."""
    rng = np.random.default_rng(seed)
    for _ in range(n_chunks):
        yield make_logistic_regression(chunk_size, coef=true_coef,
                                       intercept=true_intercept,
                                       random_state=rng.integers(2**31))


# %%
# One pass over the stream
# ------------------------
model = BayesianLogisticRegression(method="pass_glm", pass_degree=2, pass_radius=3.0)
rows_seen, means, stds = [], [], []
start = time.perf_counter()
for X_chunk, y_chunk in stream():
    model.partial_fit(X_chunk, y_chunk, classes=[0, 1])
    rows_seen.append((rows_seen[-1] if rows_seen else 0) + len(X_chunk))
    means.append(model.posterior_.mean.copy())
    stds.append(model.posterior_.std.copy())
stream_time = time.perf_counter() - start
means, stds = np.array(means), np.array(stds)
print(f"PASS-GLM, {n_chunks} partial_fit calls on {rows_seen[-1]} rows: "
      f"{stream_time:.2f} s")

# %%
# Reference: the exact (Laplace) posterior of all rows, which needs them all in memory.
X_all, y_all = map(np.concatenate, zip(*stream()))
start = time.perf_counter()
laplace = BayesianLogisticRegression().fit(X_all, y_all)
print(f"Laplace on all {len(X_all)} rows at once: {time.perf_counter() - start:.2f} s")
one_shot = BayesianLogisticRegression(method="pass_glm", pass_radius=3.0)
one_shot.fit(X_all, y_all)
print("partial_fit == fit on all rows:",
      np.allclose(one_shot.posterior_.mean, means[-1]))

# %%
# Both posteriors are :class:`~skcoreset.GaussianPosterior` objects. The KL divergence
# from the prior measures how much the stream taught the model (in nats); the KL
# divergence between PASS-GLM's and Laplace's posteriors,
# :func:`~skcoreset.metrics.gaussian_kl`, measures the price of the polynomial
# approximation. With 200,000 rows the posterior is so narrow that a shift of the mean
# by a few percent is many posterior standard deviations.
n_params = len(true_coef) + 1
prior = GaussianPosterior(np.zeros(n_params),
                          np.diag([model.prior_scale**2] * len(true_coef)
                                  + [model.intercept_prior_scale**2]))
print(f"information gained from the stream: KL(posterior || prior) = "
      f"{model.posterior_.kl(prior):.1f} nats")
pass_glm, exact = model.posterior_, laplace.posterior_
print(f"KL(PASS-GLM || Laplace) = "
      f"{gaussian_kl(pass_glm.mean, pass_glm.cov, exact.mean, exact.cov):.1f} nats")

# %%
# Posterior of each coefficient as the stream is consumed
# -------------------------------------------------------
names = [f"coef[{j}]" for j in range(len(true_coef))] + ["intercept"]
truth = np.append(true_coef, true_intercept)
fig, ax = plt.subplots(figsize=(8, 5))
for j, name in enumerate(names):
    color = f"C{j}"
    ax.plot(rows_seen, means[:, j], color=color, label=name)
    ax.fill_between(rows_seen, means[:, j] - 2 * stds[:, j],
                    means[:, j] + 2 * stds[:, j], color=color, alpha=0.25)
    ax.axhline(truth[j], color=color, ls=":", lw=1)
    ax.errorbar(rows_seen[-1] * 1.15, laplace.posterior_.mean[j],
                yerr=2 * laplace.posterior_.std[j], fmt="o", color=color, ms=4,
                capsize=2)
ax.set_xscale("log")
ax.set_xlabel("rows seen")
ax.set_ylabel("posterior mean +- 2 std")
ax.set_title("PASS-GLM partial_fit (bands), full-data Laplace (dots), truth (dotted)")
ax.legend(ncol=6, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12))
fig.tight_layout()
plt.show()
