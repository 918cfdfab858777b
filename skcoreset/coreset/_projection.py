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

    Rescaled by a power of two first, so that neither 1e-300 nor 1e300 under- or
    overflows.
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
    distribution of a family whose weights carry exposures: 0 (the weights as they enter
    the log-likelihood) up to a total of 2^32, and down to that total beyond it (a wider
    distribution, exactly rescaled)."""
    if not total_weight > _MAX_WEIGHTING_TOTAL:
        return 0
    return -int(np.frexp(total_weight / _MAX_WEIGHTING_TOTAL)[1])


def weights_carry_exposures(family):
    """Whether the rows' weights of ``family`` may hold exposures: the Poisson model fits
    counts over an exposure as rates weighted by it (``exposure_as_weight``), the same
    likelihood as the scikit-learn idiom ``fit(X, y / exposure, sample_weight=exposure)``."""
    return hasattr(family, "exposure_as_weight")


def weighting_weights(sample_weight, family):
    """The weights a Hilbert coreset's weighting distribution is fitted on.

    Under a family whose weights may carry exposures (:func:`weights_carry_exposures`):
    the weights as they enter the log-likelihood (scaled down only past a total of 2^32,
    :func:`weighting_exponent`), so that rates weighted by their exposures and counts
    given with ``exposure=`` get the same distribution, the posterior of the counts.
    Dividing them by their mean loses the exposures' scale: rates of about 1e-3 per unit of
    exposure then inform the parameters hardly more than the prior (statsmodels' cancer
    data: GIGA 6.8 nats from the all-rows posterior instead of 0.0003).

    Under the other families the weights say how many rows each row stands for, and are
    divided by their mean (:func:`relative_weights`): the distribution is as informed as
    one observation per row, and depends on the relative weights only. The posterior of
    the total weight itself is narrower the heavier the rows, and a few heavy rows then
    project poorly: its draws see the rows' log-likelihoods as linear functions, which
    cancel in their sum (binomial cells of hundreds of trials, statsmodels' star98 data:
    GIGA at M = 400 is 24 nats from the all-rows posterior on relative weights, 1e5 on the
    weights as they are).
    """
    if weights_carry_exposures(family):
        return np.ldexp(sample_weight, weighting_exponent(float(np.sum(sample_weight))))
    return relative_weights(sample_weight)
