"""How well a coreset stands in for its data: the posterior it gives, in nats, and its
log-likelihood at given parameters."""

from typing import Any, NamedTuple

import numpy as np
from sklearn.utils import check_array, column_or_1d
from sklearn.utils.validation import check_consistent_length, check_is_fitted

from .._design import linear_predictor, n_params
from .._backend import row_chunks
from ..families import make_family
from .._inference import laplace, prior_precision
from .._posterior import GaussianPosterior
from .._validation import ACCEPT_SPARSE, check_sample_weight
from ..coreset import UniformCoreset
from ..coreset._checks import is_training_data
from ._divergences import as_gaussian, mean_error_sd
from .._typing import ArrayInput, FloatArray, MatrixLike, VectorLike

# Elements per temporary block (32 MB of float64): bounds the memory of N x S log-likelihood blocks.
_BLOCK_ELEMENTS = 2**22


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


def loglik_relative_error(X: MatrixLike, y: VectorLike, coreset_indices: ArrayInput,
                          coreset_weights: ArrayInput, theta: ArrayInput, *,
                          model: str = "logistic", link: str = "log",
                          noise_scale: float = 1.0, fit_intercept: bool = True,
                          sample_weight: VectorLike | None = None) -> float | FloatArray:
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
    """Prior scales and ``fit_intercept`` of a constructor, from its fitted attributes
    (``prior_scale_``, ...) where it has them, else its public parameters. A
    meta-constructor (:class:`~skcoreset.StreamingCoreset`) has none of its own: they are
    those of its ``base_coreset`` (``None`` meaning ``UniformCoreset()``)."""
    params = coreset.get_params(deep=False)
    while not all(key in params for key in _PRIOR_PARAMS) and "base_coreset" in params:
        base = params["base_coreset"]
        if base is None:
            base = UniformCoreset()  # the documented default base
        params = base.get_params(deep=False)
    missing = [key for key in _PRIOR_PARAMS if key not in params]
    if missing:
        raise TypeError(f"coreset ({type(coreset).__name__}) has no {', '.join(missing)} "
                        "parameter(s); coreset_quality needs a skcoreset coreset "
                        "constructor.")
    # the prior it was built under (a Pipeline's final estimator's with model="auto")
    return {key: getattr(coreset, key + "_", params[key]) for key in _PRIOR_PARAMS}


def _encode_coreset_target(coreset, y):
    """y encoded as the constructor encoded it at fit: for the logistic model against its
    fitted ``classes_`` (``classes_[1]`` is +1), so both posteriors see the same labels."""
    classes = getattr(coreset, "classes_", None)
    if classes is None:
        return coreset.family_.encode_target(y)
    return coreset.family_.encode_target(
        y, classes, hint=" The coreset was not fitted on them: y must be the targets the "
        "coreset was built from.")


def coreset_quality(coreset: Any, X: MatrixLike, y: VectorLike,
                    sample_weight: VectorLike | None = None, *,
                    full_posterior: Any = None) -> CoresetQuality:
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
    if not is_training_data(coreset, X):
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
        full = as_gaussian(full_posterior, "full_posterior")
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
