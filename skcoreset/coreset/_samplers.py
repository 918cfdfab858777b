"""Samplers of a coreset posterior ``pi_w ~ exp(sum_n w_n f_n(theta)) pi_0(theta)``.

Both are cheap to move after a small weight change: the Laplace sampler refits only the
coreset rows by Newton's method warm-started at the previous mode, and the ensemble sampler
continues its emcee walkers from their previous positions.
"""

import numpy as np
from scipy import sparse
from scipy.linalg import lapack

from .._design import weighted_gram
from .._inference import log_probability, newton_map, stretch_scale
from .._linalg import stable_cholesky

# Newton tolerance of the warm-started Laplace refits, in log-density units: far below the
# Monte Carlo error of S draws, so a refit after a small weight change is often free.
_NEWTON_TOL = 1e-8
# After a small weight change the previous mode is within a step or two of pure Newton: the
# first steps of a refit are taken whole while they increase the log posterior.
_FULL_STEPS = 4
# emcee stretch-move steps per refresh of the ensemble after a weight update.
_MCMC_STEPS = 10


class _ActiveLogPosterior:
    """Weighted log posterior of the active rows, for :func:`newton_map`.

    The same quantities as :class:`~skcoreset._inference._common.LogPosterior`, on a dense
    design ``A = [X_I, 1]`` of at most M rows built once per greedy step: at this size plain
    GEMMs beat the general code's bookkeeping, and the refit runs T times per greedy step.
    A sparse design (rows of sparse data) stays sparse: its products are sparse BLAS.
    """

    def __init__(self, design, y, family, weights, prior_prec, offset=None):
        self.design, self.y, self.family = design, y, family
        self.sample_weight = weights
        self.prior_prec = prior_prec
        self.offset = offset

    def eta(self, theta):
        eta = self.design @ theta
        return eta if self.offset is None else eta + self.offset

    def value(self, theta, eta):
        return (self.sample_weight @ self.family.loglik(self.y, eta)
                - 0.5 * np.sum(self.prior_prec * theta**2))

    def grad(self, theta, eta):
        return (self.design.T @ (self.sample_weight * self.family.d1(self.y, eta))
                - self.prior_prec * theta)

    def neg_hessian(self, eta):
        c = np.maximum(-self.sample_weight * self.family.d2(self.y, eta), 0.0)
        if sparse.issparse(self.design):
            hessian = weighted_gram(self.design, c, False)
        else:
            hessian = (self.design.T * c) @ self.design
        hessian[np.diag_indices_from(hessian)] += self.prior_prec
        return hessian


def _design(X, fit_intercept):
    """Design ``[X, 1]`` (or ``X``) of a few rows: dense, or CSR for sparse rows."""
    if sparse.issparse(X):
        ones = sparse.csr_matrix(np.ones((X.shape[0], 1)))
        return sparse.hstack([X, ones], format="csr") if fit_intercept else X.tocsr()
    return np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X.copy()


class LaplaceSampler:
    """Gaussian (Laplace) approximation of ``pi_w``, refitted by warm-started Newton.

    The reference implementation's choice. Only the active rows enter the log posterior, so
    a refit costs ``O(|I| p^2)``; warm-started from the previous mode after a small weight
    change it usually takes one Newton step, or none. ``offset``: the rows' offsets in the
    linear predictor, or None.
    """

    def __init__(self, X, y, family, prior_prec, fit_intercept, offset=None):
        self.X, self.y, self.family = X, y, family
        self.offset = offset
        self.prior_prec = prior_prec
        self.fit_intercept = fit_intercept
        self._active = None
        self.update(np.empty(0, dtype=np.intp), np.empty(0))

    def update(self, active, weights):
        """Refit to the coreset posterior with ``weights`` on the rows ``active``."""
        if not np.any(weights > 0):  # the prior, exactly
            self.mean = np.zeros(len(self.prior_prec))
            precision = np.diag(self.prior_prec)
        else:
            if self._active is None or not np.array_equal(self._active, active):
                self._active = active.copy()
                self._design = _design(self.X[active], self.fit_intercept)
            log_post = _ActiveLogPosterior(
                self._design, self.y[active], self.family, weights, self.prior_prec,
                None if self.offset is None else self.offset[active])
            self.mean, _, precision, _, _ = newton_map(
                log_post, self.mean, tol=_NEWTON_TOL, full_steps=_FULL_STEPS)
        # draws are mean + z^T L^-1 for the precision's Cholesky factor L: one small GEMM
        # per draw set instead of a triangular solve
        self.precision_chol = stable_cholesky(precision)
        self.precision_chol_inv = lapack.dtrtri(self.precision_chol, lower=1)[0]

    def draw(self, n_draws, rng):
        """``n_draws`` independent draws, shape ``(n_draws, p)``."""
        z = rng.standard_normal((n_draws, len(self.mean)))
        return self.mean + z @ self.precision_chol_inv

    def gaussian(self):
        """``(mean, cov_cholesky)`` of the approximation."""
        inv = self.precision_chol_inv
        return self.mean, stable_cholesky(inv.T @ inv)


class EnsembleSampler:
    """Short emcee runs on ``pi_w``, each warm-started from the previous walker positions.

    The walkers start as exact draws from the prior (``pi_0``, the coreset posterior of
    ``w = 0``) or, with :meth:`start_at`, from a Gaussian close to ``pi_w``; after every
    weight update they take ``n_steps`` stretch moves under the new log posterior, which only
    involves the active rows. The walker positions are the draws.
    """

    def __init__(self, X, y, family, prior_prec, fit_intercept, n_draws, rng, *,
                 n_steps=_MCMC_STEPS, offset=None):
        import emcee

        self._emcee, self._log_probability = emcee, log_probability
        self.X, self.y, self.family = X, y, family
        self.offset = offset
        self.prior_prec = prior_prec
        self.fit_intercept = fit_intercept
        self.n_steps = n_steps
        p = len(prior_prec)
        self.n_walkers = max(n_draws, 2 * p + 2)
        self.move = emcee.moves.StretchMove(a=stretch_scale(p))
        z = rng.standard_normal((self.n_walkers, p))
        self.positions = z / np.sqrt(prior_prec)
        self.update(np.empty(0, dtype=np.intp), np.empty(0))

    def start_at(self, mean, cov_inv_factor, rng):
        """Put the walkers at draws ``mean + z @ cov_inv_factor`` of a Gaussian (e.g. the
        Laplace approximation of ``pi_w`` from :class:`LaplaceSampler`), skipping burn-in."""
        z = rng.standard_normal((self.n_walkers, len(mean)))
        self.positions = mean + z @ cov_inv_factor

    def update(self, active, weights):
        """Target the coreset posterior with ``weights`` on the rows ``active``."""
        self.log_prob = self._log_probability(
            self.X[active], self.y[active], self.family, sample_weight=weights,
            prior_prec=self.prior_prec, fit_intercept=self.fit_intercept,
            offset=None if self.offset is None else self.offset[active])
        self.at_prior = not np.any(weights > 0)

    def draw(self, n_draws, rng):
        """Advance the ensemble and return ``n_draws`` walker positions."""
        if not self.at_prior:
            sampler = self._emcee.EnsembleSampler(
                self.n_walkers, self.positions.shape[1], self.log_prob, vectorize=True,
                moves=self.move)
            sampler.random_state = np.random.RandomState(
                rng.randint(np.iinfo(np.int32).max)).get_state()
            state = sampler.run_mcmc(self.positions, self.n_steps, progress=False,
                                     skip_initial_state_check=True)
            self.positions = state.coords
        if n_draws == self.n_walkers:
            return self.positions.copy()
        return self.positions[rng.choice(self.n_walkers, n_draws, replace=False)]

    def gaussian(self):
        """Moment-matched ``(mean, cov_cholesky)`` of the walkers."""
        mean = self.positions.mean(axis=0)
        centred = self.positions - mean
        return mean, stable_cholesky(centred.T @ centred / (len(centred) - 1))
