"""Gaussian posterior from PASS-GLM statistics (Algorithm 1, lines 8-9), and its accuracy."""

import warnings

import numpy as np
from scipy import linalg

from ..._design import rmatvec
from ..._newton import (NewtonObjective, newton_maximise, shift_to_definite,
                        warn_not_converged)
from ..._posterior import GaussianPosterior
from .._common import InferenceResult, LogPosterior, prior_log_normaliser
from ._surrogate import PassGLMAccuracyWarning, _derivative, _family_of, _surrogate_coefficients

# Warn when the posterior mean is estimated to be this many posterior sds off.
MEAN_ERROR_WARN_SD = 1.0


def _logdet_from_chol(chol):
    return 2.0 * np.sum(np.log(np.diag(chol)))


def _quadratic_posterior(stats, prior_prec, coef):
    """Closed-form Gaussian posterior of a degree-2 surrogate with coefficients ``coef``.

    ``L(theta) + log prior = c0 + h . theta - theta^T Lambda theta / 2`` with
    ``h = linear + beta_1 T_1`` and ``Lambda = P - 2 beta_2 T_2``; hence mean
    ``Lambda^-1 h``, covariance ``Lambda^-1`` and the exact evidence of the surrogate model
    ``c0 + h . mean / 2 + (log det P - log det Lambda) / 2``.
    """
    precision = -2.0 * coef[2] * stats.gram
    precision[np.diag_indices_from(precision)] += prior_prec
    h = stats.linear + coef[1] * stats.moment1
    try:
        chol = linalg.cholesky(precision, lower=True)
    except linalg.LinAlgError:
        raise ValueError(
            "The PASS-GLM posterior precision is not positive definite: the degree-2 "
            "surrogate has the wrong curvature (pass_radius too small?).") from None
    mean = linalg.cho_solve((chol, True), h)
    c0 = stats.constant + coef[0] * stats.sum_weight
    log_evidence = (c0 + 0.5 * h @ mean + 0.5 * np.sum(np.log(prior_prec))
                    - 0.5 * _logdet_from_chol(chol))
    return mean, precision, log_evidence


class _SurrogateObjective(NewtonObjective):
    """The polynomial surrogate log posterior, maximised by damped Newton steps.

    Where the negative Hessian is not positive definite (the surrogate need not be concave
    everywhere for ``M > 2``), the step uses it shifted by enough of the identity to be;
    at the mode it must be positive definite without shift.
    """

    def __init__(self, stats, prior_prec):
        self.stats, self.prior_prec = stats, prior_prec

    def value(self, theta):
        value = self.stats.derivatives(theta, 0)[0]
        return value - 0.5 * np.sum(self.prior_prec * theta**2), None

    def gradient(self, theta, state):
        return self.stats.derivatives(theta, 1)[1] - self.prior_prec * theta

    def gradient_and_neg_hessian(self, theta, state):
        _, grad, hessian = self.stats.derivatives(theta, 2)
        neg_hessian = -hessian
        neg_hessian[np.diag_indices_from(neg_hessian)] += self.prior_prec
        return grad - self.prior_prec * theta, neg_hessian

    def neg_hessian(self, theta, state):
        return self.gradient_and_neg_hessian(theta, state)[1]

    def factor(self, neg_hessian):
        return shift_to_definite(neg_hessian)

    def direction(self, factor, grad):
        step = linalg.solve(factor, grad, assume_a="pos")
        return step, grad @ step


def _linear_predictor_rms(stats, theta):
    """Weighted root mean square of ``c_n . theta`` over the data, from the statistics alone.

    ``sum_n w_n (c_n . theta)^2 = theta^T T_2 theta``; by Chebyshev's inequality at most a
    fraction ``(rms / R)^2`` of the weight has ``|c_n . theta| > R``.
    """
    if stats.sum_weight <= 0:
        return 0.0
    return float(np.sqrt(max(theta @ stats.gram @ theta, 0.0) / stats.sum_weight))


def mean_error_estimate(stats, theta, prior_prec, pilot):
    """Estimated error of the PASS-GLM posterior mean, per parameter, in posterior sds.

    The exact log posterior's gradient at the surrogate's mode ``theta`` is the gradient of
    what the polynomial left out, ``g = sum_n w_n (f_M' - f')(a_n . theta) a_n``; one Newton
    step ``H^-1 g`` with the exact negative Hessian ``H`` moves ``theta`` to (about) the exact
    mode. Both sums are estimated on the pilot rows, with weights scaled to the statistics'
    total weight, so the estimate costs ``O(pilot rows x p^2)`` and needs no pass over the
    data; ``H`` is accumulated from single-precision products (relative error ~1e-6, far
    below the estimate's own noise). Its noise is proportional to the approximation error
    itself, so a good polynomial gives an estimate near zero.

    Returns
    -------
    offset : ndarray of shape (p,)
        ``(H^-1 g)_j / sqrt((H^-1)_jj)``.
    """
    w = pilot.sample_weight * (stats.sum_weight / pilot.sample_weight.sum())
    s = pilot.eta(theta)
    slope = np.polynomial.polynomial.polyder(-stats.coef)  # f_M' from beta = -b
    residual = np.polynomial.polynomial.polyval(s, slope) - _derivative(stats.model)(s)
    with np.errstate(over="ignore", invalid="ignore"):
        g = rmatvec(pilot.X, w * residual, pilot.fit_intercept)
    log_post = LogPosterior(pilot.X, pilot.y, _family_of(stats.model), w, prior_prec,
                            pilot.fit_intercept)
    try:
        chol = linalg.cholesky(log_post.neg_hessian(s, dtype=np.float32), lower=True)
    except (linalg.LinAlgError, ValueError):
        return np.full(len(theta), np.inf)
    step = linalg.cho_solve((chol, True), g)
    # the posterior variances (H^-1)_jj = ||L^-1 e_j||^2 from the triangular inverse
    inverse = linalg.solve_triangular(chol, np.eye(len(theta)), lower=True)
    offset = step / np.sqrt(np.einsum("ij,ij->j", inverse, inverse))
    return np.where(np.isfinite(offset), offset, np.inf)


def pass_glm_posterior(stats, prior_prec, *, tol=1e-10, max_iter=100, theta0=None,
                       verbose=0, pilot=None):
    """Gaussian posterior from PASS-GLM statistics (Algorithm 1, lines 8-9).

    * ``degree == 2``: the surrogate log posterior is quadratic, so the posterior is exactly
      Gaussian: precision ``P - 2 beta_2 T_2`` and mean solving
      ``(P - 2 beta_2 T_2) mu = linear + beta_1 T_1`` (PASS-LR2 for logistic regression,
      where ``beta_1 = 1/2`` and ``beta_2 < 0``). ``log_evidence`` is the exact evidence of
      the surrogate model.
    * ``degree > 2``: the mode of the polynomial surrogate log posterior by Newton's method
      (started at the degree-2 solution), and a Laplace approximation there; the evidence
      is its Laplace estimate.

    The approximation is only as good as ``f_M`` is where the data are. With a ``pilot``, a
    :class:`PassGLMAccuracyWarning` is issued when :func:`mean_error_estimate` puts the
    posterior mean more than one posterior standard deviation from the exact posterior's.
    Without one, a ``UserWarning`` is issued when the weighted root mean square of the
    linear predictors at the posterior mean (available from the statistics,
    ``extra["linear_predictor_rms"]``) exceeds the Chebyshev radius ``R`` (Corollary 4.4 of
    the paper needs most ``|a_n . theta|`` within ``[-R, R]``).

    Parameters
    ----------
    stats : PassGLMStatistics
    prior_prec : ndarray of shape (p,)
        Diagonal prior precision, positive.
    tol : float, default=1e-10
        Newton stops when half the Newton decrement is below ``tol`` (``degree > 2``).
    max_iter : int, default=100
        Newton step cap; a ``ConvergenceWarning`` is raised when hit.
    theta0 : ndarray of shape (p,), default=None
        Newton starting point for ``degree > 2``.
    verbose : int, default=0
    pilot : Pilot, default=None
        Subsample on which to measure the approximation's effect (:func:`pilot_fit`).

    Returns
    -------
    InferenceResult
        ``extra`` holds ``degree``, ``radius``, ``coefficients`` (the ``beta_m``),
        ``n_samples``, ``linear_predictor_rms`` and ``mean_error_sd`` (the largest
        :func:`mean_error_estimate` in absolute value; None without a pilot).

    Raises
    ------
    ValueError
        If no data were accumulated, or for ``degree > 2`` when the negative Hessian of the
        surrogate log posterior is not positive definite at the point Newton's method stops
        (a flat or non-concave direction: no Laplace approximation exists there).
    """
    prior_prec = np.asarray(prior_prec, dtype=float)
    if prior_prec.shape != (stats.n_params,) or not np.all(prior_prec > 0):
        raise ValueError(f"prior_prec must be positive with shape ({stats.n_params},), "
                         f"got {prior_prec!r}.")
    if stats.n_samples == 0:
        raise ValueError("No data accumulated in the PASS-GLM statistics.")
    if theta0 is None and pilot is not None and stats.radius is None:
        theta0 = pilot.theta  # a fitted polynomial has no degree-2 Chebyshev counterpart
    if stats.degree == 2:
        theta, precision, log_evidence = _quadratic_posterior(stats, prior_prec, stats.coef)
        n_iter, converged = 1, True  # one closed-form solve
    else:
        theta, precision, log_evidence, n_iter, converged = _polynomial_laplace(
            stats, prior_prec, theta0, tol=tol, max_iter=max_iter, verbose=verbose)
    rms = _linear_predictor_rms(stats, theta)
    mean_error = None
    if pilot is not None:
        mean_error = float(np.max(np.abs(mean_error_estimate(stats, theta, prior_prec, pilot))))
        if mean_error > MEAN_ERROR_WARN_SD:
            warnings.warn(
                f"The PASS-GLM posterior mean is estimated to be {mean_error:.3g} posterior "
                f"standard deviations from the exact posterior's (the degree-{stats.degree} "
                f"polynomial's error measured on {len(pilot.y)} pilot rows): with "
                f"{stats.n_samples} rows the posterior is narrower than the approximation "
                "error. Use method='laplace' for this data set, a higher pass_degree (few "
                "features), or pass_radius='auto' if a numeric radius was set.",
                PassGLMAccuracyWarning, stacklevel=3)
    if stats.radius is not None and rms > stats.radius:
        warnings.warn(
            f"The linear predictors have root mean square {rms:.3g} at the PASS-GLM "
            f"posterior mean, beyond pass_radius={stats.radius:g}: the polynomial "
            "approximation is unreliable there. Increase pass_radius (or standardise X).",
            UserWarning)
    extra = {"degree": stats.degree, "radius": stats.radius,
             "coefficients": stats.coef.copy(), "n_samples": stats.n_samples,
             "linear_predictor_rms": rms, "mean_error_sd": mean_error}
    return InferenceResult(posterior=GaussianPosterior(theta, precision=precision),
                           n_iter=n_iter, converged=converged, log_evidence=log_evidence,
                           extra=extra)


def _polynomial_laplace(stats, prior_prec, theta0, *, tol, max_iter, verbose):
    """Mode, precision and Laplace log evidence of a surrogate of degree above 2."""
    if theta0 is None:
        theta0 = _quadratic_posterior(
            stats, prior_prec, _surrogate_coefficients(stats.model, 2, stats.radius or 4.0))[0]
    result = newton_maximise(_SurrogateObjective(stats, prior_prec), theta0, tol=tol,
                             max_iter=max_iter, verbose=verbose, label="pass_glm",
                             value_name="surrogate log posterior")
    theta, precision = result.x, result.neg_hessian
    try:
        chol = linalg.cholesky(precision, lower=True)
    except linalg.LinAlgError:
        raise ValueError(
            f"The degree-{stats.degree} PASS-GLM surrogate log posterior is not concave "
            "where Newton's method stopped, so it has no Laplace approximation: the "
            "polynomial misrepresents the likelihood there (linear predictors far outside "
            "[-pass_radius, pass_radius]). Increase pass_radius or use pass_degree=2.") from None
    if not result.converged:
        warn_not_converged("Newton's method on the PASS-GLM surrogate", max_iter)
    value = stats.loglik(theta) - 0.5 * np.sum(prior_prec * theta**2)
    log_evidence = (value + prior_log_normaliser(prior_prec)
                    + 0.5 * len(theta) * np.log(2 * np.pi) - 0.5 * _logdet_from_chol(chol))
    return theta, precision, log_evidence, result.n_iter, result.converged
