"""The count regressions: Poisson and negative binomial counts, observed over an exposure."""

from collections.abc import Callable
from contextlib import contextmanager
from numbers import Real
from typing import Any, Literal, Self, TypeVar

import numpy as np
from scipy import stats
from sklearn.utils.validation import check_is_fitted

from .._warnings import warn
from .._atomic import fit_context
from .._backend import is_dask_collection
from .._docstrings import documents_score
from .._inference import resolve_family
from .._posterior import SamplePosterior, check_level
from .._sklearn_compat import Interval, StrOptions, _num_samples, available_if
from .._typing import FitMethod, FloatArray, MatrixLike, Prediction, RandomStateLike, VectorLike
from .._dask_predict import linear_offset_lazily
from .._validation import check_numeric_dtypes, linear_offset
from ..families import NegativeBinomialFamily, PoissonFamily
from ._base import uses_pass_glm
from ._docs import COMMON_ATTRS_DOC
from ._methods import Param, glm_estimator
from ._regression import _BaseRegression

# The negative binomial log alpha is sampled by MCMC when its Laplace sd is at most this
# (alpha known within a factor e^2 = 7.4); beyond, its posterior is the prior's on the side of
# the Poisson limit, and a sampler would wander there.
_MAX_SAMPLED_LOG_ALPHA_SD = 2.0


_EXPOSURE_DOC = """exposure : float or array-like of shape (n_samples,), default=None
            Positive exposure of each count (time, population, area...): its mean is
            ``exposure * mu(x)``. For the log link the same as ``offset=log(exposure)``.
        offset : float or array-like of shape (n_samples,), default=None
            A known term added to each row's linear predictor (log link only; for another
            link pass ``exposure``). With ``exposure`` too, they add up:
            ``offset + log(exposure)``, as in statsmodels' GLM, and are taken in log space:
            any finite offset, also beyond 709 (an exposure beyond float64), except where
            the Poisson model fits ``exp(offset)`` as weights."""


_Documented = TypeVar("_Documented", bound=Callable[..., Any])


def _exposure_doc(method: _Documented) -> _Documented:
    method.__doc__ = (method.__doc__ or "").replace("{exposure}", _EXPOSURE_DOC)
    return method


@contextmanager
def given_dispersion(estimator, dispersion):
    """While in the block, a :class:`BayesianNegativeBinomialRegression` with
    ``alpha="auto"`` fits with the overdispersion ``dispersion`` (a
    :class:`~skcoreset._inference.dispersion.Dispersion` estimated on all the rows a coreset
    stands in for) instead of estimating it from the rows it is given; other estimators,
    one that samples (``method="mcmc"``, whose draws the pipeline's exact correction weights
    to all rows), or ``dispersion=None`` are left alone."""
    if (dispersion is None or not isinstance(estimator, BayesianNegativeBinomialRegression)
            or estimator.method == "mcmc"):
        yield
        return
    estimator._given_dispersion = dispersion
    try:
        yield
    finally:
        del estimator._given_dispersion


class _BaseCountRegression(_BaseRegression):
    """The count regressions: non-negative targets, predictions of new counts, and counts
    observed over an exposure (``exposure=``, ``offset=``) in fit, predict, score,
    sample_y and to_arviz."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        return tags

    def _linear_offset(self, X, exposure, offset, lazily=True):
        """The one representation of ``exposure`` and ``offset`` at the rows of X: the log
        of the multiplier of each row's mean, ``offset + log(exposure)``
        (:func:`~skcoreset._validation.linear_offset`; the offset in the linear predictor
        of the log link), or None without them. Every consumer takes it in log space
        where the link allows; only the Poisson model's exposure weights and a non-log
        link's mean need the exposure as a number (:func:`exposure_of`). For a dask X
        (with ``lazily``) a lazy dask array, validated in the blocks that read it."""
        if exposure is None and offset is None:
            return None
        link = self._family().link.name
        if not (lazily and is_dask_collection(X)):
            return linear_offset(exposure, offset, _num_samples(X), link)
        check_numeric_dtypes(exposure=exposure, offset=offset)
        if offset is not None:
            linear_offset(None, 0.0, 1, link)  # the link check, before any task runs
        return linear_offset_lazily(X, exposure, offset, link)

    @_exposure_doc
    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: VectorLike, sample_weight: VectorLike | None = None,
            exposure: VectorLike | None = None, offset: VectorLike | None = None) -> Self:
        """Fit the posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Non-negative targets: counts, or rates such as ``counts / exposure`` (with
            ``sample_weight=exposure``, as for scikit-learn's ``PoissonRegressor``). For
            non-integer y the log-likelihood, normalised with ``log Gamma``, is a
            quasi-likelihood with the model's dependence on the coefficients.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative multipliers of each point's log-likelihood; a weight of 2 counts the
            row twice. Not normalised.
        {exposure}
            The Poisson model fits counts over an exposure as the rates ``y / exposure``
            with weights ``sample_weight * exposure``, the same posterior for every link
            and method (:meth:`PoissonFamily.exposure_as_weight
            <skcoreset.families.PoissonFamily.exposure_as_weight>`); the negative binomial
            model as the offset ``offset + log(exposure)`` in the linear predictor (any
            finite offset; the Poisson model's ``exp(offset + log(exposure))`` must be a
            float64, else a ``ValueError`` says to centre the offset). Both for rows in
            memory, a ``np.memmap`` (read in chunks) and dask arrays (the exposure and
            offset as dask arrays, or arrays in memory, sent to the chunks of the rows).
            The training rows are kept with their offsets for :meth:`to_arviz` and
            :meth:`loo`. ``log_evidence_`` and
            ``elbo_`` are those of the counts; ``coef_`` and :meth:`predict` describe the
            mean per unit of exposure. Not supported after a coreset step: pass them to the
            coreset step instead, which fits the rates (see
            :meth:`skcoreset.UniformCoreset.fit`). Routed like ``sample_weight`` with
            metadata routing (``set_fit_request(exposure=True)``).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        return self._fit(X, y, sample_weight, exposure=exposure, offset=offset)

    @_exposure_doc
    def predict(self, X: MatrixLike, return_std: bool | Literal["predictive", "mean"] = False,
                exposure: VectorLike | None = None,
                offset: VectorLike | None = None) -> Prediction:
        """Posterior predictive mean count, and optionally a standard deviation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.
        return_std : bool, "predictive" or "mean", default=False
            Also return a standard deviation:

            - ``"predictive"`` (or ``True``): that of the posterior predictive distribution
              of a new count, the count noise plus the posterior uncertainty of the mean
              ``mu``: ``sqrt(E[mu] + Var[mu])`` for the Poisson model and
              ``sqrt(E[mu] + Var[mu] + alpha_ (Var[mu] + E[mu]^2))`` for the negative
              binomial. For predictive intervals of counts.
            - ``"mean"``: the posterior standard deviation of the mean itself,
              ``sqrt(Var[mu])`` (times the exposure), without the count noise: the
              Bayesian counterpart of statsmodels'
              ``get_prediction().summary_frame()["mean_se"]`` (its delta-method standard
              error, which it equals to first order under a wide prior). For intervals of
              the expected count.
        {exposure}
            Of the counts to predict. ``None``: the mean per unit of exposure. With the
            log link the offset is added in log space (rows in memory and dask arrays), so
            offsets beyond 709 (exposures beyond float64) scale the rates back into it.

        Returns
        -------
        mean : ndarray of shape (n_samples,)
            ``E[y | x, data] = exposure * E[mu(eta)]`` over the posterior of the linear
            predictor.
        std : ndarray of shape (n_samples,)
            Only returned with ``return_std``: the standard deviation it names.
        """
        return self._predict_mean(X, return_std, self._linear_offset(X, exposure, offset))

    @_exposure_doc
    def score(self, X: MatrixLike, y: VectorLike, sample_weight: VectorLike | None = None,
              exposure: VectorLike | None = None, offset: VectorLike | None = None) -> float:
        """Coefficient of determination R^2 of :meth:`predict` (with ``exposure`` and
        ``offset``) against y.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
            Test data.
        y : array-like or dask array of shape (n_samples,)
            Observed targets: counts over ``exposure``, or rates when neither ``exposure``
            nor ``offset`` is given.
        sample_weight : array-like or dask array of shape (n_samples,), default=None
            Weights of the rows in R^2.
        {exposure}
            Of the counts y, passed to :meth:`predict`.

        Returns
        -------
        score : float
            For dask arrays, computed by passes over their blocks where they live.
        """
        if (exposure is None and offset is None
                and getattr(self, "_fitted_on_exposure", False)):
            warn(
                f"{type(self).__name__} was fitted with exposure or offset but is scored "
                "without: its predictions are means per unit of exposure, so R^2 against "
                "counts y is wrong unless y are rates. Pass exposure (or offset) to score; "
                "in GridSearchCV or cross_validate, enable metadata routing so that it "
                "reaches score too: sklearn.set_config(enable_metadata_routing=True) and "
                "estimator.set_fit_request(exposure=True).set_score_request(exposure=True).",
                UserWarning)
        if is_dask_collection(X):
            return self._r2_score(X, y, sample_weight, self._linear_offset(X, exposure, offset))
        from sklearn.metrics import r2_score

        return r2_score(y, self.predict(X, exposure=exposure, offset=offset),
                        sample_weight=sample_weight)

    @_exposure_doc
    def sample_y(self, X: MatrixLike, n_draws: int = 1000, random_state: RandomStateLike = None,
                 exposure: VectorLike | None = None,
                 offset: VectorLike | None = None) -> Prediction:
        """Draw from the posterior predictive distribution of the counts at each row of X.

        Each draw takes parameters from ``posterior_`` (Gaussian draws, or for
        ``method="mcmc"`` draws resampled from the chain), then a count at every row from
        the likelihood (the negative binomial one with ``alpha_``), so the draws include
        both the posterior uncertainty and the count noise. Quantiles over the draws give
        posterior predictive intervals.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows at which to draw counts.
        n_draws : int, default=1000
            Number of draws.
        random_state : int, RandomState instance or None, default=None
            Seed of the parameter and count draws.
        {exposure}
            Of the counts drawn. ``None``: counts over one unit of exposure.

        Returns
        -------
        y_draws : ndarray of shape (n_draws, n_samples)
            Counts, as floats; one row per draw. For a dask X, a lazy dask array (chunked
            along the rows of X, each block drawn from its own random stream fixed by
            ``random_state``).
        """
        return self._sample_y(X, n_draws, random_state,
                              self._linear_offset(X, exposure, offset))

    @_exposure_doc
    def to_arviz(self, X: MatrixLike | None = None, y: VectorLike | None = None, *,
                 exposure: VectorLike | None = None, offset: VectorLike | None = None,
                 n_draws: int = 1000, n_chains: int = 4,
                 random_state: RandomStateLike = None,
                 feature_names: VectorLike | None = None) -> Any:
        """The fit as ArviZ data (see
        :meth:`BayesianLogisticRegression.to_arviz
        <skcoreset.BayesianLogisticRegression.to_arviz>` for the groups).

        The ``log_likelihood`` of the counts y is that of counts over ``exposure`` (for the
        training rows, the exposure and offset of the fit), and the ``posterior_predictive``
        draws are counts over it. For the negative binomial model with ``alpha="auto"`` the
        ``posterior`` also holds ``alpha``, drawn from its Laplace approximation in
        ``log alpha`` (independent of the coefficients: the model's information matrix has
        no cross terms between them), for its summary and plots; the posterior of the
        coefficients and both data groups are given ``alpha_``, as the predictions are.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Rows of the data groups, with ``y``; ``None``: the training rows, when kept.
        y : array-like of shape (n_samples,), default=None
            Their counts.
        {exposure}
            Of the counts y of the rows passed.
        n_draws : int, default=1000
            Draws per chain of a Gaussian posterior; unused for ``method="mcmc"``.
        n_chains : int, default=4
            Chains of a Gaussian posterior; unused for ``method="mcmc"``.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws.
        feature_names : array-like of str of shape (n_features_in_,), default=None
            Names of the features, the ``feature`` coordinates of ``coef`` (by default
            those of :meth:`summary`).

        Returns
        -------
        data : arviz.InferenceData
            With ArviZ 1.0 and later, the ``xarray.DataTree`` its ``from_dict`` returns.
        """
        if X is None and (exposure is not None or offset is not None):
            raise ValueError("exposure and offset of to_arviz describe the rows X, y: "
                             "pass X and y with them.")
        offset = None if X is None else self._linear_offset(X, exposure, offset, lazily=False)
        return self._to_arviz(X, y, None, n_draws, n_chains, random_state, feature_names,
                              offset=offset)

    @_exposure_doc
    def loo(self, X: MatrixLike | None = None, y: VectorLike | None = None, *,
            exposure: VectorLike | None = None, offset: VectorLike | None = None,
            n_draws: int = 1000, n_chains: int = 4, reff: float | None = None,
            random_state: RandomStateLike = None) -> Any:
        """PSIS-LOO cross-validation of the fit, over rows of any number (see
        :meth:`BayesianLogisticRegression.loo <skcoreset.BayesianLogisticRegression.loo>`).

        The log-likelihood of the counts y is that of counts over ``exposure`` (for the
        training rows, the exposure and offset of the fit), as in :meth:`to_arviz`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Rows to evaluate, with ``y``; ``None``: the training rows.
        y : array-like of shape (n_samples,), default=None
            Their counts.
        {exposure}
            Of the counts y of the rows passed.
        n_draws : int, default=1000
            Draws per chain of a Gaussian posterior; unused for ``method="mcmc"``.
        n_chains : int, default=4
            Chains of a Gaussian posterior; unused for ``method="mcmc"``.
        reff : float, default=None
            Relative effective sample size of the draws (by default 1 for a Gaussian
            posterior, ArviZ's estimate for MCMC).
        random_state : int, RandomState instance or None, default=None
            Seed of the draws of a Gaussian posterior.

        Returns
        -------
        loo : LooResult
            ``elpd_loo``, ``se``, ``p_loo``, ``loo_i``, ``pareto_k``, ``warning``.
        """
        if X is None and (exposure is not None or offset is not None):
            raise ValueError("exposure and offset of loo describe the rows X, y: pass X and "
                             "y with them.")
        offset = None if X is None else self._linear_offset(X, exposure, offset, lazily=False)
        return self._loo(X, y, None, n_draws, n_chains, reff, random_state, offset=offset)

    @_exposure_doc
    def residuals(self, X: MatrixLike, y: VectorLike, kind: str = "deviance",
                  exposure: VectorLike | None = None,
                  offset: VectorLike | None = None) -> FloatArray:
        """Return the residuals of the counts y at the posterior mean of the parameters.

        The residuals of statsmodels' GLM results (``resid_response``, ``resid_pearson``,
        ``resid_deviance``) at ``posterior_.mean``, which under a wide prior is their
        maximum-likelihood estimate (with ``method="mcmc"``, the mean of the draws); the
        squared deviance residuals of the training rows add up to ``deviance_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows (in memory).
        y : array-like of shape (n_samples,)
            Their counts.
        kind : {{"response", "pearson", "deviance"}}, default="deviance"
            ``y - mu``, ``(y - mu) / sqrt(V(mu))`` with ``V(mu) = mu`` (Poisson) or
            ``mu + alpha_ mu^2`` (negative binomial), or ``sign(y - mu) sqrt(d)`` with
            ``d`` the row's deviance.
        {exposure}
            Of the counts y: ``mu`` is their mean over it.

        Returns
        -------
        residuals : ndarray of shape (n_samples,)
        """
        return self._residuals(X, y, kind,
                               self._linear_offset(X, exposure, offset, lazily=False))


_SCORE_DOC = """``score(X, y)`` is the coefficient of determination R^2 of :meth:`predict`, the
    posterior predictive mean, against y (weighted by ``sample_weight``; with ``exposure``
    or ``offset``, of the counts over it), as for every scikit-learn regressor: it sees
    neither the count noise nor the posterior uncertainty. To score counts as counts, use
    ``scoring="neg_mean_poisson_deviance"`` in cross-validation; for the training fit,
    ``loglik_``, ``deviance_``, ``aic_`` and ``bic_``, or ``az.loo`` on :meth:`to_arviz`
    for a Bayesian estimate of the predictive log density."""


@glm_estimator(PoissonFamily(), COMMON_ATTRS_DOC,
               link=Param("log", [StrOptions({"log", "softplus"})], "", ""))
@documents_score(_SCORE_DOC)
class BayesianPoissonRegression(_BaseCountRegression):
    """Bayesian Poisson regression for counts with posterior predictive uncertainty.

    Fits a Gaussian posterior over the coefficients and intercept of the Poisson rate
    ``exp(x . coef + intercept)`` (``link="log"``) or ``log(1 + exp(x . coef + intercept))``
    (``link="softplus"``, as in the coreset papers) under a Gaussian prior. Targets are
    non-negative: counts, or rates such as ``counts / exposure`` fitted with
    ``sample_weight=exposure`` as for scikit-learn's ``PoissonRegressor``; counts observed
    over different exposures are fitted, predicted, scored and drawn with ``exposure=`` or
    ``offset=`` (the log exposure, as in statsmodels).

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

    Notes
    -----
    <score>

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

    # __init__ generated from the method table (python -m skcoreset.linear_model._codegen)
    def __init__(self, *, link: Literal["log", "softplus"] = "log", method: FitMethod = "laplace",
                 prior_scale: float = 1.0, intercept_prior_scale: float = 10.0,
                 fit_intercept: bool = True, tol: float = 1e-10, max_iter: int = 500,
                 kl_beta: float | None = None, pass_degree: int = 2,
                 pass_radius: float | Literal["auto"] = "auto",
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a degree-2 polynomial in place of exp() on [-R, R] fits counts only roughly
        tags.regressor_tags.poor_score = self.method == "pass_glm"
        return tags

    def _family(self):
        return PoissonFamily(link=self.link)

    @available_if(uses_pass_glm)
    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: MatrixLike, y: VectorLike,
                    sample_weight: VectorLike | None = None) -> Self:
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


@glm_estimator(NegativeBinomialFamily(), COMMON_ATTRS_DOC,
               alpha=Param("auto", [Interval(Real, 0, None, closed="neither"),
                                    StrOptions({"auto"})], "", ""))
@documents_score(_SCORE_DOC)
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
        estimated from all rows: from the method-of-moments start of a pilot Poisson fit
        (:meth:`skcoreset.families.NegativeBinomialFamily.resolve`) on at most 10,000
        rows, Newton's method in ``log alpha`` finds the mode of the joint posterior of
        the coefficients and ``log alpha`` on those rows and then on all of them (each
        step a pass over the rows in chunks: a ``np.memmap`` is never read whole, dask
        arrays are summed where their chunks live) (flat prior on ``log alpha``; with a
        wide coefficient prior, the maximum-likelihood estimate of statsmodels'
        ``NegativeBinomial``), and the
        Laplace approximation there gives its uncertainty (``alpha_std_``,
        :meth:`alpha_interval`, a row of :meth:`summary`, draws in :meth:`to_arviz`); the
        posterior of the coefficients is given ``alpha_``. With ``method="mcmc"`` (NUTS)
        ``log alpha`` is sampled with the coefficients instead, under a
        ``N(0, 10^2)`` prior (proper, and far wider than its posterior) truncated to
        ``[1e-8, 1e8]``, from that start: ``alpha_samples_`` holds the draws and ``alpha_``
        is their mean. When the data hardly determine alpha (a Laplace sd of ``log alpha``
        above 2, or the Poisson limit) it is not sampled, with a warning.
    {common_params}
    Attributes
    ----------
    alpha_ : float
        The overdispersion used: ``alpha``, or its estimate for ``alpha="auto"``.

    alpha_std_ : float
        Standard error of ``alpha_``: ``alpha_ * log_alpha_std_`` (the delta method, as
        statsmodels' ``bse`` of alpha); 0 for a fixed ``alpha``; NaN when the estimate is
        at the Poisson limit ``1e-8`` (the data show no overdispersion: use
        :class:`BayesianPoissonRegression`).

    log_alpha_std_ : float
        Standard deviation of ``log alpha`` in the Laplace approximation of its marginal
        posterior (the inverse square root of minus the Schur complement of the joint
        Hessian of the log posterior at the mode); with ``method="mcmc"``, of its draws.

    alpha_samples_ : ndarray of shape (n_draws,)
        Posterior draws of ``alpha`` (``method="mcmc"`` with NUTS and ``alpha="auto"``),
        drawn jointly with ``posterior_samples_`` (row by row); ``alpha_`` and
        ``alpha_std_`` are their mean and standard deviation.

    coef_ : ndarray of shape (n_features,)
        Posterior mean of the coefficients.

    intercept_ : float
        Posterior mean of the intercept (0 when ``fit_intercept=False``).
    {common_attrs}
    See Also
    --------
    BayesianPoissonRegression : The model without overdispersion.

    Notes
    -----
    <score>

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

    # __init__ generated from the method table (python -m skcoreset.linear_model._codegen)
    def __init__(self, *, alpha: float | Literal["auto"] = "auto", method: FitMethod = "laplace",
                 prior_scale: float = 1.0, intercept_prior_scale: float = 10.0,
                 fit_intercept: bool = True, tol: float = 1e-10, max_iter: int = 500,
                 kl_beta: float | None = None, sampler: Literal["ensemble", "nuts"] = "nuts",
                 n_draws: int = 4000, n_burnin: int | None = None, thin: int | None = None,
                 n_walkers: int | None = None, n_chains: int = 4, n_jobs: int | None = None,
                 max_tree_depth: int = 10, max_gradients: int | Literal["auto"] | None = "auto",
                 max_time: float | None = None, random_state: RandomStateLike = None,
                 verbose: int = 0) -> None:
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
        self.max_tree_depth = max_tree_depth
        self.max_gradients = max_gradients
        self.max_time = max_time
        self.random_state = random_state
        self.verbose = verbose
    # end of the generated __init__

    def _family(self):
        return NegativeBinomialFamily(alpha=self.alpha)

    def _fitted_family(self, X, y_encoded, sample_weight, prior, offset=None, rows=None):
        """The family with ``alpha`` estimated for ``alpha="auto"`` on all ``rows`` (with
        its Laplace sd in ``log alpha``); stored with ``alpha_``, ``alpha_std_`` and
        ``log_alpha_std_``."""
        given = vars(self).get("_given_dispersion")
        if given is not None and self._family().unresolved:
            # estimated on all the rows a coreset stands in for (see given_dispersion)
            family, dispersion = self._family().with_alpha(given.alpha), given
        else:
            family, dispersion = resolve_family(
                self._family(), X, y_encoded, sample_weight, prior_prec=prior,
                fit_intercept=self.fit_intercept, offset=offset, return_dispersion=True,
                rows=rows)
        self.family_ = family
        self.alpha_ = family.alpha
        self.log_alpha_std_ = 0.0 if dispersion is None else dispersion.log_alpha_sd
        self.alpha_std_ = self.alpha_ * self.log_alpha_std_
        return family

    def _method_options(self, spec):
        """With ``method="mcmc"``, NUTS and an estimated ``alpha``, ``log alpha`` is sampled
        with the coefficients, unless the data hardly determine it (see ``alpha``)."""
        options = super()._method_options(spec)
        if self.method != "mcmc" or self.sampler != "nuts" or self.alpha != "auto":
            return options
        if np.isfinite(self.log_alpha_std_) and self.log_alpha_std_ <= _MAX_SAMPLED_LOG_ALPHA_SD:
            options["sample_alpha"] = True
        else:
            sd = ("the Poisson limit" if not np.isfinite(self.log_alpha_std_)
                  else f"a Laplace sd of log alpha of {self.log_alpha_std_:.3g}")
            warn(
                f"The counts hardly determine the overdispersion (alpha_={self.alpha_:.3g}, "
                f"{sd} > {_MAX_SAMPLED_LOG_ALPHA_SD}): its posterior is its prior's on the "
                "side of small alpha, so it is not sampled; the coefficients are sampled "
                "given alpha_. The counts look Poisson: consider BayesianPoissonRegression, "
                "or pass a number as alpha.", UserWarning)
        return options

    def _store(self, result):
        """Split sampled ``log alpha`` (the last column of the draws) from theta."""
        if hasattr(self, "alpha_samples_"):
            del self.alpha_samples_
        if result.extra.get("sample_alpha"):
            extra = result.extra
            draws = result.posterior.samples
            result.posterior = SamplePosterior(draws[:, :-1])
            self.alpha_samples_ = np.exp(draws[:, -1])
            self._alpha_diagnostics = {key: extra[key][-1]
                                       for key in ("effective_sample_size", "r_hat")}
            for key in ("effective_sample_size", "r_hat"):
                extra[key] = extra[key][:-1]
            self.alpha_ = float(np.mean(self.alpha_samples_))
            self.alpha_std_ = float(np.std(self.alpha_samples_, ddof=1))
            self.log_alpha_std_ = float(np.std(draws[:, -1], ddof=1))
            self.family_ = self.family_.with_alpha(self.alpha_)
        return super()._store(result)

    def _use_draws(self, draws):
        """As the base class; a sampled ``log alpha`` is the last column of ``draws``."""
        if hasattr(self, "alpha_samples_"):
            self.alpha_samples_ = np.exp(draws[:, -1])
            self.alpha_ = float(np.mean(self.alpha_samples_))
            self.alpha_std_ = float(np.std(self.alpha_samples_, ddof=1))
            self.log_alpha_std_ = float(np.std(draws[:, -1], ddof=1))
            self.family_ = self.family_.with_alpha(self.alpha_)
            draws = draws[:, :-1]
        super()._use_draws(draws)

    def alpha_interval(self, level: float = 0.95) -> tuple[float, float]:
        """Equal-tailed interval of ``alpha`` at ``level``: ``alpha_ exp(-/+ z
        log_alpha_std_)`` from the Laplace approximation in ``log alpha``, or with
        ``method="mcmc"`` the quantiles of ``alpha_samples_`` (``[alpha_, alpha_]`` for a
        fixed ``alpha``; NaN at the Poisson limit).

        Parameters
        ----------
        level : float, default=0.95
            Probability inside the interval, strictly between 0 and 1.

        Returns
        -------
        lower, upper : float
        """
        check_is_fitted(self)
        level = check_level(level)
        if hasattr(self, "alpha_samples_"):
            tail = 0.5 * (1.0 - level)
            lower, upper = np.quantile(self.alpha_samples_, [tail, 1.0 - tail])
            return float(lower), float(upper)
        z = stats.norm.ppf(0.5 + 0.5 * level)
        spread = np.exp(z * self.log_alpha_std_)
        return float(self.alpha_ / spread), float(self.alpha_ * spread)

    def _summary_rows(self, level):
        """The ``alpha`` row of :meth:`summary`: ``alpha_``, ``alpha_std_`` and
        :meth:`alpha_interval`; with sampled alpha also its ESS and R-hat."""
        lower, upper = self.alpha_interval(level)
        row = {"mean": self.alpha_, "sd": self.alpha_std_, "lower": lower, "upper": upper}
        if hasattr(self, "alpha_samples_"):
            row.update(ess=self._alpha_diagnostics["effective_sample_size"],
                       r_hat=self._alpha_diagnostics["r_hat"])
        return {"alpha": row}
