"""The quasi-Newton step on a coreset's weights with exact moments in the Laplace regime.

Around the full data's posterior mode ``theta*``, with posterior covariance
``Sigma = L L^T``, write ``theta = theta* + L z``. To second order the potential of row n is
``f_n(theta) = f_n(theta*) + d1_n b_n . z - c_n (b_n . z)^2 / 2`` with the whitened design
row ``b_n = L^T a_n``, ``d1_n`` and ``-c_n`` the first and second derivatives of the
log-likelihood in the linear predictor. Under ``z ~ N(0, I)`` (the full data's Laplace
approximation) two such expansions have the covariance

    Cov[f_m, f_k] = d1_m d1_k (b_m . b_k) + c_m c_k (b_m . b_k)^2 / 2,

so the quasi-Newton regression of the residual ``(s - w)^T f`` on the coreset potentials
(Naik, Chen & Campbell, 2022), which estimates these covariances from S draws, can be taken
with its exact moments instead. Its objective, half the variance of the residual, is

    KL_2(w) = ||R_g||^2 / 2 + ||R_H||_F^2 / 4,
    R_g = sum_m w_m d1_m b_m - L^T g,   R_H = sum_m w_m c_m b_m b_m^T - L^T H L,

where ``g`` and ``H`` are the full data's log-likelihood gradient and minus its Hessian at
``theta*``: the second-order expansion of ``KL(pi_w || pi)`` (the mean error in the
full posterior's metric plus the precision error). It is zero exactly when the coreset's
log-likelihood has the full data's gradient and Hessian at the mode, i.e. the same Laplace
approximation. The weights minimising it (with ``w >= 0``) are survey calibration weights
(Deville & Sarndal, 1992): the candidates' importance weights adjusted, as little as
needed, so that their weighted totals of the auxiliary variables ``d1_n b_n`` and
``c_n b_n b_n^T`` match the full data's.
"""

import numpy as np
from scipy import linalg

from .._backend import dense_rows
from .._design import linear_predictor
from .._linalg import gaussian_kl_cholesky
from .._posterior import GaussianPosterior
from ._samplers import LaplaceSampler

# Weight of the pull towards the starting (importance) weights, relative to the mean of the
# second-order terms of one row at its starting weight: a regulariser of the directions the
# fit does not determine, small enough not to bias the fit (measured: 1e-4 ... 1e-6 give
# the same KL within 30 %; below 1e-8 the block systems become singular).
_PENALTY = 1e-6
# Rows per block of the block-coordinate solver: one Cholesky factor of this size per block
# and sweep (32 MB), whatever the number of coreset rows.
_BLOCK_ROWS = 2000
# Sweeps over the blocks end when one lowers the objective by less than this fraction.
_SWEEP_RTOL = 1e-4
_MAX_SWEEPS = 30


def _row_quadratic(B, R):
    """``b_m^T R b_m`` for every row of B."""
    return np.einsum("ij,ij->i", B @ R, B)


class SecondOrderFit:
    """The exact second-order quasi-Newton problem of a set of candidate rows.

    Parameters
    ----------
    X : ndarray of shape (M, d)
        The candidate rows.
    y : ndarray of shape (M,)
        Their encoded targets.
    family : Family
    fit_intercept : bool
    theta : ndarray of shape (p,)
        The full data's posterior mode.
    precision : ndarray of shape (p, p)
        The full data's posterior precision there (log-likelihood and prior).
    grad_sum : ndarray of shape (p,)
        The full data's weighted log-likelihood gradient at ``theta``.
    neg_hessian_sum : ndarray of shape (p, p)
        Minus the full data's weighted log-likelihood Hessian at ``theta``.
    """

    def __init__(self, X, y, family, fit_intercept, theta, precision, grad_sum,
                 neg_hessian_sum):
        chol = linalg.cholesky(precision, lower=True)  # precision = C C^T, Sigma = C^-T C^-1
        eta = linear_predictor(X, theta, fit_intercept)
        X = dense_rows(X)  # the whitened rows B are dense whatever X
        design = np.hstack([X, np.ones((len(X), 1))]) if fit_intercept else X
        # b_m = L^T a_m with L = C^-T: solve C b = a for all rows at once
        self.B = linalg.solve_triangular(chol, design.T, lower=True).T
        self.d1 = family.d1(y, eta)
        self.c = np.maximum(-family.d2(y, eta), 0.0)
        self.target_g = linalg.solve_triangular(chol, grad_sum, lower=True)
        half = linalg.solve_triangular(chol, neg_hessian_sum, lower=True)
        self.target_H = linalg.solve_triangular(chol, half.T, lower=True)
        self.target_H = 0.5 * (self.target_H + self.target_H.T)

    def residual(self, weights):
        """``(R_g, R_H)`` of the weights."""
        R_g = self.B.T @ (weights * self.d1) - self.target_g
        R_H = (self.B.T * (weights * self.c)) @ self.B - self.target_H
        return R_g, R_H

    def kl(self, weights):
        """``KL_2(w)``: the second-order KL estimate of the weights, in nats."""
        return _kl(*self.residual(weights))

    def solve(self, weights, *, penalty=_PENALTY, block_rows=_BLOCK_ROWS,
              max_sweeps=_MAX_SWEEPS):
        """Weights ``w >= 0`` minimising ``KL_2(w) + lam / 2 sum_m (w_m / w0_m - 1)^2``.

        Block coordinate descent over blocks of ``block_rows`` rows: each block's weights are
        the exact minimiser with the other blocks fixed (one Cholesky solve in the relative
        weights ``u = w / w0``), and rows driven below zero are set to zero and the block
        solved again without them (they stay at zero: an approximate active set, which
        keeps each block's factorisation once the rows at zero settle). A single block
        (``M <= block_rows``) is the direct solve.

        Parameters
        ----------
        weights : ndarray of shape (M,)
            The starting weights ``w0`` (positive), e.g. the candidates' importance weights.
        penalty : float
            ``lam`` relative to the mean second-order term ``w0_m^2 Var[f_m]`` of a row.

        Returns
        -------
        weights : ndarray of shape (M,)
        """
        w0 = np.asarray(weights, dtype=float)
        w = w0.copy()
        B, d1, c = self.B, self.d1, self.c
        norms = np.einsum("ij,ij->i", B, B)
        lam = penalty * np.mean(w0**2 * (d1**2 * norms + 0.5 * c**2 * norms**2))
        if not lam > 0:  # no candidate carries information: nothing to fit
            return w
        R_g, R_H = self.residual(w)
        objective = self._objective(R_g, R_H, w, w0, lam)
        blocks = [np.arange(start, min(start + block_rows, len(w)))
                  for start in range(0, len(w), block_rows)]
        caches = [{} for _ in blocks]
        for _ in range(max_sweeps):
            previous = objective
            for block, cache in zip(blocks, caches):
                R_g, R_H = self._solve_block(block, w, w0, lam, R_g, R_H, cache)
            objective = self._objective(R_g, R_H, w, w0, lam)
            if previous - objective <= _SWEEP_RTOL * previous:
                break
        return w

    @staticmethod
    def _objective(R_g, R_H, w, w0, lam):
        return _kl(R_g, R_H) + 0.5 * lam * np.sum((w / w0 - 1.0) ** 2)

    def _gradient(self, rows, R_g, R_H, w, w0, lam):
        """Gradient of the penalised objective in the relative weights of ``rows``."""
        B = self.B[rows]
        grad_w = self.d1[rows] * (B @ R_g) + 0.5 * self.c[rows] * _row_quadratic(B, R_H)
        return w0[rows] * grad_w + lam * (w[rows] / w0[rows] - 1.0)

    def _solve_block(self, block, w, w0, lam, R_g, R_H, cache):
        """Minimise over the weights of ``block`` (in place in ``w``); returns the updated
        residual. ``cache`` keeps the block's last factorisation and its rows: once the
        rows at zero settle, later sweeps cost two triangular solves per block."""
        free = block[w[block] > 0]
        while len(free):
            B = self.B[free]
            scale = w0[free]
            if cache.get("rows") is None or not np.array_equal(cache["rows"], free):
                d1, c = self.d1[free] * scale, self.c[free] * scale
                gram = B @ B.T
                system = np.outer(d1, d1) * gram + 0.5 * np.outer(c, c) * gram**2
                system[np.diag_indices_from(system)] += lam
                cache["rows"], cache["factor"] = free, _spd_factor(system)
            rhs = -self._gradient(free, R_g, R_H, w, w0, lam)
            step = linalg.cho_solve(cache["factor"], rhs, check_finite=False) * scale
            new = w[free] + step
            negative = new < 0
            if negative.any():  # those rows leave the block: set them to zero, solve again
                step = np.where(negative, -w[free], 0.0)
                new = w[free] + step
            R_g = R_g + B.T @ (step * self.d1[free])
            R_H = R_H + (B.T * (step * self.c[free])) @ B
            w[free] = new
            if not negative.any():
                break
            free = free[~negative]
        return R_g, R_H


class LaplaceKL:
    """``KL(coreset Laplace || full Laplace)`` of candidate weights, exactly.

    The coreset's Laplace approximation is refitted by Newton's method on its rows, warm
    started at the full data's mode; the KL between the two Gaussians then has its closed
    form. Unlike :meth:`SecondOrderFit.kl` it stays right when the weights are far from the
    full data's (e.g. a precision lost in some direction, where the second-order expansion
    gives ``1/4`` per direction and the KL grows like the log of the lost precision).
    """

    def __init__(self, full, family, prior_prec, fit_intercept):
        # only the mean and the covariance's factor enter the KL: the covariance itself
        # (p x p) is not kept
        posterior = GaussianPosterior(full.mean, precision=full.precision)
        self.full_mean, self.full_cov_cholesky = posterior.mean, posterior.cov_cholesky
        self.family, self.prior_prec = family, prior_prec
        self.fit_intercept = fit_intercept

    def __call__(self, X, y, weights):
        sampler = LaplaceSampler(X, y, self.family, self.prior_prec, self.fit_intercept)
        sampler.mean = self.full_mean.copy()  # the warm start
        sampler.update(np.arange(len(y)), weights)
        mean, chol = sampler.gaussian()
        return float(gaussian_kl_cholesky(mean, chol, self.full_mean,
                                          self.full_cov_cholesky))


def _kl(R_g, R_H):
    return float(0.5 * (R_g @ R_g) + 0.25 * np.sum(R_H * R_H))


def _spd_factor(system):
    """Cholesky factor of a symmetric positive definite system, its diagonal raised where
    rounding made it indefinite."""
    jitter = 0.0
    scale = np.mean(np.diag(system))
    while True:
        try:
            return linalg.cho_factor(system, lower=True, check_finite=False)
        except linalg.LinAlgError:
            jitter = max(10 * jitter, 1e-12 * scale)
            system[np.diag_indices_from(system)] += jitter
