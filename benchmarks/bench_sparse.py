"""Sparse one-hot features: our fits against scikit-learn's LogisticRegression on the same
CSR matrix.

Run by hand: ``python benchmarks/bench_sparse.py [--quick] [--gram] [--quadforms] [--n N]
[--columns D] [--nnz K] [--M M ...] [--repeats R]`` (defaults: N = 1e6 rows, D = 2,000
one-hot columns, K = 10 nonzeros per row, i.e. 0.5 % density; ``--M auto 1000``; ``--quick``:
N = 1e5).

The rows are K categorical features of D / K levels each, one-hot encoded (as
``OneHotEncoder`` returns them), each feature's levels drawn with skewed (Dirichlet 0.5)
frequencies so that many levels are rare, and logistic labels from random level effects
(about 27 % positives). Every fit runs with one BLAS thread, alternately in one process:

* ``laplace``: ``BayesianLogisticRegression()`` on all rows (the mode by inexact Newton
  steps, conjugate gradients with Hessian products preconditioned by the Hessian at the
  start; the exact Hessian ``X^T W X`` at the mode, summed over row blocks, and its
  Cholesky);
* ``qnc-M``: ``Pipeline([QuasiNewtonCoreset(M), BayesianLogisticRegression()])``, the
  coreset pipeline, for each ``--M`` (``auto``: the default ``QuasiNewtonCoreset()``);
* ``sklearn``: ``LogisticRegression(C=1)`` (L-BFGS; our prior N(0, 1) on the coefficients is
  its penalty at C = prior_scale^2) with its default tolerance.

``--gram`` times the Hessian's Gram ``A^T diag(c) A`` alone (``A = [X, 1]``, ``c = p (1 - p)``
at random coefficients), as the Laplace fit forms it in each Newton step: the position-pair
sum of one-hot rows against the sparse product over row blocks that it replaced (named
baseline, the same code with the position-pair sum switched off), alternately in one run,
on the one-hot rows above, the same rows with each feature's first level dropped
(``OneHotEncoder(drop="first")``: 0-10 nonzeros per row) and text-like rows (20-200
nonzeros per row over 5,000 columns of Zipf frequencies, positive values; N = 2e4), which
must take the sparse product and not slow down.

``--quadforms`` times the per-row quadratic forms ``x_n^T Sigma x_n`` alone (``Sigma`` a
random positive definite matrix), the posterior variances of the linear predictor behind
``predict_proba(return_std=True)``, KL-proximal VI and QuasiNewtonCoreset's candidates: the
position-pair sum of one-hot rows against the generic sum over each row's pairs of nonzeros
that it replaced (named baseline, called directly), alternately in one run, on the one-hot
rows above and the text-like rows of ``--gram`` (mostly left to the generic sum, and not to
slow down); then one fit each (not repeated) of
``BayesianLogisticRegression(method="kl_proximal")`` on 2e5 one-hot rows with the new and
the generic sum.

``--frame``: the same rows as a table to encode, as the user holds them (the K features as
integer level codes, and a mostly-zero log-normal "amount" column the labels do not
depend on), and every fit a pipeline starting with ``ColumnTransformer([OneHotEncoder(),
StandardScaler(with_mean=False)])``, so each time includes the encoding: the coreset
pipeline with the default ``QuasiNewtonCoreset()``, ``BayesianLogisticRegression()`` on
all rows, and scikit-learn's ``LogisticRegression(C=1)``.

Times are the medians of ``--repeats`` rounds; memory is the peak of Python's allocations
(``tracemalloc``, which sees every numpy and scipy array) during the first round's fit, as
a multiple of the sparse matrix's own bytes (data + indices + indptr). The table also gives
the largest distance of scikit-learn's MAP from our posterior mean, and each coreset's
quality against the Laplace fit on all rows: KL(coreset posterior || full posterior) in
nats and the largest posterior-mean error in posterior standard deviations
(:func:`skcoreset.metrics.coreset_quality`).
"""

import argparse
import gc
import time
import tracemalloc
import warnings

import numpy as np
from scipy import sparse
from scipy.special import expit
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from threadpoolctl import threadpool_limits

from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset, _design
from skcoreset.metrics import coreset_quality
from skcoreset.pipeline import Pipeline


def one_hot_rows(n, n_columns, nnz, rng):
    """CSR one-hot codes of ``nnz`` categorical features of ``n_columns / nnz`` levels each
    (skewed level frequencies) and logistic labels from random level effects."""
    levels = n_columns // nnz
    codes = np.empty((n, nnz), dtype=np.int32)
    for j in range(nnz):
        frequencies = rng.dirichlet(np.full(levels, 0.5))
        codes[:, j] = j * levels + rng.choice(levels, size=n, p=frequencies)
    X = sparse.csr_matrix((np.ones(n * nnz), codes.ravel(), np.arange(0, n * nnz + 1, nnz)),
                          shape=(n, levels * nnz))
    effects = rng.normal(0.0, 0.5, size=X.shape[1])
    y = (rng.random(n) < expit(X @ effects - 1.0)).astype(int)
    return X, y


def _budget(text):
    """A coreset budget on the command line: an integer or "auto"."""
    return text if text == "auto" else int(text)


def text_rows(n, n_columns, rng):
    """CSR rows of 20-200 nonzeros (before duplicates are summed) over ``n_columns`` of Zipf
    frequencies, positive values: a TF-IDF-like shape."""
    counts = rng.integers(20, 201, size=n)
    frequencies = 1.0 / np.arange(1, n_columns + 1)
    columns = rng.choice(n_columns, size=counts.sum(), p=frequencies / frequencies.sum())
    X = sparse.csr_matrix((rng.random(len(columns)), columns,
                           np.concatenate([[0], np.cumsum(counts)])), shape=(n, n_columns))
    X.sum_duplicates()
    return X


def gram_shapes(n, n_columns, nnz, rng):
    """The designs of ``--gram``, by name."""
    one_hot, _ = one_hot_rows(n, n_columns, nnz, rng)
    first_levels = np.arange(0, n_columns, n_columns // nnz)
    kept = np.setdiff1d(np.arange(n_columns), first_levels)
    return {f"one-hot, {nnz} per row": one_hot,
            "one-hot, drop first level": one_hot[:, kept].tocsr(),
            "text-like, 20-200 per row": text_rows(min(n, 20_000), 5000, rng)}


def bench_gram(args, n):
    """The ``--gram`` table: position-pair sum against the sparse product, per shape."""
    rng = np.random.default_rng(0)
    shapes = gram_shapes(n, args.columns, args.nnz, rng)
    saved = _design._PAIR_CALL_COST
    ways = {"pairs": saved, "sparse product": np.inf}  # inf: no rows take the pairs
    print("| design | N | columns | nonzeros per row | position pairs (s) | "
          "sparse product, baseline (s) | speed-up | largest difference |")
    print("|---|---|---|---|---|---|---|---|")
    with threadpool_limits(limits=1):
        for name, X in shapes.items():
            c = rng.random(X.shape[0]) * 0.25
            times = {way: [] for way in ways}
            grams = {}
            try:
                for round_ in range(args.repeats):
                    for way, cost in list(ways.items())[::1 - 2 * (round_ % 2)]:  # ABBA
                        _design._PAIR_CALL_COST = cost
                        start = time.perf_counter()
                        grams[way] = _design.weighted_gram(X, c, True)
                        times[way].append(time.perf_counter() - start)
            finally:
                _design._PAIR_CALL_COST = saved
            pairs, product = (np.median(times[way]) for way in ways)
            scale = np.max(np.abs(grams["sparse product"]))
            error = np.max(np.abs(grams["pairs"] - grams["sparse product"])) / scale
            counts = np.diff(X.indptr)
            print(f"| {name} | {X.shape[0]:.0e} | {X.shape[1]} | {counts.min()}-{counts.max()}"
                  f" | {pairs:.3f} | {product:.3f} | {product / pairs:.2f} | {error:.1e} |",
                  flush=True)
            del grams


def bench_quadforms(args, n):
    """The ``--quadforms`` table: position-pair quadratic forms against the generic sum."""
    rng = np.random.default_rng(0)
    one_hot, _ = one_hot_rows(n, args.columns, args.nnz, rng)
    shapes = {f"one-hot, {args.nnz} per row": one_hot,
              "text-like, 20-200 per row": text_rows(min(n, 20_000), 5000, rng)}
    ways = {"pairs": _design._sparse_quadratic_forms,
            "generic": _design._pairwise_quadratic_forms}
    print("| design | N | columns | nonzeros per row | position pairs (s) | "
          "generic sum, baseline (s) | speed-up | largest relative difference |")
    print("|---|---|---|---|---|---|---|---|")
    with threadpool_limits(limits=1):
        for name, X in shapes.items():
            d = X.shape[1]
            factor = rng.normal(size=(d, 50)) / np.sqrt(50)
            sigma = factor @ factor.T + np.eye(d)  # positive definite, cheap to form
            times = {way: [] for way in ways}
            forms = {}
            for round_ in range(args.repeats):
                for way, function in list(ways.items())[::1 - 2 * (round_ % 2)]:  # ABBA
                    start = time.perf_counter()
                    forms[way] = function(X, sigma)
                    times[way].append(time.perf_counter() - start)
            pairs, generic = (np.median(times[way]) for way in ways)
            error = np.max(np.abs(forms["pairs"] - forms["generic"]) / forms["generic"])
            counts = np.diff(X.indptr)
            print(f"| {name} | {X.shape[0]:.0e} | {d} | {counts.min()}-{counts.max()} | "
                  f"{pairs:.3f} | {generic:.3f} | {generic / pairs:.2f} | {error:.1e} |",
                  flush=True)
        X, y = one_hot_rows(min(n, 200_000), args.columns, args.nnz, rng)
        saved = _design._sparse_quadratic_forms
        seconds = {}
        try:
            for way in ways:
                _design._sparse_quadratic_forms = ways[way]
                start = time.perf_counter()
                BayesianLogisticRegression(method="kl_proximal").fit(X, y)
                seconds[way] = time.perf_counter() - start
        finally:
            _design._sparse_quadratic_forms = saved
        print(f"\nBayesianLogisticRegression(method='kl_proximal'), N = {X.shape[0]:.0e}, one "
              f"fit each: {seconds['pairs']:.2f} s with position pairs, "
              f"{seconds['generic']:.2f} s with the generic sum (baseline)")


def sparse_bytes(X):
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


def make_fits(M_values):
    fits = {"laplace": lambda X, y: BayesianLogisticRegression().fit(X, y)}
    for M in M_values:
        fits[f"qnc-{M}"] = lambda X, y, M=M: Pipeline([
            ("coreset", QuasiNewtonCoreset(M=M, random_state=0)),
            ("clf", BayesianLogisticRegression())]).fit(X, y)
    fits["sklearn"] = lambda X, y: LogisticRegression(C=1.0).fit(X, y)
    return fits


def table_rows(n, n_columns, nnz, rng):
    """The rows of :func:`one_hot_rows` (same draws) before encoding: ``nnz`` columns of
    integer level codes, then a log-normal amount, zero in 60 % of the rows."""
    X, y = one_hot_rows(n, n_columns, nnz, rng)
    levels = n_columns // nnz
    codes = X.indices.reshape(n, nnz) - np.arange(nnz) * levels
    amount = rng.lognormal(0.0, 1.0, size=n) * (rng.random(n) >= 0.6)
    return np.column_stack([codes, amount]), y


def encoder(nnz):
    """The user's ``ColumnTransformer``: one-hot codes, the amount scaled keeping zeros."""
    return ColumnTransformer([("codes", OneHotEncoder(), list(range(nnz))),
                              ("amount", StandardScaler(with_mean=False), [nnz])])


def make_table_fits(nnz):
    return {
        "laplace": lambda X, y: Pipeline([("columns", encoder(nnz)),
                                          ("clf", BayesianLogisticRegression())]).fit(X, y),
        "qnc-auto": lambda X, y: Pipeline([
            ("columns", encoder(nnz)), ("coreset", QuasiNewtonCoreset(random_state=0)),
            ("clf", BayesianLogisticRegression())]).fit(X, y),
        "sklearn": lambda X, y: make_pipeline(encoder(nnz),
                                              LogisticRegression(C=1.0)).fit(X, y),
    }


def final_step(model):
    """The fitted estimator at the end of a pipeline, or the model itself."""
    return model.steps[-1][1] if hasattr(model, "steps") else model


def timed(fit, X, y, trace):
    """Seconds, fitted model and (with ``trace``) peak traced bytes of one fit."""
    gc.collect()
    if trace:
        tracemalloc.start()
    try:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # coreset quality warnings: the table has it
            model = fit(X, y)
        seconds = time.perf_counter() - start
        return seconds, model, tracemalloc.get_traced_memory()[1] if trace else None
    finally:
        if trace:
            tracemalloc.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--columns", type=int, default=2000)
    parser.add_argument("--nnz", type=int, default=10)
    parser.add_argument("--M", type=_budget, nargs="+", default=["auto", 1000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--frame", action="store_true",
                        help="fit pipelines from the unencoded table (see above)")
    parser.add_argument("--gram", action="store_true",
                        help="time the Hessian's Gram alone (see above)")
    parser.add_argument("--quadforms", action="store_true",
                        help="time the per-row quadratic forms alone (see above)")
    args = parser.parse_args()
    n = int(1e5 if args.quick else args.n)
    if args.gram:
        return bench_gram(args, n)
    if args.quadforms:
        return bench_quadforms(args, n)
    rng = np.random.default_rng(0)
    if args.frame:
        data, y = table_rows(n, args.columns, args.nnz, rng)
        X = encoder(args.nnz).fit_transform(data).tocsr()
        fits = make_table_fits(args.nnz)
    else:
        X, y = one_hot_rows(n, args.columns, args.nnz, rng)
        data, fits = X, make_fits(args.M)
    size = sparse_bytes(X)
    print(f"N = {n}, {X.shape[1]} columns, {X.nnz / n:.0f} nonzeros per row "
          f"(density {X.nnz / (n * X.shape[1]):.2%}), {y.mean():.1%} positives; sparse "
          f"matrix {size / 2**20:.0f} MiB (dense would be {8 * n * X.shape[1] / 2**30:.1f} "
          "GiB); one BLAS thread"
          + ("; fits from the table, encoding included" if args.frame else ""))
    times = {name: [] for name in fits}
    models, peaks = {}, {}
    with threadpool_limits(limits=1):
        for round_ in range(args.repeats):
            for name, fit in fits.items():
                seconds, models[name], peak = timed(fit, data, y, trace=round_ == 0)
                times[name].append(seconds)
                peaks.setdefault(name, peak)
                print(f"  round {round_ + 1}: {name:<10} {seconds:8.2f} s", flush=True)

    full = final_step(models["laplace"]).posterior_
    sd = np.sqrt(np.diag(full.cov))
    sklearn = final_step(models["sklearn"])
    map_sklearn = np.append(sklearn.coef_.ravel(), sklearn.intercept_)
    base = np.median(times["sklearn"])
    print()
    print("| fit | time (s) | time / sklearn | peak memory / sparse matrix | quality |")
    print("|---|---|---|---|---|")
    for name in fits:
        median = np.median(times[name])
        if name == "sklearn":
            quality = (f"MAP {np.max(np.abs(map_sklearn - full.mean) / sd):.2g} sd from our "
                       "posterior mean")
        elif name == "laplace":
            quality = "the full posterior (reference)"
        else:
            coreset = models[name].named_steps["coreset"]
            q = coreset_quality(coreset, X, y, full_posterior=full)
            quality = (f"{len(coreset.sample_indices_)} rows: KL {q.kl:.3g} nats, mean error "
                       f"{q.max_mean_error_sd:.2g} sd (kl_estimate_ {coreset.kl_estimate_:.3g})")
        print(f"| {name} | {median:.2f} | {median / base:.2f} | {peaks[name] / size:.2f} "
              f"| {quality} |")


if __name__ == "__main__":
    main()
