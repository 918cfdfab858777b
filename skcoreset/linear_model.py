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
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ._design import latent_moments, split_theta
from ._posterior import SamplePosterior
from ._docstrings import fill_doc
from ._families import LogisticFamily, PoissonFamily
from ._inference import fit_posterior
from ._inference._common import prior_precision
from ._inference.mcmc import sample_predictive_moments
from ._backend import is_dask_collection
from ._inference.pass_glm import check_pass_degree, pass_glm, pass_glm_posterior, start_statistics
from ._sklearn_compat import Interval, StrOptions, _fit_context
from ._validation import check_counts, check_sample_weight
from .coreset._subset import reject_weighted_subset, unpack_weighted_subset

_METHODS = {"laplace", "kl_proximal", "pass_glm", "mcmc"}


def _uses_pass_glm(estimator):
    """``partial_fit`` exists only for the method that accumulates sufficient statistics."""
    if estimator.method != "pass_glm":
        # available_if passes this message on (hasattr(estimator, "partial_fit") is False)
        raise AttributeError(
            f"partial_fit is only available with method='pass_glm', which accumulates "
            f"sufficient statistics; this estimator has method={estimator.method!r}. Use "
            "set_params(method='pass_glm') to fit a stream chunk by chunk, or call fit.")
    return True


class _BaseBayesianGLM(BaseEstimator):
    """Shared fit and posterior-predictive machinery; subclasses fix the family."""

    _parameter_constraints = {
        "method": [StrOptions(_METHODS)],
        "prior_scale": [Interval(Real, 0, None, closed="neither")],
        "intercept_prior_scale": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "kl_beta": [Interval(Real, 0, None, closed="neither"), None],
        "pass_degree": [Interval(Integral, 2, None, closed="left")],
        "pass_radius": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "n_draws": [Interval(Integral, 2, None, closed="left")],
        "n_burnin": [Interval(Integral, 0, None, closed="left"), None],
        "thin": [Interval(Integral, 1, None, closed="left"), None],
        "n_walkers": [Interval(Integral, 2, None, closed="left"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, *, method="laplace", prior_scale=1.0, intercept_prior_scale=10.0,
                 fit_intercept=True, tol=1e-10, max_iter=500, kl_beta=None, pass_degree=2,
                 pass_radius="auto", n_draws=4000, n_burnin=None, thin=None, n_walkers=None,
                 random_state=None, verbose=0):
        self.method = method
        self.prior_scale = prior_scale
        self.intercept_prior_scale = intercept_prior_scale
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.kl_beta = kl_beta
        self.pass_degree = pass_degree
        self.pass_radius = pass_radius
        self.n_draws = n_draws
        self.n_burnin = n_burnin
        self.thin = thin
        self.n_walkers = n_walkers
        self.random_state = random_state
        self.verbose = verbose

    def _prior(self, n_features):
        return prior_precision(n_features, prior_scale=self.prior_scale,
                               intercept_prior_scale=self.intercept_prior_scale,
                               fit_intercept=self.fit_intercept)

    def _method_options(self):
        """Keyword arguments of the inference function specific to ``method``."""
        if self.method == "pass_glm":
            check_pass_degree(self._family().name, self.pass_degree)
            return {"degree": self.pass_degree, "radius": self.pass_radius}
        if self.method == "kl_proximal":
            return {"beta": self.kl_beta}
        if self.method == "mcmc":
            return {"n_draws": self.n_draws, "n_burnin": self.n_burnin, "thin": self.thin,
                    "n_walkers": self.n_walkers, "random_state": self.random_state}
        return {}

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
        coef, intercept = split_theta(self.posterior_.mean, self.fit_intercept)
        self._set_coef(coef, float(intercept))
        return self

    def _fit(self, X, y, sample_weight):
        """Validate, fit the posterior and set the fitted attributes common to both models."""
        X, y, sample_weight = unpack_weighted_subset(X, y, sample_weight)
        if is_dask_collection(X):
            return self._fit_dask(X, y, sample_weight)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        y_encoded = self._encode_target(y)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        result = fit_posterior(
            self.method, X, y_encoded, self._family(), sample_weight=sample_weight,
            prior_prec=self._prior(X.shape[1]), fit_intercept=self.fit_intercept,
            tol=self.tol, max_iter=self.max_iter, verbose=self.verbose,
            **self._method_options())
        self._start_stream(result.extra.get("statistics"), result.extra.get("pilot"))
        return self._store(result)

    def _start_stream(self, statistics, pilot):
        """Keep PASS-GLM's statistics and pilot, from which ``partial_fit`` continues."""
        self._pass_statistics = statistics
        self._pass_pilot = pilot
        self._pass_settings = (self.pass_degree, self.pass_radius, self.fit_intercept)

    def _fit_dask(self, X, y, sample_weight):
        """One pass over dask chunks: only PASS-GLM's statistics travel to the client."""
        if self.method != "pass_glm":
            raise ValueError(
                f"dask arrays are supported with method='pass_glm', which needs one pass over "
                f"the chunks; got method={self.method!r}. Compute the arrays first or use "
                "method='pass_glm'.")
        import dask.array as da

        X = da.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got an array with {X.ndim} dimensions.")
        self.n_features_in_ = X.shape[1]
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        y_encoded = self._encode_target_dask(da.asarray(y))
        result = pass_glm(X, y_encoded, self._family(), sample_weight=sample_weight,
                          prior_prec=self._prior(X.shape[1]), fit_intercept=self.fit_intercept,
                          tol=self.tol, max_iter=self.max_iter, verbose=self.verbose,
                          **self._method_options())
        self._start_stream(result.extra["statistics"], result.extra["pilot"])
        return self._store(result)

    def _partial_fit(self, X, y, sample_weight, classes=None):
        """Add a chunk to PASS-GLM's statistics and refresh the posterior from them.

        The first chunk starts the stream: its pilot fit chooses the polynomial for
        ``pass_radius="auto"`` and later chunks are summarised with the same one.
        """
        first_call = getattr(self, "_pass_statistics", None) is None
        if first_call and hasattr(self, "posterior_"):
            raise ValueError(
                f"partial_fit cannot continue a fit made with method="
                f"{self._fitted_method!r}: that posterior has no sufficient statistics to add "
                "chunks to. Call fit with method='pass_glm' (partial_fit then continues from "
                "it), or partial_fit on an unfitted clone (sklearn.base.clone) to start a new "
                "stream.")
        settings = (self.pass_degree, self.pass_radius, self.fit_intercept)
        if not first_call and settings != self._pass_settings:
            raise ValueError(
                f"(pass_degree, pass_radius, fit_intercept) changed from {self._pass_settings} "
                f"to {settings} since the stream started; the statistics accumulated so far "
                "use the old values. Restore them, or call fit (or partial_fit on an unfitted "
                "clone) to start again.")
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False, reset=first_call)
        y_encoded = (self._encode_target(y, classes=classes) if first_call
                     else self._encode_more(y))
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        prior = self._prior(X.shape[1])
        if first_call:
            options = self._method_options()
            stats, pilot = start_statistics(
                X, y_encoded, self._family(), sample_weight=sample_weight, prior_prec=prior,
                fit_intercept=self.fit_intercept, degree=options["degree"],
                radius=options["radius"], max_iter=self.max_iter)
            self._start_stream(stats, pilot)
        self._pass_statistics.add(X, y_encoded, sample_weight)
        result = pass_glm_posterior(self._pass_statistics, prior, tol=self.tol,
                                    max_iter=self.max_iter, verbose=self.verbose,
                                    pilot=self._pass_pilot)
        return self._store(result)

    def _check_predict_input(self, X):
        check_is_fitted(self)
        reject_weighted_subset(X)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def _predictive_moments(self, X):
        """Posterior mean and variance of ``E[y | x]`` at each row of X.

        Averages over the draws for a sample posterior (MCMC); otherwise integrates over the
        Gaussian posterior of the linear predictor (Gauss-Hermite or closed form).
        """
        X = self._check_predict_input(X)
        family = self._family()
        if isinstance(self.posterior_, SamplePosterior):
            return sample_predictive_moments(X, self.posterior_.samples, family,
                                             self.fit_intercept)
        m, v = latent_moments(X, self.posterior_.mean, self.posterior_.cov_cholesky,
                              self.fit_intercept)
        return family.expected_mean(m, v)

    def _linear_predictor(self, X):
        X = self._check_predict_input(X)
        return X @ np.ravel(self.coef_) + np.ravel(self.intercept_)[0]


_COMMON_PARAMS_DOC = """
    method : {"laplace", "kl_proximal", "pass_glm", "mcmc"}, default="laplace"
        How the posterior is fitted.

        - ``"laplace"``: Gaussian centred at the posterior mode (found by Newton's method with
          a line search) with covariance the inverse negative Hessian of the log posterior
          there.
        - ``"kl_proximal"``: full-covariance Gaussian variational inference by KL
          proximal-gradient steps (Khan et al., 2015, eqs. 16-19), started at the Laplace
          approximation; maximises the evidence lower bound (``elbo_``). Uses the dual
          updates, which form no ``d x d`` matrix until the end, when there are more
          parameters than rows.
        - ``"mcmc"``: draws from the exact posterior with emcee's affine-invariant ensemble
          sampler (vectorised over walkers), walkers started from the Laplace approximation;
          ``posterior_samples_`` holds the draws and predictions average over them. Practical
          for up to a few tens of parameters, e.g. on a coreset.
        - ``"pass_glm"``: PASS-GLM (Huggins et al., 2017): the GLM mapping function is replaced
          by a degree-``pass_degree`` polynomial (see ``pass_radius``), so the log-likelihood
          depends on the data only through polynomial sufficient statistics computed in one
          pass (``partial_fit`` for
          streams, dask arrays chunk by chunk). Degree 2 gives a Gaussian posterior in closed
          form; higher degrees use Newton and Laplace on the polynomial surrogate. Supports the
          logistic model and Poisson with ``link="log"``.

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
        ``q`` and the linearised target with ``r = 1 / (1 + beta)``). ``None``: 0.25 for the
        logistic model (the paper's choice), 0.5 for Poisson.

    pass_degree : int, default=2
        Degree of PASS-GLM's polynomial approximation (``method="pass_glm"`` only). Logistic:
        2, 6, 10, ... (the paper's 2 + 4k rule keeps the surrogate concave); Poisson: even.
        Degrees above 2 store ``C(p + degree, degree)`` monomial sums and are meant for few
        features; they are more accurate where degree 2 warns.

    n_draws : int, default=4000
        Number of posterior draws kept by ``method="mcmc"`` (over all walkers).

    n_burnin : int, default=None
        Ensemble steps discarded before the draws are kept (``method="mcmc"``); ``None``
        scales it with the number of parameters p: ``100 + 150 p``, about ten
        autocorrelation times of the stretch move on a Gaussian target.

    thin : int, default=None
        Keep every ``thin``-th ensemble step (``method="mcmc"``); ``None`` chooses the smallest
        value that runs the chain for about 50 autocorrelation times (``500 + 750 p`` steps).
        The defaulted parts of the run are capped together at 1,000,000 walker steps
        (``n_walkers`` times steps per walker), which binds from about ``p = 17`` (e.g. more
        features than rows); the shortened run then warns (``MCMCDiagnosticWarning``) with
        the ``n_burnin`` and ``thin`` that give the full run. Explicit values are not capped.

    n_walkers : int, default=None
        Number of emcee walkers (``method="mcmc"``), at least ``2 p``; ``None`` means
        ``max(16, 4 p)``.

    random_state : int, RandomState instance or None, default=None
        Seed of the MCMC walkers' starting points and moves (``method="mcmc"``), for
        reproducible draws. The other methods are deterministic.

    pass_radius : float or "auto", default="auto"
        Which polynomial PASS-GLM uses (``method="pass_glm"`` only). ``"auto"``: a Laplace
        fit on a pilot subsample (at most 10,000 rows, every k-th row, per class for the
        logistic model; the first chunk of a dask array or of a ``partial_fit`` stream) gives
        representative linear predictors ``s = x . theta``, and the derivative of the
        polynomial is the least-squares fit of the exact one (sigmoid or ``exp``) at them,
        so the approximation is accurate where the data are, including far from 0 (rare
        positives, large counts). A number ``R``: the Chebyshev approximation on ``[-R, R]``
        of Huggins et al. (2017) (their PASS-LR2 uses ``R = 4``), accurate only when most
        ``s`` lie in that interval. Either way the pilot rows measure the resulting error of
        the posterior mean, and a ``PassGLMAccuracyWarning`` (a ``UserWarning``) is issued
        when it exceeds one posterior standard deviation: the approximation error does not
        shrink with the number of rows, while the posterior does.

    verbose : int, default=0
        Print progress of the fit when positive.
"""

_COMMON_ATTRS_DOC = """
    posterior_ : GaussianPosterior or SamplePosterior
        Posterior over ``theta = [coef..., intercept]`` (intercept last when fitted), with
        ``mean``, ``cov``, ``sample(n, random_state)``, ``logpdf`` and ``kl`` (a
        ``SamplePosterior`` of the draws for ``method="mcmc"``).

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

    def _check_classes(self, labels):
        """The (unique) labels must be exactly two classes."""
        check_classification_targets(labels)
        if len(labels) > 2 or type_of_target(labels) == "multiclass":
            raise ValueError(
                f"Only binary classification is supported; y has {len(labels)} classes. Wrap "
                "BayesianLogisticRegression in sklearn.multiclass.OneVsRestClassifier for "
                "multi-class problems.")
        if len(labels) < 2:
            raise ValueError(
                "y contains only one class ({}); BayesianLogisticRegression needs samples of "
                "two classes.".format(labels[0] if len(labels) else "none"))

    def _encode_target(self, y, classes=None):
        """Set ``classes_`` (from ``classes`` when given) and encode y as ±1."""
        check_classification_targets(y)
        self.classes_ = np.unique(y if classes is None else classes)
        self._check_classes(self.classes_)
        return self._encode_more(y)

    def _encode_more(self, y):
        """Encode labels of a later ``partial_fit`` chunk with the known ``classes_``."""
        unseen = np.setdiff1d(np.unique(y), self.classes_)
        if len(unseen):
            raise ValueError(f"y contains labels {unseen.tolist()} not in classes_ "
                             f"{self.classes_.tolist()}.")
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def _encode_target_dask(self, y):
        import dask.array as da

        self.classes_ = da.unique(y).compute()  # only the distinct labels travel
        self._check_classes(self.classes_)
        return da.where(y == self.classes_[1], 1.0, -1.0)

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

    @available_if(_uses_pass_glm)
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

        ``P(y = classes_[1] | x) = E[sigmoid(eta)]`` over the posterior of the linear
        predictor ``eta``: by Gauss-Hermite quadrature over its Gaussian ``N(m(x), v(x))``, or
        for ``method="mcmc"`` by averaging over the posterior draws.

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
        p, var = self._predictive_moments(X)
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
        if isinstance(self.posterior_, SamplePosterior):
            return self.classes_[(self.predict_proba(X)[:, 1] > 0.5).astype(int)]
        # a symmetric Gaussian latent: E[sigmoid(eta)] > 1/2 exactly when its mean is > 0
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
                 intercept_prior_scale=10.0, fit_intercept=True, tol=1e-10, max_iter=500,
                 kl_beta=None, pass_degree=2, pass_radius="auto", n_draws=4000, n_burnin=None,
                 thin=None, n_walkers=None, random_state=None, verbose=0):
        super().__init__(method=method, prior_scale=prior_scale,
                         intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, tol=tol, max_iter=max_iter,
                         kl_beta=kl_beta, pass_degree=pass_degree, pass_radius=pass_radius,
                         n_draws=n_draws, n_burnin=n_burnin, thin=thin, n_walkers=n_walkers,
                         random_state=random_state, verbose=verbose)
        self.link = link

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        # a degree-2 polynomial in place of exp() on [-R, R] fits counts only roughly
        tags.regressor_tags.poor_score = self.method == "pass_glm"
        return tags

    def _family(self):
        return PoissonFamily(link=self.link)

    def _encode_target(self, y, classes=None):
        return check_counts(y)

    _encode_more = _encode_target

    def _encode_target_dask(self, y):
        import dask
        import dask.array as da

        finite, smallest, integral = dask.compute(
            da.isfinite(y).all(), y.min(), (y == da.round(y)).all())
        if not finite:
            raise ValueError("Input y contains NaN or infinity.")
        if smallest < 0:
            raise ValueError("Poisson targets are counts: y contains negative values.")
        if not integral:
            raise ValueError("Poisson targets are counts: y contains non-integer values.")
        return y.astype(np.float64)

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

    @available_if(_uses_pass_glm)
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
        mean, rate_var = self._predictive_moments(X)
        if return_std:
            return mean, np.sqrt(mean + rate_var)
        return mean
