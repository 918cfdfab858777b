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

A model with an overdispersion estimated from the data (the negative binomial ``alpha``)
has one more parameter, ``rho = log alpha``, which the estimator fitted on the coreset
estimates again from its rows. Its weights are then calibrated in the joint parameter
``(theta, rho)``: the whitening is that of the joint Laplace approximation, and each row's
gradient and negative Hessian gain the terms in ``rho`` (``v`` below is the whitened
direction of ``rho``, the same for every row),

    g_n = d1_n b_n + dr_n v,
    N_n = c_n b_n b_n^T + e_n (b_n v^T + v b_n^T) + f_n v v^T,

with ``dr_n``, ``-e_n`` and ``-f_n`` the derivatives of the log-likelihood in ``rho``, in
``rho`` and ``eta``, and twice in ``rho``. Weights calibrated at a fixed alpha leave the
coreset's estimate of alpha and the coefficients' spread given it off (on the RAND HIE
doctor visits: alpha 3.8 sds low, every sd 4 % narrow).
"""

from typing import NamedTuple

import numpy as np
from scipy import linalg

from .._backend import dense_rows, float_rows, row_chunks
from .._design import linear_predictor, rmatvec
from .._inference import find_mode, laplace, log_posterior_of
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


class DispersionSums(NamedTuple):
    """The full data's weighted log-likelihood derivatives in ``rho = log alpha`` at the
    mode: ``sum_n w_n dl_n/drho``, ``sum_n w_n d2l_n/(drho deta) a_n`` and
    ``sum_n w_n d2l_n/drho2``."""

    grad: float
    cross: np.ndarray
    curvature: float


def dispersion_sums(theta, family, fit_intercept, X, y, w, offset=None):
    """:class:`DispersionSums` terms of the rows ``X, y, w`` (with their offsets; a
    storage's ``sum`` function: read in row chunks, so a memmap is never loaded whole)."""
    grad, curvature = 0.0, 0.0
    cross = np.zeros(len(theta))
    for rows in row_chunks(len(y), X.shape[1]):
        chunk = float_rows(X[rows])
        eta = linear_predictor(chunk, theta, fit_intercept)
        if offset is not None:
            eta = eta + offset[rows]
        d_rho, d_rho_rho, d_rho_eta = family.log_alpha_derivatives(y[rows], eta)
        grad += float(w[rows] @ d_rho)
        curvature += float(w[rows] @ d_rho_rho)
        cross += rmatvec(chunk, w[rows] * d_rho_eta, fit_intercept)
    return (grad, cross, curvature)


def _joint_pairs(a, b, gram, uv_a, uv_b, vv):
    """``g_a . g_b + <N_a, N_b>_F / 2`` of the joint terms (see the module docstring) for
    rows ``a`` and ``b`` (dicts of ``d1, dr, c, e, f``, broadcast against each other), with
    ``gram = b_a . b_b``, ``uv = b . v`` and ``vv = v . v``."""
    g = (a["d1"] * b["d1"] * gram + a["d1"] * b["dr"] * uv_a + a["dr"] * b["d1"] * uv_b
         + a["dr"] * b["dr"] * vv)
    n = (a["c"] * b["c"] * gram**2 + 2 * gram * (a["c"] * b["e"] * uv_a + a["e"] * b["c"] * uv_b)
         + a["c"] * b["f"] * uv_a**2 + a["f"] * b["c"] * uv_b**2
         + 2 * a["e"] * b["e"] * (gram * vv + uv_a * uv_b)
         + 2 * vv * (a["e"] * b["f"] * uv_a + a["f"] * b["e"] * uv_b) + a["f"] * b["f"] * vv**2)
    return g + 0.5 * n


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
    dispersion : DispersionSums, default=None
        The full data's derivatives in ``rho = log alpha`` at ``theta`` and the family's
        alpha: calibrate in ``(theta, rho)`` jointly (see the module docstring). Ignored
        (a fit in theta alone) when the joint negative Hessian is not positive definite,
        e.g. at the Poisson limit.
    offset : ndarray of shape (M,), default=None
        The candidate rows' offsets in the linear predictor.
    """

    def __init__(self, X, y, family, fit_intercept, theta, precision, grad_sum,
                 neg_hessian_sum, dispersion=None, offset=None):
        eta = linear_predictor(X, theta, fit_intercept)
        if offset is not None:
            eta = eta + offset
        X = dense_rows(X)  # the whitened rows B are dense whatever X
        design = np.hstack([X, np.ones((len(X), 1))]) if fit_intercept else X
        self.d1 = family.d1(y, eta)
        self.c = np.maximum(-family.d2(y, eta), 0.0)
        self.v = None
        chol = None
        if dispersion is not None:
            # the joint negative Hessian, rho last; the likelihood's part is the target
            p = len(theta)
            target = np.empty((p + 1, p + 1))
            target[:p, :p] = neg_hessian_sum
            target[:p, p] = target[p, :p] = -dispersion.cross
            target[p, p] = -dispersion.curvature
            joint = target.copy()
            joint[:p, :p] = precision
            try:
                chol = linalg.cholesky(joint, lower=True)
            except linalg.LinAlgError:
                chol = None
        if chol is not None:
            design = np.hstack([design, np.zeros((len(design), 1))])
            grad_sum = np.append(grad_sum, dispersion.grad)
            neg_hessian_sum = target
            unit = np.zeros(p + 1)
            unit[p] = 1.0
            self.v = linalg.solve_triangular(chol, unit, lower=True)
            d_rho, d_rho_rho, d_rho_eta = family.log_alpha_derivatives(y, eta)
            self.dr, self.e, self.f = d_rho, -d_rho_eta, -d_rho_rho
        else:
            chol = linalg.cholesky(precision, lower=True)  # precision = C C^T
        # b_m = L^T a_m with L = C^-T (Sigma = L L^T): solve C b = a for all rows at once
        self.B = linalg.solve_triangular(chol, design.T, lower=True).T
        self.target_g = linalg.solve_triangular(chol, grad_sum, lower=True)
        half = linalg.solve_triangular(chol, neg_hessian_sum, lower=True)
        self.target_H = linalg.solve_triangular(chol, half.T, lower=True)
        self.target_H = 0.5 * (self.target_H + self.target_H.T)

    @property
    def joint(self):
        """Whether the fit is in ``(theta, rho)`` jointly."""
        return self.v is not None

    def _terms(self, rows):
        return {"d1": self.d1[rows], "dr": self.dr[rows], "c": self.c[rows],
                "e": self.e[rows], "f": self.f[rows]}

    def residual(self, weights):
        """``(R_g, R_H)`` of the weights."""
        R_g = self.B.T @ (weights * self.d1) - self.target_g
        R_H = (self.B.T * (weights * self.c)) @ self.B - self.target_H
        if self.joint:
            v = self.v
            R_g += v * (weights @ self.dr)
            be = self.B.T @ (weights * self.e)
            R_H += np.outer(be, v) + np.outer(v, be) + (weights @ self.f) * np.outer(v, v)
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
        if self.joint:
            every = self._terms(slice(None))
            uv = B @ self.v
            own = _joint_pairs(every, every, norms, uv, uv, self.v @ self.v)
        else:
            own = d1**2 * norms + 0.5 * c**2 * norms**2
        lam = penalty * np.mean(w0**2 * own)
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
        if self.joint:
            v, Rv = self.v, R_H @ self.v
            grad_w += (self.dr[rows] * (v @ R_g) + self.e[rows] * (B @ Rv)
                       + 0.5 * self.f[rows] * (v @ Rv))
        return w0[rows] * grad_w + lam * (w[rows] / w0[rows] - 1.0)

    def _block_system(self, free, w0, lam):
        """The system of the relative weights of the rows ``free`` with the others fixed."""
        B, scale = self.B[free], w0[free]
        gram = B @ B.T
        if self.joint:
            terms = {key: value * scale for key, value in self._terms(free).items()}
            uv = B @ self.v
            system = _joint_pairs({key: value[:, None] for key, value in terms.items()},
                                  {key: value[None, :] for key, value in terms.items()},
                                  gram, uv[:, None], uv[None, :], self.v @ self.v)
        else:
            d1, c = self.d1[free] * scale, self.c[free] * scale
            system = np.outer(d1, d1) * gram
            system += 0.5 * np.outer(c, c) * gram**2
        system[np.diag_indices_from(system)] += lam
        return system

    def _solve_block(self, block, w, w0, lam, R_g, R_H, cache):
        """Minimise over the weights of ``block`` (in place in ``w``); returns the updated
        residual. ``cache`` keeps the block's :class:`_BlockFactor`: rows driven to zero
        later cost a Schur complement in them, not a new factorisation."""
        free = block[w[block] > 0]
        while len(free):
            B = self.B[free]
            scale = w0[free]
            factor = cache.get("factor")
            if factor is None or not factor.restrict(free):
                factor = cache["factor"] = _BlockFactor(free, self._block_system(free, w0, lam))
            rhs = -self._gradient(free, R_g, R_H, w, w0, lam)
            step = factor.solve(rhs) * scale
            new = w[free] + step
            negative = new < 0
            if negative.any():  # those rows leave the block: set them to zero, solve again
                step = np.where(negative, -w[free], 0.0)
                new = w[free] + step
            R_g = R_g + B.T @ (step * self.d1[free])
            R_H = R_H + (B.T * (step * self.c[free])) @ B
            if self.joint:
                v = self.v
                R_g = R_g + v * (step @ self.dr[free])
                be = B.T @ (step * self.e[free])
                R_H = (R_H + np.outer(be, v) + np.outer(v, be)
                       + (step @ self.f[free]) * np.outer(v, v))
            w[free] = new
            if not negative.any():
                break
            free = free[~negative]
        return R_g, R_H


class _BlockFactor:
    """The Cholesky factor of a block's system, reused for the systems of its subsets.

    The system of the rows kept, ``A_kk x_k = r_k``, is ``A x = r + E mu`` with ``x`` zero on
    the removed rows ``E``: ``mu = -S^-1 E^T A^-1 r`` with the Schur complement
    ``S = E^T A^-1 E``. Removed rows only accumulate (rows at zero stay there), so each costs
    one solve with the factor when it leaves (``2 n^2`` flops); past a sixth of the block
    a new factor (``n^3 / 3``) is cheaper.
    """

    def __init__(self, rows, system):
        self.rows = rows
        self.factor = _spd_factor(system)
        self.removed = np.empty(0, dtype=np.intp)  # positions in rows
        self.inverse_columns = np.empty((len(rows), 0))  # A^-1 E
        self.schur = None
        self.kept = np.arange(len(rows))

    def restrict(self, free):
        """Prepare the system of the rows ``free`` (sorted); False when this factor cannot
        serve it (a row outside it or back from zero, or too many rows removed)."""
        n = len(self.rows)
        kept = np.searchsorted(self.rows, free)
        if np.any(kept >= n) or not np.array_equal(self.rows[np.minimum(kept, n - 1)], free):
            return False
        mask = np.ones(n, dtype=bool)
        mask[kept] = False
        if 6 * np.count_nonzero(mask) > n or not mask[self.removed].all():
            return False
        mask[self.removed] = False
        new = np.flatnonzero(mask)
        if len(new):
            unit = np.zeros((n, len(new)))
            unit[new, np.arange(len(new))] = 1.0
            self.inverse_columns = np.hstack([
                self.inverse_columns,
                linalg.cho_solve(self.factor, unit, check_finite=False)])
            self.removed = np.concatenate([self.removed, new])
            schur = self.inverse_columns[self.removed]
            self.schur = _spd_factor(0.5 * (schur + schur.T))
        self.kept = kept
        return True

    def solve(self, rhs):
        """The solution on the kept rows of their system with right-hand side ``rhs``."""
        r = np.zeros(len(self.rows))
        r[self.kept] = rhs
        x = linalg.cho_solve(self.factor, r, check_finite=False)
        if len(self.removed):
            mu = linalg.cho_solve(self.schur, x[self.removed], check_finite=False)
            x -= self.inverse_columns @ mu
        return x[self.kept]


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

    def __call__(self, X, y, weights, offset=None):
        sampler = LaplaceSampler(X, y, self.family, self.prior_prec, self.fit_intercept,
                                 offset)
        sampler.mean = self.full_mean.copy()  # the warm start
        sampler.update(np.arange(len(y)), weights)
        mean, chol = sampler.gaussian()
        return float(gaussian_kl_cholesky(mean, chol, self.full_mean,
                                          self.full_cov_cholesky))


# Newton's method for the full data's mode.
_FULL_TOL = 1e-6
_FULL_MAX_ITER = 50


def laplace_distance(data, X, y, weights, family, prior_prec, fit_intercept, offset=None):
    """``KL(coreset Laplace || full Laplace)`` in nats and the largest difference of the
    two means in full-posterior sds, for a constructor that does not estimate them itself.

    The coreset's Laplace approximation is fitted on its rows ``X, y, weights`` (and
    their ``offset``); the full
    data's (the rows of the storage ``data``) as the estimators fit it (from a thinned
    start at large N, then a few Newton passes over the rows, each in row chunks or one
    reduction over the chunks on a cluster). Starting at the coreset's mode instead
    measured no faster: a coreset far off is a poor start (5 passes at N = 1e6).
    """
    # weights near the float range (1e300) overflow the sums: no estimate, (nan, nan)
    with np.errstate(all="ignore"):
        try:
            core = laplace(X, y, family, sample_weight=weights, prior_prec=prior_prec,
                           fit_intercept=fit_intercept, offset=offset).posterior
            mode = find_mode(log_posterior_of(data, family, prior_prec, fit_intercept),
                             tol=_FULL_TOL, max_iter=_FULL_MAX_ITER)
            full = GaussianPosterior(mode.x, precision=mode.neg_hessian)
        except (ValueError, linalg.LinAlgError, np.linalg.LinAlgError):
            return np.nan, np.nan
        kl = float(gaussian_kl_cholesky(core.mean, core.cov_cholesky, full.mean,
                                        full.cov_cholesky))
        sd = np.sqrt(np.einsum("ij,ij->i", full.cov_cholesky, full.cov_cholesky))
        error = float(np.max(np.abs(core.mean - full.mean) / sd))
    if not (np.isfinite(kl) and np.isfinite(error)):
        return np.nan, np.nan
    return kl, error


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
