"""The overdispersion of the negative binomial model, estimated with its uncertainty: the
mode of the joint posterior of the coefficients and ``rho = log alpha`` (flat prior on
``rho``) and the Laplace approximation of the marginal posterior of ``rho`` there."""

import copy
from typing import NamedTuple

import numpy as np

from .._backend import as_storage, float_rows, row_chunks, row_width
from .._design import linear_predictor, rmatvec
from ._common import LogPosterior, MixedProducts
from .laplace import laplace

_MAX_STEPS = 30
_MAX_STEP = 2.0  # the largest change of log alpha per Newton step
_RHO_TOL = 1e-8
# Below this alpha, overdispersion changes the variance mu + alpha mu^2 by less than 1e-6 mu
# at means up to 1, and the profile in log alpha is flat to rounding: a gradient pointing
# lower there ends the search at the Poisson limit.
_POISSON_LIMIT = 1e-6


class Dispersion(NamedTuple):
    """The estimate of ``alpha`` and the sd of ``log alpha`` (NaN at the Poisson limit,
    where the Laplace approximation in ``log alpha`` is not defined)."""

    alpha: float
    log_alpha_sd: float
    theta: np.ndarray  # the mode of the coefficients given alpha


def _dispersion_sums(family, theta, fit_intercept, X, y, w, offset=None):
    """``(sum_n w_n dl_n/drho, sum_n w_n d2l_n/drho2, A^T (w * d2l/drho deta))`` of some
    rows (with their offsets) at ``theta``, in row chunks (no linear predictor of all the
    rows is held): the sums of a pass over the rows."""
    d_rho = d_rho_rho = 0.0
    cross = 0.0
    for rows in row_chunks(X.shape[0], row_width(X) + 1):
        X_rows = float_rows(X[rows])
        eta = linear_predictor(X_rows, theta, fit_intercept)
        if offset is not None:
            eta = eta + offset[rows]
        d1, d2, d_eta = family.log_alpha_derivatives(y[rows], eta)
        w_rows = w[rows]
        d_rho += w_rows @ d1
        d_rho_rho += w_rows @ d2
        cross = cross + rmatvec(X_rows, w_rows * d_eta, fit_intercept)
    return d_rho, d_rho_rho, cross


def _profile_derivatives(family, rows, fit_intercept, posterior):
    """First and second derivative in ``rho`` of the log joint posterior maximised over the
    coefficients, ``h(rho) = max_theta log p(y, theta | rho)``, at the mode ``posterior.mean``
    with precision ``posterior.precision``: ``h' = sum_n w_n dl_n/drho`` (the envelope
    theorem) and ``h'' = H_rr - H_rt^T H_tt^-1 H_tr``, the Schur complement of the joint
    Hessian, whose inverse is minus the marginal variance of ``rho`` in the joint Laplace
    approximation. One pass over the rows of the storage ``rows``."""
    d_rho, d_rho_rho, cross = rows.sum(_dispersion_sums, family, posterior.mean,
                                       fit_intercept)
    # H_tt = -precision: h'' = H_rr + H_rt^T cov H_tr, cov = L L^T
    whitened = posterior.cov_cholesky.T @ cross
    return float(d_rho), float(d_rho_rho + whitened @ whitened)


def estimate_dispersion(family, X, y, sample_weight, *, prior_prec, fit_intercept, alpha0,
                        offset=None, min_alpha=1e-8, theta0=None):
    """The mode of ``log alpha`` of the negative binomial model and its Laplace sd.

    Newton's method on the profile ``h(rho)`` (:func:`_profile_derivatives`) from ``alpha0``,
    each step refitting the coefficients' mode given alpha (a warm-started Laplace fit), with
    steps of at most 2 in ``rho`` and ``alpha >= min_alpha``. With a weak prior on the
    coefficients the mode is the maximum-likelihood estimate of statsmodels'
    ``NegativeBinomial``, and ``alpha * log_alpha_sd`` its standard error (the observed
    information in ``log alpha``, transformed by the delta method).

    Every sum is a pass over the rows in row chunks: rows in memory, a ``np.memmap`` (never
    read whole) or, given as a storage, dask arrays (each pass a tree of tasks where the
    chunks live), so all rows count whatever their number.

    Parameters
    ----------
    family : NegativeBinomialFamily
        The model; its ``alpha`` is ignored.
    X : ndarray, sparse matrix, InMemoryRows or DaskRows
        The rows; a storage holds them with their encoded targets, weights and offsets
        (``y``, ``sample_weight`` and ``offset`` are then None).
    y, sample_weight : ndarray
        The targets (encoded) and weights of rows in memory.
    prior_prec : ndarray of shape (p,)
    fit_intercept : bool
    alpha0 : float
        Starting value (e.g. the method-of-moments estimate, or a subsample's mode).
    offset : ndarray of shape (n,), default=None
    min_alpha : float, default=1e-8
        The Poisson limit, where the search stops.
    theta0 : ndarray of shape (p,), default=None
        A start of the coefficients' mode (e.g. a subsample's).

    Returns
    -------
    Dispersion
    """
    rows = as_storage(X, y, sample_weight, offset)
    floor = np.log(min_alpha)
    rho = max(np.log(alpha0), floor)
    theta = theta0
    for _ in range(_MAX_STEPS):
        fitted = family.with_alpha(np.exp(rho))
        posterior = laplace(rows, None, fitted, sample_weight=None, prior_prec=prior_prec,
                            fit_intercept=fit_intercept, theta0=theta).posterior
        theta = posterior.mean
        grad, curvature = _profile_derivatives(fitted, rows, fit_intercept, posterior)
        if not (np.isfinite(grad) and np.isfinite(curvature)):  # e.g. weights of 1e100
            return Dispersion(np.exp(rho), np.nan, theta)
        if rho <= np.log(_POISSON_LIMIT) and grad <= 0:  # no overdispersion
            return Dispersion(min_alpha, np.nan, theta)
        step = -grad / curvature if curvature < 0 else np.sign(grad) * _MAX_STEP
        step = float(np.clip(step, -_MAX_STEP, _MAX_STEP))
        rho = max(rho + step, floor)
        if abs(step) < _RHO_TOL:
            break
    if curvature >= 0:
        return Dispersion(np.exp(rho), np.nan, theta)
    return Dispersion(np.exp(rho), 1.0 / np.sqrt(-curvature), theta)


# The prior of log alpha when it is sampled (method="mcmc"): N(0, 10^2), proper and far
# wider than any data set's posterior of it; the modes above use a flat prior, which it
# approximates (its pull on a mode is 1e-2 / (posterior precision of log alpha)).
LOG_ALPHA_PRIOR_SD = 10.0
# ... truncated to alpha in [1e-8, 1e8]
_LOG_ALPHA_RANGE = (np.log(1e-8), np.log(1e8))


class DispersionLogPosterior:
    """Log posterior of ``phi = [theta..., log alpha]`` of the negative binomial model:
    :class:`~skcoreset._inference._common.LogPosterior` of theta given alpha, plus the
    ``N(0, LOG_ALPHA_PRIOR_SD^2)`` prior of ``log alpha`` on ``[log 1e-8, log 1e8]``, with
    the gradient in both from the same blocked pass over the rows (the derivative in
    ``log alpha`` from the linear predictors it returns). The interface of
    ``LogPosterior.value_and_grad`` for NUTS.

    The terms of the likelihood that depend on ``alpha`` but not on ``eta`` (``log Gamma(y +
    r) - log Gamma(r)`` and its derivative ``psi(y + r) - psi(r)``) change at every step of
    the sampler; they are summed over the distinct targets, weighted by the total weight of
    each, rather than over the rows: counts take few distinct values, and these special
    functions cost several times the rest of a row's terms."""

    def __init__(self, X, y, family, sample_weight, prior_prec, fit_intercept, offset=None):
        self.X, self.y, self.family = X, y, family
        self.sample_weight, self.prior_prec = sample_weight, prior_prec
        self.fit_intercept, self.offset = fit_intercept, offset
        self._mixed = None  # MixedProducts shared by every alpha (mixed_precision)
        self._levels, inverse = np.unique(y, return_inverse=True)
        self._level_weight = np.bincount(inverse.ravel(), weights=sample_weight,
                                         minlength=len(self._levels))

    def _log_posterior(self, rho):
        family = self.family.with_alpha(np.exp(rho))
        log_post = LogPosterior(self.X, self.y, family, self.sample_weight, self.prior_prec,
                                self.fit_intercept, self.offset,
                                loglik_constant=self._level_weight @ family.loglik_constant(
                                    self._levels))
        if self._mixed is None:
            return log_post
        return log_post.mixed_precision(None, mixed=self._mixed)

    def mixed_precision(self, phi):
        """This target with its products in single precision about ``phi``
        (:class:`~skcoreset._inference._common.MixedProducts`, from the model at phi's
        alpha; any reference is exact, a near one is accurate), or itself when X does not
        allow them."""
        mixed = MixedProducts.about(self._log_posterior(float(phi[-1])), phi[:-1])
        if mixed is None:
            return self
        other = copy.copy(self)
        other._mixed = mixed
        return other

    def value_and_grad(self, phi):
        theta, rho = phi[:-1], float(phi[-1])
        if not _LOG_ALPHA_RANGE[0] <= rho <= _LOG_ALPHA_RANGE[1]:  # the prior's support
            return -np.inf, None, np.zeros_like(phi)
        log_post = self._log_posterior(rho)
        value, eta, grad = log_post.value_and_grad(theta)
        family = log_post.family
        d_rho = family.log_alpha_derivatives(self.y, eta, second=False, gamma_terms=False)[0]
        value += -0.5 * (rho / LOG_ALPHA_PRIOR_SD) ** 2
        grad_rho = (self.sample_weight @ d_rho
                    + self._level_weight @ family.gamma_log_alpha_derivative(self._levels)
                    - rho / LOG_ALPHA_PRIOR_SD**2)
        return value, eta, np.append(grad, grad_rho)

    def joint_laplace(self, theta, precision, rho):
        """Mean and lower Cholesky factor of the covariance of the Gaussian at
        ``[theta, rho]`` whose precision is minus the joint Hessian there (``precision`` of
        theta given alpha, the cross derivatives and the curvature in ``rho``): the
        whitening of NUTS."""
        log_post = self._log_posterior(rho)
        eta = log_post.eta(theta)
        _, d_rho_rho, d_rho_eta = log_post.family.log_alpha_derivatives(self.y, eta)
        cross = rmatvec(self.X, self.sample_weight * d_rho_eta, self.fit_intercept)
        p = len(theta)
        joint = np.empty((p + 1, p + 1))
        joint[:p, :p] = precision
        joint[:p, p] = joint[p, :p] = -cross
        joint[p, p] = -(self.sample_weight @ d_rho_rho) + LOG_ALPHA_PRIOR_SD**-2.0
        cov = np.linalg.inv(joint)
        return np.append(theta, rho), np.linalg.cholesky(0.5 * (cov + cov.T))
