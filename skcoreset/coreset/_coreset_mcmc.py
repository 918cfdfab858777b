"""Coreset Markov chain Monte Carlo (Chen & Campbell, 2024) with the learning-rate-free
Hot DoG step rule (Chen, Huggins & Campbell, 2024).

K Markov chains target the coreset posterior ``pi_w``; after every transition their states
``theta_1 .. theta_K`` give a stochastic gradient of ``KL(pi_w || pi)``,

    g = -1/(K - 1) sum_k (f_I(theta_k) - mean) (r(theta_k) - mean),
    r(theta) = sum_n s_n f_n(theta) - w^T f_I(theta),

(the covariance of the coreset potentials with the log density ratio, as in the quasi-Newton
step, but from K draws and one step at a time), and the weights take one step of Hot DoG
(projected on ``w >= 0``). The full data's sum is estimated from a fresh uniform subsample
per iteration with control variates about the full data's mode (Bardenet, Doucet & Holmes,
2017). The chains' transitions are preconditioned Metropolis-adjusted Langevin steps, the
preconditioner being the full data's Laplace covariance.

Hot DoG ("hot-start distance over gradients"): the chains first move with the starting
weights until the trend of their log densities has flattened (the hot start: before, the
gradient estimates are biased by burn-in); then each weight moves by

    step_m = d_m / sqrt(t v_m) * m_m,

with ``m`` and ``v`` Adam's bias-corrected running means of the gradient and its square, and
``d_m`` a running maximum of the distance the weight has travelled from its start (its first
value ``r``): the step size is learned from the distance travelled, with no learning rate.
"""

from numbers import Integral

import numpy as np
from scipy import linalg
from threadpoolctl import threadpool_limits

from .._backend import InMemoryRows
from .._inference import PotentialEvaluator
from .._docstrings import fill_doc
from .._sklearn_compat import Interval, StrOptions
from ._base import COMMON_ATTRS_DOC, COMMON_PARAMS_DOC, LikelihoodCoreset
from ._calibration import LaplaceKL
from ._candidates import draw_candidates
from ._quasi_newton import SubsampledPotentialSums

# Hot DoG's Adam rates and its first movement relative to each starting weight.
_BETA1, _BETA2, _EPS = 0.9, 0.999, 1e-8
_FIRST_MOVE = 1e-3
# Hot start: the trend test every 30 iterations after 3 p, ending at a statistic <= 0.5.
_TEST_EVERY, _TEST_LEVEL = 30, 0.5
# MALA: the acceptance rate the step size is adapted to during the hot start.
_TARGET_ACCEPT = 0.574


class HotDoG:
    """The Hot DoG step rule for non-negative weights (coordinate-wise, Adam-style)."""

    def __init__(self, weights, first_move=_FIRST_MOVE):
        self.start = weights.copy()
        self.r = first_move * np.maximum(weights, np.finfo(float).tiny)
        self.m = np.zeros_like(weights)
        self.v = np.zeros_like(weights)
        self.distance = np.zeros_like(weights)
        self.t = 0

    def step(self, weights, gradient):
        """The weights after one step along ``-gradient``, kept non-negative."""
        self.t += 1
        t = self.t
        self.m = _BETA1 * self.m + (1 - _BETA1) * gradient
        self.v = _BETA2 * self.v + (1 - _BETA2) * gradient**2
        m_hat = self.m / (1 - _BETA1**t)
        v_hat = self.v / (1 - _BETA2**t)
        if t == 1:
            scale = self.r
        else:
            travelled = np.maximum(np.abs(weights - self.start), self.distance)
            self.distance = _BETA1 * self.distance + (1 - _BETA1) * travelled
            scale = self.distance / (1 - _BETA1**t)
        return np.maximum(weights - scale / (np.sqrt(t * v_hat) + _EPS) * m_hat, 0.0)


def trend_statistic(trace):
    """The hot-start test of Chen, Huggins & Campbell (2024) on a trace of log densities:
    the difference of the means of its last two thirds, over the larger residual standard
    error of a straight line fitted to each (small once the trace has no trend left)."""
    size = int(np.ceil(len(trace) / 3))
    first, second = trace[-2 * size:-size], trace[-size:]
    errors = []
    for part in (first, second):
        steps = np.arange(len(part))
        slope, intercept = np.polyfit(steps, part, 1)
        residual = part - (slope * steps + intercept)
        errors.append(np.sqrt(residual @ residual / max(len(part) - 2, 1)))
    return abs(first.mean() - second.mean()) / max(max(errors), np.finfo(float).tiny)


class _LangevinChains:
    """K preconditioned MALA chains on the coreset posterior of given rows, vectorised."""

    def __init__(self, X, y, family, prior_prec, fit_intercept, cov_chol, thetas, rng):
        self.design = np.hstack([X, np.ones((len(X), 1))]) if fit_intercept else X
        self.y, self.family, self.prior_prec = y, family, prior_prec
        self.chol = cov_chol
        self.rng = rng
        self.thetas = thetas
        self.step = 1.0 / len(prior_prec) ** (1.0 / 6.0)

    def _log_density_and_grad(self, thetas, weights):
        eta = self.design @ thetas.T  # (M, K)
        loglik = weights @ self.family.loglik(self.y[:, None], eta)
        grad = (weights[:, None] * self.family.d1(self.y[:, None], eta)).T @ self.design
        return (loglik - 0.5 * np.sum(self.prior_prec * thetas**2, axis=1),
                grad - self.prior_prec * thetas)

    def _drift(self, grad):
        # Sigma grad with Sigma = L L^T, for every chain
        return 0.5 * self.step**2 * (grad @ self.chol) @ self.chol.T

    def _log_proposal(self, to, frm, drift):
        z = linalg.solve_triangular(self.chol, (to - frm - drift).T, lower=True)
        return -0.5 * np.sum(z**2, axis=0) / self.step**2

    def transition(self, weights):
        """One Metropolis-adjusted Langevin step of every chain; returns the acceptance rate
        and the chains' log densities."""
        logp, grad = self._log_density_and_grad(self.thetas, weights)
        drift = self._drift(grad)
        z = self.rng.standard_normal(self.thetas.shape)
        proposal = self.thetas + drift + self.step * z @ self.chol.T
        logp_new, grad_new = self._log_density_and_grad(proposal, weights)
        log_ratio = (logp_new - logp + self._log_proposal(self.thetas, proposal,
                                                          self._drift(grad_new))
                     - self._log_proposal(proposal, self.thetas, drift))
        accept = np.log(self.rng.random_sample(len(log_ratio))) < log_ratio
        self.thetas = np.where(accept[:, None], proposal, self.thetas)
        return accept.mean(), np.where(accept, logp_new, logp)


_CMCMC_PARAMS_DOC = """
    candidates : {"auto", "uniform"}, default="auto"
        How the M rows are drawn: by importance, or uniformly (per class for the logistic
        model), as in :class:`QuasiNewtonCoreset`; their inverse-probability weights are
        the starting weights.

    n_chains : int, default=8
        Number K of Markov chains; their states at each iteration give the gradient
        estimate (the paper uses 2).

    n_iter : int, default=2000
        Weight updates after the hot start.

    max_hot_start : int, default=2000
        Most chain transitions of the hot start (before any weight update).

    n_subsample : int, default=1000
        Rows of the fresh uniform subsample per iteration behind the full data's sum (with
        control variates about the full data's mode).

    n_draws_kept : int, default=2000
        Chain states kept from the last iterations as ``draws_`` (``n_draws_kept /
        n_chains`` iterations of every chain).

    stratify : bool, default=True
        Draw the logistic model's rows per class.
"""

_CMCMC_ATTRS_DOC = """
    draws_ : ndarray of shape (n_draws_kept, p)
        States of the chains over the last iterations (coefficients, then the intercept):
        draws that target the coreset posterior as its weights settle.

    hot_start_iter_ : int
        Chain transitions of the hot start.

    acceptance_rate_ : float
        The chains' acceptance rate over the weight updates.

    n_iter_ : int
        Weight updates run.
"""


@fill_doc(common_params=COMMON_PARAMS_DOC, common_attrs=COMMON_ATTRS_DOC,
          cm_params=_CMCMC_PARAMS_DOC, cm_attrs=_CMCMC_ATTRS_DOC)
class CoresetMCMC(LikelihoodCoreset):
    """Coreset Markov chain Monte Carlo with Hot DoG steps (experimental).

    Markov chains sample the coreset posterior while the same draws train its weights by
    stochastic gradient descent on ``KL(pi_w || pi)`` (Chen & Campbell, 2024), with the
    learning-rate-free Hot DoG step rule (Chen, Huggins & Campbell, 2024); see the module
    notes. The chains' last states are kept in ``draws_``.

    Parameters
    ----------
    M : int, default=1000
        Number of candidate rows (the coreset may be smaller: weights can reach zero).
    {cm_params}
    {common_params}
    Attributes
    ----------
    {cm_attrs}
    {common_attrs}
    References
    ----------
    N. Chen and T. Campbell, "Coreset Markov chain Monte Carlo", AISTATS 2024.

    N. Chen, J. H. Huggins and T. Campbell, "Tuning-free coreset Markov chain Monte Carlo",
    arXiv:2410.18973, 2024.
    """

    _parameter_constraints = {
        **LikelihoodCoreset._parameter_constraints,
        "candidates": [StrOptions({"auto", "uniform"})],
        "n_chains": [Interval(Integral, 2, None, closed="left")],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "max_hot_start": [Interval(Integral, 0, None, closed="left")],
        "n_subsample": [Interval(Integral, 1, None, closed="left")],
        "n_draws_kept": [Interval(Integral, 1, None, closed="left")],
        "stratify": ["boolean"],
    }

    def __init__(self, M=1000, *, candidates="auto", n_chains=8, n_iter=2000,
                 max_hot_start=2000, n_subsample=1000, n_draws_kept=2000, stratify=True,
                 model="auto", link="log", noise_scale=1.0, prior_scale=1.0,
                 intercept_prior_scale=10.0, fit_intercept=True, random_state=None,
                 verbose=0):
        super().__init__(M, model=model, link=link, noise_scale=noise_scale,
                         prior_scale=prior_scale, intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, random_state=random_state,
                         verbose=verbose)
        self.candidates = candidates
        self.n_chains = n_chains
        self.n_iter = n_iter
        self.max_hot_start = max_hot_start
        self.n_subsample = n_subsample
        self.n_draws_kept = n_draws_kept
        self.stratify = stratify

    def _build(self, X, y, sample_weight, family, prior_prec, rng):
        n_candidates = int(np.count_nonzero(sample_weight > 0))
        with threadpool_limits(limits=1, user_api="blas"):
            found = draw_candidates(
                InMemoryRows(X, y, sample_weight), family, prior_prec, self.fit_intercept,
                min(self.M, n_candidates), rng,
                stratify=self.stratify and family.binary,
                uniform=self.candidates == "uniform")
            part = found.rows.draw(min(self.M, n_candidates))
            weights = self._train(X, y, sample_weight, family, prior_prec, found, part, rng)
            self.kl_estimate_ = LaplaceKL(found.laplace, family, prior_prec,
                                          self.fit_intercept)(part.X, part.y, weights)
        return part.indices, weights

    def _train(self, X, y, sample_weight, family, prior_prec, found, part, rng):
        K = self.n_chains
        full = found.laplace
        cov_chol = linalg.cholesky(linalg.cho_solve(
            linalg.cho_factor(full.precision, lower=True), np.eye(len(full.mean))),
            lower=True)
        starts = full.mean + rng.standard_normal((K, len(full.mean))) @ cov_chol.T
        chains = _LangevinChains(part.X, part.y, family, prior_prec, self.fit_intercept,
                                 cov_chol, starts, rng)
        weights = part.weights.copy()
        # the hot start: the chains move with the starting weights until no trend is left
        trace = []
        for t in range(1, self.max_hot_start + 1):
            accept, logp = chains.transition(weights)
            chains.step *= np.exp((accept - _TARGET_ACCEPT) / np.sqrt(t))
            trace.append(logp)
            if t >= 3 * len(prior_prec) and t % _TEST_EVERY == 0:
                statistics = [trend_statistic(column) for column in np.array(trace).T]
                if np.median(statistics) <= _TEST_LEVEL:
                    break
        self.hot_start_iter_ = len(trace)
        sums = SubsampledPotentialSums(InMemoryRows(X, y, sample_weight), family,
                                       self.fit_intercept, K, min(self.n_subsample, len(y)))
        sums.prepare(full.mean, full.grad_sum, full.neg_hessian_sum)
        potentials = PotentialEvaluator(family, self.fit_intercept, K)
        rule = HotDoG(weights)
        keep = max(1, int(np.ceil(self.n_draws_kept / K)))
        kept, accepted = [], 0.0
        average, n_averaged = np.zeros_like(weights), 0
        for t in range(1, self.n_iter + 1):
            accept, _ = chains.transition(weights)
            accepted += accept
            G = potentials(part.X, part.y, chains.thetas).copy()
            G -= G.mean(axis=1, keepdims=True)
            F = sums(chains.thetas, rng)
            residual = F - F.mean() - weights @ G
            weights = rule.step(weights, -(G @ residual) / (K - 1))
            if 2 * t > self.n_iter:  # the average of the second half of the iterates
                n_averaged += 1
                average += (weights - average) / n_averaged
            if t > self.n_iter - keep:
                kept.append(chains.thetas.copy())
        self.n_iter_ = self.n_iter
        self.acceptance_rate_ = accepted / self.n_iter
        self.draws_ = np.concatenate(kept)[-self.n_draws_kept:]
        self.final_weights_ = weights
        return average
