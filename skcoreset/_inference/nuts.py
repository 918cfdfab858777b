"""MCMC by the No-U-Turn sampler: mici's dynamic multinomial HMC on the weighted GLM posterior.

The chains move in whitened coordinates ``z``, ``theta = mode + L z`` with ``L L^T`` the
Laplace covariance (the inverse Hessian of the log posterior at its mode). There the
posterior of a GLM is close to ``N(0, I)``, so the identity metric in ``z`` is the Laplace
Hessian as a dense metric in ``theta``: the trajectories need no adaptation of the metric,
only of the step size (dual averaging during the warm-up). Measured on weighted logistic
coresets and small skewed data sets at 30 and 100 parameters, adapting a dense or diagonal
metric on top lowered the effective sample size per gradient 1.5-3x (the estimate from a
few hundred warm-up draws is noisier than the Hessian).

Every gradient is one blocked pass over the rows (:meth:`LogPosterior.value_and_grad`), so
memory stays bounded on all rows as on a coreset; on dense rows in memory too large to stay
in the cache, its products with X are made in single precision about the mode
(:class:`~skcoreset._inference._common.MixedProducts`, checked against the float64 pass at
the start), which takes about two thirds of the time; for rows on a dask cluster it is one
reduction over their chunks (:class:`ChunkedLogPosterior`), so the chains sample all rows
without gathering them, at the cost of a round trip to the cluster per gradient (its
products in single precision too, from float32 copies the workers keep beside their
chunks). Chains
are independent (their own warm-up, step size and random stream) and run in parallel with
joblib when ``n_jobs`` allows; after the warm-up they run in rounds until the smallest
bulk effective sample size reaches the number of draws asked for and every rank-normalized
R-hat is at most 1.01 (a looser limit below an ESS of 400, see :func:`r_hat_limit`), or the
budget is spent: a number of draws per chain, of gradient evaluations (``max_gradients``)
or of seconds (``max_time``). A trajectory that saturates the maximum tree depth costs
``2**max_tree_depth - 1`` gradients, so the number of draws alone does not bound the work:
the gradients and the clock are checked at every leapfrog step, and a chain that runs out
returns the iterations it completed.
"""

import contextlib
import copy
import itertools
import logging
import math
import time
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import mici
import numpy as np
from mici.errors import AdaptationError
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.utils import check_random_state

from .._warnings import warn
from .._backend import as_storage
from .._posterior import SamplePosterior
from .._progress import Progress, format_seconds
from ._common import InferenceResult, log_posterior_of
from ..exceptions import MCMCDiagnosticWarning
from ._start import mcmc_start
from .diagnostics import (bulk_effective_sample_size, folded_effective_sample_size,
                          rank_r_hat)

DEFAULT_N_CHAINS = 4
# Warm-up iterations per chain: dual averaging of the step size from mici's initial search.
# Chains start at Laplace draws, near stationarity, so no long burn-in is needed.
DEFAULT_WARMUP = 150
TARGET_ACCEPTANCE = 0.8  # Stan's default for the dual averaging
MAX_TREE_DEPTH = 10  # at most 2**10 leapfrog steps per iteration, as in Stan
# max_gradients="auto": this many gradients per iteration of the planned run (the warm-up
# and twice the draws per chain that a near-Gaussian posterior needs). Healthy runs in the
# Laplace-whitened coordinates take 3-15 leapfrog steps per iteration (tree depth 2-4); a
# run whose trees keep saturating the maximum depth (1,023 steps) stops after a few
# percent of its iterations, with a warning, instead of running for hours.
AUTO_GRADIENTS_PER_ITERATION = 64
# more than this fraction of the transitions at the maximum tree depth: the posterior is
# far wider in some direction than the Laplace approximation (flat, nearly improper)
SATURATED_FRACTION = 0.25
MAX_R_HAT = 1.01  # Vehtari et al. (2021), for a bulk ESS of at least RELIABLE_ESS
RELIABLE_ESS = 400
# The production run lasts at most BUDGET_FACTOR times ceil(n_draws / n_chains) kept draws
# per chain: an effective sample size per draw below 1 / BUDGET_FACTOR means the chains mix
# too slowly for the run to be worth its cost without a decision of the user.
BUDGET_FACTOR = 10
MIN_ROUND = 10  # draws per chain of the first round: 5 per half chain for the ESS estimate
MIN_E_BFMI = 0.3  # below it the momentum resampling explores the energy poorly (Betancourt)
# the sample statistics kept per draw, under ArviZ's names
SAMPLE_STATS = ("lp", "energy", "acceptance_rate", "n_steps", "tree_depth", "diverging",
                "step_size")


class WhitenedTarget:
    """``-log posterior`` and its gradient in ``z``, ``theta = mode + L z``, for mici.

    One blocked pass over the rows gives both (mici keeps the value that comes with a
    gradient). A non-finite value (an overflowing rate far in the tails) becomes ``+inf``,
    which mici reads as a divergent trajectory rather than a NaN that would poison it.
    """

    def __init__(self, log_posterior, mode, chol):
        self.log_posterior = log_posterior
        self.mode = mode
        self.chol = chol
        self.n_gradients = 0
        # the budget of a chain's run (:func:`_advance`): the gradient count and the clock
        # (time.monotonic) at which it ends
        self.stop_at = None
        self.deadline = None

    def theta(self, z):
        """``mode + L z`` for z of shape (p,) or (S, p)."""
        return self.mode + z @ self.chol.T

    def _value_and_grad(self, z):
        with np.errstate(over="ignore", invalid="ignore"):
            value, _, grad = self.log_posterior.value_and_grad(self.theta(z))
        if not (np.isfinite(value) and np.all(np.isfinite(grad))):
            return np.inf, np.zeros_like(z)
        return -value, -(grad @ self.chol)

    def neg_log_dens(self, z):
        return self._value_and_grad(z)[0]

    def grad_neg_log_dens(self, z):
        if self.stop_at is not None and self.n_gradients >= self.stop_at:
            raise _BudgetSpent("max_gradients")
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise _BudgetSpent("max_time")
        self.n_gradients += 1
        value, grad = self._value_and_grad(z)
        return grad, value


class _System(mici.systems.EuclideanMetricSystem):
    """mici's Euclidean-metric Hamiltonian system, not copied with the transitions.

    mici deep-copies a sampler's transitions for every run of chains; a copy of the system
    would copy the data, and mici caches the values of a state under the id of the system
    that computed them, so the trace of every draw would evaluate the posterior again.
    The system holds nothing that a chain changes (the metric is fixed), so sharing it is
    safe.
    """

    def __deepcopy__(self, memo):
        return self


class _BudgetSpent(KeyboardInterrupt):
    """A chain has spent its gradients or its time (``cause``: the parameter's name).

    Raised by the target's gradient inside mici, which ends a chain's run on a
    ``KeyboardInterrupt`` and returns the iterations it completed: what a run stopped by
    its budget keeps."""

    def __init__(self, cause):
        super().__init__(cause)
        self.cause = cause


class _MiciLog(logging.Handler):
    """Records the exceptions that mici's sampling loop catches and logs: a
    ``KeyboardInterrupt`` (the user's, or :class:`_BudgetSpent`) and an
    ``AdaptationError`` (no initial step size found)."""

    def __init__(self):
        super().__init__()
        self.interrupt = self.budget = self.adaptation = None

    def emit(self, record):
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, _BudgetSpent):
            self.budget = error
        elif isinstance(error, KeyboardInterrupt):
            self.interrupt = error
        elif isinstance(error, AdaptationError):
            self.adaptation = error


@contextlib.contextmanager
def _mici_log():
    """Take what mici's sampling loop catches from its log (silencing its tracebacks); let
    a ``KeyboardInterrupt`` end the fit.

    mici catches an interrupt, logs it with its traceback and returns the chain so far, which
    suits an interactive session; a fit must instead stop and leave the estimator as it was,
    so the interrupt is raised again. A :class:`_BudgetSpent` is not: the chain so far is
    what the run returns.
    """
    logger = logging.getLogger("mici.samplers")
    handler, propagate = _MiciLog(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
    if handler.interrupt is not None:
        raise handler.interrupt


# what NUTS cannot do on a posterior without a usable curvature near its start
_NO_STEP_SIZE = (
    "The NUTS sampler found no usable step size at its starting point: the log posterior "
    "is flat, or not finite, around the Laplace approximation, as when the posterior is "
    "improper or nearly so (separated classes, all-zero counts, or a direction the data do "
    "not determine, under a very wide prior). Use a proper prior (a smaller prior_scale or "
    "intercept_prior_scale), sampler='ensemble', method='laplace', or more data.")


@dataclass
class _Chain:
    """What a chain carries from one round to the next."""

    position: np.ndarray  # z after the last iteration
    rng: np.random.Generator
    step_size: float | None = None  # None until the warm-up has adapted it


def _advance(target, chain, n_warmup, n_draws, thin, max_tree_depth=MAX_TREE_DEPTH,
             report=None, max_gradients=None, deadline=None):
    """Run one chain: ``n_warmup`` adaptive iterations (if any), then ``n_draws * thin``
    iterations of which every ``thin``-th is kept. ``report``, if given, is called with the
    number of iterations done after each one (warm-up included). The chain stops early,
    keeping the iterations it completed, after ``max_gradients`` gradients or at the clock
    ``deadline`` (``time.monotonic``), when given.

    Returns ``(chain, draws, stats, n_gradients, spent)``: the chain to continue from, the
    kept positions in ``z`` of shape ``(n_kept, p)``, their sample statistics (ArviZ names,
    arrays of shape ``(n_kept,)``), the gradients evaluated and, when a budget stopped the
    chain, ``(its name, whether in the warm-up)`` (None when it ran all its iterations). A
    chain stopped during its warm-up keeps its warm-up iterations (thinned alike) as its
    draws and its step size as adapted so far. A new mici sampler is seeded from the
    chain's own generator every round (mici derives its streams from the state of the
    generator it is given without advancing it, so reusing one would repeat the random
    numbers of the previous round).
    """
    system = _System(target.neg_log_dens, grad_neg_log_dens=target.grad_neg_log_dens)
    step_size = chain.step_size
    if step_size is None and n_warmup == 0:
        step_size = len(chain.position) ** -0.25  # scale of the leapfrog on N(0, I)
    integrator = mici.integrators.LeapfrogIntegrator(system, step_size=step_size)
    sampler = mici.samplers.DynamicMultinomialHMC(
        system, integrator, np.random.default_rng(chain.rng.integers(2**63)),
        max_tree_depth=max_tree_depth)

    # mici calls the trace once on the initial state (to size its arrays), then after every
    # iteration, the warm-up's included: the count of completed iterations
    iterations = itertools.count(0)
    completed = [0]

    def trace(state):
        completed[0] = iteration = next(iterations)
        if report is not None and iteration > 0:
            report(iteration)
        return {"pos": state.pos, "energy": system.h(state),
                "lp": -system.neg_log_dens(state)}

    adapters = ([mici.adapters.DualAveragingStepSizeAdapter(TARGET_ACCEPTANCE)]
                if n_warmup > 0 else None)
    before = target.n_gradients
    target.stop_at = None if max_gradients is None else before + max_gradients
    target.deadline = deadline
    spent = None
    # mici's step-size search can overflow the kinetic energy on a far trajectory, which it
    # then treats as divergent: nothing for the user to see
    with _mici_log() as log, np.errstate(over="ignore", invalid="ignore"):
        try:
            out = sampler.sample_chains(n_warmup, n_draws * thin, [chain.position],
                                        adapters=adapters, trace_funcs=[trace],
                                        trace_warm_up=n_warmup > 0, display_progress=False)
        except _BudgetSpent as error:  # in the step-size search, before any iteration
            out, spent = None, (error.cause, n_warmup > 0)
        except ValueError:
            # mici drops a chain whose step-size search failed, then fails to pair the
            # chains with their generators
            if log.adaptation is None:
                raise
            out = None
    target.stop_at = target.deadline = None
    if log.adaptation is not None:
        raise ValueError(_NO_STEP_SIZE) from log.adaptation
    if log.budget is not None:
        spent = (log.budget.cause, completed[0] <= n_warmup)
    n_gradients = target.n_gradients - before
    if out is None:
        empty = np.empty(0)
        stats = {key: empty for key in SAMPLE_STATS}
        stats["all"] = {key: empty for key in ("diverging", "tree_depth", "acceptance_rate",
                                               "energy")}
        return chain, np.empty((0, len(chain.position))), stats, n_gradients, spent
    done = completed[0]
    # the iterations kept: those after the warm-up, or the warm-up's when it was not finished
    first = n_warmup if done > n_warmup else 0
    statistics = {key: out.statistics[key][0][first:done]
                  for key in ("diverging", "tree_depth", "accept_stat", "n_step", "step_size")}
    traces = {key: out.traces[key][0][first:done] for key in ("pos", "energy", "lp")}
    kept = slice(thin - 1, None, thin)
    every = {"diverging": statistics["diverging"],
             # Stan's (and ArviZ's) depth: the number of doublings, 2**depth - 1 steps at
             # most; mici counts from 0
             "tree_depth": statistics["tree_depth"] + 1,
             "acceptance_rate": statistics["accept_stat"],
             "energy": traces["energy"]}
    stats = {"lp": traces["lp"][kept], "energy": every["energy"][kept],
             "acceptance_rate": every["acceptance_rate"][kept],
             "n_steps": statistics["n_step"][kept],
             "tree_depth": every["tree_depth"][kept],
             "diverging": every["diverging"][kept],
             "step_size": statistics["step_size"][kept],
             # over all iterations, kept or not: divergences, deep trees, energy moves
             "all": every}
    chain = _Chain(position=np.array(out.final_states[0].pos), rng=chain.rng,
                   step_size=float(integrator.step_size))
    draws = np.asarray(traces["pos"])[kept]
    if not np.all(np.isfinite(draws)):
        raise FloatingPointError(
            "The NUTS sampler failed to start: no finite step size was found from the "
            "Laplace approximation. Check X for extreme values, or use "
            "sampler='ensemble'.")
    return chain, draws, stats, n_gradients, spent


class _RoundProgress:
    """Progress lines within a round of the chains (verbose): every
    :data:`~skcoreset._progress.PRINT_INTERVAL` seconds, the chain, its stage and iteration,
    and the ETA of the round; when chains run in parallel, each chain's own, timed from its
    first iteration."""

    def __init__(self, number, n_chains, n_warmup, n_iterations, verbose, sequential):
        self.number, self.n_chains, self.n_warmup = number, n_chains, n_warmup
        self.per_chain = n_warmup + n_iterations
        self.verbose, self.sequential = verbose, sequential
        self.progress = {}  # one timer for the round, or one per chain

    def __call__(self, chain, iteration):
        key = None if self.sequential else chain
        if key not in self.progress:
            self.progress[key] = Progress(
                "mcmc", self.per_chain * (self.n_chains if self.sequential else 1),
                self.verbose, unit="iteration")
        progress = self.progress[key]
        if not progress.due():  # one clock read per iteration
            return
        stage = (f"warm-up {iteration}/{self.n_warmup}" if iteration <= self.n_warmup else
                 f"iteration {iteration - self.n_warmup}/{self.per_chain - self.n_warmup}")
        done = iteration + (chain * self.per_chain if self.sequential else 0)
        progress.line(done, f"round {self.number}, chain {chain + 1}/{self.n_chains}: {stage}")


def _e_bfmi(energy):
    """Estimated Bayesian fraction of missing information of one chain's energies
    (Betancourt, 2016): ``sum (E_t - E_t-1)^2 / sum (E_t - mean E)^2``."""
    energy = np.asarray(energy, dtype=float)
    spread = np.sum((energy - energy.mean()) ** 2)
    return float(np.sum(np.diff(energy) ** 2) / spread) if spread > 0 else np.nan


def r_hat_limit(ess):
    """The largest R-hat accepted when the smallest ESS (bulk or folded) is ``ess``: 1.01
    from an ESS of 400 on (Vehtari et al., 2021, judge R-hat from there), ``1 + 4 / ESS``
    below.

    For chains that sample the same distribution, ``R-hat - 1`` fluctuates like the
    variance of the half-chains' means over their variance, i.e. like ``1 / ESS`` (of the
    rank-normalized draws for its bulk half, of their distances to the median for its
    folded half); the limit keeps the chance that well-mixed chains fail it about the same
    at every ESS, so a run asked for few effective draws is not made to go on to several
    hundred.
    """
    return 1.0 + (MAX_R_HAT - 1.0) * max(1.0, RELIABLE_ESS / max(ess, 1.0))


def _done(target_ess, min_ess, max_r_hat, r_hat_ess):
    """Whether the run has reached its targets (NaN estimates never have)."""
    return min_ess >= target_ess and max_r_hat <= r_hat_limit(r_hat_ess)


def _next_round(done, target_ess, min_ess, max_r_hat, r_hat_ess, budget):
    """Kept draws per chain for the next round: 0 when the targets are met; else enough
    for the smallest bulk ESS to reach the target at the pace so far (plus 10%), and at
    least a quarter more draws (R-hat, or a noisy ESS estimate, may be what binds); never
    past the budget."""
    if _done(target_ess, min_ess, max_r_hat, r_hat_ess):
        return 0
    rate = max(min_ess, 1.0) / done if np.isfinite(min_ess) else 0.0
    needed = math.ceil(1.1 * target_ess / rate) - done if rate > 0 else budget
    return int(min(budget - done, max(needed, math.ceil(0.25 * done), 1)))


class _Stop(NamedTuple):
    """Why a NUTS run stopped before its targets: the budget spent (``"max_gradients"`` or
    ``"max_time"``), its value, the draws per chain by then and whether the warm-up was
    still going."""

    cause: str
    limit: float
    done: int
    in_warmup: bool
    projected: int = 0  # gradients the next round would have needed, when that stopped it


def _why_slow(every, max_tree_depth):
    """The likely cause of a run that spent its budget, from its transitions."""
    n_iterations = max(every["tree_depth"].size, 1)
    saturated = float(np.mean(every["tree_depth"] >= max_tree_depth)) if every[
        "tree_depth"].size else 0.0
    if saturated >= SATURATED_FRACTION:
        return (f"{saturated:.0%} of the transitions reached the maximum tree depth "
                f"{max_tree_depth} ({2**max_tree_depth - 1} leapfrog steps each): the "
                "posterior is far wider in some direction than the Laplace approximation "
                "says, as when it is flat or nearly improper (separated classes, all-zero "
                "or nearly all-zero counts, a direction the data do not determine under a "
                "very wide prior)")
    if np.sum(every["diverging"]) > 0.01 * n_iterations:
        return ("transitions diverged: the posterior's curvature changes sharply (a "
                "funnel, or a boundary of the parameters the data hardly determine)")
    return ("each gradient is a pass over all the rows, and the run needs more of them "
            "than the budget allows")


def _diagnose(n_draws, min_ess, max_r_hat, r_hat_ess, budget, every, thin, max_tree_depth,
              stop=None):
    """The warnings of a NUTS run (``stop``: a :class:`_Stop` when its gradient or time
    budget ended it); whether it passed every check."""
    messages = []
    if stop is not None:
        limit = (f"max_gradients={stop.limit:.0f} gradient evaluations"
                 if stop.cause == "max_gradients" else f"max_time={stop.limit:g} seconds")
        where = ("during the warm-up (its draws are the warm-up's, with a step size still "
                 "adapting)" if stop.in_warmup else f"after {stop.done} draws per chain")
        if stop.projected:
            where += (f" (the draws still needed would cost about {stop.projected} more "
                      "gradients at the pace so far, more than is left)")
        messages.append(
            f"The NUTS run stopped at its budget of {limit} {where}, with a minimum bulk "
            f"effective sample size of {min_ess:.0f} (n_draws={n_draws} asked for) and a "
            f"maximum rank-normalized R-hat of {max_r_hat:.3f} (at most "
            f"{r_hat_limit(r_hat_ess):.3f} wanted): the draws may not represent the "
            f"posterior. Likely cause: {_why_slow(every, max_tree_depth)}. Use a proper "
            "prior (a smaller prior_scale or intercept_prior_scale), sampler='ensemble', "
            "or more data; or raise max_gradients or max_time.")
    elif not _done(n_draws, min_ess, max_r_hat, r_hat_ess):
        messages.append(
            f"The NUTS run stopped at its budget of {budget} draws per chain (thin={thin}) "
            f"with a minimum bulk effective sample size of {min_ess:.0f} (n_draws={n_draws} "
            f"asked for) and a maximum rank-normalized R-hat of {max_r_hat:.3f} (at most "
            f"{r_hat_limit(r_hat_ess):.3f} wanted): the chains mix slowly, so the Monte "
            f"Carlo error of the posterior summaries is larger than asked for. Run longer "
            f"with thin={2 * thin}, or reparametrize (standardize the features, a stronger "
            "prior).")
    n_iterations = every["diverging"].size
    n_divergent = int(np.sum(every["diverging"]))
    if n_divergent:
        messages.append(
            f"{n_divergent} of {n_iterations} NUTS transitions after the warm-up diverged: "
            "the sampler could not follow the posterior's curvature there, and the draws "
            "may miss part of it. Standardize the features or strengthen the prior; "
            "sampler='ensemble' makes no use of the curvature.")
    saturated = int(np.sum(every["tree_depth"] >= max_tree_depth))
    if saturated:
        messages.append(
            f"{saturated} of {n_iterations} NUTS transitions reached the maximum tree depth "
            f"{max_tree_depth} ({2**max_tree_depth - 1} leapfrog steps): the posterior is "
            "much longer in some direction than the Laplace approximation says, and the run "
            "is slow and may be biased. Strengthen the prior or remove collinear features "
            "(or raise max_tree_depth, which doubles the cost of such a trajectory).")
    low = [value for value in every["e_bfmi"] if value < MIN_E_BFMI]
    if low:
        messages.append(
            f"The energy fraction of missing information (E-BFMI) of {len(low)} chain(s) "
            f"is below {MIN_E_BFMI} (lowest {min(low):.2f}): the chains explore the tails "
            "poorly. Strengthen the prior or reparametrize.")
    for message in messages:
        warn(message, MCMCDiagnosticWarning)
    return not messages


def nuts(X, y, family, *, sample_weight, prior_prec, fit_intercept, n_draws=4000,
         n_burnin=None, thin=None, n_chains=DEFAULT_N_CHAINS, n_jobs=None, random_state=None,
         tol=1e-10, max_iter=100, offset=None, target=None, max_tree_depth=MAX_TREE_DEPTH,
         max_gradients="auto", max_time=None, started=None, verbose=0):
    """Sample a weighted GLM posterior with the No-U-Turn sampler, run to a target ESS.

    The target is ``sum_n w_n log p(y_n | a_n . theta) + log N(theta; 0, P^-1)``, in the
    Laplace-whitened coordinates of the module docstring. ``n_chains`` chains start at
    independent draws from the Laplace approximation, adapt their step size for
    ``n_burnin`` iterations, then run in rounds until the smallest bulk effective sample
    size over the parameters (Vehtari et al., 2021; pooled over the chains) reaches
    ``n_draws`` and every rank-normalized split-R-hat is at most 1.01 (``1 + 4 / ESS`` when
    ``n_draws`` is below 400, :func:`r_hat_limit`), or until
    ``BUDGET_FACTOR * ceil(n_draws / n_chains)`` draws per chain.

    Parameters
    ----------
    X, y, family, sample_weight, prior_prec, fit_intercept
        As in :func:`~skcoreset._inference.mcmc.mcmc`; ``X`` may also be a row storage
        (:class:`~skcoreset._backend.DaskRows` for rows on a cluster), holding the encoded
        targets and weights (``y`` and ``sample_weight`` are then None).
    n_draws : int, default=4000
        The effective sample size asked for: the minimum bulk ESS over the parameters at
        which the run stops. The draws returned are all the kept draws of the run (about
        ``n_draws`` on a near-Gaussian posterior, where NUTS gives about one effective
        draw per iteration; more when it mixes more slowly).
    n_burnin : int, default=None
        Warm-up iterations per chain (step-size adaptation, discarded); 150 by default.
        0 skips the adaptation and uses the step size ``p^(-1/4)``.
    thin : int, default=None
        Keep every ``thin``-th iteration (1 by default). The budget counts kept draws, so
        a larger ``thin`` lets a slowly mixing run go on longer.
    n_chains : int, default=4
        Independent chains; the R-hat compares them.
    n_jobs : int, default=None
        Chains run in parallel by :class:`joblib.Parallel` (``None``: one at a time unless
        inside a :func:`joblib.parallel_backend` context; -1: all processors). For rows on
        a dask cluster the chains run in threads, each waiting on its own passes over the
        chunks, so that the cluster computes the gradients of several chains at once.
    random_state : int, RandomState instance or None, default=None
        Seeds the starting draws and every chain's generator: a fixed value gives the same
        draws whatever ``n_jobs``.
    tol, max_iter : float, int
        Newton tolerance and iteration cap of the Laplace fit giving the metric.
    offset : ndarray of shape (n,), default=None
        A known term of each row's linear predictor.
    target : tuple, default=None
        ``(log_posterior, mean, chol)``: another target with the interface of
        :meth:`LogPosterior.value_and_grad` and the Gaussian that whitens it (e.g. the
        negative binomial model with ``log alpha`` as a parameter,
        :class:`~skcoreset._inference.dispersion.DispersionLogPosterior`), instead of the
        GLM posterior whitened by its Laplace fit.
    max_tree_depth : int, default=10
        Trajectory doublings per iteration at most (Stan's count: ``2**max_tree_depth - 1``
        leapfrog steps, one gradient each).
    max_gradients : int, "auto" or None, default="auto"
        Gradient evaluations of the whole run at most (warm-up included), shared equally by
        the chains of each round. ``"auto"``: ``64 * n_chains * (n_burnin + 2 *
        ceil(n_draws / n_chains))``, about ten times what a near-Gaussian posterior needs;
        None: no limit.
    max_time : float, default=None
        Seconds the run may take at most, counted from ``started`` (``time.monotonic``; the
        call by default). Chains run one after the other share the time of a round
        equally.
    started : float, default=None
        The clock (``time.monotonic``) at which the fit began, for ``max_time``.
    verbose : int, default=0
        When positive, print a line after the warm-up and after every round (draws per
        chain, smallest ESS, largest R-hat, elapsed time), and within a round every few
        seconds (the chain, its warm-up or sampling iteration, the ETA of the round); at 2
        or more also the Newton steps of the Laplace fit. The draws do not depend on it.

    Returns
    -------
    InferenceResult
        ``posterior`` is a :class:`~skcoreset._posterior.SamplePosterior` of the kept
        draws, stored step by step (the chains' draws of one iteration together, as for
        the ensemble sampler's walkers); ``n_iter`` the iterations per chain (warm-up and
        production); ``converged`` whether every check passed. ``extra`` holds
        ``effective_sample_size`` (bulk) and ``r_hat`` (rank-normalized split) per
        parameter, ``acceptance_fraction`` (the mean acceptance statistic of the
        production iterations), ``n_divergences``, ``sample_stats`` (per chain and kept
        draw, ArviZ names: ``lp``, ``energy``, ``acceptance_rate``, ``n_steps``,
        ``tree_depth``, ``diverging``, ``step_size``), ``e_bfmi`` per chain, ``n_chains``,
        ``n_burnin``, ``n_steps`` (production iterations per chain), ``thin``,
        ``n_gradients`` (all gradient evaluations, warm-up included), ``max_tree_depth``,
        ``n_max_tree_depth`` (transitions after the warm-up that reached it), ``stopped_by``
        (``"max_gradients"``, ``"max_time"`` or None) and ``laplace``. A run stopped by
        its gradients or time keeps the draws its chains completed (as many per chain:
        the longer chains' last draws are dropped; a chain with none is left out).

    Warns
    -----
    MCMCDiagnosticWarning
        When a budget ends the run before the targets are met (naming the ESS, the R-hat,
        the likely cause and the fixes), when transitions diverge or reach the maximum tree
        depth, or when a chain's E-BFMI is below 0.3.

    Raises
    ------
    ValueError
        When no step size can be found at the start (a flat or non-finite log posterior
        around the Laplace approximation), or when the budget ends the run before any
        chain completed an iteration.
    """
    started = time.monotonic() if started is None else started
    n_burnin = DEFAULT_WARMUP if n_burnin is None else int(n_burnin)
    thin = 1 if thin is None else int(thin)
    n_chains = int(n_chains)
    for name, value, low in (("n_draws", n_draws, 1), ("n_burnin", n_burnin, 0),
                             ("thin", thin, 1), ("n_chains", n_chains, 1),
                             ("max_tree_depth", max_tree_depth, 1)):
        if value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value}.")
    if max_gradients == "auto":
        max_gradients = AUTO_GRADIENTS_PER_ITERATION * n_chains * (
            n_burnin + 2 * math.ceil(n_draws / n_chains))
    elif max_gradients is not None and not max_gradients >= 1:
        raise ValueError(f"max_gradients must be an integer >= 1, 'auto' or None, got "
                         f"{max_gradients!r}.")
    if max_time is not None and not max_time > 0:
        raise ValueError(f"max_time must be a positive number of seconds or None, got "
                         f"{max_time!r}.")
    rng = check_random_state(random_state)
    start = None
    rows = as_storage(X, y, sample_weight, offset)
    if target is None:
        start = mcmc_start(rows, None, family, sample_weight=None, prior_prec=prior_prec,
                           fit_intercept=fit_intercept, tol=tol, max_iter=max_iter,
                           verbose=max(int(verbose) - 1, 0))
        target = (log_posterior_of(rows, family, prior_prec, fit_intercept),
                  start.posterior.mean, start.posterior.cov_cholesky)
    target = WhitenedTarget(_mixed_precision(target[0], target[1], target[2]), *target[1:])
    p = len(target.mode)
    chains = [_Chain(position=rng.standard_normal(p),
                     rng=np.random.default_rng(rng.randint(np.iinfo(np.int32).max)))
              for _ in range(n_chains)]

    per_chain = math.ceil(n_draws / n_chains)
    budget = BUDGET_FACTOR * per_chain
    progress = Progress("mcmc", budget, verbose, unit="draw")
    draws, stats = [[] for _ in chains], [[] for _ in chains]
    n_gradients = done = 0
    stopped_by, in_warmup, projected = None, False, 0
    # NUTS on a near-Gaussian posterior gives one to three effective draws per iteration:
    # start with half the draws and let _next_round add what the ESS estimate asks for
    warmup, n_round = n_burnin, min(max(math.ceil(per_chain / 2), MIN_ROUND), budget)
    sequential, number = effective_n_jobs(n_jobs) == 1, 0
    # rows on a cluster: the chains wait on its passes in threads of this process (its
    # handles do not travel to other processes); every chain counts its own gradients
    with Parallel(n_jobs=n_jobs, prefer="threads" if rows.chunked else None) as parallel:
        while n_round > 0:
            number += 1
            report = (_RoundProgress(number, n_chains, warmup, n_round * thin, verbose,
                                     sequential) if progress.enabled else None)
            allowance = (None if max_gradients is None
                         else max((max_gradients - n_gradients) // n_chains, 0))
            deadlines = _deadlines(started, max_time, n_chains, sequential)
            results = parallel(
                delayed(_advance)(copy.copy(target), chain, warmup, n_round, thin,
                                  max_tree_depth,
                                  report=None if report is None else partial(report, k),
                                  max_gradients=allowance, deadline=deadlines[k])
                for k, chain in enumerate(chains))
            for k, (chain, chain_draws, chain_stats, gradients, spent) in enumerate(results):
                chains[k] = chain
                draws[k].append(chain_draws)
                stats[k].append(chain_stats)
                n_gradients += gradients
                if spent is not None and stopped_by is None:
                    stopped_by, in_warmup = spent
            if stopped_by is not None:
                done, draws, stats = _even_chains(draws, stats)
                if done == 0:
                    limit = max_gradients if stopped_by == "max_gradients" else max_time
                    raise ValueError(
                        f"The NUTS run spent its budget ({stopped_by}={limit}) before any "
                        "chain completed an iteration: nothing to return. Raise "
                        f"{stopped_by}, or use method='laplace'.")
                progress.message(f"stopped by {stopped_by} after {done} draws per chain, "
                                 f"{n_gradients} gradients")
                n_chains = len(draws)
                chain_array = target.theta(np.stack([np.concatenate(d) for d in draws],
                                                    axis=1))
                break
            if warmup:
                sizes = ", ".join(f"{chain.step_size:.3g}" for chain in chains)
                progress.message(f"warm-up done: {n_chains} chains x {warmup} iterations, "
                                 f"step sizes {sizes}")
            done += n_round
            # (done, n_chains, p) draws of theta: the diagnostics are not invariant to the
            # whitening's rotation
            chain_array = target.theta(np.stack([np.concatenate(d) for d in draws], axis=1))
            ess = bulk_effective_sample_size(chain_array)
            r_hat = rank_r_hat(chain_array)
            min_ess, max_r_hat = float(np.min(ess)), float(np.max(r_hat))  # NaN: go on
            # R-hat's noise follows the smaller of the bulk and the folded ESS
            r_hat_ess = min(min_ess, float(np.min(folded_effective_sample_size(chain_array))))
            progress.message(
                f"{done}/{budget} draws per chain: min bulk ESS {min_ess:.0f}/{n_draws}, "
                f"max R-hat {max_r_hat:.4f}, {n_gradients} gradients, "
                f"{format_seconds(progress.elapsed())}")
            warmup = 0
            n_round = _next_round(done, n_draws, min_ess, max_r_hat, r_hat_ess, budget)
            # a run that cannot reach its targets within the budget stops now rather than
            # spend it: the gradients of the next round at this round's pace
            projected = math.ceil(n_round * thin * gradients_per_iteration(results))
            if (n_round > 0 and max_gradients is not None
                    and projected > max_gradients - n_gradients):
                stopped_by = "max_gradients"
                break
    stop = None
    if stopped_by is not None:
        ess = bulk_effective_sample_size(chain_array)
        r_hat = rank_r_hat(chain_array)
        min_ess, max_r_hat = float(np.min(ess)), float(np.max(r_hat))
        r_hat_ess = min(min_ess, float(np.min(folded_effective_sample_size(chain_array))))
        stop = _Stop(stopped_by, max_gradients if stopped_by == "max_gradients" else max_time,
                     done, in_warmup, projected)

    def gather(key, source=None):
        return np.stack([np.concatenate([s[key] if source is None else s[source][key]
                                         for s in chain_stats]) for chain_stats in stats])

    sample_stats = {key: gather(key) for key in SAMPLE_STATS}
    every = {key: gather(key, "all")
             for key in ("diverging", "tree_depth", "acceptance_rate", "energy")}
    every["e_bfmi"] = [_e_bfmi(chain_energy) for chain_energy in every["energy"]]
    converged = _diagnose(n_draws, min_ess, max_r_hat, r_hat_ess, budget, every, thin,
                          max_tree_depth, stop=stop)
    return InferenceResult(
        # draws step by step (the chains' draws of one iteration together), latest last
        posterior=SamplePosterior(chain_array.reshape(-1, p)),
        n_iter=(0 if stop is not None and stop.in_warmup else n_burnin) + done * thin,
        converged=converged,
        extra={"effective_sample_size": ess, "r_hat": r_hat,
               "acceptance_fraction": float(np.mean(every["acceptance_rate"])),
               "n_divergences": int(np.sum(every["diverging"])),
               "sample_stats": sample_stats, "e_bfmi": np.asarray(every["e_bfmi"]),
               "n_chains": n_chains, "n_burnin": n_burnin, "n_steps": done * thin,
               "thin": thin, "n_gradients": n_gradients, "max_tree_depth": max_tree_depth,
               "n_max_tree_depth": int(np.sum(every["tree_depth"] >= max_tree_depth)),
               "stopped_by": stopped_by, "laplace": start})


def gradients_per_iteration(results):
    """Leapfrog steps (gradients) per production iteration of all the chains together, from
    the kept draws of a round of :func:`_advance` results."""
    return sum(float(np.mean(stats["n_steps"])) for _, _, stats, _, _ in results
               if len(stats["n_steps"]))


# The largest change of the log posterior (nats) that single-precision products may make
# one sd from the mode; beyond it the sampler keeps the float64 products.
_MAX_MIXED_ERROR = 0.01


def _mixed_precision(log_posterior, mode, chol):
    """``log_posterior`` with its products in single precision about the mode
    (:class:`~skcoreset._inference._common.MixedProducts`: about 2x faster passes on dense
    rows in memory), when it has them and they change its value by at most
    ``_MAX_MIXED_ERROR`` nats at the mode and at a point one sd from it; else itself."""
    if not hasattr(log_posterior, "mixed_precision"):
        return log_posterior
    mixed = log_posterior.mixed_precision(mode)
    if mixed is log_posterior:
        return log_posterior
    with np.errstate(over="ignore", invalid="ignore"):
        for point in (mode, mode + chol @ np.full(len(mode), len(mode) ** -0.5)):
            exact, approximate = (lp.value_and_grad(point)[0] for lp in (log_posterior, mixed))
            if not abs(exact - approximate) <= _MAX_MIXED_ERROR:
                return log_posterior
    return mixed


def _deadlines(started, max_time, n_chains, sequential):
    """Each chain's clock deadline in a round (None without ``max_time``): the end of the
    run for chains side by side; for chains one after the other, an equal share of the time
    left each (a chain that finishes early leaves its time to the next)."""
    if max_time is None:
        return [None] * n_chains
    end = started + max_time
    if not sequential:
        return [end] * n_chains
    now = time.monotonic()
    left = max(end - now, 0.0)
    return [now + left * (k + 1) / n_chains for k in range(n_chains)]


def _even_chains(draws, stats):
    """The chains of a run stopped by its budget, cut to the same number of draws (the
    fewest of a chain that has any; chains without draws are left out): ``(draws per
    chain, draws, stats)`` in the layout of :func:`nuts`'s lists of rounds."""
    lengths = [sum(len(part) for part in chain) for chain in draws]
    done = min((n for n in lengths if n > 0), default=0)
    keep = [k for k, n in enumerate(lengths) if n > 0]

    draws = [[np.concatenate(draws[k])[:done]] for k in keep]
    every = [{key: np.concatenate([s["all"][key] for s in stats[k]])
              for key in stats[k][0]["all"]} for k in keep]
    iterations = min(len(chain["diverging"]) for chain in every) if every else 0
    stats = [[{**{key: np.concatenate([s[key] for s in stats[k]])[:done]
                  for key in SAMPLE_STATS},
               "all": {key: value[:iterations] for key, value in chain_every.items()}}]
             for k, chain_every in zip(keep, every)]
    return done, draws, stats
