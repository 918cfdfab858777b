"""A Pipeline that applies coreset steps during fit only and hands their weights on.

:class:`Pipeline` is scikit-learn's :class:`sklearn.pipeline.Pipeline` with one difference:
a step that has ``fit_coreset`` (every coreset constructor) replaces the data by its weighted
subset while the pipeline is fitted, and every later step whose ``fit`` accepts
``sample_weight`` receives the coreset weights. At prediction, scoring and transform time
coreset steps are skipped, so predictions are made for every row.
"""

import inspect
import time
from collections import defaultdict
from collections.abc import Mapping
from typing import Any, Self

import numpy as np
from sklearn import get_config
from sklearn import pipeline as sk_pipeline
from sklearn.utils.metadata_routing import (MetadataRequest, MetadataRouter, MethodMapping,
                                            get_routing_for_object, process_routing)

from ._advice import ROWS_PER_CORESET_ROW, coreset_break_even, default_coreset_rows
from ._warnings import warn
from ._atomic import atomic
from ._posterior import SamplePosterior
from ._summary import steps_feature_names
from ._sklearn_compat import available_if
from .coreset._base import estimated_dispersion
from .linear_model._count import given_dispersion
from .linear_model._results import copied_rows, read_copied_rows
from .exceptions import CoresetEfficiencyWarning, ImportanceSamplingWarning
from .metrics._exact import MAX_PARETO_K, exact_correction
from ._typing import MatrixLike, Prediction, VectorLike

__all__ = ["Pipeline", "make_pipeline"]

_CORRECTION_ATTRIBUTES = ("pareto_k_", "importance_ess_", "kl_before_", "exact_corrected_")


def _final_has(method):
    """``available_if`` check: the final step has ``method``."""
    def check(pipeline):
        return hasattr(pipeline.steps[-1][1], method)
    return check


def _is_coreset(step):
    return hasattr(step, "fit_coreset")


def _builds_for_estimator(step):
    """Whether a coreset step's ``fit_coreset`` takes the estimator it is built for."""
    try:
        return "estimator" in inspect.signature(step.fit_coreset).parameters
    except (TypeError, ValueError):
        return False


def _warn_if_coreset_does_not_pay(X, final):
    """Warn when NUTS follows a coreset step on fewer rows than the measured size from which
    the coreset route is faster than NUTS on all rows (the rule of :mod:`._advice`)."""
    if getattr(final, "method", None) != "mcmc" or getattr(final, "sampler", None) != "nuts":
        return
    try:
        n_samples, n_features = (int(size) for size in X.shape)
    except (AttributeError, TypeError, ValueError):  # no shape, or unknown (dask) sizes
        return
    break_even = coreset_break_even(n_features)
    if n_samples < break_even:
        warn(
            f"A coreset does not pay at {n_samples:,} rows and {n_features} features: a "
            f"coreset and NUTS on it are measured to be faster than NUTS on all rows at "
            f"equal accuracy from about {break_even:,} rows ({ROWS_PER_CORESET_ROW} times "
            f"the default coreset's {default_coreset_rows(n_features):,}); below, both take "
            "about as long (0.5-2x each other), and the coreset's posterior only "
            f"approximates the exact one. Fit {type(final).__name__}(method='mcmc') on all "
            "rows, without the coreset step.", CoresetEfficiencyWarning)


def _accepts(method, name):
    """Whether ``method`` takes the keyword ``name`` (or any keyword)."""
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False
    return name in parameters or any(p.kind == p.VAR_KEYWORD for p in parameters.values())


def _without_fit_sample_weight(routing):
    """A step's requests with ``sample_weight`` of ``fit`` not requested: after a coreset
    step the pipeline passes the coreset's weights itself."""
    fit_request = getattr(routing, "fit", None)  # routers (nested meta-estimators) have none
    if fit_request is not None and "sample_weight" in fit_request.requests:
        fit_request.add_request(param="sample_weight", alias=False)
    return routing


class Pipeline(sk_pipeline.Pipeline):
    """Pipeline of transforms, coreset constructors and a final estimator.

    Behaves like :class:`sklearn.pipeline.Pipeline` except that steps with a ``fit_coreset``
    method act only during :meth:`fit`: the data that reach the following steps are the
    coreset rows, and those steps (when their ``fit`` accepts ``sample_weight``) and the final
    estimator receive the coreset weights as ``sample_weight``. At prediction time coreset
    steps are skipped. Works with any final estimator that accepts ``sample_weight``
    (scikit-learn's ``LogisticRegression``, ``PoissonRegressor``, ...), with
    :class:`~sklearn.model_selection.GridSearchCV` over the coreset's parameters, ``clone``,
    ``set_params`` and pickling.

    Parameters
    ----------
    steps : list of (str, estimator) tuples
        The steps, the last one the final estimator; ``"passthrough"`` or ``None`` skip a step.
    transform_input : None, default=None
        Must be ``None`` (transforming metadata along the steps is not supported).
    memory : None, default=None
        Must be ``None``: caching fitted transformers is not supported, because a coreset step
        changes the rows every later step sees.
    verbose : bool, default=False
        Print the time each step takes to fit.
    exact_correction : bool or "auto", default="auto"
        End the fit by correcting the final estimator's posterior to the exact posterior of
        every row ``fit`` was given (a skcoreset Bayesian GLM after at most one coreset
        step). ``"auto"`` corrects when a coreset step is followed by an estimator that
        samples (``method="mcmc"``), where the correction costs less than the coreset and
        the sampler together (about half of them at a million rows); ``True`` also
        corrects a Gaussian posterior (which becomes draws); ``False`` never. The final
        estimator's draws (``method="mcmc"``'s, with a sampled ``log alpha`` of the
        negative binomial model, or draws of a Gaussian posterior; as many as fit about
        1e9 rows x draws, between 1,000 and 4,000, an MCMC run's thinned evenly) are
        weighted by the exact posterior's density over theirs, one pass over all rows in
        chunks (float32 differences to the draws' mean for the logistic and log-link
        Poisson models), the weights Pareto-smoothed (Vehtari et al., 2024) and the draws
        resampled by them (systematic resampling), so the final estimator's
        ``posterior_`` becomes draws of the exact posterior, which ``predict``,
        ``predict_proba``, ``summary``, ``credible_interval``, ``sample_y`` and
        ``to_arviz`` use. When the weights' Pareto ``k-hat`` exceeds 0.7 the draws cannot
        stand for the exact posterior: the uncorrected posterior is kept and an
        :class:`~skcoreset.exceptions.ImportanceSamplingWarning` says so. The pass costs
        about as many linear predictors as rows times draws (see
        :func:`~skcoreset.metrics.exact_kl`, which measures with the same weights).

    Attributes
    ----------
    named_steps : :class:`~sklearn.utils.Bunch`
        Steps by name (as in scikit-learn's Pipeline).
    pareto_k_ : float
        When the correction ran: the Pareto shape ``k-hat`` of the importance
        weights (reliable at most 0.7; ``-inf`` when all are equal).
    importance_ess_ : float
        When the correction ran: the effective sample size of the smoothed weights,
        how many independent draws of the exact posterior the corrected draws are worth.
    kl_before_ : float
        When the correction ran: ``KL(uncorrected posterior || exact posterior)`` in
        nats, estimated from the same weights (as :func:`~skcoreset.metrics.exact_kl`).
    exact_corrected_ : bool
        When the correction ran: whether the correction was applied (``pareto_k_ <=
        0.7``).

    See Also
    --------
    make_pipeline : Build a Pipeline with generated step names.

    Notes
    -----
    When the final estimator samples (``method="mcmc"``, NUTS) after a coreset step and the
    rows reaching the coreset step are fewer than about four times the default coreset's
    size (``4 max(500, p (p + 3) / 2)`` for ``p`` parameters: 2,000 rows up to 29
    features), ``fit`` warns (:class:`~skcoreset.exceptions.CoresetEfficiencyWarning`):
    there NUTS on all rows is measured to be as fast, and it is exact.

    With ``sklearn.set_config(enable_metadata_routing=True)``, ``fit(X, y,
    sample_weight=w)`` routes ``w`` the scikit-learn way, to the steps that request it with
    ``set_fit_request(sample_weight=True)``; a coreset step must request it, or scikit-learn
    raises. Steps after a coreset step are not routed ``sample_weight`` (it has one entry
    per input row): they receive the coreset's weights, which already include ``w``.
    Parameters spelled ``stepname__parameter`` go to their step in both modes, and
    ``coreset__sample_weight`` (for each coreset step) passes through routers such as
    :class:`~sklearn.model_selection.GridSearchCV`.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import scale
    >>> from skcoreset import GIGACoreset, BayesianLogisticRegression
    >>> from skcoreset.pipeline import Pipeline
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> pipe = Pipeline([("coreset", GIGACoreset(M=50, random_state=0)),
    ...                  ("clf", BayesianLogisticRegression())]).fit(scale(X), y)
    >>> pipe.predict_proba(scale(X)).shape
    (569, 2)
    """

    steps: list[tuple[str, Any]]

    def __init__(self, steps: list[tuple[str, Any]], *, transform_input: None = None,
                 memory: None = None, verbose: bool = False,
                 exact_correction: bool | str = "auto") -> None:
        super().__init__(steps, transform_input=transform_input, memory=memory,
                         verbose=verbose)
        self.exact_correction = exact_correction

    def _split_params(self, params):
        """``{"step__param": v}`` -> ``{step: {param: v}}``."""
        by_step = defaultdict(dict)
        for key, value in params.items():
            step, sep, param = key.partition("__")
            if not sep or step not in self.named_steps:
                raise ValueError(
                    f"Pipeline.fit does not accept the {key!r} parameter. Pass parameters to "
                    "steps as 'stepname__parameter', e.g. 'coreset__sample_weight'.")
            by_step[step][param] = value
        return by_step

    def _check_steps(self):
        names = [name for name, _ in self.steps]
        if len(set(names)) != len(names):
            raise ValueError(f"Pipeline step names must be unique, got {names}.")
        for name, step in self.steps[:-1]:
            if step is None or step == "passthrough":
                continue
            if not (hasattr(step, "fit") and (hasattr(step, "transform") or _is_coreset(step))):
                raise TypeError(f"Intermediate step {name!r} must be a transformer or a "
                                f"coreset constructor, got {step!r}.")
        final = self.steps[-1][1]
        if final not in (None, "passthrough") and not hasattr(final, "fit"):
            raise TypeError(f"The last step must have a fit method, got {final!r}.")

    def _check_supported_options(self):
        if self.memory is not None:
            raise ValueError("skcoreset.pipeline.Pipeline does not support memory caching: "
                             "a coreset step changes the rows every later step sees.")
        if getattr(self, "transform_input", None) is not None:
            raise ValueError("skcoreset.pipeline.Pipeline does not support transform_input.")
        if not (isinstance(self.exact_correction, (bool, np.bool_))
                or (isinstance(self.exact_correction, str)
                    and self.exact_correction == "auto")):
            raise ValueError("exact_correction must be True, False or 'auto', got "
                             f"{self.exact_correction!r}.")

    @staticmethod
    def _fit_step(step, X, y, weights, params, last, final=None, offset=None,
                  dispersion=None):
        """Fit one step on (X, y) with the coreset weights (and the coreset rows' offsets
        in the linear predictor, and the overdispersion the coreset estimated on all rows)
        so far; return the new data."""
        for name in ("exposure", "offset"):
            if weights is not None and params.get(name) is not None:
                raise ValueError(
                    f"{name} cannot reach {type(step).__name__} after a coreset step: it has "
                    "one entry per input row, not per coreset row. Pass it to the coreset "
                    f"step instead (<coreset step>__{name}=..., or with metadata routing "
                    f"coreset.set_fit_request({name}=True) and "
                    f"{type(step).__name__}().set_fit_request({name}=False)): the coreset is "
                    "then built for the rates y / exposure weighted by the exposure and hands "
                    "them on, the same Poisson posterior as the counts over their exposure; "
                    "of the negative binomial model, it hands on its rows' offsets.")
        if weights is not None and params.get("n_trials") is not None:
            raise ValueError(
                f"n_trials cannot reach {type(step).__name__} after a coreset step: it has "
                "one entry per input row (cell), not per coreset row. Pass it to the coreset "
                "step instead (<coreset step>__n_trials=..., or with metadata routing "
                "coreset.set_fit_request(n_trials=True) and "
                f"{type(step).__name__}().set_fit_request(n_trials=False)): the coreset is "
                "then built from the cells' successes and failures and hands on its rows' "
                "0/1 outcomes with their weights, the same binomial posterior.")
        if weights is not None and "sample_weight" not in params:
            if _accepts(step.fit, "sample_weight"):
                params = {**params, "sample_weight": weights}
            elif last or _is_coreset(step):
                raise TypeError(
                    f"{type(step).__name__}.fit does not accept sample_weight, so it cannot "
                    "use the coreset's weights; use an estimator that accepts sample_weight "
                    "after a coreset step.")
        if offset is not None:
            if not _accepts(step.fit, "offset"):
                raise TypeError(
                    f"{type(step).__name__}.fit does not accept offset, so it cannot use the "
                    "offsets of the coreset's rows in their linear predictors; use an "
                    "estimator that accepts offset after a coreset step built with them.")
            params = {**params, "offset": offset}
        if _is_coreset(step):
            if final is not None and _builds_for_estimator(step):
                # built under the model fitted on it (model="auto": the final estimator's)
                params = {**params, "estimator": final}
            return step.fit_coreset(X, y, **params)
        if last:
            with given_dispersion(step, dispersion):
                step.fit(X, y, **params)
            return X, y, weights
        if hasattr(step, "fit_transform"):
            return step.fit_transform(X, y, **params), y, weights
        return step.fit(X, y, **params).transform(X), y, weights

    @atomic
    def fit(self, X: MatrixLike, y: VectorLike | None = None, **params: Any) -> Self:
        """Fit the steps in order; coreset steps replace the data by their weighted subset.

        When a step's fit raises (or is interrupted), every step is left as it was.

        Parameters
        ----------
        X : iterable
            Training data, as the first step expects it.
        y : iterable, default=None
            Training targets.
        **params : dict of str -> object
            Parameters of the steps' ``fit`` methods, as ``stepname__parameter``; e.g.
            ``coreset__sample_weight`` for weighted input data. With metadata routing
            enabled, metadata such as ``sample_weight`` instead, routed to the steps that
            request it (see Notes).

        Returns
        -------
        self : object
            Pipeline with fitted steps.
        """
        self._check_supported_options()
        self.steps = list(self.steps)
        self._check_steps()
        step_params = (self._route_params(params) if get_config()["enable_metadata_routing"]
                       else self._split_params(params))
        # the rows of to_arviz and loo: copies, as the caller's arrays may change; only
        # without metadata (an exposure or offset describes the rows too)
        kept = None if params else copied_rows(X, y)
        X_input, y_input = X, y
        weights = offset = dispersion = None
        for index, (name, step) in enumerate(self.steps):
            if step is None or step == "passthrough":
                continue
            if _is_coreset(step):
                _warn_if_coreset_does_not_pay(X, self.steps[-1][1])
            start = time.perf_counter()
            X, y, weights = self._fit_step(step, X, y, weights, step_params[name],
                                           last=index == len(self.steps) - 1,
                                           final=self.steps[-1][1], offset=offset,
                                           dispersion=dispersion)
            if _is_coreset(step):  # the offsets of its rows (negative binomial), or None
                offset = getattr(step, "sample_offset_", None)
                # the overdispersion of all rows (the first coreset's: a later one's rows
                # are the first's), which a coreset's few rows cannot tell
                if dispersion is None:
                    dispersion = estimated_dispersion(step)
            if self.verbose:
                print(f"[Pipeline] ({index + 1} of {len(self.steps)}) fitting {name}, "
                      f"total={time.perf_counter() - start:.1f}s")
        self._kept_rows = kept
        for name in _CORRECTION_ATTRIBUTES:
            if name in vars(self):
                delattr(self, name)
        if self._corrects(step_params):
            self._correct(X_input, y_input, step_params)
        return self

    def _corrects(self, step_params):
        """Whether this fit ends with the exact correction: ``exact_correction`` itself, or
        with ``"auto"`` whether a coreset step precedes an estimator that sampled (and the
        rows are not binomial cells, which the correction does not support)."""
        if not isinstance(self.exact_correction, str):
            return bool(self.exact_correction)
        active = [(name, step) for name, step in self.steps
                  if step is not None and step != "passthrough"]
        coresets = [name for name, step in active[:-1] if _is_coreset(step)]
        return (bool(coresets)
                and isinstance(getattr(active[-1][1], "posterior_", None), SamplePosterior)
                and step_params[coresets[0]].get("n_trials") is None)

    def _correct(self, X, y, step_params):
        """Weight the final estimator's posterior to the exact posterior of all rows."""
        start = time.perf_counter()
        active = [(name, step) for name, step in self.steps
                  if step is not None and step != "passthrough"]
        # the rows' weights, exposure and offset: the coreset step's, else the final's
        source = next((name for name, step in active if _is_coreset(step)), active[-1][0])
        params = step_params[source]
        if params.get("n_trials") is not None:
            raise ValueError("exact_correction is not supported with n_trials; fit with "
                             "exact_correction=False.")
        final = active[-1][1]
        seed = (final.get_params(deep=False).get("random_state")
                if hasattr(final, "get_params") else None)
        correction = exact_correction(self, X, y, params.get("sample_weight"),
                                      exposure=params.get("exposure"),
                                      offset=params.get("offset"), random_state=seed)
        self.pareto_k_ = correction.pareto_k
        self.importance_ess_ = correction.ess
        self.kl_before_ = correction.kl
        self.exact_corrected_ = bool(correction.pareto_k <= MAX_PARETO_K)
        if self.exact_corrected_:
            final._use_draws(correction.draws)
        else:
            warn(
                f"The exact correction was not applied: the importance weights from the "
                f"final estimator's posterior to the exact posterior of all rows have Pareto "
                f"k-hat {correction.pareto_k:.2f} > {MAX_PARETO_K} (effective sample size "
                f"{correction.ess:.0f} of {len(correction.draws)} draws; the posterior is "
                f"about {correction.kl:.3g} nats from the exact one, likely more), so its "
                "draws cannot stand for the exact posterior. The uncorrected posterior is "
                "kept; build a larger coreset (a larger M, or a smaller target) so that the "
                "posterior it fits is closer to the exact one.",
                ImportanceSamplingWarning)
        if self.verbose:
            print(f"[Pipeline] exact correction, k-hat={correction.pareto_k:.2f}, "
                  f"total={time.perf_counter() - start:.1f}s")

    def _route_params(self, params):
        """``{step: fit params}`` from scikit-learn's metadata routing; parameters spelled
        ``stepname__parameter`` go to their step directly, as without routing."""
        by_step = self._split_params({key: value for key, value in params.items()
                                      if key.partition("__")[0] in self.named_steps})
        routed = process_routing(self, "fit", **{key: value for key, value in params.items()
                                                 if key.partition("__")[0]
                                                 not in self.named_steps})
        for name, step in self.steps:
            if step is None or step == "passthrough":
                continue
            method = ("fit" if _is_coreset(step) or name == self.steps[-1][0]
                      or not hasattr(step, "fit_transform") else "fit_transform")
            by_step[name].update(routed[name][method])
        return by_step

    def get_metadata_routing(self) -> Any:
        """Routing of metadata to the steps (used when metadata routing is enabled).

        As scikit-learn's Pipeline, except that coreset steps are routed the metadata of
        ``fit`` only (they act during fit), and steps after a coreset step are never routed
        ``sample_weight``: they see the coreset rows and receive the coreset's weights.

        Returns
        -------
        routing : :class:`~sklearn.utils.metadata_routing.MetadataRouter`
        """
        router = MetadataRouter(owner=type(self).__name__)
        # the pipeline itself consumes coreset__sample_weight-style parameters, so that
        # routers such as GridSearchCV pass them on
        own = MetadataRequest(owner=type(self).__name__)
        for name, step in self.steps:
            if _is_coreset(step):
                own.fit.add_request(param=f"{name}__sample_weight", alias=True)
        router.add_self_request(own)
        after_coreset = False
        last_name = self.steps[-1][0]
        for name, step in self.steps:
            if step is None or step == "passthrough":
                continue
            mapping = MethodMapping()
            if _is_coreset(step):
                for caller in ("fit", "fit_transform", "fit_predict"):
                    mapping.add(caller=caller, callee="fit")
                router.add(method_mapping=mapping, **{name: step})
                after_coreset = True
                continue
            callers = ["fit", "fit_transform", "fit_predict"]
            fit_method = ("fit" if name == last_name or not hasattr(step, "fit_transform")
                          else "fit_transform")
            for caller in callers:
                mapping.add(caller=caller, callee=fit_method)
            if name == last_name:
                for method in ("predict", "predict_proba", "predict_log_proba",
                               "decision_function", "score", "transform",
                               "inverse_transform"):
                    mapping.add(caller=method, callee=method)
            else:
                for caller in ("predict", "predict_proba", "predict_log_proba",
                               "decision_function", "score", "transform"):
                    mapping.add(caller=caller, callee="transform")
                mapping.add(caller="inverse_transform", callee="inverse_transform")
            routing = get_routing_for_object(step)
            if after_coreset:
                routing = _without_fit_sample_weight(routing)
            router.add(method_mapping=mapping, **{name: routing})
        return router

    def score(self, X: MatrixLike, y: VectorLike | None = None,
              sample_weight: VectorLike | None = None, **params: Any) -> float:
        """Transform X by the steps (coreset steps skipped) and score the final estimator.

        As :meth:`sklearn.pipeline.Pipeline.score`, except that without metadata routing
        ``**params`` (e.g. ``exposure`` of counts) reach the final estimator's ``score``, as
        they reach its ``predict`` in :meth:`predict`, instead of being dropped: scikit-learn
        would score predictions per unit of exposure against counts.

        Parameters
        ----------
        X : iterable
            Data to transform and score; must fulfil the input requirements of the first
            step.
        y : iterable, default=None
            Targets of the final estimator's ``score``.
        sample_weight : array-like, default=None
            Passed to the final estimator's ``score``.
        **params : dict of str -> object
            With metadata routing, routed to the steps that request them; without, passed
            to the final estimator's ``score`` (a ``TypeError`` names any it does not
            accept).

        Returns
        -------
        score : float
            The final estimator's score of the transformed data.
        """
        if not params or get_config()["enable_metadata_routing"]:
            return super().score(X, y, sample_weight=sample_weight, **params)
        final = self.steps[-1][1]
        try:
            accepted: Mapping[str, inspect.Parameter] = inspect.signature(
                final.score).parameters
        except (TypeError, ValueError):
            accepted = {}
        takes_any = any(p.kind == p.VAR_KEYWORD for p in accepted.values())
        refused = [name for name in params if name not in accepted and not takes_any]
        if refused:
            raise TypeError(
                f"{type(final).__name__}.score does not accept {refused}, passed to "
                "Pipeline.score; remove them, or enable metadata routing to route them to "
                "the steps that request them.")
        Xt = self._through_steps(X)
        if sample_weight is not None:
            params = {**params, "sample_weight": sample_weight}
        return final.score(Xt, y, **params)

    def _final_rows(self, X, y, method):
        """``X`` transformed by the steps before the final estimator (coreset steps
        skipped), and ``y``: the rows passed, or copies of the rows the pipeline was
        fitted on."""
        if X is None and y is None:
            kept = getattr(self, "_kept_rows", None)
            if kept is None:
                raise ValueError(
                    f"Pipeline.{method}() has no rows to evaluate: the pipeline keeps "
                    "of the rows it is fitted on only up to 2**24 values, in memory, and "
                    "fitted without metadata (exposure, offset, sample_weight). Pass the "
                    f"rows, e.g. {method}(X, y).")
            X, y = read_copied_rows(kept)
        elif X is None or y is None:
            raise ValueError(f"Pipeline.{method} needs both X and y.")
        return self._through_steps(X), y

    def _through_steps(self, X):
        """``X`` as the final estimator sees it after fit: transformed by every step
        before it (a fitted coreset step passes rows through)."""
        for _, _, transform in self._iter(with_final=False):
            X = transform.transform(X)
        return X

    @available_if(_final_has("to_arviz"))
    def to_arviz(self, X: MatrixLike | None = None, y: VectorLike | None = None,
                 **params: Any) -> Any:
        """The final estimator's ``to_arviz`` with the data groups of all the rows.

        After a coreset step the final estimator saw only the coreset's weighted rows;
        here its ``log_likelihood``, ``posterior_predictive`` and ``observed_data`` groups
        are those of the rows the pipeline was fitted on (kept by ``fit`` up to ``2**24``
        values: copied, or above ``2**20`` values referenced and refused if changed in
        place), or of ``X``, ``y``, transformed by the steps before it.

        Parameters
        ----------
        X : iterable, default=None
            Rows, as the first step expects them; ``None``: the rows fitted on.
        y : iterable, default=None
            Their targets.
        **params : dict of str -> object
            Passed to the final estimator's ``to_arviz`` (``n_draws``, ``exposure``...).
            The coefficients are named as :meth:`summary` names them, unless
            ``feature_names`` is passed.

        Returns
        -------
        data : arviz.InferenceData
        """
        final = self.steps[-1][1]
        if params.get("feature_names") is None and _accepts(final.to_arviz, "feature_names"):
            params = {**params, "feature_names": steps_feature_names(self)}
        return final.to_arviz(*self._final_rows(X, y, "to_arviz"), **params)

    @available_if(_final_has("loo"))
    def loo(self, X: MatrixLike | None = None, y: VectorLike | None = None,
            **params: Any) -> Any:
        """The final estimator's ``loo`` (PSIS-LOO in blocks of rows) over all the rows.

        The rows the pipeline was fitted on (kept by ``fit`` up to ``2**24`` values:
        copied, or above ``2**20`` values referenced and refused if changed in place), or
        ``X``, ``y``, transformed by the steps before the final estimator
        (coreset steps skipped): after a coreset step, the elpd of the whole data under
        the coreset's posterior, comparable with that of a fit on all rows.

        Parameters
        ----------
        X : iterable, default=None
            Rows, as the first step expects them; ``None``: the rows fitted on.
        y : iterable, default=None
            Their targets.
        **params : dict of str -> object
            Passed to the final estimator's ``loo`` (``n_draws``, ``random_state``...).

        Returns
        -------
        loo : LooResult
        """
        return self.steps[-1][1].loo(*self._final_rows(X, y, "loo"), **params)

    @available_if(_final_has("summary"))
    def summary(self, level: float = 0.95, feature_names: VectorLike | None = None) -> Any:
        """The final estimator's ``summary``, its rows named after the features it sees.

        The names are ``get_feature_names_out()`` of the steps before it (e.g. the columns
        of a ``OneHotEncoder`` in a ``ColumnTransformer``; coreset steps pass names
        through), when they all provide it; else the final estimator's own names.

        Parameters
        ----------
        level : float, default=0.95
            Posterior probability inside the credible intervals.
        feature_names : array-like of str, default=None
            Names of the features the final estimator sees, instead of the steps' names.

        Returns
        -------
        summary : PosteriorSummary
            See :meth:`skcoreset.BayesianLogisticRegression.summary`.
        """
        if feature_names is None:
            feature_names = steps_feature_names(self)
        return self.steps[-1][1].summary(level, feature_names=feature_names)

    @available_if(_final_has("credible_interval"))
    def credible_interval(self, level: float = 0.95,
                          feature_names: VectorLike | None = None) -> Any:
        """The final estimator's ``credible_interval``, named as :meth:`summary` names them.

        Parameters
        ----------
        level : float, default=0.95
            Posterior probability inside each interval.
        feature_names : array-like of str, default=None
            Names of the features the final estimator sees, instead of the steps' names.

        Returns
        -------
        intervals : CredibleIntervals
            See :meth:`skcoreset.BayesianLogisticRegression.credible_interval`.
        """
        if feature_names is None:
            feature_names = steps_feature_names(self)
        return self.steps[-1][1].credible_interval(level, feature_names=feature_names)

    def fit_transform(self, X: MatrixLike, y: VectorLike | None = None,
                      **params: Any) -> Any:
        """Fit, then transform all of X (coreset steps skipped).

        Parameters
        ----------
        X : iterable
            Training data, the input of the first step.
        y : iterable, default=None
            Training targets.
        **params : dict of str -> object
            Step parameters as in :meth:`fit`.

        Returns
        -------
        Xt : array-like of shape (n_samples, n_transformed_features)
        """
        return self.fit(X, y, **params).transform(X)

    def fit_predict(self, X: MatrixLike, y: VectorLike | None = None,
                    **params: Any) -> Prediction:
        """Fit, then predict for every row of X (coreset steps skipped).

        Parameters
        ----------
        X : iterable
            Training data, the input of the first step.
        y : iterable, default=None
            Training targets.
        **params : dict of str -> object
            Step parameters as in :meth:`fit`.

        Returns
        -------
        y_pred : ndarray
        """
        return self.fit(X, y, **params).predict(X)

    def _iter(self, with_final=True, filter_passthrough=True):
        # The one hook into scikit-learn's internals: every inference-time method of
        # sklearn's Pipeline walks the steps through _iter(filter_passthrough=True), so
        # treating coreset steps as passthrough there skips them at prediction time.
        for index, name, step in super()._iter(with_final=with_final,
                                               filter_passthrough=filter_passthrough):
            if filter_passthrough and _is_coreset(step):
                continue
            yield index, name, step


def make_pipeline(*steps: Any, verbose: bool = False) -> Pipeline:
    """Build a :class:`Pipeline` from steps, naming them after their lowercased class names.

    Parameters
    ----------
    *steps : list of estimators
        The steps, in order: coreset constructors, transformers and the final estimator.
    verbose : bool, default=False
        Print the time each step takes to fit.

    Returns
    -------
    p : Pipeline

    Examples
    --------
    >>> from skcoreset import UniformCoreset, BayesianLogisticRegression
    >>> from skcoreset.pipeline import make_pipeline
    >>> make_pipeline(UniformCoreset(M=100), BayesianLogisticRegression())
    Pipeline(steps=[('uniformcoreset', UniformCoreset()),
                    ('bayesianlogisticregression', BayesianLogisticRegression())])
    """
    names = [type(step).__name__.lower() for step in steps]
    counts = {name: names.count(name) for name in names}
    seen: defaultdict[str, int] = defaultdict(int)
    unique = []
    for name in names:  # duplicates become name-1, name-2, ... as in scikit-learn
        if counts[name] > 1:
            seen[name] += 1
            name = f"{name}-{seen[name]}"
        unique.append(name)
    return Pipeline(list(zip(unique, steps)), verbose=verbose)
