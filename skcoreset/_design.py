"""The linear predictor ``eta = X @ coef + intercept`` and its adjoints.

Parameter vectors are ``theta = [coef..., intercept]`` (intercept last, as in the papers' data
files) when ``fit_intercept`` is true. The intercept column is never materialised, so a large
``X`` is not copied.
"""

import numpy as np
from scipy.linalg.blas import dsyrk


def n_params(n_features, fit_intercept):
    """Length of theta."""
    return n_features + int(fit_intercept)


def split_theta(theta, fit_intercept):
    """``(coef, intercept)`` from theta of shape (p,) or (S, p); intercept is 0 without one."""
    theta = np.asarray(theta)
    if fit_intercept:
        return theta[..., :-1], theta[..., -1]
    return theta, np.zeros(theta.shape[:-1])


def linear_predictor(X, theta, fit_intercept):
    """``eta`` of shape (n,) for theta of shape (p,), or (n, S) for S draws of shape (S, p)."""
    coef, intercept = split_theta(theta, fit_intercept)
    return X @ coef.T + intercept


def rmatvec(X, r, fit_intercept):
    """``A.T @ r`` for the design ``A = [X, 1]`` (or ``X``) and r of shape (n,)."""
    out = X.T @ r
    if fit_intercept:
        out = np.append(out, r.sum())
    return out


_GRAM_BLOCK_ROWS = 8192


def weighted_gram(X, c, fit_intercept):
    """``A.T @ diag(c) @ A`` for the design ``A = [X, 1]`` (or ``X``) and ``c >= 0``.

    Symmetric rank-k BLAS updates (``syrk``: half the flops of a general product) on
    ``sqrt(c) * X``, accumulated over blocks of rows: each block stays in cache, and no
    scaled copy of the whole of X is made (that copy made one large ``syrk`` call an order of
    magnitude slower at N = 1e6).
    """
    n, d = X.shape
    sqrt_c = np.sqrt(c)
    lower = np.zeros((d, d), order="F")
    cross = np.zeros(d)
    for start in range(0, n, _GRAM_BLOCK_ROWS):
        rows = slice(start, min(start + _GRAM_BLOCK_ROWS, n))
        scaled = np.asarray(X[rows] * sqrt_c[rows, None], dtype=np.float64)
        # syrk on the Fortran-ordered view scaled.T accumulates scaled.T @ scaled in place
        lower = dsyrk(1.0, scaled.T, beta=1.0, c=lower, trans=0, lower=1, overwrite_c=1)
        if fit_intercept:
            cross += sqrt_c[rows] @ scaled
    gram = np.tril(lower) + np.tril(lower, -1).T
    if not fit_intercept:
        return gram
    out = np.empty((d + 1, d + 1))
    out[:-1, :-1] = gram
    out[:-1, -1] = out[-1, :-1] = cross
    out[-1, -1] = c.sum()
    return out


def latent_moments(X, mean, cov_chol, fit_intercept):
    """Mean and variance of ``eta = x . theta`` for ``theta ~ N(mean, L L^T)``, per row of X.

    ``cov_chol`` is the lower Cholesky factor ``L`` of the covariance; the variance is
    ``||L^T a||^2`` for each design row ``a``, computed without forming ``A @ cov @ A.T``.
    """
    m = linear_predictor(X, mean, fit_intercept)
    # column k of L is a "draw": (L^T a)_k = a . L[:, k]
    proj = linear_predictor(X, cov_chol.T, fit_intercept)
    return m, np.einsum("ij,ij->i", proj, proj)
