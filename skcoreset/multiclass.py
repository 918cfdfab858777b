"""Multi-class classification with posterior uncertainty.

:class:`sklearn.multiclass.OneVsRestClassifier` fits one binary classifier per class, but its
``predict_proba`` takes no ``return_std``: the posterior uncertainty of the binary models is
lost. :class:`BayesianOneVsRestClassifier` keeps it.
"""

from collections.abc import Iterator
from numbers import Integral
from typing import Any, Self

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.metrics import accuracy_score
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._design import linear_predictor
from ._numbers import is_number
from ._summary import PosteriorSummary
from ._atomic import fit_context
from ._sklearn_compat import HasMethods, Interval
from ._validation import (ACCEPT_SPARSE, check_sample_weight, explained_input_errors,
                          linear_offset)
from .coreset._subset import reject_weighted_subset, unpack_weighted_subset
from .linear_model import (BayesianBinaryRegression, BayesianLogisticRegression,
                           BayesianProbitRegression)
from ._typing import FloatArray, MatrixLike, Prediction, RandomStateLike, VectorLike

__all__ = ["BayesianOneVsRestClassifier"]

_CHUNK_ELEMENTS = 2**20  # rows x draws x classes per block of predict_proba


class BayesianOneVsRestClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """One-vs-rest multi-class classifier that keeps the posterior uncertainty.

    Fits one binary :class:`~skcoreset.BayesianLogisticRegression` (or
    :class:`~skcoreset.BayesianProbitRegression`) per class (that class
    against all others, with the same ``sample_weight``), as
    :class:`sklearn.multiclass.OneVsRestClassifier` does, and predicts class probabilities
    with their posterior standard deviations.

    With ``K >= 3`` classes, ``predict_proba`` draws ``n_draws`` parameter vectors from each
    binary posterior (independent, as the binary models are fitted separately), computes
    every class's probability ``p_k = F(x . coef_k + intercept_k + offset)`` (``F`` the
    inverse link: the sigmoid, ``Phi`` for probit; ``offset`` the row's known term, 0 unless
    given to ``fit`` and the predictions) for each draw,
    normalises them to sum to one **per draw**, ``q_k = p_k / sum_j p_j``, and returns the
    Monte Carlo mean and standard deviation of ``q_k`` over the draws. The mean is the
    posterior expectation of the normalised one-vs-rest probability (up to a Monte Carlo
    error of about ``std / sqrt(n_draws)``) and the standard deviation is its posterior
    standard deviation. The draws are seeded once at ``fit`` (from ``random_state``), so
    repeated calls, and any subset of the rows, give the same values. With two classes one
    binary model is fitted and its probabilities and standard deviations are returned
    exactly (no sampling).

    Parameters
    ----------
    estimator : BayesianLogisticRegression, BayesianProbitRegression or \
            BayesianBinaryRegression, default=None
        The binary classifier, cloned for each class; ``None`` means
        ``BayesianLogisticRegression()``. Any fitting method works; the draws come from its
        ``posterior_`` (Gaussian draws, or resampled MCMC draws).
    n_draws : int, default=1000
        Posterior draws per class behind ``predict_proba`` (three or more classes).
    random_state : int, RandomState instance or None, default=None
        Seed of those draws, fixed at ``fit``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    estimators_ : list of BayesianLogisticRegression
        The fitted binary models: one per class (``classes_[k]`` against the rest, the
        positive class labelled 1) with three or more classes, a single one with two.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has feature names that are all strings.

    See Also
    --------
    sklearn.multiclass.OneVsRestClassifier : The same decomposition without uncertainty.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.preprocessing import scale
    >>> from skcoreset import BayesianOneVsRestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = BayesianOneVsRestClassifier(random_state=0).fit(scale(X), y)
    >>> proba, std = clf.predict_proba(scale(X)[:2], return_std=True)
    >>> proba.shape, std.shape
    ((2, 3), (2, 3))
    >>> bool(abs(proba.sum(axis=1) - 1).max() < 1e-12)
    True
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "n_draws": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator: Any = None, *, n_draws: int = 1000,
                 random_state: RandomStateLike = None) -> None:
        self.estimator = estimator
        self.n_draws = n_draws
        self.random_state = random_state

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        tags.input_tags.sparse = True
        return tags

    def _base_estimator(self) -> (BayesianLogisticRegression | BayesianProbitRegression
                                  | BayesianBinaryRegression):
        if self.estimator is None:
            return BayesianLogisticRegression()
        if not isinstance(self.estimator, (BayesianLogisticRegression, BayesianProbitRegression,
                                           BayesianBinaryRegression)):
            raise TypeError(
                "BayesianOneVsRestClassifier needs a BayesianLogisticRegression, "
                "BayesianProbitRegression or BayesianBinaryRegression (its posterior gives "
                "the uncertainty), got "
                f"{type(self.estimator).__name__}. For other "
                "binary classifiers use sklearn.multiclass.OneVsRestClassifier.")
        return self.estimator

    @fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: MatrixLike, y: VectorLike, sample_weight: VectorLike | None = None,
            offset: VectorLike | None = None) -> Self:
        """Fit one binary posterior per class (one in all with two classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels, at least two distinct.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative multipliers of each point's log-likelihood, passed to every binary
            fit.
        offset : float or array-like of shape (n_samples,), default=None
            A known term of each row's linear predictor, passed to every binary fit (e.g.
            the log of each row's time at risk with the complementary log-log link); pass
            the rows' offsets to the predictions too.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        base = self._base_estimator()
        X, y, sample_weight = unpack_weighted_subset(X, y, sample_weight)
        with explained_input_errors():
            X, y = validate_data(self, X, y, dtype=np.float64, accept_sparse=ACCEPT_SPARSE)
        check_classification_targets(y)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        known = linear_offset(None, offset, X.shape[0], None)
        # only when given: a binary model fitted without one keeps its own defaults
        extra = {} if known is None else {"offset": known}
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError(
                f"y contains only one class ({self.classes_[0]!r}); a classifier needs "
                "samples of at least two classes.")
        if len(self.classes_) == 2:
            self.estimators_ = [clone(base).fit(X, y, sample_weight=sample_weight, **extra)]
        else:
            self.estimators_ = [
                clone(base).fit(X, (y == label).astype(int), sample_weight=sample_weight,
                                **extra)
                for label in self.classes_]
        self._draw_seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        return self

    def predict_proba(self, X: MatrixLike, return_std: bool = False,
                      offset: VectorLike | None = None) -> Prediction:
        """Class probabilities and, optionally, their posterior standard deviations.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.
        return_std : bool, default=False
            Also return the posterior standard deviation of each class probability.
        offset : float or array-like of shape (n_samples,), default=None
            The known term of each row's linear predictor, as at ``fit``.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; rows sum to one. With three or more classes
            the Monte Carlo mean over the posterior draws of the per-draw normalised
            one-vs-rest probabilities (see the class description); with two, the binary
            model's :meth:`~skcoreset.BayesianLogisticRegression.predict_proba`.
        std : ndarray of shape (n_samples, n_classes)
            Posterior standard deviation of each entry of ``proba`` (with two classes both
            columns hold the same value). Only returned when ``return_std=True``.
        """
        check_is_fitted(self)
        reject_weighted_subset(X)
        X = validate_data(self, X, dtype=np.float64, reset=False, accept_sparse=ACCEPT_SPARSE)
        known = linear_offset(None, offset, X.shape[0], None)
        if len(self.estimators_) == 1:
            proba, std = self.estimators_[0].predict_proba(X, return_std=True, offset=known)
            return (proba, np.column_stack([std, std])) if return_std else proba
        proba = np.empty((X.shape[0], len(self.classes_)))
        std = np.empty_like(proba)
        for rows, q in self._normalised_draws(X, known, self.n_draws,
                                              np.random.RandomState(self._draw_seed)):
            proba[rows] = q.mean(axis=1)
            std[rows] = q.std(axis=1)
        return (proba, std) if return_std else proba

    def _normalised_draws(self, X: FloatArray, offset: FloatArray | None, n_draws: int,
                          rng: np.random.RandomState) -> Iterator[tuple[slice, FloatArray]]:
        """``(rows, q)`` by blocks of rows: the per-draw normalised one-vs-rest
        probabilities ``q`` of shape (rows, n_draws, n_classes), for ``n_draws`` draws from
        each binary posterior, with the rows' ``offset`` (or None) in every class's linear
        predictor."""
        draws = [est.posterior_.sample(n_draws, random_state=rng)
                 for est in self.estimators_]
        chunk = max(1, _CHUNK_ELEMENTS // (n_draws * len(self.estimators_)))
        for start in range(0, X.shape[0], chunk):
            rows = slice(start, start + chunk)
            term = 0.0 if offset is None else offset[rows, None]
            # log p_k for every row, draw and class; normalising per draw is a softmax of them
            log_p = np.stack([est.family_.link.log_inverse(linear_predictor(
                X[rows], theta, est.fit_intercept) + term)
                for est, theta in zip(self.estimators_, draws)], axis=-1)
            yield rows, softmax(log_p, axis=-1)

    def _per_class(self) -> list[tuple[Any, Any]]:
        """``(label, binary model)`` pairs: each class against the rest, or with two classes
        the one model, for its positive class ``classes_[1]``."""
        if len(self.estimators_) == 1:
            return [(self.classes_[1], self.estimators_[0])]
        return list(zip(self.classes_, self.estimators_))

    def summary(self, level: float = 0.95, feature_names: VectorLike | None = None) -> Any:
        """The posterior table of each binary model (:meth:`BayesianLogisticRegression.summary
        <skcoreset.BayesianLogisticRegression.summary>`), one block of rows per class.

        Parameters
        ----------
        level : float, default=0.95
            Posterior probability inside the credible intervals.
        feature_names : array-like of str of shape (n_features_in_,), default=None
            Names of the features (by default those fitted on, else ``x0``, ``x1``, ...).

        Returns
        -------
        summary : PosteriorSummary
            Rows named ``(class, parameter)``: the coefficients of the model of that class
            against the rest (with two classes, the one model, under ``classes_[1]``),
            under the header of the first class's model; ``to_frame()`` gives a DataFrame
            indexed by class and parameter.
        """
        check_is_fitted(self)
        tables = [(label, est.summary(level, feature_names)) for label, est in self._per_class()]
        first = tables[0][1]
        index = [(label, *key) for label, table in tables for key in table.index]
        columns = {name: np.concatenate([table.columns[name] for _, table in tables])
                   for name in first.columns}
        header = {"Estimator": type(self).__name__, "Classes": str(len(self.classes_)),
                  **{key: value for key, value in first.header.items() if key != "Estimator"}}
        return PosteriorSummary(index, ("class", *first.index_names), columns, header,
                                first.level)

    def sample_y(self, X: MatrixLike, n_draws: int = 1000,
                 random_state: RandomStateLike = None,
                 offset: VectorLike | None = None) -> Prediction:
        """Class labels drawn from the posterior predictive distribution at each row of X.

        Each draw takes parameters from every binary posterior, normalises the one-vs-rest
        probabilities to sum to one (as :meth:`predict_proba`) and draws a class from them;
        with two classes, the binary model's
        :meth:`~skcoreset.BayesianLogisticRegression.sample_y`. The frequency of each label
        over the draws estimates :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows at which to draw labels.
        n_draws : int, default=1000
            Number of draws.
        random_state : int, RandomState instance or None, default=None
            Seed of the parameter and label draws.
        offset : float or array-like of shape (n_samples,), default=None
            The known term of each row's linear predictor, as at ``fit``.

        Returns
        -------
        y_draws : ndarray of shape (n_draws, n_samples)
            Labels from ``classes_``.
        """
        check_is_fitted(self)
        reject_weighted_subset(X)
        X = validate_data(self, X, dtype=np.float64, reset=False, accept_sparse=ACCEPT_SPARSE)
        if not is_number(n_draws, Integral) or n_draws < 1:
            raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}.")
        known = linear_offset(None, offset, X.shape[0], None)
        rng = check_random_state(random_state)
        if len(self.estimators_) == 1:
            return self.estimators_[0].sample_y(X, n_draws=n_draws, random_state=rng,
                                                offset=known)
        out = np.empty((n_draws, X.shape[0]), dtype=self.classes_.dtype)
        for rows, q in self._normalised_draws(X, known, n_draws, rng):
            # inverse CDF: the first class whose cumulative probability exceeds a uniform
            u = rng.random_sample(q.shape[:2] + (1,))
            index = np.minimum((np.cumsum(q, axis=-1) < u).sum(axis=-1), q.shape[-1] - 1)
            out[:, rows] = self.classes_[index].T
        return out

    def to_arviz(self, X: MatrixLike | None = None, y: VectorLike | None = None, *,
                 offset: VectorLike | None = None, n_draws: int = 1000, n_chains: int = 4,
                 random_state: RandomStateLike = None) -> Any:
        """ArviZ data of each binary model
        (:meth:`BayesianLogisticRegression.to_arviz
        <skcoreset.BayesianLogisticRegression.to_arviz>`), by class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Rows of the data groups, with ``y``; ``None``: each model's training rows, when
            kept.
        y : array-like of shape (n_samples,), default=None
            Their class labels; each model sees ``y == label`` (with two classes, y).
        offset : float or array-like of shape (n_samples,), default=None
            The known term of the linear predictor of the rows of ``X``, as at ``fit``.
        n_draws : int, default=1000
            Draws per chain, as for the binary models.
        n_chains : int, default=4
            Chains, as for the binary models.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws, as for the binary models.

        Returns
        -------
        data : dict
            ``{label: arviz data}`` for each class (with two classes, one entry, under
            ``classes_[1]``).
        """
        check_is_fitted(self)
        if (X is None) != (y is None):
            raise ValueError("to_arviz needs both X and y for the rows of its data groups.")
        one_model = len(self.estimators_) == 1
        return {label: est.to_arviz(
            X, None if y is None else (y if one_model else (np.asarray(y) == label).astype(int)),
            offset=offset, n_draws=n_draws, n_chains=n_chains, random_state=random_state)
            for label, est in self._per_class()}

    def predict(self, X: MatrixLike, offset: VectorLike | None = None) -> Prediction:
        """The class of highest :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.
        offset : float or array-like of shape (n_samples,), default=None
            The known term of each row's linear predictor, as at ``fit``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X, offset=offset)
        return self.classes_[np.argmax(proba, axis=1)]

    def score(self, X: MatrixLike, y: VectorLike, sample_weight: VectorLike | None = None,
              offset: VectorLike | None = None) -> float:
        """Mean accuracy of :meth:`predict` on X against y.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test samples.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.
        offset : float or array-like of shape (n_samples,), default=None
            The known term of each row's linear predictor, as at ``fit``.

        Returns
        -------
        score : float
            Mean accuracy.
        """
        return float(accuracy_score(y, self.predict(X, offset=offset),
                                    sample_weight=sample_weight))
