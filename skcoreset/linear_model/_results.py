"""What a fit says about its rows, as statsmodels' GLM results do: the log-likelihood,
deviance and information criteria at the posterior mean, and residuals; and the training
rows a fit keeps for them (private copies, read through :func:`kept_rows` only).

The sums over the training rows are one pass in row chunks (rows in memory, a
``np.memmap``, or a tree of tasks over dask chunks). Counts over an exposure are summed as
the estimators fit them: the Poisson model's rates ``y / e`` weighted by ``e`` (whose
deviance is that of the counts, and whose log-likelihood differs from the counts' by the
constant the fit keeps), the negative binomial model's counts with an offset.
"""

import zlib
from typing import NamedTuple

import numpy as np
from scipy import sparse

from .._backend import float_rows, row_chunks, row_slice, row_width
from .._design import linear_predictor
from ..families import BinaryFamily

# the mean that stands for 0 in a saturated model's linear predictor (its log is finite)
_TINY_MEAN = 1e-300
RESIDUAL_KINDS = ("response", "pearson", "deviance")
# Training rows are kept (copied) for to_arviz and loo up to this many stored values (rows
# times their width plus the target, weight and exposure): 2**24 float64 values, 128 MB.
KEPT_VALUES = 2**24
# Rows of up to this many values are copied; larger ones are kept by reference with a
# checksum verified on every read: a copy would double the memory a large fit needs (a
# one-hot CSR matrix of 1e6 rows is 118 MiB), while a changed array is still never read.
COPIED_VALUES = 2**20


class KeptRows(NamedTuple):
    """Private copies of a fit's training rows: X, the encoded targets, the number of
    trials of each row (binomial cells, or None), the sample weights (None when all are 1)
    and each row's offset (of counts ``offset + log(exposure)``, any finite value; or
    None)."""

    X: object
    y: np.ndarray
    n_trials: np.ndarray | None
    weights: np.ndarray | None
    offset: np.ndarray | None = None


def _copy(array):
    """A copy owning its memory (a ``np.memmap``'s rows read into memory, a sparse
    matrix's arrays copied)."""
    if sparse.issparse(array):
        return array.copy()
    return np.array(array, copy=True)


def _checksum(X):
    """CRC-32 of the values of X (an ndarray, ``np.memmap`` or sparse matrix's arrays), read
    in row chunks."""
    parts = (X.data, X.indices, X.indptr) if sparse.issparse(X) else (np.asarray(X),)
    crc = 0
    for part in parts:
        for rows in row_chunks(part.shape[0], row_width(part) if part.ndim == 2 else 1):
            block = np.ascontiguousarray(part[rows])
            crc = zlib.crc32(memoryview(block).cast("B"), crc)
    return crc


class _Referenced:
    """A reference to the caller's rows and their checksum, verified by :meth:`read`."""

    def __init__(self, X):
        self.X, self.checksum = X, _checksum(X)

    def read(self):
        if _checksum(self.X) != self.checksum:
            raise ValueError(
                "The training rows X were changed in place after fit (rows of more than "
                f"{COPIED_VALUES:,} values are kept by reference, not copied): pass the "
                "rows to evaluate, e.g. to_arviz(X, y) or loo(X, y), or fit again.")
        return self.X


def _kept_array(X):
    """A private copy of X when small, else a checked reference (:class:`_Referenced`)."""
    return _copy(X) if _n_values(X) <= COPIED_VALUES else _Referenced(X)


def _read(X):
    return X.read() if isinstance(X, _Referenced) else X


def _n_values(X):
    return X.shape[0] * (row_width(X) + 3)


class _DaskReference:
    """The storage of a fit's dask rows (their graph: nothing computed), for :meth:`loo`;
    left out when the estimator is pickled (a graph may embed its arrays), which then
    needs the rows passed again."""

    def __init__(self, rows):
        self.rows = rows

    def __reduce__(self):
        return (type(None), ())


def keep_dask_rows(estimator, rows):
    """Keep a reference to ``rows``, the encoded storage of a fit's dask arrays (targets
    and weights as fitted), for :meth:`loo`, which sums over their chunks where they
    live."""
    estimator._kept_rows = _DaskReference(rows)


def rows_info(n_rows, total_weight, weighted):
    """What the header of ``summary()`` says of the rows of a fit."""
    return {"rows": int(n_rows), "total_weight": float(total_weight), "weighted": weighted}


def keep_rows(estimator, X, y_encoded, sample_weight, n_trials, offset=None, y_given=None):
    """Keep the training rows for :meth:`to_arviz` and :meth:`loo`, so that changing the
    caller's arrays after ``fit`` changes nothing (copies of the targets, weights, numbers
    of trials and offsets; of X up to ``COPIED_VALUES`` values, beyond a reference whose
    changes are refused): at most ``KEPT_VALUES`` values (else, or with ``X=None``,
    nothing is kept). ``y_given``: the targets as the caller passed them, when
    ``y_encoded`` was made from them; encoded targets sharing no memory with them are
    the fit's own and kept as they are (a copy would be a second vector of every row)."""
    keep = X is not None and _n_values(X) <= KEPT_VALUES
    weights = None
    if keep and not np.all(np.asarray(sample_weight) == 1.0):
        weights = _copy(sample_weight)
    private = (y_given is not None and isinstance(y_encoded, np.ndarray)
               and not np.may_share_memory(y_encoded, np.asarray(y_given)))
    estimator._kept_rows = (KeptRows(_kept_array(X), y_encoded if private else _copy(y_encoded),
                                     None if n_trials is None else _copy(n_trials), weights,
                                     None if offset is None else _copy(offset))
                            if keep else None)


def copied_rows(X, y):
    """Copies of the rows ``X`` (an array, sparse matrix or DataFrame, as a pipeline's
    first step takes them) and their targets when they fit in ``KEPT_VALUES``, else None
    (the kept rows of :meth:`skcoreset.pipeline.Pipeline.loo`)."""
    if y is None or not hasattr(X, "shape") or len(X.shape) != 2 or hasattr(X, "dask"):
        return None
    width = row_width(X) if sparse.issparse(X) else X.shape[1]
    if X.shape[0] * (width + 3) > KEPT_VALUES:
        return None
    X = X.copy(deep=True) if hasattr(X, "iloc") else _kept_array(X)
    return X, (y.copy(deep=True) if hasattr(y, "iloc") else _copy(y))


def read_copied_rows(kept):
    """The ``(X, y)`` of :func:`copied_rows`, X verified unchanged when referenced."""
    X, y = kept
    return _read(X), y


def kept_rows(estimator):
    """The training rows kept by :func:`keep_rows` (a :class:`KeptRows`), the storage of
    dask rows kept by :func:`keep_dask_rows`, or None."""
    rows = getattr(estimator, "_kept_rows", None)
    if isinstance(rows, _DaskReference):
        return rows.rows
    return None if rows is None else rows._replace(X=_read(rows.X))


def saturated_loglik(family, y):
    """Each row's log-likelihood under the saturated model, whose mean is the row's target:
    0 for binary targets, otherwise the family's at ``link(y)`` (a zero count at a mean of
    1e-300, its limit to rounding)."""
    if isinstance(family, BinaryFamily):
        return np.zeros(len(y))
    return family.loglik(y, family.link(np.maximum(y, _TINY_MEAN)))


def _fit_sums(family, theta, fit_intercept, X, y, w, offset=None):
    """``(sum_n w_n log p(y_n | theta), sum_n w_n [saturated - log p(y_n | theta)])`` of some
    rows (with their offsets), in row chunks."""
    loglik = shortfall = 0.0
    for rows in row_chunks(X.shape[0], row_width(X) + 1):
        # the chunk's rows shared with X (scipy's row slicing copies a CSR matrix's)
        eta = linear_predictor(float_rows(row_slice(X, rows)), theta, fit_intercept)
        if offset is not None:
            eta = eta + offset[rows]
        terms = family.loglik(y[rows], eta)
        loglik += w[rows] @ terms
        shortfall += w[rows] @ (saturated_loglik(family, y[rows]) - terms)
    return loglik, shortfall


def set_fit_statistics(estimator, rows, log_constant=0.0):
    """Set ``loglik_``, ``deviance_``, ``aic_`` and ``bic_`` of a fitted estimator from its
    training rows (a storage with the targets and weights it was fitted on, and the offsets
    of the fit); ``log_constant`` turns the log-likelihood of weighted rates into that of
    the counts over their exposure."""
    theta = estimator.posterior_.mean
    loglik, shortfall = rows.sum(_fit_sums, estimator.family_, theta,
                                 estimator.fit_intercept)
    n_params = len(theta) + (1 if estimator._family().unresolved else 0)
    n_obs = estimator._fit_info["total_weight"]
    estimator.loglik_ = float(loglik) + log_constant
    estimator.deviance_ = 2.0 * float(shortfall)
    estimator.aic_ = -2.0 * estimator.loglik_ + 2.0 * n_params
    estimator.bic_ = -2.0 * estimator.loglik_ + np.log(n_obs) * n_params
    return estimator


def forget_fit_statistics(estimator):
    """Delete the statistics of :func:`set_fit_statistics` (a stream's rows are not kept,
    and its earlier chunks were fitted at other parameters)."""
    for name in ("loglik_", "deviance_", "aic_", "bic_"):
        if hasattr(estimator, name):
            delattr(estimator, name)


def residuals(family, eta, y, observed, kind, scale=None):
    """Residuals of each row at linear predictors ``eta`` (of the posterior mean).

    Parameters
    ----------
    family : Family
    eta : ndarray of shape (n,)
    y : ndarray of shape (n,)
        Targets encoded for ``family`` (the rates ``y / e`` of counts over an exposure
        ``e`` that the family fits as weighted rates).
    observed : ndarray of shape (n,)
        The targets as numbers: 0/1 for binary targets, else ``y``.
    kind : {"response", "pearson", "deviance"}
    scale : ndarray of shape (n,), default=None
        The exposure ``e`` of rates (``y`` and the mean are rates per unit of it).

    Returns
    -------
    residuals : ndarray of shape (n,)
        ``y - mu``; ``(y - mu) / sqrt(V(mu))`` with the family's variance function ``V``;
        ``sign(y - mu) sqrt(d)`` with ``d`` the row's deviance, twice its log-likelihood
        below the saturated model's. Over an exposure, of the counts ``e y`` and their
        mean ``e mu``.
    """
    mu = family.mean(eta)
    diff = observed - mu
    e = 1.0 if scale is None else scale
    if kind == "response":
        return e * diff
    if kind == "pearson":
        variance = family.predictive_variance(mu, np.zeros_like(mu))
        with np.errstate(divide="ignore", invalid="ignore"):
            pearson = np.sqrt(e) * diff / np.sqrt(variance)
        # a mean that rounds to a certain outcome (a probability of 1) which y is: 0
        return np.where(diff == 0, 0.0, pearson)
    unit = 2.0 * e * (saturated_loglik(family, y) - family.loglik(y, eta))
    return np.sign(diff) * np.sqrt(np.maximum(unit, 0.0))
