"""PASS-GLM on dask arrays: per-chunk statistics summed by a tree reduction (the data never
leave the workers), and the pilot from the first chunk."""

import functools

import numpy as np

from ._pilot import pilot_fit
from ._statistics import MAX_MONOMIALS, PassGLMStatistics
from ._surrogate import _model_name


def _chunk_statistics(options, X, y, sample_weight):
    # runs on a worker: only the options and this chunk's rows arrive there
    return PassGLMStatistics.empty(**options).add(X, y, sample_weight)


def _merge_all(*stats):
    return functools.reduce(PassGLMStatistics.merge, stats)


def pass_glm_statistics_dask(X, y, family, *, sample_weight=None, degree=2, radius=4.0,
                             fit_intercept=True, max_monomials=MAX_MONOMIALS, split_every=8,
                             compute=True, coef=None):
    """PASS-GLM statistics of dask arrays, computed chunk by chunk where the data live.

    Each row chunk of ``X`` (rechunked so that all columns are in one block) is summarised on
    its worker by :meth:`PassGLMStatistics.add`; the summaries are summed by a tree reduction
    with fan-in ``split_every``. Only the small statistics (``O(p^2)`` numbers for degree 2)
    travel, never the data — the "trivially distributed" computation of the paper, §5.2.
    Runs on whatever scheduler is active: dask's default, or a ``distributed.Client``.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d)
    y : dask.array.Array or ndarray of shape (n,)
        Encoded as for :func:`pass_glm_statistics`; rechunked to the row chunks of ``X``.
    family : Family or {"logistic", "poisson"}
    sample_weight : dask.array.Array or ndarray of shape (n,), default=None
    degree, radius, fit_intercept, max_monomials, coef
        See :meth:`PassGLMStatistics.empty`.
    split_every : int, default=8
        Fan-in of the reduction tree.
    compute : bool, default=True
        Return the computed statistics; otherwise a ``dask.delayed`` object for them.

    Returns
    -------
    PassGLMStatistics (or a Delayed when ``compute=False``)

    Raises
    ------
    ValueError
        When a chunk contains NaN or infinity (raised by the worker that summarises it, so the
        data are still read once).
    """
    import dask
    import dask.array as da

    X = da.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got {X.ndim} dimensions.")
    X = X.rechunk({1: -1})
    options = dict(family=_model_name(family), n_features=X.shape[1], degree=degree,
                   radius=radius, fit_intercept=fit_intercept, max_monomials=max_monomials,
                   coef=coef)
    template = PassGLMStatistics.empty(**options)  # validates the options on the client

    def rows_like_X(v):
        v = da.asarray(v)
        if v.shape != (X.shape[0],):
            raise ValueError(f"Expected shape ({X.shape[0]},), got {v.shape}.")
        return v.rechunk((X.chunks[0],)).to_delayed().ravel()

    X_blocks = X.to_delayed().ravel()
    y_blocks = rows_like_X(y)
    w_blocks = ([None] * len(X_blocks) if sample_weight is None
                else rows_like_X(sample_weight))
    chunk_stats = dask.delayed(_chunk_statistics, pure=True)
    parts = [chunk_stats(options, xb, yb, wb)
             for xb, yb, wb in zip(X_blocks, y_blocks, w_blocks)]
    merge = dask.delayed(_merge_all, pure=True)
    while len(parts) > 1:
        parts = [merge(*parts[i:i + split_every]) for i in range(0, len(parts), split_every)]
    if not parts:
        return template if compute else dask.delayed(template)
    return parts[0].compute() if compute else parts[0]


def _dask_pilot(X, y, family, sample_weight, prior_prec, fit_intercept, max_rows, tol,
                max_iter):
    """Pilot from the first row chunk: one chunk is read twice, the rest once."""
    import dask
    import dask.array as da

    X = da.asarray(X).rechunk({1: -1})
    rows = X.chunks[0][0] if X.chunks[0] else 0
    first = [X[:rows], da.asarray(y)[:rows]]
    if sample_weight is not None:
        first.append(da.asarray(sample_weight)[:rows])
    first = dask.compute(*first)
    weight = np.ones(rows) if sample_weight is None else np.asarray(first[2], dtype=float)
    # stand in for all n rows, not just the chunk's
    return pilot_fit(first[0], first[1], family, sample_weight=weight * (X.shape[0] / rows),
                     prior_prec=prior_prec, fit_intercept=fit_intercept, max_rows=max_rows,
                     tol=tol, max_iter=max_iter)
