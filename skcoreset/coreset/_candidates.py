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
from scipy import linalg
from scipy.linalg import lapack

from .._backend import float_rows, row_chunks, row_width
from .._design import latent_variances, linear_predictor, rmatvec, weighted_gram
from .._inference import laplace, newton_map
from .._linalg import stable_cholesky
from ._merge_reduce import SummedLogPosterior, loglik_sums

# Pilot rows: enough for a Laplace fit within a few posterior sds of the full mode and a
# Hessian within ~10 % of the full one, so that chord steps on all rows contract fast.
_PILOT_ROWS, _PILOT_ROWS_PER_PARAM = 5000, 100
# Share of the uniform distribution in the importance mixture.
UNIFORM_SHARE = 0.2
# Newton tolerance (half the decrement, nats) of the full data's mode: far below any KL
# target, so the calibration targets are those of the mode.
_LAPLACE_TOL = 1e-6
# Chord steps towards the mode (gradient-only passes over the data), at most this many; the
# Hessian is refreshed (a single-precision pass) when a step shrinks the decrement by less
# than _SLOW_CHORD.
_MAX_CHORD_STEPS, _SLOW_CHORD = 20, 0.1
# Step halvings of the chord steps' line search before Newton with exact Hessians takes over.
_MAX_HALVINGS = 30


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


def _ones(X, y, w):
    return np.ones(len(y))


def _row_sums(family, theta, fit_intercept, X, y, w):
    return loglik_sums(X, y, w, family, theta, fit_intercept)


def _loglik_value_grad(family, theta, fit_intercept, X, y, w):
    """The weighted log-likelihood (without its ``eta``-free terms) and its gradient over the
    rows, in row chunks."""
    value, grad = 0.0, np.zeros(len(theta))
    with np.errstate(over="ignore", invalid="ignore"):  # a trial step too far: not finite
        for rows in row_chunks(X.shape[0], row_width(X) + 1):
            chunk = float_rows(X[rows])
            eta = linear_predictor(chunk, theta, fit_intercept)
            loglik, d1 = family.loglik_and_derivatives(y[rows], eta)
            value += w[rows] @ loglik
            grad += rmatvec(chunk, w[rows] * d1, fit_intercept)
    return value, grad


def _loglik_derivatives(family, theta, fit_intercept, dtype, X, y, w):
    """The weighted log-likelihood gradient and minus its Hessian (Grams in ``dtype``)."""
    grad, neg_hessian = np.zeros(len(theta)), np.zeros((len(theta),) * 2)
    for rows in row_chunks(X.shape[0], row_width(X) + 1):
        chunk = float_rows(X[rows])
        eta = linear_predictor(chunk, theta, fit_intercept)
        grad += rmatvec(chunk, w[rows] * family.d1(y[rows], eta), fit_intercept)
        c = np.maximum(-w[rows] * family.d2(y[rows], eta), 0.0)
        neg_hessian += weighted_gram(chunk, c, fit_intercept, dtype=dtype)
    return grad, neg_hessian


def _total_weight(X, y, w):
    return (float(np.sum(w)),)


def row_scores(theta, factor, fit_intercept, family, X, y):
    """``(score, leverage)`` of every row under ``N(theta, F^T F)`` (``factor`` is ``F``)."""
    eta, v = latent_variances(float_rows(X), factor, fit_intercept, dtype=np.float32,
                              mean=theta)
    score = np.abs(family.d1(y, eta)) * np.sqrt(v)
    leverage = np.maximum(-family.d2(y, eta), 0.0) * v
    return score, leverage


def row_importance(theta, factor, fit_intercept, family, scales, X, y, w):
    """The importance ``lambda_n / w_n`` of the rule above for the rows of a chunk;
    ``scales`` are the mean score and leverage."""
    score, leverage = row_scores(theta, factor, fit_intercept, family, X, y)
    informative = 0.5 * (score / scales[0] + leverage / scales[1])
    return UNIFORM_SHARE + (1.0 - UNIFORM_SHARE) * informative


def full_laplace(data, family, prior_prec, fit_intercept, theta0, neg_hessian0):
    """:class:`FullLaplace` of the rows of a storage from a pilot's mode ``theta0`` and
    negative Hessian ``neg_hessian0`` (scaled to the full data).

    Chord steps: Newton steps with a Hessian held fixed, each a gradient-only pass over the
    data (``N p`` flops instead of ``N p^2``), converging linearly at the rate of that
    Hessian's relative error, with a backtracking (Armijo) line search on the log posterior.
    The pilot's Hessian starts; when a step shrinks the Newton decrement by less than a
    factor 10, the Hessian is recomputed where the steps have got to (one single-precision
    pass), and the next steps converge fast. A final pass computes the exact Hessian at the
    mode. Should the line search fail, Newton's method with exact Hessians takes over.
    """
    def objective(theta):
        value, grad = data.sum(_loglik_value_grad, family, theta, fit_intercept)
        penalty = prior_prec * theta
        return value - 0.5 * penalty @ theta, grad - penalty

    theta = np.asarray(theta0, dtype=float)
    factor = linalg.cho_factor(neg_hessian0, lower=True)
    value, grad = objective(theta)
    previous, refreshed = np.inf, False
    for _ in range(_MAX_CHORD_STEPS):
        step = linalg.cho_solve(factor, grad)
        decrement = 0.5 * grad @ step
        if decrement < _LAPLACE_TOL:
            break
        if decrement > _SLOW_CHORD * previous and not refreshed:
            _, neg_hessian = data.sum(_loglik_derivatives, family, theta, fit_intercept,
                                      np.float32)
            neg_hessian[np.diag_indices_from(neg_hessian)] += prior_prec  # the precision
            factor = linalg.cho_factor(neg_hessian, lower=True, overwrite_a=True)
            step = linalg.cho_solve(factor, grad)
            decrement, refreshed = 0.5 * grad @ step, True
        else:
            refreshed = False
        for _ in range(_MAX_HALVINGS):
            new_value, new_grad = objective(theta + step)
            if np.isfinite(new_value) and new_value >= value + 1e-4 * (grad @ step):
                break
            step = 0.5 * step
        else:  # no ascent along the chord direction
            theta = _line_searched_mode(data, family, prior_prec, fit_intercept, theta)
            break
        theta, value, grad, previous = theta + step, new_value, new_grad, decrement
    grad, neg_hessian = data.sum(_loglik_derivatives, family, theta, fit_intercept,
                                 np.float64)
    precision = neg_hessian.copy()
    precision[np.diag_indices_from(precision)] += prior_prec
    return FullLaplace(theta, precision, grad, neg_hessian)


def _line_searched_mode(data, family, prior_prec, fit_intercept, theta0):
    """Newton's method with exact Hessians and a line search, every pass a sum over row
    chunks (the fallback of :func:`full_laplace`)."""
    total, = data.sum(_total_weight)

    def row_sums(theta):
        return data.sum(_row_sums, family, theta, fit_intercept)

    theta, _, _, _, _ = newton_map(SummedLogPosterior(row_sums, prior_prec, total), theta0,
                                   tol=_LAPLACE_TOL)
    return theta


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
                    prior_prec=prior_prec, fit_intercept=fit_intercept).posterior
    theta0, precision0 = start.mean, start.precision
    # the pilot's covariance and Cholesky factors (p x p each: 32 MB at p = 2000) are not
    # kept through the passes over the data
    del start
    fit = full_laplace(data, family, prior_prec, fit_intercept, theta0, precision0)
    del precision0
    # latent variances a^T Sigma a = ||F a||^2 with F = C^-1 for the precision's C C^T
    factor = lapack.dtrtri(stable_cholesky(fit.precision), lower=1)[0]
    score, leverage = row_scores(fit.mean, factor, fit_intercept, family, pilot.X, pilot.y)
    scales = [max(np.average(values, weights=pilot.weights), np.finfo(float).tiny)
              for values in (score, leverage)]
    capacities = (capacity,) if subsample is None else (capacity, subsample)
    if uniform:
        samples = data.priority_sample(capacities, rng, _ones, stratify=stratify)
    else:
        samples = data.priority_sample(capacities, rng, row_importance, fit.mean, factor,
                                       fit_intercept, family, scales, stratify=stratify)
    return Candidates(fit, samples[0], samples[1] if subsample is not None else None)
