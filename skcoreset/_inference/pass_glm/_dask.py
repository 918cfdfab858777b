"""PASS-GLM on rows held in chunks on a cluster: per-chunk statistics summed by a tree of
tasks (the data never leave the workers), and the pilot from the first chunk."""

from ..._backend import DaskRows
from ._pilot import pilot_fit
from ._statistics import MAX_MONOMIALS, PassGLMStatistics
from ._surrogate import _model_name


def _chunk_statistics(options, X, y, sample_weight):
    # runs on a worker: only the options and this chunk's rows arrive there
    return (PassGLMStatistics.empty(**options).add(X, y, sample_weight),)


def chunked_statistics(rows, family, *, degree=2, radius=4.0, fit_intercept=True,
                       max_monomials=MAX_MONOMIALS, coef=None):
    """PASS-GLM statistics of the rows of a :class:`~skcoreset._backend.DaskRows` storage.

    Each chunk is summarised on its worker by :meth:`PassGLMStatistics.add` and the
    summaries are summed by a tree of tasks: only the small statistics (``O(p^2)`` numbers
    for degree 2) travel, never the data, the "trivially distributed" computation of the
    paper, §5.2. Runs on whatever scheduler is active: dask's default, or a
    ``distributed.Client``. A chunk containing NaN or infinity raises in the task that
    summarises it, so the data are still read once.
    """
    options = dict(family=_model_name(family), n_features=rows.n_features, degree=degree,
                   radius=radius, fit_intercept=fit_intercept, max_monomials=max_monomials,
                   coef=coef)
    PassGLMStatistics.empty(**options)  # validates the options here, not in every task
    return rows.sum(_chunk_statistics, options)[0]


def pass_glm_statistics_dask(X, y, family, *, sample_weight=None, degree=2, radius=4.0,
                             fit_intercept=True, max_monomials=MAX_MONOMIALS, coef=None):
    """PASS-GLM statistics of dask arrays (:func:`chunked_statistics` of their rows).

    Parameters
    ----------
    X : dask.array.Array of shape (n, d)
    y : dask.array.Array or ndarray of shape (n,)
        Encoded as for :func:`pass_glm_statistics`; rechunked to the row chunks of ``X``.
    family : Family or {"logistic", "poisson"}
    sample_weight : dask.array.Array or ndarray of shape (n,), default=None
    degree, radius, fit_intercept, max_monomials, coef
        See :meth:`PassGLMStatistics.empty`.

    Returns
    -------
    PassGLMStatistics
    """
    return chunked_statistics(DaskRows.from_arrays(X, y, sample_weight), family,
                              degree=degree, radius=radius, fit_intercept=fit_intercept,
                              max_monomials=max_monomials, coef=coef)


def chunked_pilot(rows, family, *, prior_prec, fit_intercept, max_rows, tol, max_iter):
    """Pilot from the first row chunk: one chunk is read twice, the rest once."""
    X, y, weight = rows.first_chunk()
    # stand in for all n rows, not just the chunk's
    return pilot_fit(X, y, family, sample_weight=weight * (rows.n / len(y)),
                     prior_prec=prior_prec, fit_intercept=fit_intercept, max_rows=max_rows,
                     tol=tol, max_iter=max_iter)
