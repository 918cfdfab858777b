"""PASS-GLM: polynomial approximate sufficient statistics (Huggins, Adams & Broderick, 2017).

A GLM log-likelihood ``sum_n w_n [y_n s_n - f(s_n)]`` in the linear predictor
``s_n = a_n . theta`` has no finite sufficient statistics, but with a degree-``M``
polynomial ``f_M(s) = sum_m b_m s^m`` in place of ``f`` it has: expanding ``(a_n . theta)^m``
shows that the approximate log-likelihood depends on the data only through the weighted
moment sums ``t_k = sum_n w_n a_n^k`` over the multi-indices ``|k| <= M`` and the exact linear
term ``sum_n w_n y_n a_n`` (Algorithm 1 of the paper, lines 3-7). These sums take one pass
over the data, add up over chunks (streams, ``partial_fit``, dask map-reduce) and afterwards
the posterior costs nothing that depends on ``n``.

* ``degree=2`` (PASS-LR2, the paper's §5 setting): the approximate log-likelihood is quadratic
  in ``theta``, so under the Gaussian prior the posterior is Gaussian in closed form from
  ``sum_n w_n a_n``, ``sum_n w_n y_n a_n`` and ``sum_n w_n a_n a_n^T``.
* ``degree > 2`` (small ``d`` only: there are ``C(p + M, M)`` monomials): MAP of the polynomial
  surrogate by Newton's method and a Laplace approximation at its mode.

Supported models, with ``a_n = [x_n, 1]`` (or ``x_n``):

* logistic, ``y_n in {0, 1}``: ``f(s) = log(1 + e^s)`` (softplus). On an interval symmetric
  about 0 this is the paper's approximation of ``phi(s) = -log(1 + e^-s)`` at the margins
  ``y_n s_n`` with labels in ``{-1, +1}``, because ``softplus(s) - s/2`` is even;
* Poisson with log link: ``f(s) = e^s`` (paper Corollary 4.5); the constant ``-log y!`` is
  kept exactly.

The polynomial
--------------
``radius=R`` (a number): the truncated Chebyshev series of ``f`` on ``[-R, R]``, as in the
paper. Valid degrees keep the surrogate bounded above (otherwise the "posterior" is
improper): logistic ``M = 2 + 4k`` (paper §3: the odd Chebyshev coefficients beyond the first
vanish, and the coefficient of ``s^(4k)`` has the wrong sign), Poisson ``M`` even (the
Chebyshev coefficients of ``e^s`` are ``2 I_m(R) > 0``).

The error does not shrink with ``n`` (Corollaries 4.1 and 4.4 of the paper) while the
posterior does, so a fixed interval is fine at small ``n`` and badly biased at large ``n`` or
when the linear predictors are not centred at 0: degree 2 on ``[-4, 4]`` has constant
curvature ``f''(0) ~ 0.16`` where a data set of rare positives (``s_n ~ -6``) has 0.0025.

``radius="auto"`` (the estimators' default): a *pilot* Laplace fit on a subsample of at most
``PILOT_ROWS`` rows (every k-th row, per class for the logistic model so rare classes are
represented; the first chunk for dask arrays and ``partial_fit`` streams) gives linear
predictors ``s_n`` representative of the posterior, and ``f_M'`` is the weighted
least-squares fit of ``f'`` on them. The gradient of the surrogate then matches the exact
one where the data are; for Gaussian designs the residual ``f' - f_M'`` is orthogonal to
``1`` and to ``s``, which by Stein's lemma makes the surrogate's mode exact up to the pilot's
error, and ``2 b_2`` is the average curvature ``E f''(s)``. The pilot costs a subsample; the
data are still read once.

Whatever the polynomial, :func:`pass_glm_posterior` measures its effect on the pilot rows
(:func:`mean_error_estimate`) and warns when the posterior mean is estimated to be more than
one posterior standard deviation off.
"""

import functools
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.polynomial import chebyshev
from scipy import linalg
from scipy.special import expit, gammaln, log_expit
from sklearn.exceptions import ConvergenceWarning

from .._design import linear_predictor, n_params, rmatvec, weighted_gram
from .._newton import NewtonObjective, newton_maximise, warn_not_converged
from .._posterior import GaussianPosterior
from ._common import InferenceResult, LogPosterior
from .laplace import laplace

# Default cap on the number of distinct monomials C(p + M, M) for degrees above 2. Statistics,
# per-row work and each Newton step grow with it (and the Hessian tables with it times p^2).
MAX_MONOMIALS = 100_000
# The monomial coefficients come from Chebyshev ones through cheb2poly, whose cancellation
# error grows like 2^M: past ~20 the monomial basis loses the approximation's accuracy.
MAX_DEGREE = 20
_BLOCK_ENTRIES = 2**21  # rows x monomials held at once when forming moments (16 MB)

_SUPPORTED = "the logistic family and the Poisson family with link='log'"
# Rows of the pilot subsample for radius="auto" and for the accuracy diagnostic: enough for a
# stable least-squares fit and an error estimate whose noise is well below one posterior sd.
PILOT_ROWS = 10_000
# Warn when the posterior mean is estimated to be this many posterior sds off.
MEAN_ERROR_WARN_SD = 1.0


# --------------------------------------------------------------------------------------------
# Chebyshev approximation of the mapping function (Algorithm 1, lines 1-2)
# --------------------------------------------------------------------------------------------
def _mapping_function(function):
    if callable(function):
        return function
    if function == "logistic":
        return log_expit  # phi_logit(s) = -log(1 + e^-s)
    if function == "softplus":
        return lambda s: np.logaddexp(0.0, s)  # f(s) = log(1 + e^s), the logistic f
    if function in ("poisson", "exp"):
        return np.exp  # the part of the Poisson log-likelihood that PASS-GLM approximates
    raise ValueError(f"function must be 'logistic', 'softplus', 'poisson', 'exp' or a callable, "
                     f"got {function!r}.")


def chebyshev_coefficients(function, degree, radius, *, n_nodes=None):
    """Monomial coefficients of the degree-``M`` Chebyshev approximation on ``[-R, R]``.

    Algorithm 1 of Huggins et al. (2017), lines 1-2: the coefficients of the *truncated
    Chebyshev series* of ``phi(R t)``, ``c_m = (2 - [m = 0]) / pi * int_{-1}^{1} phi(R t)
    T_m(t) (1 - t^2)^(-1/2) dt``, computed by Chebyshev-Gauss quadrature, then rewritten in
    the monomial basis of ``s = R t``. With the truncated series the degree-2 logistic
    approximation on ``[-4, 4]`` has sup error 0.0687, the paper's "< 0.069" (§5, Fig. 1a);
    Chebyshev *interpolation* at 3 nodes would give 0.101.

    Parameters
    ----------
    function : {"logistic", "softplus", "poisson", "exp"} or callable
        ``"logistic"``: ``phi(s) = -log(1 + e^-s)``; ``"softplus"``: ``log(1 + e^s)``, the
        logistic ``f`` of the model formulation above; ``"poisson"`` or ``"exp"``: ``e^s``, the
        part of the log-link Poisson log-likelihood ``y s - e^s - log y!`` that needs
        approximating. A callable must be vectorised over a 1-D array of ``s``.
    degree : int
        Polynomial degree ``M >= 0``.
    radius : float
        Half-width ``R > 0`` of the approximation interval.
    n_nodes : int, default=None
        Quadrature nodes; by default ``max(512, 8 (M + 1))``, which makes the aliasing error
        negligible for functions analytic near ``[-R, R]``.

    Returns
    -------
    coef : ndarray of shape (degree + 1,)
        ``b_0, ..., b_M`` with ``phi(s) ~ sum_m b_m s^m``. For ``"logistic"`` and
        ``"softplus"`` the odd coefficients beyond ``b_1`` are set to exactly zero, as they
        are by symmetry.
    """
    degree = int(degree)
    if degree < 0:
        raise ValueError(f"degree must be >= 0, got {degree}.")
    if not radius > 0:
        raise ValueError(f"radius must be positive, got {radius!r}.")
    phi = _mapping_function(function)
    n_nodes = max(512, 8 * (degree + 1)) if n_nodes is None else int(n_nodes)
    angles = np.pi * (np.arange(n_nodes) + 0.5) / n_nodes
    values = np.asarray(phi(radius * np.cos(angles)), dtype=float)
    cheb = (2.0 / n_nodes) * (np.cos(np.outer(np.arange(degree + 1), angles)) @ values)
    cheb[0] /= 2.0
    coef = chebyshev.cheb2poly(cheb) / radius ** np.arange(degree + 1)
    coef = np.pad(coef, (0, degree + 1 - len(coef)))
    if function in ("logistic", "softplus"):
        # phi(s) - s/2 = -log(2 cosh(s/2)) is even: remove quadrature round-off
        coef[3::2] = 0.0
        if degree >= 1:
            coef[1] = 0.5
    return coef


# --------------------------------------------------------------------------------------------
# Models and degrees
# --------------------------------------------------------------------------------------------
def _model_name(family):
    """``"logistic"`` or ``"poisson"`` (log link) from a Family object or a model name."""
    if isinstance(family, str):
        name, link = family, "log"
    else:
        name, link = getattr(family, "name", None), getattr(family, "link_name", "log")
    if name == "logistic" or (name == "poisson" and link == "log"):
        return name
    described = name if name != "poisson" else f"poisson with link={link!r}"
    raise ValueError(
        f"PASS-GLM supports {_SUPPORTED}; got {described!r}. The softplus-link Poisson "
        "log-likelihood needs a polynomial in log(softplus(s)) and softplus(s) at once, and "
        "the Gaussian posterior is already exact with method='laplace'.")


def check_pass_degree(model, degree):
    """Raise ``ValueError`` with the reason when ``degree`` gives an improper surrogate.

    Parameters
    ----------
    model : {"logistic", "poisson"}
    degree : int

    Returns
    -------
    degree : int
    """
    if isinstance(degree, bool) or int(degree) != degree:
        raise ValueError(f"pass_degree must be an integer, got {degree!r}.")
    degree = int(degree)
    if degree < 2:
        raise ValueError(f"pass_degree must be >= 2, got {degree}: a polynomial of degree "
                         "below 2 has no curvature, so there is no posterior to speak of.")
    if degree > MAX_DEGREE:
        raise ValueError(
            f"pass_degree={degree} exceeds {MAX_DEGREE}: converting Chebyshev coefficients "
            "to the monomial basis of the sufficient statistics loses precision like 2^M.")
    if model == "logistic" and degree % 4 != 2:
        if degree % 2:
            reason = (f"odd Chebyshev coefficients beyond the first vanish for the logistic "
                      f"function, so degree {degree} is degree {degree - 1}")
        else:
            reason = (f"the coefficient of s^{degree} is positive, so the approximate "
                      "log-likelihood grows without bound as ||theta|| -> infinity")
        raise ValueError(
            f"pass_degree={degree} is invalid for logistic regression: {reason}. Use "
            "M = 2 + 4k (2, 6, 10, ...), Huggins et al. (2017) §3.")
    if model == "poisson" and degree % 2:
        raise ValueError(
            f"pass_degree={degree} is invalid for Poisson regression: the approximation of "
            "e^s of odd degree tends to -infinity as s -> -infinity, so the approximate "
            "log-likelihood y s - f_M(s) is unbounded above. Use an even degree.")
    return degree


def _surrogate_coefficients(model, degree, radius):
    """``beta_m = -b_m`` with per-point surrogate ``y s + sum_m beta_m s^m``, ``s = a . theta``."""
    return -chebyshev_coefficients("softplus" if model == "logistic" else "exp", degree, radius)


def _check_bounded(coef):
    """The surrogate ``sum_m beta_m s^m`` must tend to ``-oo`` both ways (a proper posterior)."""
    nonzero = np.flatnonzero(coef[2:]) + 2
    if not len(nonzero) or nonzero[-1] % 2 or coef[nonzero[-1]] >= 0:
        raise ValueError(
            "The fitted PASS-GLM polynomial is not bounded above, so its posterior would be "
            "improper (the pilot's linear predictors do not pin down a degree-"
            f"{len(coef) - 1} fit). Use pass_degree=2 or a numeric pass_radius.")
    return coef


# --------------------------------------------------------------------------------------------
# Data-driven polynomial from a pilot subsample (radius="auto")
# --------------------------------------------------------------------------------------------
@dataclass(eq=False)
class Pilot:
    """A weighted subsample standing in for the data, and a Laplace fit on it.

    Attributes
    ----------
    X : ndarray of shape (m, d)
    y : ndarray of shape (m,)
        Encoded targets (``{-1, +1}`` or counts).
    sample_weight : ndarray of shape (m,)
        Rescaled so that each class (logistic) or the whole subsample (Poisson) has the total
        weight of the rows it stands for.
    theta : ndarray of shape (p,)
        Mode of the weighted log posterior on the subsample.
    fit_intercept : bool
    """

    X: np.ndarray
    y: np.ndarray
    sample_weight: np.ndarray
    theta: np.ndarray
    fit_intercept: bool

    def eta(self, theta):
        return linear_predictor(self.X, theta, self.fit_intercept)


def _strided(index, n_keep):
    return index[::max(1, -(-len(index) // max(n_keep, 1)))]


def pilot_rows(y, sample_weight, model, max_rows=PILOT_ROWS):
    """Indices of a deterministic subsample and its rescaled weights.

    Every k-th row; for the logistic model per class, with the rarer class given up to half
    of ``max_rows``, so that rare positives are represented. The weights of each stratum are
    scaled to its total weight, so the subsample's weighted log-likelihood estimates the
    full one. Costs one pass over ``y`` and ``sample_weight`` only.
    """
    n = len(y)
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if model == "logistic":
        strata = [np.flatnonzero(y > 0), np.flatnonzero(y <= 0)]
        strata.sort(key=len)
        rare = _strided(strata[0], max_rows // 2)
        strata = [rare, _strided(strata[1], max_rows - len(rare))]
        full = [np.flatnonzero(y > 0), np.flatnonzero(y <= 0)]
        full.sort(key=len)
    else:
        strata, full = [_strided(np.arange(n), max_rows)], [np.arange(n)]
    index = np.concatenate(strata)
    weight = np.concatenate([
        w[kept] * (w[rows].sum() / w[kept].sum()) if w[kept].sum() > 0 else w[kept]
        for kept, rows in zip(strata, full)])
    return index, weight


def pilot_fit(X, y, family, *, sample_weight, prior_prec, fit_intercept, max_rows=PILOT_ROWS,
              tol=1e-8, max_iter=100):
    """:class:`Pilot` from an in-memory data set (or its first chunk)."""
    model = _model_name(family)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    index, weight = pilot_rows(y, sample_weight, model, max_rows)
    Xp, yp = X[index], y[index]
    if not (np.all(np.isfinite(Xp)) and np.all(np.isfinite(yp))):
        raise ValueError("Input X or y contains NaN or infinity.")
    with warnings.catch_warnings():
        # a pilot that stops short of convergence still locates the linear predictors
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = laplace(Xp, yp, family, sample_weight=weight, prior_prec=prior_prec,
                        fit_intercept=fit_intercept, tol=tol, max_iter=max_iter)
    return Pilot(Xp, yp, weight, start.posterior.mean, bool(fit_intercept))


def _derivative(model):
    """``f'``: the sigmoid for logistic, ``exp`` for Poisson (the GLM mean function)."""
    return expit if model == "logistic" else np.exp


def fitted_coefficients(model, degree, pilot):
    """Surrogate coefficients ``beta`` from the weighted least-squares fit of ``f'`` on the pilot.

    ``f_M'`` is the degree ``M - 1`` polynomial closest to ``f'`` in the pilot's weighted
    mean square at its linear predictors ``s_n = a_n . theta_pilot``; ``b_0`` makes ``f_M``
    match ``f`` on weighted average (it enters only the evidence). Where the ``s_n`` barely
    vary, the Taylor polynomial of degree 2 at their mean is used instead.

    Returns
    -------
    coef : ndarray of shape (degree + 1,)
    center, half_width : float
        Weighted mean of the ``s_n`` and their largest distance from it.
    """
    s = pilot.eta(pilot.theta)
    w = pilot.sample_weight
    center = float(np.average(s, weights=w))
    half_width = float(np.max(np.abs(s - center))) if len(s) else 0.0
    fprime = _derivative(model)
    f = _mapping_function("softplus" if model == "logistic" else "exp")
    scale = float(np.sqrt(np.average((s - center) ** 2, weights=w)))
    b = np.zeros(degree + 1)
    if scale <= 1e-8 * max(1.0, abs(center)) or len(np.unique(s)) <= degree:
        # Taylor at the centre: f'' = f' (1 - f') for the sigmoid, exp for exp
        curvature = fprime(center) * (1 - fprime(center)) if model == "logistic" \
            else np.exp(center)
        b[1:3] = (fprime(center) - curvature * center, curvature / 2)
    else:
        # in z = (s - center) / scale the least-squares system is well conditioned
        z = (s - center) / scale
        vander = np.vander(z, degree, increasing=True)
        sw = np.sqrt(w)
        dz, *_ = np.linalg.lstsq(vander * sw[:, None], fprime(s) * sw, rcond=None)
        # integrate f_M'(s) ds = scale * f_M'(z) dz, then back to the monomials of s
        poly_z = np.polynomial.Polynomial(np.r_[0.0, dz * scale / np.arange(1, degree + 1)])
        b = poly_z(np.polynomial.Polynomial([-center / scale, 1.0 / scale])).coef
        b = np.pad(b, (0, degree + 1 - len(b)))
    b[0] += np.average(f(s) - np.polynomial.polynomial.polyval(s, b), weights=w)
    return _check_bounded(-b), center, half_width


# --------------------------------------------------------------------------------------------
# Monomial bookkeeping for degrees above 2
# --------------------------------------------------------------------------------------------
def n_monomials(n_params_, degree):
    """Number of monomials of degree ``<= degree`` in ``n_params_`` variables, C(p + M, M)."""
    from math import comb

    return comb(n_params_ + degree, degree)


def _tuple_keys(tuples, p):
    """Integer key of sorted index tuples: base-p digits, so lexicographic order is kept."""
    m = tuples.shape[-1]
    return tuples @ (p ** np.arange(m - 1, -1, -1, dtype=np.int64))


@functools.lru_cache(maxsize=64)
def _monomials(p, m):
    """Degree-``m`` monomials in ``p`` variables, as sorted index tuples in lexicographic order.

    Returns
    -------
    tuples : ndarray of shape (count, m)
    parent : ndarray of shape (count,)
        Index in the degree ``m - 1`` table of the tuple without its last entry, so that
        ``z^tuple = z^parent * z[last]`` builds all monomials with one product per level.
    multinomial : ndarray of shape (count,)
        ``m! / prod_j k_j!``: how many ordered index tuples give the monomial.
    """
    if m == 0:
        return np.zeros((1, 0), dtype=np.int64), np.zeros(1, dtype=np.int64), np.ones(1)
    prev, _, _ = _monomials(p, m - 1)
    start = prev[:, -1] if m > 1 else np.zeros(1, dtype=np.int64)
    sizes = p - start
    parent = np.repeat(np.arange(len(prev)), sizes)
    offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    last = np.repeat(start, sizes) + offsets
    tuples = np.column_stack([prev[parent], last])
    exponents = np.zeros((len(tuples), p), dtype=np.int64)
    np.add.at(exponents, (np.arange(len(tuples))[:, None], tuples), 1)
    multinomial = np.rint(np.exp(gammaln(m + 1) - gammaln(exponents + 1).sum(axis=1)))
    return tuples, parent, multinomial


@functools.lru_cache(maxsize=64)
def _merge_table(p, m, extra):
    """Indices in the degree-``m`` table of ``u + {j}`` (extra=1) or ``u + {j, k}`` (extra=2).

    Rows run over the degree ``m - extra`` monomials ``u``, columns over ``j`` (or the pairs
    ``j <= k`` in ``numpy.triu_indices(p)`` order).
    """
    low, _, _ = _monomials(p, m - extra)
    keys = _tuple_keys(_monomials(p, m)[0], p)
    if extra == 1:
        added = np.arange(p)[:, None]
    else:
        added = np.column_stack(np.triu_indices(p))
    merged = np.concatenate([np.repeat(low[:, None, :], len(added), axis=1),
                             np.broadcast_to(added, (len(low),) + added.shape)], axis=2)
    merged = np.sort(merged, axis=2)
    return np.searchsorted(keys, _tuple_keys(merged, p))


def _monomial_chain(z, degree):
    """Yield ``(m, z^monomials)`` for m = 1..degree; ``z`` of shape (p,) or (n, p)."""
    p = z.shape[-1]
    current = np.ones(z.shape[:-1] + (1,))
    for m in range(1, degree + 1):
        tuples, parent, _ = _monomials(p, m)
        current = current[..., parent] * z[..., tuples[:, -1]]
        yield m, current


# --------------------------------------------------------------------------------------------
# Sufficient statistics
# --------------------------------------------------------------------------------------------
@dataclass(eq=False)
class PassGLMStatistics:
    """Approximate sufficient statistics of a weighted GLM data set (Algorithm 1, lines 3-7).

    With design rows ``a_n = [x_n, 1]`` (or ``x_n``), the surrogate log-likelihood is

    ``L(theta) = constant + linear . theta + sum_{m=0}^{M} beta_m <T_m, theta^(x m)>``

    with the moment tensors ``T_m = sum_n w_n a_n^(x m)``: ``T_0 = sum_weight``,
    ``T_1 = moment1``, ``T_2 = gram`` (dense) and, for ``m >= 3``, ``higher[m]`` holding one
    entry ``sum_n w_n c_n^k`` per monomial ``|k| = m`` (sorted index tuples, lexicographic).
    Only the degrees with ``beta_m != 0`` are kept (odd ``m >= 3`` vanish for the Chebyshev
    approximation of the softplus on ``[-R, R]``).

    Statistics of disjoint chunks add up (:meth:`merge`), so a stream is summarised chunk by
    chunk (:meth:`add`) and a distributed data set by a map-reduce over its chunks.

    Create empty statistics with :meth:`empty`, or from data with :func:`pass_glm_statistics`
    and :func:`pass_glm_statistics_dask`.

    Attributes
    ----------
    model : {"logistic", "poisson"}
    n_features : int
    degree : int
    radius : float or None
        Half-width of the Chebyshev interval ``[-radius, radius]``; None when ``coef`` was
        given (fitted on a pilot, :func:`fitted_coefficients`).
    fit_intercept : bool
    coef : ndarray of shape (degree + 1,)
        Surrogate coefficients ``beta_m = -b_m`` of the polynomial ``f_M`` standing in for
        the softplus (logistic) or ``e^s`` (Poisson).
    n_samples : int
        Rows accumulated.
    sum_weight : float
        ``sum_n w_n``.
    moment1 : ndarray of shape (p,)
        ``sum_n w_n a_n``.
    gram : ndarray of shape (p, p)
        ``sum_n w_n a_n a_n^T``.
    higher : dict of int to ndarray
        Monomial moments of degree ``m >= 3``.
    linear : ndarray of shape (p,)
        Exact linear term ``sum_n w_n y_n a_n`` (labels as 0/1 for logistic).
    constant : float
        Exact constant: ``-sum_n w_n log(y_n!)`` for Poisson, 0 for logistic.
    """

    model: str
    n_features: int
    degree: int
    radius: float
    fit_intercept: bool
    coef: np.ndarray
    n_samples: int = 0
    sum_weight: float = 0.0
    moment1: np.ndarray = None
    gram: np.ndarray = None
    higher: dict = field(default_factory=dict)
    linear: np.ndarray = None
    constant: float = 0.0

    @classmethod
    def empty(cls, family, n_features, *, degree=2, radius=4.0, fit_intercept=True,
              max_monomials=MAX_MONOMIALS, coef=None):
        """Zero statistics ready for :meth:`add`.

        Parameters
        ----------
        family : Family or {"logistic", "poisson"}
            Logistic, or Poisson with log link.
        n_features : int
        degree : int, default=2
            Polynomial degree ``M``; see :func:`check_pass_degree`.
        radius : float, default=4.0
            The approximation interval is ``[-radius, radius]``.
        fit_intercept : bool, default=True
        max_monomials : int, default=MAX_MONOMIALS
            For ``degree > 2``, refuse when the number of monomials ``C(p + M, M)`` exceeds
            this (the statistics, the per-row work and each Newton step grow with it).
        coef : ndarray of shape (degree + 1,), default=None
            Surrogate coefficients ``beta`` to use instead of the Chebyshev ones on
            ``[-radius, radius]`` (e.g. from :func:`fitted_coefficients`); ``radius`` is then
            recorded as None.
        """
        model = _model_name(family)
        if coef is not None:
            coef = _check_bounded(np.array(coef, dtype=float))
            degree, radius = len(coef) - 1, None
        degree = check_pass_degree(model, degree) if coef is None else degree
        if coef is None:
            radius = float(radius)
            if not radius > 0:
                raise ValueError(f"pass_radius must be positive, got {radius!r}.")
        p = n_params(n_features, fit_intercept)
        if degree > 2 and n_monomials(p, degree) > max_monomials:
            raise ValueError(
                f"pass_degree={degree} with {p} parameters needs C({p} + {degree}, {degree}) "
                f"= {n_monomials(p, degree)} monomial statistics, more than max_monomials="
                f"{max_monomials}. Use pass_degree=2 (O(p^2) statistics) or fewer features.")
        if coef is None:
            coef = _surrogate_coefficients(model, degree, radius)
        higher = {m: np.zeros(len(_monomials(p, m)[0]))
                  for m in range(3, degree + 1) if coef[m] != 0.0}
        return cls(model=model, n_features=int(n_features), degree=degree, radius=radius,
                   fit_intercept=bool(fit_intercept), coef=coef, moment1=np.zeros(p),
                   gram=np.zeros((p, p)), higher=higher, linear=np.zeros(p))

    @property
    def n_params(self):
        """Length ``p`` of theta."""
        return n_params(self.n_features, self.fit_intercept)

    # --- accumulation -------------------------------------------------------------------
    def add(self, X, y, sample_weight=None):
        """Accumulate a chunk of data in place; returns ``self``.

        Parameters
        ----------
        X : ndarray of shape (n, n_features)
        y : ndarray of shape (n,)
            Labels in ``{-1, +1}`` (logistic) or counts (Poisson).
        sample_weight : ndarray of shape (n,), default=None
            Non-negative multipliers of each point's log-likelihood; ones by default.
        """
        X, y, w = self._check_chunk(X, y, sample_weight)
        if self.model == "logistic":
            self.linear += rmatvec(X, w * (y > 0), self.fit_intercept)  # labels as 0/1
        else:
            self.linear += rmatvec(X, w * y, self.fit_intercept)
            self.constant -= float(w @ gammaln(y + 1.0))
        self.n_samples += X.shape[0]
        self.sum_weight += float(w.sum())
        self.moment1 += rmatvec(X, w, self.fit_intercept)
        if X.shape[0]:
            self.gram += weighted_gram(X, w, self.fit_intercept)
        if self.higher:
            self._add_higher(X, y, w)
        return self

    def _check_chunk(self, X, y, sample_weight):
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64).ravel()
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"X must have shape (n, {self.n_features}), got {X.shape}.")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows.")
        # checked here so that dask chunks are checked on their workers, in the same pass
        if not np.all(np.isfinite(X)):
            raise ValueError("Input X contains NaN or infinity.")
        if not np.all(np.isfinite(y)):
            raise ValueError("Input y contains NaN or infinity.")
        w = np.ones(X.shape[0]) if sample_weight is None else np.asarray(
            sample_weight, dtype=np.float64)
        if w.ndim == 0:
            w = np.full(X.shape[0], float(w))
        if w.shape != y.shape:
            raise ValueError(f"sample_weight has shape {w.shape}, expected {y.shape}.")
        if not np.all(np.isfinite(w) & (w >= 0)):
            raise ValueError("sample_weight must be finite and non-negative.")
        if self.model == "logistic" and not np.all(np.abs(y) == 1.0):
            raise ValueError("Logistic PASS-GLM statistics need labels encoded as -1/+1.")
        if self.model == "poisson" and np.any(y < 0):
            raise ValueError("Poisson PASS-GLM statistics need non-negative counts.")
        return X, y, w

    def _add_higher(self, X, y, w):
        """Monomial moments of degree >= 3, in row blocks to bound memory."""
        p = self.n_params
        rows = max(1, _BLOCK_ENTRIES // len(_monomials(p, self.degree)[0]))
        for start in range(0, X.shape[0], rows):
            block = X[start:start + rows]
            c = np.column_stack([block, np.ones(len(block))]) if self.fit_intercept else block
            for m, products in _monomial_chain(c, self.degree):
                if m in self.higher:
                    self.higher[m] += w[start:start + rows] @ products

    def merge(self, other):
        """Statistics of the union of the two data sets (a new object)."""
        keys = ("model", "n_features", "degree", "radius", "fit_intercept")
        mismatch = [k for k in keys if getattr(self, k) != getattr(other, k)]
        if not mismatch and not np.array_equal(self.coef, other.coef):
            mismatch = ["coef"]
        if mismatch:
            raise ValueError(f"Cannot merge PASS-GLM statistics that differ in {mismatch}.")
        return replace(
            self, n_samples=self.n_samples + other.n_samples,
            sum_weight=self.sum_weight + other.sum_weight,
            moment1=self.moment1 + other.moment1, gram=self.gram + other.gram,
            higher={m: v + other.higher[m] for m, v in self.higher.items()},
            linear=self.linear + other.linear, constant=self.constant + other.constant)

    __add__ = merge

    # --- the surrogate log-likelihood ---------------------------------------------------
    def loglik(self, theta):
        """Surrogate log-likelihood ``L(theta)`` (Algorithm 1, line 8)."""
        return self.derivatives(np.asarray(theta, dtype=float), order=0)[0]

    def derivatives(self, theta, order=2):
        """Value, gradient and Hessian of the surrogate log-likelihood at ``theta``.

        Uses ``d/dtheta <T, theta^m> = m T(theta^(m-1), .)`` and ``d^2 = m (m - 1)
        T(theta^(m-2), ., .)`` for the symmetric moment tensors, contracted in their packed
        monomial form: cost independent of the number of data points.

        Returns
        -------
        value : float
        grad : ndarray of shape (p,) (when ``order >= 1``)
        hessian : ndarray of shape (p, p) (when ``order == 2``)
        """
        b = self.coef
        G_theta = self.gram @ theta
        value = (self.constant + b[0] * self.sum_weight
                 + (self.linear + b[1] * self.moment1) @ theta + b[2] * theta @ G_theta)
        grad = self.linear + b[1] * self.moment1 + 2.0 * b[2] * G_theta
        hessian = 2.0 * b[2] * self.gram
        if self.higher:
            p = self.n_params
            # theta^u times the multinomial count of u, for every degree up to M
            powers = {0: np.ones(1)}
            for m, products in _monomial_chain(theta, self.degree):
                powers[m] = products * _monomials(p, m)[2]
            rows, cols = np.triu_indices(p)
            for m, moments in self.higher.items():
                value += b[m] * powers[m] @ moments
                if order >= 1:
                    grad += m * b[m] * (powers[m - 1] @ moments[_merge_table(p, m, 1)])
                if order >= 2:
                    upper = m * (m - 1) * b[m] * (powers[m - 2] @ moments[_merge_table(p, m, 2)])
                    hessian[rows, cols] += upper
                    hessian[cols[rows != cols], rows[rows != cols]] += upper[rows != cols]
        return (value, grad, hessian)[:order + 1]


def pass_glm_statistics(X, y, family, *, sample_weight=None, degree=2, radius=4.0,
                        fit_intercept=True, max_monomials=MAX_MONOMIALS, coef=None):
    """PASS-GLM statistics of one in-memory chunk of data.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Labels in ``{-1, +1}`` (logistic) or counts (Poisson).
    family : Family or {"logistic", "poisson"}
    sample_weight : ndarray of shape (n,), default=None
    degree, radius, fit_intercept, max_monomials, coef
        See :meth:`PassGLMStatistics.empty`.

    Returns
    -------
    PassGLMStatistics
    """
    stats = PassGLMStatistics.empty(family, np.shape(X)[1], degree=degree, radius=radius,
                                    fit_intercept=fit_intercept, max_monomials=max_monomials,
                                    coef=coef)
    return stats.add(X, y, sample_weight)


# --------------------------------------------------------------------------------------------
# Dask: per-chunk statistics, summed by a tree reduction; the data never leave the workers
# --------------------------------------------------------------------------------------------
def is_dask_collection(obj):
    """Whether ``obj`` is a dask collection, without importing dask."""
    return hasattr(obj, "__dask_graph__") and callable(obj.__dask_graph__)


def _chunk_statistics(options, X, y, sample_weight):
    # runs on a worker: only the options and this chunk's rows arrive there
    return PassGLMStatistics.empty(**options).add(X, y, sample_weight)


def _merge_all(*stats):
    return functools.reduce(PassGLMStatistics.merge, stats)


def pass_glm_statistics_dask(X, y, family, *, sample_weight=None, degree=2, radius=4.0,
                             fit_intercept=True, max_monomials=MAX_MONOMIALS, split_every=8,
                             compute=True, coef=None):
    """PASS-GLM statistics of dask arrays, computed chunk by chunk where the data live.

    Each row chunk of ``X`` (rechunked so that all columns are in one block) is summarised on
    its worker by :meth:`PassGLMStatistics.add`; the summaries are summed by a tree reduction
    with fan-in ``split_every``. Only the small statistics (``O(p^2)`` numbers for degree 2)
    travel, never the data — the "trivially distributed" computation of the paper, §5.2.
    Runs on whatever scheduler is active: dask's default, or a ``distributed.Client``.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d)
    y : dask.array.Array or ndarray of shape (n,)
        Encoded as for :func:`pass_glm_statistics`; rechunked to the row chunks of ``X``.
    family : Family or {"logistic", "poisson"}
    sample_weight : dask.array.Array or ndarray of shape (n,), default=None
    degree, radius, fit_intercept, max_monomials, coef
        See :meth:`PassGLMStatistics.empty`.
    split_every : int, default=8
        Fan-in of the reduction tree.
    compute : bool, default=True
        Return the computed statistics; otherwise a ``dask.delayed`` object for them.

    Returns
    -------
    PassGLMStatistics (or a Delayed when ``compute=False``)

    Raises
    ------
    ValueError
        When a chunk contains NaN or infinity (raised by the worker that summarises it, so the
        data are still read once).
    """
    import dask
    import dask.array as da

    X = da.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got {X.ndim} dimensions.")
    X = X.rechunk({1: -1})
    options = dict(family=_model_name(family), n_features=X.shape[1], degree=degree,
                   radius=radius, fit_intercept=fit_intercept, max_monomials=max_monomials,
                   coef=coef)
    template = PassGLMStatistics.empty(**options)  # validates the options on the client

    def rows_like_X(v):
        v = da.asarray(v)
        if v.shape != (X.shape[0],):
            raise ValueError(f"Expected shape ({X.shape[0]},), got {v.shape}.")
        return v.rechunk((X.chunks[0],)).to_delayed().ravel()

    X_blocks = X.to_delayed().ravel()
    y_blocks = rows_like_X(y)
    w_blocks = ([None] * len(X_blocks) if sample_weight is None
                else rows_like_X(sample_weight))
    chunk_stats = dask.delayed(_chunk_statistics, pure=True)
    parts = [chunk_stats(options, xb, yb, wb)
             for xb, yb, wb in zip(X_blocks, y_blocks, w_blocks)]
    merge = dask.delayed(_merge_all, pure=True)
    while len(parts) > 1:
        parts = [merge(*parts[i:i + split_every]) for i in range(0, len(parts), split_every)]
    if not parts:
        return template if compute else dask.delayed(template)
    return parts[0].compute() if compute else parts[0]


# --------------------------------------------------------------------------------------------
# Posterior from the statistics
# --------------------------------------------------------------------------------------------
def _prior_log_normaliser(prior_prec):
    return 0.5 * (np.sum(np.log(prior_prec)) - len(prior_prec) * np.log(2 * np.pi))


def _logdet_from_chol(chol):
    return 2.0 * np.sum(np.log(np.diag(chol)))


def _quadratic_posterior(stats, prior_prec, coef):
    """Closed-form Gaussian posterior of a degree-2 surrogate with coefficients ``coef``.

    ``L(theta) + log prior = c0 + h . theta - theta^T Lambda theta / 2`` with
    ``h = linear + beta_1 T_1`` and ``Lambda = P - 2 beta_2 T_2``; hence mean
    ``Lambda^-1 h``, covariance ``Lambda^-1`` and the exact evidence of the surrogate model
    ``c0 + h . mean / 2 + (log det P - log det Lambda) / 2``.
    """
    precision = -2.0 * coef[2] * stats.gram
    precision[np.diag_indices_from(precision)] += prior_prec
    h = stats.linear + coef[1] * stats.moment1
    try:
        chol = linalg.cholesky(precision, lower=True)
    except linalg.LinAlgError:
        raise ValueError(
            "The PASS-GLM posterior precision is not positive definite: the degree-2 "
            "surrogate has the wrong curvature (pass_radius too small?).") from None
    mean = linalg.cho_solve((chol, True), h)
    c0 = stats.constant + coef[0] * stats.sum_weight
    log_evidence = (c0 + 0.5 * h @ mean + 0.5 * np.sum(np.log(prior_prec))
                    - 0.5 * _logdet_from_chol(chol))
    return mean, precision, log_evidence


class _SurrogateObjective(NewtonObjective):
    """The polynomial surrogate log posterior, maximised by damped Newton steps.

    Where the negative Hessian is not positive definite (the surrogate need not be concave
    everywhere for ``M > 2``), the step uses it shifted by enough of the identity to be;
    at the mode it must be positive definite without shift.
    """

    def __init__(self, stats, prior_prec):
        self.stats, self.prior_prec = stats, prior_prec

    def value(self, theta):
        value = self.stats.derivatives(theta, 0)[0]
        return value - 0.5 * np.sum(self.prior_prec * theta**2), None

    def gradient(self, theta, state):
        return self.stats.derivatives(theta, 1)[1] - self.prior_prec * theta

    def gradient_and_neg_hessian(self, theta, state):
        _, grad, hessian = self.stats.derivatives(theta, 2)
        neg_hessian = -hessian
        neg_hessian[np.diag_indices_from(neg_hessian)] += self.prior_prec
        return grad - self.prior_prec * theta, neg_hessian

    def neg_hessian(self, theta, state):
        return self.gradient_and_neg_hessian(theta, state)[1]

    def factor(self, neg_hessian):
        return _shift_to_definite(neg_hessian)

    def direction(self, factor, grad):
        step = linalg.solve(factor, grad, assume_a="pos")
        return step, grad @ step


def _shift_to_definite(matrix):
    """``matrix`` plus the smallest multiple of the identity making it positive definite."""
    eigmin = linalg.eigvalsh(matrix, subset_by_index=[0, 0])[0]
    scale = max(np.max(np.abs(np.diag(matrix))), np.finfo(float).tiny)
    if eigmin > 1e-10 * scale:
        return matrix
    return matrix + (1e-6 * scale - eigmin) * np.eye(len(matrix))


def _linear_predictor_rms(stats, theta):
    """Weighted root mean square of ``c_n . theta`` over the data, from the statistics alone.

    ``sum_n w_n (c_n . theta)^2 = theta^T T_2 theta``; by Chebyshev's inequality at most a
    fraction ``(rms / R)^2`` of the weight has ``|c_n . theta| > R``.
    """
    if stats.sum_weight <= 0:
        return 0.0
    return float(np.sqrt(max(theta @ stats.gram @ theta, 0.0) / stats.sum_weight))


class PassGLMAccuracyWarning(UserWarning):
    """The PASS-GLM posterior is measurably off the exact one (see :func:`mean_error_estimate`)."""


def _family_of(model):
    from .._families import LogisticFamily, PoissonFamily

    return LogisticFamily() if model == "logistic" else PoissonFamily(link="log")


def mean_error_estimate(stats, theta, prior_prec, pilot):
    """Estimated error of the PASS-GLM posterior mean, per parameter, in posterior sds.

    The exact log posterior's gradient at the surrogate's mode ``theta`` is the gradient of
    what the polynomial left out, ``g = sum_n w_n (f_M' - f')(a_n . theta) a_n``; one Newton
    step ``H^-1 g`` with the exact negative Hessian ``H`` moves ``theta`` to (about) the exact
    mode. Both sums are estimated on the pilot rows, with weights scaled to the statistics'
    total weight, so the estimate costs ``O(pilot rows x p^2)`` and needs no pass over the
    data. Its noise is proportional to the approximation error itself, so a good polynomial
    gives an estimate near zero.

    Returns
    -------
    offset : ndarray of shape (p,)
        ``(H^-1 g)_j / sqrt((H^-1)_jj)``.
    """
    w = pilot.sample_weight * (stats.sum_weight / pilot.sample_weight.sum())
    s = pilot.eta(theta)
    slope = np.polynomial.polynomial.polyder(-stats.coef)  # f_M' from beta = -b
    residual = np.polynomial.polynomial.polyval(s, slope) - _derivative(stats.model)(s)
    with np.errstate(over="ignore", invalid="ignore"):
        g = rmatvec(pilot.X, w * residual, pilot.fit_intercept)
    log_post = LogPosterior(pilot.X, pilot.y, _family_of(stats.model), w, prior_prec,
                            pilot.fit_intercept)
    try:
        chol = linalg.cholesky(log_post.neg_hessian(s), lower=True)
    except (linalg.LinAlgError, ValueError):
        return np.full(len(theta), np.inf)
    step = linalg.cho_solve((chol, True), g)
    sd = np.sqrt(np.diag(linalg.cho_solve((chol, True), np.eye(len(theta)))))
    offset = step / sd
    return np.where(np.isfinite(offset), offset, np.inf)


def pass_glm_posterior(stats, prior_prec, *, tol=1e-10, max_iter=100, theta0=None,
                       verbose=0, pilot=None):
    """Gaussian posterior from PASS-GLM statistics (Algorithm 1, lines 8-9).

    * ``degree == 2``: the surrogate log posterior is quadratic, so the posterior is exactly
      Gaussian: precision ``P - 2 beta_2 T_2`` and mean solving
      ``(P - 2 beta_2 T_2) mu = linear + beta_1 T_1`` (PASS-LR2 for logistic regression,
      where ``beta_1 = 1/2`` and ``beta_2 < 0``). ``log_evidence`` is the exact evidence of
      the surrogate model.
    * ``degree > 2``: the mode of the polynomial surrogate log posterior by Newton's method
      (started at the degree-2 solution), and a Laplace approximation there; the evidence
      is its Laplace estimate.

    The approximation is only as good as ``f_M`` is where the data are. With a ``pilot``, a
    :class:`PassGLMAccuracyWarning` is issued when :func:`mean_error_estimate` puts the
    posterior mean more than one posterior standard deviation from the exact posterior's.
    Without one, a ``UserWarning`` is issued when the weighted root mean square of the
    linear predictors at the posterior mean (available from the statistics,
    ``extra["linear_predictor_rms"]``) exceeds the Chebyshev radius ``R`` (Corollary 4.4 of
    the paper needs most ``|a_n . theta|`` within ``[-R, R]``).

    Parameters
    ----------
    stats : PassGLMStatistics
    prior_prec : ndarray of shape (p,)
        Diagonal prior precision, positive.
    tol : float, default=1e-10
        Newton stops when half the Newton decrement is below ``tol`` (``degree > 2``).
    max_iter : int, default=100
        Newton step cap; a ``ConvergenceWarning`` is raised when hit.
    theta0 : ndarray of shape (p,), default=None
        Newton starting point for ``degree > 2``.
    verbose : int, default=0
    pilot : Pilot, default=None
        Subsample on which to measure the approximation's effect (:func:`pilot_fit`).

    Returns
    -------
    InferenceResult
        ``extra`` holds ``degree``, ``radius``, ``coefficients`` (the ``beta_m``),
        ``n_samples``, ``linear_predictor_rms`` and ``mean_error_sd`` (the largest
        :func:`mean_error_estimate` in absolute value; None without a pilot).

    Raises
    ------
    ValueError
        If no data were accumulated, or for ``degree > 2`` when the negative Hessian of the
        surrogate log posterior is not positive definite at the point Newton's method stops
        (a flat or non-concave direction: no Laplace approximation exists there).
    """
    prior_prec = np.asarray(prior_prec, dtype=float)
    if prior_prec.shape != (stats.n_params,) or not np.all(prior_prec > 0):
        raise ValueError(f"prior_prec must be positive with shape ({stats.n_params},), "
                         f"got {prior_prec!r}.")
    if stats.n_samples == 0:
        raise ValueError("No data accumulated in the PASS-GLM statistics.")
    if theta0 is None and pilot is not None and stats.radius is None:
        theta0 = pilot.theta  # a fitted polynomial has no degree-2 Chebyshev counterpart
    if stats.degree == 2:
        theta, precision, log_evidence = _quadratic_posterior(stats, prior_prec, stats.coef)
        n_iter, converged = 1, True  # one closed-form solve
    else:
        theta, precision, log_evidence, n_iter, converged = _polynomial_laplace(
            stats, prior_prec, theta0, tol=tol, max_iter=max_iter, verbose=verbose)
    rms = _linear_predictor_rms(stats, theta)
    mean_error = None
    if pilot is not None:
        mean_error = float(np.max(np.abs(mean_error_estimate(stats, theta, prior_prec, pilot))))
        if mean_error > MEAN_ERROR_WARN_SD:
            warnings.warn(
                f"The PASS-GLM posterior mean is estimated to be {mean_error:.3g} posterior "
                f"standard deviations from the exact posterior's (the degree-{stats.degree} "
                f"polynomial's error measured on {len(pilot.y)} pilot rows): with "
                f"{stats.n_samples} rows the posterior is narrower than the approximation "
                "error. Use method='laplace' for this data set, a higher pass_degree (few "
                "features), or pass_radius='auto' if a numeric radius was set.",
                PassGLMAccuracyWarning, stacklevel=3)
    if stats.radius is not None and rms > stats.radius:
        warnings.warn(
            f"The linear predictors have root mean square {rms:.3g} at the PASS-GLM "
            f"posterior mean, beyond pass_radius={stats.radius:g}: the polynomial "
            "approximation is unreliable there. Increase pass_radius (or standardise X).",
            UserWarning)
    extra = {"degree": stats.degree, "radius": stats.radius,
             "coefficients": stats.coef.copy(), "n_samples": stats.n_samples,
             "linear_predictor_rms": rms, "mean_error_sd": mean_error}
    return InferenceResult(posterior=GaussianPosterior(theta, precision=precision),
                           n_iter=n_iter, converged=converged, log_evidence=log_evidence,
                           extra=extra)


def _polynomial_laplace(stats, prior_prec, theta0, *, tol, max_iter, verbose):
    """Mode, precision and Laplace log evidence of a surrogate of degree above 2."""
    if theta0 is None:
        theta0 = _quadratic_posterior(
            stats, prior_prec, _surrogate_coefficients(stats.model, 2, stats.radius or 4.0))[0]
    result = newton_maximise(_SurrogateObjective(stats, prior_prec), theta0, tol=tol,
                             max_iter=max_iter, verbose=verbose, label="pass_glm",
                             value_name="surrogate log posterior")
    theta, precision = result.x, result.neg_hessian
    try:
        chol = linalg.cholesky(precision, lower=True)
    except linalg.LinAlgError:
        raise ValueError(
            f"The degree-{stats.degree} PASS-GLM surrogate log posterior is not concave "
            "where Newton's method stopped, so it has no Laplace approximation: the "
            "polynomial misrepresents the likelihood there (linear predictors far outside "
            "[-pass_radius, pass_radius]). Increase pass_radius or use pass_degree=2.") from None
    if not result.converged:
        warn_not_converged("Newton's method on the PASS-GLM surrogate", max_iter)
    value = stats.loglik(theta) - 0.5 * np.sum(prior_prec * theta**2)
    log_evidence = (value + _prior_log_normaliser(prior_prec)
                    + 0.5 * len(theta) * np.log(2 * np.pi) - 0.5 * _logdet_from_chol(chol))
    return theta, precision, log_evidence, result.n_iter, result.converged


def surrogate_options(family, degree, radius, pilot):
    """Keyword arguments of :meth:`PassGLMStatistics.empty` that fix the polynomial.

    A numeric ``radius``: the Chebyshev series on ``[-radius, radius]``. ``"auto"``: the
    least-squares fit on the pilot (:func:`fitted_coefficients`); when a logistic pilot has
    a single class it cannot locate the linear predictors, so the paper's ``[-4, 4]`` is used
    with a warning.
    """
    model = _model_name(family)
    degree = check_pass_degree(model, degree)
    if not (isinstance(radius, str) and radius == "auto"):
        return {"degree": degree, "radius": radius}
    if model == "logistic" and len(np.unique(pilot.y)) < 2:
        warnings.warn(
            "The PASS-GLM pilot rows (the first chunk for dask arrays and partial_fit) "
            "contain one class only, so pass_radius='auto' falls back to the fixed interval "
            "[-4, 4] of Huggins et al. (2017). Start with a chunk holding both classes, or "
            "set pass_radius.", PassGLMAccuracyWarning, stacklevel=3)
        return {"degree": degree, "radius": 4.0}
    return {"coef": fitted_coefficients(model, degree, pilot)[0]}


def start_statistics(X, y, family, *, sample_weight, prior_prec, fit_intercept, degree=2,
                     radius="auto", max_monomials=MAX_MONOMIALS, max_rows=PILOT_ROWS,
                     tol=1e-8, max_iter=100):
    """Empty statistics with the polynomial chosen for ``(X, y)``, and the pilot it came from.

    ``(X, y)`` is the whole in-memory data set, or the first chunk of a stream: the pilot is
    a subsample of it (:func:`pilot_fit`) and, for ``radius="auto"``, fixes the polynomial
    that every later chunk is summarised with (:func:`surrogate_options`). Nothing is added
    to the statistics.

    Returns
    -------
    stats : PassGLMStatistics
    pilot : Pilot
    """
    pilot = pilot_fit(X, y, family, sample_weight=sample_weight, prior_prec=prior_prec,
                      fit_intercept=fit_intercept, max_rows=max_rows, tol=tol,
                      max_iter=max_iter)
    stats = PassGLMStatistics.empty(family, np.shape(X)[1], fit_intercept=fit_intercept,
                                    max_monomials=max_monomials,
                                    **surrogate_options(family, degree, radius, pilot))
    return stats, pilot


def _dask_pilot(X, y, family, sample_weight, prior_prec, fit_intercept, max_rows, tol,
                max_iter):
    """Pilot from the first row chunk: one chunk is read twice, the rest once."""
    import dask
    import dask.array as da

    X = da.asarray(X).rechunk({1: -1})
    rows = X.chunks[0][0] if X.chunks[0] else 0
    first = [X[:rows], da.asarray(y)[:rows]]
    if sample_weight is not None:
        first.append(da.asarray(sample_weight)[:rows])
    first = dask.compute(*first)
    weight = np.ones(rows) if sample_weight is None else np.asarray(first[2], dtype=float)
    # stand in for all n rows, not just the chunk's
    return pilot_fit(first[0], first[1], family, sample_weight=weight * (X.shape[0] / rows),
                     prior_prec=prior_prec, fit_intercept=fit_intercept, max_rows=max_rows,
                     tol=tol, max_iter=max_iter)


def pass_glm(X, y, family, *, sample_weight, prior_prec, fit_intercept, degree=2,
             radius="auto", tol=1e-10, max_iter=100, theta0=None, verbose=0,
             max_monomials=MAX_MONOMIALS, pilot_rows=PILOT_ROWS):
    """PASS-GLM posterior of a weighted GLM: one pass for the statistics, then the posterior.

    Same calling convention as :func:`~skcoreset._inference.laplace.laplace`. When ``X`` is
    a dask array the statistics are computed chunk-wise where the data live
    (:func:`pass_glm_statistics_dask`), otherwise in memory (:func:`pass_glm_statistics`).
    A Laplace fit on a pilot subsample of at most ``pilot_rows`` rows (:func:`pilot_fit`;
    the first chunk of a dask array) chooses the polynomial for ``radius="auto"`` and
    measures the approximation's error (:func:`mean_error_estimate`) in either case.

    Parameters
    ----------
    X : ndarray or dask.array.Array of shape (n, d)
    y : ndarray or dask.array.Array of shape (n,)
        Labels in ``{-1, +1}`` (logistic) or counts (Poisson).
    family : Family
        :class:`~skcoreset._families.LogisticFamily`, or
        :class:`~skcoreset._families.PoissonFamily` with ``link="log"``.
    sample_weight : ndarray of shape (n,) or None
    prior_prec : ndarray of shape (p,)
        Diagonal prior precision (``p = d + fit_intercept``).
    fit_intercept : bool
    degree : int, default=2
        Degree ``M`` of the polynomial: ``2, 6, 10, ...`` for logistic, even for Poisson (see
        :func:`check_pass_degree`).
    radius : float or "auto", default="auto"
        A number: the Chebyshev approximation on ``[-radius, radius]`` (the paper's; choose
        it to cover most ``a_n . theta`` near the posterior mode). ``"auto"``: the
        least-squares fit of ``f'`` at the pilot's linear predictors
        (:func:`fitted_coefficients`).
    tol, max_iter, theta0, verbose
        Newton options for ``degree > 2``; see :func:`pass_glm_posterior`.
    max_monomials : int, default=MAX_MONOMIALS
        Cap on ``C(p + M, M)`` for ``degree > 2``.
    pilot_rows : int, default=PILOT_ROWS
        Size of the pilot subsample.

    Returns
    -------
    InferenceResult
        With a :class:`GaussianPosterior`; ``extra["statistics"]`` holds the
        :class:`PassGLMStatistics`, from which ``partial_fit`` can continue, and
        ``extra["pilot"]`` the :class:`Pilot`.
    """
    pilot_options = dict(prior_prec=prior_prec, fit_intercept=fit_intercept,
                         max_rows=pilot_rows, tol=1e-8, max_iter=max_iter)
    if is_dask_collection(X):
        pilot = _dask_pilot(X, y, family, sample_weight, **pilot_options)
        stats = pass_glm_statistics_dask(
            X, y, family, sample_weight=sample_weight, fit_intercept=fit_intercept,
            max_monomials=max_monomials, **surrogate_options(family, degree, radius, pilot))
    else:
        stats, pilot = start_statistics(X, y, family, sample_weight=sample_weight,
                                        degree=degree, radius=radius,
                                        max_monomials=max_monomials, **pilot_options)
        stats.add(X, y, sample_weight)
    result = pass_glm_posterior(stats, prior_prec, tol=tol, max_iter=max_iter, theta0=theta0,
                                verbose=verbose, pilot=pilot)
    result.extra["statistics"] = stats
    result.extra["pilot"] = pilot
    return result
