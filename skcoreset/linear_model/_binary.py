"""The binary classifiers: two class labels, probabilities integrated over the posterior."""

from collections.abc import Callable
from numbers import Integral
from typing import Any, Literal, Self, TypeVar

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import xlogy
from sklearn.base import ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._atomic import fit_context
from .._backend import is_dask_collection
from .._design import linear_predictor
from .._numbers import is_number
from .._dask_predict import accuracy, linear_offset_lazily, predict_lazily
from .._docstrings import documents_score
from .._posterior import SamplePosterior
from .._sklearn_compat import _num_samples, available_if
from .._typing import FitMethod, FloatArray, MatrixLike, Prediction, RandomStateLike, VectorLike
from .._sklearn_compat import StrOptions
from .._validation import check_numeric_dtype, check_sample_weight, check_trials, linear_offset
from .._warnings import warn
from ..families import (LINKS, BinaryFamily, Link, LogisticFamily, ProbitFamily,
                        binary_family)
from ._base import BaseBayesianGLM, uses_pass_glm
from ._results import keep_rows
from ._docs import COMMON_ATTRS_DOC
from ._methods import Param, glm_estimator


_CLASSIFIER_ATTRS_DOC = """
    classes_ : ndarray of shape (2,)
        The two class labels; ``classes_[1]`` is the positive class.

    coef_ : ndarray of shape (1, n_features)
        Posterior mean of the coefficients.

    intercept_ : ndarray of shape (1,)
        Posterior mean of the intercept (0 when ``fit_intercept=False``).
""" + COMMON_ATTRS_DOC


_TRIALS_ROWS_DOC = """        n_trials : int or array-like of shape (n_samples,), default=None
            Binomial data, with ``X`` and ``y``: y are the successes out of ``n_trials``
            at each row. A row's log-likelihood is then the binomial's,
            ``log C(n, k) + k log F(eta) + (n - k) log(1 - F(eta))``, its predictive draws
            and observed values are numbers of successes, and ArviZ's ``constant_data``
            group holds ``n_trials``. A fit with ``n_trials`` keeps its cells: by default
            the rows are those cells, with their trials.
"""


_OFFSET_DOC = """offset : float or array-like of shape (n_samples,), default=None
            A known term added to each row's linear predictor,
            ``P(y = classes_[1] | x) = F(x . coef + intercept + offset)``, as statsmodels'
            ``GLM(offset=)`` with a ``Binomial`` family (any link). ``None``: no offset
            (0), also after a fit with offsets."""


def _with_trials(doc):
    """The docstring ``doc`` of :meth:`to_arviz` or :meth:`loo` with ``n_trials`` and
    ``offset``."""
    anchor = "        n_draws : int, default=1000\n"
    offset = "        " + _OFFSET_DOC + " Of the rows X passed.\n"
    return doc.replace(anchor, _TRIALS_ROWS_DOC + offset + anchor, 1)


_Documented = TypeVar("_Documented", bound=Callable[..., Any])


def _offset_doc(method: _Documented) -> _Documented:
    method.__doc__ = (method.__doc__ or "").replace("{offset}", _OFFSET_DOC)
    return method


def _offset_rows(offset):
    """The per-row arguments of a dask prediction: the offset, its dtype checked here and
    its values in the blocks that read them."""
    if offset is None:
        return ()
    check_numeric_dtype("offset", offset)
    return (("offset", offset),)


def _check_rows_given(caller, X, n_trials, offset):
    """``n_trials`` and ``offset`` of :meth:`to_arviz` and :meth:`loo` describe rows passed."""
    for name, value in (("n_trials", n_trials), ("offset", offset)):
        if X is None and value is not None:
            raise ValueError(f"{name} of {caller} describes the rows X, y: pass X and y "
                             "with it (the training rows keep their own).")


class _BaseBinaryClassifier(ClassifierMixin, BaseBayesianGLM):
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
            "which keeps predict_proba(X, return_std=True). For successes out of a number "
            "of trials per row, pass fit(X, y, n_trials=...)."))
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

    def _offset_at(self, X, offset):
        """The offset of the rows of X (in memory), validated, or None."""
        return self._linear_offset(X, None, offset, lazily=False)

    def _linear_offset(self, X, exposure, offset, lazily=True):
        """The offset, a known term of each row's linear predictor (any link), validated;
        for a dask X (with ``lazily``) its dtype here and its values in the blocks that
        read them (a lazy dask array)."""
        if offset is None:
            return None
        if lazily and is_dask_collection(X):
            check_numeric_dtype("offset", offset)
            return linear_offset_lazily(X, None, offset, None)
        return linear_offset(None, offset, _num_samples(X), None)  # any link

    def _trials_as_rows(self, X, y, n_trials, sample_weight, offset):
        """Successes y out of ``n_trials`` per row as weighted rows of each class
        (:meth:`BinaryFamily.trials_as_rows <skcoreset.families.BinaryFamily.trials_as_rows>`),
        with the ``offset`` of their cell: ``classes_`` is ``[0, 1]``, 1 the success."""
        successes, n_trials = check_trials(y, n_trials, X.shape[0])
        rows, y_encoded, weights, log_constant = BinaryFamily.trials_as_rows(
            successes, n_trials, sample_weight)
        if not (np.any(y_encoded > 0) and np.any(y_encoded < 0)):
            raise ValueError(
                "With n_trials, y holds no {} on any row; the {} model needs both successes "
                "and failures.".format("successes" if np.all(y_encoded < 0) else "failures",
                                       self._family().name))
        self.classes_ = np.array([0, 1])
        # the cells, whose binomial log-likelihood to_arviz and loo give
        keep_rows(self, X, successes, sample_weight, n_trials, offset)
        cells = n_trials > 0
        k, n = successes[cells], n_trials[cells]
        self._trials_saturated = float(sample_weight[cells] @ (
            xlogy(k, k / n) + xlogy(n - k, (n - k) / n)))
        return (X[rows], y_encoded, weights, log_constant,
                None if offset is None else offset[rows])

    @_offset_doc
    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: VectorLike, sample_weight: VectorLike | None = None,
            n_trials: VectorLike | None = None, offset: VectorLike | None = None) -> Self:
        """Fit the posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Binary target labels (any two distinct values); with ``n_trials``, the number of
            successes of each row, whole numbers from 0 to ``n_trials``.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative multipliers of each point's log-likelihood; a weight of 2 counts the
            row twice. Not normalised.
        n_trials : int or array-like of shape (n_samples,), default=None
            Binomial data: each row is a cell of ``n_trials`` trials of which ``y`` succeeded,
            with log-likelihood ``y log F(eta) + (n_trials - y) log(1 - F(eta))`` (plus the
            constant ``log C(n_trials, y)``), the fit of statsmodels' ``GLM`` with a
            ``Binomial`` family and the endog ``[y, n_trials - y]``, and the same posterior
            as the 0/1 rows expanded from the cells. The cells are fitted as at most two
            weighted rows each, whatever the number of trials. ``classes_`` is then
            ``[0, 1]`` and :meth:`predict_proba` gives the probability of success of one
            trial. Proportions are refused (pass ``y=proportion * n_trials``). Not
            supported for dask arrays or a coreset's weighted subset. Routed by metadata
            routing with ``set_fit_request(n_trials=True)``.
        {offset}
            Of the training rows (of each cell, with ``n_trials``): for every method but
            ``"pass_glm"`` (whose statistics hold no per-row term), for rows in memory, a
            ``np.memmap`` (read in chunks) and dask arrays (the offset as a dask array or
            in memory, sent to the chunks of the rows). After a coreset step pass it to
            the coreset step, which hands on its rows' offsets (see
            :meth:`skcoreset.UniformCoreset.fit`). Routed like ``sample_weight`` with
            metadata routing (``set_fit_request(offset=True)``).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y, sample_weight, offset=offset, n_trials=n_trials)

    @available_if(uses_pass_glm)
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

    @_offset_doc
    def sample_y(self, X: MatrixLike, n_draws: int = 1000,
                 random_state: RandomStateLike = None,
                 n_trials: VectorLike | None = None,
                 offset: VectorLike | None = None) -> Prediction:
        """Draw targets from the posterior predictive distribution at each row of X.

        Each draw takes parameters ``theta`` from ``posterior_`` and then a target at every
        row from the likelihood given ``theta``, so the draws include both the posterior
        uncertainty and the noise of y.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows to draw targets for.
        n_draws : int, default=1000
            Number of draws.
        random_state : int, RandomState instance or None, default=None
            Seed of the parameter and target draws.
        n_trials : int or array-like of shape (n_samples,), default=None
            Binomial data (rows in memory): draw the number of successes out of
            ``n_trials`` at each row, ``Binomial(n_trials, F(eta))`` for each parameter
            draw, instead of one class label.
        {offset}

        Returns
        -------
        y_draws : ndarray of shape (n_draws, n_samples)
            One row per draw: class labels from ``classes_``, or with ``n_trials`` counts of
            successes. For a dask X (without ``n_trials``), a lazy dask array.
        """
        if n_trials is None:
            return self._sample_y(X, n_draws, random_state,
                                  self._linear_offset(X, None, offset))
        if is_dask_collection(X):
            raise ValueError("sample_y with n_trials takes rows in memory; compute the dask "
                             "arrays first.")
        X = self._check_predict_input(X)
        if not is_number(n_draws, Integral) or n_draws < 1:
            raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}.")
        trials = check_trials(np.zeros(X.shape[0]), n_trials, X.shape[0])[1]
        shift = self._offset_at(X, offset)
        rng = check_random_state(random_state)
        theta = self.posterior_.sample(n_draws, random_state=rng)
        eta = linear_predictor(X, theta, self.fit_intercept)
        p = self.family_.link.inverse(eta if shift is None else eta + shift[:, None]).T
        return rng.binomial(trials.astype(np.int64), p).astype(np.float64)

    def _arviz_targets(self, y, n_trials, n_rows):
        """Labels encoded ±1; with ``n_trials``, the successes out of them."""
        if n_trials is None:
            return super()._arviz_targets(y, None, n_rows)
        return check_trials(y, n_trials, n_rows)

    def to_arviz(self, X: MatrixLike | None = None, y: VectorLike | None = None, *,
                 n_trials: VectorLike | None = None, offset: VectorLike | None = None,
                 n_draws: int = 1000, n_chains: int = 4,
                 random_state: RandomStateLike = None,
                 feature_names: VectorLike | None = None) -> Any:
        _check_rows_given("to_arviz", X, n_trials, offset)
        return self._to_arviz(X, y, n_trials, n_draws, n_chains, random_state,
                              feature_names, offset=self._offset_at(X, offset))

    to_arviz.__doc__ = _with_trials(BaseBayesianGLM.to_arviz.__doc__)

    def loo(self, X: MatrixLike | None = None, y: VectorLike | None = None, *,
            n_trials: VectorLike | None = None, offset: VectorLike | None = None,
            n_draws: int = 1000, n_chains: int = 4, reff: float | None = None,
            random_state: RandomStateLike = None) -> Any:
        _check_rows_given("loo", X, n_trials, offset)
        return self._loo(X, y, n_trials, n_draws, n_chains, reff, random_state,
                         offset=self._offset_at(X, offset))

    loo.__doc__ = _with_trials(BaseBayesianGLM.loo.__doc__)

    def residuals(self, X: MatrixLike, y: VectorLike, kind: str = "deviance",
                  offset: VectorLike | None = None) -> FloatArray:
        return self._residuals(X, y, kind, self._offset_at(X, offset))

    residuals.__doc__ = (BaseBayesianGLM.residuals.__doc__ or "").replace(
        "\n        Returns\n", f"        {_OFFSET_DOC}\n\n        Returns\n", 1)

    @_offset_doc
    def decision_function(self, X: MatrixLike, offset: VectorLike | None = None) -> Prediction:
        """Confidence score of ``classes_[1]``: positive exactly where :meth:`predict` chooses
        it (for a Gaussian posterior).

        For a link symmetric about 0 (logit, probit) the linear predictor at the posterior
        mean, ``X @ coef_ + intercept_``. For another link (such as cloglog, whose
        ``F(0) = 1 - 1/e``) the sign of the linear predictor does not decide the class: the
        score is then the log-odds ``log(p / (1 - p))`` of the posterior predictive
        probability ``p`` of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.
        {offset}

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            Positive values favour ``classes_[1]``. A lazy dask array for a dask X.
        """
        if is_dask_collection(X):
            return predict_lazily(self, "decision_function", X, rows=_offset_rows(offset))
        check_is_fitted(self)
        if self.family_.link.symmetric:
            return self._linear_predictor(X, self._offset_at(X, offset))
        p = self._predictive_moments(X, self._offset_at(X, offset))[0]
        with np.errstate(divide="ignore"):
            return np.log(p) - np.log1p(-p)

    @_offset_doc
    def predict_proba(self, X: MatrixLike, return_std: bool = False,
                      offset: VectorLike | None = None) -> Prediction:
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
        {offset}

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
            rows = _offset_rows(offset)
            if not return_std:
                return predict_lazily(self, "predict_proba", X, rows=rows, columns=2)
            out = predict_lazily(self, "predict_proba", X, rows=rows, columns=3,
                                 return_std=True)
            return out[:, :2], out[:, 2]
        p, var = self._predictive_moments(X, self._offset_at(X, offset))
        proba = np.column_stack([1.0 - p, p])
        if return_std:
            return proba, np.sqrt(var)
        return proba

    @_offset_doc
    def predict_log_proba(self, X: MatrixLike,
                          offset: VectorLike | None = None) -> Prediction:
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.
        {offset}

        Returns
        -------
        log_proba : ndarray of shape (n_samples, 2)
            Log-probabilities of the classes in the order of ``classes_``.
        """
        if is_dask_collection(X):
            return predict_lazily(self, "predict_log_proba", X, rows=_offset_rows(offset),
                                  columns=2)
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X, offset=offset))

    @_offset_doc
    def predict(self, X: MatrixLike, offset: VectorLike | None = None) -> Prediction:
        """Most probable class under the posterior predictive: ``classes_[1]`` where
        ``P(y = classes_[1] | x) > 1/2`` (:meth:`predict_proba`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.
        {offset}

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            A lazy dask array for a dask X.
        """
        check_is_fitted(self)
        if is_dask_collection(X):
            return predict_lazily(self, "predict", X, rows=_offset_rows(offset),
                                  dtype=self.classes_.dtype)
        if (isinstance(self.posterior_, SamplePosterior)
                or not self.family_.link.symmetric):
            # ties (p = 1/2) go to classes_[0], as the argmax of predict_proba
            p = self._predictive_moments(X, self._offset_at(X, offset))[0]
            return self.classes_[(p > 0.5).astype(int)]
        # a symmetric Gaussian latent and a symmetric F: E[F(eta)] > 1/2 exactly when its
        # mean is > 0
        eta = self._linear_predictor(X, self._offset_at(X, offset))
        return self.classes_[(eta > 0).astype(int)]

    @_offset_doc
    def score(self, X: MatrixLike, y: VectorLike,
              sample_weight: VectorLike | None = None,
              n_trials: VectorLike | None = None,
              offset: VectorLike | None = None) -> float:
        """Mean accuracy of :meth:`predict` on X against y (weighted by ``sample_weight``).

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            Test data.
        y : array-like or dask array of shape (n_samples,)
            True labels; with ``n_trials``, the successes of each row.
        sample_weight : array-like or dask array of shape (n_samples,), default=None
            Weights of the rows in the accuracy.
        n_trials : int or array-like of shape (n_samples,), default=None
            Binomial data (as in :meth:`fit`, rows in memory): the accuracy per trial, the
            share of the trials (weighted by ``sample_weight``) whose outcome :meth:`predict`
            gives, the same as on the expanded 0/1 rows.
        {offset}
            Of the rows scored, passed to :meth:`predict`.

        Returns
        -------
        score : float
            For dask arrays, computed by a pass over their blocks where they live.
        """
        if offset is None and getattr(self, "_fitted_on_exposure", False):
            warn(
                f"{type(self).__name__} was fitted with offset but is scored without: its "
                "predictions are then those of a zero offset. Pass offset to score; in "
                "GridSearchCV or cross_validate, enable metadata routing so that it "
                "reaches score too: sklearn.set_config(enable_metadata_routing=True) and "
                "estimator.set_fit_request(offset=True).set_score_request(offset=True).",
                UserWarning)
        if n_trials is not None:
            if is_dask_collection(X):
                raise ValueError("score with n_trials takes rows in memory; compute the "
                                 "dask arrays first.")
            check_is_fitted(self)
            n_rows = _num_samples(X)
            successes, n_trials = check_trials(y, n_trials, n_rows)
            weights = check_sample_weight(sample_weight, n_rows)
            predicted = self.predict(X, offset=offset) == self.classes_[1]
            right = np.where(predicted, successes, n_trials - successes)
            return float(weights @ right / (weights @ n_trials))
        if is_dask_collection(X):
            return accuracy(self, X, y, sample_weight, rows=_offset_rows(offset))
        from sklearn.metrics import accuracy_score

        return float(accuracy_score(y, self.predict(X, offset=offset),
                                    sample_weight=sample_weight))


_SCORE_DOC = """``score(X, y)`` is the accuracy of :meth:`predict` (weighted by
    ``sample_weight``), as for every scikit-learn classifier: it does not see the
    probabilities or their uncertainty. To score probabilities, use
    ``scoring="neg_log_loss"`` or ``"neg_brier_score"`` in cross-validation; for the
    training fit, ``loglik_``, ``deviance_``, ``aic_`` and ``bic_``, or ``az.loo`` on
    :meth:`to_arviz` for a Bayesian estimate of the predictive log density."""


@glm_estimator(LogisticFamily(), _CLASSIFIER_ATTRS_DOC)
@documents_score(_SCORE_DOC)
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

    <score>

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

    # __init__ generated from the method table (python -m skcoreset.linear_model._codegen)
    def __init__(self, *, method: FitMethod = "laplace", prior_scale: float = 1.0,
                 intercept_prior_scale: float = 10.0, fit_intercept: bool = True,
                 tol: float = 1e-10, max_iter: int = 500, kl_beta: float | None = None,
                 pass_degree: int = 2, pass_radius: float | Literal["auto"] = "auto",
                 sampler: Literal["ensemble", "nuts"] = "nuts", n_draws: int = 4000,
                 n_burnin: int | None = None, thin: int | None = None,
                 n_walkers: int | None = None, n_chains: int = 4, n_jobs: int | None = None,
                 max_tree_depth: int = 10, max_gradients: int | Literal["auto"] | None = "auto",
                 max_time: float | None = None, random_state: RandomStateLike = None,
                 verbose: int = 0) -> None:
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
        self.max_tree_depth = max_tree_depth
        self.max_gradients = max_gradients
        self.max_time = max_time
        self.random_state = random_state
        self.verbose = verbose
    # end of the generated __init__

    def _family(self):
        return LogisticFamily()


@glm_estimator(ProbitFamily(), _CLASSIFIER_ATTRS_DOC)
@documents_score(_SCORE_DOC)
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

    <score>

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

    # __init__ generated from the method table (python -m skcoreset.linear_model._codegen)
    def __init__(self, *, method: FitMethod = "laplace", prior_scale: float = 1.0,
                 intercept_prior_scale: float = 10.0, fit_intercept: bool = True,
                 tol: float = 1e-10, max_iter: int = 500, kl_beta: float | None = None,
                 pass_degree: int = 2, pass_radius: float | Literal["auto"] = "auto",
                 sampler: Literal["ensemble", "nuts"] = "nuts", n_draws: int = 4000,
                 n_burnin: int | None = None, thin: int | None = None,
                 n_walkers: int | None = None, n_chains: int = 4, n_jobs: int | None = None,
                 max_tree_depth: int = 10, max_gradients: int | Literal["auto"] | None = "auto",
                 max_time: float | None = None, random_state: RandomStateLike = None,
                 verbose: int = 0) -> None:
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
        self.max_tree_depth = max_tree_depth
        self.max_gradients = max_gradients
        self.max_time = max_time
        self.random_state = random_state
        self.verbose = verbose
    # end of the generated __init__

    def _family(self):
        return ProbitFamily()


# the names of the links onto (0, 1), accepted by link= besides Link instances
_BINARY_LINKS = sorted(name for name, link in LINKS.items() if link.cdf)


@glm_estimator(LogisticFamily(), _CLASSIFIER_ATTRS_DOC, link=Param(
    "logit", [StrOptions(set(_BINARY_LINKS)), Link], "", "",
    annotation="Literal[" + ", ".join(f'"{name}"' for name in _BINARY_LINKS) + "] | Link"))
@documents_score(_SCORE_DOC)
class BayesianBinaryRegression(_BaseBinaryClassifier):
    """Bayesian binary regression with any link, with posterior uncertainty.

    Fits a Gaussian posterior over the coefficients and intercept of
    ``P(y = classes_[1] | x) = F(x . coef + intercept)`` under a Gaussian prior, for the
    inverse link ``F`` of ``link``, with each point's log-likelihood multiplied by its
    ``sample_weight``. ``link="logit"`` is :class:`BayesianLogisticRegression` and
    ``link="probit"`` :class:`BayesianProbitRegression`; ``link="cloglog"``, the
    complementary log-log link ``F(eta) = 1 - exp(-exp(eta))``, is the asymmetric one, for
    probabilities that approach 0 and 1 at different rates (the binary model of "at least
    one event" of a Poisson process with rate ``exp(eta)``). Coreset constructors take the
    same likelihood as ``model=binary_family(link)``
    (:func:`skcoreset.families.binary_family`).

    Parameters
    ----------
    link : {{"logit", "probit", "cloglog"}} or Link, default="logit"
        The link: its name, or a :class:`skcoreset.families.Link` instance whose inverse is
        a distribution function (``Link.cdf``). ``method="pass_glm"`` supports the logit
        and probit links only.
    {common_params}
    Attributes
    ----------
    {common_attrs}
    See Also
    --------
    BayesianLogisticRegression : The logit link.
    BayesianProbitRegression : The probit link.
    statsmodels.genmod.families.family.Binomial : Its maximum-likelihood counterpart, which
        takes the same links.

    Notes
    -----
    :meth:`predict` chooses ``classes_[1]`` where its posterior predictive probability
    exceeds 1/2; for an asymmetric link that is not where the linear predictor is positive,
    and :meth:`decision_function` is the log-odds of that probability. Multi-class problems:
    wrap the estimator in :class:`skcoreset.multiclass.BayesianOneVsRestClassifier`.

    <score>

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import scale
    >>> from skcoreset import BayesianBinaryRegression
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = BayesianBinaryRegression(link="cloglog").fit(scale(X), y)
    >>> proba, std = clf.predict_proba(scale(X)[:2], return_std=True)
    >>> proba.shape, std.shape
    ((2, 2), (2,))
    """

    # __init__ generated from the method table (python -m skcoreset.linear_model._codegen)
    def __init__(self, *, link: Literal["cloglog", "logit", "probit"] | Link = "logit",
                 method: FitMethod = "laplace", prior_scale: float = 1.0,
                 intercept_prior_scale: float = 10.0, fit_intercept: bool = True,
                 tol: float = 1e-10, max_iter: int = 500, kl_beta: float | None = None,
                 pass_degree: int = 2, pass_radius: float | Literal["auto"] = "auto",
                 sampler: Literal["ensemble", "nuts"] = "nuts", n_draws: int = 4000,
                 n_burnin: int | None = None, thin: int | None = None,
                 n_walkers: int | None = None, n_chains: int = 4, n_jobs: int | None = None,
                 max_tree_depth: int = 10, max_gradients: int | Literal["auto"] | None = "auto",
                 max_time: float | None = None, random_state: RandomStateLike = None,
                 verbose: int = 0) -> None:
        self.link = link
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
        self.max_tree_depth = max_tree_depth
        self.max_gradients = max_gradients
        self.max_time = max_time
        self.random_state = random_state
        self.verbose = verbose
    # end of the generated __init__

    def _family(self):
        if isinstance(self.link, Link) and not (self.link.cdf or self.link.symmetric):
            raise ValueError(
                f"link must be one of {_BINARY_LINKS} or a Link whose inverse is a "
                f"distribution function onto (0, 1) (Link.cdf), got {self.link!r}.")
        return binary_family(self.link)
