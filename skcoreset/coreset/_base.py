"""The contract shared by every coreset constructor, and the weighted subset it hands on."""

from abc import abstractmethod
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from .._families import make_family
from .._inference.pass_glm import is_dask_collection
from .._inference._common import prior_precision
from .._docstrings import fill_doc
from .._sklearn_compat import (Interval, StrOptions, _fit_context, _get_output_config,
                               _num_samples)
from .._validation import check_counts, check_sample_weight


class WeightedSubset(np.ndarray):
    """Rows of a data set with the weights under which they stand in for all of it.

    An ``ndarray`` subclass returned by a coreset constructor's ``transform`` on its training
    data. The estimators of :mod:`skcoreset.linear_model` read ``sample_weight`` and
    ``sample_indices`` from it, so they can follow a coreset step in a plain
    :class:`sklearn.pipeline.Pipeline`. Slicing or computing with it gives plain arrays
    semantics: derived arrays do not carry the weights.

    Attributes
    ----------
    sample_weight : ndarray of shape (n_rows,)
        Positive weight of each row.
    sample_indices : ndarray of shape (n_rows,)
        Row indices into the data the coreset was built from.

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

    def __new__(cls, rows, sample_weight, sample_indices):
        obj = np.asarray(rows).view(cls)
        obj.sample_weight = np.asarray(sample_weight, dtype=float)
        obj.sample_indices = np.asarray(sample_indices)
        return obj

    def __array_finalize__(self, obj):
        # views and results of operations are not the coreset any more
        self.sample_weight = None
        self.sample_indices = None

    def __reduce__(self):
        return (WeightedSubset, (np.asarray(self), self.sample_weight, self.sample_indices))


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


def _subset_weights(X):
    """``(sample_weight, sample_indices)`` carried by a coreset's output, or ``None``."""
    if isinstance(X, WeightedSubset) and X.sample_weight is not None:
        return X.sample_weight, X.sample_indices
    attrs = getattr(X, "attrs", None)  # pandas output keeps them in DataFrame.attrs
    if isinstance(attrs, dict) and "coreset_sample_weight" in attrs:
        return attrs["coreset_sample_weight"], attrs["coreset_sample_indices"]
    return None


def unpack_weighted_subset(X, y, sample_weight):
    """Read the weights of a coreset's output at the start of an estimator's ``fit``.

    When ``X`` is a :class:`WeightedSubset` (or a DataFrame produced by a coreset with pandas
    output), return plain ``X``, ``y`` restricted to the coreset rows (unless it already has
    one entry per row of ``X``) and the coreset weights. Otherwise return the inputs unchanged.
    """
    carried = _subset_weights(X)
    if carried is None:
        return X, y, sample_weight
    weights, indices = carried
    if sample_weight is not None:
        raise ValueError(
            "X is a coreset's weighted subset, which already carries its sample weights; "
            "pass sample_weight to the coreset step instead of the estimator.")
    X = X.copy() if hasattr(X, "iloc") else np.asarray(X)
    if y is not None and _num_samples(y) != _num_samples(X):
        y = y.iloc[indices] if hasattr(y, "iloc") else np.asarray(y)[indices]
    return X, y, weights


def reject_weighted_subset(X):
    """Prediction must see every row: refuse a coreset's weighted subset, loudly."""
    if _subset_weights(X) is not None:
        raise ValueError(
            "predict received a coreset's weighted subset instead of the data: a plain "
            "sklearn Pipeline passes its training data through the coreset step. Predict on "
            "other data, or use skcoreset.pipeline.Pipeline, which skips coreset steps at "
            "prediction time.")


def resolve_model(model, y):
    """The likelihood model for ``model="auto"``: binary -> logistic, counts -> poisson,
    continuous -> gaussian (via :func:`sklearn.utils.multiclass.type_of_target`)."""
    if model != "auto":
        return model
    target_type = type_of_target(y, input_name="y")
    if target_type == "unknown":
        raise ValueError("Unknown label type: model='auto' cannot infer a likelihood from y; "
                         "set model explicitly.")
    if target_type == "binary":
        return "logistic"
    y_array = np.asarray(y)
    if target_type == "multiclass" and y_array.dtype.kind in "iuf" and np.all(y_array >= 0):
        return "poisson"
    if target_type == "continuous":
        return "gaussian"
    raise ValueError(
        f"model='auto' cannot infer a likelihood from a target of type {target_type!r}; "
        "expected binary labels (logistic), non-negative integer counts (poisson) or "
        "continuous values (gaussian). Set model explicitly.")


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
        "model": [StrOptions({"auto", "logistic", "poisson", "gaussian"})],
        "link": [StrOptions({"log", "softplus"})],
        "noise_scale": [Interval(Real, 0, None, closed="neither")],
        "prior_scale": [Interval(Real, 0, None, closed="neither")],
        "intercept_prior_scale": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, M=100, *, model="auto", link="log", noise_scale=1.0, prior_scale=1.0,
                 intercept_prior_scale=10.0, fit_intercept=True, random_state=None, verbose=0):
        self.M = M
        self.model = model
        self.link = link
        self.noise_scale = noise_scale
        self.prior_scale = prior_scale
        self.intercept_prior_scale = intercept_prior_scale
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose

    @abstractmethod
    def _build(self, X, y, sample_weight, family, prior_prec, rng):
        """Return ``(indices, weights)`` of the coreset for validated, encoded data."""

    def _encode_target(self, y):
        """Validate y for the resolved model; labels become ±1 (``classes_[1]`` is +1)."""
        if self.model_ == "logistic":
            self.classes_ = np.unique(y)
            if len(self.classes_) != 2:
                raise ValueError(
                    f"The logistic model needs exactly two classes in y; got "
                    f"{len(self.classes_)} class{'es' if len(self.classes_) != 1 else ''}.")
            return np.where(y == self.classes_[1], 1.0, -1.0)
        if self.model_ == "poisson":
            return check_counts(y)
        y = np.asarray(y, dtype=float)
        if not np.all(np.isfinite(y)):
            raise ValueError("Input y contains NaN or infinity.")
        return y

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
        y_encoded, family, prior_prec = self._likelihood(y, X.shape[1])
        rng = check_random_state(self.random_state)
        indices, weights = self._build(X, y_encoded, sample_weight, family, prior_prec, rng)
        self._set_coreset(indices, weights, X[indices], X.shape[0])
        return self

    def _likelihood_params(self):
        """The estimator whose ``model``, ``link``, ``noise_scale``, prior scales and
        ``fit_intercept`` define the likelihood: this one (a meta-estimator returns its base)."""
        return self

    def _likelihood(self, y, n_features):
        """Resolve ``model_`` from y; return the encoded y, the family and the prior precision."""
        self.model_ = resolve_model(self._likelihood_params().model, y)
        y_encoded = self._encode_target(y)
        return (y_encoded, *self._family_and_prior(n_features))

    def _family_and_prior(self, n_features):
        """The likelihood family of ``model_`` and the diagonal prior precision."""
        params = self._likelihood_params()
        family = make_family(self.model_, link=params.link, noise_scale=params.noise_scale)
        prior_prec = prior_precision(n_features, prior_scale=params.prior_scale,
                                     intercept_prior_scale=params.intercept_prior_scale,
                                     fit_intercept=params.fit_intercept)
        return family, prior_prec

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
            return WeightedSubset(self._coreset_rows.copy(), self.sample_weight_,
                                  self.sample_indices_)
        validate_data(self, X, dtype=_float_dtypes(X), reset=False)
        if not self._is_training_data(X):
            return X
        idx = self.sample_indices_
        pandas_out = _get_output_config("transform", self)["dense"] == "pandas"
        if hasattr(X, "iloc") or pandas_out:
            import pandas as pd

            frame = (X.iloc[idx].copy() if hasattr(X, "iloc")
                     else pd.DataFrame(np.asarray(X)[idx], index=idx,
                                       columns=self.get_feature_names_out()))
            frame.attrs["coreset_sample_weight"] = self.sample_weight_.copy()
            frame.attrs["coreset_sample_indices"] = idx.copy()
            return frame
        return WeightedSubset(np.asarray(X)[idx], self.sample_weight_, idx)

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


COMMON_PARAMS_DOC = """
    model : {"auto", "logistic", "poisson", "gaussian"}, default="auto"
        Likelihood of the data. ``"auto"`` infers it from ``y`` with
        :func:`sklearn.utils.multiclass.type_of_target`: binary -> logistic, non-negative
        integers -> poisson, continuous -> gaussian.

    link : {"log", "softplus"}, default="log"
        Poisson rate ``exp(eta)`` or ``log(1 + exp(eta))`` (the coreset papers' choice).
        Used only by the poisson model.

    noise_scale : float, default=1.0
        Known observation noise standard deviation of the gaussian model.

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

COMMON_ATTRS_DOC = """
    sample_indices_ : ndarray of shape (n_coreset,)
        Rows of the training data in the coreset, sorted (``n_coreset <= M``).

    sample_weight_ : ndarray of shape (n_coreset,)
        Their positive weights.

    model_ : str
        The likelihood model used (``model`` with ``"auto"`` resolved).

    classes_ : ndarray of shape (2,)
        The labels of the logistic model (``classes_[1]`` is the positive class). Only
        set for the logistic model.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string feature names.
"""


fill_coreset_doc = fill_doc(common_params=COMMON_PARAMS_DOC, common_attrs=COMMON_ATTRS_DOC)
