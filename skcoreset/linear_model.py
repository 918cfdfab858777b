"""Bayesian generalized linear models as scikit-learn estimators.

:class:`BayesianLogisticRegression`, :class:`BayesianProbitRegression`,
:class:`BayesianPoissonRegression` and :class:`BayesianNegativeBinomialRegression` fit a
posterior over
``theta = [coef..., intercept]`` under the prior ``N(0, prior_scale^2 I)`` on the coefficients
and ``N(0, intercept_prior_scale^2)`` on the intercept. ``sample_weight`` multiplies each
point's log-likelihood, unnormalised: a weight of 2 is the same as the row appearing twice, so
the weighted subsets returned by the coreset constructors stand in for the full data.
"""

import copy
import warnings
from functools import partial
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import assert_all_finite, check_is_fitted, validate_data

from ._numbers import is_number
from ._design import latent_moments, linear_predictor, split_theta
from ._posterior import SamplePosterior
from ._summary import MCMC_DIAGNOSTICS, inference_data, summary_table
from ._docstrings import fill_doc
from .families import (FAMILIES, LogisticFamily, NegativeBinomialFamily, PoissonFamily,
                       ProbitFamily)
from ._inference import kl_proximal, laplace, mcmc, resolve_family
from ._inference._common import prior_precision
from ._inference.mcmc import SAMPLERS, sample_predictive_moments
from ._backend import DaskRows, is_dask_collection
from ._dask_predict import (accuracy, exposure_as_weight_lazily, predict_lazily, r2,
                            sample_y_lazily)
from ._inference.pass_glm import (PilotSample, check_pass_degree, pass_glm,
                                  posterior_from_sample, start_statistics)
from ._atomic import fit_context
from ._sklearn_compat import Interval, StrOptions, available_if
from ._validation import ACCEPT_SPARSE, check_exposure, check_sample_weight
from .coreset._subset import _carries_weights, reject_weighted_subset, unpack_weighted_subset


class _Method(NamedTuple):
    """How the estimators fit with one method."""

    fit: object  # the inference function, (X, y, family, **common, **options) -> result
    options: dict  # estimator parameter -> keyword argument of ``fit``
    supports: object = None  # family -> whether the method fits it (None: every family)
    streams: bool = False  # one pass over the data: partial_fit
    chunked: bool = False  # passes over rows in chunks: dask arrays
    check: object = None  # estimator -> None; raises ValueError for invalid options
    finds_non_finite: bool = False  # its pass over X raises on NaN/inf: no separate check


def _check_pass_degree(estimator):
    check_pass_degree(estimator._family().pass_glm_mapping, estimator.pass_degree)


def _has_pass_glm_mapping(family):
    return family.pass_glm_mapping is not None


_MCMC_OPTIONS = ("sampler", "n_draws", "n_burnin", "thin", "n_walkers", "n_chains", "n_jobs",
                 "random_state")

# The fitting methods: fit dispatch, option passing and validation all read this table.
_METHODS = {
    "laplace": _Method(laplace, {}, chunked=True),
    "kl_proximal": _Method(kl_proximal, {"kl_beta": "beta"}, chunked=True),
    # PASS-GLM needs a polynomial approximation of each family's mapping function
    "pass_glm": _Method(pass_glm, {"pass_degree": "degree", "pass_radius": "radius"},
                        supports=_has_pass_glm_mapping, streams=True, chunked=True,
                        check=_check_pass_degree, finds_non_finite=True),
    "mcmc": _Method(mcmc, {name: name for name in _MCMC_OPTIONS}),
}
_STREAMING = " or ".join(repr(name) for name, spec in _METHODS.items() if spec.streams)
_CHUNKED = ", ".join(repr(name) for name, spec in _METHODS.items() if spec.chunked)
# Rows drawn from all chunks of a dask array to estimate a family's "auto" parameters (the
# estimators in memory use at most as many).
_RESOLVE_ROWS = 10_000


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
    if _carries_weights(X):
        raise ValueError(
            "exposure cannot be combined with a coreset's weighted subset: the coreset was "
            "built on the likelihood of y without the exposure. Fit the pipeline on rates "
            "instead, which gives the same posterior: fit(X, y / exposure, "
            "<coreset step>__sample_weight=exposure).")


class _BaseBayesianGLM(BaseEstimator):
    """Shared fit and posterior-predictive machinery; subclasses fix the family."""

    _parameter_constraints = {
        "method": [StrOptions(set(_METHODS))],
        "prior_scale": [Interval(Real, 0, None, closed="neither")],
        "intercept_prior_scale": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "kl_beta": [Interval(Real, 0, None, closed="neither"), None],
        "pass_degree": [Interval(Integral, 2, None, closed="left")],
        "pass_radius": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "sampler": [StrOptions(set(SAMPLERS))],
        "n_draws": [Interval(Integral, 2, None, closed="left")],
        "n_burnin": [Interval(Integral, 0, None, closed="left"), None],
        "thin": [Interval(Integral, 1, None, closed="left"), None],
        "n_walkers": [Interval(Integral, 2, None, closed="left"), None],
        "n_chains": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, *, method="laplace", prior_scale=1.0, intercept_prior_scale=10.0,
                 fit_intercept=True, tol=1e-10, max_iter=500, kl_beta=None, pass_degree=2,
                 pass_radius="auto", sampler="nuts", n_draws=4000, n_burnin=None, thin=None,
                 n_walkers=None, n_chains=4, n_jobs=None, random_state=None, verbose=0):
        self.method = method
        self.prior_scale = prior_scale
        self.intercept_prior_scale = intercept_prior_scale
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.kl_beta = kl_beta
        self.pass_degree = pass_degree
        self.pass_radius = pass_radius
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
        return {keyword: getattr(self, param) for param, keyword in spec.options.items()}

    def _encode_target(self, y, classes=None):
        """Validate y for the family and encode it (classification: set ``classes_``)."""
        return self._family().fit_target(y, classes)[0]

    def _encode_more(self, y):
        """Encode the targets of a later ``partial_fit`` chunk as the first were."""
        return self._family().encode_target(y)

    def _fitted_family(self, X, y_encoded, sample_weight, prior):
        """The family with its "auto" parameters estimated from the data; stored."""
        self.family_ = resolve_family(self._family(), X, y_encoded, sample_weight,
                                      prior_prec=prior, fit_intercept=self.fit_intercept)
        return self.family_

    def _store(self, result):
        """Fitted attributes from an :class:`InferenceResult`."""
        self._fitted_method = self.method
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

    def _fit(self, X, y, sample_weight, exposure=None):
        """Validate, fit the posterior and set the fitted attributes common to both models.

        ``exposure`` (Poisson only) becomes rates weighted by the exposure
        (:meth:`PoissonFamily.exposure_as_weight`), which every method fits exactly.
        """
        if exposure is not None:
            _check_exposure_input(X)
        X, y, sample_weight = unpack_weighted_subset(X, y, sample_weight)
        if is_dask_collection(X):
            return self._fit_dask(X, y, sample_weight, exposure)
        # PASS-GLM finds non-finite entries of X in its one pass over the data (from the
        # diagonal of its Gram, PassGLMStatistics.add): no separate pass over X for them
        finds_non_finite = _METHODS[self.method].finds_non_finite
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False,
                             ensure_all_finite=not finds_non_finite,
                             accept_sparse=ACCEPT_SPARSE)
        y_encoded = self._encode_target(y)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        log_constant = 0.0
        if exposure is not None:
            y_encoded, sample_weight, log_constant = self._family().exposure_as_weight(
                y_encoded, sample_weight, check_exposure(exposure, X.shape[0]))
        spec = self._method()
        prior = self._prior(X.shape[1])
        result = spec.fit(
            X, y_encoded, self._fitted_family(X, y_encoded, sample_weight, prior),
            sample_weight=sample_weight, prior_prec=prior, fit_intercept=self.fit_intercept,
            tol=self.tol, max_iter=self.max_iter, verbose=self.verbose,
            **self._method_options(spec))
        for name in ("log_evidence", "elbo"):  # of the counts, not of the weighted rates
            if getattr(result, name) is not None:
                setattr(result, name, getattr(result, name) + log_constant)
        self._start_stream(result.extra)
        self._fitted_on_exposure = exposure is not None
        return self._store(result)

    def _start_stream(self, extra):
        """Keep PASS-GLM's statistics, pilot sample and pilot fit (in a result's ``extra``),
        from which ``partial_fit`` continues."""
        self._pass_statistics = extra.get("statistics")
        self._pass_sample = extra.get("pilot_sample")
        self._pass_pilot = extra.get("pilot")
        self._pass_settings = (None if self._pass_statistics is None
                               else self._stream_settings())

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
        spec = _METHODS[self.method]
        if not spec.chunked:
            raise ValueError(
                f"dask arrays are supported with method={_CHUNKED}, which fit by passes over "
                f"the chunks where they live; got method={self.method!r}. Compute the arrays "
                f"first (e.g. on a coreset), or use method={_CHUNKED}.")
        import dask.array as da

        X = da.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got an array with {X.ndim} dimensions.")
        if X.shape[0] < 1 or X.shape[1] < 1:
            raise ValueError(f"Found array with shape {X.shape}; at least one row and one "
                             "feature are required.")
        log_constant = 0.0
        if exposure is not None:
            y, sample_weight, log_constant = exposure_as_weight_lazily(
                self._family(), X, y, sample_weight, exposure)
        rows = DaskRows.from_arrays(X, y, sample_weight)
        summary = rows.summary
        check_sample_weight(np.array([summary.min_weight, summary.max_weight]), 2)
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
        self._start_stream(result.extra)
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
        first_call = getattr(self, "_pass_statistics", None) is None
        if first_call and hasattr(self, "posterior_"):
            raise ValueError(
                f"partial_fit cannot continue a fit made with method="
                f"{self._fitted_method!r}: that posterior has no sufficient statistics to add "
                "chunks to. Call fit with method='pass_glm' (partial_fit then continues from "
                "it), or partial_fit on an unfitted clone (sklearn.base.clone) to start a new "
                "stream.")
        settings = self._stream_settings()
        if not first_call and settings != self._pass_settings:
            raise ValueError(
                f"(pass_degree, pass_radius, fit_intercept) changed from {self._pass_settings} "
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
            stats = start_statistics(self.family_, X.shape[1], degree=options["degree"],
                                     radius=options["radius"],
                                     fit_intercept=self.fit_intercept)
            sample, pilot = PilotSample.empty(stats.model, X.shape[1]), None
        else:
            # added to a copy: a chunk is added completely or not at all
            stats = copy.deepcopy(self._pass_statistics)
            sample, pilot = self._pass_sample, self._pass_pilot
        offset = stats.n_samples  # the number of the chunk's first row
        stats.add(X, y_encoded, sample_weight)
        sample = sample.add(X, y_encoded, sample_weight, offset=offset)  # a new object
        result = posterior_from_sample(
            stats, sample, self.family_, radius=self.pass_radius,
            prior_prec=prior, tol=self.tol, max_iter=self.max_iter, verbose=self.verbose,
            pilot_theta=None if pilot is None else pilot.theta)
        self._start_stream(result.extra)
        return self._store(result)

    def _check_predict_input(self, X):
        check_is_fitted(self)
        reject_weighted_subset(X)
        return validate_data(self, X, dtype=np.float64, reset=False,
                             accept_sparse=ACCEPT_SPARSE)

    def _predictive_moments(self, X):
        """Posterior mean and variance of ``E[y | x]`` at each row of X.

        Averages over the draws for a sample posterior (MCMC); otherwise integrates over the
        Gaussian posterior of the linear predictor (Gauss-Hermite or closed form).
        """
        X = self._check_predict_input(X)
        family = self.family_
        if isinstance(self.posterior_, SamplePosterior):
            return sample_predictive_moments(X, self.posterior_.samples, family,
                                             self.fit_intercept)
        m, v = latent_moments(X, self.posterior_.mean, self.posterior_.cov_cholesky,
                              self.fit_intercept)
        return family.expected_mean(m, v)

    def _linear_predictor(self, X):
        X = self._check_predict_input(X)
        return X @ np.ravel(self.coef_) + np.ravel(self.intercept_)[0]

    def _decode_draws(self, y):
        """Targets drawn by the family, in the estimator's encoding of y."""
        return y

    def credible_interval(self, level=0.95):
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

    def summary(self, level=0.95):
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

    def sample_y(self, X, n_draws=1000, random_state=None):
        """Draws from the posterior predictive distribution of y at each row of X.

        Each draw takes parameters ``theta`` from ``posterior_`` (Gaussian draws, or for
        ``method="mcmc"`` draws resampled from the chain) and then a target at every row from
        the likelihood given ``theta`` (``family_.sample``), so the draws include both the
        posterior uncertainty and the noise of y. Quantiles over the draws give posterior
        predictive intervals.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
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
        dask_input = is_dask_collection(X)
        if not dask_input:
            X = self._check_predict_input(X)
        if not is_number(n_draws, Integral) or n_draws < 1:
            raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}.")
        rng = check_random_state(random_state)
        if dask_input:
            return sample_y_lazily(self, X, n_draws, rng)
        return self._draw_targets(X, self.posterior_.sample(n_draws, random_state=rng), rng)

    def _draw_targets(self, X, theta, rng):
        """Targets drawn at the rows of X for each parameter draw (rows of ``theta``)."""
        eta = linear_predictor(X, theta, self.fit_intercept).T
        return self._decode_draws(self.family_.sample(eta, random_state=rng))

    def to_arviz(self, n_draws=4000, random_state=None):
        """The posterior as ArviZ data, for ArviZ's plots and diagnostics.

        Needs ArviZ (``pip install arviz``), which skcoreset does not depend on. The
        ``posterior`` group holds ``coef`` (dimension ``feature``, named as in
        :meth:`summary`) and ``intercept`` (when fitted). For ``method="mcmc"`` with NUTS,
        one chain per NUTS chain and the ``sample_stats`` group of ``sample_stats_``
        (divergences, tree depth, acceptance, leapfrog steps, energy, log posterior, step
        size), so ArviZ's diagnostics and plots (``plot_energy``, ``ess``, ``rhat``) apply;
        with the ensemble each emcee walker is one chain holding its latest
        ``len(posterior_samples_) // n_walkers`` draws (the walkers of an ensemble are not
        independent chains, so ArviZ's R-hat across them is a check of mixing rather than a
        formal test). For the Gaussian posteriors one chain of ``n_draws`` independent
        draws.

        Parameters
        ----------
        n_draws : int, default=4000
            Number of draws of a Gaussian posterior; unused for ``method="mcmc"``, which
            exports its own draws.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws of a Gaussian posterior.

        Returns
        -------
        data : arviz.InferenceData
            With ArviZ 1.0 and later, the ``xarray.DataTree`` its ``from_dict`` returns.

        Raises
        ------
        ImportError
            When ArviZ is not installed.
        """
        check_is_fitted(self)
        return inference_data(self, n_draws, random_state)


_METHOD_DOC = """
    method : {{{methods}}}, default="laplace"
        How the posterior is fitted.

        - ``"laplace"``: Gaussian centred at the posterior mode (found by Newton's method with
          a line search) with covariance the inverse negative Hessian of the log posterior
          there.
        - ``"kl_proximal"``: full-covariance Gaussian variational inference by KL
          proximal-gradient steps (Khan et al., 2015, eqs. 16-19), started at the Laplace
          approximation; maximises the evidence lower bound (``elbo_``). Uses the dual
          updates, which form no ``d x d`` matrix until the end, when there are more
          parameters than rows.
        - ``"mcmc"``: draws from the exact posterior, by default with the No-U-Turn sampler
          (``sampler="nuts"``: mici's dynamic multinomial HMC with the Laplace Hessian as a
          dense metric, ``n_chains`` chains run until the bulk effective sample size reaches
          ``n_draws``), or with emcee's affine-invariant ensemble (``sampler="ensemble"``);
          chains start from the Laplace approximation. ``posterior_samples_`` holds the draws
          and predictions average over them. Every gradient is one pass over the rows: on a
          coreset of 1,000 rows a run takes seconds at 100 parameters; on all rows the cost
          grows with N.{pass_glm}

        Every method but ``"mcmc"`` also fits dask arrays where their chunks live: each
        Newton or proximal step (PASS-GLM: its one pass) is a map-reduce over the chunks,
        and the posterior is that of the same rows in memory.
"""

_PASS_GLM_METHOD_DOC = """
        - ``"pass_glm"``: PASS-GLM (Huggins et al., 2017): the GLM mapping function is
          replaced by a degree-``pass_degree`` polynomial (see ``pass_radius``), so the
          log-likelihood depends on the data only through polynomial sufficient statistics
          computed in one pass (``partial_fit`` for streams, dask arrays chunk by chunk).
          Degree 2 gives a Gaussian posterior in closed form; higher degrees use Newton and
          Laplace on the polynomial surrogate. Supports the logistic and probit models
          (probit at degree 2) and Poisson with ``link="log"``."""

_SHARED_PARAMS_DOC = """
    prior_scale : float, default=1.0
        Standard deviation of the isotropic Gaussian prior ``N(0, prior_scale^2 I)`` on the
        coefficients. Must be positive.

    intercept_prior_scale : float, default=10.0
        Standard deviation of the Gaussian prior on the intercept (a wide prior by default).
        Ignored when ``fit_intercept=False``.

    fit_intercept : bool, default=True
        Whether to fit an intercept, with its own prior.

    tol : float, default=1e-10
        Convergence tolerance, in nats: Newton's method (Laplace, PASS-GLM above degree 2)
        stops when half the Newton decrement (the predicted increase of the log posterior from
        another step) is below ``tol``; KL-proximal VI when half the squared natural-gradient
        norm of the ELBO is.

    max_iter : int, default=500
        Maximum number of Newton or proximal iterations; a ``ConvergenceWarning`` is issued
        when reached.

    kl_beta : float, default=None
        Proximal step size ``beta`` of ``method="kl_proximal"`` (each step mixes the current
        ``q`` and the linearised target with ``r = 1 / (1 + beta)``). ``None``: 1, the fastest
        step near the optimum, where the Laplace approximation starts the iteration (the
        paper's 0.25 for the logistic model suits its start from the prior); from 50,000
        rows on, ``None`` takes fixed-point steps to the same optimum instead, which need
        fewer iterations there.

    sampler : {"nuts", "ensemble"}, default="nuts"
        The MCMC kernel (``method="mcmc"``). ``"nuts"``: the No-U-Turn sampler (dynamic
        HMC with multinomial sampling, Hoffman and Gelman, 2014; Betancourt, 2017, as
        implemented by mici) in the coordinates that whiten the Laplace approximation, with
        dual-averaging step-size adaptation; it uses the gradient of the log posterior and
        mixes in a few leapfrog steps per draw at 10 or 100 parameters alike.
        ``"ensemble"``: emcee's stretch-move ensemble (Goodman and Weare, 2010), which needs
        no gradient but whose autocorrelation time grows like ``10 + 15 p`` steps, so that
        beyond about 20 parameters its default run is cut short with a warning. On a
        1,000-row coreset NUTS gives many times more effective draws per second from 30
        parameters on (``benchmarks/bench_mcmc.py``).

    n_draws : int, default=4000
        Size of the MCMC sample (``method="mcmc"``), in effective draws. NUTS runs until the
        smallest bulk effective sample size of the parameters (Vehtari et al., 2021) reaches
        ``n_draws`` and every rank-normalized R-hat is at most 1.01, or until a budget of 10
        times ``n_draws`` draws, which warns (``MCMCDiagnosticWarning``) with the numbers;
        it keeps all its draws (about ``n_draws`` of them on a near-Gaussian posterior).
        The ensemble keeps ``n_draws`` draws over all walkers, thinned to be nearly
        independent.

    n_burnin : int, default=None
        Warm-up iterations per chain, discarded (``method="mcmc"``). NUTS: step-size
        adaptation, 150 by default (the chains start near stationarity, at Laplace draws).
        Ensemble: ``None`` scales it with the number of parameters p, ``100 + 150 p``
        steps, about ten autocorrelation times of the stretch move on a Gaussian target.

    thin : int, default=None
        Keep every ``thin``-th iteration (``method="mcmc"``). NUTS: 1 by default; its budget
        counts kept draws, so a larger value lets a slowly mixing run go on longer. Ensemble:
        ``None`` chooses the smallest value that runs the chain for about 50 autocorrelation
        times (``500 + 750 p`` steps); the defaulted parts of the run are capped together at
        1,000,000 walker steps (``n_walkers`` times steps per walker), which binds from about
        ``p = 17``; the shortened run then warns (``MCMCDiagnosticWarning``) with the
        ``n_burnin`` and ``thin`` that give the full run. Explicit values are not capped.

    n_walkers : int, default=None
        Number of emcee walkers (``sampler="ensemble"``), at least ``2 p``; ``None`` means
        ``max(16, 4 p)``.

    n_chains : int, default=4
        Number of independent NUTS chains (``sampler="nuts"``), each with its own warm-up
        and step size, started at independent Laplace draws; R-hat compares them.

    n_jobs : int, default=None
        Number of NUTS chains run in parallel (joblib). ``None`` means 1 unless in a
        :obj:`joblib.parallel_backend` context, ``-1`` all processors. The draws do not
        depend on it.

    random_state : int, RandomState instance or None, default=None
        Seed of the MCMC chains' starting points and moves (``method="mcmc"``), for
        reproducible draws. The other methods are deterministic.
"""

_PASS_GLM_PARAMS_DOC = """
    pass_degree : int, default=2
        Degree of PASS-GLM's polynomial approximation (``method="pass_glm"`` only). Logistic:
        2, 6, 10, ... (the paper's 2 + 4k rule keeps the surrogate concave); Poisson: even;
        probit: 2.
        Degrees above 2 store ``C(p + degree, degree)`` monomial sums and are meant for few
        features; they are more accurate where degree 2 warns.

    pass_radius : float or "auto", default="auto"
        Which polynomial PASS-GLM uses (``method="pass_glm"`` only). ``"auto"``: a Laplace
        fit on pilot rows (at most 10,000 rows drawn uniformly from all rows, per class for
        a binary model, the rarer class up to half; the same rows in memory, on a dask
        array and in a ``partial_fit`` stream) gives representative linear predictors
        ``s = x . theta``, and the derivative of the polynomial is the least-squares fit of
        the exact one (sigmoid, ``exp``, or ``phi / Phi`` at the margins ``y s`` for
        probit) at them, so the approximation is accurate where the data are, including
        far from 0 (rare positives, large counts). The statistics do not depend on the
        polynomial, so a stream's is chosen again after every ``partial_fit`` from all its
        rows so far. A number ``R``: the Chebyshev approximation
        on ``[-R, R]`` of Huggins et al. (2017) (their PASS-LR2 uses ``R = 4``), accurate
        only when most ``s`` lie in that interval. Either way held-out rows (drawn with the
        pilot rows) measure the resulting error of the posterior mean, and a
        ``PassGLMAccuracyWarning`` (a ``UserWarning``) is issued when it exceeds one
        posterior standard deviation or the estimate's standard error cannot rule that out:
        the approximation error does not shrink with the number of rows, while the
        posterior does.
"""

_VERBOSE_DOC = """
    verbose : int, default=0
        Print progress of the fit when positive.
"""


def _params_doc(family):
    """The parameters section shared by the estimators of a family (an instance): the
    methods that support it (PASS-GLM and its parameters only where it does)."""
    methods = [name for name, spec in _METHODS.items()
               if spec.supports is None or spec.supports(family)]
    pass_glm = "pass_glm" in methods
    return (_METHOD_DOC.format(methods=", ".join(f'"{name}"' for name in methods),
                               pass_glm=_PASS_GLM_METHOD_DOC if pass_glm else "")
            + _SHARED_PARAMS_DOC + (_PASS_GLM_PARAMS_DOC if pass_glm else "") + _VERBOSE_DOC)


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


_fill_glm_doc = fill_doc(common_params=_params_doc(LogisticFamily()),
                         common_attrs=_COMMON_ATTRS_DOC)

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

    def _set_coef(self, coef, intercept):
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([intercept])

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
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
    def partial_fit(self, X, y, classes=None, sample_weight=None):
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

    def decision_function(self, X):
        """Linear predictor at the posterior mean, ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            Positive values favour ``classes_[1]``. A lazy dask array for a dask X.
        """
        if is_dask_collection(X):
            return predict_lazily(self, "decision_function", X)
        return self._linear_predictor(X)

    def predict_proba(self, X, return_std=False):
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

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`, shape (n_samples, 2)."""
        if is_dask_collection(X):
            return predict_lazily(self, "predict_log_proba", X, columns=2)
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """Most probable class under the posterior predictive.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

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

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of :meth:`predict` on X against y (weighted by ``sample_weight``).

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
        y : array-like or dask array of shape (n_samples,)
        sample_weight : array-like or dask array of shape (n_samples,), default=None

        Returns
        -------
        score : float
            For dask arrays, computed by a pass over their blocks where they live.
        """
        if is_dask_collection(X):
            return accuracy(self, X, y, sample_weight)
        return super().score(X, y, sample_weight=sample_weight)


@fill_doc(common_params=_params_doc(LogisticFamily()), common_attrs=_CLASSIFIER_ATTRS_DOC)
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


@fill_doc(common_params=_params_doc(ProbitFamily()), common_attrs=_CLASSIFIER_ATTRS_DOC)
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


class _BaseCountRegression(RegressorMixin, _BaseBayesianGLM):
    """The count regressions: non-negative targets, predictions of new counts."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        return tags

    def _set_coef(self, coef, intercept):
        self.coef_ = coef
        self.intercept_ = intercept

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Non-negative integer counts.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative multipliers of each point's log-likelihood; a weight of 2 counts the
            row twice. Not normalised.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y, sample_weight)

    def predict(self, X, return_std=False):
        """Posterior predictive mean count, and optionally its standard deviation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return the standard deviation of the posterior predictive distribution of
            the count: the count noise plus the posterior uncertainty of the mean ``mu``,
            ``sqrt(E[mu] + Var[mu])`` for the Poisson model and
            ``sqrt(E[mu] + Var[mu] + alpha_ (Var[mu] + E[mu]^2))`` for the negative binomial.

        Returns
        -------
        mean : ndarray of shape (n_samples,)
            ``E[y | x, data] = E[mu(eta)]`` over the posterior of the linear predictor.
        std : ndarray of shape (n_samples,)
            Only returned when ``return_std=True``.
        """
        return self._predict_counts(X, return_std)

    def score(self, X, y, sample_weight=None):
        """Coefficient of determination R^2 of :meth:`predict` against y.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
        y : array-like or dask array of shape (n_samples,)
        sample_weight : array-like or dask array of shape (n_samples,), default=None
            Weights of the rows in R^2.

        Returns
        -------
        score : float
            For dask arrays, computed by passes over their blocks where they live.
        """
        return self._r2_score(X, y, sample_weight)

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
        mean, mean_var = self._predictive_moments(X)
        if exposure is not None:
            exposure = check_exposure(exposure, len(mean))
            mean, mean_var = exposure * mean, exposure**2 * mean_var
        if return_std:
            return mean, np.sqrt(self.family_.predictive_variance(mean, mean_var))
        return mean


@_fill_glm_doc
class BayesianPoissonRegression(_BaseCountRegression):
    """Bayesian Poisson regression for counts with posterior predictive uncertainty.

    Fits a Gaussian posterior over the coefficients and intercept of the Poisson rate
    ``exp(x . coef + intercept)`` (``link="log"``) or ``log(1 + exp(x . coef + intercept))``
    (``link="softplus"``, as in the coreset papers) under a Gaussian prior. Targets are
    non-negative: counts, or rates such as ``counts / exposure`` fitted with
    ``sample_weight=exposure`` as for scikit-learn's ``PoissonRegressor``; counts observed
    over different exposures can also be fitted and predicted with ``exposure=``.

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

    _parameter_constraints = {
        **_BaseBayesianGLM._parameter_constraints,
        "link": [StrOptions({"log", "softplus"})],
    }

    def __init__(self, *, link="log", method="laplace", prior_scale=1.0,
                 intercept_prior_scale=10.0, fit_intercept=True, tol=1e-10, max_iter=500,
                 kl_beta=None, pass_degree=2, pass_radius="auto", sampler="nuts",
                 n_draws=4000, n_burnin=None, thin=None, n_walkers=None, n_chains=4,
                 n_jobs=None, random_state=None, verbose=0):
        super().__init__(method=method, prior_scale=prior_scale,
                         intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, tol=tol, max_iter=max_iter,
                         kl_beta=kl_beta, pass_degree=pass_degree, pass_radius=pass_radius,
                         sampler=sampler, n_draws=n_draws, n_burnin=n_burnin, thin=thin,
                         n_walkers=n_walkers, n_chains=n_chains, n_jobs=n_jobs,
                         random_state=random_state, verbose=verbose)
        self.link = link

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a degree-2 polynomial in place of exp() on [-R, R] fits counts only roughly
        tags.regressor_tags.poor_score = self.method == "pass_glm"
        return tags

    def _family(self):
        return PoissonFamily(link=self.link)

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, exposure=None):
        """Fit the posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Non-negative targets: counts, or rates such as ``counts / exposure`` (with
            ``sample_weight=exposure``, as for scikit-learn's ``PoissonRegressor``). For
            non-integer y the Poisson log-likelihood, normalised with ``log Gamma(y + 1)``,
            is a quasi-likelihood with the Poisson dependence on the coefficients.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative multipliers of each point's log-likelihood; a weight of 2 counts the
            row twice. Not normalised.
        exposure : float or array-like of shape (n_samples,), default=None
            Positive exposure of each count (time, population, area...): ``y`` is modelled
            as ``Poisson(exposure * rate(x))``, an offset ``log(exposure)`` in the linear
            predictor for the log link. Fitted as the rates ``y / exposure`` with weights
            ``sample_weight * exposure``, the same posterior for every link and method
            (:meth:`PoissonFamily.exposure_as_weight
            <skcoreset.families.PoissonFamily.exposure_as_weight>`); ``log_evidence_`` and
            ``elbo_`` are those of the counts. ``coef_`` and :meth:`predict` then describe
            the rate per unit of exposure. Not supported after a coreset step (fit the rates
            with the exposure as ``sample_weight`` there). May be a dask array with a dask
            ``X``. Routed like
            ``sample_weight`` with metadata routing (``set_fit_request(exposure=True)``).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y, sample_weight, exposure=exposure)

    def predict(self, X, return_std=False, exposure=None):
        """Posterior predictive mean count, and optionally its standard deviation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return the standard deviation of the posterior predictive distribution of
            the count: the Poisson noise plus the posterior uncertainty of its mean ``mu``,
            ``sqrt(E[mu] + Var[mu])``.
        exposure : float or array-like of shape (n_samples,), default=None
            Positive exposure of the counts to predict: the mean becomes ``exposure * mu``.
            ``None``: the rate per unit of exposure.

        Returns
        -------
        mean : ndarray of shape (n_samples,)
            ``E[y | x, data] = exposure * E[mu(eta)]`` over the posterior of the linear
            predictor.
        std : ndarray of shape (n_samples,)
            Only returned when ``return_std=True``.
        """
        return self._predict_counts(X, return_std, exposure)

    def score(self, X, y, sample_weight=None, exposure=None):
        """Coefficient of determination R^2 of :meth:`predict` (with ``exposure``) against y.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Observed targets: counts over ``exposure``, or rates when ``exposure`` is None.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in R^2.
        exposure : float or array-like of shape (n_samples,), default=None
            Exposure of the counts y, passed to :meth:`predict`.

        Returns
        -------
        score : float
        """
        if exposure is None and getattr(self, "_fitted_on_exposure", False):
            warnings.warn(
                "BayesianPoissonRegression was fitted with exposure but is scored without: "
                "its predictions are rates per unit of exposure, so R^2 against counts y is "
                "wrong unless y are rates. Pass exposure to score; in GridSearchCV or "
                "cross_validate, enable metadata routing so that it reaches score too: "
                "sklearn.set_config(enable_metadata_routing=True) and "
                "estimator.set_fit_request(exposure=True).set_score_request(exposure=True).",
                UserWarning, stacklevel=2)
        return self._r2_score(X, y, sample_weight, exposure)

    @available_if(_uses_pass_glm)
    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, sample_weight=None):
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


@fill_doc(common_params=_params_doc(NegativeBinomialFamily()),
          common_attrs=_COMMON_ATTRS_DOC)
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
        estimated by the method of moments from a pilot Poisson fit on at most 10,000 rows
        (:meth:`skcoreset.families.NegativeBinomialFamily.resolve`) and stored in
        ``alpha_``. The posterior is over the coefficients given ``alpha``.
    {common_params}
    Attributes
    ----------
    alpha_ : float
        The overdispersion used: ``alpha``, or its estimate for ``alpha="auto"``.

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

    _parameter_constraints = {
        **{key: value for key, value in _BaseBayesianGLM._parameter_constraints.items()
           if key not in _METHODS["pass_glm"].options},
        "alpha": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
    }

    def __init__(self, *, alpha="auto", method="laplace", prior_scale=1.0,
                 intercept_prior_scale=10.0, fit_intercept=True, tol=1e-10, max_iter=500,
                 kl_beta=None, sampler="nuts", n_draws=4000, n_burnin=None, thin=None,
                 n_walkers=None, n_chains=4, n_jobs=None, random_state=None, verbose=0):
        self.alpha = alpha
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

    def _family(self):
        return NegativeBinomialFamily(alpha=self.alpha)

    def _fitted_family(self, X, y_encoded, sample_weight, prior):
        family = super()._fitted_family(X, y_encoded, sample_weight, prior)
        self.alpha_ = family.alpha
        return family
