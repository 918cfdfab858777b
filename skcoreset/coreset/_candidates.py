"""Candidate rows that hold the informative ones: an importance from the full data's Laplace
approximation, drawn by priority sampling in one pass over row chunks.

The rule (``candidates="auto"`` of :class:`QuasiNewtonCoreset`):

1. a pilot: a uniform subsample of ``max(5000, 20 p)`` rows, class-balanced for binary
   targets, fitted by Laplace with inverse-probability weights;
2. the full data's Laplace approximation ``N(theta*, Sigma)`` by Newton's method from the
   pilot's mode, every gradient and Hessian summed over row chunks;
3. every row's importance under it, with ``eta_n = a_n . theta*`` and
   ``v_n = a_n^T Sigma a_n`` the posterior variance of its linear predictor:

       lambda_n = w_n (0.2 + 0.8 (score_n / mean(score) + leverage_n / mean(leverage)) / 2),
       score_n = |d1_n| sqrt(v_n),   leverage_n = c_n v_n,

   with ``d1_n`` and ``-c_n`` the first and second derivatives of the row's log-likelihood
   in ``eta`` (means over the pilot). The score is the posterior standard deviation of the
   row's potential to first order (large for rows the model fits badly: the positives of a
   rare class, the extreme counts of a heavy tail); the leverage is the row's share of the
   posterior precision, ``sum_n leverage_n = tr(H Sigma)`` (large for rows with extreme
   linear predictors where the curvature grows, e.g. a log-normal covariate under the log
   link). The uniform share keeps every row drawable, so the inverse-probability weights
   have bounded variance even where the importance is wrong (defensive importance
   sampling, Hesterberg 1995);
4. priority sampling on ``lambda`` (Duffield, Lund & Thorup, 2007), per class for binary
   targets with the budget split in proportion to the classes' total importance: the rows
   of highest ``lambda_n / u_n`` for uniform ``u_n``, weighted ``w_n / min(1, lambda_n / z)``
   (``z`` the next priority) -- unbiased for every sum over rows, rows of dominant importance
   kept with certainty and their own weight, and the candidates of a smaller budget a subset
   of those of a larger one.
"""

from typing import NamedTuple

import numpy as np
from scipy.linalg import lapack

from .._backend import float_rows
from .._design import latent_variances
from .._inference import find_mode, laplace, log_posterior_of, warn_not_converged
from .._linalg import stable_cholesky

# Pilot rows: enough for a Laplace fit within a few posterior sds of the full mode and a
# Hessian within ~10 % of the full one, so that chord steps on all rows contract fast.
_PILOT_ROWS, _PILOT_ROWS_PER_PARAM = 5000, 100
# Share of the uniform distribution in the importance mixture.
UNIFORM_SHARE = 0.2
# Newton tolerance (half the decrement, nats) of the full data's mode: far below any KL
# target, so the calibration targets are those of the mode.
_LAPLACE_TOL = 1e-6
_LAPLACE_MAX_ITER = 100


class FullLaplace(NamedTuple):
    """The full data's Laplace approximation and log-likelihood derivatives at its mode."""

    mean: np.ndarray
    precision: np.ndarray
    grad_sum: np.ndarray
    neg_hessian_sum: np.ndarray


class Candidates(NamedTuple):
    """The full data's Laplace approximation, the candidate rows (a
    :class:`~skcoreset._backend._sampling.PrioritySample`, drawn at any budget up to its
    capacity) and, when asked for, an independent priority sample of the same importance
    for subsampled sums."""

    laplace: FullLaplace
    rows: object
    subsample: object


def _ones(X, y, w, offset=None):
    return np.ones(len(y))


def row_scores(theta, factor, fit_intercept, family, X, y, offset=None):
    """``(score, leverage)`` of every row (with its offset) under ``N(theta, F^T F)``
    (``factor`` is ``F``)."""
    eta, v = latent_variances(float_rows(X), factor, fit_intercept, dtype=np.float32,
                              mean=theta)
    if offset is not None:
        eta = eta + offset
    score = np.abs(family.d1(y, eta)) * np.sqrt(v)
    leverage = np.maximum(-family.d2(y, eta), 0.0) * v
    return score, leverage


def row_importance(theta, factor, fit_intercept, family, scales, X, y, w, offset=None):
    """The importance ``lambda_n / w_n`` of the rule above for the rows of a chunk (with
    their offsets); ``scales`` are the mean score and leverage."""
    score, leverage = row_scores(theta, factor, fit_intercept, family, X, y, offset)
    informative = 0.5 * (score / scales[0] + leverage / scales[1])
    return UNIFORM_SHARE + (1.0 - UNIFORM_SHARE) * informative


def full_laplace(data, family, prior_prec, fit_intercept, start):
    """:class:`FullLaplace` of the rows of a storage, from a pilot's Laplace approximation
    ``start`` (its weights summing to the full data's).

    The Laplace fit of the estimators (:func:`~skcoreset._inference.find_mode`)
    from the pilot's mode, whose Hessian steers the first (chord) steps: each is one pass
    over the rows in memory, or one reduction over the chunks of rows on a cluster
    (:func:`~skcoreset._inference.log_posterior_of`). The exact Hessian and the
    gradient at the mode come with the fit.
    """
    log_post = log_posterior_of(data, family, prior_prec, fit_intercept)
    mode = find_mode(log_post, start.mean, neg_hessian0=start.precision, tol=_LAPLACE_TOL,
                     max_iter=_LAPLACE_MAX_ITER)
    if not mode.converged:
        warn_not_converged("Newton's method for the full data's Laplace approximation",
                           _LAPLACE_MAX_ITER)
    neg_hessian_sum = mode.neg_hessian.copy()  # minus the prior, on the diagonal in place
    neg_hessian_sum[np.diag_indices_from(neg_hessian_sum)] -= prior_prec
    return FullLaplace(mode.x, mode.neg_hessian, mode.gradient + prior_prec * mode.x,
                       neg_hessian_sum)


def _pilot(data, family, prior_prec, fit_intercept, rng, stratify):
    size = max(_PILOT_ROWS, _PILOT_ROWS_PER_PARAM * len(prior_prec))
    sample, = data.priority_sample((size,), rng, _ones, stratify=stratify)
    return sample.draw(size, balanced=True)


def draw_candidates(data, family, prior_prec, fit_intercept, capacity, rng, *, stratify,
                    uniform=False, subsample=None):
    """Candidate rows by the rule of this module.

    Parameters
    ----------
    data : InMemoryRows or DaskRows
    family : Family
    prior_prec : ndarray of shape (p,)
    fit_intercept : bool
    capacity : int
        Largest budget the candidates will be drawn at.
    rng : numpy.random.RandomState
    stratify : bool
        Sample each class separately (binary targets).
    uniform : bool, default=False
        Draw the candidates uniformly (priority sampling on the incoming weights alone)
        instead of by importance; the full data's Laplace approximation is fitted all the
        same.
    subsample : int, default=None
        Also draw an independent priority sample of this many rows.

    Returns
    -------
    Candidates
    """
    pilot = _pilot(data, family, prior_prec, fit_intercept, rng, stratify)
    start = laplace(pilot.X, pilot.y, family, sample_weight=pilot.weights,
                    prior_prec=prior_prec, fit_intercept=fit_intercept,
                    offset=pilot.offset).posterior
    fit = full_laplace(data, family, prior_prec, fit_intercept, start)
    # latent variances a^T Sigma a = ||F a||^2 with F = C^-1 for the precision's C C^T
    factor = lapack.dtrtri(stable_cholesky(fit.precision), lower=1)[0]
    score, leverage = row_scores(fit.mean, factor, fit_intercept, family, pilot.X, pilot.y,
                                 pilot.offset)
    scales = [max(np.average(values, weights=pilot.weights), np.finfo(float).tiny)
              for values in (score, leverage)]
    capacities = (capacity,) if subsample is None else (capacity, subsample)
    if uniform:
        samples = data.priority_sample(capacities, rng, _ones, stratify=stratify)
    else:
        samples = data.priority_sample(capacities, rng, row_importance, fit.mean, factor,
                                       fit_intercept, family, scales, stratify=stratify)
    return Candidates(fit, samples[0], samples[1] if subsample is not None else None)
