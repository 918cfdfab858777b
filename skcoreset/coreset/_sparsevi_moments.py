"""Moments of the potentials under the coreset posterior ``pi_w``, for SparseVI.

The greedy selection (Campbell & Beronov 2019, eqs. 13, 20) and the KL gradient (eqs. 10, 22)
need ``Cov_w[f_n, f^T (s - w)]``: estimated from S draws of a sampler of ``pi_w``
(:class:`_MonteCarloMoments`, optionally on a subsample of the rows), or exact for the
Gaussian linear model (:class:`_ExactGaussianMoments`, Appendix B). Each estimator also names
the step rule its gradients suit and the KL it reports.
"""

import numpy as np
from scipy import linalg

from .._backend import take_offset
from .._design import linear_predictor, rmatvec, row_quadratic_forms, weighted_gram
from .._inference import PotentialEvaluator, laplace
from .._linalg import gaussian_kl_cholesky, stable_cholesky
from ._sparsevi_steps import _AdamStep, _NaturalStep

# n_subsample="auto": every row up to this many candidate rows, else a subsample of this
# size. Above the paper's N = 500 and the pinned tests. Measured (logistic, d = 10, M = 100,
# S = T = 100, N = 1e5): final KL 20 nats at U = 1000, 5.0 at 5000, 2.6 at 20,000, for
# relative times 1 : 6 : 9 per greedy step.
AUTO_SUBSAMPLE = 5000
# Centred potentials above this are rescaled before their products (covariances over
# N rows and S draws), which would otherwise overflow float64.
_LARGEST_POTENTIAL = 1e100


def resolve_subsample(n_subsample, n_candidates):
    """Subsample size U for ``n_candidates`` rows of positive weight, or None for all rows.

    ``"auto"`` is :data:`AUTO_SUBSAMPLE`; a subsample at least as large as the candidate
    rows would only add sampling noise, so every row is used instead.
    """
    if n_subsample == "auto":
        n_subsample = AUTO_SUBSAMPLE
    if n_subsample is None or n_subsample >= n_candidates:
        return None
    return int(n_subsample)


def select_point(rows, cov, var, weights_of_rows):
    """Position in ``rows`` of the greedy choice of eq. (13), or ``None``.

    The correlation of each potential with the residual is ``cov / sqrt(var)`` up to the
    common factor ``1 / sd(residual)``; rows already carrying weight compete with its absolute
    value (their weight may also fall), new rows only with positive correlations.
    """
    corr = np.full(len(rows), -np.inf)
    ok = var > 0
    corr[ok] = cov[ok] / np.sqrt(var[ok])
    held = ok & (weights_of_rows > 0)
    corr[held] = np.abs(corr[held])
    best = int(np.argmax(corr))
    return best if np.isfinite(corr[best]) else None


class _MonteCarloMoments:
    """Monte Carlo estimates of eqs. (20) and (22) from S draws of a sampler of ``pi_w``.

    With a subsample size U (``n_subsample`` resolved by :func:`resolve_subsample`) the
    residual ``f^T (s - w)`` is estimated, without bias, from the active rows and a fresh
    subsample of U rows (Campbell & Beronov 2019, sections 3.2-3.3), and selection is
    restricted to those rows: a selection or gradient step evaluates ``(|I| + U) S``
    potentials instead of ``N S``. ``offset``: the rows' offsets in their linear predictors,
    or None.
    """

    def __init__(self, X, y, sample_weight, family, fit_intercept, prior_prec, sampler,
                 n_draws, n_subsample, budget, rng, offset=None):
        self.X, self.y, self.s, self.offset = X, y, sample_weight, offset
        self.budget = budget
        self.family = family
        self.fit_intercept = fit_intercept
        self.prior_prec = prior_prec
        self.potentials = PotentialEvaluator(family, fit_intercept, n_draws)
        self.sampler = sampler
        self.n_draws = n_draws
        self.rng = rng
        self.candidates = np.flatnonzero(sample_weight > 0)
        self.n_subsample = resolve_subsample(n_subsample, len(self.candidates))
        if self.n_subsample is None:  # the same rows every time: gather them once
            self._X_rows, self._y_rows = X[self.candidates], y[self.candidates]
            self._offset_rows = take_offset(offset, self.candidates)
        else:
            self._cumulative_weight = np.cumsum(sample_weight[self.candidates])
        self._cached = None
        self._full_gaussian = None
        self.overflowed = False

    def residual_rows(self, active, weights):
        """Rows whose potentials are needed, the residual's coefficients on them, and the
        positions of the active rows among them."""
        if self.n_subsample is None:
            rows = self.candidates
            coef = self.s[rows].copy()
            position = np.searchsorted(rows, active)
            coef[position] -= weights
            return rows, coef, position
        # U draws with replacement, row n with probability s_n / sum(s): uniform over the
        # data the weighted rows stand for. Then sum(s) / U * sum_j f_{u_j} is an unbiased
        # estimate of sum_n s_n f_n, with less variance than uniform row draws scaled by
        # s_n when the weights vary; without replacement would cost O(N) per call. Sorted
        # keys make the binary searches (and the row gathers) cache-friendly.
        total = self._cumulative_weight[-1]
        u = np.sort(self.rng.random_sample(self.n_subsample)) * total
        picked = np.searchsorted(self._cumulative_weight, u, side="right")
        sub = self.candidates[np.minimum(picked, len(self.candidates) - 1)]
        rows = np.concatenate([active, sub])
        coef = np.concatenate([-weights, np.full(self.n_subsample, total / self.n_subsample)])
        return rows, coef, np.arange(len(active))

    def _centred_potentials(self, active, weights):
        """Row-centred potentials ``g`` (eq. 20) on fresh draws, and the residual; ``g`` is
        None when the draws' potentials overflow (:attr:`overflowed`)."""
        thetas = self.sampler.draw(self.n_draws, self.rng)
        rows, coef, position = self.residual_rows(active, weights)
        if self.n_subsample is None:
            g = self.potentials(self._X_rows, self._y_rows, thetas, self._offset_rows)
        else:
            g = self.potentials(self.X[rows], self.y[rows], thetas,
                                take_offset(self.offset, rows))
        # A wide pi_w (a vague prior, before the coreset pins the parameters down) puts
        # draws where log-link potentials, -exp(eta), overflow: no estimate exists then.
        if not np.isfinite(g).all():
            self.overflowed = True
            return None, None, rows, position
        g -= g.mean(axis=1, keepdims=True)
        # Or they are finite but their products (sums over rows and draws) would overflow:
        # one positive factor common to every row changes no correlation (eq. 13) nor the
        # direction of the step, and keeps them finite.
        largest = np.abs(g).max()
        self.overflowed = bool(largest > _LARGEST_POTENTIAL)
        if self.overflowed:
            g /= largest
        resid = coef @ g
        resid -= resid.mean()
        return g, resid, rows, position

    def select(self, active, weights):
        """Greedy choice of eq. (13) from the correlations of eq. (20); row index or None."""
        g, resid, rows, position = self._centred_potentials(active, weights)
        if g is None:
            self._cached = None
            return None
        cov = g @ resid / self.n_draws
        var = np.einsum("ij,ij->i", g, g) / self.n_draws
        held = np.zeros(len(rows))
        held[position] = weights
        best = select_point(rows, cov, var, held)
        # pi_w does not change when the new point joins with weight 0, so the first
        # gradient step reuses these draws
        self._cached = None if best is None else (g, resid, position, best)
        return None if best is None else rows[best]

    def gradient(self, active, weights):
        """Monte Carlo KL gradient ``-(1/S) sum_s g_s g_s^T (s - w)`` on the active rows
        (eq. 22), from fresh draws of ``pi_w`` (or the selection's, right after it)."""
        if self._cached is not None:
            g, resid, position, best = self._cached
            self._cached = None
            if len(position) < len(active):
                position = np.append(position, best)
        else:
            self.sampler.update(active, weights)
            g, resid, _, position = self._centred_potentials(active, weights)
            if g is None:  # no estimate at these draws: no step
                return np.zeros(len(active))
        return -(g[position] @ resid) / self.n_draws

    def step_rule(self, n_active):
        return _AdamStep(n_active, scale=self.s.sum() / self.budget)

    def refresh(self, active, weights):
        """Move the sampler to ``pi_w`` for the next selection."""
        self._cached = None
        self.sampler.update(active, weights)

    def _full(self):
        if self._full_gaussian is None:
            rows = self.candidates
            full = laplace(self.X[rows], self.y[rows], self.family,
                           sample_weight=self.s[rows], prior_prec=self.prior_prec,
                           fit_intercept=self.fit_intercept,
                           offset=take_offset(self.offset, rows)).posterior
            self._full_gaussian = (full.mean, full.cov_cholesky)
        return self._full_gaussian

    def kl(self):
        """``KL(pi_w || pi)`` and the symmetrised KL between Gaussian proxies: the sampler's
        Gaussian (Laplace, or moment-matched walkers) and the full data's Laplace."""
        mean, chol = self.sampler.gaussian()
        full_mean, full_chol = self._full()
        forward = gaussian_kl_cholesky(mean, chol, full_mean, full_chol)
        return forward, forward + gaussian_kl_cholesky(full_mean, full_chol, mean, chol)


class _ExactGaussianMoments:
    """Exact moments of the Gaussian model with known noise (Campbell & Beronov 2019, App. B.2).

    ``pi_w = N(mu_w, Sigma_w)`` with ``Sigma_w^-1 = P + tau A^T W A`` and
    ``mu_w = Sigma_w tau A^T W y`` (eq. 33), and the potentials' covariance is (eq. 34)

        Cov_w[f_n, f_m] = tau^2 (nu_n nu_m k_nm + k_nm^2 / 2),

    ``nu_n = y_n - a_n . mu_w``, ``k_nm = a_n^T Sigma_w a_m``, ``tau = 1 / noise^2``. Its
    product with the residual weights ``r = s - w`` needs only ``p``-dimensional sums:
    ``sum_m k_nm nu_m r_m = a_n^T Sigma_w A^T diag(r) nu`` and
    ``sum_m k_nm^2 r_m = a_n^T Sigma_w (A^T diag(r) A) Sigma_w a_n``, with
    ``A^T diag(r) A = A^T diag(s) A - A_I^T diag(w_I) A_I`` (the first term computed once).
    A gradient costs ``O(|I| p^2 + p^3)`` and a selection ``O(N p^2)``: no Monte Carlo.
    """

    overflowed = False  # closed forms: no draws to overflow

    def __init__(self, X, y, sample_weight, noise_scale, prior_prec, fit_intercept):
        self.X, self.y = X, y
        self.tau = noise_scale**-2.0
        self.prior_prec = prior_prec
        self.fit_intercept = fit_intercept
        self.candidates = np.flatnonzero(sample_weight > 0)
        self.gram_s = weighted_gram(X, sample_weight, fit_intercept)
        self.xy_s = rmatvec(X, sample_weight * y, fit_intercept)
        self.full = self._posterior(self.gram_s, self.xy_s)
        self.refresh(np.empty(0, dtype=np.intp), np.empty(0))

    def _posterior(self, gram, xy):
        """``(mean, cov, cov_cholesky)`` of the posterior with weighted statistics."""
        precision = self.tau * gram
        precision[np.diag_indices_from(precision)] += self.prior_prec
        cov = linalg.cho_solve((stable_cholesky(precision), True), np.eye(len(xy)))
        return cov @ (self.tau * xy), cov, stable_cholesky(cov)

    def refresh(self, active, weights):
        """Closed-form ``pi_w`` for ``weights`` on the rows ``active`` (eq. 33)."""
        X_active = self.X[active]
        self.gram_w = weighted_gram(X_active, weights, self.fit_intercept)
        self.xy_w = rmatvec(X_active, weights * self.y[active], self.fit_intercept)
        self.mean, self.cov, self.cov_chol = self._posterior(self.gram_w, self.xy_w)

    def moments(self, rows):
        """``Cov_w[f_n, f^T (s - w)]`` and ``Var_w[f_n]`` for ``rows``, exactly (eq. 34)."""
        X, fit = self.X[rows], self.fit_intercept
        nu = self.y[rows] - linear_predictor(X, self.mean, fit)
        gram_r = self.gram_s - self.gram_w
        h = (self.xy_s - self.xy_w) - gram_r @ self.mean  # A^T diag(r) nu
        k = row_quadratic_forms(X, self.cov, fit)
        tau2 = self.tau**2
        cov = tau2 * (nu * linear_predictor(X, self.cov @ h, fit)
                      + 0.5 * row_quadratic_forms(X, self.cov @ gram_r @ self.cov, fit))
        var = tau2 * (nu**2 * k + 0.5 * k**2)
        return cov, var

    def select(self, active, weights):
        """Greedy choice of eq. (13) with exact correlations; row index or None."""
        rows = self.candidates
        cov, var = self.moments(rows)
        held = np.zeros(len(rows))
        held[np.searchsorted(rows, active)] = weights
        best = select_point(rows, cov, var, held)
        return None if best is None else rows[best]

    def gradient(self, active, weights):
        """Exact KL gradient ``-Cov_w[f_I, f^T (s - w)]`` (eq. 10) on the active rows."""
        self.refresh(active, weights)
        return -self.moments(active)[0]

    def fisher(self, active):
        """Exact Fisher block ``G_II = Cov_w[f_I, f_I]`` (eqs. 23, 34) at the last refresh."""
        X, fit = self.X[active], self.fit_intercept
        factor = linear_predictor(X, self.cov_chol.T, fit)  # rows L^T a_n
        k = factor @ factor.T
        nu = self.y[active] - linear_predictor(X, self.mean, fit)
        return self.tau**2 * (np.outer(nu, nu) * k + 0.5 * k**2)

    def step_rule(self, n_active):
        return _NaturalStep(self)

    def kl(self):
        """Exact ``KL(pi_w || pi)`` and ``KL(pi_w || pi) + KL(pi || pi_w)``."""
        mean, _, chol = self.full
        forward = gaussian_kl_cholesky(self.mean, self.cov_chol, mean, chol)
        return forward, forward + gaussian_kl_cholesky(mean, chol, self.mean, self.cov_chol)
