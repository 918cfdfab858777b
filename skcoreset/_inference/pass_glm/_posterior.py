"""Gaussian posterior from PASS-GLM statistics (Algorithm 1, lines 8-9), and its accuracy."""

import numpy as np
from scipy import linalg

from ..._warnings import warn
from ..._design import n_params, rmatvec, weighted_gram
from ..._linalg import cholesky_logdet, shift_to_definite
from ..._posterior import GaussianPosterior
from .._newton import NewtonObjective, newton_maximise, warn_not_converged
from .._common import InferenceResult, LogPosterior, prior_log_normaliser
from ...exceptions import PassGLMAccuracyWarning
from ._surrogate import _family_of, _surrogate_coefficients, gradient_residual, linear_scale

# Warn when the posterior mean is estimated to be this many posterior sds off.
MEAN_ERROR_WARN_SD = 1.0


def _quadratic_posterior(stats, prior_prec, coef):
    """Closed-form Gaussian posterior of a degree-2 surrogate with coefficients ``coef``.

    ``L(theta) + log prior = c0 + h . theta - theta^T Lambda theta / 2`` with
    ``h = kappa linear + beta_1 T_1`` and ``Lambda = P - 2 beta_2 T_2``; hence mean
    ``Lambda^-1 h``, covariance ``Lambda^-1`` and the exact evidence of the surrogate model
    ``c0 + h . mean / 2 + (log det P - log det Lambda) / 2``.
    """
    precision = -2.0 * coef[2] * stats.gram
    precision[np.diag_indices_from(precision)] += prior_prec
    h = linear_scale(stats.model, coef) * stats.linear + coef[1] * stats.moment1
    try:
        chol = linalg.cholesky(precision, lower=True)
    except linalg.LinAlgError:
        raise ValueError(
            "The PASS-GLM posterior precision is not positive definite: the degree-2 "
            "surrogate has the wrong curvature (pass_radius too small?).") from None
    mean = linalg.cho_solve((chol, True), h)
    c0 = stats.constant + coef[0] * stats.sum_weight
    log_evidence = (c0 + 0.5 * h @ mean + 0.5 * np.sum(np.log(prior_prec))
                    - 0.5 * cholesky_logdet(chol))
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


def mean_error_estimate(stats, theta, prior_prec, rows, *, return_se=False):
    """Estimated error of the PASS-GLM posterior mean, per parameter, in posterior sds.

    The exact log posterior's gradient at the surrogate's mode ``theta`` is the gradient of
    what the polynomial left out, ``g = sum_n w_n (f_M' - f')(a_n . theta) a_n`` (at the
    margins ``y_n a_n . theta`` for probit, :func:`gradient_residual`); one Newton
    step ``H^-1 g`` with the exact negative Hessian ``H`` moves ``theta`` to (about) the exact
    mode. Both sums are estimated on ``rows`` (the held-out rows of
    :meth:`PilotSample.split`, not the pilot rows the polynomial was fitted on, where the
    least-squares fit makes ``g`` small by construction), with weights scaled to the
    statistics' total weight, so the estimate costs ``O(rows x p^2)`` and needs no pass over
    the data; ``H`` is accumulated from single-precision products (relative error ~1e-6,
    far below the estimate's own noise).

    The estimate of ``g`` from a sample of ``m`` of ``N`` rows has a sampling error that
    grows like ``sqrt(N / m)`` in posterior sds (N = 4e5, m = 1e4, d = 10: about one sd),
    so ``return_se=True`` also returns its standard error, from the stratified sample's
    variance of the rows' terms of ``g`` (zero for strata held whole).

    Returns
    -------
    offset : ndarray of shape (p,)
        ``(H^-1 g)_j / sqrt((H^-1)_jj)``.
    se : ndarray of shape (p,)
        Standard error of ``offset`` (with ``return_se=True``; infinite when ``rows`` do not
        say how they were sampled).
    """
    p = len(theta)
    w = rows.sample_weight * (stats.sum_weight / rows.sample_weight.sum())
    s = rows.eta(theta)
    residual = gradient_residual(stats.model, stats.coef, rows.y, s)
    with np.errstate(over="ignore", invalid="ignore"):
        g = rmatvec(rows.X, w * residual, rows.fit_intercept)
    log_post = LogPosterior(rows.X, rows.y, _family_of(stats.model), w, prior_prec,
                            rows.fit_intercept)
    try:
        chol = linalg.cholesky(log_post.neg_hessian(s, dtype=np.float32), lower=True)
    except (linalg.LinAlgError, ValueError):
        infinite = np.full(p, np.inf)
        return (infinite, infinite) if return_se else infinite
    step = linalg.cho_solve((chol, True), g)
    # the posterior variances (H^-1)_jj = ||L^-1 e_j||^2 from the triangular inverse
    inverse = linalg.solve_triangular(chol, np.eye(p), lower=True)
    sd = np.sqrt(np.einsum("ij,ij->j", inverse, inverse))
    offset = step / sd
    offset = np.where(np.isfinite(offset), offset, np.inf)
    if not return_se:
        return offset
    variance = _sampling_variance(rows, w * residual)
    # the covariance of the step H^-1 g is H^-1 V H^-1
    spread = linalg.cho_solve((chol, True), linalg.cho_solve((chol, True), variance).T)
    se = np.sqrt(np.maximum(np.diag(spread), 0.0)) / sd
    return offset, np.where(np.isfinite(se), se, np.inf)


def _sampling_variance(rows, terms):
    """Covariance of the estimate ``sum_i terms_i a_i`` of a sum over all rows from a
    stratified sample without replacement: per stratum of sampling fraction ``f`` and ``m``
    rows, ``(1 - f) m / (m - 1)`` times the scatter of the terms ``terms_i a_i`` about their
    mean."""
    p = n_params(rows.X.shape[1], rows.fit_intercept)
    if rows.strata is None:
        return np.full((p, p), np.inf)
    variance = np.zeros((p, p))
    for stratum, fraction in enumerate(rows.fractions):
        in_stratum = rows.strata == stratum
        m = np.count_nonzero(in_stratum)
        if fraction >= 1.0 or m == 0:  # held whole: its sum is exact
            continue
        if m == 1:
            return np.full((p, p), np.inf)
        X, t = rows.X[in_stratum], terms[in_stratum]
        with np.errstate(over="ignore", invalid="ignore"):
            mean = rmatvec(X, t, rows.fit_intercept) / m
            scatter = weighted_gram(X, t * t, rows.fit_intercept) - m * np.outer(mean, mean)
        variance += (1.0 - fraction) * m / (m - 1) * scatter
    return variance


def pass_glm_posterior(stats, prior_prec, *, tol=1e-10, max_iter=100, theta0=None,
                       verbose=0, pilot=None, held_out=None):
    """Gaussian posterior from PASS-GLM statistics (Algorithm 1, lines 8-9).

    * ``degree == 2``: the surrogate log posterior is quadratic, so the posterior is exactly
      Gaussian: precision ``P - 2 beta_2 T_2`` and mean solving
      ``(P - 2 beta_2 T_2) mu = linear + beta_1 T_1`` (PASS-LR2 for logistic regression,
      where ``beta_1 = 1/2`` and ``beta_2 < 0``). ``log_evidence`` is the exact evidence of
      the surrogate model.
    * ``degree > 2``: the mode of the polynomial surrogate log posterior by Newton's method
      (started at the degree-2 solution), and a Laplace approximation there; the evidence
      is its Laplace estimate.

    The approximation is only as good as ``f_M`` is where the data are. With ``held_out``
    rows, a :class:`PassGLMAccuracyWarning` is issued when :func:`mean_error_estimate` puts
    the posterior mean more than one posterior standard deviation from the exact
    posterior's, or cannot rule that out (its estimate plus two standard errors exceeds
    one sd). Without them, a ``UserWarning`` is issued when the weighted root mean square of the
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
        The pilot fit (:func:`pilot_fit`) whose mode starts Newton's method for a fitted
        polynomial of degree above 2.
    held_out : WeightedRows, default=None
        Rows on which to measure the approximation's effect (:meth:`PilotSample.split`).

    Returns
    -------
    InferenceResult
        ``extra`` holds ``degree``, ``radius``, ``coefficients`` (the ``beta_m``),
        ``n_samples``, ``linear_predictor_rms``, ``mean_error_sd`` (the largest
        :func:`mean_error_estimate` in absolute value; None without held-out rows) and
        ``mean_error_bound_sd`` (the largest estimate plus two standard errors).

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
    mean_error = mean_error_bound = None
    if held_out is not None:
        offset, se = mean_error_estimate(stats, theta, prior_prec, held_out, return_se=True)
        mean_error = float(np.max(np.abs(offset)))
        mean_error_bound = float(np.max(np.abs(offset) + 2.0 * se))
        if mean_error_bound > MEAN_ERROR_WARN_SD:
            possible = ("" if mean_error_bound <= mean_error * (1 + 1e-9) else
                        f", and may be up to {mean_error_bound:.3g} (two standard errors of "
                        "the estimate)")
            warn(
                f"The PASS-GLM posterior mean is estimated to be {mean_error:.3g} posterior "
                f"standard deviations from the exact posterior's{possible}: the "
                f"degree-{stats.degree} polynomial's error measured on {len(held_out.y)} "
                f"held-out of {stats.n_samples} rows. With this many rows the posterior can "
                "be narrower than the approximation error. Use method='laplace' for this "
                "data set, a higher pass_degree (few features), or pass_radius='auto' if a "
                "numeric radius was set.", PassGLMAccuracyWarning)
    if stats.radius is not None and rms > stats.radius:
        warn(
            f"The linear predictors have root mean square {rms:.3g} at the PASS-GLM "
            f"posterior mean, beyond pass_radius={stats.radius:g}: the polynomial "
            "approximation is unreliable there. Increase pass_radius (or standardise X).",
            UserWarning)
    extra = {"degree": stats.degree, "radius": stats.radius,
             "coefficients": stats.coef.copy(), "n_samples": stats.n_samples,
             "linear_predictor_rms": rms, "mean_error_sd": mean_error,
             "mean_error_bound_sd": mean_error_bound}
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
                    + 0.5 * len(theta) * np.log(2 * np.pi) - 0.5 * cholesky_logdet(chol))
    return theta, precision, log_evidence, result.n_iter, result.converged
