"""The quasi-Newton weight iteration of Naik, Chen & Campbell (2022) on a fixed set of
candidate rows: per iteration, S draws of the coreset posterior ``pi_w``, the regression of
the residual ``sum_n s_n f_n - sum_m w_m f_m`` on the centred coreset potentials over the
draws (a damped least-squares step on ``w``), and the full-data potentials summed exactly
or on a subsample with control variates (:class:`ExactPotentialSums`,
:class:`SubsampledPotentialSums`). :class:`~._quasi_newton.QuasiNewtonCoreset` draws the
candidates, calibrates the first step and sizes the coreset (see :mod:`._quasi_newton`)."""

import numpy as np
from scipy import linalg

from .._backend import float_rows
from .._design import linear_predictor
from .._inference import PotentialEvaluator, log_posterior_of, potential_sums
from .._progress import Progress
from ._samplers import EnsembleSampler, LaplaceSampler


# Levenberg-Marquardt damping of the regression, relative to the mean diagonal of
# Cov_w[g, g]: its start, and the factors applied after an accepted / a rejected step.
_DAMPING_START, _DAMPING_DOWN, _DAMPING_UP = 1e-3, 3.0, 10.0
# stretch moves per weight update of the "mcmc" sampler (its walkers start at the Laplace
# approximation of pi_w, so no burn-in is needed)
_MCMC_STEPS = 20


class ExactPotentialSums:
    """``sum_n s_n f_n(theta_s)`` over all rows of a storage for S draws.

    Never holds an N x S matrix: each chunk of rows is one BLAS product and the in-place
    kernel of :class:`PotentialEvaluator`, reduced at once by the weights. A ``np.memmap``
    is read chunk by chunk; rows on a cluster are summed where their chunks live (one
    reduction over the chunks per call).
    """

    def __init__(self, data, family, fit_intercept, n_draws):
        self.data = data
        self.potentials = PotentialEvaluator(family, fit_intercept, n_draws)

    def prepare(self, theta, grad=None, neg_hessian=None):
        """Nothing to prepare: the sums are exact whatever the draws."""

    def __call__(self, thetas, rng):
        return self.data.sum(potential_sums, self.potentials, thetas)[0]


class SubsampledPotentialSums:
    """Unbiased estimate of ``sum_n s_n f_n(theta_s)`` from a subsample, with control variates.

    A uniform subsample alone is useless here: its error grows like ``sqrt(N / U)`` and
    swamps the differences between draws that the regression fits. The sum is therefore
    split into its second-order Taylor expansion about a reference ``theta_0``, computed
    exactly from one pass for the gradient and Hessian sums, and a remainder estimated from
    U rows drawn uniformly with replacement (Bardenet, Doucet & Holmes, 2017, Section 7). The
    remainder is third order in ``theta - theta_0``, so its estimate is tiny once the draws
    concentrate near ``theta_0``. Constant terms are dropped: only differences between draws
    matter.

    With ``rows`` (a :class:`~skcoreset._backend.Part` of an importance sample with
    inverse-probability weights, e.g. a priority sample on the candidates' importance) the
    remainder is estimated from those rows at every call instead: the rows whose remainder
    is largest (heavy tails, extreme linear predictors) are then in the subsample, most with
    their own weight. Rows on a cluster (a :class:`~skcoreset._backend.DaskRows` storage)
    need ``rows``: the uniform draws are made from rows in memory.
    """

    def __init__(self, data, family, fit_intercept, n_draws, n_subsample, rows=None):
        self.data = data
        self.family, self.fit_intercept = family, fit_intercept
        self.rows = rows
        if rows is None:
            if data.chunked:
                raise ValueError("Subsampled potential sums of rows on a cluster need "
                                 "their subsample rows.")
            self.candidates = np.flatnonzero(data.sample_weight > 0)
        self.n_subsample = n_subsample
        # the reference point rides along as one more draw
        self.potentials = PotentialEvaluator(family, fit_intercept, n_draws + 1)
        self.theta0 = None

    def prepare(self, theta, grad=None, neg_hessian=None):
        """The gradient and Hessian sums at the reference ``theta``: given (e.g. those of the
        full data's Laplace fit at its mode), or by one pass over the data."""
        if grad is None:
            no_prior = np.zeros(len(theta))
            _, _, grad, neg_hessian = log_posterior_of(
                self.data, self.family, no_prior, self.fit_intercept).value_and_grad(
                    theta, neg_hessian=np.float64)
        self.theta0, self.grad, self.neg_hessian = theta.copy(), grad, neg_hessian

    def __call__(self, thetas, rng):
        delta = thetas - self.theta0
        taylor = delta @ self.grad - 0.5 * np.einsum("sp,pq,sq->s", delta, self.neg_hessian,
                                                     delta)
        if self.rows is None:
            data = self.data
            rows = self.candidates[rng.randint(len(self.candidates), size=self.n_subsample)]
            X, y = float_rows(data.X[rows]), data.y[rows]
            s = data.sample_weight[rows] * (len(self.candidates) / self.n_subsample)
            offset = None if data.offset is None else data.offset[rows]
        else:
            X, y, s = self.rows.X, self.rows.y, self.rows.weights
            offset = self.rows.offset
        f = self.potentials(X, y, np.vstack([thetas, self.theta0]), offset)
        eta0 = linear_predictor(X, self.theta0, self.fit_intercept)
        if offset is not None:
            eta0 = eta0 + offset
        lin = linear_predictor(X, delta, self.fit_intercept)  # a_n . (theta_s - theta0)
        remainder = (f[:, :-1] - f[:, -1:] - self.family.d1(y, eta0)[:, None] * lin
                     - 0.5 * self.family.d2(y, eta0)[:, None] * lin**2)
        return taylor + s @ remainder


def _regression_step(G, r, damping):
    """Damped least-squares weight change ``argmin_d ||r - G^T d||^2 + lam ||d||^2``.

    This is the quasi-Newton step ``-(H + lam I)^-1 grad`` with ``H = G G^T`` and
    ``grad = -G r`` (the 1 / (S - 1) of the covariances cancels), ``lam`` being ``damping``
    times the mean diagonal of ``H``. Solved in the smaller of the two Gram matrices:
    ``G (G^T G + lam I)^-1 r`` when there are fewer draws than coreset rows.
    """
    M, S = G.shape
    small = G @ G.T if M <= S else G.T @ G
    lam = damping * np.trace(small) / M
    if not lam > 0:  # every potential is constant under pi_w: nothing to regress on
        return np.zeros(M)
    small[np.diag_indices_from(small)] += lam
    factor = linalg.cho_factor(small, lower=True, check_finite=False)
    if M <= S:
        return linalg.cho_solve(factor, G @ r, check_finite=False)
    return G @ linalg.cho_solve(factor, r, check_finite=False)


class QuasiNewtonResult:
    """Output of :func:`quasi_newton_weights`: the weights, ``history`` (one row per
    iteration: KL estimate of the proposed weights, damping, accepted), ``kl_estimate`` of
    the returned weights and ``stop_reason``."""

    def __init__(self, weights, history, kl_estimate, stop_reason):
        self.weights, self.history = weights, history
        self.kl_estimate, self.stop_reason = kl_estimate, stop_reason


def quasi_newton_weights(data, part, family, *, weights, prior_prec, fit_intercept,
                         n_draws=100, max_iter=50, tol=1e-3, n_iter_no_change=4,
                         n_subsample=None, sampler="laplace", reference=None,
                         subsample_rows=None, random_state=None, verbose=0):
    """Refine coreset weights by quasi-Newton steps on ``KL(pi_w || pi)``.

    Algorithm 1 of Naik, Chen & Campbell (2022) with a Levenberg-Marquardt safeguard: each
    iteration draws S samples from ``pi_w``, estimates ``KL(pi_w || pi)`` to second order
    as half the variance of the residual ``r = (s - w)^T f`` (the log density ratio
    ``log pi / pi_w`` up to a constant), and compares it with the last accepted weights'
    estimate and, within its noise, with their residual on the same draws (see
    :class:`QuasiNewtonCoreset`, Notes). A rejected proposal raises the damping tenfold; an
    accepted one lowers it threefold. The next proposal is the damped regression step from
    the last accepted weights, projected on ``w >= 0``.

    Parameters
    ----------
    data : InMemoryRows or DaskRows
        All rows, with encoded targets and the incoming weights ``s`` of the full posterior
        (an ndarray, a ``np.memmap`` read in row chunks, or rows on a cluster).
    part : Part
        The coreset rows.
    family : Family
    weights : ndarray of shape (M,)
        Their starting weights.
    prior_prec : ndarray of shape (p,)
    fit_intercept : bool
    n_draws : int, default=100
        Draws S from ``pi_w`` per iteration.
    max_iter : int, default=50
        Iterations (each costs one pass over the data, or a subsample of it); 0 returns the
        starting weights.
    tol : float, default=1e-3
        Stop once the KL estimate of the accepted weights is below ``tol`` nats.
    n_iter_no_change : int, default=4
        Stop after this many rejected proposals in a row.
    n_subsample : int, default=None
        Estimate the full-data sums from this many rows per iteration with control
        variates (:class:`SubsampledPotentialSums`); ``None`` uses every row.
    sampler : {"laplace", "mcmc"}, default="laplace"
    reference : FullLaplace, default=None
        The full data's mode and log-likelihood derivatives there (from
        :func:`~skcoreset.coreset._candidates.draw_candidates`): the control variates'
        reference, kept for all iterations instead of refreshed by passes over the data.
    subsample_rows : Part, default=None
        Importance-weighted rows for the control variates' remainder (instead of
        ``n_subsample`` uniform rows per iteration).
    random_state : numpy.random.RandomState
    verbose : int, default=0

    Returns
    -------
    QuasiNewtonResult
    """
    rng = random_state
    if max_iter == 0:
        return QuasiNewtonResult(weights, np.empty((0, 3)), np.nan, "max_iter")
    if n_subsample is None:
        full_sums = ExactPotentialSums(data, family, fit_intercept, n_draws)
    else:
        full_sums = SubsampledPotentialSums(data, family, fit_intercept, n_draws, n_subsample,
                                            rows=subsample_rows)
    X_core, y_core = float_rows(part.X), part.y
    indices = np.arange(part.size)
    laplace_sampler = LaplaceSampler(X_core, y_core, family, prior_prec, fit_intercept,
                                     part.offset)
    laplace_sampler.update(indices, weights)
    if sampler == "mcmc":
        draws = EnsembleSampler(X_core, y_core, family, prior_prec, fit_intercept, n_draws,
                                rng, n_steps=_MCMC_STEPS, offset=part.offset)
        draws.start_at(laplace_sampler.mean, laplace_sampler.precision_chol_inv, rng)
    else:
        draws = laplace_sampler
    coreset_potentials = PotentialEvaluator(family, fit_intercept, n_draws)
    # the control variates' reference follows the coreset posterior: refreshed at
    # iterations 1, 2, 4, 8, ... so the passes over the data stay logarithmic in max_iter;
    # or fixed at the full data's mode, where the coreset posterior starts and stays
    refresh_at = {2**k for k in range(max_iter.bit_length())}
    if reference is not None:
        full_sums.prepare(reference.mean, reference.grad_sum, reference.neg_hessian_sum)
        refresh_at = set()

    accepted, proposal = None, weights
    damping, no_change = _DAMPING_START, 0
    history, stop_reason = [], "max_iter"
    progress = Progress("QuasiNewtonCoreset", max_iter, verbose)
    for iteration in range(1, max_iter + 1):
        draws.update(indices, proposal)
        thetas = draws.draw(n_draws, rng)
        if iteration in refresh_at:
            full_sums.prepare(thetas.mean(axis=0))
        G = coreset_potentials(X_core, y_core, thetas, part.offset).copy()
        G -= G.mean(axis=1, keepdims=True)
        F = full_sums(thetas, rng)
        F -= F.mean()
        r = F - proposal @ G
        kl = 0.5 * (r @ r) / (n_draws - 1)
        if accepted is None:
            is_better = True
        else:
            # better on its own draws than the accepted weights on theirs; or, within the
            # Monte Carlo noise of that comparison, better paired on the same draws (which
            # cancels most of the noise near the optimum, but far from it draws from the
            # proposal's pi_w can favour either weights)
            r_accepted = F - accepted[0] @ G
            is_better = kl <= accepted[3] or (
                kl <= 0.5 * (r_accepted @ r_accepted) / (n_draws - 1)
                and kl <= accepted[3] * (1.0 + np.sqrt(2.0 / (n_draws - 1))))
        if is_better:
            accepted = (proposal, G, r, kl)
            damping, no_change = damping / _DAMPING_DOWN, 0
        else:
            damping, no_change = damping * _DAMPING_UP, no_change + 1
        history.append((kl, damping, float(is_better)))
        progress.line(iteration, f"KL estimate {kl:.4e} nats  "
                      f"{'accepted' if is_better else 'rejected'}  damping {damping:.1e}")
        if accepted[3] < tol:
            stop_reason = "tol"
            break
        if no_change >= n_iter_no_change:
            stop_reason = "n_iter_no_change"
            break
        step = _regression_step(accepted[1], accepted[2], damping)
        if not np.any(step):
            stop_reason = "constant potentials"
            break
        proposal = np.maximum(accepted[0] + step, 0.0)
    return QuasiNewtonResult(accepted[0], np.array(history).reshape(-1, 3), accepted[3],
                             stop_reason)
