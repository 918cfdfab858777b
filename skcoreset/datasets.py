"""Synthetic data sets used in the coreset papers.

Every generator returns ``(X, y)``, or ``(X, y, coef)`` with ``return_coef=True``, where
``coef`` holds the true coefficients of the generating model (the intercept is not part of
``coef``; it is an argument, or 0). ``X`` is float64 of shape ``(n_samples, n_features)``.
Binary labels are int64 in ``{0, 1}`` (the papers' ``{-1, +1}`` with -1 mapped to 0), so
they work with any scikit-learn classifier; counts are int64.
"""

from numbers import Integral, Real
from typing import Literal

import numpy as np
from scipy.special import expit
from sklearn.utils import check_random_state, check_scalar

from ._docstrings import fill_doc
from .families import Link, make_link
from ._typing import ArrayInput, FloatArray, RandomStateLike

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


def make_logistic_regression(n_samples: int = 100, n_features: int | None = None, *,
                             coef: ArrayInput | None = None, intercept: float = 0.0,
                             return_coef: bool = False,
                             random_state: RandomStateLike = None) -> tuple[FloatArray, ...]:
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


def make_poisson_regression(n_samples: int = 100, n_features: int | None = None, *,
                            coef: ArrayInput | None = None, intercept: float = 0.0,
                            link: Literal["log", "softplus"] | Link = "log",
                            return_coef: bool = False,
                            random_state: RandomStateLike = None) -> tuple[FloatArray, ...]:
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
    link = make_link(link, allowed=("log", "softplus"))
    rng = check_random_state(random_state)
    n_samples = _check_n_samples(n_samples)
    coef = _resolve_coef(coef, n_features, rng)
    intercept = _check_intercept(intercept)
    X = rng.standard_normal((n_samples, coef.size))
    eta = X @ coef + intercept
    rate = link.inverse(eta)  # finite (exp is capped at e^500) and checked just below
    if not np.all(rate <= _MAX_POISSON_RATE):
        raise ValueError(
            f"The Poisson rate reaches {rate.max():.3g}; reduce the coefficients or the "
            "intercept (or use link='softplus').")
    y = rng.poisson(rate).astype(np.int64)
    return _output(X, y, coef, return_coef)


def make_binary(n_samples: int = 1000, n_features: int = 10, *, return_coef: bool = False,
                random_state: RandomStateLike = None) -> tuple[FloatArray, ...]:
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


def make_mixture(n_samples: int = 1000, *, return_coef: bool = False,
                 random_state: RandomStateLike = None) -> tuple[FloatArray, ...]:
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


# --------------------------------------------------------------------------------------------
# Real-shaped data: rare events, heavy tails, clusters, misspecified counts
# --------------------------------------------------------------------------------------------
_fill_shape_doc = fill_doc(
    common_params="""
    return_coef : bool, default=False
        Also return the coefficients.
    random_state : int, RandomState instance or None, default=None
        Seed or generator; pass an int for reproducible output.
""",
    returns="""
    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int64
        Labels in ``{0, 1}`` (logistic response) or counts (Poisson response).
    coef : ndarray of shape (n_features,)
        Only returned when ``return_coef=True``.
""")


def _check_fraction(value, name, *, include_zero=False):
    value = check_scalar(value, name, Real)
    low_ok = value >= 0 if include_zero else value > 0
    if not (low_ok and value < 1):
        bound = "[0, 1)" if include_zero else "(0, 1)"
        raise ValueError(f"{name} must be in {bound}, got {value!r}.")
    return float(value)


def _correlated_normal(n_samples, n_features, correlation, rng):
    """Rows of a stationary AR(1) process over the columns: unit variances and
    ``corr(x_j, x_k) = correlation ** |j - k|`` (built in place, one column at a time)."""
    X = rng.standard_normal((n_samples, n_features))
    innovation = np.sqrt(1.0 - correlation**2)
    for j in range(1, n_features):
        X[:, j] *= innovation
        X[:, j] += correlation * X[:, j - 1]
    return X


def _drawn_direction(n_features, norm, rng):
    direction = rng.standard_normal(n_features)
    return norm * direction / np.linalg.norm(direction)


def _intercept_for_rate(eta, rate):
    """The intercept b with ``mean(sigmoid(eta + b)) = rate`` (bisection: the mean is
    increasing in b)."""
    low, high = -50.0, 50.0
    for _ in range(60):
        middle = 0.5 * (low + high)
        if np.mean(expit(eta + middle)) < rate:
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)


def _check_n_features(n_features):
    return check_scalar(n_features, "n_features", Integral, min_val=1)


@_fill_shape_doc
def make_rare_events(n_samples: int = 1000, n_features: int = 30, *,
                     positive_rate: float = 0.01, correlation: float = 0.6,
                     coef_norm: float = 2.0, return_coef: bool = False,
                     random_state: RandomStateLike = None) -> tuple[FloatArray, ...]:
    """Generate rare binary events from a logistic regression with correlated features.

    Features are Gaussian with unit variances and correlation ``correlation ** |j - k|``
    between columns j and k (an AR(1) process along the columns, as in credit, medical and
    click data where neighbouring measurements move together). The coefficients point in a
    random direction with norm ``coef_norm``, and the intercept is set so that the mean
    probability of ``y = 1`` over the generated rows equals ``positive_rate``. With
    ``positive_rate=0.001`` and a million rows there are about a thousand positives: a
    uniform subsample of a thousand rows holds one.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=30
        Number of features.
    positive_rate : float, default=0.01
        Expected fraction of positive labels, in (0, 1).
    correlation : float, default=0.6
        Correlation of neighbouring features, in [0, 1).
    coef_norm : float, default=2.0
        Euclidean norm of the coefficients.
    {common_params}
    {returns}
    See Also
    --------
    make_heavy_tailed, make_clustered, make_misspecified_counts : Other real-shaped data.

    Examples
    --------
    >>> from skcoreset.datasets import make_rare_events
    >>> X, y = make_rare_events(100_000, n_features=5, positive_rate=0.01, random_state=0)
    >>> X.shape, round(float(y.mean()), 3)
    ((100000, 5), 0.01)
    """
    rng = check_random_state(random_state)
    n_samples = _check_n_samples(n_samples)
    n_features = _check_n_features(n_features)
    positive_rate = _check_fraction(positive_rate, "positive_rate")
    correlation = _check_fraction(correlation, "correlation", include_zero=True)
    coef_norm = check_scalar(coef_norm, "coef_norm", Real, min_val=0.0)
    X = _correlated_normal(n_samples, n_features, correlation, rng)
    coef = _drawn_direction(n_features, coef_norm, rng)
    eta = X @ coef
    eta += _intercept_for_rate(eta, positive_rate)
    return _output(X, _bernoulli_labels(eta, rng), coef, return_coef)


def _heavy_tailed_features(n_samples, n_features, distribution, df, rng):
    """Standardised heavy-tailed features (mean 0 and variance 1 in the population)."""
    if distribution == "lognormal":
        X = rng.standard_normal((n_samples, n_features))
        np.exp(X, out=X)
        X -= np.exp(0.5)
        X /= np.sqrt((np.e - 1.0) * np.e)
        return X
    X = rng.standard_t(df, size=(n_samples, n_features))
    if df > 2:
        X /= np.sqrt(df / (df - 2.0))
    return X


def _poisson_counts(eta, rng, max_rate=None):
    with np.errstate(over="ignore"):
        rate = np.exp(eta)
    if max_rate is not None:
        np.minimum(rate, max_rate, out=rate)
    if not np.all(rate <= _MAX_POISSON_RATE):
        raise ValueError(
            f"The Poisson rate reaches {rate.max():.3g}; reduce coef_norm or the intercept.")
    return rng.poisson(rate).astype(np.int64)


@_fill_shape_doc
def make_heavy_tailed(n_samples: int = 1000, n_features: int = 20, *,
                      distribution: str = "lognormal", df: float = 3.0,
                      model: str = "poisson", coef_norm: float | None = None,
                      intercept: float | None = None, return_coef: bool = False,
                      random_state: RandomStateLike = None) -> tuple[FloatArray, ...]:
    """Generate a GLM with heavy-tailed features: log-normal or Student t.

    Every feature is drawn independently from a standard log-normal distribution
    (``exp(z)``, ``z ~ N(0, 1)``, as incomes, prices and durations are) or from a Student t
    with ``df`` degrees of freedom, then standardised to mean 0 and variance 1 by the
    population moments (so a few rows lie tens of standard deviations out, as in real data
    after ``StandardScaler``). The response is a Poisson count with the log link or a
    logistic label, with coefficients in a random direction of norm ``coef_norm``.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=20
        Number of features.
    distribution : {{"lognormal", "t"}}, default="lognormal"
        Distribution of the features.
    df : float, default=3.0
        Degrees of freedom of the Student t (``distribution="t"``); the variance is finite
        only for ``df > 2``, and the features are only centred, not scaled, otherwise.
    model : {{"poisson", "logistic"}}, default="poisson"
        The response: ``Poisson(exp(eta))`` or ``Bernoulli(sigmoid(eta))``.
    coef_norm : float, default=None
        Norm of the coefficients; None means 0.5 for the Poisson model and 2 for the
        logistic model.
    intercept : float, default=None
        The intercept; None means 0.5 for the Poisson model and -1 for the logistic model.
    {common_params}
    {returns}
    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.datasets import make_heavy_tailed
    >>> X, y = make_heavy_tailed(100_000, n_features=3, random_state=0)
    >>> bool(np.abs(X).max() > 20), bool(y.min() >= 0)
    (True, True)
    """
    if distribution not in ("lognormal", "t"):
        raise ValueError(f"distribution must be 'lognormal' or 't', got {distribution!r}.")
    if model not in ("poisson", "logistic"):
        raise ValueError(f"model must be 'poisson' or 'logistic', got {model!r}.")
    rng = check_random_state(random_state)
    n_samples = _check_n_samples(n_samples)
    n_features = _check_n_features(n_features)
    df = check_scalar(df, "df", Real, min_val=0.0, include_boundaries="neither")
    poisson = model == "poisson"
    coef_norm = check_scalar(coef_norm if coef_norm is not None else (0.5 if poisson else 2.0),
                             "coef_norm", Real, min_val=0.0)
    intercept = _check_intercept(intercept if intercept is not None
                                 else (0.5 if poisson else -1.0))
    X = _heavy_tailed_features(n_samples, n_features, distribution, df, rng)
    coef = _drawn_direction(n_features, coef_norm, rng)
    eta = X @ coef + intercept
    y = _poisson_counts(eta, rng) if poisson else _bernoulli_labels(eta, rng)
    return _output(X, y, coef, return_coef)


@_fill_shape_doc
def make_clustered(n_samples: int = 1000, n_features: int = 50, *,
                   cluster_fraction: float = 0.2, shift: float = 3.0,
                   correlation: float = 0.6, coef_norm: float = 2.0,
                   intercept: float = -1.0, return_coef: bool = False,
                   random_state: RandomStateLike = None) -> tuple[FloatArray, ...]:
    """Generate logistic labels from rows in two clusters: a bulk and a shifted minority.

    A fraction ``cluster_fraction`` of the rows (a customer segment, a second site) has its
    features shifted by ``shift`` standard deviations along a random direction and scaled
    by a half; the rest are centred. Both have AR(1)-correlated Gaussian features
    (``corr(x_j, x_k) = correlation ** |j - k|``) and follow one logistic regression with
    coefficients of norm ``coef_norm``, so a uniform subsample sees the minority cluster's
    part of the likelihood only through a fifth of its rows.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=50
        Number of features.
    cluster_fraction : float, default=0.2
        Fraction of rows in the shifted cluster, in (0, 1).
    shift : float, default=3.0
        Distance of the shifted cluster's centre from the origin.
    correlation : float, default=0.6
        Correlation of neighbouring features, in [0, 1).
    coef_norm : float, default=2.0
        Norm of the coefficients.
    intercept : float, default=-1.0
        The intercept.
    {common_params}
    {returns}
    Examples
    --------
    >>> from skcoreset.datasets import make_clustered
    >>> X, y = make_clustered(10_000, n_features=4, random_state=0)
    >>> X.shape
    (10000, 4)
    """
    rng = check_random_state(random_state)
    n_samples = _check_n_samples(n_samples)
    n_features = _check_n_features(n_features)
    cluster_fraction = _check_fraction(cluster_fraction, "cluster_fraction")
    correlation = _check_fraction(correlation, "correlation", include_zero=True)
    shift = check_scalar(shift, "shift", Real, min_val=0.0)
    coef_norm = check_scalar(coef_norm, "coef_norm", Real, min_val=0.0)
    intercept = _check_intercept(intercept)
    X = _correlated_normal(n_samples, n_features, correlation, rng)
    in_cluster = rng.random_sample(n_samples) < cluster_fraction
    X[in_cluster] *= 0.5
    X[in_cluster] += _drawn_direction(n_features, shift, rng)
    coef = _drawn_direction(n_features, coef_norm, rng)
    y = _bernoulli_labels(X @ coef + intercept, rng)
    return _output(X, y, coef, return_coef)


@_fill_shape_doc
def make_misspecified_counts(n_samples: int = 1000, n_features: int = 20, *,
                             df: float = 3.0, max_rate: float = 20.0,
                             coef_norm: float = 0.5, intercept: float = 0.5,
                             return_coef: bool = False,
                             random_state: RandomStateLike = None) -> tuple[FloatArray, ...]:
    """Generate counts that a log-link Poisson regression misspecifies: capped rates.

    Features are Student t with ``df`` degrees of freedom (standardised when ``df > 2``),
    and ``y ~ Poisson(min(exp(x . coef + intercept), max_rate))``: the rate saturates, as
    counts of a capacity-limited process do, while the model's rate ``exp(eta)`` keeps
    growing. On the heavy-tailed rows the two disagree by orders of magnitude, so the
    posterior of the misspecified model is decided by those few rows; no coreset that misses
    them, and no Gaussian approximation, describes it well.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=20
        Number of features.
    df : float, default=3.0
        Degrees of freedom of the features' Student t distribution.
    max_rate : float, default=20.0
        The cap on the rate of the counts.
    coef_norm : float, default=0.5
        Norm of the coefficients of the uncapped rate.
    intercept : float, default=0.5
        Intercept of the uncapped rate.
    return_coef : bool, default=False
        Also return the coefficients (of the uncapped rate).
    random_state : int, RandomState instance or None, default=None
        Seed or generator; pass an int for reproducible output.

    {returns}
    Examples
    --------
    >>> from skcoreset.datasets import make_misspecified_counts
    >>> X, y = make_misspecified_counts(10_000, n_features=5, random_state=0)
    >>> bool(y.max() < 60)
    True
    """
    rng = check_random_state(random_state)
    n_samples = _check_n_samples(n_samples)
    n_features = _check_n_features(n_features)
    df = check_scalar(df, "df", Real, min_val=0.0, include_boundaries="neither")
    max_rate = check_scalar(max_rate, "max_rate", Real, min_val=0.0,
                            include_boundaries="neither")
    coef_norm = check_scalar(coef_norm, "coef_norm", Real, min_val=0.0)
    intercept = _check_intercept(intercept)
    X = _heavy_tailed_features(n_samples, n_features, "t", df, rng)
    coef = _drawn_direction(n_features, coef_norm, rng)
    y = _poisson_counts(X @ coef + intercept, rng, max_rate=max_rate)
    return _output(X, y, coef, return_coef)
