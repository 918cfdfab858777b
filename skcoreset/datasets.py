"""Synthetic data sets used in the coreset papers.

Every generator returns ``(X, y)``, or ``(X, y, coef)`` with ``return_coef=True``, where
``coef`` holds the true coefficients of the generating model (the intercept is not part of
``coef``; it is an argument, or 0). ``X`` is float64 of shape ``(n_samples, n_features)``.
Binary labels are int64 in ``{0, 1}`` (the papers' ``{-1, +1}`` with -1 mapped to 0), so
they work with any scikit-learn classifier; counts are int64.
"""

from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.utils import check_random_state, check_scalar

# Huggins, Campbell & Broderick 2016, Section 4, "Synthetic Data": feature d is Bernoulli(p_d),
# labels are logistic in theta with no separate intercept (p_1 = 1 makes the first feature a
# constant, so theta_1 = -3 plays the role of an intercept). BINARY5 uses the first five
# components, as in Scott et al. (2016), Table 1b.
_BINARY_PROBS = np.array([1.0, 0.2, 0.3, 0.5, 0.01, 0.1, 0.2, 0.007, 0.005, 0.001])
_BINARY_COEF = np.array([-3.0, 1.2, -0.5, 0.8, 3.0, -1.0, -0.7, 4.0, 3.5, 4.5])

# Huggins, Campbell & Broderick 2016, Section 4: MIXTURE, labels first, then X ~ N(mu_y, I) in
# ten dimensions.
_MIXTURE_MEAN_POS = np.array([1.0] * 5 + [0.0] * 5)  # mu_{+1}
_MIXTURE_MEAN_NEG = np.array([0.0] * 5 + [1.0] * 5)  # mu_{-1}

# Rates beyond this are certainly a mis-specified predictor, and numpy's Poisson sampler
# rejects rates near 1e19 anyway; fail with a message instead.
_MAX_POISSON_RATE = 1e15


def _check_n_samples(n_samples):
    return check_scalar(n_samples, "n_samples", Integral, min_val=1)


def _resolve_coef(coef, n_features, rng):
    """Coefficients as given, or drawn from N(0, I / n_features) when ``coef`` is None.

    The 1 / n_features variance keeps ``x . coef`` at unit variance on average for
    ``x ~ N(0, I)``, so drawn problems are neither trivial nor numerically extreme.
    """
    if coef is None:
        n_features = 2 if n_features is None else n_features
        check_scalar(n_features, "n_features", Integral, min_val=1)
        return rng.standard_normal(n_features) / np.sqrt(n_features)
    coef = np.asarray(coef, dtype=np.float64)
    if coef.ndim != 1 or coef.size == 0:
        raise ValueError(f"coef must be a non-empty 1-D array, got shape {coef.shape}.")
    if not np.all(np.isfinite(coef)):
        raise ValueError("coef contains NaN or infinity.")
    if n_features is not None and n_features != coef.size:
        raise ValueError(f"n_features={n_features} does not match len(coef)={coef.size}.")
    return coef


def _check_intercept(intercept):
    intercept = check_scalar(intercept, "intercept", Real)
    if not np.isfinite(intercept):
        raise ValueError("intercept must be finite.")
    return float(intercept)


def _bernoulli_labels(eta, rng):
    """Labels in {0, 1} with P(y = 1) = sigmoid(eta)."""
    return (rng.random_sample(eta.shape) < expit(eta)).astype(np.int64)


def _output(X, y, coef, return_coef):
    return (X, y, coef.copy()) if return_coef else (X, y)


def make_logistic_regression(n_samples=100, n_features=None, *, coef=None, intercept=0.0,
                             return_coef=False, random_state=None):
    """Generate binary labels from a logistic regression with Gaussian features.

    ``x ~ N(0, I)`` and ``P(y = 1 | x) = sigmoid(x . coef + intercept)``. With
    ``coef=[3, 3]`` and ``intercept=0`` this is the "Synthetic" logistic data set of the
    sparse-VI and GIGA papers (``theta = [3, 3, 0]``, intercept last).

    Parameters
    ----------
    n_samples : int, default=100
        Number of rows.
    n_features : int, default=None
        Number of features. Inferred from ``coef`` when it is given (and must then agree);
        2 when neither is given.
    coef : array-like of shape (n_features,), default=None
        True coefficients. When None they are drawn from ``N(0, I / n_features)`` with
        ``random_state``, so that ``x . coef`` has unit variance on average.
    intercept : float, default=0.0
        True intercept.
    return_coef : bool, default=False
        Also return the coefficients (useful when they were drawn).
    random_state : int, RandomState instance or None, default=None
        Seed or generator; pass an int for reproducible output.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
        Standard normal features.
    y : ndarray of shape (n_samples,), int64
        Labels in ``{0, 1}``.
    coef : ndarray of shape (n_features,)
        The true coefficients; only returned when ``return_coef=True``.

    See Also
    --------
    make_poisson_regression : Counts from a Poisson regression.
    make_binary : Rare binary features (BINARY5/BINARY10 of Huggins, Campbell & Broderick 2016).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.datasets import make_logistic_regression
    >>> X, y = make_logistic_regression(10_000, coef=[3, 3], random_state=0)
    >>> X.shape, y.dtype.name, np.unique(y).tolist()
    ((10000, 2), 'int64', [0, 1])
    """
    rng = check_random_state(random_state)
    n_samples = _check_n_samples(n_samples)
    coef = _resolve_coef(coef, n_features, rng)
    intercept = _check_intercept(intercept)
    X = rng.standard_normal((n_samples, coef.size))
    y = _bernoulli_labels(X @ coef + intercept, rng)
    return _output(X, y, coef, return_coef)


def make_poisson_regression(n_samples=100, n_features=None, *, coef=None, intercept=0.0,
                            link="log", return_coef=False, random_state=None):
    """Generate counts from a Poisson regression with Gaussian features.

    ``x ~ N(0, I)`` and ``y ~ Poisson(rate(x . coef + intercept))`` with
    ``rate = exp`` (``link="log"``) or ``rate(eta) = log(1 + exp(eta))``
    (``link="softplus"``, the coreset papers' choice). With ``coef=[1]``, ``intercept=0``
    and ``link="softplus"`` this is the "Synthetic" Poisson data set of the sparse-VI and
    GIGA papers (``theta = [1, 0]``).

    Parameters
    ----------
    n_samples : int, default=100
        Number of rows.
    n_features : int, default=None
        Number of features. Inferred from ``coef`` when it is given (and must then agree);
        2 when neither is given.
    coef : array-like of shape (n_features,), default=None
        True coefficients. When None they are drawn from ``N(0, I / n_features)`` with
        ``random_state``.
    intercept : float, default=0.0
        True intercept.
    link : {"log", "softplus"}, default="log"
        Inverse link from the linear predictor to the Poisson rate.
    return_coef : bool, default=False
        Also return the coefficients.
    random_state : int, RandomState instance or None, default=None
        Seed or generator; pass an int for reproducible output.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
        Standard normal features.
    y : ndarray of shape (n_samples,), int64
        Non-negative counts.
    coef : ndarray of shape (n_features,)
        The true coefficients; only returned when ``return_coef=True``.

    Examples
    --------
    >>> from skcoreset.datasets import make_poisson_regression
    >>> X, y = make_poisson_regression(10_000, coef=[1.0], link="softplus", random_state=0)
    >>> X.shape, y.dtype.name, bool(y.min() >= 0)
    ((10000, 1), 'int64', True)
    """
    if link not in ("log", "softplus"):
        raise ValueError(f"link must be 'log' or 'softplus', got {link!r}.")
    rng = check_random_state(random_state)
    n_samples = _check_n_samples(n_samples)
    coef = _resolve_coef(coef, n_features, rng)
    intercept = _check_intercept(intercept)
    X = rng.standard_normal((n_samples, coef.size))
    eta = X @ coef + intercept
    with np.errstate(over="ignore"):  # overflow becomes inf and is reported just below
        rate = np.exp(eta) if link == "log" else np.logaddexp(0.0, eta)
    if not np.all(rate <= _MAX_POISSON_RATE):
        raise ValueError(
            f"The Poisson rate reaches {rate.max():.3g}; reduce the coefficients or the "
            "intercept (or use link='softplus').")
    y = rng.poisson(rate).astype(np.int64)
    return _output(X, y, coef, return_coef)


def make_binary(n_samples=1000, n_features=10, *, return_coef=False, random_state=None):
    """Generate the BINARY5 / BINARY10 rare-feature data of Huggins et al. (2016).

    Following Huggins, Campbell & Broderick 2016, Section 4 ("Synthetic Data"), feature ``d`` is
    an independent Bernoulli(``p_d``) variable and ``P(y = 1 | x) = sigmoid(x . theta)`` with

    * ``p = (1, .2, .3, .5, .01, .1, .2, .007, .005, .001)``,
    * ``theta = (-3, 1.2, -.5, .8, 3, -1, -.7, 4, 3.5, 4.5)``,

    all ten components for BINARY10 and the first five for BINARY5. Since ``p_1 = 1`` the
    first column is constant 1 and ``theta_1 = -3`` acts as the intercept; there is no other
    intercept, so fit models to this data with ``fit_intercept=False`` to match the paper. The
    last features are rare (down to 0.1 % of rows) but strongly predictive. The positive class
    makes up about 9.5 % (BINARY5) and 8.9 % (BINARY10) of the rows (Huggins,
    Campbell & Broderick 2016, Table 1). The paper uses ``n_samples = 10**6``.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : {5, 10}, default=10
        5 for BINARY5, 10 for BINARY10.
    return_coef : bool, default=False
        Also return ``theta``.
    random_state : int, RandomState instance or None, default=None
        Seed or generator; pass an int for reproducible output.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
        Entries in ``{0, 1}``; the first column is all ones.
    y : ndarray of shape (n_samples,), int64
        Labels in ``{0, 1}`` (the paper's -1 is 0).
    coef : ndarray of shape (n_features,)
        ``theta``, including the constant column's ``-3``; only returned when
        ``return_coef=True``.

    References
    ----------
    J. H. Huggins, T. Campbell and T. Broderick. Coresets for scalable Bayesian logistic
    regression. NeurIPS 2016, Section 4.

    Examples
    --------
    >>> from skcoreset.datasets import make_binary
    >>> X, y, coef = make_binary(1000, n_features=5, return_coef=True, random_state=0)
    >>> X.shape, coef.tolist()
    ((1000, 5), [-3.0, 1.2, -0.5, 0.8, 3.0])
    """
    if n_features not in (5, 10):
        raise ValueError(f"n_features must be 5 (BINARY5) or 10 (BINARY10), got "
                         f"{n_features!r}.")
    rng = check_random_state(random_state)
    n_samples = _check_n_samples(n_samples)
    probs, coef = _BINARY_PROBS[:n_features], _BINARY_COEF[:n_features]
    X = (rng.random_sample((n_samples, n_features)) < probs).astype(np.float64)
    y = _bernoulli_labels(X @ coef, rng)
    return _output(X, y, coef, return_coef)


def make_mixture(n_samples=1000, *, return_coef=False, random_state=None):
    """Generate the MIXTURE data of Huggins et al. (2016): two Gaussian classes.

    Following Huggins, Campbell & Broderick 2016, Section 4: labels first,
    ``Y ~ Bernoulli(1/2)`` on ``{-1, +1}``, then ``X ~ N(mu_Y, I)`` in ten dimensions with
    ``mu_{+1} = (1, 1, 1, 1, 1, 0, ..., 0)`` and ``mu_{-1} = (0, ..., 0, 1, 1, 1, 1, 1)``. The
    paper uses ``n_samples = 10**6``.

    Because both means have the same norm and the classes are balanced, the log-odds are
    exactly linear: ``P(y = 1 | x) = sigmoid(x . (mu_{+1} - mu_{-1}))`` with no intercept,
    so a logistic regression is well specified, with true coefficients
    ``(1, 1, 1, 1, 1, -1, -1, -1, -1, -1)`` (returned with ``return_coef=True``).

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    return_coef : bool, default=False
        Also return the true logistic coefficients ``mu_{+1} - mu_{-1}``.
    random_state : int, RandomState instance or None, default=None
        Seed or generator; pass an int for reproducible output.

    Returns
    -------
    X : ndarray of shape (n_samples, 10), float64
    y : ndarray of shape (n_samples,), int64
        Labels in ``{0, 1}``: 1 is the paper's +1 (mean ``mu_{+1}``), 0 its -1.
    coef : ndarray of shape (10,)
        Only returned when ``return_coef=True``.

    References
    ----------
    J. H. Huggins, T. Campbell and T. Broderick. Coresets for scalable Bayesian logistic
    regression. NeurIPS 2016, Section 4.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.datasets import make_mixture
    >>> X, y = make_mixture(1000, random_state=0)
    >>> X.shape, np.unique(y).tolist()
    ((1000, 10), [0, 1])
    """
    rng = check_random_state(random_state)
    n_samples = _check_n_samples(n_samples)
    y = (rng.random_sample(n_samples) < 0.5).astype(np.int64)
    means = np.where(y[:, None] == 1, _MIXTURE_MEAN_POS, _MIXTURE_MEAN_NEG)
    X = means + rng.standard_normal((n_samples, _MIXTURE_MEAN_POS.size))
    return _output(X, y, _MIXTURE_MEAN_POS - _MIXTURE_MEAN_NEG, return_coef)
