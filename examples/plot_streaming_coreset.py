"""
Merge-reduce coresets of a stream
=================================

:class:`~skcoreset.StreamingCoreset` turns any constructor into a streaming and parallel
one (Huggins, Campbell & Broderick, 2016, §3.4): the rows are cut into blocks, each
block gets a coreset from a clone of ``base_coreset``, and coresets of consecutive
blocks are merged pairwise in a binary tree, each union compressed again by the base
constructor. Only ``O(log B)`` block coresets of ``B`` blocks are alive at once, so
memory stays bounded however long the stream.
:meth:`~skcoreset.StreamingCoreset.partial_fit` consumes the stream piece by piece, and
after every piece the fitted attributes describe a coreset of all rows seen so far.

Here a stream of 30 chunks of 2,000 rows of a 5-feature logistic regression is
compressed with a GIGA base coreset and, for comparison, with a uniform one of the same
budget. After every chunk :func:`~skcoreset.metrics.coreset_quality` compares the
Laplace posterior of the coreset with that of all rows seen so far: KL divergence in
nats (lower is better; below about 0.1 the two are hard to tell apart) and the largest
difference between the posterior means in standard deviations of the posterior of all
rows. With a fixed budget the error grows along the stream, because the posterior of all
rows concentrates while the coreset keeps at most ``M`` rows. The GIGA base stays
several times closer than the uniform one, but in absolute terms both end far off after
60,000 rows (about 200 and 1,000 nats, means 10 and 30 standard deviations away): the
nats say when a stream has outgrown its budget ``M``.
"""

import matplotlib.pyplot as plt
from sklearn.pipeline import Pipeline as SklearnPipeline

from skcoreset import (BayesianLogisticRegression, GIGACoreset, StreamingCoreset,
                       UniformCoreset)
from skcoreset.datasets import make_logistic_regression
from skcoreset.metrics import coreset_quality, posterior_kl

n_chunks, chunk_size = 30, 2000
X_all, y_all = make_logistic_regression(n_chunks * chunk_size, n_features=5,
                                        random_state=0)

streams = {
    "GIGA base": StreamingCoreset(GIGACoreset(M=100, projection_dim=100),
                                  block_size=chunk_size, random_state=0),
    "uniform base": StreamingCoreset(UniformCoreset(M=100), block_size=chunk_size,
                                     random_state=0),
}
history = {name: {"rows": [], "kl": [], "sd": [], "size": []} for name in streams}
for i in range(n_chunks):
    rows = slice(i * chunk_size, (i + 1) * chunk_size)
    seen = slice(0, rows.stop)
    exact = None  # posterior of the rows seen: fitted by the first coreset_quality call
    for name, stream in streams.items():
        stream.partial_fit(X_all[rows], y_all[rows])
        quality = coreset_quality(stream, X_all[seen], y_all[seen],
                                  full_posterior=exact)
        exact = quality.full_posterior
        history[name]["rows"].append(rows.stop)
        history[name]["kl"].append(quality.kl)
        history[name]["sd"].append(quality.max_mean_error_sd)
        history[name]["size"].append(quality.size)

for name, stream in streams.items():
    print(f"{name}: {stream.n_blocks_} blocks, {stream.n_samples_seen_} rows -> "
          f"{len(stream.sample_indices_)} weighted rows, "
          f"KL {history[name]['kl'][-1]:.3g} nats, "
          f"mean error {history[name]['sd'][-1]:.2f} sd")

# %%
# KL to the posterior of all rows seen so far, the mean error, and the coreset size,
# along the stream.
fig, axes = plt.subplots(1, 3, figsize=(14, 4))
for name, h in history.items():
    axes[0].plot(h["rows"], h["kl"], marker=".", label=name)
    axes[1].plot(h["rows"], h["sd"], marker=".", label=name)
    axes[2].plot(h["rows"], h["size"], marker=".", label=name)
axes[0].set_yscale("log")
axes[0].set_ylabel("KL(coreset || posterior of rows seen) [nats]")
axes[1].set_yscale("log")
axes[1].set_ylabel("max |mean error| [posterior sd]")
axes[2].set_ylabel("coreset size")
for ax in axes:
    ax.set_xlabel("rows seen")
    ax.grid(True, alpha=0.3)
axes[0].legend()
fig.tight_layout()
plt.show()

# %%
# All rows at once, in a plain scikit-learn pipeline
# --------------------------------------------------
# ``fit`` on all rows builds the tree in one call, here with two parallel jobs (the
# result does not depend on ``n_jobs``). Unlike the stream above, whose GIGA weighting
# distribution was drawn from the first chunk, it draws that distribution from all the
# rows. In a plain scikit-learn pipeline the coreset step's ``fit_transform`` hands a
# :class:`~skcoreset.WeightedSubset` -- the coreset rows carrying ``sample_weight`` and
# ``sample_indices`` -- to the Bayesian estimator, which fits it with those weights.
pipe = SklearnPipeline([
    ("coreset", StreamingCoreset(GIGACoreset(M=100, projection_dim=100),
                                 block_size=chunk_size, n_jobs=2, random_state=0)),
    ("clf", BayesianLogisticRegression())])
pipe.fit(X_all, y_all)
coreset = pipe.named_steps["coreset"]
print(f"{len(coreset.sample_indices_)} coreset rows, weights summing to "
      f"{coreset.sample_weight_.sum():.0f}")
print(f"KL(pipeline posterior || posterior of all rows) = "
      f"{posterior_kl(pipe, exact):.3g} nats")
