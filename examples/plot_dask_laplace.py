"""
The exact Laplace posterior on a dask cluster
=============================================

Rows that live on a dask cluster can be fitted where they are, with the same Newton
steps as in memory: given dask arrays, :meth:`BayesianLogisticRegression.fit
<skcoreset.BayesianLogisticRegression.fit>` with ``method="laplace"`` (or
``"kl_proximal"``) turns every Newton step into one map-reduce over the chunks. Each
worker computes the value, gradient and Hessian of its chunks' log-likelihood, a tree of
tasks adds them up, and only these ``O(d^2)`` numbers reach the client, which takes the
step. The start is the mode of every 8th row of all chunks, so the fit needs a handful
of passes over the data, and its posterior is the in-memory fit's.

Predictions on dask arrays are lazy dask arrays, computed block by block where the rows
are (as dask-ml does): ``predict_proba(X, return_std=True)`` returns two of them.

Here a :class:`distributed.LocalCluster` of two worker processes stands in for a real
cluster, and the rows are generated *on the workers*, chunk by chunk. On a real cluster
the only change is the client: ``Client("tcp://scheduler-address:8786")`` instead of
``Client(LocalCluster(...))``, with the package installed on the workers. A script that
starts worker processes must guard the code that does so with
``if __name__ == "__main__":``, because the workers re-import the main module.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from skcoreset import BayesianLogisticRegression
from skcoreset.metrics import mean_error_sd

n_samples, n_features, chunk_rows = 400_000, 10, 50_000


def make_dask_data(seed=0):
    """Lazy dask arrays: correlated features, logistic labels (~15 % positives)."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    # AR(0.5)-correlated features: x_j = 0.5 x_{j-1} + sqrt(0.75) z_j
    index = np.arange(n_features)
    lag = 0.5 ** np.abs(np.subtract.outer(index, index))
    X = rng.standard_normal((n_samples, n_features), chunks=(chunk_rows, -1))
    X = X @ np.linalg.cholesky(lag).T
    coef = np.linspace(1.0, -1.0, n_features) / np.sqrt(n_features)
    proba = 1.0 / (1.0 + da.exp(-(X @ coef - 2.0)))
    y = (rng.random(n_samples, chunks=chunk_rows) < proba).astype(np.int64)
    return X, y


# %%
# Fit on the cluster
# ------------------
# ``client.persist`` keeps the generated chunks in the workers' memory: every Newton
# step reads them again, so persist the rows when the cluster can hold them (otherwise
# each pass reads them from where they are stored).
if __name__ == "__main__":
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address="127.0.0.1:0")
    with cluster, Client(cluster) as client:
        X, y = client.persist(list(make_dask_data()))
        print(f"{X.numblocks[0]} chunks of {chunk_rows} rows on "
              f"{len(client.nthreads())} workers")
        fits = {}
        for method in ("laplace", "kl_proximal"):
            start = time.perf_counter()
            fits[method] = BayesianLogisticRegression(method=method).fit(X, y)
            print(f"{method} on the cluster: {time.perf_counter() - start:.2f} s")

        # lazy predictions: nothing is computed until asked for
        proba, proba_std = fits["laplace"].predict_proba(X, return_std=True)
        print(f"predict_proba returned {type(proba).__name__}s of shape {proba.shape}")
        proba_std = proba_std[:20_000].compute()
        p_first = proba[:20_000, 1].compute()
        X_local, y_local = client.gather(client.compute([X, y]))

# %%
# The same rows in memory
# -----------------------
# The cluster fit takes the in-memory fit's steps, so the two Laplace posteriors agree
# to rounding. KL-proximal's Gaussian is the variational optimum, close to Laplace's.
if __name__ == "__main__":
    start = time.perf_counter()
    in_memory = BayesianLogisticRegression().fit(X_local, y_local)
    print(f"laplace in memory: {time.perf_counter() - start:.2f} s")
    print("Laplace, cluster vs in memory: largest mean difference "
          f"{mean_error_sd(fits['laplace'], in_memory):.1e} posterior sd")
    print("KL-proximal (the variational optimum, another posterior) vs Laplace: "
          f"{mean_error_sd(fits['kl_proximal'], in_memory):.3f} sd")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    positions = np.arange(n_features + 1)
    for offset, (label, model) in zip([-0.15, 0.0, 0.15], [
            ("Laplace, dask cluster", fits["laplace"]),
            ("KL-proximal, dask cluster", fits["kl_proximal"]),
            ("Laplace, in memory", in_memory)]):
        ax1.errorbar(positions + offset, model.posterior_.mean,
                     yerr=2 * model.posterior_.std, fmt="o", ms=4, capsize=3,
                     label=label)
    ax1.set_xticks(positions, [f"x{j}" for j in range(n_features)] + ["b"])
    ax1.set_ylabel("posterior mean +- 2 sd")
    ax1.legend(fontsize=8)
    ax2.scatter(p_first, proba_std, s=2, alpha=0.3)
    ax2.set_xlabel("P(y = 1 | x), computed lazily on the cluster")
    ax2.set_ylabel("its posterior sd")
    fig.suptitle(f"Bayesian logistic regression on {n_samples:,} rows held by dask")
    fig.tight_layout()
    plt.show()
