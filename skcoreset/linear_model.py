"""Bayesian generalized linear models as scikit-learn estimators.

:class:`BayesianLogisticRegression` and :class:`BayesianPoissonRegression` fit a posterior over
``theta = [coef..., intercept]`` under the prior ``N(0, prior_scale^2 I)`` on the coefficients
and ``N(0, intercept_prior_scale^2)`` on the intercept. ``sample_weight`` multiplies each
point's log-likelihood, unnormalised: a weight of 2 is the same as the row appearing twice, so
the weighted subsets returned by the coreset constructors stand in for the full data.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ._design import latent_moments, split_theta
from ._docstrings import fill_doc
from ._families import LogisticFamily, PoissonFamily
from ._inference import fit_posterior
from ._inference._common import prior_precision
from ._sklearn_compat import Interval, StrOptions, _fit_context
from ._validation import check_counts, check_sample_weight
from .coreset._base import reject_weighted_subset, unpack_weighted_subset

_METHODS = {"laplace"}


class _BaseBayesianGLM(BaseEstimator):
    """Shared fit and posterior-predictive machinery; subclasses fix the family."""

    _parameter_constraints = {
        "method": [StrOptions(_METHODS)],
        "prior_scale": [Interval(Real, 0, None, closed="neither")],
        "intercept_prior_scale": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(self, *, method="laplace", prior_scale=1.0, intercept_prior_scale=10.0,
                 fit_intercept=True, tol=1e-10, max_iter=100, verbose=0):
        self.method = method
        self.prior_scale = prior_scale
        self.intercept_prior_scale = intercept_prior_scale
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose

    def _fit(self, X, y, sample_weight):
        """Validate, fit the posterior and set the fitted attributes common to both models."""
        X, y, sample_weight = unpack_weighted_subset(X, y, sample_weight)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        y_encoded = self._encode_target(y)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        prior = prior_precision(X.shape[1], prior_scale=self.prior_scale,
                                intercept_prior_scale=self.intercept_prior_scale,
                                fit_intercept=self.fit_intercept)
        result = fit_posterior(
            self.method, X, y_encoded, self._family(), sample_weight=sample_weight,
            prior_prec=prior, fit_intercept=self.fit_intercept, tol=self.tol,
            max_iter=self.max_iter, verbose=self.verbose)
        self.posterior_ = result.posterior
        self.n_iter_ = result.n_iter
        self.log_evidence_ = result.log_evidence
        coef, intercept = split_theta(self.posterior_.mean, self.fit_intercept)
        self._set_coef(coef, float(intercept))
        return self

    def _check_predict_input(self, X):
        check_is_fitted(self)
        reject_weighted_subset(X)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def _latent_moments(self, X):
        """Posterior mean and variance of the linear predictor at each row of X."""
        X = self._check_predict_input(X)
        return latent_moments(X, self.posterior_.mean, self.posterior_.cov_cholesky,
                              self.fit_intercept)

    def _linear_predictor(self, X):
        X = self._check_predict_input(X)
        return X @ np.ravel(self.coef_) + np.ravel(self.intercept_)[0]


_COMMON_PARAMS_DOC = """
    method : {"laplace"}, default="laplace"
        How the posterior is fitted. ``"laplace"``: Gaussian centred at the posterior mode
        (found by Newton's method with a line search) with covariance the inverse negative
        Hessian of the log posterior there.

    prior_scale : float, default=1.0
        Standard deviation of the isotropic Gaussian prior ``N(0, prior_scale^2 I)`` on the
        coefficients. Must be positive.

    intercept_prior_scale : float, default=10.0
        Standard deviation of the Gaussian prior on the intercept (a wide prior by default).
        Ignored when ``fit_intercept=False``.

    fit_intercept : bool, default=True
        Whether to fit an intercept, with its own prior.

    tol : float, default=1e-10
        Convergence tolerance: Newton's method stops when half the Newton decrement (the
        predicted increase of the log posterior from another step) is below ``tol``.

    max_iter : int, default=100
        Maximum number of Newton iterations; a ``ConvergenceWarning`` is issued when reached.

    verbose : int, default=0
        Print progress of the fit when positive.
"""

_COMMON_ATTRS_DOC = """
    posterior_ : GaussianPosterior
        Posterior over ``theta = [coef..., intercept]`` (intercept last when fitted), with
        ``mean``, ``cov``, ``sample(n, random_state)``, ``logpdf`` and ``kl``.

    n_iter_ : int
        Number of iterations run by the fitting method.

    log_evidence_ : float
        Laplace estimate of the log marginal likelihood ``log p(y | X)`` (including the
        weights).

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when X has feature names that are all strings.
"""


_fill_glm_doc = fill_doc(common_params=_COMMON_PARAMS_DOC, common_attrs=_COMMON_ATTRS_DOC)


@_fill_glm_doc
class BayesianLogisticRegression(ClassifierMixin, _BaseBayesianGLM):
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
    classes_ : ndarray of shape (2,)
        The two class labels; ``classes_[1]`` is the positive class.

    coef_ : ndarray of shape (1, n_features)
        Posterior mean of the coefficients.

    intercept_ : ndarray of shape (1,)
        Posterior mean of the intercept (0 when ``fit_intercept=False``).
    {common_attrs}
    See Also
    --------
    BayesianPoissonRegression : The count-regression counterpart.
    sklearn.linear_model.LogisticRegression : Its MAP estimate with ``C=prior_scale**2``.

    Notes
    -----
    Multi-class problems are not supported directly; wrap the estimator in
    :class:`sklearn.multiclass.OneVsRestClassifier`.

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _family(self):
        return LogisticFamily()

    def _encode_target(self, y):
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        target_type = type_of_target(y)
        if len(self.classes_) > 2 or target_type == "multiclass":
            raise ValueError(
                f"Only binary classification is supported; y has {len(self.classes_)} "
                "classes. Wrap BayesianLogisticRegression in "
                "sklearn.multiclass.OneVsRestClassifier for multi-class problems.")
        if len(self.classes_) < 2:
            raise ValueError(
                "y contains only one class ({}); BayesianLogisticRegression needs samples of "
                "two classes.".format(self.classes_[0] if len(self.classes_) else "none"))
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def _set_coef(self, coef, intercept):
        self.coef_ = coef.reshape(1, -1)
        self.intercept_ = np.array([intercept])

    @_fit_context(prefer_skip_nested_validation=True)
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

    def decision_function(self, X):
        """Linear predictor at the posterior mean, ``x . coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            Positive values favour ``classes_[1]``.
        """
        return self._linear_predictor(X)

    def predict_proba(self, X, return_std=False):
        """Class probabilities integrated over the posterior.

        ``P(y = classes_[1] | x) = E[sigmoid(eta)]`` with ``eta ~ N(m(x), v(x))`` the
        posterior of the linear predictor, computed by Gauss-Hermite quadrature.

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
        """
        m, v = self._latent_moments(X)
        p, var = self._family().expected_mean(m, v)
        proba = np.column_stack([1.0 - p, p])
        if return_std:
            return proba, np.sqrt(var)
        return proba

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`, shape (n_samples, 2)."""
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
        """
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


@_fill_glm_doc
class BayesianPoissonRegression(RegressorMixin, _BaseBayesianGLM):
    """Bayesian Poisson regression for counts with posterior predictive uncertainty.

    Fits a Gaussian posterior over the coefficients and intercept of the Poisson rate
    ``exp(x . coef + intercept)`` (``link="log"``) or ``log(1 + exp(x . coef + intercept))``
    (``link="softplus"``, as in the coreset papers) under a Gaussian prior.

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
                 intercept_prior_scale=10.0, fit_intercept=True, tol=1e-10, max_iter=100,
                 verbose=0):
        super().__init__(method=method, prior_scale=prior_scale,
                         intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, tol=tol, max_iter=max_iter,
                         verbose=verbose)
        self.link = link

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        return tags

    def _family(self):
        return PoissonFamily(link=self.link)

    def _encode_target(self, y):
        return check_counts(y)

    def _set_coef(self, coef, intercept):
        self.coef_ = coef
        self.intercept_ = intercept

    @_fit_context(prefer_skip_nested_validation=True)
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
            the count: ``sqrt(E[rate] + Var[rate])`` (Poisson noise plus posterior
            uncertainty of the rate).

        Returns
        -------
        mean : ndarray of shape (n_samples,)
            ``E[y | x, data] = E[rate(eta)]`` over the posterior of the linear predictor.
        std : ndarray of shape (n_samples,)
            Only returned when ``return_std=True``.
        """
        m, v = self._latent_moments(X)
        mean, rate_var = self._family().expected_mean(m, v)
        if return_std:
            return mean, np.sqrt(mean + rate_var)
        return mean

