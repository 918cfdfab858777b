"""The contract shared by every coreset constructor: validation, the likelihood, the row
storage it runs against, and the fitted coreset's ``transform``."""

from abc import ABCMeta, abstractmethod
from functools import partial
from numbers import Integral, Real
from typing import Any, Literal, Self

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import assert_all_finite, check_is_fitted, validate_data


from .._backend import (DaskRows, InMemoryRows, as_row_blocks, dense_rows, float_dtypes,
                        float_rows, is_dask_collection, offset_keyword, take_rows)
from .._dask_predict import exposure_as_weight_lazily, linear_offset_lazily
from .._numbers import is_number
from ..families import BinaryFamily, Family, make_family, model_names
from .._inference import prior_precision, resolve_family
from .._atomic import fit_context
from .._sklearn_compat import Interval, StrOptions, _get_output_config
from .._validation import (ACCEPT_SPARSE, check_numeric_dtypes, check_sample_weight,
                           check_trials, combined_exposure, explained_input_errors,
                           linear_offset)
from ._calibration import laplace_distance
from ._merge_reduce import merge_reduce_chunks
from ._model import builds_for_sampler, likelihood_for, resolve_model
from ._checks import (block_outcomes, warn_if_all_rows, warn_if_far, warn_if_ordered,
                      warn_if_weight_lost)
from ._docs import fill_sampling_doc
from ._subset import WeightedSubset, _attrs_array, weighted_subset
from .._typing import ArrayInput, FloatArray, MatrixLike, RandomStateLike, VectorLike


def _check_dask_features(estimator, X):
    """The shape checks of ``validate_data`` for a dask array, without computing it."""
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array, got {X.ndim} dimension(s).")
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} is "
                         f"expecting {estimator.n_features_in_} features as input.")


def _row_weights(sample_weight, n_samples):
    """Validated weights; unit weights (``None``) as a read-only view of a single 1.0, which
    costs no memory: the rows of a memmap are never all in memory, and N ones need not be
    either."""
    if sample_weight is None:
        return np.broadcast_to(np.float64(1.0), (n_samples,))
    return check_sample_weight(sample_weight, n_samples)


def coreset_targets(coreset, y):
    """The targets of a fitted coreset's rows as it hands them on, from the targets ``y`` it
    was fitted with: the rates ``y / exposure`` it was built for (counts over an exposure),
    the 0/1 outcome of each row (binomial cells), else ``y`` at ``sample_indices_``."""
    if coreset._coreset_outcomes is not None:
        return coreset._coreset_outcomes.copy()
    y_core = take_rows(y, coreset.sample_indices_)
    if coreset._coreset_exposure is not None:
        y_core = y_core / coreset._coreset_exposure
    return y_core


def encode_labels(family, classes, y):
    """Targets encoded by ``family`` with the ``classes`` its ``fit_target`` returned (the
    per-chunk encoder of dask rows, so a module-level function: tasks pickle it)."""
    return family.encode_target(y, classes)


def estimated_dispersion(coreset):
    """The overdispersion a fitted coreset estimated from all its training rows (a
    :class:`~skcoreset._inference.dispersion.Dispersion`: the negative binomial model with
    ``alpha="auto"``), or None. The estimator fitted on the coreset takes it rather than
    estimate it again from the coreset's rows, which are too few to tell the overdispersion
    (a few dozen weighted rows make it the Poisson limit)."""
    if not getattr(coreset, "_dispersion_estimated", False):
        return None
    return getattr(coreset, "_dispersion", None)


class BaseCoreset(TransformerMixin, BaseEstimator, metaclass=ABCMeta):
    """Base class of the coreset constructors.

    An abstract base: subclasses implement :meth:`_build`, which returns the selected rows
    and their weights; this class validates the input, infers the model, applies the prior,
    stores the fitted attributes and implements ``fit_coreset`` and ``transform``.

    ``fit`` hands the validated rows to :meth:`_fit_rows` as a row storage
    (:class:`~skcoreset._backend.InMemoryRows` for arrays and memmaps,
    :class:`~skcoreset._backend.DaskRows` for dask arrays). By default it calls
    :meth:`_build` on in-memory rows and runs merge-reduce over the chunks of dask rows
    (:func:`~skcoreset.coreset._merge_reduce.merge_reduce_chunks`); constructors with an
    algorithm for chunked rows (uniform and sensitivity sampling, streaming) override it.

    Parameters
    ----------
    M : int, default=100
        The budget: the largest number of rows of the coreset (a constructor may select
        fewer).
    {common_params}
    Attributes
    ----------
    {common_attrs}
    Examples
    --------
    A constructor that keeps every other row with weight 2:

    >>> import numpy as np
    >>> from skcoreset.coreset import BaseCoreset
    >>> class EveryOther(BaseCoreset):
    ...     def _build(self, X, y, sample_weight, family, prior_prec, rng):
    ...         indices = np.arange(0, len(X), 2)[:self.M]
    ...         return indices, 2 * sample_weight[indices]
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> EveryOther(M=10).fit(X, [0, 1, 0, 1, 1, 0]).sample_indices_
    array([0, 2, 4])
    """

    # (what happened, what to do) of the warning when a fit chose every row on purpose
    # (see warn_if_all_rows); set by the constructors that do
    _all_rows_reason: tuple[str, str] | None = None

    _parameter_constraints = {
        "M": [Interval(Integral, 1, None, closed="left")],
        "model": [StrOptions(model_names("auto")), Family],
        "prior_scale": [Interval(Real, 0, None, closed="neither")],
        "intercept_prior_scale": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, M: int | Literal["auto"] = 100, *, model: str = "auto",
                 prior_scale: float = 1.0, intercept_prior_scale: float = 10.0,
                 fit_intercept: bool = True,
                 random_state: RandomStateLike = None, verbose: int = 0) -> None:
        self.M = M
        self.model = model
        self.prior_scale = prior_scale
        self.intercept_prior_scale = intercept_prior_scale
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose

    @abstractmethod
    def _build(self, X, y, sample_weight, family, prior_prec, rng):
        """Return ``(indices, weights)`` of the coreset for validated, encoded data.

        The protected hook every constructor implements: ``X`` is an ndarray or a memmap
        (read it in row chunks), ``y`` the encoded targets (±1 for the binary models),
        ``sample_weight`` non-negative; ``family`` and ``prior_prec`` define the likelihood
        and ``rng`` is a ``RandomState``. Merge-reduce calls it on every block and merge.

        Rows with offsets in their linear predictors (the negative binomial model's
        ``exposure`` and ``offset``, a binary model's ``offset``) are handed on with
        ``offset=`` their offsets (:func:`~skcoreset._backend.offset_keyword`): a
        constructor takes ``offset=None`` and adds them to every linear predictor it
        computes; one that does not take it fails on such rows, naming ``offset``, rather
        than ignore them.
        """

    def _fit_rows(self, data, family, prior_prec, rng):
        """The coreset of a row storage as a :class:`~skcoreset._backend.Part`.

        The protected hook ``fit`` calls. In-memory rows go to :meth:`_build`; chunked (dask)
        rows are reduced by merge-reduce over their chunks with this constructor as the
        base, which sets ``weighting_posterior_`` and ``error_`` of Hilbert constructors
        and warns, as :class:`StreamingCoreset` does, when the chunks come in order of the
        outcome (:func:`order_matters`).
        """
        if not data.chunked:
            indices, weights = self._build(data.X, data.y, data.sample_weight, family,
                                           prior_prec, rng, **offset_keyword(data.offset))
            return data.take(indices, weights)
        # each chunk's outcome sums from its leaf task, to tell chunks in order of y
        per_chunk = block_outcomes if order_matters(self) else None
        context, _, root, outcome_sums = merge_reduce_chunks(
            self, self.model_, data, family, prior_prec, rng, self._dispersion_estimated,
            per_chunk)
        warn_if_ordered(
            type(self).__name__, outcome_sums,
            f"the {data.n_chunks} chunks of the dask arrays it merge-reduces",
            "Shuffle the rows before fitting (index the dask arrays by a random permutation "
            "of the rows, e.g. numpy.random.default_rng(0).permutation(n_samples)), or fit "
            "rows that fit in memory as NumPy arrays, with no merge-reduce.")
        if context.thetas is not None:
            self.weighting_posterior_ = context.builder.weighting_posterior_
        if root.error is not None:
            self.error_ = root.error
        return root

    # -- hooks of merge-reduce (StreamingCoreset, dask input) ------------------------------
    def _block_projection(self, n_samples, family, prior_prec, rng, *, full_laplace,
                          subsample):
        """Parameters every block of a merge-reduce tree must share, drawn once, or ``None``.

        Hilbert constructors return the J draws of their weighting distribution, so that
        every block is projected under the same distribution; other constructors share
        nothing. ``full_laplace()`` returns the Laplace posterior of all ``n_samples`` rows
        (computed by sums over rows) and ``subsample(size, rng)`` a uniform ``(X, y, w,
        offset)`` subsample of them (``offset`` None when the rows have none).
        """
        return None

    def _build_block(self, X, y, sample_weight, family, prior_prec, rng, *, thetas=None,
                     target=None, offset=None):
        """Coreset ``(indices, weights)`` of one block of a merge-reduce tree.

        ``thetas`` is what :meth:`_block_projection` returned and ``target`` the projected
        vector of all the data the block stands in for (both ``None`` outside Hilbert
        constructors); ``offset`` the block's offsets, or None. By default the block is
        built like any data, by :meth:`_build`.
        """
        return self._build(X, y, sample_weight, family, prior_prec, rng,
                           **offset_keyword(offset))

    def _set_family(self, model):
        """``family_`` and ``model_`` (its name) of a resolved ``model``: a registered name,
        built with this constructor's family parameters, or a Family instance."""
        params = self._likelihood_params()
        self.family_ = make_family(model, **params._family_params())
        self.model_ = self.family_.name
        self.prior_scale_ = params.prior_scale
        self.intercept_prior_scale_ = params.intercept_prior_scale
        # an overdispersion estimated from the data, which a skcoreset Pipeline hands to the
        # estimator fitted on the coreset (and which may estimate it again from its rows)
        self._dispersion_estimated = (self.family_.unresolved
                                      and hasattr(self.family_, "log_alpha_derivatives"))
        self._dispersion = None  # its estimate, by _resolve_family

    def _family_params(self):
        """Parameters of the family given by name (``link``, ``noise_scale``): none here."""
        return {}

    def _encode_target(self, y, classes=None):
        """Validate y for ``family_`` and encode it; sets ``classes_`` (a binary model's
        labels, from ``classes`` when given, ``classes_[1]`` is +1), removes a stale one."""
        y_encoded, classes = self.family_.fit_target(y, classes)
        if classes is not None:
            self.classes_ = classes
        elif hasattr(self, "classes_"):
            del self.classes_
        return y_encoded

    def _encode_more(self, y):
        """Encode the targets of a later block of a stream as the first were encoded."""
        return self.family_.encode_target(y, getattr(self, "classes_", None))

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: VectorLike, sample_weight: VectorLike | None = None,
            exposure: VectorLike | None = None, offset: VectorLike | None = None,
            n_trials: VectorLike | None = None) -> Self:
        """Build the coreset.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            Training data. A float ``np.memmap`` is read in row chunks without being loaded
            whole. A dask array is processed chunk by chunk where its chunks live and only
            the coreset rows are gathered (see :class:`StreamingCoreset`, Notes).
        y : array-like or dask array of shape (n_samples,)
            Targets: binary labels (logistic), counts (poisson) or real values (gaussian).
        sample_weight : array-like or dask array of shape (n_samples,), default=None
            Non-negative weights: a row with weight w stands for w rows, so a coreset of a
            coreset (or of merged coresets) approximates the original data.
        exposure : float, array-like or dask array of shape (n_samples,), default=None
            Positive exposure of each count y (Poisson model, rows in memory): the coreset
            is built for the rates ``y / exposure`` weighted by ``sample_weight * exposure``,
            whose Poisson likelihood is that of the counts over their exposure for every
            link (:meth:`PoissonFamily.exposure_as_weight
            <skcoreset.families.PoissonFamily.exposure_as_weight>`), and :meth:`fit_coreset`
            returns those rates and weights, from which a Poisson estimator fits the
            posterior of the counts. Routed with metadata routing
            (``set_fit_request(exposure=True)``). The negative binomial likelihood of counts
            over an exposure is not one of weighted rates: its coreset is built with
            ``offset + log(exposure)`` in each row's linear predictor (by every
            constructor, in every linear predictor it computes; rows in memory, a
            ``np.memmap`` or dask arrays, whose offsets travel with their chunks), the
            counts are handed on as they are, and ``sample_offset_`` holds the coreset
            rows' offsets, which :class:`skcoreset.pipeline.Pipeline` passes on as
            ``offset=``.
        offset : float, array-like or dask array of shape (n_samples,), default=None
            A known term of each row's linear predictor: of the count models (log link)
            the exposure ``exp(offset)``, with ``exposure`` too, they add up as ``offset +
            log(exposure)``; of the binary models (any link, also of each cell with
            ``n_trials``), built under as the negative binomial model's.
        n_trials : int or array-like of shape (n_samples,), default=None
            Binomial data (a binary model, rows in memory): each row is a cell of
            ``n_trials`` trials of which ``y`` succeeded. A cell stands for its 0/1 rows as
            at most two weighted rows, of its successes and of its failures (weights ``k``
            and ``n - k`` times ``sample_weight``; :meth:`BinaryFamily.trials_as_rows
            <skcoreset.families.BinaryFamily.trials_as_rows>`), among which the coreset is
            chosen, so 1e4 cells cost what 2e4 rows cost whatever the number of trials.
            ``sample_indices_`` are then the cells of the coreset's rows (a cell may appear
            twice), ``classes_`` is ``[0, 1]``, and :meth:`fit_coreset` returns the rows'
            0/1 outcomes (1 a success), on which a binary estimator fits the posterior of
            the cells. ``model="auto"`` is then the logistic model (or the final
            estimator's). Routed with metadata routing
            (``set_fit_request(n_trials=True)``).

        Returns
        -------
        self : object
            Fitted constructor.
        """
        return self._fit(X, y, sample_weight, exposure, offset, n_trials, likelihood=None)

    @fit_context(prefer_skip_nested_validation=True)
    def _fit_for(self, estimator, X, y, sample_weight, exposure, offset, n_trials=None):
        """:meth:`fit` under the likelihood and prior of ``estimator`` (see
        :func:`likelihood_for`)."""
        return self._fit(X, y, sample_weight, exposure, offset, n_trials,
                         likelihood=likelihood_for(self, estimator),
                         for_sampler=builds_for_sampler(estimator))

    def _fit(self, X, y, sample_weight, exposure, offset, n_trials=None, *, likelihood,
             for_sampler=False):
        """The body of :meth:`fit`; ``likelihood`` (a :class:`FitLikelihood`, or ``None``
        for the constructor's own parameters) is the model the coreset is built under;
        ``for_sampler`` says whether the estimator fitted on it samples its posterior
        (``method="mcmc"``)."""
        self._fit_likelihood = likelihood
        self._for_sampler = for_sampler
        self.__dict__.pop("kl_estimate_", None)  # set again by this fit
        data = self._validated_rows(X, y, sample_weight, exposure, offset, n_trials)
        exposure = getattr(data, "exposure", None)  # rows in memory
        family, prior_prec = self._family_and_prior(data.n_features)
        rng = check_random_state(self.random_state)
        part = self._fit_rows(data, family, prior_prec, rng)
        cells = getattr(data, "cells", None)  # the cell of each row of binomial data
        if cells is None:
            drawn = getattr(data, "hands_on_drawn_targets", False)
            self._set_coreset(part.indices, part.weights, part.X, data.n,
                              outcomes=part.y if drawn else None, offset=part.offset)
        else:
            self._set_coreset(cells[part.indices], part.weights, part.X, data.n_cells,
                              outcomes=(data.y[part.indices] > 0).astype(int),
                              offset=part.offset)
        self._coreset_exposure = None if exposure is None else exposure[self.sample_indices_]
        warn_if_all_rows(self, data)
        warn_if_weight_lost(self, float(np.sum(self.sample_weight_)), data.total_weight())
        mean_error = None
        if "kl_estimate_" not in vars(self):  # the constructor did not estimate it itself
            self.kl_estimate_, mean_error = laplace_distance(
                data, part.X, part.y, part.weights, family, prior_prec,
                self._likelihood_params().fit_intercept, offset=part.offset)
        warn_if_far(self, self.kl_estimate_, mean_error)
        if self.verbose and data.chunked:
            error = "" if part.error is None else f", error {part.error:.3e}"
            print(f"[{type(self).__name__}] dask: {data.n_chunks} chunks, {data.n} rows, "
                  f"coreset size {len(self.sample_indices_)}{error}")
        return self

    def _validated_rows(self, X, y, sample_weight, exposure=None, offset=None,
                        n_trials=None):
        """Validate the input; set ``model_``, ``family_``, ``classes_``, ``n_features_in_``;
        return the rows as a storage with encoded targets (of binomial data, the weighted
        rows of its cells' successes and failures, with ``cells``, see :meth:`_trial_rows`).

        A dask array is validated from a one-pass summary of y and the weights (a "witness"
        of y's type and the extreme weights, see :class:`~skcoreset._backend.DaskRows`),
        with the checks and messages of in-memory input; non-finite X raises inside the
        first task that reads it. Family parameters estimated from data (the negative
        binomial ``alpha="auto"``) are estimated from the rows in memory, or from the first
        chunk of a dask array, the overdispersion then refined on all of them.
        """
        if not is_dask_collection(X):
            with explained_input_errors():
                X, y = validate_data(self, X, y, dtype=float_dtypes(X), y_numeric=False,
                                     accept_sparse=ACCEPT_SPARSE)
            sample_weight = _row_weights(sample_weight, X.shape[0])
            if n_trials is not None:
                return self._trial_rows(X, y, sample_weight, exposure, offset, n_trials)
            self._set_family(resolve_model(self._likelihood_params().model, y))
            y_encoded = self._encode_target(y)
            if hasattr(self.family_, "exposure_as_weight"):
                exposure = self._rates_over_exposure(exposure, offset, X.shape[0])
                offset = None
            else:
                offset = self._linear_offset(exposure, offset, X.shape[0])
                exposure = None
            if exposure is not None:
                y_encoded, sample_weight, _ = self.family_.exposure_as_weight(
                    y_encoded, sample_weight, exposure)
            rows = InMemoryRows(X, y_encoded, sample_weight, offset)
            self._resolve_family(X, y_encoded, sample_weight, offset, rows=rows)
            rows.exposure = exposure
            return rows
        if n_trials is not None:
            raise ValueError(
                f"n_trials of {type(self).__name__} is supported for rows in memory (a "
                "table of cells is small): compute the dask arrays first.")
        check_numeric_dtypes(exposure=exposure, offset=offset)
        X = as_row_blocks(X)
        data = DaskRows.from_arrays(X, y, sample_weight)
        self.n_features_in_ = data.n_features
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        summary = data.summary  # its weights were checked per chunk and in total
        if summary.witness.dtype.kind in "fc":
            assert_all_finite(summary.witness, input_name="y")
        self._set_family(resolve_model(self._likelihood_params().model, summary.witness))
        self._encode_target(summary.witness)  # target checks; sets classes_ of a binary model
        rates_on_chunks = False
        if exposure is not None or offset is not None:
            # offset + log(exposure), checked in the tasks that read them
            log_exposure = linear_offset_lazily(X, exposure, offset, self._offset_link())
            if hasattr(self.family_, "exposure_as_weight"):
                # counts over an exposure as rates weighted by it (exact for every link),
                # computed where the chunks live, as in memory
                rates, weights, _ = exposure_as_weight_lazily(self.family_, X, y,
                                                              sample_weight, log_exposure)
                data, rates_on_chunks = DaskRows.from_arrays(X, rates, weights), True
            else:  # in the rows' linear predictors
                data = data.with_offset(log_exposure)
        data = data.encoded(partial(encode_labels, self.family_, getattr(self, "classes_", None)))
        data.hands_on_drawn_targets = rates_on_chunks  # the rates, not y at the indices
        if self.family_.unresolved:  # parameters estimated from data: the first chunk's
            # pilot, the overdispersion refined on all the chunks
            self._resolve_family(*data.first_chunk(), rows=data)
        return data

    def _trial_rows(self, X, y, sample_weight, exposure, offset, n_trials):
        """The rows of binomial cells, ``y`` successes out of ``n_trials``: at most two per
        cell, of its successes (+1, weight ``k``) and failures (-1, weight ``n - k``), times
        ``sample_weight``; ``cells``, the cell of each row, and ``n_cells`` map them back;
        each row has its cell's ``offset``."""
        if exposure is not None:
            raise ValueError("exposure is of the count models; n_trials is of the binary "
                             "models: pass one or the other (a binary model takes offset).")
        model = self._likelihood_params().model
        self._set_family("logistic" if isinstance(model, str) and model == "auto" else model)
        if not self.family_.binary:
            raise ValueError(
                f"n_trials is of the binary models (successes out of trials); "
                f"{type(self).__name__} is built under the {self.model_} model. Use "
                "model='auto', 'logistic' or 'probit'.")
        successes, n_trials = check_trials(y, n_trials, X.shape[0])
        rows, y_encoded, weights, _ = BinaryFamily.trials_as_rows(successes, n_trials,
                                                                  sample_weight)
        if not (np.any(y_encoded > 0) and np.any(y_encoded < 0)):
            raise ValueError(
                "With n_trials, y holds no {} on any row; the {} model needs both "
                "successes and failures.".format(
                    "successes" if np.all(y_encoded < 0) else "failures", self.model_))
        self.classes_ = np.array([0, 1])
        X_rows = take_rows(X, rows)
        offset = self._linear_offset(None, offset, X.shape[0])
        offset = None if offset is None else offset[rows]
        self._resolve_family(X_rows, y_encoded, weights, offset)
        data = InMemoryRows(X_rows, y_encoded, weights, offset)
        data.exposure = None
        data.cells, data.n_cells = rows, X.shape[0]
        return data

    def _rates_over_exposure(self, exposure, offset, n_samples):
        """The exposure of the counts (from ``exposure`` and ``offset``), or None, of a
        family that fits counts over an exposure as weighted rates (the Poisson model)."""
        return combined_exposure(exposure, offset, n_samples, self.family_.link.name)

    def _linear_offset(self, exposure, offset, n_samples):
        """The offsets ``offset + log(exposure)`` in the rows' linear predictors, or None,
        of a family whose likelihood of counts over an exposure is not one of weighted rates
        (the negative binomial model), or the offsets of a binary model: the one
        representation, under which every constructor builds (:meth:`_build` takes them as
        ``offset=``)."""
        return linear_offset(exposure, offset, n_samples, self._offset_link())

    def _offset_link(self):
        """The link name offsets are checked against (of counts, the log link only), or
        None for a binary model, whose offset is a term of the linear predictor of any
        link."""
        return None if self.family_.binary else self.family_.link.name

    def _far_advice(self):
        """What to change when the coreset is far from the posterior (:func:`warn_if_far`)."""
        return (f"Increase M (now {self.M}), or use QuasiNewtonCoreset(M='auto'), which "
                "sizes the coreset for a target accuracy (target_kl)")

    def _budget(self):
        """``M`` as a number of rows, or None (``"auto"``)."""
        return self.M if is_number(self.M, Integral) else None

    def _likelihood_params(self):
        """What defines the likelihood (``model``, family parameters, prior scales and
        ``fit_intercept``): the :class:`FitLikelihood` of the estimator the coreset is built
        for, or the constructor's own parameters (:meth:`_own_likelihood_params`)."""
        fitted = self.__dict__.get("_fit_likelihood")
        return self._own_likelihood_params() if fitted is None else fitted

    def _own_likelihood_params(self):
        """The estimator whose parameters define the likelihood: this one (a meta-estimator
        returns its base)."""
        return self

    def _resolve_family(self, X, y_encoded, sample_weight, offset=None, rows=None):
        """Estimate the parameters of ``family_`` set to "auto" (e.g. the negative binomial
        overdispersion) from the rows given (with their offsets), the overdispersion refined
        on all ``rows`` (a storage) when given; its estimate is kept for the estimator
        fitted on the coreset (:func:`estimated_dispersion`)."""
        params = self._likelihood_params()
        self.family_, self._dispersion = resolve_family(
            self.family_, X, y_encoded, sample_weight,
            prior_prec=self._prior_precision(X.shape[1]),
            fit_intercept=params.fit_intercept, offset=offset, return_dispersion=True,
            rows=rows)

    def _prior_precision(self, n_features):
        params = self._likelihood_params()
        return prior_precision(n_features, prior_scale=params.prior_scale,
                               intercept_prior_scale=params.intercept_prior_scale,
                               fit_intercept=params.fit_intercept)

    def _family_and_prior(self, n_features):
        """The likelihood family ``family_`` and the diagonal prior precision."""
        return self.family_, self._prior_precision(n_features)

    def _set_coreset(self, indices, weights, rows, n_samples, outcomes=None, offset=None):
        """Store the coreset sorted by row index, dropping zero weights.

        ``rows`` are the data rows of ``indices`` (in that order); they are kept so that
        ``transform`` recognises the training data without hashing it. ``outcomes``: the
        target each row hands on where it is not y at its index, or None: the 0/1 outcome
        of binomial cells (whose y are their successes; a cell's successes first), or the
        rate of counts over an exposure computed on dask chunks;
        ``offset``: the rows' offsets in the linear predictor (``sample_offset_``), or None.
        """
        keep = weights > 0
        order = (np.argsort(indices[keep], kind="stable") if outcomes is None
                 else np.lexsort((-outcomes[keep], indices[keep])))  # a cell's successes first
        self.sample_indices_ = np.asarray(indices[keep][order], dtype=np.intp)
        self.sample_weight_ = np.asarray(weights[keep][order], dtype=float)
        self._coreset_outcomes = None if outcomes is None else outcomes[keep][order]
        self.sample_offset_ = None if offset is None else offset[keep][order]
        self._n_samples_fit = n_samples
        # all of them in order (the whole data): kept as they are, not copied
        self._coreset_rows = take_rows(float_rows(rows), np.flatnonzero(keep)[order])

    def fit_coreset(self, X: MatrixLike, y: VectorLike,
                    sample_weight: VectorLike | None = None,
                    exposure: VectorLike | None = None,
                    offset: VectorLike | None = None,
                    n_trials: VectorLike | None = None, *,
                    estimator: Any = None) -> tuple[Any, Any, FloatArray]:
        """Build the coreset and return it as arrays.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows: a row of weight w stands for w rows.
        exposure, offset : float or array-like of shape (n_samples,), default=None
            Of count targets, as in :meth:`fit`.
        n_trials : int or array-like of shape (n_samples,), default=None
            Of binomial cells, y their successes, as in :meth:`fit`.
        estimator : estimator, default=None
            The estimator that will be fitted on the coreset (a
            :class:`skcoreset.pipeline.Pipeline` passes its final step). With
            ``model="auto"`` the coreset is built under its likelihood (family, link,
            overdispersion) and prior scales, so that ``family_`` and ``kl_estimate_`` are
            those of the posterior it will be used for; an explicit ``model``, prior scale
            or ``fit_intercept`` that disagrees with it issues a
            :class:`~skcoreset.exceptions.ModelMismatchWarning` naming both. Only
            skcoreset's estimators say their model (``get_family``); others are ignored.

        Returns
        -------
        X_core : ndarray, CSR matrix or DataFrame of shape (n_coreset, n_features)
            The selected rows (a DataFrame keeps its row labels; sparse rows stay sparse).
            A coreset of every row is X itself (as an ndarray or a CSR matrix), not a copy.
        y_core : ndarray or Series of shape (n_coreset,)
            Their targets: with ``exposure`` or ``offset`` of the Poisson model, the rates
            ``y / exposure`` (of the negative binomial model, the counts, whose offsets are
            ``sample_offset_``);
            with ``n_trials``, the 0/1 outcome of each row (1 for its cell's successes).
        sample_weight_core : ndarray of shape (n_coreset,)
            Their positive weights.
        """
        if estimator is None:
            self.fit(X, y, sample_weight=sample_weight, exposure=exposure, offset=offset,
                     n_trials=n_trials)
        else:
            self._fit_for(estimator, X, y, sample_weight, exposure, offset, n_trials)
        idx = self.sample_indices_
        X_core = self._coreset_rows.copy() if is_dask_collection(X) else take_rows(X, idx)
        return X_core, coreset_targets(self, y), self.sample_weight_.copy()

    def transform(self, X: MatrixLike) -> Any:
        """Return X unchanged (after checking its features): a coreset acts at fit time only.

        A coreset is a training-time operation: the weighted subset is handed on by
        :meth:`fit_transform` (as a Pipeline's ``fit`` calls it), while everything a fitted
        Pipeline computes afterwards, predictions and scores on test or training data
        (``GridSearchCV(return_train_score=True)``), must see every row.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            Data with the features the constructor was fitted on.

        Returns
        -------
        X_out : array-like
            ``X`` itself (a DataFrame with pandas output, see ``set_output``).
        """
        check_is_fitted(self)
        if is_dask_collection(X):
            _check_dask_features(self, X)  # validating a dask array would compute it
        else:
            validate_data(self, X, dtype=float_dtypes(X), reset=False,
                          accept_sparse=ACCEPT_SPARSE)
        return X

    def _weighted_subset(self, X):
        """The coreset rows of the training data X with their weights, as handed on.

        A :class:`WeightedSubset` carrying ``sample_weight`` and ``sample_indices`` (with
        pandas output or DataFrame input, a DataFrame of the rows with the same two arrays
        in ``DataFrame.attrs``).
        """
        rows, weights, idx = self._output_rows()
        if is_dask_collection(X):
            return WeightedSubset(self._coreset_rows[rows], weights, idx, self._n_samples_fit)
        pandas_out = _get_output_config("transform", self)["dense"] == "pandas"
        if hasattr(X, "iloc") or pandas_out:
            import pandas as pd

            frame = (X.iloc[idx].copy() if hasattr(X, "iloc")
                     else pd.DataFrame(dense_rows(take_rows(X, idx)), index=idx,
                                       columns=self.get_feature_names_out()))
            frame.attrs["coreset_sample_weight"] = _attrs_array(weights)
            frame.attrs["coreset_sample_indices"] = _attrs_array(idx)
            # the labels let the weights follow the rows through reordering and filtering
            frame.attrs["coreset_row_labels"] = _attrs_array(frame.index.to_numpy())
            frame.attrs["coreset_n_samples"] = self._n_samples_fit
            return frame
        return weighted_subset(take_rows(X, idx), weights, idx, self._n_samples_fit)

    def _output_rows(self):
        """Positions in the coreset, weights and row indices of ``fit_transform``'s output.

        When the coreset keeps every training row, its first row is split into two copies
        with half the weight each: the weighted log-likelihood is unchanged, but the output
        has N + 1 rows, so an estimator that cannot read the weights (e.g. after a coreset
        step in a plain sklearn Pipeline) fails on the sample count instead of silently
        fitting the N rows unweighted.
        """
        rows = np.arange(len(self.sample_indices_))
        weights = self.sample_weight_.copy()
        if len(rows) == self._n_samples_fit:
            rows = np.concatenate([rows[:1], rows])
            weights = np.concatenate([weights[:1] / 2, weights[:1] / 2, weights[1:]])
        return rows, weights, self.sample_indices_[rows]

    def fit_transform(self, X: MatrixLike, y: VectorLike | None = None,
                      **fit_params: Any) -> Any:
        """Build the coreset and return its weighted subset of X.

        This is how the coreset reaches the next step of a Pipeline, whose ``fit`` calls
        ``fit_transform``; :meth:`transform`, which a fitted Pipeline calls to predict and
        score, returns the data unchanged. The weights travel with the rows
        (:class:`WeightedSubset`), and only the skcoreset estimators read them: in a plain
        :class:`sklearn.pipeline.Pipeline` a coreset step must be followed directly by a
        skcoreset estimator as the final step. Any other estimator fails on the sample
        count (the subset never has as many rows as ``y``) instead of being fitted
        unweighted; :class:`skcoreset.pipeline.Pipeline` hands the rows and their weights
        to every later step.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Targets.
        **fit_params : dict
            Passed to :meth:`fit` (e.g. ``sample_weight``).

        Returns
        -------
        X_out : WeightedSubset or DataFrame
            The coreset rows as a :class:`WeightedSubset` carrying ``sample_weight`` and
            ``sample_indices`` (with pandas output or DataFrame input, a DataFrame of those
            rows with the same two arrays in ``DataFrame.attrs``). When the coreset keeps
            every row, one row is split into two halves of its weight (N + 1 rows), so that
            an estimator that cannot read the weights fails on the sample count.
        """
        if fit_params.get("n_trials") is not None:
            raise ValueError(
                "n_trials of a coreset step needs skcoreset.pipeline.Pipeline, which hands "
                "the next step the 0/1 outcomes of the coreset's rows: the weighted subset "
                "of fit_transform carries the rows and weights only, and the next step would "
                "read the successes.")
        if fit_params.get("exposure") is not None or fit_params.get("offset") is not None:
            raise ValueError(
                "exposure and offset of a coreset step need skcoreset.pipeline.Pipeline, "
                "which hands the next step the coreset's rates y / exposure (Poisson) or its "
                "rows' offsets (negative binomial): the weighted subset of fit_transform "
                "carries the rows and weights only, and the next step would read the counts "
                "without their exposure.")
        self.fit(X, y, **fit_params)
        return self._weighted_subset(X)

    def get_feature_names_out(self,
                              input_features: ArrayInput | None = None) -> NDArray[np.object_]:
        """Feature names pass through unchanged (a coreset selects rows, not columns).

        Parameters
        ----------
        input_features : array-like of str, default=None
            Input feature names; defaults to ``feature_names_in_`` or ``x0, x1, ...``.

        Returns
        -------
        feature_names_out : ndarray of str
        """
        check_is_fitted(self)
        if input_features is None:
            input_features = getattr(self, "feature_names_in_",
                                     [f"x{i}" for i in range(self.n_features_in_)])
        elif len(input_features) != self.n_features_in_:
            raise ValueError(f"input_features has {len(input_features)} names but the "
                             f"constructor was fitted on {self.n_features_in_} features.")
        return np.asarray(input_features, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = True  # scipy.sparse X, as CSR (ACCEPT_SPARSE)
        return tags


class LikelihoodCoreset(BaseCoreset):
    """Base class of the constructors whose construction evaluates the likelihood.

    Adds the parameters of the families given by name, ``link`` (poisson) and
    ``noise_scale`` (gaussian), to those of :class:`BaseCoreset`. The sampling
    constructors (uniform, sensitivity) do not evaluate the likelihood and do not take them;
    a Family instance as ``model`` carries its own parameters everywhere.
    """

    _parameter_constraints = {
        **BaseCoreset._parameter_constraints,
        "link": [StrOptions({"log", "softplus"})],
        "noise_scale": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, M: int | Literal["auto"] = 100, *, model: str = "auto", link: str = "log",
                 noise_scale: float = 1.0, prior_scale: float = 1.0,
                 intercept_prior_scale: float = 10.0, fit_intercept: bool = True,
                 random_state: RandomStateLike = None, verbose: int = 0) -> None:
        super().__init__(M, model=model, prior_scale=prior_scale,
                         intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, random_state=random_state,
                         verbose=verbose)
        self.link = link
        self.noise_scale = noise_scale

    def _family_params(self):
        return {"link": self.link, "noise_scale": self.noise_scale}


def order_matters(base):
    """Whether merge-reduce with ``base`` suffers from blocks that come in order of their
    outcome: constructors that fit the log-likelihood block by block do (a block of one
    outcome does not locate the posterior); uniform and sensitivity sampling draw the same
    subsets in law whatever the order."""
    return isinstance(base, LikelihoodCoreset)


fill_sampling_doc(BaseCoreset)
