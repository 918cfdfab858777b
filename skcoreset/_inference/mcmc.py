"""MCMC on the weighted GLM posterior: the method's entry point and emcee's ensemble sampler.

:func:`mcmc` hands the run to the No-U-Turn sampler (:mod:`.nuts`, the default) or to
emcee's affine-invariant ensemble sampler (:func:`ensemble`, below). The ensemble's log
posterior is vectorised over walkers: for the ``(S, p)`` positions proposed in one
emcee step the linear predictors of all points are ``X @ coef.T + intercept`` -- one BLAS
product -- followed by one elementwise family call. The walkers start at draws from the
Laplace approximation, and the run is checked with the mean acceptance fraction and the
integrated autocorrelation time.
"""

import math
import time

import emcee
import numpy as np
from sklearn.utils import check_random_state

from .._warnings import warn
from .._backend import is_chunked
from .._design import linear_predictor
from .._posterior import SamplePosterior
from .._progress import Progress, format_seconds
from ._common import InferenceResult, LogPosterior
from ..exceptions import MCMCDiagnosticWarning
from ._start import mcmc_start
from .diagnostics import chain_diagnostics
from .dispersion import DispersionLogPosterior
from .nuts import DEFAULT_N_CHAINS, MAX_TREE_DEPTH, nuts

# With the stretch scale of stretch_scale the integrated autocorrelation time on a
# p-dimensional Gaussian target is below 10 + 15 p steps (measured: 17, 27, 35, 64, 128 steps
# for p = 1, 2, 3, 5, 10). Default runs last 50 such times, burn-in 10.
_TAU_GUESS = (10, 15)
_MIN_WALKERS = 16
_ACCEPTANCE_RANGE = (0.2, 0.8)
_MIN_AUTOCORR_TIMES = 50
_BURNIN_AUTOCORR_TIMES = 10
# Cap on the default run: walkers x (burn-in + production) steps, i.e. log-density
# evaluations per data point. The default plan (60 tau of 10 + 15 p steps, 4 p walkers) grows
# like 3600 p^2; the cap leaves it unchanged up to p = 16 and keeps a p = 51 problem (d > N
# data) at about 5,000 steps instead of 46,500.
MAX_DEFAULT_EVALUATIONS = 1_000_000
_PREDICT_CHUNK_ELEMENTS = 2**20  # rows x draws per block in sample_predictive_moments


def log_probability(X, y, family, *, sample_weight, prior_prec, fit_intercept, offset=None):
    """The vectorised unnormalised log posterior that :func:`mcmc` hands to emcee.

    Parameters
    ----------
    X, y, family, sample_weight, prior_prec, fit_intercept, offset
        As in :func:`mcmc`.

    Returns
    -------
    log_prob : callable
        Maps theta of shape ``(S, p)`` to the log posteriors of shape ``(S,)`` (and ``(p,)``
        to a float): ``sum_n w_n log p(y_n | a_n . theta) - theta^T P theta / 2``. Weights
        multiply the log-likelihood, so an integer weight is the same as repeating the row.
    """
    return LogPosterior(X, y, family, sample_weight, prior_prec, fit_intercept, offset).value


def _expected_autocorr_time(n_params):
    """Rough integrated autocorrelation time (steps) of the stretch move on a Gaussian."""
    return _TAU_GUESS[0] + _TAU_GUESS[1] * n_params


def stretch_scale(n_params):
    """Scale ``a`` of the stretch move: ``2 + 1 / p``.

    emcee's default ``a = 2`` accepts ~81% of the proposals in one dimension (above the
    healthy band) and ~72% in two; a slightly longer stretch in low dimension moves further
    per step. Measured on Gaussian targets the autocorrelation time falls from 28 to 17 steps
    (p = 1), 35 to 27 (p = 2) and 40 to 35 (p = 3), and the scale tends to emcee's 2 as p grows.
    """
    return 2.0 + 1.0 / n_params


def default_n_walkers(n_params):
    """``max(16, 4 p)``: emcee's stretch move needs at least ``2 p`` walkers."""
    return max(_MIN_WALKERS, 4 * n_params)


def _chain_plan(n_params, n_walkers, n_draws, n_burnin, thin):
    """Resolve the defaults: ``(n_walkers, draws per walker, thin, n_burnin)``.

    Defaults aim at a burn-in of 10 and a production run of 50 expected autocorrelation
    times; when that would exceed ``MAX_DEFAULT_EVALUATIONS`` walker steps, the defaulted
    parts are shortened to fit (one sixth burn-in) and an :class:`MCMCDiagnosticWarning`
    names the values that give the full run.
    """
    n_walkers = default_n_walkers(n_params) if n_walkers is None else int(n_walkers)
    if n_walkers < 2 * n_params:
        raise ValueError(f"n_walkers={n_walkers} is too small: emcee's stretch move needs at "
                         f"least 2 * n_params = {2 * n_params} walkers.")
    if n_draws < 1:
        raise ValueError(f"n_draws must be a positive integer, got {n_draws}.")
    draws_per_walker = math.ceil(n_draws / n_walkers)
    tau = _expected_autocorr_time(n_params)
    max_steps = MAX_DEFAULT_EVALUATIONS // n_walkers
    capped = {}
    if thin is None:
        # thin so that the production run is about 50 autocorrelation times long
        min_steps = _MIN_AUTOCORR_TIMES * tau
        budget = max_steps - (max_steps // 6 if n_burnin is None else n_burnin)
        if min_steps > budget:
            capped["thin"] = max(1, math.ceil(min_steps / draws_per_walker))
            min_steps = budget
        thin = max(1, math.ceil(min_steps / draws_per_walker))
    elif thin < 1:
        raise ValueError(f"thin must be a positive integer, got {thin}.")
    if n_burnin is None:
        n_burnin = _BURNIN_AUTOCORR_TIMES * tau
        budget = max(max_steps // 6, max_steps - thin * draws_per_walker)
        if n_burnin > budget:
            capped["n_burnin"] = n_burnin
            n_burnin = budget
    elif n_burnin < 0:
        raise ValueError(f"n_burnin must be non-negative, got {n_burnin}.")
    if capped:
        steps = int(n_burnin) + int(thin) * draws_per_walker
        full = ", ".join(f"{k}={v}" for k, v in capped.items())
        warn(
            f"The default MCMC run for {n_params} parameters ({n_walkers} walkers, about "
            f"{_BURNIN_AUTOCORR_TIMES + _MIN_AUTOCORR_TIMES} autocorrelation times of "
            f"~{tau} steps) would exceed {MAX_DEFAULT_EVALUATIONS:,} walker steps; it is cut "
            f"to {steps:,} steps per walker (n_burnin={int(n_burnin)}, thin={int(thin)}), so "
            f"the draws may be correlated and biased towards the Laplace start. For the full "
            f"run set {full}; or reduce the number of parameters (stronger prior, fewer "
            "features), or use method='laplace' or 'kl_proximal'.",
            MCMCDiagnosticWarning)
    return n_walkers, draws_per_walker, int(thin), int(n_burnin)


def _initial_positions(laplace_posterior, n_walkers, rng):
    """Walkers at independent draws from the Laplace approximation.

    When the posterior is close to Gaussian the ensemble then starts near stationarity and
    burn-in has only the non-Gaussian part to correct. A tight ball around the mode would gain
    nothing: the stretch move proposes along lines between walkers, so the ensemble would
    first have to expand to the posterior's scale.
    """
    z = rng.standard_normal((n_walkers, len(laplace_posterior.mean)))
    return laplace_posterior.mean + z @ laplace_posterior.cov_cholesky.T


def _run(sampler, state, n_steps, label, progress, done=0, deadline=None):
    """Advance the ensemble ``n_steps`` steps, storing them, or until the clock
    (``time.monotonic``) passes ``deadline``; ``(state, steps taken)``.

    With ``progress`` enabled, prints a line every few seconds (steps of the whole run and
    of this stage, acceptance so far, elapsed time, ETA of the whole run) and one when the
    stage ends. ``done`` is the number of steps of the run before this stage.
    """
    step = 0
    if n_steps == 0:
        return state, step
    for step, state in enumerate(sampler.sample(state, iterations=n_steps), start=1):
        if progress.due():
            progress.line(done + step, f"{label} {step:{progress.width}d}/{n_steps}  "
                          f"acceptance {np.mean(sampler.acceptance_fraction):.3f}")
        if deadline is not None and step < n_steps and time.monotonic() >= deadline:
            break
    progress.message(f"{label} {'done' if step == n_steps else 'stopped by max_time'}: "
                     f"{step} steps per walker, acceptance "
                     f"{np.mean(sampler.acceptance_fraction):.3f}, "
                     f"{format_seconds(progress.elapsed())} in all")
    return state, step


def _diagnose(acceptance, tau, n_steps):
    """Warn about an acceptance fraction outside [0.2, 0.8] or a chain < 50 tau; ok flag."""
    ok = True
    low, high = _ACCEPTANCE_RANGE
    if not low <= acceptance <= high:
        ok = False
        warn(
            f"The mean acceptance fraction {acceptance:.3f} is outside [{low}, {high}]; the "
            "sampler may be stuck or not moving. Check the data scaling or the prior.",
            MCMCDiagnosticWarning)
    tau_max = float(np.max(tau))
    if not n_steps >= _MIN_AUTOCORR_TIMES * tau_max:  # also catches a NaN tau
        ok = False
        warn(
            f"The chain of {n_steps} steps per walker is shorter than {_MIN_AUTOCORR_TIMES} "
            f"integrated autocorrelation times (tau = {tau_max:.1f} steps), so the draws and "
            "tau itself are unreliable; increase n_draws or thin.",
            MCMCDiagnosticWarning)
    return ok


SAMPLERS = ("nuts", "ensemble")


def mcmc(X, y, family, *, sample_weight, prior_prec, fit_intercept, sampler="nuts",
         n_draws=4000, n_burnin=None, thin=None, n_walkers=None, n_chains=DEFAULT_N_CHAINS,
         n_jobs=None, random_state=None, max_tree_depth=MAX_TREE_DEPTH,
         max_gradients="auto", max_time=None, tol=1e-10, max_iter=100, offset=None,
         sample_alpha=False, verbose=0):
    """Sample a weighted GLM posterior by MCMC.

    ``sampler="nuts"`` (the default) runs :func:`~skcoreset._inference.nuts.nuts`, the
    No-U-Turn sampler with the Laplace Hessian as its metric, until the bulk effective
    sample size reaches ``n_draws``; ``"ensemble"`` runs :func:`ensemble`, emcee's
    stretch-move ensemble, for a planned number of steps. NUTS uses the gradient of the log
    posterior (one pass over the rows) and mixes in a few leapfrog steps per draw at any
    dimension, where the ensemble's autocorrelation time grows with it (about ``10 + 15 p``
    steps); ``n_walkers`` is read by the ensemble only, ``n_chains`` and ``n_jobs`` by NUTS
    only, as are ``max_tree_depth`` and ``max_gradients``; ``max_time`` (seconds from the
    call, the Laplace start included) bounds both. ``offset`` (a known term of each row's
    linear predictor) and the other parameters are those of the two functions; the result
    records ``extra["sampler"]``.

    Both samplers start from the Laplace approximation, which also tells when the posterior
    is flat or nearly improper (:func:`~skcoreset._inference._start.mcmc_start`): NUTS
    refuses it (ValueError, naming the cause and the fixes), the ensemble warns.

    ``sample_alpha=True`` (the negative binomial model, NUTS): ``log alpha`` is sampled
    with the coefficients, as the last column of the draws
    (:class:`~skcoreset._inference.dispersion.DispersionLogPosterior`), from ``family``'s
    alpha and the Laplace fit of theta given it, whitened by their joint Laplace
    approximation.
    Rows on a dask cluster (``X`` a :class:`~skcoreset._backend.DaskRows` storage) are
    sampled by NUTS only, every gradient one reduction over their chunks.
    """
    if sample_alpha and sampler == "nuts" and is_chunked(X):
        raise ValueError(
            "method='mcmc' samples the negative binomial alpha with the coefficients for "
            "rows in memory or a np.memmap; for dask arrays pass a number as alpha (e.g. "
            "alpha_ of a fit with method='laplace', which estimates it on all chunks), and "
            "the coefficients are sampled given it.")
    if sampler == "ensemble" and is_chunked(X):
        raise ValueError(
            "sampler='ensemble' needs the rows in memory: each of its hundreds of thousands "
            "of walker steps would be a pass over the chunks of the dask arrays. Use "
            "sampler='nuts' (each gradient one pass over the chunks), or fit a coreset of the "
            "rows (e.g. QuasiNewtonCoreset) and sample it in memory.")
    started = time.monotonic()
    if sampler == "nuts":
        target = None
        if sample_alpha:
            start = mcmc_start(X, y, family, sample_weight=sample_weight,
                               prior_prec=prior_prec, fit_intercept=fit_intercept, tol=tol,
                               max_iter=max_iter, offset=offset, improper="raise").posterior
            joint = DispersionLogPosterior(X, y, family, sample_weight, prior_prec,
                                           fit_intercept, offset)
            target = (joint, *joint.joint_laplace(start.mean, start.precision,
                                                  np.log(family.alpha)))
        result = nuts(X, y, family, sample_weight=sample_weight, prior_prec=prior_prec,
                      fit_intercept=fit_intercept, n_draws=n_draws, n_burnin=n_burnin,
                      thin=thin, n_chains=n_chains, n_jobs=n_jobs, random_state=random_state,
                      tol=tol, max_iter=max_iter, offset=offset, target=target,
                      max_tree_depth=max_tree_depth, max_gradients=max_gradients,
                      max_time=max_time, started=started, verbose=verbose)
        result.extra["sample_alpha"] = target is not None
    elif sampler == "ensemble":
        result = ensemble(X, y, family, sample_weight=sample_weight, prior_prec=prior_prec,
                          fit_intercept=fit_intercept, n_draws=n_draws, n_burnin=n_burnin,
                          thin=thin, n_walkers=n_walkers, random_state=random_state, tol=tol,
                          max_iter=max_iter, offset=offset, max_time=max_time,
                          started=started, verbose=verbose)
    else:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}.")
    result.extra["sampler"] = sampler
    return result


def ensemble(X, y, family, *, sample_weight, prior_prec, fit_intercept, n_draws=4000,
             n_burnin=None, thin=None, n_walkers=None, random_state=None, tol=1e-10,
             max_iter=100, offset=None, max_time=None, started=None, verbose=0):
    """Sample a weighted GLM posterior with emcee's affine-invariant ensemble sampler.

    The target is ``sum_n w_n log p(y_n | a_n . theta) + log N(theta; 0, P^-1)``. The walkers
    start at independent draws from the Laplace approximation, run ``n_burnin`` discarded
    steps, then ``ceil(n_draws / n_walkers) * thin`` production steps of which every
    ``thin``-th is kept.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Targets encoded for ``family``.
    family : Family
    sample_weight : ndarray of shape (n,)
        Non-negative multipliers of each point's log-likelihood.
    prior_prec : ndarray of shape (p,)
        Diagonal prior precision (``p = d + fit_intercept``).
    fit_intercept : bool
    n_draws : int, default=4000
        Number of posterior draws returned (over all walkers; the latest are kept when
        ``n_walkers`` does not divide it).
    n_burnin : int, default=None
        Steps per walker discarded before the production run; ``100 + 150 * p`` by default
        (about ten autocorrelation times of the stretch move on a Gaussian target).
    thin : int, default=None
        Keep every ``thin``-th production step. By default the smallest value giving a
        production run of at least ``500 + 750 * p`` steps per walker (about 50
        autocorrelation times), so the returned draws are nearly independent.

        The defaults of ``n_burnin`` and ``thin`` together are capped at
        ``MAX_DEFAULT_EVALUATIONS = 1_000_000`` walker steps (``n_walkers`` times the steps
        per walker), which binds from about ``p = 17``; the run is then shortened (one sixth
        burn-in) with an :class:`MCMCDiagnosticWarning` giving the values for the full run.
        Explicit values are never capped.
    n_walkers : int, default=None
        Ensemble size, at least ``2 * p``; ``max(16, 4 * p)`` by default. The cost of a step
        grows linearly with it while the autocorrelation time in steps barely falls.
    random_state : int, RandomState instance or None, default=None
        Seeds the Laplace draws that start the walkers and emcee's own generator, so a fixed
        value gives identical draws.
    tol, max_iter : float, int
        Newton tolerance and iteration cap of the Laplace fit giving the starting point.
    max_time : float, default=None
        Seconds the run may take at most, counted from ``started`` (``time.monotonic``; the
        call by default): the ensemble stops at the first step past it and returns the
        draws of its production steps so far (of its burn-in, when it stops there), with
        a warning.
    started : float, default=None
        The clock at which the fit began, for ``max_time``.
    verbose : int, default=0
        When positive, print the progress of the burn-in and production stages every few
        seconds (steps done out of the total, acceptance fraction so far, elapsed time and
        an estimate of the remaining time) and a line at the end of each stage; at 2 or more
        also the Newton steps of the Laplace fit.

    Returns
    -------
    InferenceResult
        ``posterior`` is a :class:`~skcoreset._posterior.SamplePosterior` of the
        ``n_draws`` draws; ``n_iter`` the steps per walker (burn-in plus production);
        ``converged`` whether both diagnostics passed; ``log_evidence`` is None. ``extra``
        holds ``acceptance_fraction`` (mean over walkers), and per parameter, from the
        unthinned production chain (:func:`~skcoreset._inference.diagnostics.chain_diagnostics`):
        ``autocorr_time`` (emcee's integrated autocorrelation time, in steps),
        ``effective_sample_size`` (of the kept draws: ``n_walkers * n_steps / tau``, at most
        ``n_draws``) and ``r_hat`` (split-R-hat over the walkers); then ``n_walkers``,
        ``n_burnin``, ``n_steps`` (production steps per walker), ``thin`` and ``laplace``
        (the :class:`InferenceResult` of the start).

    Warns
    -----
    MCMCDiagnosticWarning
        When the default run is capped (see ``thin``), when the mean acceptance fraction is
        outside [0.2, 0.8], when the production run is shorter than 50 integrated
        autocorrelation times (``get_autocorr_time(tol=0)``), when ``max_time`` ends the
        run, or when the posterior is flat or nearly improper (the Laplace start's linear
        predictors have posterior sds beyond ``MAX_LATENT_SD``).

    Notes
    -----
    The move is emcee's stretch move (Goodman and Weare, 2010), affine invariant, so the
    sampler is insensitive to the scaling and correlation of the parameters; its scale is
    ``2 + 1 / p`` rather than emcee's 2 (see ``stretch_scale``). Each log-posterior call
    evaluates the family on an ``(n, n_walkers / 2)`` block, so the memory of a step is a
    few times that of ``X`` when ``n_walkers ~ 4 p``. The stretch move mixes more slowly as
    ``p`` grows (acceptance ~0.3 and ~300 steps per autocorrelation time at ``p = 20``);
    beyond a few parameters prefer the No-U-Turn sampler (:func:`mcmc`'s default).
    """
    started = time.monotonic() if started is None else started
    if max_time is not None and not max_time > 0:
        raise ValueError(f"max_time must be a positive number of seconds or None, got "
                         f"{max_time!r}.")
    deadline = None if max_time is None else started + max_time
    n_params = len(prior_prec)
    n_walkers, draws_per_walker, thin, n_burnin = _chain_plan(
        n_params, n_walkers, n_draws, n_burnin, thin)
    n_steps = draws_per_walker * thin
    rng = check_random_state(random_state)

    start = mcmc_start(X, y, family, sample_weight=sample_weight, prior_prec=prior_prec,
                       fit_intercept=fit_intercept, tol=tol, max_iter=max_iter, offset=offset,
                       verbose=max(int(verbose) - 1, 0), improper="warn")
    positions = _initial_positions(start.posterior, n_walkers, rng)

    log_prob = log_probability(X, y, family, sample_weight=sample_weight,
                               prior_prec=prior_prec, fit_intercept=fit_intercept,
                               offset=offset)
    sampler = emcee.EnsembleSampler(n_walkers, n_params, log_prob, vectorize=True,
                                    moves=emcee.moves.StretchMove(a=stretch_scale(n_params)))
    # emcee otherwise copies numpy's global state; seed its generator from ours instead
    sampler.random_state = np.random.RandomState(
        rng.randint(np.iinfo(np.int32).max)).get_state()

    progress = Progress("mcmc", n_burnin + n_steps, verbose, unit="step")
    state, burned = _run(sampler, positions, n_burnin, "burn-in", progress, deadline=deadline)
    if burned == n_burnin:
        sampler.reset()
        _, taken = _run(sampler, state, n_steps, "production", progress, done=n_burnin,
                        deadline=deadline)
    else:  # stopped by max_time in the burn-in: its steps are all there is
        n_burnin, taken = 0, burned
    stopped = taken < n_steps
    if stopped:
        n_steps = taken
        warn(
            f"The ensemble run stopped at its budget of max_time={max_time:g} seconds after "
            f"{taken} steps per walker{' of its burn-in' if n_burnin == 0 else ''}: the draws "
            "may not represent the posterior (see the diagnostics that follow). Raise "
            "max_time, or use method='laplace'.", MCMCDiagnosticWarning)

    acceptance = float(np.mean(sampler.acceptance_fraction))
    draws = sampler.get_chain(thin=min(thin, n_steps), flat=True)[-n_draws:]
    diagnostics = chain_diagnostics(sampler.get_chain(), len(draws))
    converged = _diagnose(acceptance, diagnostics["autocorr_time"], n_steps) and not stopped
    return InferenceResult(
        posterior=SamplePosterior(draws), n_iter=n_burnin + n_steps, converged=converged,
        extra={"acceptance_fraction": acceptance, **diagnostics, "n_walkers": n_walkers,
               "n_burnin": n_burnin, "n_steps": n_steps, "thin": thin, "laplace": start})


def sample_predictive_moments(X, draws, family, fit_intercept, *, scale=None,
                              log_scale=None, offset=None, chunk_size=None,
                              return_exponent=False):
    """Mean and variance over posterior draws of the conditional mean ``E[y | x, theta]``.

    For the logistic family this is ``P(y = 1 | x)`` averaged over the draws (the posterior
    predictive probability) and its posterior variance; for Poisson the rate, times
    ``scale`` (the exposure) when given. The linear predictors of a block of rows for all
    draws come from one product, in row blocks so memory stays bounded.

    The moments are computed from the conditional means divided by the power of two that
    brings each row's largest one to [0.5, 1) (exactly, so nothing changes where the direct
    sums are finite), and the scale is applied to that factor: rates of 1e200 seen over an
    exposure of 1e-200 give their finite mean and variance, where squaring the rates would
    overflow.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    draws : ndarray of shape (S, p)
        Posterior draws of ``theta``, e.g. ``SamplePosterior.samples``.
    family : Family
    fit_intercept : bool
    scale : float or ndarray of shape (n,), default=None
        Positive factor of each row's conditional mean (the exposure of counts); 1 by
        default.
    log_scale : float or ndarray of shape (n,), default=None
        The log of that factor instead, for the log link only: an offset added to the
        linear predictors, whose exponentials are taken relative to each row's largest
        one, so rates and factors beyond float64 (``|log_scale| > 709``) whose products
        are within it give their moments. Not with ``scale``.
    offset : ndarray of shape (n,), default=None
        Known terms added to the linear predictors (any link), e.g. a binary model's.
    chunk_size : int, default=None
        Rows per block; by default about ``2**20 / S`` (8 MB of predictors per block).
    return_exponent : bool, default=False
        Return the moments in units of ``2**exponent`` (the mean) and ``4**exponent`` (the
        variance), with the non-negative integer ``exponent`` of each row: finite where the
        mean is beyond float64's square root (1e154) and its variance is not.

    Returns
    -------
    mean, var : ndarray of shape (n,)
        ``mean`` of ``scale * family.mean(x . theta)`` over the draws and its variance
        (divisor S); infinite only where the variance itself exceeds the largest float.
    exponent : ndarray of int of shape (n,)
        Only with ``return_exponent=True``.
    """
    draws = np.atleast_2d(draws)
    n = X.shape[0]
    if scale is not None and log_scale is not None:
        raise ValueError("pass scale or log_scale, not both.")
    if log_scale is not None:
        if family.link.name != "log":
            raise ValueError("log_scale needs the log link.")
        log_scale = np.broadcast_to(log_scale, (n,))
    # the scale as a factor in [0.5, 1) times a power of two
    factor, power_of_scale = np.frexp(np.broadcast_to(1.0 if scale is None else scale, (n,)))
    if chunk_size is None:
        chunk_size = max(1, _PREDICT_CHUNK_ELEMENTS // draws.shape[0])
    mean = np.empty(n)
    sd = np.empty(n)
    exponent = np.empty(n, dtype=int)
    for start in range(0, n, chunk_size):
        rows = slice(start, start + chunk_size)
        eta = linear_predictor(X[rows], draws, fit_intercept)
        if offset is not None:
            eta = eta + offset[rows, None]
        if log_scale is not None:
            # exp(eta + o) as exp(eta + o - power log 2) in (0, 1) times 2**power
            eta = eta + log_scale[rows, None]
            power = np.floor(np.max(eta, axis=1) / np.log(2.0)).astype(int) + 1
            unit = np.exp(eta - power[:, None] * np.log(2.0))
        else:
            mu = family.mean(eta)
            power = np.frexp(np.max(np.abs(mu), axis=1))[1]
            unit = np.ldexp(mu, -power[:, None])  # |unit| < 1: its square cannot overflow
        # the scale times 2**power
        exponent[rows] = power + power_of_scale[rows]
        mean[rows] = factor[rows] * unit.mean(axis=1)
        sd[rows] = factor[rows] * unit.std(axis=1)
    # the units only for rows beyond 1: small means stay as they are
    shift = np.minimum(exponent, 0)
    mean, sd, exponent = np.ldexp(mean, shift), np.ldexp(sd, shift), exponent - shift
    if return_exponent:
        return mean, sd**2, exponent
    with np.errstate(over="ignore"):  # a variance beyond the largest float is inf
        return np.ldexp(mean, exponent), np.ldexp(sd**2, 2 * exponent)
