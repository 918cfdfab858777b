"""How far a fitted posterior is from the exact posterior of all rows, by importance weighting."""

from dataclasses import dataclass
from functools import partial
from numbers import Integral
from typing import Any, NamedTuple

import numpy as np
from sklearn.utils import check_array, check_random_state, column_or_1d
from sklearn.utils.validation import check_is_fitted

from .._warnings import warn
from .._backend import DaskRows, InMemoryRows, float_rows, is_dask_collection, take_rows
from .._inference import importance_summary, log_joint, prior_precision
from .._numbers import is_number
from .._posterior import SamplePosterior
from .._typing import FloatArray, MatrixLike, RandomStateLike, VectorLike
from .._validation import (ACCEPT_SPARSE, check_sample_weight, combined_exposure,
                           linear_offset)
from ..coreset._checks import is_training_data
from ..exceptions import ImportanceSamplingWarning

_PRIOR_PARAMS = ("prior_scale", "intercept_prior_scale", "fit_intercept")
_DTYPES = {"float64": np.float64, "float32": np.float32}
# k-hat above which Pareto-smoothed importance sampling is unreliable whatever the number of
# draws (Vehtari et al. 2024, Section 3)
MAX_PARETO_K = 0.7
# Weights all within this factor of each other have no tail: the estimates are reliable
# whatever the shape fitted to the top fifth of them (a fit close to exact, whose k-hat is
# that of rounding-level differences)
_BOUNDED_WEIGHT_RATIO = 1.1


@dataclass(frozen=True)
class ExactKL:
    """What :func:`exact_kl` returns.

    Attributes
    ----------
    kl : float
        ``KL(fitted posterior || exact posterior of all rows)``, in nats.
    kl_se : float
        Its Monte Carlo standard error (the delta method; meaningful when ``reliable``).
    pareto_k : float
        The Pareto shape ``k-hat`` of the importance weights (PSIS, Vehtari et al. 2024):
        below about 0.5 the estimate converges fast; ``-inf`` when every weight is equal
        (the fitted posterior is the exact one by construction).
    pareto_k_threshold : float
        ``min(1 - 1 / log10(n_draws), 0.7)``, the largest ``k-hat`` at which ``n_draws``
        draws give a reliable estimate.
    reliable : bool
        Whether ``pareto_k <= pareto_k_threshold``, or every importance weight is within
        10 % of every other (a fit so close to exact that its weights have no tail, whatever
        ``k-hat`` their rounding-level differences give).
    ess : float
        Effective sample size of the (Pareto-smoothed, normalised) importance weights: how
        many independent draws of the exact posterior the weighted draws are worth.
    n_draws : int
        Number of draws of the fitted posterior used.
    max_mean_error_sd : float
        Largest ``|mean of the fitted posterior - exact posterior mean|`` over the
        parameters, in exact-posterior standard deviations.
    mean : ndarray of shape (n_params,)
        Exact posterior mean of ``[coef..., intercept]`` (and ``log alpha`` when a negative
        binomial fit sampled it), by importance weighting.
    sd : ndarray of shape (n_params,)
        Exact posterior standard deviations, likewise.
    """

    kl: float
    kl_se: float
    pareto_k: float
    pareto_k_threshold: float
    reliable: bool
    ess: float
    n_draws: int
    max_mean_error_sd: float
    mean: FloatArray
    sd: FloatArray


def _final_step(estimator, fit_rows):
    """``(final estimator, coreset step or None, index of the coreset step, transforms)``."""
    steps = getattr(estimator, "steps", None)
    if steps is None:
        return estimator, None, None, False
    active = [(i, step) for i, (_, step) in enumerate(steps)
              if step is not None and step != "passthrough"]
    if not active:
        raise TypeError("The pipeline has no steps to measure.")
    coresets = [(i, step) for i, step in active[:-1] if hasattr(step, "fit_coreset")]
    if len(coresets) > 1:
        raise ValueError("exact_kl measures a pipeline with one coreset step; this one has "
                         f"{len(coresets)}.")
    if coresets and fit_rows is not None:
        raise ValueError("fit_rows is for an MCMC estimator fitted outside a pipeline; the "
                         "rows of a pipeline's fit are its coreset's, which exact_kl reads.")
    transforms = len(active) - 1 > len(coresets)
    index, coreset = coresets[0] if coresets else (None, None)
    return active[-1][1], coreset, index, transforms


def _check_estimator(estimator):
    if hasattr(estimator, "fit_coreset"):
        raise TypeError(
            f"exact_kl measures a fitted posterior, and {type(estimator).__name__} is a coreset "
            "constructor: pass the Pipeline of the coreset and the estimator fitted on it "
            "(or coreset_quality for the constructor's Laplace-level distance).")
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    if not all(key in params for key in _PRIOR_PARAMS):
        raise TypeError(
            "exact_kl measures a fitted skcoreset Bayesian GLM (e.g. "
            "BayesianLogisticRegression), alone or as the last step of a Pipeline; got "
            f"{type(estimator).__name__}.")
    check_is_fitted(estimator, ["posterior_", "family_"])


def _encode(estimator, y):
    family = estimator.family_
    classes = getattr(estimator, "classes_", None)
    if classes is None:
        return family.encode_target(y)
    return family.encode_target(
        y, classes, hint=" exact_kl needs the targets of the data the estimator models.")


def _check_rows(estimator, X, y, sample_weight, name):
    """Validated in-memory rows (an ndarray, a memmap, or CSR), encoded targets, weights."""
    X = check_array(X, dtype=np.float64, accept_sparse=ACCEPT_SPARSE, input_name=name)
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"{name} has {X.shape[1]} features, but the estimator was fitted "
                         f"on {estimator.n_features_in_}.")
    y = column_or_1d(np.asarray(y))
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y has {y.shape[0]} entries but {name} has {X.shape[0]} rows.")
    return X, _encode(estimator, y), check_sample_weight(sample_weight, X.shape[0])


def _dask_rows(estimator, X, y, sample_weight):
    import dask.array as da

    X = da.asarray(X)
    if X.ndim != 2 or X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has shape {X.shape}, but the estimator was fitted on "
                         f"{estimator.n_features_in_} features.")
    rows = DaskRows.from_arrays(X, y, sample_weight)
    return rows.encoded(partial(estimator.family_.encode_target,
                                classes=getattr(estimator, "classes_", None)))


def _draws(estimator, n_draws, rng):
    """``(draws, log alpha draws or None, log q~ or None, r_eff)`` of the fitted posterior:
    Gaussian draws with their density, or (a thinned set of) the MCMC draws, whose
    ``log q~`` needs their rows."""
    posterior = estimator.posterior_
    if not isinstance(posterior, SamplePosterior):
        draws = posterior.sample(n_draws, random_state=rng)
        return draws, None, posterior.logpdf(draws), 1.0
    samples = posterior.samples
    alpha = getattr(estimator, "alpha_samples_", None)
    total = len(samples)
    keep = (np.arange(total) if n_draws >= total
            else np.unique(np.round(np.linspace(0, total - 1, n_draws)).astype(np.intp)))
    log_alpha = None if alpha is None else np.log(alpha[keep])
    ess = getattr(estimator, "effective_sample_size_", None)
    # evenly thinned draws are worth min(ESS, kept) independent ones
    r_eff = 1.0 if ess is None else float(np.clip(np.mean(ess) / len(keep), 1e-3, 1.0))
    return samples[keep], log_alpha, None, r_eff


def exact_kl(estimator: Any, X: MatrixLike, y: VectorLike,
             sample_weight: VectorLike | None = None, *, exposure: VectorLike | None = None,
             offset: VectorLike | None = None, n_draws: int = 1000,
             fit_rows: tuple | None = None, dtype: str = "float64",
             random_state: RandomStateLike = None) -> ExactKL:
    """How far a fitted posterior is from the exact posterior of all rows, in nats.

    Estimates ``KL(q || p)`` from the fitted posterior ``q`` (any method, fitted on a
    coreset or on all rows) to the exact posterior ``p`` of the model given every row of
    ``X``, ``y`` (with ``sample_weight``, ``exposure``, ``offset``), under the estimator's
    own likelihood (``family_``) and prior, by importance weighting (Vehtari et al. 2024).
    For ``S`` draws ``theta_s`` of ``q`` and the unnormalised densities ``q~`` and ``p~``
    (prior times the weighted likelihood of every row),

    ``KL(q || p) = E_q[log q~ - log p~] + log E_q[p~ / q~]``,

    where the normalising constants cancel. The same weights ``p~ / q~`` (Pareto-smoothed)
    give the exact posterior's mean and sd, and how far the fit's mean is from it.

    * A Gaussian posterior (``method="laplace"``, ``"kl_proximal"``, ``"pass_glm"``) is
      sampled ``n_draws`` times, ``q~`` its density.
    * An MCMC posterior (``method="mcmc"``) gives its own draws (``n_draws`` of them, evenly
      spaced, when it has more), ``q~`` the prior times the weighted likelihood of the rows
      it was fitted on: the coreset's rows and weights when ``estimator`` is a
      :class:`~skcoreset.pipeline.Pipeline` with a coreset step, else ``fit_rows``; by
      default ``X``, ``y``, ``sample_weight`` themselves, when ``q`` is ``p`` (KL 0).
      A negative binomial fit that sampled ``alpha`` (``alpha_samples_``) is measured on
      ``(theta, log alpha)`` jointly, with the prior of ``log alpha`` of the sampler; a
      fixed or estimated ``alpha_`` is held fixed in both posteriors.

    **Cost.** One pass over the rows for a block of rows x ``n_draws`` linear predictors at
    a time (bounded memory: ``X`` may be a ``np.memmap``, a CSR matrix or a dask array,
    summed chunk by chunk where it lives). The time is proportional to ``n_draws`` x rows:
    at the default 1,000 draws about ten Laplace fits on all rows (30 features, 1e5-1e6
    rows: 1.5 s at 1e5 rows, 15 s at 1e6 on one core); ``n_draws=200`` is a quick check.

    **When to trust it.** The estimate is reliable when the Pareto shape ``k-hat`` of the
    weights is at most ``min(1 - 1 / log10(n_draws), 0.7)`` (``reliable``). Above it an
    :class:`~skcoreset.exceptions.ImportanceSamplingWarning` is issued: the fit is too far
    from (or narrower than) the exact posterior for its draws to represent it, and ``kl``
    is then usually an underestimate. Between the threshold and 0.7 more draws help; above
    0.7 they do not: fit a closer posterior (a larger coreset, ``method="mcmc"``).

    Parameters
    ----------
    estimator : fitted estimator or Pipeline
        A fitted skcoreset Bayesian GLM (e.g. :class:`~skcoreset.BayesianLogisticRegression`),
        or a fitted :class:`~skcoreset.pipeline.Pipeline` ending in one (with at most one
        coreset step; its other steps transform ``X`` as at fit).
    X : array-like, sparse matrix, np.memmap or dask array of shape (n_samples, n_features)
        All rows of the data (as given to the pipeline's or the estimator's ``fit``).
    y : array-like of shape (n_samples,)
        Their targets.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the rows, as in ``fit``. ``None`` means ones.
    exposure, offset : array-like of shape (n_samples,), default=None
        Of count targets, as in the count regressors' ``fit`` (rows in memory only):
        the offset ``offset + log(exposure)`` of any finite size in the negative binomial
        model's linear predictor, the exposure weights of the Poisson model's rates.
    n_draws : int, default=1000
        Draws of the fitted posterior (at least 2); the cost is proportional to it.
    fit_rows : tuple, default=None
        ``(X_fit, y_fit)`` or ``(X_fit, y_fit, sample_weight_fit)``: the rows an MCMC
        estimator (outside a pipeline) was fitted on, as given to its ``fit`` (counts over
        an exposure as rates ``y / exposure`` with the exposure in the weights). Not for
        Gaussian posteriors, which carry their density.
    dtype : {"float64", "float32"}, default="float64"
        Precision of the pass over all rows. ``"float32"`` is about twice as fast for the
        logistic and the log-link Poisson models: each row's log-likelihood is taken as its
        float64 value at the draws' mean plus the float32 difference to it, in a form whose
        rounding is relative to the difference (measured at a million rows: 1e-5 nats on
        rare-event logistic data, 5e-4 nats on heavy-tailed Poisson counts, against
        differences of 20-30 nats between draws). Other models run in float64.
    random_state : int, RandomState instance or None, default=None
        Seed of the draws of a Gaussian posterior.

    Returns
    -------
    result : ExactKL
        ``kl`` and ``kl_se`` in nats, ``pareto_k`` with its ``pareto_k_threshold`` and
        ``reliable``, ``ess``, ``n_draws``, ``max_mean_error_sd``, and the exact posterior's
        ``mean`` and ``sd``.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    TypeError
        If ``estimator`` is not a skcoreset Bayesian GLM or a pipeline ending in one.
    ValueError
        If ``X``, ``y``, ``sample_weight``, ``exposure`` or ``fit_rows`` do not match (shapes,
        features, unseen labels), if ``X`` is not the data a pipeline's coreset was built
        from, if ``n_draws`` is not an integer of at least 2, or if the pipeline's
        posterior was exactly corrected (``exact_corrected_``; its ``kl_before_`` is the
        distance before the correction).

    Warns
    -----
    ImportanceSamplingWarning
        When ``k-hat`` exceeds ``pareto_k_threshold``.

    See Also
    --------
    coreset_quality : The distance between the Laplace approximations of a coreset's
        posterior and of the full data's (one Newton fit each, no draws).

    References
    ----------
    A. Vehtari, D. Simpson, A. Gelman, Y. Yao and J. Gabry. Pareto smoothed importance
    sampling. Journal of Machine Learning Research, 25(72):1-58, 2024.

    Examples
    --------
    >>> from skcoreset import BayesianLogisticRegression
    >>> from skcoreset.datasets import make_logistic_regression
    >>> from skcoreset.metrics import exact_kl
    >>> X, y = make_logistic_regression(5000, coef=[1.0, -0.5], random_state=0)
    >>> clf = BayesianLogisticRegression().fit(X, y)
    >>> result = exact_kl(clf, X, y, n_draws=2000, random_state=0)
    >>> result.reliable, result.kl < 0.05  # Laplace is close at 5,000 rows, d = 2
    (True, True)
    """
    if not is_number(n_draws, Integral) or n_draws < 2:
        raise ValueError(f"n_draws must be an integer of at least 2, got {n_draws!r}.")
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}.")
    if getattr(estimator, "exact_corrected_", False):
        raise ValueError(
            "This pipeline's posterior was corrected to the exact posterior of all rows "
            "(exact_corrected_=True): its draws are no longer the coreset posterior's, so "
            "exact_kl cannot weight them. The corrected fit's own measures are pareto_k_ "
            f"({estimator.pareto_k_:.2f}), importance_ess_ ({estimator.importance_ess_:.0f}) "
            f"and kl_before_ ({estimator.kl_before_:.3g} nats, the coreset posterior's "
            "distance before the correction); fit with exact_correction=False to measure "
            "the coreset posterior itself.")
    draws, log_q, log_p, r_eff = _weighed_draws(
        estimator, X, y, sample_weight, exposure, offset, n_draws, fit_rows,
        check_random_state(random_state), _DTYPES[dtype])
    summary = importance_summary(draws, log_q, log_p, r_eff=r_eff)
    return _result(summary, len(draws))


def _weighed_draws(estimator, X, y, sample_weight, exposure, offset, n_draws, fit_rows, rng,
                   dtype=np.float64):
    """``(draws, log q~, log p~, r_eff)`` of the fitted posterior of ``estimator`` (a
    negative binomial's sampled ``log alpha`` the last column of the draws), ``log p~`` over
    every row of ``X``, ``y`` in one chunked pass."""
    final, coreset, coreset_index, transforms = _final_step(estimator, fit_rows)
    _check_estimator(final)
    if coreset is not None:
        check_is_fitted(coreset, ["sample_indices_", "sample_weight_"])
    Xt = estimator[:-1].transform(X) if transforms else X
    family = final.family_
    fit_intercept = final.get_params(deep=False)["fit_intercept"]
    prior = prior_precision(final.n_features_in_, **{
        key: final.get_params(deep=False)[key] for key in _PRIOR_PARAMS})
    is_mcmc = isinstance(final.posterior_, SamplePosterior)
    if fit_rows is not None and not is_mcmc:
        raise ValueError("fit_rows is for MCMC posteriors (draws without a density); this "
                         "estimator's Gaussian posterior carries its own.")

    offset_values = exposure_values = None
    if is_dask_collection(Xt):
        if exposure is not None or offset is not None:
            raise ValueError("exposure and offset of exact_kl are supported for rows in "
                             "memory; for dask arrays pass the rates y / exposure with "
                             "sample_weight=exposure (Poisson), or compute the arrays first.")
        rows = _dask_rows(final, Xt, y, sample_weight)
    else:
        Xt, y_encoded, weights = _check_rows(final, Xt, y, sample_weight, "X")
        if exposure is not None and family.binary:
            raise ValueError("exposure is for count models; this estimator fits the "
                             f"{family.name} model (pass its known term as offset).")
        # as the estimator's fit: the weights of rates, or the offset in the linear predictor
        if family.binary:  # a known term of the linear predictor under any link
            offset_values = linear_offset(None, offset, Xt.shape[0], None)
        elif hasattr(family, "exposure_as_weight"):
            exposure_values = combined_exposure(exposure, offset, Xt.shape[0],
                                                family.link.name)
            if exposure_values is not None:
                y_encoded, weights, _ = family.exposure_as_weight(y_encoded, weights,
                                                                  exposure_values)
        else:
            offset_values = linear_offset(exposure, offset, Xt.shape[0], family.link.name)
        rows = InMemoryRows(Xt, y_encoded, weights, offset_values)

    draws, log_alpha, log_q, r_eff = _draws(final, n_draws, rng)
    log_p = log_joint(rows, family, draws, prior, fit_intercept, log_alpha=log_alpha,
                      dtype=dtype)
    if log_q is None:
        fitted = _fit_rows(final, coreset, coreset_index, estimator, X, Xt, y,
                           exposure_values, fit_rows, offset_values)
        log_q = log_p if fitted is None else log_joint(fitted, family, draws, prior,
                                                       fit_intercept, log_alpha=log_alpha)
    if log_alpha is not None:
        draws = np.column_stack([draws, log_alpha])
    return draws, log_q, log_p, r_eff


def _fit_rows(final, coreset, coreset_index, pipeline, X, Xt, y, exposure, fit_rows,
              offset=None):
    """The rows an MCMC posterior was fitted on (:class:`InMemoryRows`, a coreset's with
    their offsets in the linear predictor), or None when they are the rows measured."""
    if coreset is not None:
        X_coreset = pipeline[:coreset_index].transform(X) if coreset_index else X
        if not is_training_data(coreset, X_coreset):
            raise ValueError(
                "X is not the data the pipeline's coreset was built from: its number of "
                "rows or its rows at sample_indices_ differ.")
        idx = coreset.sample_indices_
        y_fit = _encode(final, column_or_1d(np.asarray(take_rows(y, idx))))
        if exposure is not None:  # the coreset hands on the rates it was built for
            y_fit = y_fit / exposure[idx]
        return InMemoryRows(float_rows(take_rows(Xt, idx)), y_fit, coreset.sample_weight_,
                            None if offset is None else offset[idx])
    if fit_rows is None:
        return None
    if not isinstance(fit_rows, tuple) or len(fit_rows) not in (2, 3):
        raise ValueError("fit_rows must be a tuple (X_fit, y_fit) or (X_fit, y_fit, "
                         f"sample_weight_fit), got {type(fit_rows).__name__}"
                         f"{'' if not isinstance(fit_rows, tuple) else f' of {len(fit_rows)}'}.")
    X_fit, y_fit, weights = _check_rows(final, fit_rows[0], fit_rows[1],
                                        fit_rows[2] if len(fit_rows) == 3 else None,
                                        "fit_rows[0]")
    return InMemoryRows(X_fit, y_fit, weights)


def _result(summary, n_draws):
    threshold = min(1.0 - 1.0 / np.log10(n_draws), MAX_PARETO_K)
    reliable = bool(summary.pareto_k <= threshold
                    or summary.log_ratio_range <= np.log(_BOUNDED_WEIGHT_RATIO))
    with np.errstate(divide="ignore", invalid="ignore"):
        errors = np.abs(summary.proposal_mean - summary.mean) / summary.sd
    max_error = float(np.max(errors)) if np.all(np.isfinite(errors)) else np.inf
    if not reliable:
        advice = ("more draws (n_draws) can help" if summary.pareto_k <= MAX_PARETO_K
                  else "more draws do not help: fit a posterior closer to the exact one (a "
                  "larger coreset, or method='mcmc')")
        warn(
            f"The importance weights to the exact posterior have Pareto k-hat "
            f"{summary.pareto_k:.2f} > {threshold:.2f} ({n_draws} draws): kl="
            f"{summary.kl:.3g} nats and the exact moments are unreliable (kl is then "
            f"usually too small); {advice}.", ImportanceSamplingWarning)
    return ExactKL(kl=summary.kl, kl_se=summary.kl_se, pareto_k=summary.pareto_k,
                   pareto_k_threshold=float(threshold), reliable=reliable, ess=summary.ess,
                   n_draws=int(n_draws), max_mean_error_sd=max_error, mean=summary.mean,
                   sd=summary.sd)


class ExactCorrection(NamedTuple):
    """What :func:`exact_correction` returns: the draws resampled by their importance weights
    (``log alpha`` the last column when sampled), and the weights' diagnostics."""

    draws: FloatArray
    pareto_k: float
    ess: float
    kl: float
    kl_se: float


# Draws weighted by the correction: as many as fit a budget of rows x draws linear
# predictors (about 3 s in float32), at least 1,000 (PSIS is reliable from a few hundred
# draws at k-hat <= 0.5) and at most 4,000 (an MCMC run's draws, thinned evenly, or a
# Gaussian posterior's). The corrected moments' Monte Carlo error is 1 / sqrt(ESS) sd, the
# price of thinning at large N
_CORRECTION_BUDGET = 2**30
_CORRECTION_DRAWS = (1000, 4000)


def correction_draws(n_rows, n_available=None):
    """How many draws the exact correction weights over ``n_rows`` rows."""
    low, high = _CORRECTION_DRAWS
    n_draws = int(np.clip(_CORRECTION_BUDGET // max(int(n_rows), 1), low, high))
    return n_draws if n_available is None else min(n_draws, int(n_available))


def exact_correction(pipeline, X, y, sample_weight=None, *, exposure=None, offset=None,
                     n_draws=None, dtype=np.float32, random_state=None):
    """The posterior of a fitted pipeline's final estimator corrected to the exact posterior
    of all rows ``X``, ``y``: ``n_draws`` of its draws (an MCMC run's thinned evenly, or a
    Gaussian posterior's; by default :func:`correction_draws`) weighted by ``p~ / q~`` over
    every row in one chunked pass (float32 differences to the draws' mean where the model
    has them, see :func:`exact_kl`), Pareto-smoothed (the weights of :func:`exact_kl`, whose
    divergence they also give), then resampled systematically (Kitagawa 1996) to as many
    equally weighted draws."""
    rng = check_random_state(random_state)
    final = _final_step(pipeline, None)[0]
    _check_estimator(final)
    if n_draws is None:
        posterior = final.posterior_
        n_draws = correction_draws(
            np.shape(X)[0],
            len(posterior.samples) if isinstance(posterior, SamplePosterior) else None)
    draws, log_q, log_p, r_eff = _weighed_draws(pipeline, X, y, sample_weight, exposure,
                                                offset, n_draws, None, rng, dtype)
    summary = importance_summary(draws, log_q, log_p, r_eff=r_eff)
    return ExactCorrection(draws=draws[_systematic(np.exp(summary.log_weights), rng)],
                           pareto_k=summary.pareto_k, ess=summary.ess, kl=summary.kl,
                           kl_se=summary.kl_se)


def _systematic(weights, rng):
    """Indices of systematic resampling: one uniform offset, ``len(weights)`` evenly spaced
    points through the cumulative weights (the least added variance of the usual schemes)."""
    n = len(weights)
    points = (rng.uniform() + np.arange(n)) / n
    return np.minimum(np.searchsorted(np.cumsum(weights), points), n - 1)
