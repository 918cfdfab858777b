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


def relative_weights(sample_weight):
    """``sample_weight`` divided by its mean over the rows of positive weight.

    For what depends on the relative weights only (the k-means of sensitivity sampling),
    not for the weighting distribution of Hilbert coresets, which is fitted on the weights
    as they enter the log-likelihood (a row of weight ``w`` stands for ``w`` rows, and
    rates weighted by their exposures are counts over those exposures). Rescaled by a
    power of two first, so that neither 1e-300 nor 1e300 under- or overflows.
    """
    positive = sample_weight > 0
    if not positive.any():
        return sample_weight.astype(float)
    top = np.frexp(sample_weight.max())[1]
    scaled = np.ldexp(sample_weight, -top)
    return scaled / scaled[positive].mean()


# The largest total weight a weighting distribution is fitted on (as many rows as 2^32). Its
# draws must differ in their log-likelihoods by more than the float32 rounding of the
# projected values (~1e-7 relative); the posterior of a total weight W is about W^-1/2 wide,
# so past 2^32 (posterior sds ~1e-5) the draws would be lost in it and the projection noise.
_MAX_WEIGHTING_TOTAL = 2.0**32


def weighting_exponent(total_weight):
    """The power of two by which rows of ``total_weight`` are scaled for the weighting
    distribution: 0 (the weights as they enter the log-likelihood) up to a total of
    2^32, and down to that total beyond it (a wider distribution, exactly rescaled)."""
    if not total_weight > _MAX_WEIGHTING_TOTAL:
        return 0
    return -int(np.frexp(total_weight / _MAX_WEIGHTING_TOTAL)[1])


def weighting_weights(sample_weight):
    """The weights a Hilbert coreset's weighting distribution is fitted on: the rows'
    weights as they enter the log-likelihood (a row of weight ``w`` stands for ``w`` rows,
    and the rates of ``fit(X, y / exposure, sample_weight=exposure)`` are counts over those
    exposures, as with ``exposure=``), so that it is the posterior the coreset must match,
    not one of the weights over their mean; scaled down by a power of two only when they
    total more than 2^32 (:func:`weighting_exponent`)."""
    return np.ldexp(sample_weight, weighting_exponent(float(np.sum(sample_weight))))
