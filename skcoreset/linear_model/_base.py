"""What every estimator shares: validation, the fit of in-memory and dask rows through the
method table, the posterior-predictive moments, credible intervals, the summary, predictive
draws and the ArviZ export."""

from functools import partial
from numbers import Integral
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import assert_all_finite, check_is_fitted, validate_data

from .._arviz import draw_targets, offset_scales_mean, with_offset
from .._backend import DaskRows, InMemoryRows, as_row_blocks, is_dask_collection
from .._dask_predict import exposure_as_weight_lazily, sample_y_lazily
from .._design import latent_moments, linear_predictor, split_theta
from .._inference import (PassGLMStream, prior_precision, resolve_family,
                          sample_predictive_moments)
from .._numbers import is_number
from .._posterior import SamplePosterior, check_level
from .._summary import MCMC_DIAGNOSTICS, CredibleIntervals, parameter_names, summary_table
from .._typing import FloatArray, MatrixLike, Prediction, RandomStateLike, VectorLike
from .._validation import (ACCEPT_SPARSE, check_sample_weight, explained_input_errors,
                           exposure_of)
from ..coreset._subset import carries_weights, reject_weighted_subset, unpack_weighted_subset
from ..families import FAMILIES, Family
from ._arviz_export import ArvizExportMixin
from ._methods import METHODS, STREAMING_METHODS
from ._results import (RESIDUAL_KINDS, forget_fit_statistics, keep_dask_rows, keep_rows,
                       residuals, rows_info, set_fit_statistics)


# Rows drawn from all chunks of a dask array for the start of a family's "auto" parameters
# (the estimators in memory start from at most as many), refined on all rows where the
# family can (the negative binomial overdispersion).
_RESOLVE_ROWS = 10_000


def uses_pass_glm(estimator):
    """``partial_fit`` exists only for the methods that accumulate sufficient statistics."""
    spec = METHODS.get(estimator.method)
    if spec is None or not spec.streams:
        # available_if passes this message on (hasattr(estimator, "partial_fit") is False)
        raise AttributeError(
            f"partial_fit is only available with method={STREAMING_METHODS}, which accumulates "
            f"sufficient statistics; this estimator has method={estimator.method!r}. Use "
            f"set_params(method={STREAMING_METHODS}) to fit a stream chunk by chunk, or call fit.")
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
            "hands on the rates y / exposure weighted by the exposure (the same Poisson "
            "posterior), or its rows' offsets (the other models).")


def _check_method_takes_offset(method, spec, offset):
    """Refuse offsets in the linear predictor for a method that cannot fit them."""
    if offset is not None and not spec.takes_offset:
        raise ValueError(
            f"method={method!r} cannot fit an offset in the linear predictor: PASS-GLM's "
            "sufficient statistics are sums of products of the features, computed once; "
            "an offset per row shifts each row's polynomial by its own amount, which "
            "those statistics do not hold. Use method='laplace', 'kl_proximal' or 'mcmc' "
            "with offset.")


class BaseBayesianGLM(ArvizExportMixin, BaseEstimator):
    """Shared fit and posterior-predictive machinery; subclasses fix the family."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # scipy.sparse X, as CSR (ACCEPT_SPARSE)
        return tags

    def get_family(self) -> Family:
        """The likelihood this estimator fits, as its parameters set it.

        A coreset step before it in :class:`skcoreset.pipeline.Pipeline` is built under this
        family with ``model="auto"``. Parameters estimated from the data (the negative
        binomial ``alpha="auto"``) are still ``"auto"`` here; after ``fit`` the family
        used, with them estimated, is ``family_``.

        Returns
        -------
        family : Family
        """
        return self._family()

    def _prior(self, n_features):
        return prior_precision(n_features, prior_scale=self.prior_scale,
                               intercept_prior_scale=self.intercept_prior_scale,
                               fit_intercept=self.fit_intercept)

    def _method(self):
        """The table entry of ``method``, after checking it supports the family and the
        options it reads."""
        spec = METHODS[self.method]
        family = self._family()
        if spec.supports is not None and not spec.supports(family):
            works = [method for method, other in METHODS.items()
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

    def _fitted_family(self, X, y_encoded, sample_weight, prior, offset=None, rows=None):
        """The family with its "auto" parameters estimated from the data (refined on all
        ``rows``, a storage, where the family can); stored."""
        self.family_ = resolve_family(self._family(), X, y_encoded, sample_weight,
                                      prior_prec=prior, fit_intercept=self.fit_intercept,
                                      offset=offset, rows=rows)
        return self.family_

    def _linear_offset(self, X, exposure, offset, lazily=True):
        """The known term of each row's linear predictor from ``exposure`` and ``offset``
        (of counts the log of the multiplier of each row's mean, of a binary model its
        offset), or None: the one representation every fit and prediction takes."""
        return None

    def _exposure_as_weight(self, log_exposure):
        """Whether the training rows' :meth:`_linear_offset` enters the fit as the weights
        of rates (:meth:`PoissonFamily.exposure_as_weight`, exact for every link) rather
        than as the offset in the linear predictor."""
        return log_exposure is not None and hasattr(self._family(), "exposure_as_weight")

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

    def _use_draws(self, draws):
        """Make ``draws`` of ``[coef..., intercept]`` the posterior (a pipeline's exact
        correction: draws resampled by their importance weights, one chain)."""
        self.posterior_ = SamplePosterior(draws)
        self.posterior_samples_ = self.posterior_.samples
        self._mcmc_n_chains = 1
        coef, intercept = split_theta(self.posterior_.mean, self.fit_intercept)
        self._set_coef(coef, float(intercept))

    def _fit(self, X, y, sample_weight, exposure=None, offset=None, n_trials=None):
        """Validate, fit the posterior and set the fitted attributes common to both models.

        ``exposure`` and ``offset`` (count models) enter the fit in one representation,
        ``offset + log(exposure)`` (:meth:`_linear_offset`), which the rows kept for
        :meth:`to_arviz` and :meth:`loo` carry: a family that fits counts over an exposure
        as rates weighted by it (:meth:`PoissonFamily.exposure_as_weight`, exact for every
        method and link) takes its exponential as weights; otherwise (the negative binomial
        model) it is the offset in the linear predictor, which travels with the rows of
        every storage (in memory, a ``np.memmap``, dask chunks), any finite value.

        ``n_trials`` (binary models) makes y the successes out of that many trials per row;
        the rows become weighted rows of each class (:meth:`_trials_as_rows`).
        """
        if exposure is not None or offset is not None:
            _check_exposure_input(X)
        if n_trials is not None and (carries_weights(X) or is_dask_collection(X)):
            raise ValueError(
                "n_trials is fitted on rows in memory given as X, y: it cannot be combined "
                "with a coreset's weighted subset (whose rows are not the rows n_trials was "
                "given for) or with dask arrays (compute them first; a table of cells is "
                "small).")
        X, y, sample_weight = unpack_weighted_subset(X, y, sample_weight)
        if is_dask_collection(X):
            return self._fit_dask(X, y, sample_weight, exposure, offset)
        y_given = y
        # PASS-GLM finds non-finite entries of X in its one pass over the data (from the
        # diagonal of its Gram, PassGLMStatistics.add): no separate pass over X for them
        finds_non_finite = METHODS[self.method].finds_non_finite
        with explained_input_errors():
            X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False,
                                 ensure_all_finite=not finds_non_finite,
                                 accept_sparse=ACCEPT_SPARSE)
        self._column_names = None
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        self._fit_info = rows_info(X.shape[0], sample_weight.sum(),
                                   not np.all(sample_weight == 1.0))
        log_constant = 0.0
        offset = self._linear_offset(X, exposure, offset)
        on_exposure = offset is not None
        if n_trials is None:
            y_encoded = self._encode_target(y)
        else:
            X, y_encoded, sample_weight, log_constant, offset = self._trials_as_rows(
                X, y, n_trials, sample_weight, offset)
        exposure = exposure_of(offset) if self._exposure_as_weight(offset) else None
        if n_trials is None:  # a table's cells are kept by _trials_as_rows
            keep_rows(self, X, y_encoded, sample_weight, None, offset, y_given=y_given)
        if exposure is not None:
            y_encoded, sample_weight, log_constant = self._family().exposure_as_weight(
                y_encoded, sample_weight, exposure)
            offset = None
        options = {} if offset is None else {"offset": offset}
        spec = self._method()
        _check_method_takes_offset(self.method, spec, offset)
        prior = self._prior(X.shape[1])
        training_rows = InMemoryRows(X, y_encoded, sample_weight, offset)
        family = self._fitted_family(X, y_encoded, sample_weight, prior, offset,
                                     rows=training_rows)
        result = spec.fit(
            X, y_encoded, family,
            sample_weight=sample_weight, prior_prec=prior, fit_intercept=self.fit_intercept,
            tol=self.tol, max_iter=self.max_iter, verbose=self.verbose,
            **self._method_options(spec), **options)
        self._finish_fit(result, log_constant, on_exposure)
        set_fit_statistics(self, training_rows, log_constant)
        if n_trials is not None:  # the deviance from the cells' saturated binomial model
            self.deviance_ += 2.0 * self._trials_saturated
        return self

    def _trials_as_rows(self, X, y, n_trials, sample_weight, offset):
        """``(X, y_encoded, sample_weight, log_constant, offset)`` of successes y out of
        ``n_trials`` (binary models only), the ``offset`` of each cell (or None) on its
        rows; sets ``_trials_saturated``, the log-likelihood of the saturated model of the
        cells less ``log_constant``, and keeps the cells for :meth:`to_arviz` and
        :meth:`loo`."""
        raise TypeError(f"{type(self).__name__}.fit takes no n_trials.")

    def _finish_fit(self, result, log_constant, on_exposure):
        """The fitted attributes of a fit of rows in memory or on dask: the evidence of the
        counts (``log_constant`` from fitting counts over an exposure as weighted rates),
        PASS-GLM's stream, and the posterior."""
        for name in ("log_evidence", "elbo"):
            if getattr(result, name) is not None:
                setattr(result, name, getattr(result, name) + log_constant)
        self._start_stream(result)
        self._fitted_on_exposure = on_exposure
        return self._store(result)

    def _start_stream(self, result):
        """Keep PASS-GLM's stream (statistics, pilot sample and pilot fit), from which
        ``partial_fit`` continues; None after the other methods."""
        self._pass_stream = (PassGLMStream.of_result(result, self._stream_settings())
                             if METHODS[self.method].streams else None)

    def _stream_settings(self):
        return (self.pass_degree, self.pass_radius, self.fit_intercept)

    def _fit_dask(self, X, y, sample_weight, exposure=None, offset=None):
        """Fit rows held in dask arrays where their chunks live: every pass over the rows is
        a task per chunk and a tree of tasks summing the results, and only sums over rows
        (and, for PASS-GLM, its pilot rows) reach this process.

        y and the weights are validated from a one-pass summary (a witness of y's values
        and the extreme weights, :class:`~skcoreset._backend.DaskRows`), with the checks and
        messages of in-memory input; non-finite X (or an invalid exposure or offset) raises
        in the first task that reads it. Offsets travel with the chunks of the rows.
        """
        columns = getattr(X, "columns", None)  # a dask DataFrame's, for summary()
        X = as_row_blocks(X)  # the rows' blocks for the exposure and the summary alike
        log_constant = 0.0
        offset = self._linear_offset(X, exposure, offset)
        on_exposure = offset is not None
        as_weight = self._exposure_as_weight(offset)
        if as_weight:
            y, sample_weight, log_constant = exposure_as_weight_lazily(
                self._family(), X, y, sample_weight, offset)
            offset = None
        rows = DaskRows.from_arrays(X, y, sample_weight, offset=offset)
        summary = rows.summary
        check_sample_weight(np.array([summary.min_weight, summary.max_weight]), 2)
        self._fit_info = rows_info(X.shape[0], summary.total_weight,
                                   summary.min_weight != 1.0 or summary.max_weight != 1.0)
        if summary.witness.dtype.kind in "fc":
            assert_all_finite(summary.witness, input_name="y")
        self._encode_target(summary.witness)  # the target checks; sets classes_
        family = self._family()
        rows = rows.encoded(partial(family.encode_target,
                                    classes=getattr(self, "classes_", None)))
        if not as_weight:  # loo() sums over the chunks where they live
            keep_dask_rows(self, rows)
        else:  # the rates weighted by the exposure are not the counts' rows
            keep_rows(self, None, None, None, None)
        self.n_features_in_ = X.shape[1]
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        # not feature_names_in_: predictions run block by block on arrays, without names
        self._column_names = (None if columns is None
                              or not all(isinstance(c, str) for c in columns)
                              else [str(c) for c in columns])
        spec = self._method()
        _check_method_takes_offset(self.method, spec, offset)
        prior = self._prior(X.shape[1])
        if family.unresolved:  # parameters estimated from rows drawn from all chunks
            pilot = rows.subsample(_RESOLVE_ROWS, np.random.RandomState(0))
            family = self._fitted_family(pilot.X, pilot.y, pilot.weights, prior,
                                         pilot.offset, rows=rows)
        self.family_ = family
        result = spec.fit(rows, None, family, sample_weight=None, prior_prec=prior,
                          fit_intercept=self.fit_intercept, tol=self.tol,
                          max_iter=self.max_iter, verbose=self.verbose,
                          **self._method_options(spec))
        self._finish_fit(result, log_constant, on_exposure)
        return set_fit_statistics(self, rows, log_constant)

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
        keep_rows(self, None, None, None, None)  # a stream's rows are not kept
        forget_fit_statistics(self)
        before = {} if first_call else self._fit_info
        self._fit_info = rows_info(
            before.get("rows", 0) + X.shape[0],
            before.get("total_weight", 0.0) + sample_weight.sum(),
            before.get("weighted", False) or not np.all(sample_weight == 1.0))
        return self._store(result)

    def _check_predict_input(self, X):
        check_is_fitted(self)
        reject_weighted_subset(X)
        return validate_data(self, X, dtype=np.float64, reset=False,
                             accept_sparse=ACCEPT_SPARSE)

    def _predictive_moments(self, X, log_exposure=None):
        """Posterior mean and variance of ``E[y | x]`` at each row of X with the rows'
        :meth:`_linear_offset` ``log_exposure`` (of counts the log of their exposure; None
        for none); infinite where beyond float64."""
        mean, var, exponent = self._scaled_predictive_moments(X, log_exposure)
        with np.errstate(over="ignore"):
            return np.ldexp(mean, exponent), np.ldexp(var, 2 * exponent)

    def _scaled_predictive_moments(self, X, log_exposure=None):
        """:meth:`_predictive_moments` in units of ``2**exponent`` (the mean) and
        ``4**exponent`` (the variance), with each row's non-negative integer ``exponent``:
        rates beyond float64's square root (1e154, e.g. per unit of an exposure of 1e-160)
        have a representable mean and standard deviation but not a variance.

        ``log_exposure`` (validated, :meth:`_linear_offset`; None for 1): the log of the
        exposure of counts, added in log space with the log link (an offset in the
        linear predictor), so that exposures beyond float64 (``|offset| > 709``) scale the
        rates back into it; another link's mean of counts is multiplied by the exposure
        (:func:`~skcoreset._arviz.offset_scales_mean`); a binary model's offset is added
        to the linear predictor.

        Averages over the draws for a sample posterior (MCMC); otherwise integrates over the
        Gaussian posterior of the linear predictor (in log space where the family has the
        closed form, otherwise Gauss-Hermite or closed form).
        """
        X = self._check_predict_input(X)
        family = self.family_
        log_link = family.link.name == "log"
        scales_mean = log_exposure is not None and offset_scales_mean(family)
        # a known term of another link's linear predictor (the binary models)
        shifts_eta = log_exposure is not None and not (log_link or scales_mean)
        if isinstance(self.posterior_, SamplePosterior):
            given = ({} if log_exposure is None
                     else {"log_scale": log_exposure} if log_link
                     else {"offset": log_exposure} if shifts_eta
                     else {"scale": exposure_of(log_exposure)})
            return sample_predictive_moments(X, self.posterior_.samples, family,
                                             self.fit_intercept, return_exponent=True,
                                             **given)
        m, v = latent_moments(X, self.posterior_.mean, self.posterior_.cov_cholesky,
                              self.fit_intercept)
        if shifts_eta:
            m = m + log_exposure
        logs = family.log_expected_mean(m, v)
        if logs is None:
            mean, var = family.expected_mean(m, v)
            if scales_mean:  # counts through another link: an exposure within float64
                exposure = exposure_of(log_exposure)
                mean, var = exposure * mean, exposure**2 * var
            return mean, var, np.zeros(len(mean), dtype=int)
        log_mean, log_var = logs
        if log_exposure is not None and not shifts_eta:
            log_mean, log_var = log_mean + log_exposure, log_var + 2.0 * log_exposure
        # each row's unit: the power of two nearest its mean (none below 1; none beyond
        # 2**(2**20), where only the ratio of the std to the mean could still be finite)
        exponent = np.clip(np.round(log_mean / np.log(2.0)), 0, 2**20).astype(int)
        shift = exponent * np.log(2.0)
        with np.errstate(over="ignore"):  # inf: a std/mean ratio beyond float64
            return np.exp(log_mean - shift), np.exp(log_var - 2.0 * shift), exponent

    def residuals(self, X: MatrixLike, y: VectorLike, kind: str = "deviance") -> FloatArray:
        """Return the residuals of the rows X, y at the posterior mean of the parameters.

        The residuals of statsmodels' GLM results (``resid_response``, ``resid_pearson``,
        ``resid_deviance``) at ``posterior_.mean``, which under a wide prior is their
        maximum-likelihood estimate (with ``method="mcmc"``, the mean of the draws). With
        ``mu`` the mean of the likelihood there (for the binary models the probability of
        ``classes_[1]``, and y as 0/1):

        - ``"response"``: ``y - mu``;
        - ``"pearson"``: ``(y - mu) / sqrt(V(mu))``, with the family's variance function
          ``V`` (``mu (1 - mu)``, ``mu``, ``mu + alpha_ mu^2``);
        - ``"deviance"``: ``sign(y - mu) sqrt(d)``, where ``d`` is the row's contribution
          to the deviance (twice its log-likelihood below that of a model whose mean is
          y), so that their squares add up to ``deviance_`` on the training rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows (in memory).
        y : array-like of shape (n_samples,)
            Their targets.
        kind : {"response", "pearson", "deviance"}, default="deviance"
            Which residuals (the default of R's ``residuals.glm``).

        Returns
        -------
        residuals : ndarray of shape (n_samples,)
        """
        return self._residuals(X, y, kind)

    def _residuals(self, X, y, kind, log_exposure=None):
        """:meth:`residuals` of rows with the :meth:`_linear_offset` ``log_exposure`` (or
        None): the offset in the linear predictor, except for counts through a link other
        than log, whose exposure weights their rates (their residuals are the counts')."""
        if kind not in RESIDUAL_KINDS:
            raise ValueError(f"kind must be one of {list(RESIDUAL_KINDS)}, got {kind!r}.")
        X = self._check_predict_input(X)
        y = self._family().encode_target(y, getattr(self, "classes_", None))
        if len(y) != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {len(y)} entries.")
        family = self.family_
        eta = linear_predictor(X, self.posterior_.mean, self.fit_intercept)
        scale = None
        if log_exposure is not None and not offset_scales_mean(family):
            eta = eta + log_exposure
        elif log_exposure is not None:  # rates weighted by the exposure
            y, scale, _ = family.exposure_as_weight(y, np.ones(len(y)),
                                                    exposure_of(log_exposure))
        return residuals(family, eta, y, self._observed(y), kind, scale)

    def _linear_predictor(self, X, offset=None):
        """The linear predictor at the posterior mean, plus ``offset`` (validated, or
        None)."""
        X = self._check_predict_input(X)
        eta = X @ np.ravel(self.coef_) + np.ravel(self.intercept_)[0]
        return eta if offset is None else eta + offset

    def _decode_draws(self, y):
        """Targets drawn by the family, in the estimator's encoding of y."""
        return y

    def credible_interval(self, level: float = 0.95,
                          feature_names: VectorLike | None = None) -> CredibleIntervals:
        """Equal-tailed marginal credible intervals of ``[coef..., intercept]``.

        For a Gaussian posterior (``method="laplace"``, ``"kl_proximal"``, ``"pass_glm"``)
        ``mean -/+ z sd`` with ``z`` the normal quantile at ``(1 + level) / 2``; for
        ``method="mcmc"`` the ``(1 - level) / 2`` and ``(1 + level) / 2`` empirical quantiles
        of the posterior draws, which keep any skewness.

        Parameters
        ----------
        level : float, default=0.95
            Posterior probability inside each interval, strictly between 0 and 1.
        feature_names : array-like of str of shape (n_features_in_,), default=None
            Names of the features, as in :meth:`summary`, whose names the intervals carry.

        Returns
        -------
        intervals : CredibleIntervals
            The pair ``lower, upper`` of arrays of shape (n_params,), in the order of
            ``posterior_.mean`` (the coefficients, then the intercept when
            ``fit_intercept=True``), with the parameters' ``names`` (those of
            :meth:`summary`'s rows) and ``to_frame()``.
        """
        check_is_fitted(self)
        level = check_level(level)
        lower, upper = self.posterior_.credible_interval(level)
        return CredibleIntervals(lower, upper, parameter_names(self, feature_names), level)

    def summary(self, level: float = 0.95, feature_names: VectorLike | None = None) -> Any:
        """The posterior, one row per parameter, as statsmodels prints its results.

        A :class:`~skcoreset.PosteriorSummary`: printed, a header of the fit (estimator,
        model, method, rows and their total weight when weighted, parameters,
        ``loglik_``, ``aic_``, ``bic_``, the log evidence or ELBO, convergence, and for
        ``method="mcmc"`` the draws, the largest R-hat, the smallest ESS, the acceptance,
        the divergences and the mean tree depth of the run), then a fixed-width table with
        every column shown; ``to_frame()`` gives the table as a pandas DataFrame.

        Rows are named after ``feature_names``, else ``feature_names_in_`` (the columns of
        a DataFrame fitted on), else ``x0``, ``x1``, ..., with the intercept last as
        ``"intercept"`` (when ``fit_intercept=True``) and the negative binomial ``alpha``
        after it. Columns:

        - ``mean``, ``sd``: posterior mean and standard deviation;
        - ``lower``, ``upper``: the equal-tailed credible interval at ``level``
          (:meth:`credible_interval`);
        - for ``method="mcmc"`` only, each parameter's diagnostics: ``ess``
          (``effective_sample_size_``) and ``r_hat`` (``r_hat_``).

        Whether a Gaussian posterior (Laplace, KL-proximal, PASS-GLM) is close enough to
        the exact one, or the data call for MCMC: :func:`skcoreset.metrics.gaussian_check`,
        in one line.

        Parameters
        ----------
        level : float, default=0.95
            Posterior probability inside the credible intervals, strictly between 0 and 1.
        feature_names : array-like of str of shape (n_features_in_,), default=None
            Names of the features, e.g. ``get_feature_names_out()`` of the transformers
            before the estimator (:meth:`skcoreset.pipeline.Pipeline.summary` passes
            them).

        Returns
        -------
        summary : PosteriorSummary
            ``str(summary)`` is the text; ``summary.to_frame()`` the DataFrame (indexed by
            parameter; ``attrs`` holds ``level`` and ``header``); ``summary.columns`` the
            columns as arrays and ``summary.header`` the header as a dict.
        """
        check_is_fitted(self)
        return summary_table(self, check_level(level), feature_names)

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

    def _sample_y(self, X, n_draws, random_state, log_exposure=None):
        """:meth:`sample_y` of rows with the :meth:`_linear_offset` ``log_exposure`` (of
        counts the log of their exposure; lazy for a dask X; or None)."""
        dask_input = is_dask_collection(X)
        if not dask_input:
            X = self._check_predict_input(X)
        if not is_number(n_draws, Integral) or n_draws < 1:
            raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}.")
        rng = check_random_state(random_state)
        if dask_input:
            rows = () if log_exposure is None else (("log_exposure", log_exposure),)
            return sample_y_lazily(self, X, n_draws, rng, rows)
        return self._draw_targets(X, self.posterior_.sample(n_draws, random_state=rng), rng,
                                  log_exposure)

    def _draw_targets(self, X, theta, rng, log_exposure=None):
        """Targets drawn at the rows of X for each parameter draw (rows of ``theta``), with
        the :meth:`_linear_offset` ``log_exposure`` (or None), as an array of shape (draws,
        rows)."""
        eta, exposure = with_offset(self.family_, linear_predictor(X, theta, self.fit_intercept),
                                    log_exposure)
        draws = draw_targets(self.family_, eta, rng, exposure=exposure)
        return self._decode_draws(draws.T)
