"""Measures of how well a coreset, or the posterior fitted on it, matches the full data.

* :func:`coreset_quality`: how far a fitted coreset's Laplace posterior is from the full
  data's, in nats (KL divergence) and in full-posterior standard deviations (largest mean
  difference): the numbers to read when judging a coreset;
* :func:`gaussian_kl` and :func:`posterior_kl`: KL divergence between Gaussian (or
  moment-matched) posteriors, the error measure of the sparse-VI and GIGA papers;
* :func:`mean_error_sd`: largest difference between two posterior means, in standard
  deviations of the reference posterior;
* :func:`polynomial_mmd`: maximum mean discrepancy between two sets of posterior samples with
  a polynomial kernel, the error measure of Huggins et al. (2016, Section 4);
* :func:`loglik_relative_error`: how far the coreset's weighted log-likelihood is from the
  full data's at given parameter values (the quantity coresets bound uniformly).
"""

from math import comb
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from sklearn.utils import check_array, check_scalar, column_or_1d
from sklearn.utils.validation import check_consistent_length, check_is_fitted

from ._design import linear_predictor, n_params
from ._backend import row_chunks
from .families import make_family
from ._inference import laplace, prior_precision
from ._posterior import GaussianPosterior, _stable_cholesky
from ._posterior import gaussian_kl_cholesky
from ._validation import ACCEPT_SPARSE, check_sample_weight

__all__ = ["CoresetQuality", "coreset_quality", "gaussian_kl", "loglik_relative_error",
           "mean_error_sd", "polynomial_mmd", "posterior_kl"]

# Elements per temporary block (32 MB of float64): bounds the memory of Gram-matrix blocks,
# polynomial feature blocks and N x S log-likelihood blocks.
_BLOCK_ELEMENTS = 2**22


# --- Gaussian KL ----------------------------------------------------------------------------

def _check_mean_cov(mean, cov, name):
    mean = check_array(mean, ensure_2d=False, dtype=np.float64, input_name=f"mean{name}")
    cov = check_array(cov, ensure_2d=False, dtype=np.float64, input_name=f"cov{name}")
    if mean.ndim != 1:
        raise ValueError(f"mean{name} must be 1-D, got shape {mean.shape}.")
    if cov.shape != (mean.size, mean.size):
        raise ValueError(f"cov{name} must have shape {(mean.size, mean.size)} to match "
                         f"mean{name}, got {cov.shape}.")
    return mean, cov


def gaussian_kl(mean0, cov0, mean1, cov1):
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
    kl = gaussian_kl_cholesky(mean0, _stable_cholesky(cov0), mean1, _stable_cholesky(cov1))
    return float(kl)


def _as_gaussian(obj, name):
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


def posterior_kl(estimator_a, estimator_b):
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
    post_a = _as_gaussian(estimator_a, "estimator_a")
    post_b = _as_gaussian(estimator_b, "estimator_b")
    _check_same_length(post_a, post_b, "estimator_a", "estimator_b")
    return float(post_a.kl(post_b))


def _check_same_length(post_a, post_b, name_a, name_b):
    if post_a.mean.shape != post_b.mean.shape:
        raise ValueError(
            f"The posteriors are over parameters of different lengths: {name_a} has "
            f"{post_a.mean.size} and {name_b} {post_b.mean.size} (different numbers of "
            "features, or fit_intercept differs).")


def mean_error_sd(estimator_a, estimator_b):
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
    post_a = _as_gaussian(estimator_a, "estimator_a")
    post_b = _as_gaussian(estimator_b, "estimator_b")
    _check_same_length(post_a, post_b, "estimator_a", "estimator_b")
    return float(np.max(np.abs(post_a.mean - post_b.mean) / post_b.std, initial=0.0))


# --- polynomial-kernel MMD ------------------------------------------------------------------

def _kernel_mean_gram(A, B, degree, coef0):
    """``mean_ij (a_i . b_j + coef0)^degree``, Gram matrix computed in row blocks."""
    total = 0.0
    for batch in row_chunks(len(A), len(B), max_elements=_BLOCK_ELEMENTS):
        block = A[batch] @ B.T
        block += coef0
        total += np.sum(block**degree)
    return total / (len(A) * len(B))


def _mmd2_gram(A, B, degree, coef0):
    """Biased MMD^2 and the within-sample kernel means, from Gram matrices."""
    k_aa = _kernel_mean_gram(A, A, degree, coef0)
    k_bb = _kernel_mean_gram(B, B, degree, coef0)
    k_ab = _kernel_mean_gram(A, B, degree, coef0)
    return k_aa + k_bb - 2.0 * k_ab, k_aa, k_bb


def _tensor_moments(X, degree):
    """Means of the tensor powers ``x^{(x)k}``, flattened, for k = 1..degree.

    ``(x . y)^k = <x^{(x)k}, y^{(x)k}>``, so these means are the explicit feature-space means
    of the homogeneous polynomial kernels. Row blocks keep the ``n x p^(k-1)`` Khatri-Rao
    products bounded in memory.
    """
    n, p = X.shape
    sums = [np.zeros(p**k) for k in range(1, degree + 1)]
    for batch in row_chunks(n, p ** (degree - 1), max_elements=_BLOCK_ELEMENTS):
        Xb = X[batch]
        power = np.ones((len(Xb), 1))  # x^{(x)0}
        for k in range(degree):
            sums[k] += (power.T @ Xb).ravel()  # sum over rows of x^{(x)k} (x) x
            if k + 1 < degree:
                power = (power[:, :, None] * Xb[:, None, :]).reshape(len(Xb), -1)
    return [s / n for s in sums]


def _mmd2_features(A, B, degree, coef0):
    """Biased MMD^2 and the within-sample kernel means, in explicit feature space.

    With ``(x . y + c)^d = sum_k C(d, k) c^(d-k) (x . y)^k``, the biased MMD^2 is
    ``sum_k C(d, k) c^(d-k) ||E_a[x^{(x)k}] - E_b[x^{(x)k}]||^2``: a sum of non-negative terms
    with no cancellation between large kernel means, in O(n p^d) instead of O(n^2 p).
    """
    mom_a, mom_b = _tensor_moments(A, degree), _tensor_moments(B, degree)
    weights = [comb(degree, k) * coef0 ** (degree - k) for k in range(1, degree + 1)]
    const = coef0**degree  # the k = 0 term, identical for both samples
    mmd2 = sum(w * np.sum((ma - mb) ** 2) for w, ma, mb in zip(weights, mom_a, mom_b))
    k_aa = const + sum(w * (m @ m) for w, m in zip(weights, mom_a))
    k_bb = const + sum(w * (m @ m) for w, m in zip(weights, mom_b))
    return mmd2, k_aa, k_bb


def _use_features(n_total, n_features, degree):
    """Whether the explicit feature map is cheaper (``n p^d`` flops against ``n^2 p``) and
    its ``p^d`` moment tensor small enough to hold."""
    return (n_features ** (degree - 1) <= n_total
            and n_features**degree <= _BLOCK_ELEMENTS)


def polynomial_mmd(samples_a, samples_b, *, degree=3, coef0=0.2, unbiased=False,
                   squared=True):
    """Maximum mean discrepancy between two sample sets with a polynomial kernel.

    The kernel is ``k(x, y) = (x . y + coef0)^degree``. Huggins et al. (2016, Section 4)
    compare posterior samples with "a 3rd degree polynomial kernel"; the constant is not given
    in the paper, and ``coef0=0.2`` is the value in the authors' code. Like that code, the
    default returns the squared MMD's biased (V-statistic) estimate

    ``MMD^2 = mean_ij k(a_i, a_j) + mean_ij k(b_i, b_j) - 2 mean_ij k(a_i, b_j)``,

    which is always >= 0; ``unbiased=True`` drops the ``i = j`` terms of the first two means
    (a U-statistic, unbiased for the population MMD^2, and possibly negative).

    Since a degree-``d`` polynomial kernel has an explicit feature map, the estimate is
    computed from the means of the tensor powers ``x^{(x)k}``, ``k <= d``, in
    ``O(n p^d)`` time whenever ``p^(d-1) <= n`` (and ``p^d`` is at most a few million), and
    otherwise from Gram matrices in row blocks of bounded memory (``O(n^2 p)`` time). Both
    give the same value up to rounding.
    The MMD with this kernel compares the moments of the two distributions up to order
    ``degree`` and nothing else.

    Parameters
    ----------
    samples_a : array-like of shape (n_samples_a, n_features)
        First sample set, e.g. posterior draws from the full data.
    samples_b : array-like of shape (n_samples_b, n_features)
        Second sample set, e.g. posterior draws given a coreset.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=0.2
        Non-negative constant of the kernel (with a negative one the kernel is not positive
        definite and the MMD not a metric).
    unbiased : bool, default=False
        Return the unbiased estimate of MMD^2 instead of the biased one. Needs at least two
        samples in each set.
    squared : bool, default=True
        Return MMD^2 (as plotted in the paper). With False, return its square root, with
        negative unbiased estimates clipped to 0.

    Returns
    -------
    mmd : float
        The squared MMD estimate, or the MMD with ``squared=False``.

    References
    ----------
    A. Gretton, K. M. Borgwardt, M. J. Rasch, B. Schoelkopf and A. Smola. A kernel
    two-sample test. JMLR 13, 2012 (Lemma 6 and eq. 3 for the estimators).

    J. H. Huggins, T. Campbell and T. Broderick. Coresets for scalable Bayesian logistic
    regression. NeurIPS 2016, Section 4.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.metrics import polynomial_mmd
    >>> rng = np.random.default_rng(0)
    >>> a = rng.normal(size=(2000, 3))
    >>> b = rng.normal(size=(2000, 3))
    >>> polynomial_mmd(a, b) < polynomial_mmd(a, b + 0.5)
    True
    """
    A = check_array(samples_a, dtype=np.float64, input_name="samples_a")
    B = check_array(samples_b, dtype=np.float64, input_name="samples_b")
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"samples_a has {A.shape[1]} features but samples_b has "
                         f"{B.shape[1]}.")
    degree = check_scalar(degree, "degree", Integral, min_val=1)
    coef0 = check_scalar(coef0, "coef0", Real, min_val=0.0)
    if unbiased and min(len(A), len(B)) < 2:
        raise ValueError("The unbiased estimate needs at least two samples in each set.")

    if _use_features(len(A) + len(B), A.shape[1], degree):
        mmd2, k_aa, k_bb = _mmd2_features(A, B, degree, coef0)
    else:
        mmd2, k_aa, k_bb = _mmd2_gram(A, B, degree, coef0)
    if unbiased:
        # removing the diagonal from mean_ij k(a_i, a_j) shifts it by (mean - mean_diag)/(n-1)
        diag_a = np.mean((np.einsum("ij,ij->i", A, A) + coef0) ** degree)
        diag_b = np.mean((np.einsum("ij,ij->i", B, B) + coef0) ** degree)
        mmd2 += (k_aa - diag_a) / (len(A) - 1) + (k_bb - diag_b) / (len(B) - 1)
    mmd2 = float(mmd2)
    return mmd2 if squared else float(np.sqrt(max(mmd2, 0.0)))


# --- relative log-likelihood error ----------------------------------------------------------

def _encode_target(y, family):
    """Targets encoded as the estimators encode them; with a binary model a single class
    is accepted when its label tells its side (1 or True positive, 0, -1 or False negative)."""
    if family.binary:
        return family.encode_target(y, family.check_classes(y, one_class_ok=True))
    return family.fit_target(y)[0]


def _check_coreset(coreset_indices, coreset_weights, n_samples):
    indices = column_or_1d(np.asarray(coreset_indices))
    if indices.size and indices.dtype.kind not in "iu":
        raise ValueError(f"coreset_indices must be integers, got dtype {indices.dtype}.")
    indices = indices.astype(np.intp)
    if indices.size and (indices.min() < 0 or indices.max() >= n_samples):
        raise ValueError(f"coreset_indices must lie in [0, {n_samples}); X has {n_samples} "
                         "rows.")
    weights = check_array(coreset_weights, ensure_2d=False, dtype=np.float64,
                          ensure_min_samples=0, input_name="coreset_weights")
    if weights.shape != indices.shape:
        raise ValueError(f"coreset_weights has shape {weights.shape} but coreset_indices has "
                         f"shape {indices.shape}.")
    if np.any(weights < 0):
        raise ValueError("coreset_weights contains negative values.")
    return indices, weights


def loglik_relative_error(X, y, coreset_indices, coreset_weights, theta, *, model="logistic",
                          link="log", noise_scale=1.0, fit_intercept=True, sample_weight=None):
    """Relative error of a coreset's weighted log-likelihood at given parameter values.

    For each parameter vector ``theta_s``,

    ``|L(theta_s) - L_w(theta_s)| / |L(theta_s)|``  with
    ``L(theta) = sum_n v_n log p(y_n | x_n, theta)`` (``v`` = ``sample_weight``, ones by
    default) and ``L_w(theta) = sum_m w_m log p(y_{i_m} | x_{i_m}, theta)`` over the coreset
    rows ``i_m`` with weights ``w_m``. This is the quantity a coreset bounds uniformly over
    a parameter set (Huggins, Campbell & Broderick 2016, Definition 3.2 with ``epsilon`` the
    maximum over draws); pass posterior draws to measure it where the posterior mass is.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The full data.
    y : array-like of shape (n_samples,)
        Targets: any two class labels for ``model="logistic"`` (encoded as the classifiers
        do: classes sorted, the larger one is the positive class), counts for ``"poisson"``,
        real values for ``"gaussian"``.
    coreset_indices : array-like of int, shape (n_coreset,)
        Rows of X in the coreset, e.g. a constructor's ``sample_indices_``. Repeated indices
        add up.
    coreset_weights : array-like of shape (n_coreset,)
        Non-negative weights of the coreset rows, e.g. ``sample_weight_``.
    theta : array-like of shape (n_params,) or (n_draws, n_params)
        Parameter vector(s) ``[coef..., intercept]`` (intercept last, only when
        ``fit_intercept``), e.g. ``estimator.posterior_.sample(100)``.
    model : {"logistic", "probit", "poisson", "gaussian", "negative_binomial"} or Family, \
default="logistic"
        Likelihood family: a registered name or a :class:`~skcoreset.families.Family`
        instance (needed for the negative binomial model, whose ``alpha`` is then given,
        e.g. ``NegativeBinomialFamily(alpha=0.5)``).
    link : {"log", "softplus"}, default="log"
        Inverse link of the Poisson model given by name; ignored otherwise.
    noise_scale : float, default=1.0
        Noise standard deviation of the Gaussian model given by name; ignored otherwise.
    fit_intercept : bool, default=True
        Whether the last entry of theta is an intercept.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the full data's rows (when it is itself a weighted data set).

    Returns
    -------
    error : ndarray of shape (n_draws,) or float
        The relative error at each draw (take ``.mean()`` or ``.max()`` to summarise), or a
        float when ``theta`` is 1-D. Exactly 0 for the full data with its own weights; ``inf``
        where the full log-likelihood is exactly 0 and the coreset's is not.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.datasets import make_logistic_regression
    >>> from skcoreset.metrics import loglik_relative_error
    >>> X, y = make_logistic_regression(1000, coef=[3, 3], random_state=0)
    >>> theta = np.array([[3.0, 3.0, 0.0], [1.0, 2.0, 0.5]])
    >>> idx = np.arange(0, 1000, 10)  # every tenth row, weight 10
    >>> err = loglik_relative_error(X, y, idx, np.full(100, 10.0), theta)
    >>> err.shape
    (2,)
    >>> loglik_relative_error(X, y, np.arange(1000), np.ones(1000), theta)
    array([0., 0.])
    """
    X = check_array(X, dtype=np.float64, input_name="X", accept_sparse=ACCEPT_SPARSE)
    y = column_or_1d(y)
    check_consistent_length(X, y)
    family = make_family(model, link=link, noise_scale=noise_scale)
    y = _encode_target(y, family)
    n_samples = X.shape[0]
    full_weights = check_sample_weight(sample_weight, n_samples)
    indices, weights = _check_coreset(coreset_indices, coreset_weights, n_samples)

    theta = check_array(theta, ensure_2d=False, dtype=np.float64, input_name="theta")
    single = theta.ndim == 1
    thetas = np.atleast_2d(theta)
    expected = n_params(X.shape[1], fit_intercept)
    if thetas.ndim != 2 or thetas.shape[1] != expected:
        raise ValueError(f"theta must have shape ({expected},) or (n_draws, {expected}) for "
                         f"{X.shape[1]} features and fit_intercept={fit_intercept}, got "
                         f"{theta.shape}.")

    # The coreset as a dense weight vector over all rows: both sums then run over the same
    # log-likelihood blocks, so a coreset equal to the full data gives exactly 0.
    core_weights = np.bincount(indices, weights=weights, minlength=n_samples)
    full = np.zeros(len(thetas))
    core = np.zeros(len(thetas))
    for batch in row_chunks(n_samples, len(thetas), max_elements=_BLOCK_ELEMENTS):
        loglik = family.loglik(y[batch], linear_predictor(X[batch], thetas, fit_intercept))
        full += full_weights[batch] @ loglik
        core += core_weights[batch] @ loglik
    with np.errstate(divide="ignore", invalid="ignore"):
        error = np.abs(full - core) / np.abs(full)
    return float(error[0]) if single else error


# --- coreset quality in nats ----------------------------------------------------------------

_PRIOR_PARAMS = ("prior_scale", "intercept_prior_scale", "fit_intercept")


class CoresetQuality(NamedTuple):
    """What :func:`coreset_quality` returns.

    Attributes
    ----------
    kl : float
        ``KL(coreset posterior || full posterior)`` in nats, between the Laplace
        approximations of the two weighted posteriors.
    max_mean_error_sd : float
        Largest ``|mean difference|`` over the parameters, in standard deviations of the
        full posterior (see :func:`mean_error_sd`).
    size : int
        Number of coreset rows (``len(sample_indices_)``).
    relative_kl : float
        ``kl / KL(prior || full posterior)``, the normalised ratio of the first coreset
        papers; kept for comparison with them only, since its denominator grows with the
        number of rows and hides large errors at large N.
    full_posterior : GaussianPosterior
        Laplace posterior of the full (weighted) data; pass it back as ``full_posterior``
        to skip that fit when evaluating other coresets of the same data.
    """

    kl: float
    max_mean_error_sd: float
    size: int
    relative_kl: float
    full_posterior: GaussianPosterior


def _coreset_prior_params(coreset):
    """Prior scales and ``fit_intercept`` of a constructor, from its public parameters. A
    meta-constructor (:class:`~skcoreset.StreamingCoreset`) has none of its own: they are
    those of its ``base_coreset`` (``None`` meaning ``UniformCoreset()``)."""
    params = coreset.get_params(deep=False)
    while not all(key in params for key in _PRIOR_PARAMS) and "base_coreset" in params:
        base = params["base_coreset"]
        if base is None:
            from .coreset import UniformCoreset  # the documented default base

            base = UniformCoreset()
        params = base.get_params(deep=False)
    missing = [key for key in _PRIOR_PARAMS if key not in params]
    if missing:
        raise TypeError(f"coreset ({type(coreset).__name__}) has no {', '.join(missing)} "
                        "parameter(s); coreset_quality needs a skcoreset coreset "
                        "constructor.")
    return {key: params[key] for key in _PRIOR_PARAMS}


def _encode_coreset_target(coreset, y):
    """y encoded as the constructor encoded it at fit: for the logistic model against its
    fitted ``classes_`` (``classes_[1]`` is +1), so both posteriors see the same labels."""
    classes = getattr(coreset, "classes_", None)
    if classes is None:
        return coreset.family_.encode_target(y)
    return coreset.family_.encode_target(
        y, classes, hint=" The coreset was not fitted on them: y must be the targets the "
        "coreset was built from.")


def coreset_quality(coreset, X, y, sample_weight=None, *, full_posterior=None):
    """How well a fitted coreset stands in for the full data, in nats and posterior sds.

    Fits the Laplace approximation of the posterior given the coreset (its rows
    ``sample_indices_`` with weights ``sample_weight_``) and of the posterior given all of
    ``X`` (rows weighted by ``sample_weight``), both under the constructor's own likelihood
    and prior (``family_``, ``prior_scale``, ``intercept_prior_scale``, ``fit_intercept``),
    and compares them:

    * ``kl``: ``KL(coreset posterior || full posterior)`` in **nats**, the error measure of
      Campbell and Beronov (2019);
    * ``max_mean_error_sd``: the largest difference between the two posterior means, in
      standard deviations of the full posterior (:func:`mean_error_sd`).

    Read the nats as an absolute amount: below about 0.1 the two posteriors are hard to tell
    apart, a few nats mean visibly shifted or mis-scaled marginals. The ratio ``relative_kl``
    (the KL divergence relative to that of the prior, as plotted in the papers) is returned
    beside it for comparison only: its denominator ``KL(prior || full posterior)`` grows in
    proportion to the number of rows (the posterior variance shrinks as ``1 / N`` in every
    direction, so the trace term grows as ``N``). At ``N = 1e5`` it can be ``1e5`` to
    ``1e6`` nats, and a "small" ratio of ``1e-4`` still tens of nats, with posterior means
    several standard deviations off.

    Both Laplace fits are Newton's method on the rows in place (memory ``O(N + p^2)`` on top
    of ``X``; no ``N x S`` matrix), about one second for the full fit at ``N = 1e6``,
    ``p = 11``. Pass the returned ``full_posterior`` back to evaluate further coresets of the
    same data without refitting it.

    Parameters
    ----------
    coreset : fitted coreset constructor
        A constructor of :mod:`skcoreset.coreset` (e.g. :class:`~skcoreset.GIGACoreset`)
        fitted on ``X``, ``y`` (and ``sample_weight``).
    X : array-like of shape (n_samples, n_features)
        The data the coreset was built from (recognised by its number of rows and the
        coreset rows in place).
    y : array-like of shape (n_samples,)
        The targets the coreset was built from.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the full data's rows, as passed to the constructor's ``fit``. ``None``
        means ones.
    full_posterior : GaussianPosterior, default=None
        The Laplace posterior of the full data (``full_posterior`` of an earlier result for
        the same data, likelihood and prior), or anything :func:`posterior_kl` accepts. By
        default it is computed.

    Returns
    -------
    quality : CoresetQuality
        Named tuple ``(kl, max_mean_error_sd, size, relative_kl, full_posterior)``.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If ``coreset`` is not fitted.
    TypeError
        If ``coreset`` is not a coreset constructor, or ``full_posterior`` not a posterior.
    ValueError
        If ``X`` has the wrong number of features or is not the data the coreset was fitted
        on, ``y`` or ``sample_weight`` do not match ``X`` (lengths, unseen labels, invalid
        counts), or ``full_posterior`` has the wrong dimension.

    See Also
    --------
    posterior_kl, mean_error_sd : The same measures between fitted estimators.

    References
    ----------
    T. Campbell and B. Beronov. Sparse variational inference: Bayesian coresets from
    scratch. NeurIPS 2019 (Section 5, KL divergence to the full-data posterior).

    Examples
    --------
    >>> from skcoreset import UniformCoreset
    >>> from skcoreset.datasets import make_logistic_regression
    >>> from skcoreset.metrics import coreset_quality
    >>> X, y = make_logistic_regression(20_000, coef=[1.0, -1.0, 0.5], random_state=0)
    >>> small = UniformCoreset(M=100, random_state=0).fit(X, y)
    >>> quality = coreset_quality(small, X, y)
    >>> quality.size
    100
    >>> quality.kl > 1.0 and quality.relative_kl < 0.1  # nats tell what the ratio hides
    True

    A coreset of all the rows reproduces the full posterior; ``full_posterior`` from the
    first call skips refitting it:

    >>> everything = UniformCoreset(M=20_000).fit(X, y)
    >>> exact = coreset_quality(everything, X, y, full_posterior=quality.full_posterior)
    >>> exact.kl < 1e-8 and exact.max_mean_error_sd < 1e-4
    True
    """
    if not (hasattr(coreset, "fit_coreset") and hasattr(coreset, "get_params")):
        raise TypeError("coreset must be a fitted coreset constructor (e.g. GIGACoreset), "
                        f"got {type(coreset).__name__}.")
    check_is_fitted(coreset, ["sample_indices_", "sample_weight_", "family_"])
    params = _coreset_prior_params(coreset)

    coreset.transform(X)  # validates the features
    if not coreset._is_training_data(X):
        raise ValueError(
            f"X ({_n_rows(X)} rows) is not the data the coreset was fitted on: its number "
            "of rows or its rows at sample_indices_ differ. Pass the X the coreset was "
            "built from.")
    X = check_array(X, dtype=np.float64, input_name="X", accept_sparse=ACCEPT_SPARSE)
    n_samples, n_features = X.shape
    y = column_or_1d(y)
    if y.shape[0] != n_samples:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n_samples} rows.")
    y = _encode_coreset_target(coreset, y)
    sample_weight = check_sample_weight(sample_weight, n_samples)

    family = coreset.family_
    fit_intercept = params["fit_intercept"]
    prior_prec = prior_precision(n_features, prior_scale=params["prior_scale"],
                                 intercept_prior_scale=params["intercept_prior_scale"],
                                 fit_intercept=fit_intercept)
    if full_posterior is None:
        full = laplace(X, y, family, sample_weight=sample_weight, prior_prec=prior_prec,
                       fit_intercept=fit_intercept).posterior
    else:
        full = _as_gaussian(full_posterior, "full_posterior")
        if full.mean.shape != prior_prec.shape:
            raise ValueError(
                f"full_posterior is over {full.mean.size} parameters, but the coreset's "
                f"model has {prior_prec.size} ({n_features} features"
                f"{' and an intercept' if fit_intercept else ''}).")

    idx = coreset.sample_indices_
    # warm start at the full mode: a good coreset's mode is close to it
    core = laplace(X[idx], y[idx], family, sample_weight=coreset.sample_weight_,
                   prior_prec=prior_prec, fit_intercept=fit_intercept,
                   theta0=full.mean).posterior
    kl = float(core.kl(full))
    prior = GaussianPosterior(np.zeros(prior_prec.size), np.diag(1.0 / prior_prec))
    return CoresetQuality(
        kl=kl, max_mean_error_sd=mean_error_sd(core, full), size=int(idx.size),
        relative_kl=kl / float(prior.kl(full)), full_posterior=full)


def _n_rows(X):
    shape = getattr(X, "shape", None)
    return shape[0] if shape else len(X)
