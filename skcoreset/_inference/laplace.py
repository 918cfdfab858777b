"""Laplace approximation: weighted MAP by damped Newton, Hessian at the mode as precision."""

import warnings

import numpy as np
from scipy import linalg
from sklearn.exceptions import ConvergenceWarning

from .._posterior import GaussianPosterior, _stable_cholesky
from ._common import InferenceResult, LogPosterior, laplace_log_evidence

_ARMIJO = 1e-4
_MIN_STEP = 1e-10


def newton_map(log_post, theta0, *, tol=1e-10, max_iter=100, verbose=0):
    """Maximise a concave :class:`LogPosterior` by Newton's method with backtracking.

    Stops when half the Newton decrement ``g^T H^-1 g / 2`` (the predicted gain of the next
    step, in units of log density) falls below ``tol``, or when the line search cannot
    improve the objective beyond rounding error.

    Returns
    -------
    theta : ndarray of shape (p,)
        The mode.
    eta : ndarray of shape (n,)
        Linear predictors at the mode.
    precision : ndarray of shape (p, p)
        Negative Hessian of the log posterior at the mode.
    n_iter : int
        Newton steps taken.
    converged : bool
    """
    theta = np.array(theta0, dtype=float)
    eta = log_post.eta(theta)
    value = log_post.value(theta, eta)
    eps = np.finfo(float).eps
    for n_iter in range(max_iter + 1):
        grad = log_post.grad(theta, eta)
        precision = log_post.neg_hessian(eta)
        step = linalg.cho_solve((_stable_cholesky(precision), True), grad)
        decrement = grad @ step
        if verbose:
            print(f"[laplace] iter {n_iter:3d}  log posterior {value:.10g}  "
                  f"decrement/2 {decrement / 2:.3e}")
        if decrement / 2 <= tol:
            return theta, eta, precision, n_iter, True
        if n_iter == max_iter:
            break
        t = 1.0
        while True:
            new_theta = theta + t * step
            new_eta = log_post.eta(new_theta)
            new_value = log_post.value(new_theta, new_eta)
            # Armijo condition, with slack for the rounding error of a large sum
            if new_value - value >= _ARMIJO * t * decrement - 16 * eps * abs(value):
                break
            t *= 0.5
            if t < _MIN_STEP:
                # no progress possible at working precision: we are at the mode
                return theta, eta, precision, n_iter, True
        theta, eta, value = new_theta, new_eta, new_value
    return theta, eta, precision, max_iter, False


def initial_theta(y, family, sample_weight, n_params, fit_intercept):
    """Zero coefficients; the intercept at the link of the weighted mean target."""
    theta = np.zeros(n_params)
    if fit_intercept:
        mean = np.average(y, weights=sample_weight)
        theta[-1] = family.link(mean)
    return theta


def laplace(X, y, family, *, sample_weight, prior_prec, fit_intercept, tol=1e-10,
            max_iter=100, theta0=None, verbose=0):
    """Laplace approximation of a weighted GLM posterior.

    Finds the mode ``theta*`` of ``sum_n w_n log p(y_n | a_n . theta) + log N(theta; 0, P^-1)``
    by Newton's method with an Armijo line search and returns ``N(theta*, H^-1)`` with ``H``
    the negative Hessian of the log posterior at ``theta*``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Targets encoded for ``family``.
    family : Family
    sample_weight : ndarray of shape (n,)
    prior_prec : ndarray of shape (p,)
        Diagonal prior precision (``p = d + fit_intercept``).
    fit_intercept : bool
    tol : float
        Stop when half the Newton decrement is below ``tol``.
    max_iter : int
        Newton step cap; a :class:`~sklearn.exceptions.ConvergenceWarning` is raised when hit.
    theta0 : ndarray of shape (p,), default=None
        Starting point (warm start); by default zero coefficients and the intercept at the
        link of the weighted mean target.
    verbose : int
        Print one line per Newton step when positive.

    Returns
    -------
    InferenceResult
        With a :class:`GaussianPosterior` and the Laplace log evidence.
    """
    log_post = LogPosterior(X, y, family, sample_weight, prior_prec, fit_intercept)
    if theta0 is None:
        theta0 = initial_theta(y, family, sample_weight, len(prior_prec), fit_intercept)
    theta, eta, precision, n_iter, converged = newton_map(
        log_post, theta0, tol=tol, max_iter=max_iter, verbose=verbose)
    if not converged:
        warnings.warn(
            f"Newton's method did not converge in max_iter={max_iter} iterations; "
            "increase max_iter or check the data scaling.", ConvergenceWarning)
    posterior = GaussianPosterior(theta, precision=precision)
    return InferenceResult(
        posterior=posterior, n_iter=n_iter, converged=converged,
        log_evidence=laplace_log_evidence(log_post, theta, eta, posterior))
