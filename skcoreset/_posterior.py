"""Posterior objects returned by the inference functions and stored as ``posterior_``."""

import numpy as np
from scipy import linalg
from sklearn.utils import check_random_state


def _stable_cholesky(matrix):
    """Lower Cholesky factor of a symmetric positive (semi-)definite matrix.

    Adds the smallest diagonal jitter that makes the factorisation succeed, so covariances
    that are singular to rounding error (e.g. from a nearly flat direction) still factor.
    """
    matrix = 0.5 * (matrix + matrix.T)
    scale = max(np.max(np.abs(np.diag(matrix))), np.finfo(float).tiny)
    jitter = 0.0
    for _ in range(10):
        try:
            return linalg.cholesky(matrix + jitter * np.eye(len(matrix)), lower=True)
        except linalg.LinAlgError:
            jitter = max(10.0 * jitter, 1e-12 * scale)
    raise linalg.LinAlgError("Matrix is not positive definite, even with diagonal jitter.")


def gaussian_kl(mean0, chol0, mean1, chol1):
    """KL(N(mean0, L0 L0^T) || N(mean1, L1 L1^T)) from lower Cholesky factors."""
    p = len(mean0)
    a = linalg.solve_triangular(chol1, chol0, lower=True)  # L1^-1 L0
    b = linalg.solve_triangular(chol1, mean1 - mean0, lower=True)
    logdet = 2.0 * (np.sum(np.log(np.diag(chol1))) - np.sum(np.log(np.diag(chol0))))
    return 0.5 * (np.sum(a**2) + b @ b - p + logdet)


class GaussianPosterior:
    """Multivariate normal posterior ``N(mean, cov)`` over ``theta = [coef..., intercept]``.

    Give either ``cov`` or ``precision``; the other is derived through a Cholesky
    factorisation, never an explicit inverse of an unfactored matrix.

    Parameters
    ----------
    mean : array-like of shape (p,)
        Posterior mean.
    cov : array-like of shape (p, p), default=None
        Posterior covariance.
    precision : array-like of shape (p, p), default=None
        Posterior precision (inverse covariance), e.g. the negative Hessian of the log
        posterior at the mode for a Laplace approximation.

    Attributes
    ----------
    mean : ndarray of shape (p,)
    cov : ndarray of shape (p, p)
    cov_cholesky : ndarray of shape (p, p)
        Lower Cholesky factor ``L`` with ``cov = L @ L.T``.
    """

    def __init__(self, mean, cov=None, *, precision=None):
        if (cov is None) == (precision is None):
            raise ValueError("Give exactly one of cov and precision.")
        self.mean = np.asarray(mean, dtype=float)
        if cov is None:
            precision = np.asarray(precision, dtype=float)
            prec_chol = _stable_cholesky(precision)
            eye = np.eye(len(self.mean))
            cov = linalg.cho_solve((prec_chol, True), eye)
            self._precision = precision
        else:
            cov = np.asarray(cov, dtype=float)
            self._precision = None
        self.cov = 0.5 * (cov + cov.T)
        self.cov_cholesky = _stable_cholesky(self.cov)

    @property
    def precision(self):
        """Inverse covariance ``(p, p)``."""
        if self._precision is None:
            self._precision = linalg.cho_solve((self.cov_cholesky, True), np.eye(len(self.mean)))
        return self._precision

    @property
    def std(self):
        """Marginal posterior standard deviations ``(p,)``."""
        return np.sqrt(np.diag(self.cov))

    def sample(self, n_samples=1, random_state=None):
        """Draw ``n_samples`` parameter vectors, shape ``(n_samples, p)``.

        ``random_state`` is anything :func:`sklearn.utils.check_random_state` accepts, or a
        :class:`numpy.random.Generator`.
        """
        rng = (random_state if isinstance(random_state, np.random.Generator)
               else check_random_state(random_state))
        z = rng.standard_normal((n_samples, len(self.mean)))
        return self.mean + z @ self.cov_cholesky.T

    def logpdf(self, theta):
        """Log density at ``theta`` of shape (p,) or (S, p)."""
        single = np.ndim(theta) == 1
        theta = np.atleast_2d(theta)
        z = linalg.solve_triangular(self.cov_cholesky, (theta - self.mean).T, lower=True)
        p = len(self.mean)
        logdet = 2.0 * np.sum(np.log(np.diag(self.cov_cholesky)))
        out = -0.5 * (np.sum(z**2, axis=0) + logdet + p * np.log(2.0 * np.pi))
        return out[0] if single else out

    def kl(self, other):
        """``KL(self || other)`` to another :class:`GaussianPosterior`."""
        return gaussian_kl(self.mean, self.cov_cholesky, other.mean, other.cov_cholesky)

    def __repr__(self):
        return f"GaussianPosterior(dim={len(self.mean)})"
