"""The contract shared by every coreset constructor, and the weighted subset it hands on."""

import inspect
import warnings
from abc import abstractmethod
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..families import FAMILIES, Family, make_family
from .._inference.pass_glm import is_dask_collection
from .._inference._common import prior_precision
from .._docstrings import fill_doc
from .._sklearn_compat import (Interval, StrOptions, _fit_context, _get_output_config,
                               _num_samples)
from .._validation import check_sample_weight


class WeightedSubset(np.ndarray):
    """Rows of a data set with the weights under which they stand in for all of it.

    An ``ndarray`` subclass returned by a coreset constructor's ``transform`` on its training
    data. The estimators of :mod:`skcoreset.linear_model` read ``sample_weight`` and
    ``sample_indices`` from it, so they can follow a coreset step in a plain
    :class:`sklearn.pipeline.Pipeline`. Slicing or computing with it gives plain arrays
    semantics: derived arrays do not carry the weights.

    It never has as many rows as the data it was drawn from: when a coreset keeps every row,
    ``transform`` splits one row into two copies with half its weight each (the weighted
    log-likelihood is unchanged), so an estimator that cannot read the weights fails with a
    sample-count mismatch instead of being fitted unweighted.

    Attributes
    ----------
    sample_weight : ndarray of shape (n_rows,)
        Positive weight of each row.
    sample_indices : ndarray of shape (n_rows,)
        Row indices into the data the coreset was built from.
    n_samples_fit : int or None
        Number of rows of that data (``None`` when unknown).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import UniformCoreset
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> y = np.array([0, 1] * 5)
    >>> subset = UniformCoreset(M=4, random_state=0).fit(X, y).transform(X)
    >>> subset.shape, subset.sample_weight
    ((4, 2), array([2.5, 2.5, 2.5, 2.5]))
    """

    def __new__(cls, rows, sample_weight, sample_indices, n_samples_fit=None):
        obj = np.asarray(rows).view(cls)
        obj.sample_weight = np.asarray(sample_weight, dtype=float)
        obj.sample_indices = np.asarray(sample_indices)
        obj.n_samples_fit = None if n_samples_fit is None else int(n_samples_fit)
        return obj

    def __array_finalize__(self, obj):
        # views and results of operations are not the coreset any more
        self.sample_weight = None
        self.sample_indices = None
        self.n_samples_fit = None

    def __reduce__(self):
        return (WeightedSubset, (np.asarray(self), self.sample_weight, self.sample_indices,
                                 self.n_samples_fit))


class _AttrsArray(np.ndarray):
    """An array stored in ``DataFrame.attrs`` that compares equal as a whole.

    pandas propagates ``attrs`` through ``pd.concat`` only when ``a.attrs == b.attrs``,
    which needs a single bool; plain arrays would make every such concat raise.
    """

    def __eq__(self, other):
        return np.array_equal(np.asarray(self), np.asarray(other))

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = None


def _attrs_array(values):
    return np.array(values).view(_AttrsArray)


def _float_dtypes(X):
    """float64, except that a float32 ``np.memmap`` stays float32: converting it would load
    the whole file into memory (the constructors read X in row chunks)."""
    return [np.float64, np.float32] if isinstance(X, np.memmap) else np.float64


def _take_rows(X, indices):
    """Rows of X (ndarray, DataFrame or dask array; only these rows of a dask array are
    computed and gathered)."""
    if hasattr(X, "iloc"):
        return X.iloc[indices]
    if is_dask_collection(X):
        return np.asarray(X[indices].compute())
    return np.asarray(X)[indices]


def _check_dask_features(estimator, X):
    """The shape checks of ``validate_data`` for a dask array, without computing it."""
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array, got {X.ndim} dimension(s).")
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} is "
                         f"expecting {estimator.n_features_in_} features as input.")


def _frame_weights(frame, attrs):
    """The weights and indices in a coreset DataFrame's ``attrs``, following its rows.

    ``transform`` stores the row labels next to the weights, so a frame that was reordered,
    filtered or concatenated with itself after ``transform`` gets each row's own weight back;
    anything that cannot be matched by label is an error, never a misaligned fit.
    """
    import pandas as pd

    weights = np.asarray(attrs["coreset_sample_weight"], dtype=float)
    indices = np.asarray(attrs["coreset_sample_indices"])
    labels = attrs.get("coreset_row_labels")
    if labels is None:  # attrs written by hand: only positional use is possible
        if len(weights) != len(frame):
            raise ValueError(
                f"The DataFrame carries {len(weights)} coreset weights in attrs but has "
                f"{len(frame)} rows. Fit on the DataFrame the coreset's transform returned, "
                "or pass plain data with an explicit sample_weight.")
        return weights, indices
    labels = pd.Index(np.asarray(labels))
    if frame.index.equals(labels):
        return weights, indices
    table = pd.DataFrame({"weight": weights, "index": indices}, index=labels)
    unique = table[~table.index.duplicated()]
    if len(unique) != len(table.reset_index().drop_duplicates()):
        raise ValueError(
            "The coreset DataFrame was reordered or filtered after transform, and its row "
            "labels are not unique, so its weights (DataFrame.attrs) cannot follow the rows. "
            "Give the data unique row labels before fitting the coreset, or fit on the "
            "DataFrame transform returned.")
    position = unique.index.get_indexer(frame.index)
    if np.any(position < 0):
        raise ValueError(
            f"{int(np.sum(position < 0))} row label(s) of the DataFrame are not rows of the "
            "coreset whose weights it carries in DataFrame.attrs: it was combined with other "
            "rows or relabelled (e.g. reset_index) after transform. Fit on the coreset rows "
            "as transform returned them (reordering and filtering are fine), or pass plain "
            "data with an explicit sample_weight.")
    return unique["weight"].to_numpy()[position], unique["index"].to_numpy()[position]


def _subset_weights(X):
    """``(sample_weight, sample_indices, n_samples_fit)`` carried by a coreset's output, or
    ``None``; for a DataFrame they follow its current rows (see :func:`_frame_weights`)."""
    if isinstance(X, WeightedSubset) and X.sample_weight is not None:
        return X.sample_weight, X.sample_indices, X.n_samples_fit
    attrs = getattr(X, "attrs", None)  # pandas output keeps them in DataFrame.attrs
    if isinstance(attrs, dict) and "coreset_sample_weight" in attrs:
        weights, indices = _frame_weights(X, attrs)
        return weights, indices, attrs.get("coreset_n_samples")
    return None


def _coreset_targets(y, indices, n_rows, n_samples_fit):
    """y for the coreset rows: as given when it has one entry per row, else ``y[indices]``
    when it has one entry per row of the data the coreset was built from."""
    n_y = _num_samples(y)
    if n_y == n_rows:
        return y
    if n_y == n_samples_fit or (n_samples_fit is None and n_y > np.max(indices, initial=-1)):
        return y.iloc[indices] if hasattr(y, "iloc") else np.asarray(y)[indices]
    source = ("the data it was built from" if n_samples_fit is None
              else f"the {n_samples_fit} rows it was built from")
    raise ValueError(
        f"y has {n_y} entries, but X is a coreset's weighted subset of {n_rows} rows drawn "
        f"from {source}. Pass y for the coreset rows ({n_rows} entries) or for all the "
        "data the coreset was fitted on.")


def unpack_weighted_subset(X, y, sample_weight):
    """Read the weights of a coreset's output at the start of an estimator's ``fit``.

    When ``X`` is a :class:`WeightedSubset` (or a DataFrame produced by a coreset with pandas
    output), return plain ``X``, ``y`` for the coreset rows (as given when it has one entry
    per row of ``X``, else its entries at the coreset's ``sample_indices`` when it has one
    per row of the data the coreset was fitted on; any other length is an error) and the
    coreset weights. Otherwise return the inputs unchanged.
    """
    carried = _subset_weights(X)
    if carried is None:
        return X, y, sample_weight
    weights, indices, n_samples_fit = carried
    if sample_weight is not None:
        raise ValueError(
            "X is a coreset's weighted subset, which already carries its sample weights; "
            "pass sample_weight to the coreset step instead of the estimator.")
    X = X.copy() if hasattr(X, "iloc") else np.asarray(X)
    if y is not None:
        y = _coreset_targets(y, indices, _num_samples(X), n_samples_fit)
    return X, y, weights


def _carries_weights(X):
    """Whether X is a coreset's output with its weights (without reading them)."""
    if isinstance(X, WeightedSubset):
        return X.sample_weight is not None
    attrs = getattr(X, "attrs", None)
    return isinstance(attrs, dict) and "coreset_sample_weight" in attrs


def reject_weighted_subset(X):
    """Prediction must see every row: refuse a coreset's weighted subset, loudly."""
    if _carries_weights(X):
        raise ValueError(
            "predict received a coreset's weighted subset instead of the data: a plain "
            "sklearn Pipeline passes its training data through the coreset step. Predict on "
            "other data, or use skcoreset.pipeline.Pipeline, which skips coreset steps at "
            "prediction time.")


# At most this many distinct integer values: as likely class labels as counts.
_FEW_DISTINCT_VALUES = 10


def resolve_model(model, y, *, first_block=False):
    """The likelihood model for ``model="auto"``: binary -> logistic, counts -> poisson,
    continuous -> gaussian (via :func:`sklearn.utils.multiclass.type_of_target`).

    Where y fits two readings a ``UserWarning`` says which model was chosen and how to
    choose explicitly: integer targets with few distinct values (class labels or counts),
    non-negative non-integer targets (measurements, or rates and rounded counts), and, with
    ``first_block=True`` (y is only the first block of a stream, as in ``partial_fit``),
    binary non-negative integers, which later blocks may show to be counts.

    Parameters
    ----------
    model : {"auto", "logistic", "poisson", "gaussian", "negative_binomial"} or Family
        Anything but ``"auto"`` is returned as it is.
    y : array-like of shape (n_samples,)
    first_block : bool, default=False
        Whether y is only the first part of the data.

    Returns
    -------
    model : str or Family
    """
    if not isinstance(model, str) or model != "auto":
        return model
    target_type = type_of_target(y, input_name="y")
    if target_type == "unknown":
        raise ValueError("Unknown label type: model='auto' cannot infer a likelihood from y; "
                         "set model explicitly.")
    y_array = np.asarray(y)
    numeric = y_array.dtype.kind in "iuf"
    if target_type == "binary":
        values = np.unique(y_array)
        if (first_block and numeric and np.all(values >= 0)
                and np.all(values == np.round(values))):
            warnings.warn(
                f"model='auto' infers the logistic model from a first block whose y takes "
                f"only the values {values.tolist()}; if y are counts, later blocks will be "
                "rejected. Set model='logistic' (or pass classes) or model='poisson' "
                "explicitly.", UserWarning, stacklevel=3)
        return "logistic"
    if target_type == "multiclass" and numeric and np.all(y_array >= 0):
        values = np.unique(y_array)
        if len(values) <= _FEW_DISTINCT_VALUES:
            warnings.warn(
                f"model='auto' infers the poisson model from y with {len(values)} distinct "
                f"integer values {values.tolist()}, which may be class labels; skcoreset "
                "has no multi-class model. Set model='poisson' explicitly if y are counts.",
                UserWarning, stacklevel=3)
        return "poisson"
    if target_type == "continuous":
        if np.all(y_array >= 0):
            warnings.warn(
                "model='auto' infers the gaussian model from non-negative, non-integer y; "
                "if y are counts (rates, or counts with rounding error), round them to "
                "integers and set model='poisson'. Set model='gaussian' explicitly to keep "
                "the gaussian model.", UserWarning, stacklevel=3)
        return "gaussian"
    raise ValueError(
        f"model='auto' cannot infer a likelihood from a target of type {target_type!r}; "
        "expected binary labels (logistic), non-negative integer counts (poisson) or "
        "continuous values (gaussian). Set model explicitly.")


def _check_plain_pipeline(coreset, max_depth=10):
    """Refuse, with the fix, a coreset step of a plain sklearn Pipeline whose next step
    cannot read the weighted subset (anything but a skcoreset estimator as final step).

    scikit-learn's Pipeline gives a step no handle on its neighbours, so the calling
    Pipeline is found among the few frames above ``fit_transform``; when it is not found
    (other callers, memory caching clones the step) nothing is checked, and the subset's
    row count still makes a foreign estimator fail (see ``BaseCoreset._output_rows``).
    """
    from sklearn.pipeline import Pipeline as SklearnPipeline

    from ..linear_model import _BaseBayesianGLM
    from ..pipeline import Pipeline as CoresetPipeline

    frame = inspect.currentframe()
    try:
        for _ in range(max_depth):
            frame = frame.f_back
            owner = None if frame is None else frame.f_locals.get("self")
            if frame is None or isinstance(owner, SklearnPipeline):
                break
    finally:
        del frame
    if not isinstance(owner, SklearnPipeline) or isinstance(owner, CoresetPipeline):
        return
    steps = [step for _, step in owner.steps if step is not None and not (
        isinstance(step, str) and step == "passthrough")]
    position = next((i for i, step in enumerate(steps) if step is coreset), None)
    if position is None or position == len(steps) - 1:
        return
    following = steps[position + 1]
    if position + 1 == len(steps) - 1 and isinstance(following, _BaseBayesianGLM):
        return
    raise ValueError(
        f"{type(coreset).__name__} is a step of a plain "
        f"{type(owner).__module__.split('.')[0]} {type(owner).__name__} followed by "
        f"{type(following).__name__}, which cannot read the coreset's weights: it would get "
        "the coreset rows with every target ('inconsistent numbers of samples') or fit "
        "them unweighted. Use skcoreset.pipeline.Pipeline, which hands the coreset rows and "
        "their weights to every later step. (A plain Pipeline works only when the coreset "
        "step is followed directly by a skcoreset estimator as the final step.)")


def check_both_classes(y, sample_weight, indices, fix):
    """A logistic coreset of data with both classes (±1 encoded y) must hold both, or no
    model can be fitted on it; ``fix`` tells the user what to change. (One-class input,
    such as a block of a stream, is left alone.)"""
    positive = sample_weight > 0
    in_data = np.any((y > 0) & positive) and np.any((y < 0) & positive)
    if in_data and len(np.unique(y[indices])) < 2:
        raise ValueError(
            f"The coreset holds rows of only one class, so no logistic model can be fitted "
            f"on it; {fix}")


class BaseCoreset(TransformerMixin, BaseEstimator):
    """Base class of the coreset constructors.

    Subclasses implement :meth:`_build`, which returns the selected rows and their weights;
    this class validates the input, infers the model, applies the prior, stores the fitted
    attributes and implements ``fit_coreset`` and ``transform``.

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

    _parameter_constraints = {
        "M": [Interval(Integral, 1, None, closed="left")],
        "model": [StrOptions({"auto", *FAMILIES}), Family],
        "prior_scale": [Interval(Real, 0, None, closed="neither")],
        "intercept_prior_scale": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, M=100, *, model="auto", prior_scale=1.0, intercept_prior_scale=10.0,
                 fit_intercept=True, random_state=None, verbose=0):
        self.M = M
        self.model = model
        self.prior_scale = prior_scale
        self.intercept_prior_scale = intercept_prior_scale
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose

    @abstractmethod
    def _build(self, X, y, sample_weight, family, prior_prec, rng):
        """Return ``(indices, weights)`` of the coreset for validated, encoded data."""

    def _set_family(self, model):
        """``family_`` and ``model_`` (its name) of a resolved ``model``: a registered name,
        built with this constructor's family parameters, or a Family instance."""
        self.family_ = make_family(model, **self._likelihood_params()._family_params())
        self.model_ = self.family_.name

    def _family_params(self):
        """Parameters of the family given by name (``link``, ``noise_scale``): none here."""
        return {}

    def _encode_target(self, y, classes=None):
        """Validate y for ``family_`` and encode it; sets ``classes_`` (the logistic model's
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

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
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

        Returns
        -------
        self : object
            Fitted constructor.
        """
        if is_dask_collection(X):
            from ._dask import fit_dask  # dask is optional: imported only for dask input

            return fit_dask(self, X, y, sample_weight)
        X, y = validate_data(self, X, y, dtype=_float_dtypes(X), y_numeric=False)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        y_encoded, family, prior_prec = self._likelihood(X, y, sample_weight)
        rng = check_random_state(self.random_state)
        indices, weights = self._build(X, y_encoded, sample_weight, family, prior_prec, rng)
        self._set_coreset(indices, weights, X[indices], X.shape[0])
        return self

    def _likelihood_params(self):
        """The estimator whose ``model``, family parameters, prior scales and
        ``fit_intercept`` define the likelihood: this one (a meta-estimator returns its base)."""
        return self

    def _likelihood(self, X, y, sample_weight):
        """Resolve ``model_`` and ``family_`` from the data; return the encoded y, the family
        and the prior precision."""
        self._set_family(resolve_model(self._likelihood_params().model, y))
        y_encoded = self._encode_target(y)
        self._resolve_family(X, y_encoded, sample_weight)
        return (y_encoded, *self._family_and_prior(X.shape[1]))

    def _resolve_family(self, X, y_encoded, sample_weight):
        """Estimate the parameters of ``family_`` set to "auto" (e.g. the negative binomial
        overdispersion) from the rows given."""
        params = self._likelihood_params()
        self.family_ = self.family_.resolve(X, y_encoded, sample_weight,
                                            prior_prec=self._prior_precision(X.shape[1]),
                                            fit_intercept=params.fit_intercept)

    def _prior_precision(self, n_features):
        params = self._likelihood_params()
        return prior_precision(n_features, prior_scale=params.prior_scale,
                               intercept_prior_scale=params.intercept_prior_scale,
                               fit_intercept=params.fit_intercept)

    def _family_and_prior(self, n_features):
        """The likelihood family ``family_`` and the diagonal prior precision."""
        return self.family_, self._prior_precision(n_features)

    def _set_coreset(self, indices, weights, rows, n_samples):
        """Store the coreset sorted by row index, dropping zero weights.

        ``rows`` are the data rows of ``indices`` (in that order); they are kept so that
        ``transform`` recognises the training data without hashing it.
        """
        keep = weights > 0
        order = np.argsort(indices[keep], kind="stable")
        self.sample_indices_ = np.asarray(indices[keep][order], dtype=np.intp)
        self.sample_weight_ = np.asarray(weights[keep][order], dtype=float)
        self._n_samples_fit = n_samples
        self._coreset_rows = np.asarray(rows, dtype=float)[keep][order]

    def fit_coreset(self, X, y, sample_weight=None):
        """Build the coreset and return it as arrays.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        X_core : ndarray or DataFrame of shape (n_coreset, n_features)
            The selected rows (a DataFrame keeps its row labels).
        y_core : ndarray or Series of shape (n_coreset,)
            Their targets.
        sample_weight_core : ndarray of shape (n_coreset,)
            Their positive weights.
        """
        self.fit(X, y, sample_weight=sample_weight)
        idx = self.sample_indices_
        X_core = self._coreset_rows.copy() if is_dask_collection(X) else _take_rows(X, idx)
        return X_core, _take_rows(y, idx), self.sample_weight_.copy()

    def _is_training_data(self, X):
        """Cheap recognition: same row count and the stored coreset rows in place."""
        if _num_samples(X) != self._n_samples_fit:
            return False
        rows = np.asarray(_take_rows(X, self.sample_indices_), dtype=float)
        return rows.shape == self._coreset_rows.shape and np.array_equal(rows, self._coreset_rows)

    def transform(self, X):
        """The weighted subset on the training data; any other data unchanged.

        A coreset is a training-time operation: prediction must see every row, so ``X``
        that is not the data the constructor was fitted on passes through untouched.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_out : WeightedSubset, DataFrame or array-like
            On the training data, a :class:`WeightedSubset` of the coreset rows carrying
            ``sample_weight`` and ``sample_indices`` (with pandas output or DataFrame input,
            a DataFrame of those rows with the same two arrays in ``DataFrame.attrs``);
            otherwise ``X`` itself.
        """
        check_is_fitted(self)
        if is_dask_collection(X):
            # validating a dask array would compute it: check its shape, then compute only
            # the coreset rows to recognise the training data
            _check_dask_features(self, X)
            if not self._is_training_data(X):
                return X
            rows, weights, idx = self._output_rows()
            return WeightedSubset(self._coreset_rows[rows], weights, idx, self._n_samples_fit)
        validate_data(self, X, dtype=_float_dtypes(X), reset=False)
        if not self._is_training_data(X):
            return X
        rows, weights, idx = self._output_rows()
        pandas_out = _get_output_config("transform", self)["dense"] == "pandas"
        if hasattr(X, "iloc") or pandas_out:
            import pandas as pd

            frame = (X.iloc[idx].copy() if hasattr(X, "iloc")
                     else pd.DataFrame(np.asarray(X)[idx], index=idx,
                                       columns=self.get_feature_names_out()))
            frame.attrs["coreset_sample_weight"] = _attrs_array(weights)
            frame.attrs["coreset_sample_indices"] = _attrs_array(idx)
            # the labels let the weights follow the rows through reordering and filtering
            frame.attrs["coreset_row_labels"] = _attrs_array(frame.index.to_numpy())
            frame.attrs["coreset_n_samples"] = self._n_samples_fit
            return frame
        return WeightedSubset(np.asarray(X)[idx], weights, idx, self._n_samples_fit)

    def _output_rows(self):
        """Positions in the coreset, weights and row indices of ``transform``'s output.

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

    def fit_transform(self, X, y=None, **fit_params):
        """Build the coreset and return its weighted subset of X.

        In a plain :class:`sklearn.pipeline.Pipeline` a coreset step must be followed
        directly by a skcoreset estimator as the final step: any other next step cannot
        read the weights, so this raises a ``ValueError`` naming the fix
        (:class:`skcoreset.pipeline.Pipeline`) instead of failing later on sample counts.

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
            The weighted subset, as :meth:`transform` returns it on the training data.
        """
        _check_plain_pipeline(self)
        return self.fit(X, y, **fit_params).transform(X)

    def get_feature_names_out(self, input_features=None):
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

    def __init__(self, M=100, *, model="auto", link="log", noise_scale=1.0, prior_scale=1.0,
                 intercept_prior_scale=10.0, fit_intercept=True, random_state=None, verbose=0):
        super().__init__(M, model=model, prior_scale=prior_scale,
                         intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, random_state=random_state,
                         verbose=verbose)
        self.link = link
        self.noise_scale = noise_scale

    def _family_params(self):
        return {"link": self.link, "noise_scale": self.noise_scale}


_MODEL_DOC = """
    model : {"auto", "logistic", "poisson", "gaussian", "negative_binomial"} or Family, \
default="auto"
        Likelihood of the data. ``"auto"`` infers it from ``y`` with
        :func:`sklearn.utils.multiclass.type_of_target`: binary -> logistic, non-negative
        integers -> poisson, continuous -> gaussian. A ``UserWarning`` flags the readings
        that could be wrong (at most 10 distinct integers, which may be class labels;
        non-negative non-integer values, which may be rates or rounded counts): set the
        model explicitly to silence it. ``"negative_binomial"`` (overdispersed counts)
        estimates its overdispersion from the data (see
        :class:`~skcoreset.families.NegativeBinomialFamily`). A
        :class:`~skcoreset.families.Family` instance, e.g.
        ``NegativeBinomialFamily(alpha=0.5)`` or ``PoissonFamily(link="softplus")``, sets
        the likelihood with its own parameters.
"""

_FAMILY_PARAMS_DOC = """
    link : {"log", "softplus"}, default="log"
        Poisson rate ``exp(eta)`` or ``log(1 + exp(eta))`` (the coreset papers' choice).
        Used only by the poisson model given by name.

    noise_scale : float, default=1.0
        Known observation noise standard deviation of the gaussian model given by name.
"""

_PRIOR_PARAMS_DOC = """
    prior_scale : float, default=1.0
        Standard deviation of the prior ``N(0, prior_scale^2 I)`` on the coefficients, as in
        the estimators.

    intercept_prior_scale : float, default=10.0
        Standard deviation of the Gaussian prior on the intercept, as in the estimators.

    fit_intercept : bool, default=True
        Whether the model has an intercept (not part of X).

    random_state : int, RandomState instance or None, default=None
        Seed of the constructor's random choices, for reproducible coresets.

    verbose : int, default=0
        Print progress when positive.
"""

COMMON_PARAMS_DOC = _MODEL_DOC + _FAMILY_PARAMS_DOC + _PRIOR_PARAMS_DOC
# the sampling constructors take no family parameters (a Family instance as model has them)
SAMPLING_PARAMS_DOC = _MODEL_DOC + _PRIOR_PARAMS_DOC

COMMON_ATTRS_DOC = """
    sample_indices_ : ndarray of shape (n_coreset,)
        Rows of the training data in the coreset, sorted (``n_coreset <= M``).

    sample_weight_ : ndarray of shape (n_coreset,)
        Their positive weights.

    model_ : str
        The likelihood model used (``model`` with ``"auto"`` resolved; a Family's name).

    family_ : Family
        The likelihood family used, with the parameters estimated from the data (e.g. the
        negative binomial overdispersion ``family_.alpha``).

    classes_ : ndarray of shape (2,)
        The labels of the logistic model (``classes_[1]`` is the positive class). Only
        set for the logistic model.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string feature names.
"""


fill_coreset_doc = fill_doc(common_params=COMMON_PARAMS_DOC, common_attrs=COMMON_ATTRS_DOC)
fill_sampling_doc = fill_doc(common_params=SAMPLING_PARAMS_DOC, common_attrs=COMMON_ATTRS_DOC)
