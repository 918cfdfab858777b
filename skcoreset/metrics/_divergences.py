"""KL divergences and mean errors between Gaussian (or moment-matched) posteriors."""

from typing import Any

import numpy as np
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from .._linalg import gaussian_kl_cholesky, stable_cholesky
from .._posterior import GaussianPosterior
from .._typing import ArrayInput


def _check_mean_cov(mean: ArrayInput, cov: ArrayInput, name: str) -> tuple[Any, Any]:
    mean = check_array(mean, ensure_2d=False, dtype=np.float64, input_name=f"mean{name}")
    cov = check_array(cov, ensure_2d=False, dtype=np.float64, input_name=f"cov{name}")
    if mean.ndim != 1:
        raise ValueError(f"mean{name} must be 1-D, got shape {mean.shape}.")
    if cov.shape != (mean.size, mean.size):
        raise ValueError(f"cov{name} must have shape {(mean.size, mean.size)} to match "
                         f"mean{name}, got {cov.shape}.")
    return mean, cov


def gaussian_kl(mean0: ArrayInput, cov0: ArrayInput, mean1: ArrayInput,
                cov1: ArrayInput) -> float:
    """Kullback-Leibler divergence ``KL(N(mean0, cov0) || N(mean1, cov1))``.

    Computed from Cholesky factors (triangular solves, no explicit inverse), with the
    smallest diagonal jitter that lets a covariance singular to rounding error factor.

    Parameters
    ----------
    mean0 : array-like of shape (p,)
        Mean of the first Gaussian.
    cov0 : array-like of shape (p, p)
        Covariance of the first Gaussian, symmetric positive definite.
    mean1 : array-like of shape (p,)
        Mean of the second Gaussian.
    cov1 : array-like of shape (p, p)
        Covariance of the second Gaussian, symmetric positive definite.

    Returns
    -------
    kl : float
        ``0.5 * (tr(cov1^-1 cov0) + (mean1 - mean0)^T cov1^-1 (mean1 - mean0) - p
        + log det cov1 - log det cov0)``; non-negative, 0 iff the Gaussians are equal.

    Raises
    ------
    ValueError
        For mismatched shapes, NaN or infinite entries, or a covariance that is not
        positive definite (:class:`numpy.linalg.LinAlgError`, a ``ValueError``).

    See Also
    --------
    posterior_kl : The same divergence between the posteriors of fitted estimators.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.metrics import gaussian_kl
    >>> gaussian_kl(np.zeros(2), np.eye(2), np.ones(2), np.eye(2))
    1.0
    """
    mean0, cov0 = _check_mean_cov(mean0, cov0, "0")
    mean1, cov1 = _check_mean_cov(mean1, cov1, "1")
    if mean0.size != mean1.size:
        raise ValueError(f"The Gaussians have different dimensions: {mean0.size} and "
                         f"{mean1.size}.")
    kl = gaussian_kl_cholesky(mean0, stable_cholesky(cov0), mean1, stable_cholesky(cov1))
    return float(kl)


def as_gaussian(obj: Any, name: str) -> GaussianPosterior:
    """The (moment-matched) Gaussian posterior of a fitted estimator, pipeline or posterior."""
    if hasattr(obj, "steps"):  # a Pipeline: the posterior lives in its final estimator
        obj = obj.steps[-1][1]
    if hasattr(obj, "fit"):
        check_is_fitted(obj)
        if not hasattr(obj, "posterior_"):
            raise TypeError(f"{name} ({type(obj).__name__}) has no posterior_ attribute; "
                            "a Bayesian estimator (or a posterior) is needed.")
        obj = obj.posterior_
    if isinstance(obj, GaussianPosterior):
        return obj
    if not (hasattr(obj, "mean") and hasattr(obj, "cov")):
        raise TypeError(f"{name} must be a fitted estimator with a posterior_ attribute or a "
                        f"posterior with mean and cov attributes, got {type(obj).__name__}.")
    mean, cov = _check_mean_cov(np.asarray(obj.mean), np.asarray(obj.cov), f" of {name}")
    return GaussianPosterior(mean, cov)


def posterior_kl(estimator_a: Any, estimator_b: Any) -> float:
    """``KL(posterior of estimator_a || posterior of estimator_b)``.

    The typical use is ``posterior_kl(fitted_on_coreset, fitted_on_full_data)`` or the
    reverse; the papers report both directions.

    Parameters
    ----------
    estimator_a, estimator_b : fitted estimator, Pipeline or posterior
        Estimators with a ``posterior_`` attribute (``BayesianLogisticRegression``,
        ``BayesianPoissonRegression``), pipelines ending in one, or posterior objects
        themselves. A :class:`~skcoreset.GaussianPosterior` is used as is; any other
        posterior exposing ``mean`` and ``cov`` (e.g. a sample-based posterior from MCMC) is
        replaced by the Gaussian with the same mean and covariance, so the result is then the
        KL between moment-matched Gaussians, not between the sample distributions.

    Returns
    -------
    kl : float
        Non-negative; 0 for identical posteriors.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If an estimator is not fitted.
    ValueError
        If the two posteriors are over parameter vectors of different lengths (different
        numbers of features, or an intercept in only one of them).
    TypeError
        If an argument is neither an estimator with ``posterior_`` nor a posterior.

    See Also
    --------
    gaussian_kl : The divergence from means and covariances.

    Examples
    --------
    >>> from skcoreset import BayesianLogisticRegression
    >>> from skcoreset.datasets import make_logistic_regression
    >>> from skcoreset.metrics import posterior_kl
    >>> X, y = make_logistic_regression(500, coef=[3, 3], random_state=0)
    >>> full = BayesianLogisticRegression().fit(X, y)
    >>> half = BayesianLogisticRegression().fit(X[::2], y[::2], sample_weight=[2] * 250)
    >>> posterior_kl(full, full) < 1e-12
    True
    >>> posterior_kl(half, full) > 0
    True
    """
    post_a = as_gaussian(estimator_a, "estimator_a")
    post_b = as_gaussian(estimator_b, "estimator_b")
    _check_same_length(post_a, post_b, "estimator_a", "estimator_b")
    return float(post_a.kl(post_b))


def _check_same_length(post_a: GaussianPosterior, post_b: GaussianPosterior, name_a: str,
                       name_b: str) -> None:
    if post_a.mean.shape != post_b.mean.shape:
        raise ValueError(
            f"The posteriors are over parameters of different lengths: {name_a} has "
            f"{post_a.mean.size} and {name_b} {post_b.mean.size} (different numbers of "
            "features, or fit_intercept differs).")


def mean_error_sd(estimator_a: Any, estimator_b: Any) -> float:
    """Largest difference between two posterior means, in standard deviations of the second.

    ``max_j |mean_a[j] - mean_b[j]| / sd_b[j]`` over the parameters ``[coef..., intercept]``,
    with ``sd_b`` the marginal standard deviations of ``estimator_b``'s posterior, the
    reference (typically the fit on the full data). Unlike a KL divergence, it reads directly
    as "the approximate posterior is centred this many posterior standard deviations away":
    below about 0.1 the difference is negligible for inference, above 1 the approximation
    puts its mass where the reference has little.

    Parameters
    ----------
    estimator_a : fitted estimator, Pipeline or posterior
        The approximation, e.g. an estimator fitted on a coreset. Accepted in the same forms
        as by :func:`posterior_kl`: an estimator with a ``posterior_`` attribute, a
        pipeline ending in one, or a posterior with ``mean`` and ``cov``.
    estimator_b : fitted estimator, Pipeline or posterior
        The reference, e.g. the same estimator fitted on the full data; its marginal
        standard deviations set the scale.

    Returns
    -------
    error : float
        Non-negative; 0 for equal means.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If an estimator is not fitted.
    ValueError
        If the two posteriors are over parameter vectors of different lengths.
    TypeError
        If an argument is neither an estimator with ``posterior_`` nor a posterior.

    See Also
    --------
    posterior_kl : KL divergence between the same posteriors.
    coreset_quality : Both measures for a fitted coreset constructor.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import GaussianPosterior
    >>> from skcoreset.metrics import mean_error_sd
    >>> reference = GaussianPosterior(np.zeros(2), np.diag([4.0, 0.25]))  # sd 2 and 0.5
    >>> mean_error_sd(GaussianPosterior([1.0, 0.25], np.eye(2)), reference)
    0.5
    """
    post_a = as_gaussian(estimator_a, "estimator_a")
    post_b = as_gaussian(estimator_b, "estimator_b")
    _check_same_length(post_a, post_b, "estimator_a", "estimator_b")
    return float(np.max(np.abs(post_a.mean - post_b.mean) / post_b.std, initial=0.0))
