"""Pieces shared by the inference methods: the Gaussian prior and the weighted log posterior."""

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .._design import (add_scaled_gram, block_rows, linear_predictor, n_params, rmatvec,
                       split_theta, weighted_gram)


def prior_precision(n_features, *, prior_scale, intercept_prior_scale, fit_intercept):
    """Diagonal of the prior precision of ``theta = [coef..., intercept]``.

    The prior is ``N(0, prior_scale^2 I)`` on the coefficients and, independently,
    ``N(0, intercept_prior_scale^2)`` on the intercept.
    """
    diag = np.full(n_params(n_features, fit_intercept), prior_scale**-2.0)
    if fit_intercept:
        diag[-1] = intercept_prior_scale**-2.0
    return diag


@dataclass
class InferenceResult:
    """What an inference function returns.

    Attributes
    ----------
    posterior : GaussianPosterior or SamplePosterior
        The fitted posterior over ``theta``.
    n_iter : int
        Iterations (Newton steps, proximal steps, MCMC steps) run.
    converged : bool
        Whether the stopping criterion was met before the iteration cap.
    log_evidence : float or None
        Estimate of the log marginal likelihood, where the method gives one.
    elbo : float or None
        Evidence lower bound at the end, for variational methods.
    extra : dict
        Method-specific diagnostics.
    """

    posterior: object
    n_iter: int
    converged: bool
    log_evidence: float = None
    elbo: float = None
    extra: dict = field(default_factory=dict)


class LogPosterior:
    """Unnormalised weighted log posterior of a GLM under a diagonal Gaussian prior.

    ``log p(theta | data) = sum_n w_n log p(y_n | a_n . theta) - theta^T P theta / 2 + const``
    with design rows ``a_n = [x_n, 1]`` (or ``x_n`` without intercept).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Targets encoded for ``family``.
    family : Family
    sample_weight : ndarray of shape (n,)
        Non-negative multipliers of each point's log-likelihood.
    prior_prec : ndarray of shape (p,)
        Diagonal prior precision.
    fit_intercept : bool
    """

    def __init__(self, X, y, family, sample_weight, prior_prec, fit_intercept):
        self.X = X
        self.y = y
        self.family = family
        self.sample_weight = sample_weight
        self.prior_prec = prior_prec
        self.fit_intercept = fit_intercept

    def eta(self, theta):
        return linear_predictor(self.X, theta, self.fit_intercept)

    def loglik(self, theta, eta=None):
        """Weighted log-likelihood; theta (p,) -> float, theta (S, p) -> (S,)."""
        eta = self.eta(theta) if eta is None else eta
        return self.sample_weight @ self.family.loglik(self.y, eta)

    def log_prior(self, theta):
        """Unnormalised log prior ``-theta^T P theta / 2``."""
        return -0.5 * np.sum(self.prior_prec * np.asarray(theta) ** 2, axis=-1)

    def value(self, theta, eta=None):
        return self.loglik(theta, eta) + self.log_prior(theta)

    def grad(self, theta, eta):
        r = self.sample_weight * self.family.d1(self.y, eta)
        return rmatvec(self.X, r, self.fit_intercept) - self.prior_prec * theta

    def value_and_grad(self, theta, rows_per_block=None, neg_hessian=None):
        """``(value, eta, grad)`` at ``theta`` in one pass over blocks of rows of X: each
        block serves both the linear predictors and the gradient while in cache (half the
        memory traffic of :meth:`eta` followed by :meth:`grad`). The family's terms come
        from one evaluation per block (``family.loglik_and_derivatives``) and its
        ``eta``-free terms are summed once per data set. ``rows_per_block`` defaults to
        :func:`~skcoreset._design.block_rows` of the design's width.

        With ``neg_hessian=np.float64``, ``(value, eta, grad, neg_hessian)``: the exact
        :meth:`neg_hessian` at ``theta`` from the same pass (its Gram's block products while
        each block is in cache), saving the separate pass over X; with ``np.float32``, the
        single-precision approximation of ``neg_hessian(eta, dtype=np.float32)``.
        """
        coef, intercept = split_theta(theta, self.fit_intercept)
        n, d = self.X.shape
        if rows_per_block is None:
            rows_per_block = block_rows(len(self.prior_prec))
        eta = np.empty(n)
        loglik = 0.0
        grad_x = np.zeros(d)
        grad_1 = 0.0
        if neg_hessian is not None:
            p = len(self.prior_prec)
            gram = np.zeros((p, p))
            buffer = np.empty((min(rows_per_block, n), p), dtype=neg_hessian)
        for start in range(0, n, rows_per_block):
            rows = slice(start, start + rows_per_block)
            X = self.X[rows]
            eta_b = eta[rows]
            np.dot(X, coef, out=eta_b)
            eta_b += intercept
            y, w = self.y[rows], self.sample_weight[rows]
            terms = self.family.loglik_and_derivatives(y, eta_b,
                                                       second=neg_hessian is not None)
            loglik += w @ terms[0]
            r = w * terms[1]
            grad_x += r @ X
            grad_1 += r.sum()
            if neg_hessian is not None:
                c = -w * terms[2]
                add_scaled_gram(gram, buffer, X, np.sqrt(np.maximum(c, 0.0)),
                                self.fit_intercept)
        grad = np.append(grad_x, grad_1) if self.fit_intercept else grad_x
        out = (loglik + self._loglik_constant + self.log_prior(theta), eta,
               grad - self.prior_prec * theta)
        if neg_hessian is not None:
            if not np.all(np.isfinite(gram)):  # float32 overflow (huge X), or NaN in X
                gram = self.neg_hessian(eta)
            else:
                gram[np.diag_indices_from(gram)] += self.prior_prec
            out += (gram,)
        return out

    @cached_property
    def _loglik_constant(self):
        """``sum_n w_n c(y_n)`` of the log-likelihood's ``eta``-free terms
        (``family.loglik_constant``): computed once, not in every pass of
        :meth:`value_and_grad`."""
        return float(self.sample_weight @ self.family.loglik_constant(self.y))

    def neg_hessian(self, eta, dtype=np.float64):
        """``-d^2 log posterior / d theta^2``: the Laplace precision at ``theta``; with
        ``dtype=np.float32`` an approximation from single-precision Grams (for Newton steps
        only, see :func:`~skcoreset._design.weighted_gram`)."""
        c = -self.sample_weight * self.family.d2(self.y, eta)
        H = weighted_gram(self.X, np.maximum(c, 0.0), self.fit_intercept, dtype=dtype)
        H[np.diag_indices_from(H)] += self.prior_prec
        return H

    def log_prior_normaliser(self):
        """``log`` of the prior's normalising constant (:func:`prior_log_normaliser`)."""
        return prior_log_normaliser(self.prior_prec)


def prior_log_normaliser(prior_prec):
    """``log`` of the normalising constant of ``N(0, P^-1)``: ``(log det P - p log 2 pi) / 2``
    for the diagonal precision ``P = diag(prior_prec)``."""
    return 0.5 * (np.sum(np.log(prior_prec)) - len(prior_prec) * np.log(2 * np.pi))


def laplace_log_evidence(log_post, theta, eta, posterior, value=None):
    """Laplace estimate of ``log p(data)`` at the mode ``theta`` with precision-based posterior.

    ``log p(data) ~ log p(data, theta) + p/2 log 2 pi + log det(cov) / 2``; exact for the
    Gaussian family. ``value``: the log posterior at ``theta`` when known (no pass over the
    data then).
    """
    if value is None:
        value = log_post.value(theta, eta)
    logdet_cov = 2.0 * np.sum(np.log(np.diag(posterior.cov_cholesky)))
    p = len(theta)
    return (value + log_post.log_prior_normaliser()
            + 0.5 * p * np.log(2 * np.pi) + 0.5 * logdet_cov)
