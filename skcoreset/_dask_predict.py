"""Per-row work of the estimators on dask arrays: predictions, scores, and counts observed
over an exposure.

Predictions are lazy dask arrays, computed block by block where the rows live (as dask-ml's
``ParallelPostFit`` does): the fitted estimator enters the graph once and each row block of
X calls its in-memory method. Scores are numbers: their sums over rows are computed.
"""

from functools import partial

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._backend import block_rng, map_row_blocks
from ._validation import exposure_of, linear_offset


def _check_X(estimator, X):
    """A dask X of the fitted features, checked without computing it."""
    import dask.array as da

    check_is_fitted(estimator)
    X = da.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got an array with {X.ndim} dimensions.")
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} is "
                         f"expecting {estimator.n_features_in_} features as input.")
    return X


def _call(method, names, options, estimator, X, *rows, block):
    out = getattr(estimator, method)(X, **dict(zip(names, rows)), **options)
    return np.column_stack(out) if isinstance(out, tuple) else out


def predict_lazily(estimator, method, X, *, rows=(), columns=None, dtype=np.float64,
                   **options):
    """``estimator.method(X_block, **row_blocks, **options)`` of every row block of the dask
    array X, lazily.

    ``rows`` are ``(keyword, values)`` pairs of per-row arguments (dask arrays, arrays or
    scalars; e.g. the exposure), passed in X's row blocks. A method returning a tuple of
    per-row arrays gives them as the columns of one array (``columns`` wide), so that one
    task per block computes them all: split it with ``[:, j]``.
    """
    X = _check_X(estimator, X)
    names = tuple(name for name, _ in rows)
    return map_row_blocks(partial(_call, method, names, options), X, *rows,
                          shared=(estimator,), columns=columns, dtype=dtype)


def _draw_targets(seed, names, estimator, theta, X, *rows, block):
    # (rows, draws): the rows stay the leading axis of the blocks
    return estimator._draw_targets(X, theta, block_rng(seed, block),
                                   **dict(zip(names, rows))).T


def sample_y_lazily(estimator, X, n_draws, rng, rows=()):
    """Posterior predictive draws of y at the rows of a dask X, shape ``(n_draws, n)``:
    the parameter draws are made here, once, and every row block draws its targets from a
    random stream fixed by ``rng`` and the block's number (reproducible whatever the
    scheduler). ``rows``: per-row arguments of ``_draw_targets`` (the log exposure), as in
    :func:`predict_lazily`."""
    X = _check_X(estimator, X)
    theta = estimator.posterior_.sample(n_draws, random_state=rng)
    seed = rng.randint(np.iinfo(np.int32).max)
    dtype = estimator._draw_targets(np.zeros((1, X.shape[1])), theta[:1],
                                    np.random.RandomState(0)).dtype
    names = tuple(name for name, _ in rows)
    return map_row_blocks(partial(_draw_targets, seed, names), X, *rows,
                          shared=(estimator, theta), columns=n_draws, dtype=dtype).T


def _accuracy_terms(names, estimator, X, y, sample_weight, *rows, block):
    right = estimator.predict(X, **dict(zip(names, rows))) == y
    return np.column_stack([sample_weight * right, sample_weight])


def accuracy(estimator, X, y, sample_weight=None, rows=()):
    """Weighted fraction of the rows of a dask X whose class :meth:`predict` (with the
    per-row keyword arguments ``rows``, e.g. the offset) gets right (scikit-learn's
    ``accuracy_score``)."""
    X = _check_X(estimator, X)
    weight = 1.0 if sample_weight is None else sample_weight
    names = tuple(name for name, _ in rows)
    terms = map_row_blocks(partial(_accuracy_terms, names), X, ("y", y),
                           ("sample_weight", weight), *rows, shared=(estimator,), columns=2)
    correct, total = terms.sum(axis=0).compute()
    return float(correct / total)


def _r2_terms(names, method, mean, estimator, X, y, sample_weight, *rows, block):
    residual = y - getattr(estimator, method)(X, **dict(zip(names, rows)))
    return np.column_stack([sample_weight * residual**2, sample_weight * (y - mean) ** 2])


def r2(estimator, X, y, sample_weight=None, rows=(), method="predict"):
    """Coefficient of determination of the predictions ``method`` (:meth:`predict`, with
    the per-row keyword arguments ``rows``, e.g. the log exposure) at the rows of a dask X
    (scikit-learn's ``r2_score``): one pass for the weighted mean of y, one for the squared
    residuals."""
    import dask.array as da

    X = _check_X(estimator, X)
    weight = 1.0 if sample_weight is None else sample_weight
    targets = map_row_blocks(_target_terms, X, ("y", y), ("sample_weight", weight), columns=2)
    weighted_sum, total = targets.sum(axis=0)
    names = tuple(name for name, _ in rows)
    terms = map_row_blocks(partial(_r2_terms, names, method), X, ("y", y),
                           ("sample_weight", weight), *rows,
                           shared=(weighted_sum / total, estimator), columns=2)
    residual, spread = da.compute(*terms.sum(axis=0))
    if spread == 0:  # constant y: scikit-learn's convention
        return 1.0 if residual == 0 else 0.0
    return float(1.0 - residual / spread)


def _target_terms(X, y, sample_weight, block):
    return np.column_stack([sample_weight * y, sample_weight])


def _exposure_block(family, X, y, sample_weight, log_exposure, block):
    rates, weights, constant = family.exposure_as_weight(
        y.astype(float), sample_weight, exposure_of(np.asarray(log_exposure, dtype=float)))
    # the block's log-likelihood constant in its first row: the column sums to the total
    constants = np.zeros(len(y))
    constants[:1] = constant
    return np.column_stack([rates, weights, constants])


def exposure_as_weight_lazily(family, X, y, sample_weight, log_exposure):
    """:meth:`PoissonFamily.exposure_as_weight
    <skcoreset.families.PoissonFamily.exposure_as_weight>` of the rows of a dask X over the
    exposure :func:`~skcoreset._validation.exposure_of` ``log_exposure`` (a lazy
    :func:`linear_offset_lazily`): the rates and weights as dask arrays held on the
    cluster, and the log-likelihood constant (a pass over y, the weights and the exposure).
    An invalid exposure raises in the task that reads it, with the message of in-memory
    input."""
    import dask

    out = map_row_blocks(partial(_exposure_block, family), X, ("y", y),
                         ("sample_weight", 1.0 if sample_weight is None else sample_weight),
                         ("log_exposure", log_exposure), columns=3)
    rates, weights, constants = dask.persist(out[:, 0], out[:, 1], out[:, 2])
    return rates, weights, float(constants.sum().compute())


def _offset_block(names, link_name, X, *values, block):
    given = dict(zip(names, values))
    return linear_offset(given.get("exposure"), given.get("offset"), X.shape[0], link_name)


def linear_offset_lazily(X, exposure, offset, link_name):
    """:func:`~skcoreset._validation.linear_offset` of the rows of a dask X, as a lazy dask
    array: invalid values raise in the task that reads them, with the message of in-memory
    input."""
    rows = [(name, values) for name, values in (("exposure", exposure), ("offset", offset))
            if values is not None]
    return map_row_blocks(partial(_offset_block, tuple(name for name, _ in rows), link_name),
                          X, *rows)
