"""
Merge-reduce coresets of a stream
=================================

:class:`~skcoreset.StreamingCoreset` turns any constructor into a streaming and parallel one
(Huggins, Campbell & Broderick, 2016, §3.4): the rows are cut into blocks, each block gets a
coreset from a clone of ``base_coreset``, and coresets of consecutive blocks are merged
pairwise in a binary tree, each union compressed again by the base constructor. Only
``O(log B)`` block coresets of ``B`` blocks are alive at once, so memory stays bounded
however long the stream. :meth:`~skcoreset.StreamingCoreset.partial_fit` consumes the stream
piece by piece, and after every piece the fitted attributes describe a coreset of all rows
seen so far.

Here a stream of 30 chunks of 2,000 rows of a 5-feature logistic regression is compressed
with a GIGA base coreset and, for comparison, with a uniform one of the same budget. After
every chunk the posterior fitted on the coreset is compared with the posterior of all rows
seen so far (KL divergence, lower is better). With a fixed budget the KL grows along the
stream, because the posterior of all rows concentrates while the coreset keeps at most
``M`` rows; the GIGA base stays about ten times closer than the uniform one.
"""

import matplotlib.pyplot as plt
from sklearn.pipeline import Pipeline as SklearnPipeline

from skcoreset import BayesianLogisticRegression, GIGACoreset, StreamingCoreset, UniformCoreset
from skcoreset.datasets import make_logistic_regression
from skcoreset.metrics import posterior_kl

n_chunks, chunk_size = 30, 2000
X_all, y_all = make_logistic_regression(n_chunks * chunk_size, n_features=5, random_state=0)

streams = {
    "GIGA base": StreamingCoreset(GIGACoreset(M=100, projection_dim=100),
                                  block_size=chunk_size, random_state=0),
    "uniform base": StreamingCoreset(UniformCoreset(M=100), block_size=chunk_size,
                                     random_state=0),
}
history = {name: {"rows": [], "kl": [], "size": []} for name in streams}
for i in range(n_chunks):
    rows = slice(i * chunk_size, (i + 1) * chunk_size)
    seen = slice(0, rows.stop)
    exact = BayesianLogisticRegression().fit(X_all[seen], y_all[seen])
    for name, stream in streams.items():
        stream.partial_fit(X_all[rows], y_all[rows])
        idx, w = stream.sample_indices_, stream.sample_weight_  # row numbers of the stream
        fitted = BayesianLogisticRegression().fit(X_all[idx], y_all[idx], sample_weight=w)
        history[name]["rows"].append(rows.stop)
        history[name]["kl"].append(posterior_kl(fitted, exact))
        history[name]["size"].append(len(idx))

for name, stream in streams.items():
    print(f"{name}: {stream.n_blocks_} blocks, {stream.n_samples_seen_} rows -> "
          f"{len(stream.sample_indices_)} weighted rows, KL {history[name]['kl'][-1]:.3g}")

# %%
# KL to the posterior of all rows seen so far, and the coreset size, along the stream.
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for name, h in history.items():
    axes[0].plot(h["rows"], h["kl"], marker=".", label=name)
    axes[1].plot(h["rows"], h["size"], marker=".", label=name)
axes[0].set_yscale("log")
axes[0].set_ylabel("KL(coreset posterior || posterior of rows seen)")
axes[1].set_ylabel("coreset size")
for ax in axes:
    ax.set_xlabel("rows seen")
    ax.grid(True, alpha=0.3)
axes[0].legend()
fig.tight_layout()
plt.show()

# %%
# All rows at once, in a plain scikit-learn pipeline
# --------------------------------------------------
# ``fit`` on all rows builds the tree in one call, here with two parallel jobs (the result
# does not depend on ``n_jobs``). Unlike the stream above, whose GIGA weighting distribution
# was drawn from the first chunk, it draws that distribution from all the rows. In a plain
# scikit-learn pipeline the coreset step's ``transform`` hands a
# :class:`~skcoreset.WeightedSubset` -- the coreset rows carrying ``sample_weight`` and
# ``sample_indices`` -- to the Bayesian estimator, which fits it with those weights.
pipe = SklearnPipeline([
    ("coreset", StreamingCoreset(GIGACoreset(M=100, projection_dim=100),
                                 block_size=chunk_size, n_jobs=2, random_state=0)),
    ("clf", BayesianLogisticRegression())])
pipe.fit(X_all, y_all)
subset = pipe.named_steps["coreset"].transform(X_all)
print(f"{type(subset).__name__} of shape {subset.shape}, weights summing to "
      f"{subset.sample_weight.sum():.0f}")
print(f"KL(pipeline posterior || posterior of all rows) = {posterior_kl(pipe, exact):.3g}")
