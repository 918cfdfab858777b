"""The random projection of Hilbert coresets (Campbell & Broderick 2018): every row's
log-likelihood evaluated at draws of a weighting distribution, as one vector per row."""

import numpy as np

from .._backend import float_rows, row_chunks
from .._design import linear_predictor

# Float64 values per chunk of projected rows (8 MiB; the family's temporaries are a few
# times this).
_CHUNK_ELEMENTS = 2**20


def project_loglik(X, y, sample_weight, family, thetas, fit_intercept, *, dtype=np.float64,
                   return_sum=False, offset=None):
    """Random projection of each row's weighted, centred log-likelihood (Campbell & Broderick
    2018, eq. 39 and §4.3).

    Row n of the result is ``w_n (f_n(theta_j) - mean_j f_n(theta_j))_j / sqrt(J)`` for the J
    draws ``theta_j`` of the weighting distribution, so inner products of rows estimate the
    weighted Fisher-type inner product of the log-likelihood functions. Rows are processed in
    chunks of a few MiB: each chunk is one BLAS product and elementwise family calls in
    float64 (in float32 when ``dtype`` is float32 and the family's ``float32_loglik`` says
    it is safe), then stored in ``dtype``, so the temporaries stay bounded for large N.

    Parameters
    ----------
    X, y, sample_weight : arrays of n rows
    family : Family
    thetas : ndarray of shape (J, p)
    fit_intercept : bool
    dtype : {np.float64, np.float32}, default=np.float64
        Storage type of the result (float32 halves the dominant ``(n, J)`` allocation).
    return_sum : bool, default=False
        Also return the sum of the rows, accumulated in float64.
    offset : ndarray of shape (n,), default=None
        The rows' offsets, a known term of each linear predictor.

    Returns
    -------
    vectors : ndarray of shape (n, J)
    total : ndarray of shape (J,)
        Only when ``return_sum`` is True.
    """
    n, n_proj = X.shape[0], len(thetas)
    vectors = np.empty((n, n_proj), dtype=dtype)
    total = np.zeros(n_proj)
    scale = (sample_weight / np.sqrt(n_proj)).astype(dtype)
    # float32 storage keeps ~7 digits, far finer than the Monte Carlo error of J draws, so
    # a family that can evaluates its log-likelihood in float32 (about 4x faster)
    single = np.dtype(dtype) == np.float32 and family.float32_loglik
    work = np.float32 if single else np.float64
    thetas = np.asarray(thetas, dtype=work)
    for rows in row_chunks(n, n_proj, max_elements=_CHUNK_ELEMENTS):
        eta = linear_predictor(float_rows(X[rows]).astype(work, copy=False), thetas,
                               fit_intercept)
        if offset is not None:
            eta += offset[rows, None].astype(work, copy=False)
        loglik = family.loglik(y[rows], eta)
        loglik -= loglik.mean(axis=1, keepdims=True)
        loglik *= scale[rows, None]
        vectors[rows] = loglik
        if return_sum:
            total += loglik.sum(axis=0, dtype=np.float64)
    return (vectors, total) if return_sum else vectors


def relative_weights(sample_weight, unit=None):
    """``sample_weight`` divided by ``unit``, by default by its mean over the rows of
    positive weight.

    The weighting distribution is fitted on these: it then depends on the relative weights
    only, so multiplying all weights by ``c`` leaves the projection unchanged and multiplies
    the coreset weights by ``c``. When the weights hold the exposures of counts as well
    (rates weighted by ``sample_weight * exposure``), ``unit`` is the mean of the user's
    weights alone (:func:`weight_unit`): the exposures are part of the likelihood, and
    dividing them out would widen the distribution by about ``sqrt(mean exposure)``.
    Rescaled by a power of two first, so that neither 1e-300 nor 1e300 under- or
    overflows.
    """
    positive = sample_weight > 0
    if not positive.any():
        return sample_weight.astype(float)
    top = np.frexp(sample_weight.max() if unit is None else unit)[1]
    scaled = np.ldexp(sample_weight, -top)
    return scaled / (scaled[positive].mean() if unit is None else np.ldexp(unit, -top))


def weight_unit(sample_weight, exposure):
    """The unit of :func:`relative_weights` for rows whose weights ``sample_weight`` are
    the user's weights times ``exposure``: the mean of the user's weights over the rows of
    positive weight (``None`` if there are none).
    """
    user = sample_weight / exposure
    positive = user > 0
    if not positive.any():
        return None
    top = np.frexp(user.max())[1]
    return float(np.ldexp(np.ldexp(user[positive], -top).mean(), top))
