"""Bayesian generalized linear models as scikit-learn estimators.

:class:`BayesianLogisticRegression`, :class:`BayesianProbitRegression`,
:class:`BayesianPoissonRegression` and :class:`BayesianNegativeBinomialRegression` fit a
posterior over
``theta = [coef..., intercept]`` under the prior ``N(0, prior_scale^2 I)`` on the coefficients
and ``N(0, intercept_prior_scale^2)`` on the intercept. ``sample_weight`` multiplies each
point's log-likelihood, unnormalised: a weight of 2 is the same as the row appearing twice, so
the weighted subsets returned by the coreset constructors stand in for the full data.
"""

import inspect
import re
import textwrap
import warnings
from functools import partial
from numbers import Integral, Real
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, Self, TypeVar

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from scipy import stats
from sklearn.utils.validation import assert_all_finite, check_is_fitted, validate_data

from ._numbers import is_number
from ._design import latent_moments, linear_predictor, split_theta
from ._posterior import SamplePosterior, check_level
from ._arviz import draw_targets, inference_data
from ._summary import MCMC_DIAGNOSTICS, summary_table
from ._docstrings import fill_doc
from .families import (FAMILIES, LogisticFamily, NegativeBinomialFamily, PoissonFamily,
                       ProbitFamily)
from ._inference import (SAMPLERS, PassGLMStream, check_pass_degree, kl_proximal, laplace,
                         mcmc, pass_glm, prior_precision, resolve_family,
                         sample_predictive_moments)
from ._backend import DaskRows, is_dask_collection
from ._dask_predict import (accuracy, exposure_as_weight_lazily, predict_lazily, r2,
                            sample_y_lazily)
from ._atomic import fit_context
from ._typing import (FitMethod, FloatArray, MatrixLike, Prediction, RandomStateLike, Sampler,
                      VectorLike)
from ._sklearn_compat import Interval, StrOptions, _num_samples, available_if
from ._validation import (ACCEPT_SPARSE, check_exposure, check_sample_weight,
                          combined_exposure)
from .coreset._subset import carries_weights, reject_weighted_subset, unpack_weighted_subset


class _Param(NamedTuple):
    """An estimator parameter, declared once: its default, its scikit-learn constraints and
    its numpydoc entry (``type`` and ``doc`` under ``name : type, default=...``)."""

    default: object
    constraints: list
    type: str
    doc: str
    keyword: str | None = None  # a method's option: the keyword of its ``fit`` (None: the name)


class _Method(NamedTuple):
    """A fitting method, declared once in :data:`_METHODS`."""

    fit: object  # the inference function, (X, y, family, **common, **options) -> result
    doc: str  # its item in the description of the ``method`` parameter
    options: dict  # estimator parameter -> _Param, passed to ``fit`` as its keyword
    supports: object = None  # family -> whether the method fits it (None: every family)
    streams: bool = False  # one pass over the data: partial_fit
    check: object = None  # estimator -> None; raises ValueError for invalid options
    finds_non_finite: bool = False  # its pass over X raises on NaN/inf: no separate check


def _check_pass_degree(estimator):
    check_pass_degree(estimator._family().pass_glm_mapping, estimator.pass_degree)


def _has_pass_glm_mapping(family):
    return family.pass_glm_mapping is not None


# The fitting methods. Each entry is all the estimators know of a method: the function that
# fits, its options (the estimators' parameters that reach it, with their defaults,
# constraints and docs), the families it supports and what it can do (streams, dask
# arrays). The estimators' ``_parameter_constraints`` and the parameter sections of their
# docstrings are generated from it (``_glm_estimator``), in the order of the table, which
# also checks that their typed ``__init__`` takes these parameters: a new method is its
# inference function, one entry here and its options in the ``__init__`` signatures.
_METHODS = {
    "laplace": _Method(
        laplace, doc="""
- ``"laplace"``: Gaussian centred at the posterior mode (found by Newton's method with a
  line search) with covariance the inverse negative Hessian of the log posterior there.""",
        options={}),
    "kl_proximal": _Method(
        kl_proximal, doc="""
- ``"kl_proximal"``: full-covariance Gaussian variational inference by KL proximal-gradient
  steps (Khan et al., 2015, eqs. 16-19), started at the Laplace approximation; maximises the
  evidence lower bound (``elbo_``). Uses the dual updates, which form no ``d x d`` matrix
  until the end, when there are more parameters than rows.""",
        options={"kl_beta": _Param(None, [Interval(Real, 0, None, closed="neither"), None],
                                   "float", """
Proximal step size ``beta`` of ``method="kl_proximal"`` (each step mixes the current ``q``
and the linearised target with ``r = 1 / (1 + beta)``). ``None``: 1, the fastest step near
the optimum, where the Laplace approximation starts the iteration (the paper's 0.25 for the
logistic model suits its start from the prior); from 50,000 rows on, ``None`` takes
fixed-point steps to the same optimum instead, which need fewer iterations there.""",
                                   keyword="beta")}),
    # PASS-GLM needs a polynomial approximation of each family's mapping function
    "pass_glm": _Method(
        pass_glm, doc="""
- ``"pass_glm"``: PASS-GLM (Huggins et al., 2017): the GLM mapping function is replaced by a
  degree-``pass_degree`` polynomial (see ``pass_radius``), so the log-likelihood depends on
  the data only through polynomial sufficient statistics computed in one pass
  (``partial_fit`` for streams, dask arrays chunk by chunk). Degree 2 gives a Gaussian
  posterior in closed form; higher degrees use Newton and Laplace on the polynomial
  surrogate. Supports the logistic and probit models (probit at degree 2) and Poisson with
  ``link="log"``.""",
        options={
            "pass_degree": _Param(2, [Interval(Integral, 2, None, closed="left")], "int", """
Degree of PASS-GLM's polynomial approximation (``method="pass_glm"`` only). Logistic: 2, 6,
10, ... (the paper's 2 + 4k rule keeps the surrogate concave); Poisson: even; probit: 2.
Degrees above 2 store ``C(p + degree, degree)`` monomial sums and are meant for few
features; they are more accurate where degree 2 warns.""", keyword="degree"),
            "pass_radius": _Param(
                "auto", [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
                'float or "auto"', """
Which polynomial PASS-GLM uses (``method="pass_glm"`` only). ``"auto"``: a Laplace fit on
pilot rows (at most 10,000 rows drawn uniformly from all rows, per class for a binary model,
the rarer class up to half; the same rows in memory, on a dask array and in a
``partial_fit`` stream) gives representative linear predictors ``s = x . theta``, and the
derivative of the polynomial is the least-squares fit of the exact one (sigmoid, ``exp``, or
``phi / Phi`` at the margins ``y s`` for probit) at them, so the approximation is accurate
where the data are, including far from 0 (rare positives, large counts). The statistics do
not depend on the polynomial, so a stream's is chosen again after every ``partial_fit`` from
all its rows so far. A number ``R``: the Chebyshev approximation on ``[-R, R]`` of Huggins et
al. (2017) (their PASS-LR2 uses ``R = 4``), accurate only when most ``s`` lie in that
interval. Either way held-out rows (drawn with the pilot rows) measure the resulting error of
the posterior mean, and a :class:`~skcoreset.exceptions.PassGLMAccuracyWarning` (a
``UserWarning``) is issued when it exceeds one posterior standard deviation or the
estimate's standard error cannot rule that out: the approximation error does not shrink with
the number of rows, while the posterior does.""", keyword="radius"),
        },
        supports=_has_pass_glm_mapping, streams=True, check=_check_pass_degree,
        finds_non_finite=True),
    "mcmc": _Method(
        mcmc, doc="""
- ``"mcmc"``: draws from the exact posterior, by default with the No-U-Turn sampler
  (``sampler="nuts"``: mici's dynamic multinomial HMC with the Laplace Hessian as a dense
  metric, ``n_chains`` chains run until the bulk effective sample size reaches ``n_draws``),
  or with emcee's affine-invariant ensemble (``sampler="ensemble"``); chains start from the
  Laplace approximation. ``posterior_samples_`` holds the draws and predictions average over
  them. Every gradient is one pass over the rows: on a coreset of 1,000 rows a run takes
  seconds at 100 parameters; on all rows the cost grows with N.""",
        options={
            "sampler": _Param("nuts", [StrOptions(set(SAMPLERS))],
                              "{" + ", ".join(f'"{name}"' for name in SAMPLERS) + "}", """
The MCMC kernel (``method="mcmc"``). ``"nuts"``: the No-U-Turn sampler (dynamic HMC with
multinomial sampling, Hoffman and Gelman, 2014; Betancourt, 2017, as implemented by mici) in
the coordinates that whiten the Laplace approximation, with dual-averaging step-size
adaptation; it uses the gradient of the log posterior and mixes in a few leapfrog steps per
draw at 10 or 100 parameters alike. ``"ensemble"``: emcee's stretch-move ensemble (Goodman
and Weare, 2010), which needs no gradient but whose autocorrelation time grows like
``10 + 15 p`` steps, so that beyond about 20 parameters its default run is cut short with a
warning. On a 1,000-row coreset NUTS gives many times more effective draws per second from
30 parameters on (``benchmarks/bench_mcmc.py``)."""),
            "n_draws": _Param(4000, [Interval(Integral, 2, None, closed="left")], "int", """
Size of the MCMC sample (``method="mcmc"``), in effective draws. NUTS runs until the smallest
bulk effective sample size of the parameters (Vehtari et al., 2021) reaches ``n_draws`` and
every rank-normalized R-hat is at most 1.01, or until a budget of 10 times ``n_draws``
draws, which warns (:class:`~skcoreset.exceptions.MCMCDiagnosticWarning`) with the numbers;
it keeps all its draws (about ``n_draws`` of them on a near-Gaussian posterior). The
ensemble keeps ``n_draws`` draws over all walkers, thinned to be nearly independent."""),
            "n_burnin": _Param(None, [Interval(Integral, 0, None, closed="left"), None], "int",
                               """
Warm-up iterations per chain, discarded (``method="mcmc"``). NUTS: step-size adaptation, 150
by default (the chains start near stationarity, at Laplace draws). Ensemble: ``None`` scales
it with the number of parameters p, ``100 + 150 p`` steps, about ten autocorrelation times
of the stretch move on a Gaussian target."""),
            "thin": _Param(None, [Interval(Integral, 1, None, closed="left"), None], "int", """
Keep every ``thin``-th iteration (``method="mcmc"``). NUTS: 1 by default; its budget counts
kept draws, so a larger value lets a slowly mixing run go on longer. Ensemble: ``None``
chooses the smallest value that runs the chain for about 50 autocorrelation times
(``500 + 750 p`` steps); the defaulted parts of the run are capped together at 1,000,000
walker steps (``n_walkers`` times steps per walker), which binds from about ``p = 17``; the
shortened run then warns (:class:`~skcoreset.exceptions.MCMCDiagnosticWarning`) with the
``n_burnin`` and ``thin`` that give the full run. Explicit values are not capped."""),
            "n_walkers": _Param(None, [Interval(Integral, 2, None, closed="left"), None],
                                "int", """
Number of emcee walkers (``sampler="ensemble"``), at least ``2 p``; ``None`` means
``max(16, 4 p)``."""),
            "n_chains": _Param(4, [Interval(Integral, 1, None, closed="left")], "int", """
Number of independent NUTS chains (``sampler="nuts"``), each with its own warm-up and step
size, started at independent Laplace draws; R-hat compares them."""),
            "n_jobs": _Param(None, [Integral, None], "int", """
Number of NUTS chains run in parallel (joblib). ``None`` means 1 unless in a
:obj:`joblib.parallel_backend` context, ``-1`` all processors. The draws do not depend on
it."""),
            "random_state": _Param(None, ["random_state"],
                                   "int, RandomState instance or None", """
Seed of the MCMC chains' starting points and moves (``method="mcmc"``), for reproducible
draws. The other methods are deterministic."""),
        }),
}
_STREAMING = " or ".join(repr(name) for name, spec in _METHODS.items() if spec.streams)

# The parameters every estimator has besides ``method`` and the methods' options (which
# come between ``max_iter`` and ``verbose``).
_COMMON_PARAMS = {
    "prior_scale": _Param(1.0, [Interval(Real, 0, None, closed="neither")], "float", """
Standard deviation of the isotropic Gaussian prior ``N(0, prior_scale^2 I)`` on the
coefficients. Must be positive."""),
    "intercept_prior_scale": _Param(10.0, [Interval(Real, 0, None, closed="neither")],
                                    "float", """
Standard deviation of the Gaussian prior on the intercept (a wide prior by default). Ignored
when ``fit_intercept=False``."""),
    "fit_intercept": _Param(True, ["boolean"], "bool", """
Whether to fit an intercept, with its own prior."""),
    "tol": _Param(1e-10, [Interval(Real, 0, None, closed="neither")], "float", """
Convergence tolerance, in nats: Newton's method (Laplace, PASS-GLM above degree 2) stops when
half the Newton decrement (the predicted increase of the log posterior from another step) is
below ``tol``; KL-proximal VI when half the squared natural-gradient norm of the ELBO is."""),
    "max_iter": _Param(500, [Interval(Integral, 1, None, closed="left")], "int", """
Maximum number of Newton or proximal iterations; a ``ConvergenceWarning`` is issued when
reached."""),
}
_VERBOSE = _Param(0, ["verbose"], "int", """
Print progress of the fit when positive.""")
# Rows drawn from all chunks of a dask array to estimate a family's "auto" parameters (the
# estimators in memory use at most as many).
_RESOLVE_ROWS = 10_000
# The negative binomial log alpha is sampled by MCMC when its Laplace sd is at most this
# (alpha known within a factor e^2 = 7.4); beyond, its posterior is the prior's on the side of
# the Poisson limit, and a sampler would wander there.
_MAX_SAMPLED_LOG_ALPHA_SD = 2.0
# Unweighted training rows up to this many are kept for the data groups of to_arviz().
_ARVIZ_TRAINING_ROWS = 5_000


def _rows_info(n_rows, total_weight, weighted):
    """What the header of ``summary()`` says of the rows of a fit."""
    return {"rows": int(n_rows), "total_weight": float(total_weight), "weighted": weighted}


def _uses_pass_glm(estimator):
    """``partial_fit`` exists only for the methods that accumulate sufficient statistics."""
    spec = _METHODS.get(estimator.method)
    if spec is None or not spec.streams:
        # available_if passes this message on (hasattr(estimator, "partial_fit") is False)
        raise AttributeError(
            f"partial_fit is only available with method={_STREAMING}, which accumulates "
            f"sufficient statistics; this estimator has method={estimator.method!r}. Use "
            f"set_params(method={_STREAMING}) to fit a stream chunk by chunk, or call fit.")
    return True


def _check_exposure_input(X):
    """``exposure`` has one entry per row of the data: refuse a coreset's weighted subset
    (its rows are not the rows the exposure was given for)."""
    if carries_weights(X):
        raise ValueError(
            "exposure and offset cannot be combined with a coreset's weighted subset: its "
            "rows are not the rows they were given for. Pass them to the coreset step "
            "instead, in skcoreset.pipeline.Pipeline: <coreset step>__exposure=... (or "
            "coreset.set_fit_request(exposure=True) with metadata routing); the coreset then "
            "hands on the rates y / exposure weighted by the exposure, the same Poisson "
            "posterior.")


class _BaseBayesianGLM(BaseEstimator):
    """Shared fit and posterior-predictive machinery; subclasses fix the family."""

    # the parameters of every model, in the order of the method table (checked by
    # ``_glm_estimator``); the models PASS-GLM fits add its options after kl_beta
    def __init__(self, *, method: FitMethod = "laplace", prior_scale: float = 1.0,
                 intercept_prior_scale: float = 10.0, fit_intercept: bool = True,
                 tol: float = 1e-10, max_iter: int = 500, kl_beta: float | None = None,
                 sampler: Sampler = "nuts", n_draws: int = 4000, n_burnin: int | None = None,
                 thin: int | None = None, n_walkers: int | None = None, n_chains: int = 4,
                 n_jobs: int | None = None, random_state: RandomStateLike = None,
                 verbose: int = 0) -> None:
        self.method = method
        self.prior_scale = prior_scale
        self.intercept_prior_scale = intercept_prior_scale
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.kl_beta = kl_beta
        self.sampler = sampler
        self.n_draws = n_draws
        self.n_burnin = n_burnin
        self.thin = thin
        self.n_walkers = n_walkers
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # scipy.sparse X, as CSR (ACCEPT_SPARSE)
        return tags

    def _prior(self, n_features):
        return prior_precision(n_features, prior_scale=self.prior_scale,
                               intercept_prior_scale=self.intercept_prior_scale,
                               fit_intercept=self.fit_intercept)

    def _method(self):
        """The table entry of ``method``, after checking it supports the family and the
        options it reads."""
        spec = _METHODS[self.method]
        family = self._family()
        if spec.supports is not None and not spec.supports(family):
            works = [method for method, other in _METHODS.items()
                     if other.supports is None or other.supports(family)]
            supported = [name for name, cls in FAMILIES.items() if spec.supports(cls())]
            this = family.name if family.name not in supported else repr(family)
            raise ValueError(
                f"method={self.method!r} supports the {', '.join(supported)} models, not "
                f"{this}; use method= one of {works}.")
        if spec.check is not None:
            spec.check(self)
        return spec

    def _method_options(self, spec):
        """Keyword arguments of the inference function specific to the method."""
        return {option.keyword or name: getattr(self, name)
                for name, option in spec.options.items()}

    def _encode_target(self, y, classes=None):
        """Validate y for the family and encode it (classification: set ``classes_``)."""
        return self._family().fit_target(y, classes)[0]

    def _encode_more(self, y):
        """Encode the targets of a later ``partial_fit`` chunk as the first were."""
        return self._family().encode_target(y)

    def _fitted_family(self, X, y_encoded, sample_weight, prior, offset=None):
        """The family with its "auto" parameters estimated from the data; stored."""
        self.family_ = resolve_family(self._family(), X, y_encoded, sample_weight,
                                      prior_prec=prior, fit_intercept=self.fit_intercept,
                                      offset=offset)
        return self.family_

    def _exposure_of(self, X, exposure, offset):
        """The multiplier of the mean of each row of X (count models), or None."""
        return None

    def _store(self, result):
        """Fitted attributes from an :class:`InferenceResult`."""
        self._fitted_method = self.method
        self._fit_info = {**getattr(self, "_fit_info", {}), "converged": result.converged}
        self.posterior_ = result.posterior
        self.n_iter_ = result.n_iter
        if isinstance(result.posterior, SamplePosterior):
            self.posterior_samples_ = result.posterior.samples
        elif hasattr(self, "posterior_samples_"):
            del self.posterior_samples_
        for name in ("log_evidence", "elbo"):  # set only where the method gives one
            if getattr(result, name) is not None:
                setattr(self, name + "_", getattr(result, name))
            elif hasattr(self, name + "_"):
                delattr(self, name + "_")
        for name in MCMC_DIAGNOSTICS:  # method="mcmc" only
            if name in result.extra:
                setattr(self, name + "_", result.extra[name])
            elif hasattr(self, name + "_"):
                delattr(self, name + "_")
        # the chains of the draws, stored step by step: NUTS chains or ensemble walkers
        self._mcmc_n_chains = result.extra.get("n_chains", result.extra.get("n_walkers"))
        if self._mcmc_n_chains is None:
            del self._mcmc_n_chains
        coef, intercept = split_theta(self.posterior_.mean, self.fit_intercept)
        self._set_coef(coef, float(intercept))
        return self

    def _fit(self, X, y, sample_weight, exposure=None, offset=None):
        """Validate, fit the posterior and set the fitted attributes common to both models.

        ``exposure`` and ``offset`` (count models) combine into the multiplier of the mean
        (:func:`~skcoreset._validation.combined_exposure`). For a family that fits counts
        over an exposure as rates weighted by it (:meth:`PoissonFamily.exposure_as_weight`,
        exact for every method) they become those; otherwise (the negative binomial model)
        an offset ``log(exposure)`` in the linear predictor.
        """
        if exposure is not None or offset is not None:
            _check_exposure_input(X)
        X, y, sample_weight = unpack_weighted_subset(X, y, sample_weight)
        if is_dask_collection(X):
            return self._fit_dask(X, y, sample_weight, self._exposure_of(X, exposure, offset))
        # PASS-GLM finds non-finite entries of X in its one pass over the data (from the
        # diagonal of its Gram, PassGLMStatistics.add): no separate pass over X for them
        finds_non_finite = _METHODS[self.method].finds_non_finite
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False,
                             ensure_all_finite=not finds_non_finite,
                             accept_sparse=ACCEPT_SPARSE)
        y_encoded = self._encode_target(y)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        exposure = self._exposure_of(X, exposure, offset)
        self._keep_training_rows(X, y_encoded, sample_weight, exposure)
        self._fit_info = _rows_info(X.shape[0], sample_weight.sum(),
                                    not np.all(sample_weight == 1.0))
        log_constant = 0.0
        options = {}
        if exposure is not None and hasattr(self._family(), "exposure_as_weight"):
            y_encoded, sample_weight, log_constant = self._family().exposure_as_weight(
                y_encoded, sample_weight, exposure)
        elif exposure is not None:
            options["offset"] = np.log(exposure)
        spec = self._method()
        prior = self._prior(X.shape[1])
        result = spec.fit(
            X, y_encoded,
            self._fitted_family(X, y_encoded, sample_weight, prior, options.get("offset")),
            sample_weight=sample_weight, prior_prec=prior, fit_intercept=self.fit_intercept,
            tol=self.tol, max_iter=self.max_iter, verbose=self.verbose,
            **self._method_options(spec), **options)
        for name in ("log_evidence", "elbo"):  # of the counts, not of the weighted rates
            if getattr(result, name) is not None:
                setattr(result, name, getattr(result, name) + log_constant)
        self._start_stream(result)
        self._fitted_on_exposure = exposure is not None
        return self._store(result)

    def _keep_training_rows(self, X, y_encoded, sample_weight, exposure):
        """Keep the training rows (references, no copies) for the data groups of
        :meth:`to_arviz`: only an unweighted fit of at most ``_ARVIZ_TRAINING_ROWS`` rows,
        whose rows are observations (a coreset's weighted rows are not)."""
        keep = X.shape[0] <= _ARVIZ_TRAINING_ROWS and np.all(sample_weight == 1.0)
        self._training_rows = (X, y_encoded, exposure) if keep else None

    def _start_stream(self, result):
        """Keep PASS-GLM's stream (statistics, pilot sample and pilot fit), from which
        ``partial_fit`` continues; None after the other methods."""
        self._pass_stream = (PassGLMStream.of_result(result, self._stream_settings())
                             if _METHODS[self.method].streams else None)

    def _stream_settings(self):
        return (self.pass_degree, self.pass_radius, self.fit_intercept)

    def _fit_dask(self, X, y, sample_weight, exposure=None):
        """Fit rows held in dask arrays where their chunks live: every pass over the rows is
        a task per chunk and a tree of tasks summing the results, and only sums over rows
        (and, for PASS-GLM, its pilot rows) reach this process.

        y and the weights are validated from a one-pass summary (a witness of y's values
        and the extreme weights, :class:`~skcoreset._backend.DaskRows`), with the checks and
        messages of in-memory input; non-finite X (or an invalid exposure) raises in the
        first task that reads it.
        """
        import dask.array as da

        X = da.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got an array with {X.ndim} dimensions.")
        if X.shape[0] < 1 or X.shape[1] < 1:
            raise ValueError(f"Found array with shape {X.shape}; at least one row and one "
                             "feature are required.")
        log_constant = 0.0
        if exposure is not None and not hasattr(self._family(), "exposure_as_weight"):
            raise ValueError(
                f"exposure and offset of {type(self).__name__} are fitted on rows in memory; "
                "with dask arrays they are supported by BayesianPoissonRegression, which "
                "fits counts over an exposure as weighted rates. Compute the arrays first.")
        if exposure is not None:
            y, sample_weight, log_constant = exposure_as_weight_lazily(
                self._family(), X, y, sample_weight, exposure)
        self._training_rows = None
        rows = DaskRows.from_arrays(X, y, sample_weight)
        summary = rows.summary
        check_sample_weight(np.array([summary.min_weight, summary.max_weight]), 2)
        self._fit_info = _rows_info(X.shape[0], summary.total_weight,
                                    summary.min_weight != 1.0 or summary.max_weight != 1.0)
        if summary.witness.dtype.kind in "fc":
            assert_all_finite(summary.witness, input_name="y")
        self._encode_target(summary.witness)  # the target checks; sets classes_
        family = self._family()
        rows = rows.encoded(partial(family.encode_target,
                                    classes=getattr(self, "classes_", None)))
        self.n_features_in_ = X.shape[1]
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        spec = self._method()
        prior = self._prior(X.shape[1])
        if family.unresolved:  # parameters estimated from rows drawn from all chunks
            pilot = rows.subsample(_RESOLVE_ROWS, np.random.RandomState(0))
            family = self._fitted_family(pilot.X, pilot.y, pilot.weights, prior)
        self.family_ = family
        result = spec.fit(rows, None, family, sample_weight=None, prior_prec=prior,
                          fit_intercept=self.fit_intercept, tol=self.tol,
                          max_iter=self.max_iter, verbose=self.verbose,
                          **self._method_options(spec))
        for name in ("log_evidence", "elbo"):  # of the counts, not of the weighted rates
            if getattr(result, name) is not None:
                setattr(result, name, getattr(result, name) + log_constant)
        self._start_stream(result)
        self._fitted_on_exposure = exposure is not None
        return self._store(result)

    def _partial_fit(self, X, y, sample_weight, classes=None):
        """Add a chunk to PASS-GLM's statistics and pilot sample and refresh the posterior.

        The statistics do not depend on the polynomial, so for ``pass_radius="auto"`` it is
        chosen again after every chunk, from the pilot rows of the sample of all rows so
        far (the rows a ``fit`` on all of them would take, its pilot fit started at the
        previous one): the stream ends with the polynomial of all its rows, without
        another pass.
        """
        stream = getattr(self, "_pass_stream", None)
        first_call = stream is None
        if first_call and hasattr(self, "posterior_"):
            raise ValueError(
                f"partial_fit cannot continue a fit made with method="
                f"{self._fitted_method!r}: that posterior has no sufficient statistics to add "
                "chunks to. Call fit with method='pass_glm' (partial_fit then continues from "
                "it), or partial_fit on an unfitted clone (sklearn.base.clone) to start a new "
                "stream.")
        settings = self._stream_settings()
        if not first_call and settings != stream.settings:
            raise ValueError(
                f"(pass_degree, pass_radius, fit_intercept) changed from {stream.settings} "
                f"to {settings} since the stream started; the statistics accumulated so far "
                "use the old values. Restore them, or call fit (or partial_fit on an unfitted "
                "clone) to start again.")
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False, reset=first_call,
                             accept_sparse=ACCEPT_SPARSE)
        y_encoded = (self._encode_target(y, classes=classes) if first_call
                     else self._encode_more(y))
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        prior = self._prior(X.shape[1])
        if first_call:
            options = self._method_options(self._method())
            self.family_ = self._family()
            stream = PassGLMStream.start(self.family_, X.shape[1], degree=options["degree"],
                                         radius=options["radius"],
                                         fit_intercept=self.fit_intercept, settings=settings)
        result, self._pass_stream = stream.add(
            X, y_encoded, sample_weight, self.family_, radius=self.pass_radius,
            prior_prec=prior, tol=self.tol, max_iter=self.max_iter, verbose=self.verbose)
        self._training_rows = None  # a stream's rows are not kept
        before = {} if first_call else self._fit_info
        self._fit_info = _rows_info(
            before.get("rows", 0) + X.shape[0],
            before.get("total_weight", 0.0) + sample_weight.sum(),
            before.get("weighted", False) or not np.all(sample_weight == 1.0))
        return self._store(result)

    def _check_predict_input(self, X):
        check_is_fitted(self)
        reject_weighted_subset(X)
        return validate_data(self, X, dtype=np.float64, reset=False,
                             accept_sparse=ACCEPT_SPARSE)

    def _predictive_moments(self, X, exposure=None):
        """Posterior mean and variance of ``exposure * E[y | x]`` at each row of X (the
        exposure of counts; None for 1).

        Averages over the draws for a sample posterior (MCMC); otherwise integrates over the
        Gaussian posterior of the linear predictor (Gauss-Hermite or closed form).
        """
        X = self._check_predict_input(X)
        if exposure is not None:
            exposure = check_exposure(exposure, X.shape[0])
        family = self.family_
        if isinstance(self.posterior_, SamplePosterior):
            return sample_predictive_moments(X, self.posterior_.samples, family,
                                             self.fit_intercept, scale=exposure)
        m, v = latent_moments(X, self.posterior_.mean, self.posterior_.cov_cholesky,
                              self.fit_intercept)
        mean, var = family.expected_mean(m, v)
        return (mean, var) if exposure is None else (exposure * mean, exposure**2 * var)

    def _linear_predictor(self, X):
        X = self._check_predict_input(X)
        return X @ np.ravel(self.coef_) + np.ravel(self.intercept_)[0]

    def _decode_draws(self, y):
        """Targets drawn by the family, in the estimator's encoding of y."""
        return y

    def credible_interval(self, level: float = 0.95) -> tuple[FloatArray, FloatArray]:
        """Equal-tailed marginal credible intervals of ``[coef..., intercept]``.

        For a Gaussian posterior (``method="laplace"``, ``"kl_proximal"``, ``"pass_glm"``)
        ``mean -/+ z sd`` with ``z`` the normal quantile at ``(1 + level) / 2``; for
        ``method="mcmc"`` the ``(1 - level) / 2`` and ``(1 + level) / 2`` empirical quantiles
        of the posterior draws, which keep any skewness.

        Parameters
        ----------
        level : float, default=0.95
            Posterior probability inside each interval, strictly between 0 and 1.

        Returns
        -------
        lower, upper : ndarray of shape (n_params,)
            Bounds in the order of ``posterior_.mean``: the coefficients, then the intercept
            when ``fit_intercept=True``.
        """
        check_is_fitted(self)
        return self.posterior_.credible_interval(level)

    def summary(self, level: float = 0.95) -> Any:
        """Table of the posterior: one row per parameter.

        Rows are named after ``feature_names_in_`` when the estimator was fitted on a
        DataFrame with string column names (else ``x0``, ``x1``, ...), with the intercept last
        as ``"intercept"`` (when ``fit_intercept=True``). Columns:

        - ``mean``, ``sd``: posterior mean and standard deviation;
        - ``lower``, ``upper``: the equal-tailed credible interval at ``level``
          (:meth:`credible_interval`);
        - for ``method="mcmc"`` only, the diagnostics of the run: ``ess``
          (``effective_sample_size_``), ``r_hat`` (``r_hat_``) and ``acceptance``
          (``acceptance_fraction_``, one value for the whole run, repeated on every row);
          for ``sampler="nuts"`` also ``divergences`` (``n_divergences_``) and
          ``tree_depth`` (the mean of ``sample_stats_["tree_depth"]``), repeated too.

        Parameters
        ----------
        level : float, default=0.95
            Posterior probability inside the credible intervals, strictly between 0 and 1.

        Returns
        -------
        table : pandas.DataFrame or dict
            A DataFrame indexed by parameter name (``table.attrs["level"]`` holds ``level``)
            when pandas is installed; otherwise a dict of 1-D arrays with the same columns
            in the same order, after a ``"parameter"`` entry holding the names.
        """
        check_is_fitted(self)
        return summary_table(self, level)

    def sample_y(self, X: MatrixLike, n_draws: int = 1000,
                 random_state: RandomStateLike = None) -> Prediction:
        """Draw targets from the posterior predictive distribution at each row of X.

        Each draw takes parameters ``theta`` from ``posterior_`` (Gaussian draws, or for
        ``method="mcmc"`` draws resampled from the chain) and then a target at every row from
        the likelihood given ``theta`` (``family_.sample``), so the draws include both the
        posterior uncertainty and the noise of y. Quantiles over the draws give posterior
        predictive intervals.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to draw targets for.
        n_draws : int, default=1000
            Number of draws.
        random_state : int, RandomState instance or None, default=None
            Seed of the parameter and target draws.

        Returns
        -------
        y_draws : ndarray of shape (n_draws, n_samples)
            One row per draw (note: the transpose of the layout of
            :meth:`sklearn.gaussian_process.GaussianProcessRegressor.sample_y`). Class labels
            from ``classes_`` for the classifier, counts (as floats) for the count models.
            For a dask X, a lazy dask array (chunked along the rows of X, each block drawn
            from its own random stream fixed by ``random_state``).
        """
        return self._sample_y(X, n_draws, random_state)

    def _sample_y(self, X, n_draws, random_state, exposure=None):
        """:meth:`sample_y` of counts over ``exposure`` (one multiplier of the mean per
        row of X, or None)."""
        dask_input = is_dask_collection(X)
        if not dask_input:
            X = self._check_predict_input(X)
        if not is_number(n_draws, Integral) or n_draws < 1:
            raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}.")
        rng = check_random_state(random_state)
        if dask_input:
            rows = () if exposure is None else (("exposure", exposure),)
            return sample_y_lazily(self, X, n_draws, rng, rows)
        if exposure is not None:
            exposure = check_exposure(exposure, X.shape[0])
        return self._draw_targets(X, self.posterior_.sample(n_draws, random_state=rng), rng,
                                  exposure)

    def _draw_targets(self, X, theta, rng, exposure=None):
        """Targets drawn at the rows of X for each parameter draw (rows of ``theta``), over
        ``exposure`` (count models), as an array of shape (draws, rows)."""
        eta = linear_predictor(X, theta, self.fit_intercept)
        draws = draw_targets(self.family_, eta, exposure, rng)
        return self._decode_draws(draws.T)

    def to_arviz(self, X: MatrixLike | None = None, y: VectorLike | None = None, *,
                 n_draws: int = 1000, n_chains: int = 4,
                 random_state: RandomStateLike = None) -> Any:
        """The fit as ArviZ data, for ArviZ's diagnostics, model comparison and plots.

        Needs ArviZ (``pip install arviz``, or the ``arviz`` extra of skcoreset). Groups:

        - ``posterior``: ``coef`` (dimension ``feature``, named as in :meth:`summary`) and
          ``intercept`` (when fitted), by chain. A Gaussian posterior (``method="laplace"``,
          ``"kl_proximal"``, ``"pass_glm"``) gives ``n_chains`` independent chains of
          ``n_draws`` independent draws, so ArviZ's R-hat is defined (and about 1). With
          ``method="mcmc"``, the run's own draws: one chain per NUTS chain, or per emcee
          walker (its latest ``len(posterior_samples_) // n_walkers`` draws; the walkers of
          an ensemble are not independent chains, so R-hat across them checks mixing rather
          than convergence).
        - ``sample_stats`` (``sampler="nuts"``): ``sample_stats_`` (divergences, tree depth,
          acceptance, leapfrog steps, energy, log posterior, step size).
        - ``log_likelihood``, ``posterior_predictive``, ``observed_data``: variable ``y``
          (dimension ``obs_id``) for the rows ``X``, ``y`` (by default the training rows):
          the log-likelihood of each row under each posterior draw (for ``az.loo`` and
          ``az.waic``), one predictive draw of each row per posterior draw (for
          ``az.plot_ppc``), and the targets. Binary targets are exported as 0/1 (1 for
          ``classes_[1]``). The training rows are kept by an unweighted in-memory fit of at
          most 5,000 rows; otherwise (a coreset's weighted rows, a dask array, a stream,
          more rows) these groups need ``X`` and ``y``, and are left out with a warning.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Rows of the data groups; with ``y``. ``None``: the training rows, when kept.
        y : array-like of shape (n_samples,), default=None
            Their targets.
        n_draws : int, default=1000
            Draws per chain of a Gaussian posterior; unused for ``method="mcmc"``, which
            exports its own draws.
        n_chains : int, default=4
            Chains of a Gaussian posterior; unused for ``method="mcmc"``.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws of a Gaussian posterior and of the predictive draws.

        Returns
        -------
        data : arviz.InferenceData
            With ArviZ 1.0 and later, the ``xarray.DataTree`` its ``from_dict`` returns.

        Raises
        ------
        ImportError
            When ArviZ is not installed.
        """
        return self._to_arviz(X, y, None, n_draws, n_chains, random_state)

    def _to_arviz(self, X, y, exposure, n_draws, n_chains, random_state):
        check_is_fitted(self)
        for name, value in (("n_draws", n_draws), ("n_chains", n_chains)):
            if not is_number(value, Integral) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        return inference_data(self, self._arviz_rows(X, y, exposure), n_draws, n_chains,
                              random_state)

    def _arviz_rows(self, X, y, exposure):
        """``(X, y_encoded, exposure)`` of the data groups of :meth:`to_arviz`, or None."""
        if X is None and y is None:
            rows = getattr(self, "_training_rows", None)
            if rows is None:
                warnings.warn(
                    f"{type(self).__name__}.to_arviz() has no log_likelihood, "
                    "posterior_predictive or observed_data group: the training rows are "
                    f"kept only by an unweighted in-memory fit of at most "
                    f"{_ARVIZ_TRAINING_ROWS:,} rows, and this fit was weighted (e.g. on a "
                    "coreset), larger, streamed or on dask arrays. Pass the rows to "
                    "evaluate, e.g. to_arviz(X_test, y_test).", UserWarning, stacklevel=3)
            return rows
        if X is None or y is None:
            raise ValueError("to_arviz needs both X and y for the rows of its "
                             "log_likelihood, posterior_predictive and observed_data groups.")
        X = self._check_predict_input(X)
        y = self._family().encode_target(y, getattr(self, "classes_", None))
        if len(y) != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)} entries.")
        return X, y, None if exposure is None else check_exposure(exposure, X.shape[0])

    def _observed(self, y):
        """Encoded targets as ArviZ sees them (the binary models: 0/1)."""
        return y


def _method_param(methods):
    """The ``method`` parameter of the estimators fitted by ``methods`` (name -> _Method):
    its docs list those, its constraint every method (another method raises a ValueError
    naming the supported ones, ``_BaseBayesianGLM._method``)."""
    items = "\n".join(spec.doc.strip("\n") for spec in methods.values())
    dask = ("Every method also fits dask arrays where their chunks live: each Newton or "
            "proximal step (PASS-GLM: its one pass, NUTS: each gradient) is a map-reduce over "
            "the chunks, and the posterior is that of the same rows in memory. MCMC on dask "
            'arrays runs NUTS only (``sampler="ensemble"`` is refused), at one round trip to '
            "the cluster per gradient: see the user guide's scaling page for when that pays.")
    return _Param("laplace", [StrOptions(set(_METHODS))],
                  "{" + ", ".join(f'"{name}"' for name in methods) + "}",
                  f"How the posterior is fitted.\n\n{items}\n\n{dask}")


def _glm_params(family):
    """The parameters of the estimators of ``family`` (an instance), in signature order:
    ``method``, the common ones, the options of the methods that support the family in the
    order of :data:`_METHODS`, ``verbose``."""
    methods = {name: spec for name, spec in _METHODS.items()
               if spec.supports is None or spec.supports(family)}
    options = {name: param for spec in methods.values() for name, param in spec.options.items()}
    return {"method": _method_param(methods), **_COMMON_PARAMS, **options, "verbose": _VERBOSE}


def _fill(text, indent, width=92):
    """Paragraphs and ``- `` list items of ``text`` refilled at ``indent``."""
    blocks = []
    for block in text.strip("\n").split("\n\n"):
        items = re.split(r"\n(?=- )", block)
        blocks.append("\n".join(
            textwrap.fill(" ".join(item.split()), width=width, initial_indent=indent,
                          subsequent_indent=indent + ("  " if item.startswith("- ") else ""),
                          break_long_words=False, break_on_hyphens=False)
            for item in items))
    return "\n\n".join(blocks)


def _param_doc(name, param):
    """The numpydoc entry of a parameter, indented for a class docstring."""
    default = f'"{param.default}"' if isinstance(param.default, str) else repr(param.default)
    return f"    {name} : {param.type}, default={default}\n{_fill(param.doc, ' ' * 8)}\n"


def _check_signature(cls, params):
    """Raise a TypeError unless ``cls.__init__`` takes exactly ``params`` (name -> _Param) as
    keyword-only arguments with their defaults, in their order: the explicit, typed
    signature that type checkers read must be the table's."""
    written = [param for name, param in inspect.signature(cls.__init__).parameters.items()
               if name != "self"]
    names = [param.name for param in written]
    expected = list(params)
    if names != expected:
        missing = [name for name in expected if name not in names]
        extra = [name for name in names if name not in expected]
        difference = "; ".join(
            [f"missing {missing}"] * bool(missing) + [f"unexpected {extra}"] * bool(extra)
            or [f"order {names}, expected {expected}"])
        raise TypeError(f"{cls.__name__}.__init__ does not take the parameters of the method "
                        f"table: {difference}.")
    for param in written:
        default = params[param.name].default
        if param.kind is not inspect.Parameter.KEYWORD_ONLY:
            raise TypeError(f"{cls.__name__}.__init__: parameter {param.name!r} must be "
                            "keyword-only.")
        if type(param.default) is not type(default) or param.default != default:
            raise TypeError(f"{cls.__name__}.__init__: parameter {param.name!r} has default "
                            f"{param.default!r}, the method table {default!r}.")


def _glm_estimator(family, attrs_doc, **family_params):
    """Class decorator of an estimator of ``family`` (an instance): its
    ``_parameter_constraints`` and the ``{common_params}`` of its docstring from the method
    table, after ``family_params`` (name -> _Param, documented in the class docstring);
    ``{common_attrs}`` from ``attrs_doc``. The class writes its ``__init__`` out, typed, for
    type checkers and IDEs; this checks at import that it takes the table's parameters
    (names, order, defaults), so that a new method's option cannot be left out of it."""
    def decorate(cls):
        params = {**family_params, **_glm_params(family)}
        _check_signature(cls, params)
        cls._parameter_constraints = {name: param.constraints
                                      for name, param in params.items()}
        documented = {name: param for name, param in params.items() if name not in family_params}
        common = "\n".join(_param_doc(name, param) for name, param in documented.items())
        return fill_doc(common_params=common, common_attrs=attrs_doc)(cls)
    return decorate


_COMMON_ATTRS_DOC = """
    posterior_ : GaussianPosterior or SamplePosterior
        Posterior over ``theta = [coef..., intercept]`` (intercept last when fitted), with
        ``mean``, ``cov``, ``sample(n, random_state)``, ``logpdf`` and ``kl`` (a
        ``SamplePosterior`` of the draws for ``method="mcmc"``).

    family_ : Family
        The likelihood family of the fit (:mod:`skcoreset.families`).

    n_iter_ : int
        Number of iterations run by the fitting method.

    log_evidence_ : float
        Estimate of the log marginal likelihood ``log p(y | X)`` (including the weights):
        the Laplace estimate, or for ``method="pass_glm"`` the evidence of the polynomial
        surrogate. Not set by ``method="kl_proximal"``, which gives ``elbo_`` instead.

    elbo_ : float
        Evidence lower bound of the fitted Gaussian ``q`` (``method="kl_proximal"`` only).

    posterior_samples_ : ndarray of shape (n_draws, n_params)
        Posterior draws of ``[coef..., intercept]`` (``method="mcmc"`` only); ``posterior_``
        is then a ``SamplePosterior`` whose ``mean`` and ``cov`` are their moments.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has feature names that are all strings.

    acceptance_fraction_ : float
        ``method="mcmc"`` only. NUTS: the mean acceptance statistic of the iterations after
        the warm-up (the step size is adapted to make it about 0.8). Ensemble: the mean
        acceptance fraction of the walkers' production steps, healthy between about 0.2
        and 0.8.

    effective_sample_size_ : ndarray of shape (n_params,)
        Effective sample size of each parameter's draws (``method="mcmc"`` only). NUTS: the
        bulk effective sample size over the chains (Vehtari et al., 2021; ArviZ's
        ``ess(method="bulk")``), at least ``n_draws`` unless the run warned. Ensemble:
        ``n_walkers * n_steps / autocorr_time_`` over the production steps, at most the
        number of draws kept. The Monte Carlo standard error of a posterior mean is about
        ``sd / sqrt(effective_sample_size_)``.

    r_hat_ : ndarray of shape (n_params,)
        R-hat of each parameter (``method="mcmc"`` only): about 1 when every half-chain
        samples the same distribution. NUTS: the rank-normalized split-R-hat over the
        chains (Vehtari et al., 2021; ArviZ's ``rhat``), at most 1.01 unless the run warned.
        Ensemble: the classic split-R-hat over the walkers (Gelman et al., 2013); each
        walker is a short chain, so values up to about 1.02 are usual at the default run
        length.

    n_divergences_ : int
        Number of divergent NUTS transitions after the warm-up (``sampler="nuts"`` only);
        any warns, since the draws may then miss part of the posterior.

    sample_stats_ : dict of ndarray of shape (n_chains, n_draws_per_chain)
        Per-draw statistics of the NUTS chains (``sampler="nuts"`` only), under ArviZ's
        names (the ``sample_stats`` group of :meth:`to_arviz`): ``lp`` (log posterior, up to
        a constant), ``energy`` (Hamiltonian), ``acceptance_rate``, ``n_steps`` (leapfrog
        steps), ``tree_depth`` (Stan's count of trajectory doublings), ``diverging`` and
        ``step_size``.

    autocorr_time_ : ndarray of shape (n_params,)
        Integrated autocorrelation time of each parameter, in steps of the unthinned
        production chain (``sampler="ensemble"`` only): emcee's estimate, the walkers'
        autocorrelation functions averaged and summed up to Sokal's automatic window.
"""


_CLASSIFIER_ATTRS_DOC = """
    classes_ : ndarray of shape (2,)
        The two class labels; ``classes_[1]`` is the positive class.

    coef_ : ndarray of shape (1, n_features)
        Posterior mean of the coefficients.

    intercept_ : ndarray of shape (1,)
        Posterior mean of the intercept (0 when ``fit_intercept=False``).
""" + _COMMON_ATTRS_DOC


class _BaseBinaryClassifier(ClassifierMixin, _BaseBayesianGLM):
    """The binary classifiers: two class labels, probabilities integrated over the
    posterior; subclasses fix the family (its link)."""

    def __init__(self, *, method: FitMethod = "laplace", prior_scale: float = 1.0,
                 intercept_prior_scale: float = 10.0, fit_intercept: bool = True,
                 tol: float = 1e-10, max_iter: int = 500, kl_beta: float | None = None,
                 pass_degree: int = 2, pass_radius: float | Literal["auto"] = "auto",
                 sampler: Sampler = "nuts", n_draws: int = 4000, n_burnin: int | None = None,
                 thin: int | None = None, n_walkers: int | None = None, n_chains: int = 4,
                 n_jobs: int | None = None, random_state: RandomStateLike = None,
                 verbose: int = 0) -> None:
        self.pass_degree = pass_degree
        self.pass_radius = pass_radius
        super().__init__(method=method, prior_scale=prior_scale,
                         intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, tol=tol, max_iter=max_iter,
                         kl_beta=kl_beta, sampler=sampler, n_draws=n_draws,
                         n_burnin=n_burnin, thin=thin, n_walkers=n_walkers,
                         n_chains=n_chains, n_jobs=n_jobs, random_state=random_state,
                         verbose=verbose)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _encode_target(self, y, classes=None):
        """Set ``classes_`` (from ``classes`` when given) and encode y as ±1."""
        y_encoded, self.classes_ = self._family().fit_target(y, classes, hint=(
            " For multi-class problems use "
            f"skcoreset.multiclass.BayesianOneVsRestClassifier({type(self).__name__}()), "
            "which keeps predict_proba(X, return_std=True)."))
        return y_encoded

    def _encode_more(self, y):
        """Encode labels of a later ``partial_fit`` chunk with the known ``classes_``."""
        return self._family().encode_target(y, self.classes_)

    def _decode_draws(self, y):
        """±1 draws as class labels."""
        return self.classes_[(y > 0).astype(int)]

    def _observed(self, y):
        """±1 targets as 0/1 (1 for ``classes_[1]``), for ArviZ."""
        return (np.asarray(y) > 0).astype(int)

    def _set_coef(self, coef, intercept):
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([intercept])

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: VectorLike, sample_weight: VectorLike | None = None) -> Self:
        """Fit the posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Binary target labels (any two distinct values).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative multipliers of each point's log-likelihood; a weight of 2 counts the
            row twice. Not normalised.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y, sample_weight)

    @available_if(_uses_pass_glm)
    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: MatrixLike, y: VectorLike, classes: ArrayLike | None = None,
                    sample_weight: VectorLike | None = None) -> Self:
        """Add a chunk of a stream to PASS-GLM's sufficient statistics (``method="pass_glm"``).

        The statistics are sums over rows, so fitting chunk by chunk gives the same posterior
        as one :meth:`fit` on all of them. The posterior is refreshed after every chunk.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A chunk of training data.
        y : array-like of shape (n_samples,)
            Its labels.
        classes : array-like of shape (2,), default=None
            Both class labels. Needed on the first call unless that chunk contains both;
            ignored afterwards.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative log-likelihood multipliers of the chunk's rows.

        Returns
        -------
        self : object
            The estimator with the posterior of all chunks seen so far.
        """
        return self._partial_fit(X, y, sample_weight, classes=classes)

    def decision_function(self, X: MatrixLike) -> Prediction:
        """Linear predictor at the posterior mean, ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            Positive values favour ``classes_[1]``. A lazy dask array for a dask X.
        """
        if is_dask_collection(X):
            return predict_lazily(self, "decision_function", X)
        return self._linear_predictor(X)

    def predict_proba(self, X: MatrixLike, return_std: bool = False) -> Prediction:
        """Class probabilities integrated over the posterior.

        ``P(y = classes_[1] | x) = E[F(eta)]`` over the posterior of the linear predictor
        ``eta``, for the inverse link ``F`` (the sigmoid of the logistic model, the normal
        distribution function ``Phi`` of the probit model): over its Gaussian
        ``N(m(x), v(x))`` by quadrature (in closed form for the probit model,
        ``Phi(m / sqrt(1 + v))``), or for ``method="mcmc"`` by averaging over the posterior
        draws.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.
        return_std : bool, default=False
            Also return the posterior standard deviation of ``P(y = classes_[1] | x)``.

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_``.
        std : ndarray of shape (n_samples,)
            Posterior standard deviation of ``P(y = classes_[1] | x)`` (the same as that of
            ``P(y = classes_[0] | x)``). Only returned when ``return_std=True``.

        For a dask X both are lazy dask arrays, computed block by block where the rows are
        (with ``return_std=True``, by the same tasks).
        """
        if is_dask_collection(X):
            if not return_std:
                return predict_lazily(self, "predict_proba", X, columns=2)
            out = predict_lazily(self, "predict_proba", X, columns=3, return_std=True)
            return out[:, :2], out[:, 2]
        p, var = self._predictive_moments(X)
        proba = np.column_stack([1.0 - p, p])
        if return_std:
            return proba, np.sqrt(var)
        return proba

    def predict_log_proba(self, X: MatrixLike) -> Prediction:
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, 2)
            Log-probabilities of the classes in the order of ``classes_``.
        """
        if is_dask_collection(X):
            return predict_lazily(self, "predict_log_proba", X, columns=2)
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X: MatrixLike) -> Prediction:
        """Most probable class under the posterior predictive.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            A lazy dask array for a dask X.
        """
        check_is_fitted(self)
        if is_dask_collection(X):
            return predict_lazily(self, "predict", X, dtype=self.classes_.dtype)
        if isinstance(self.posterior_, SamplePosterior):
            return self.classes_[(self.predict_proba(X)[:, 1] > 0.5).astype(int)]
        # a symmetric Gaussian latent and a symmetric F: E[F(eta)] > 1/2 exactly when its
        # mean is > 0
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def score(self, X: MatrixLike, y: VectorLike,
              sample_weight: VectorLike | None = None) -> float:
        """Mean accuracy of :meth:`predict` on X against y (weighted by ``sample_weight``).

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            Test data.
        y : array-like or dask array of shape (n_samples,)
            True labels.
        sample_weight : array-like or dask array of shape (n_samples,), default=None
            Weights of the rows in the accuracy.

        Returns
        -------
        score : float
            For dask arrays, computed by a pass over their blocks where they live.
        """
        if is_dask_collection(X):
            return accuracy(self, X, y, sample_weight)
        return super().score(X, y, sample_weight=sample_weight)


@_glm_estimator(LogisticFamily(), _CLASSIFIER_ATTRS_DOC)
class BayesianLogisticRegression(_BaseBinaryClassifier):
    """Bayesian binary logistic regression with posterior uncertainty.

    Fits a Gaussian posterior over the coefficients and intercept of
    ``P(y = classes_[1] | x) = sigmoid(x . coef + intercept)`` under a Gaussian prior, with
    each point's log-likelihood multiplied by its ``sample_weight``. Predictions integrate the
    sigmoid over the posterior of the linear predictor.

    Parameters
    ----------
    {common_params}
    Attributes
    ----------
    {common_attrs}
    See Also
    --------
    BayesianProbitRegression : The same classifier with the probit link.
    BayesianPoissonRegression : The count-regression counterpart.
    sklearn.linear_model.LogisticRegression : Its MAP estimate with ``C=prior_scale**2``.

    Notes
    -----
    Multi-class problems are not supported directly; wrap the estimator in
    :class:`skcoreset.multiclass.BayesianOneVsRestClassifier`, which keeps
    ``predict_proba(X, return_std=True)``.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import scale
    >>> from skcoreset import BayesianLogisticRegression
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = BayesianLogisticRegression().fit(scale(X), y)
    >>> proba, std = clf.predict_proba(scale(X)[:2], return_std=True)
    >>> proba.shape, std.shape
    ((2, 2), (2,))
    """

    def _family(self):
        return LogisticFamily()


@_glm_estimator(ProbitFamily(), _CLASSIFIER_ATTRS_DOC)
class BayesianProbitRegression(_BaseBinaryClassifier):
    """Bayesian binary probit regression with posterior uncertainty.

    Fits a Gaussian posterior over the coefficients and intercept of
    ``P(y = classes_[1] | x) = Phi(x . coef + intercept)``, ``Phi`` the standard normal
    distribution function, under a Gaussian prior, with each point's log-likelihood
    multiplied by its ``sample_weight`` (:class:`~skcoreset.families.ProbitFamily`).
    Predictions integrate ``Phi`` over the posterior of the linear predictor, in closed form
    for a Gaussian posterior: ``Phi(m / sqrt(1 + v))``.

    The probit log-likelihood ``log Phi(y eta)`` falls off quadratically for badly
    misclassified rows where the logistic one falls off linearly: the model suits binary
    outcomes read as a thresholded Gaussian latent variable, and is less robust than the
    logistic model to mislabelled rows. Its coefficients are about ``1 / 1.7`` of the
    logistic model's on the same data. Coreset constructors take the same likelihood as
    ``model="probit"``.

    Parameters
    ----------
    {common_params}
    Attributes
    ----------
    {common_attrs}
    See Also
    --------
    BayesianLogisticRegression : The same classifier with the logit link.
    statsmodels.discrete.discrete_model.Probit : Its maximum-likelihood counterpart.

    Notes
    -----
    ``method="pass_glm"`` fits the probit model at ``pass_degree=2`` only: a polynomial of
    ``log Phi(y s)`` has odd terms of every degree, whose statistics would depend on the
    labels (the logistic model's vanish by symmetry). Multi-class problems: wrap the
    estimator in :class:`skcoreset.multiclass.BayesianOneVsRestClassifier`.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import scale
    >>> from skcoreset import BayesianProbitRegression
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = BayesianProbitRegression().fit(scale(X), y)
    >>> proba, std = clf.predict_proba(scale(X)[:2], return_std=True)
    >>> proba.shape, std.shape
    ((2, 2), (2,))
    """

    def _family(self):
        return ProbitFamily()


_EXPOSURE_DOC = """exposure : float or array-like of shape (n_samples,), default=None
            Positive exposure of each count (time, population, area...): its mean is
            ``exposure * mu(x)``. For the log link the same as ``offset=log(exposure)``.
        offset : float or array-like of shape (n_samples,), default=None
            A known term added to each row's linear predictor (log link only; for another
            link pass ``exposure``). With ``exposure`` too, they add up:
            ``offset + log(exposure)``, as in statsmodels' GLM."""


_Documented = TypeVar("_Documented", bound=Callable[..., Any])


def _exposure_doc(method: _Documented) -> _Documented:
    method.__doc__ = (method.__doc__ or "").replace("{exposure}", _EXPOSURE_DOC)
    return method


class _BaseCountRegression(RegressorMixin, _BaseBayesianGLM):
    """The count regressions: non-negative targets, predictions of new counts, and counts
    observed over an exposure (``exposure=``, ``offset=``) in fit, predict, score,
    sample_y and to_arviz."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        return tags

    def _set_coef(self, coef, intercept):
        self.coef_ = coef
        self.intercept_ = intercept

    def _exposure_of(self, X, exposure, offset):
        """The multiplier of the mean of each row of X from ``exposure`` and ``offset``
        (:func:`~skcoreset._validation.combined_exposure`), or None; lazily for dask
        arrays (validated in the blocks that read it)."""
        if exposure is None and offset is None:
            return None
        link = self._family().link.name
        if not any(is_dask_collection(a) for a in (X, exposure, offset)):
            return combined_exposure(exposure, offset, _num_samples(X), link)
        if offset is None:
            return exposure
        combined_exposure(None, 0.0, 1, link)  # the link check
        import dask.array as da

        total = da.exp(da.asarray(offset))
        return total if exposure is None else total * exposure

    @_exposure_doc
    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: VectorLike, sample_weight: VectorLike | None = None,
            exposure: VectorLike | None = None, offset: VectorLike | None = None) -> Self:
        """Fit the posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Non-negative targets: counts, or rates such as ``counts / exposure`` (with
            ``sample_weight=exposure``, as for scikit-learn's ``PoissonRegressor``). For
            non-integer y the log-likelihood, normalised with ``log Gamma``, is a
            quasi-likelihood with the model's dependence on the coefficients.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative multipliers of each point's log-likelihood; a weight of 2 counts the
            row twice. Not normalised.
        {exposure}
            The Poisson model fits counts over an exposure as the rates ``y / exposure``
            with weights ``sample_weight * exposure``, the same posterior for every link
            and method (:meth:`PoissonFamily.exposure_as_weight
            <skcoreset.families.PoissonFamily.exposure_as_weight>`), also for dask arrays;
            the negative binomial model as an offset in the linear predictor (rows in
            memory). ``log_evidence_`` and ``elbo_`` are those of the counts; ``coef_`` and
            :meth:`predict` describe the mean per unit of exposure. Not supported after a
            coreset step: pass them to the coreset step instead, which fits the rates (see
            :meth:`skcoreset.UniformCoreset.fit`). Routed like ``sample_weight`` with
            metadata routing (``set_fit_request(exposure=True)``).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y, sample_weight, exposure=exposure, offset=offset)

    @_exposure_doc
    def predict(self, X: MatrixLike, return_std: bool = False,
                exposure: VectorLike | None = None,
                offset: VectorLike | None = None) -> Prediction:
        """Posterior predictive mean count, and optionally its standard deviation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.
        return_std : bool, default=False
            Also return the standard deviation of the posterior predictive distribution of
            the count: the count noise plus the posterior uncertainty of the mean ``mu``,
            ``sqrt(E[mu] + Var[mu])`` for the Poisson model and
            ``sqrt(E[mu] + Var[mu] + alpha_ (Var[mu] + E[mu]^2))`` for the negative binomial.
        {exposure}
            Of the counts to predict. ``None``: the mean per unit of exposure.

        Returns
        -------
        mean : ndarray of shape (n_samples,)
            ``E[y | x, data] = exposure * E[mu(eta)]`` over the posterior of the linear
            predictor.
        std : ndarray of shape (n_samples,)
            Only returned when ``return_std=True``.
        """
        return self._predict_counts(X, return_std, self._exposure_of(X, exposure, offset))

    @_exposure_doc
    def score(self, X: MatrixLike, y: VectorLike, sample_weight: VectorLike | None = None,
              exposure: VectorLike | None = None, offset: VectorLike | None = None) -> float:
        """Coefficient of determination R^2 of :meth:`predict` (with ``exposure`` and
        ``offset``) against y.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            Test data.
        y : array-like or dask array of shape (n_samples,)
            Observed targets: counts over ``exposure``, or rates when neither ``exposure``
            nor ``offset`` is given.
        sample_weight : array-like or dask array of shape (n_samples,), default=None
            Weights of the rows in R^2.
        {exposure}
            Of the counts y, passed to :meth:`predict`.

        Returns
        -------
        score : float
            For dask arrays, computed by passes over their blocks where they live.
        """
        if (exposure is None and offset is None
                and getattr(self, "_fitted_on_exposure", False)):
            warnings.warn(
                f"{type(self).__name__} was fitted with exposure or offset but is scored "
                "without: its predictions are means per unit of exposure, so R^2 against "
                "counts y is wrong unless y are rates. Pass exposure (or offset) to score; "
                "in GridSearchCV or cross_validate, enable metadata routing so that it "
                "reaches score too: sklearn.set_config(enable_metadata_routing=True) and "
                "estimator.set_fit_request(exposure=True).set_score_request(exposure=True).",
                UserWarning, stacklevel=2)
        return self._r2_score(X, y, sample_weight, self._exposure_of(X, exposure, offset))

    @_exposure_doc
    def sample_y(self, X: MatrixLike, n_draws: int = 1000, random_state: RandomStateLike = None,
                 exposure: VectorLike | None = None,
                 offset: VectorLike | None = None) -> Prediction:
        """Draw from the posterior predictive distribution of the counts at each row of X.

        Each draw takes parameters from ``posterior_`` (Gaussian draws, or for
        ``method="mcmc"`` draws resampled from the chain), then a count at every row from
        the likelihood (the negative binomial one with ``alpha_``), so the draws include
        both the posterior uncertainty and the count noise. Quantiles over the draws give
        posterior predictive intervals.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows at which to draw counts.
        n_draws : int, default=1000
            Number of draws.
        random_state : int, RandomState instance or None, default=None
            Seed of the parameter and count draws.
        {exposure}
            Of the counts drawn. ``None``: counts over one unit of exposure.

        Returns
        -------
        y_draws : ndarray of shape (n_draws, n_samples)
            Counts, as floats; one row per draw. For a dask X, a lazy dask array (chunked
            along the rows of X, each block drawn from its own random stream fixed by
            ``random_state``).
        """
        return self._sample_y(X, n_draws, random_state, self._exposure_of(X, exposure, offset))

    @_exposure_doc
    def to_arviz(self, X: MatrixLike | None = None, y: VectorLike | None = None, *,
                 exposure: VectorLike | None = None, offset: VectorLike | None = None,
                 n_draws: int = 1000, n_chains: int = 4,
                 random_state: RandomStateLike = None) -> Any:
        """The fit as ArviZ data (see
        :meth:`BayesianLogisticRegression.to_arviz
        <skcoreset.BayesianLogisticRegression.to_arviz>` for the groups).

        The ``log_likelihood`` of the counts y is that of counts over ``exposure`` (for the
        training rows, the exposure and offset of the fit), and the ``posterior_predictive``
        draws are counts over it. For the negative binomial model with ``alpha="auto"`` the
        ``posterior`` also holds ``alpha``, drawn from its Laplace approximation in
        ``log alpha`` (independent of the coefficients: the model's information matrix has
        no cross terms between them), for its summary and plots; the posterior of the
        coefficients and both data groups are given ``alpha_``, as the predictions are.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Rows of the data groups, with ``y``; ``None``: the training rows, when kept.
        y : array-like of shape (n_samples,), default=None
            Their counts.
        {exposure}
            Of the counts y of the rows passed.
        n_draws : int, default=1000
            Draws per chain of a Gaussian posterior; unused for ``method="mcmc"``.
        n_chains : int, default=4
            Chains of a Gaussian posterior; unused for ``method="mcmc"``.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws.

        Returns
        -------
        data : arviz.InferenceData
            With ArviZ 1.0 and later, the ``xarray.DataTree`` its ``from_dict`` returns.
        """
        if X is None and (exposure is not None or offset is not None):
            raise ValueError("exposure and offset of to_arviz describe the rows X, y: "
                             "pass X and y with them.")
        exposure = None if X is None else self._exposure_of(X, exposure, offset)
        return self._to_arviz(X, y, exposure, n_draws, n_chains, random_state)

    def _r2_score(self, X, y, sample_weight, exposure=None):
        rows = () if exposure is None else (("exposure", exposure),)
        if is_dask_collection(X):
            return r2(self, X, y, sample_weight, rows=rows)
        from sklearn.metrics import r2_score

        return r2_score(y, self.predict(X, **dict(rows)), sample_weight=sample_weight)

    def _predict_counts(self, X, return_std, exposure=None):
        """Predictive mean (and std) of counts observed over ``exposure`` (default 1): the
        mean ``mu`` scales to ``e mu``, so its posterior mean by ``e`` and variance by
        ``e^2``. On a dask X, lazily block by block."""
        if is_dask_collection(X):
            rows = () if exposure is None else (("exposure", exposure),)
            out = predict_lazily(self, "predict", X, rows=rows, return_std=return_std,
                                 columns=2 if return_std else None)
            return (out[:, 0], out[:, 1]) if return_std else out
        mean, mean_var = self._predictive_moments(X, exposure)
        if return_std:
            return mean, np.sqrt(self.family_.predictive_variance(mean, mean_var))
        return mean


@_glm_estimator(PoissonFamily(), _COMMON_ATTRS_DOC,
                link=_Param("log", [StrOptions({"log", "softplus"})], "", ""))
class BayesianPoissonRegression(_BaseCountRegression):
    """Bayesian Poisson regression for counts with posterior predictive uncertainty.

    Fits a Gaussian posterior over the coefficients and intercept of the Poisson rate
    ``exp(x . coef + intercept)`` (``link="log"``) or ``log(1 + exp(x . coef + intercept))``
    (``link="softplus"``, as in the coreset papers) under a Gaussian prior. Targets are
    non-negative: counts, or rates such as ``counts / exposure`` fitted with
    ``sample_weight=exposure`` as for scikit-learn's ``PoissonRegressor``; counts observed
    over different exposures are fitted, predicted, scored and drawn with ``exposure=`` or
    ``offset=`` (the log exposure, as in statsmodels).

    Parameters
    ----------
    link : {{"log", "softplus"}}, default="log"
        Inverse link from the linear predictor to the Poisson rate.
    {common_params}
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Posterior mean of the coefficients.

    intercept_ : float
        Posterior mean of the intercept (0 when ``fit_intercept=False``).
    {common_attrs}
    See Also
    --------
    BayesianLogisticRegression : The binary-classification counterpart.
    sklearn.linear_model.PoissonRegressor : Its MAP estimate (log link) with
        ``alpha=1 / (n_samples * prior_scale**2)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import BayesianPoissonRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))
    >>> y = rng.poisson(np.exp(X @ [0.5, -0.3] + 1.0))
    >>> reg = BayesianPoissonRegression().fit(X, y)
    >>> mean, std = reg.predict(X[:3], return_std=True)
    >>> mean.shape, std.shape
    ((3,), (3,))
    """

    def __init__(self, *, link: Literal["log", "softplus"] = "log",
                 method: FitMethod = "laplace", prior_scale: float = 1.0,
                 intercept_prior_scale: float = 10.0, fit_intercept: bool = True,
                 tol: float = 1e-10, max_iter: int = 500, kl_beta: float | None = None,
                 pass_degree: int = 2, pass_radius: float | Literal["auto"] = "auto",
                 sampler: Sampler = "nuts", n_draws: int = 4000, n_burnin: int | None = None,
                 thin: int | None = None, n_walkers: int | None = None, n_chains: int = 4,
                 n_jobs: int | None = None, random_state: RandomStateLike = None,
                 verbose: int = 0) -> None:
        self.link = link
        self.pass_degree = pass_degree
        self.pass_radius = pass_radius
        super().__init__(method=method, prior_scale=prior_scale,
                         intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, tol=tol, max_iter=max_iter,
                         kl_beta=kl_beta, sampler=sampler, n_draws=n_draws,
                         n_burnin=n_burnin, thin=thin, n_walkers=n_walkers,
                         n_chains=n_chains, n_jobs=n_jobs, random_state=random_state,
                         verbose=verbose)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a degree-2 polynomial in place of exp() on [-R, R] fits counts only roughly
        tags.regressor_tags.poor_score = self.method == "pass_glm"
        return tags

    def _family(self):
        return PoissonFamily(link=self.link)

    @available_if(_uses_pass_glm)
    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: MatrixLike, y: VectorLike,
                    sample_weight: VectorLike | None = None) -> Self:
        """Add a chunk of a stream to PASS-GLM's sufficient statistics (``method="pass_glm"``).

        The statistics are sums over rows, so fitting chunk by chunk gives the same posterior
        as one :meth:`fit` on all of them. The posterior is refreshed after every chunk.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A chunk of training data.
        y : array-like of shape (n_samples,)
            Its counts.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative log-likelihood multipliers of the chunk's rows.

        Returns
        -------
        self : object
            The estimator with the posterior of all chunks seen so far.
        """
        return self._partial_fit(X, y, sample_weight)


@_glm_estimator(NegativeBinomialFamily(), _COMMON_ATTRS_DOC,
                alpha=_Param("auto", [Interval(Real, 0, None, closed="neither"),
                                      StrOptions({"auto"})], "", ""))
class BayesianNegativeBinomialRegression(_BaseCountRegression):
    """Bayesian negative binomial regression for overdispersed counts.

    Fits a Gaussian posterior over the coefficients and intercept of the mean
    ``mu = exp(x . coef + intercept)`` of the NB2 likelihood with
    ``Var[y | x] = mu + alpha mu^2`` (:class:`~skcoreset.families.NegativeBinomialFamily`;
    Cameron and Trivedi, 2013, chapter 3) under a Gaussian prior. Counts whose variance
    exceeds their mean, as most counts in practice do, get predictive intervals of the right
    width, where the Poisson model's are too narrow.

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        Overdispersion ``alpha > 0`` (``alpha -> 0`` is the Poisson model). ``"auto"``:
        estimated on at most 10,000 rows (all rows below; evenly spaced above): from the
        method-of-moments start of a pilot Poisson fit
        (:meth:`skcoreset.families.NegativeBinomialFamily.resolve`), Newton's method in
        ``log alpha`` finds the mode of the joint posterior of the coefficients and
        ``log alpha`` (flat prior on ``log alpha``; with a wide coefficient prior, the
        maximum-likelihood estimate of statsmodels' ``NegativeBinomial``), and the
        Laplace approximation there gives its uncertainty (``alpha_std_``,
        :meth:`alpha_interval`, a row of :meth:`summary`, draws in :meth:`to_arviz`); the
        posterior of the coefficients is given ``alpha_``. With ``method="mcmc"`` (NUTS)
        ``log alpha`` is sampled with the coefficients instead, under a
        ``N(0, 10^2)`` prior (proper, and far wider than its posterior) truncated to
        ``[1e-8, 1e8]``, from that start: ``alpha_samples_`` holds the draws and ``alpha_``
        is their mean. When the data hardly determine alpha (a Laplace sd of ``log alpha``
        above 2, or the Poisson limit) it is not sampled, with a warning.
    {common_params}
    Attributes
    ----------
    alpha_ : float
        The overdispersion used: ``alpha``, or its estimate for ``alpha="auto"``.

    alpha_std_ : float
        Standard error of ``alpha_``: ``alpha_ * log_alpha_std_`` (the delta method, as
        statsmodels' ``bse`` of alpha); 0 for a fixed ``alpha``; NaN when the estimate is
        at the Poisson limit ``1e-8`` (the data show no overdispersion: use
        :class:`BayesianPoissonRegression`).

    log_alpha_std_ : float
        Standard deviation of ``log alpha`` in the Laplace approximation of its marginal
        posterior (the inverse square root of minus the Schur complement of the joint
        Hessian of the log posterior at the mode); with ``method="mcmc"``, of its draws.

    alpha_samples_ : ndarray of shape (n_draws,)
        Posterior draws of ``alpha`` (``method="mcmc"`` with NUTS and ``alpha="auto"``),
        drawn jointly with ``posterior_samples_`` (row by row); ``alpha_`` and
        ``alpha_std_`` are their mean and standard deviation.

    coef_ : ndarray of shape (n_features,)
        Posterior mean of the coefficients.

    intercept_ : float
        Posterior mean of the intercept (0 when ``fit_intercept=False``).
    {common_attrs}
    See Also
    --------
    BayesianPoissonRegression : The model without overdispersion.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import BayesianNegativeBinomialRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2))
    >>> mu = np.exp(X @ [0.5, -0.3] + 1.0)
    >>> y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu))  # alpha = 1 / 2
    >>> reg = BayesianNegativeBinomialRegression().fit(X, y)
    >>> bool(0.3 < reg.alpha_ < 0.7)
    True
    >>> mean, std = reg.predict(X[:3], return_std=True)
    >>> mean.shape, std.shape
    ((3,), (3,))
    """

    # no PASS-GLM options: the negative binomial model has no PASS-GLM mapping
    def __init__(self, *, alpha: float | Literal["auto"] = "auto",
                 method: FitMethod = "laplace", prior_scale: float = 1.0,
                 intercept_prior_scale: float = 10.0, fit_intercept: bool = True,
                 tol: float = 1e-10, max_iter: int = 500, kl_beta: float | None = None,
                 sampler: Sampler = "nuts", n_draws: int = 4000, n_burnin: int | None = None,
                 thin: int | None = None, n_walkers: int | None = None, n_chains: int = 4,
                 n_jobs: int | None = None, random_state: RandomStateLike = None,
                 verbose: int = 0) -> None:
        self.alpha = alpha
        super().__init__(method=method, prior_scale=prior_scale,
                         intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, tol=tol, max_iter=max_iter,
                         kl_beta=kl_beta, sampler=sampler, n_draws=n_draws,
                         n_burnin=n_burnin, thin=thin, n_walkers=n_walkers,
                         n_chains=n_chains, n_jobs=n_jobs, random_state=random_state,
                         verbose=verbose)

    def _family(self):
        return NegativeBinomialFamily(alpha=self.alpha)

    def _fitted_family(self, X, y_encoded, sample_weight, prior, offset=None):
        """The family with ``alpha`` estimated for ``alpha="auto"`` (with its Laplace sd in
        ``log alpha``); stored with ``alpha_``, ``alpha_std_`` and ``log_alpha_std_``."""
        family, dispersion = resolve_family(
            self._family(), X, y_encoded, sample_weight, prior_prec=prior,
            fit_intercept=self.fit_intercept, offset=offset, return_dispersion=True)
        self.family_ = family
        self.alpha_ = family.alpha
        self.log_alpha_std_ = 0.0 if dispersion is None else dispersion.log_alpha_sd
        self.alpha_std_ = self.alpha_ * self.log_alpha_std_
        return family

    def _method_options(self, spec):
        """With ``method="mcmc"``, NUTS and an estimated ``alpha``, ``log alpha`` is sampled
        with the coefficients, unless the data hardly determine it (see ``alpha``)."""
        options = super()._method_options(spec)
        if self.method != "mcmc" or self.sampler != "nuts" or self.alpha != "auto":
            return options
        if np.isfinite(self.log_alpha_std_) and self.log_alpha_std_ <= _MAX_SAMPLED_LOG_ALPHA_SD:
            options["sample_alpha"] = True
        else:
            sd = ("the Poisson limit" if not np.isfinite(self.log_alpha_std_)
                  else f"a Laplace sd of log alpha of {self.log_alpha_std_:.3g}")
            warnings.warn(
                f"The counts hardly determine the overdispersion (alpha_={self.alpha_:.3g}, "
                f"{sd} > {_MAX_SAMPLED_LOG_ALPHA_SD}): its posterior is its prior's on the "
                "side of small alpha, so it is not sampled; the coefficients are sampled "
                "given alpha_. The counts look Poisson: consider BayesianPoissonRegression, "
                "or pass a number as alpha.", UserWarning, stacklevel=4)
        return options

    def _store(self, result):
        """Split sampled ``log alpha`` (the last column of the draws) from theta."""
        if hasattr(self, "alpha_samples_"):
            del self.alpha_samples_
        if result.extra.get("sample_alpha"):
            extra = result.extra
            draws = result.posterior.samples
            result.posterior = SamplePosterior(draws[:, :-1])
            self.alpha_samples_ = np.exp(draws[:, -1])
            self._alpha_diagnostics = {key: extra[key][-1]
                                       for key in ("effective_sample_size", "r_hat")}
            for key in ("effective_sample_size", "r_hat"):
                extra[key] = extra[key][:-1]
            self.alpha_ = float(np.mean(self.alpha_samples_))
            self.alpha_std_ = float(np.std(self.alpha_samples_, ddof=1))
            self.log_alpha_std_ = float(np.std(draws[:, -1], ddof=1))
            self.family_ = self.family_.with_alpha(self.alpha_)
        return super()._store(result)

    def alpha_interval(self, level: float = 0.95) -> tuple[float, float]:
        """Equal-tailed interval of ``alpha`` at ``level``: ``alpha_ exp(-/+ z
        log_alpha_std_)`` from the Laplace approximation in ``log alpha``, or with
        ``method="mcmc"`` the quantiles of ``alpha_samples_`` (``[alpha_, alpha_]`` for a
        fixed ``alpha``; NaN at the Poisson limit).

        Parameters
        ----------
        level : float, default=0.95
            Probability inside the interval, strictly between 0 and 1.

        Returns
        -------
        lower, upper : float
        """
        check_is_fitted(self)
        level = check_level(level)
        if hasattr(self, "alpha_samples_"):
            tail = 0.5 * (1.0 - level)
            lower, upper = np.quantile(self.alpha_samples_, [tail, 1.0 - tail])
            return float(lower), float(upper)
        z = stats.norm.ppf(0.5 + 0.5 * level)
        spread = np.exp(z * self.log_alpha_std_)
        return float(self.alpha_ / spread), float(self.alpha_ * spread)

    def _summary_rows(self, level):
        """The ``alpha`` row of :meth:`summary`: ``alpha_``, ``alpha_std_`` and
        :meth:`alpha_interval`; with sampled alpha also its MCMC diagnostics."""
        lower, upper = self.alpha_interval(level)
        row = {"mean": self.alpha_, "sd": self.alpha_std_, "lower": lower, "upper": upper}
        if hasattr(self, "alpha_samples_"):
            row.update(ess=self._alpha_diagnostics["effective_sample_size"],
                       r_hat=self._alpha_diagnostics["r_hat"],
                       acceptance=self.acceptance_fraction_,
                       divergences=self.n_divergences_,
                       tree_depth=np.mean(self.sample_stats_["tree_depth"]))
        return {"alpha": row}
