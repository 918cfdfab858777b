"""
PASS-GLM on a dask cluster
==========================

PASS-GLM's sufficient statistics are sums over rows, so they are computed where the data
live: given dask arrays,
:meth:`BayesianLogisticRegression.fit <skcoreset.BayesianLogisticRegression.fit>` with
``method="pass_glm"`` maps every chunk to its statistics on the workers and adds them up
in a tree; only a few small arrays (and a sample of pilot rows) travel to the client,
and the posterior follows in closed form.

Here a :class:`distributed.LocalCluster` of two worker processes stands in for a real
cluster, and the data (500,000 rows, 8 features) are generated lazily *on the workers*,
chunk by chunk, so the client never holds them. For comparison the same rows are then
gathered and fitted in memory, by PASS-GLM and by the exact Laplace approximation.

A script that starts worker processes must guard the code that does so with
``if __name__ == "__main__":``, because the workers re-import the main module.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from skcoreset import BayesianLogisticRegression
from skcoreset.metrics import mean_error_sd

true_coef = np.array([0.8, -0.6, 0.4, -0.2, 0.0, 0.3, -0.5, 0.6])
true_intercept = 0.5
n_samples, chunk_rows = 500_000, 50_000


def make_dask_data(seed=0):
    """Lazy dask arrays: features and labels of a logistic regression, in chunks."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.standard_normal((n_samples, len(true_coef)), chunks=(chunk_rows, -1))
    proba = 1.0 / (1.0 + da.exp(-(X @ true_coef + true_intercept)))
    y = (rng.random(n_samples, chunks=chunk_rows) < proba).astype(np.int64)
    return X, y


# %%
# Fit on the cluster
# ------------------
if __name__ == "__main__":
    from distributed import Client, LocalCluster

    # two single-threaded worker processes on this machine; the scheduler's web server
    # listens on a free loopback port, so it never collides with another cluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address="127.0.0.1:0")
    with cluster, Client(cluster) as client:
        X, y = make_dask_data()
        X, y = client.persist([X, y])  # materialise the chunks on the workers
        print(f"{X.numblocks[0]} chunks of {chunk_rows} rows on "
              f"{len(client.nthreads())} workers")
        start = time.perf_counter()
        on_cluster = BayesianLogisticRegression(method="pass_glm").fit(X, y)
        cluster_time = time.perf_counter() - start
        print(f"PASS-GLM on the cluster: {cluster_time:.2f} s")
        X_local, y_local = client.gather(client.compute([X, y]))

# %%
# The same rows in memory
# -----------------------
# The statistics are sums over rows, and the pilot rows that place the polynomial
# (``pass_radius="auto"``) are a sample of all rows that does not depend on how they are
# chunked: the cluster and memory fit the same posterior, up to rounding. Laplace shows
# the approximation's accuracy. At 500,000 rows the degree-2
# polynomial's error is larger than the posterior's width: both fits warn
# (``PassGLMAccuracyWarning``), and the measured errors below say how far off they are.
# PASS-GLM pays off where the data cannot be held in memory; when they can, Laplace is
# the accurate answer.
if __name__ == "__main__":
    start = time.perf_counter()
    in_memory = BayesianLogisticRegression(method="pass_glm").fit(X_local, y_local)
    memory_time = time.perf_counter() - start
    start = time.perf_counter()
    laplace = BayesianLogisticRegression().fit(X_local, y_local)
    laplace_time = time.perf_counter() - start
    print(f"PASS-GLM in memory: {memory_time:.2f} s, "
          f"Laplace in memory: {laplace_time:.2f} s")
    print("cluster vs in-memory PASS-GLM: largest mean difference "
          f"{mean_error_sd(on_cluster, in_memory):.3f} posterior sd; "
          f"in memory vs Laplace: {mean_error_sd(in_memory, laplace):.3f} sd; "
          f"cluster vs Laplace: {mean_error_sd(on_cluster, laplace):.3f} sd")

    names = [f"coef[{j}]" for j in range(len(true_coef))] + ["intercept"]
    positions = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(9, 4))
    for offset, (label, model) in zip([-0.2, 0.0, 0.2], [
            (f"PASS-GLM, dask cluster ({cluster_time:.1f} s)", on_cluster),
            (f"PASS-GLM, in memory ({memory_time:.1f} s)", in_memory),
            (f"Laplace, in memory ({laplace_time:.1f} s)", laplace)]):
        ax.errorbar(positions + offset, model.posterior_.mean,
                    yerr=2 * model.posterior_.std, fmt="o", ms=4, capsize=3,
                    label=label)
    ax.scatter(positions, np.append(true_coef, true_intercept), marker="_", s=400,
               c="k", label="true value")
    ax.set_xticks(positions, names)
    ax.set_ylabel("posterior mean +- 2 std")
    ax.set_title(f"Bayesian logistic regression on {n_samples:,} rows")
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()
