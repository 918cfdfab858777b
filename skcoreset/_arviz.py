"""The ArviZ export of the fitted GLM estimators (``to_arviz()``): the posterior by chain,
the pointwise log-likelihood, posterior predictive draws and the observed targets of some
rows, and the sample statistics of NUTS. ArviZ is optional and imported here, lazily."""

import inspect

import numpy as np
from sklearn.utils import check_random_state

from ._backend import float_rows
from ._design import linear_predictor
from ._posterior import SamplePosterior
from ._psis import LooSums
from ._summary import parameter_names
from ._validation import exposure_of

# Largest (chains x draws x rows) of the draw-by-row groups, log_likelihood and
# posterior_predictive: 5e7 float64 values are 400 MB each.
MAX_DRAW_ROWS = 50_000_000
# Draws per block of the pointwise computations: bounds their temporaries to about
# rows x 256 values.
_DRAW_BLOCK = 256


def import_arviz(estimator):
    try:
        import arviz as az
    except ImportError as exc:
        raise ImportError(
            f"{type(estimator).__name__}.to_arviz needs ArviZ, which is not installed (it is "
            "an optional dependency of skcoreset): pip install arviz") from exc
    return az


def _mcmc_chains(estimator, samples):
    """MCMC draws (``posterior_samples_``, or draws of alpha) as ``(n_chains, n_draws,
    ...)``: NUTS chains or emcee walkers (the latest ``n_samples // n_walkers`` steps of
    each; all draws in one chain when there are fewer draws than walkers). Draws are
    stored step by step, latest last."""
    n_samples = len(samples)
    n_chains = getattr(estimator, "_mcmc_n_chains", n_samples)
    steps = n_samples // n_chains
    if steps == 0:
        return samples[None]
    draws = samples[n_samples - steps * n_chains:]
    return np.swapaxes(draws.reshape(steps, n_chains, *samples.shape[1:]), 0, 1)


def alpha_draws(estimator, shape, rng):
    """Draws of the negative binomial overdispersion from its Laplace approximation in
    ``log alpha`` (``alpha_``, ``log_alpha_std_``), or None for a model without one, a fixed
    ``alpha`` or the Poisson limit (no uncertainty to draw)."""
    sd = getattr(estimator, "log_alpha_std_", 0.0)
    if not sd or not np.isfinite(sd):
        return None
    return np.exp(np.log(estimator.alpha_) + sd * rng.standard_normal(shape))


def posterior_draws(estimator, n_draws, n_chains, rng):
    """Draws of theta as ``(chains, draws, p)`` and, for the negative binomial model with an
    estimated ``alpha``, of alpha as ``(chains, draws)`` (else None).

    A Gaussian posterior gives ``n_chains`` chains of ``n_draws`` independent draws, so that
    ArviZ's R-hat is defined (and about 1); MCMC its own chains. Draws of alpha come from
    its Laplace approximation in ``log alpha``, independent of theta: the negative binomial
    information matrix has no cross terms between the coefficients and alpha (Cameron and
    Trivedi, 2013, section 3.3), so the joint Laplace approximation nearly factorises. They
    describe the estimate's uncertainty; the coefficients' posterior, the predictions and
    the data groups are given ``alpha_``. Draws of alpha made by MCMC jointly with theta
    give each draw's data groups its own alpha (:func:`joint_alpha`).
    """
    if isinstance(estimator.posterior_, SamplePosterior):
        theta = _mcmc_chains(estimator, estimator.posterior_.samples)
        if hasattr(estimator, "alpha_samples_"):  # sampled with theta
            return theta, _mcmc_chains(estimator, estimator.alpha_samples_)
    else:
        theta = estimator.posterior_.sample(n_chains * n_draws, random_state=rng)
        theta = theta.reshape(n_chains, n_draws, -1)
    return theta, alpha_draws(estimator, theta.shape[:2], rng)


def offset_scales_mean(family):
    """Whether a row's offset multiplies the mean as the exposure ``exp(offset)`` rather
    than adding to the linear predictor: of counts through a link other than log, whose
    mean an offset does not scale."""
    return family.link.name != "log" and hasattr(family, "loglik_with_exposure")


def with_offset(family, eta, offset):
    """``(eta + offset, None)``: the rows' offsets (n,) (of counts ``offset +
    log(exposure)``; of a binary model its known term) in the linear predictors ``eta``
    (n, S), in log space whatever their size; for counts through a link other than log,
    whose mean an offset does not scale, ``(eta, exp(offset))``, the exposure left to
    multiply the mean by (the ``exposure`` of :func:`draw_targets` and
    :func:`pointwise_loglik`)."""
    if offset is None:
        return eta, None
    if offset_scales_mean(family):
        return eta, exposure_of(offset)
    return eta + np.asarray(offset)[:, None], None


def draw_targets(family, eta, rng, *, n_trials=None, exposure=None, alpha=None):
    """One target per row and draw, ``(n, S)``, for linear predictors ``eta`` of shape
    (n, S) that hold the rows' offsets (:func:`with_offset`): of a binary model the
    successes out of ``n_trials`` (n,) when given; of counts through a link other than log
    over ``exposure`` (n,); ``alpha`` (S,): the negative binomial overdispersion of each
    draw, when sampled with the coefficients."""
    if n_trials is not None:
        return family.sample_with_trials(eta, n_trials, rng)
    if alpha is not None:
        return family.sample_per_alpha(eta, alpha, rng)
    if exposure is not None:  # Poisson with a non-log link: the rate times the exposure
        return family.sample(eta, rng, exposure=exposure)
    return family.sample(eta, rng)


def pointwise_loglik(family, y, eta, *, n_trials=None, exposure=None, alpha=None):
    """``log p(y_n | draw s)``, ``(n, S)``, with the arguments of :func:`draw_targets`
    (a binary model's successes y out of ``n_trials``: the binomial's)."""
    if n_trials is not None:
        return family.loglik_with_trials(y, eta, n_trials)
    if alpha is not None:
        return family.loglik_per_alpha(y, eta, alpha)
    if exposure is not None:
        return family.loglik_with_exposure(y, eta, exposure)
    return family.loglik(y, eta)


def _pointwise(estimator, X, y, n_trials, offset, theta, rng, alpha=None):
    """Log-likelihood of every row under every draw, and a predictive draw of every row
    per draw: two ``(S, n)`` arrays, for draws ``theta`` of shape (S, p) (and ``alpha``,
    see :func:`joint_alpha`)."""
    eta, exposure = with_offset(estimator.family_,
                                linear_predictor(X, theta, estimator.fit_intercept), offset)
    given = dict(n_trials=n_trials, exposure=exposure, alpha=alpha)
    loglik = pointwise_loglik(estimator.family_, y, eta, **given)
    draws = draw_targets(estimator.family_, eta, rng, **given)
    return loglik.T, _observed(estimator, draws, n_trials).T


def _observed(estimator, y, n_trials):
    """Targets as ArviZ shows them: a binary model's successes out of trials as counts,
    its labels as 0/1."""
    return y if n_trials is not None else estimator._observed(y)


def fits_draw_groups(rows, n_draws, n_chains, estimator):
    """Whether the draw-by-row groups of ``rows`` fit in ``MAX_DRAW_ROWS`` values (with
    the draws of an MCMC fit, or ``n_chains x n_draws``)."""
    draws = (estimator.posterior_.n_samples if isinstance(estimator.posterior_, SamplePosterior)
             else n_chains * n_draws)
    return draws * rows.X.shape[0] <= MAX_DRAW_ROWS


def _weighted(loglik, weights):
    """Each row's log-likelihood times its weight (what the posterior conditions on)."""
    return loglik if weights is None else loglik * weights


def joint_alpha(estimator, alpha):
    """The draws of alpha flattened, (S,), where they were sampled with the coefficients
    (MCMC), so that each draw's likelihood uses its own; None otherwise (a Laplace fit's
    data groups are given ``alpha_``, see :func:`posterior_draws`)."""
    return None if alpha is None or not hasattr(estimator, "alpha_samples_") else alpha.ravel()


def _data_groups(estimator, X, y, n_trials, weights, offset, theta, rng, alpha=None):
    """``log_likelihood``, ``posterior_predictive`` and ``observed_data`` of the rows, in
    blocks of draws."""
    n_chains, n_draws, p = theta.shape
    n = X.shape[0]
    if n_chains * n_draws * n > MAX_DRAW_ROWS:
        raise ValueError(
            f"The log_likelihood and posterior_predictive groups of {n} rows and "
            f"{n_chains} x {n_draws} draws would hold {n_chains * n_draws * n:,} values each, "
            f"more than {MAX_DRAW_ROWS:,} (400 MB). Pass fewer rows (e.g. a held-out sample) "
            "as X and y, or fewer draws (n_draws).")
    flat_theta = theta.reshape(-1, p)
    loglik = np.empty((n_chains * n_draws, n))
    predictive = np.empty((n_chains * n_draws, n))
    for start in range(0, len(flat_theta), _DRAW_BLOCK):
        block = slice(start, start + _DRAW_BLOCK)
        loglik[block], predictive[block] = _pointwise(
            estimator, X, y, n_trials, offset, flat_theta[block], rng,
            None if alpha is None else alpha[block])
    loglik = _weighted(loglik, weights)
    shape = (n_chains, n_draws, n)
    groups = {"log_likelihood": {"y": loglik.reshape(shape)},
              "posterior_predictive": {"y": predictive.reshape(shape)},
              "observed_data": {"y": _observed(estimator, y, n_trials)}}
    if n_trials is not None:
        groups["constant_data"] = {"n_trials": n_trials}
    return groups


def inference_data(estimator, rows, n_draws, n_chains, random_state, feature_names=None):
    """``estimator.to_arviz``: ArviZ data of the fit.

    ``rows`` is ``(X, y_encoded, n_trials, weights, offset)`` of the rows of the data
    groups (the log-likelihood of a weighted row is multiplied by its weight; a binary
    model's ``n_trials`` is the number of trials of each row, whose successes are y; the
    offset of counts is ``offset + log(exposure)``, see :func:`with_offset`), or None
    for the posterior (and sample_stats) only. ``feature_names`` name the coefficients (as
    in ``summary``).
    """
    az = import_arviz(estimator)
    rng = check_random_state(random_state)
    theta, alpha = posterior_draws(estimator, n_draws, n_chains, rng)
    names = parameter_names(estimator, feature_names)
    n_coef = theta.shape[-1] - int(estimator.fit_intercept)
    posterior = {"coef": theta[..., :n_coef]}
    if estimator.fit_intercept:
        posterior["intercept"] = theta[..., -1]
    if alpha is not None:
        posterior["alpha"] = alpha
    groups = {"posterior": posterior}
    if hasattr(estimator, "sample_stats_"):  # NUTS: (chain, draw) arrays, ArviZ's names
        groups["sample_stats"] = dict(estimator.sample_stats_)
    coords = {"feature": list(names[:n_coef])}
    dims = {"coef": ["feature"]}
    if rows is not None:
        groups.update(_data_groups(estimator, *rows, theta, rng,
                                   joint_alpha(estimator, alpha)))
        coords["obs_id"] = np.arange(rows[0].shape[0])
        dims["y"] = ["obs_id"]
        if "constant_data" in groups:
            dims["n_trials"] = ["obs_id"]
    if "posterior" in inspect.signature(az.from_dict).parameters:  # ArviZ < 1: InferenceData
        return az.from_dict(**groups, coords=coords, dims=dims)
    return az.from_dict(groups, coords=coords, dims=dims)  # a DataTree


def _reff(estimator, theta, alpha, ess_of_means):
    """ArviZ's relative effective sample size of MCMC draws: the mean over the parameters
    of the effective sample size of their means (``ess_of_means`` of ``(steps, chains,
    parameters)`` draws), over the number of draws; 1 for the independent draws of a
    Gaussian posterior."""
    if not isinstance(estimator.posterior_, SamplePosterior) or theta.shape[0] == 1:
        return 1.0
    draws = theta if alpha is None else np.concatenate([theta, alpha[..., None]], axis=-1)
    chain = np.swapaxes(draws, 0, 1)
    return float(np.mean(ess_of_means(chain)) / (chain.shape[0] * chain.shape[1]))


# Values of the draws-by-rows log-likelihood held at a time by chunked_loo.
_LOO_BLOCK_VALUES = 2**20


def _loo_sums(family, fit_intercept, theta, alpha, reff, X, y, weights, first_row,
              n_trials=None, offset=None):
    """``(LooSums,)`` of the rows ``X``, ``y`` (log-likelihoods times ``weights``, out of
    ``n_trials`` or with the rows' ``offset``, see :func:`pointwise_loglik`), the first of
    which is row ``first_row``, under the draws ``theta`` (and ``alpha``, see
    :func:`joint_alpha`), block of rows by block of rows: the sum of a row storage's
    ``sum_with_starts`` (which hands on the offsets of its chunks)."""
    sums = LooSums(len(theta), reff)
    block = max(1, _LOO_BLOCK_VALUES // len(theta))
    for start in range(0, X.shape[0], block):
        part = slice(start, start + block)
        eta, exposure = with_offset(
            family, linear_predictor(float_rows(X[part]), theta, fit_intercept),
            None if offset is None else offset[part])
        loglik = pointwise_loglik(family, y[part], eta, exposure=exposure, alpha=alpha,
                                  n_trials=None if n_trials is None else n_trials[part])
        sums.add(_weighted(loglik, None if weights is None else weights[part, None]),
                 first_row + start)
    return (sums,)


def chunked_loo(estimator, rows, n_draws, n_chains, reff, random_state, ess_of_means):
    """``estimator.loo``: PSIS-LOO of ``rows`` under the posterior draws of
    :meth:`to_arviz` with the same seed, block of rows by block of rows
    (:class:`~skcoreset._psis.LooSums`); ``reff`` by default from ``ess_of_means``
    (:func:`_reff`). ``rows`` are ``(X, y_encoded, n_trials, weights, offset)`` in memory,
    or a storage of dask rows (targets, weights and offsets as fitted), summed chunk by
    chunk where the chunks live: only the pointwise results (three values per row) reach
    this process."""
    rng = check_random_state(random_state)
    theta, alpha = posterior_draws(estimator, n_draws, n_chains, rng)
    if reff is None:
        reff = _reff(estimator, theta, alpha, ess_of_means)
    flat_theta = theta.reshape(-1, theta.shape[-1])
    draws = (estimator.family_, estimator.fit_intercept, flat_theta,
             joint_alpha(estimator, alpha), reff)
    if getattr(rows, "chunked", False):  # dask rows: the draws enter the graph once
        return rows.sum_with_starts(_loo_sums, *map(rows.shared, draws))[0].result()
    X, y, n_trials, weights, offset = rows
    return _loo_sums(*draws, X, y, weights, 0, n_trials, offset)[0].result()
