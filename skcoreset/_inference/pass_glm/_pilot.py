"""Data-driven surrogate polynomial from a pilot subsample (``radius="auto"``).

A Laplace fit on a deterministic subsample locates the linear predictors; ``f_M'`` is the
weighted least-squares fit of ``f'`` on them, and the statistics are started with it.
"""

import warnings
from dataclasses import dataclass

import numpy as np

from ..._design import linear_predictor
from .._common import LogPosterior
from ..laplace import initial_theta, newton_map
from ._chebyshev import _mapping_function
from ._statistics import MAX_MONOMIALS, PassGLMStatistics
from ._surrogate import (PassGLMAccuracyWarning, _check_bounded, _derivative, _model_name,
                         check_pass_degree)

# Rows of the pilot subsample for radius="auto" and for the accuracy diagnostic: enough for a
# stable least-squares fit and an error estimate whose noise is well below one posterior sd.
PILOT_ROWS = 10_000
# The pilot's mode is solved to half a Newton decrement of this many nats of its weighted log
# posterior (weights adding up to the data's): within about sqrt(2 * PILOT_TOL) posterior sds
# of the full data of the subsample's exact mode, far below its sampling error (~sqrt(N / m)
# such sds for m pilot rows). 0.01 moved no error of the posterior mean by more than 0.1 sd;
# 0.01 nats per pilot row (1 nat at N = 1e6) moved them by up to 0.4 sd where positives are
# rare (benchmarks/README.md).
PILOT_TOL = 0.01
# From this many parameters single-precision Hessians steer the pilot's Newton steps (a float32
# Gram of 10,000 x 101 takes 3.3 ms against 5 ms; at p = 21 the block copies cost what they
# save). Below, the float64 steps keep integer weights equivalent to repeated rows to ~1e-14.
_FLOAT32_PILOT_PARAMS = 50


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
        Mode of the weighted log posterior on the subsample (to :data:`PILOT_TOL`).
    fit_intercept : bool
    """

    X: np.ndarray
    y: np.ndarray
    sample_weight: np.ndarray
    theta: np.ndarray
    fit_intercept: bool

    def eta(self, theta):
        return linear_predictor(self.X, theta, self.fit_intercept)


def _stride(length, n_keep):
    """Step of every k-th of ``length`` items keeping at most ``n_keep``."""
    return max(1, -(-length // max(n_keep, 1)))


def _strided(index, n_keep):
    return index[::_stride(len(index), n_keep)]


def pilot_rows(y, sample_weight, model, max_rows=PILOT_ROWS):
    """Indices of a deterministic subsample and its rescaled weights.

    Every k-th row; for the logistic model per class, with the rarer class given up to half
    of ``max_rows``, so that rare positives are represented. The weights of each stratum are
    scaled to its total weight, so the subsample's weighted log-likelihood estimates the
    full one. Costs one pass over ``y`` and ``sample_weight`` only.
    """
    n = len(y)
    if model == "logistic":
        full = [np.flatnonzero(y > 0), np.flatnonzero(y <= 0)]
        full.sort(key=len)
        rare = _strided(full[0], max_rows // 2)
        strata = [rare, _strided(full[1], max_rows - len(rare))]
    else:
        strata, full = [np.arange(0, n, _stride(n, max_rows))], [slice(None)]
    index = np.concatenate(strata)
    if sample_weight is None:  # each kept row stands for (rows of its stratum) / len(kept)
        sizes = [n if isinstance(rows, slice) else len(rows) for rows in full]
        return index, np.concatenate([np.full(len(kept), size / max(len(kept), 1))
                                      for kept, size in zip(strata, sizes)])
    w = np.asarray(sample_weight, dtype=float)
    weight = np.concatenate([
        w[kept] * (w[rows].sum() / w[kept].sum()) if w[kept].sum() > 0 else w[kept]
        for kept, rows in zip(strata, full)])
    return index, weight


def pilot_fit(X, y, family, *, sample_weight, prior_prec, fit_intercept, max_rows=PILOT_ROWS,
              tol=PILOT_TOL, max_iter=100):
    """:class:`Pilot` from an in-memory data set (or its first chunk).

    The mode of the subsample's weighted log posterior by Newton's method
    (:func:`~skcoreset._inference.laplace.newton_map`) from :func:`initial_theta`, to half a
    Newton decrement of ``tol`` nats (the weights add up to the data's, so these are nats of
    about the full log posterior). The mode only has to be accurate compared with its
    sampling error (the polynomial and the accuracy diagnostic use nothing else), so no
    exact Hessian confirms convergence (single-precision Hessians steer the steps from
    ``_FLOAT32_PILOT_PARAMS`` parameters) and no covariance or evidence is computed.
    """
    model = _model_name(family)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    index, weight = pilot_rows(y, sample_weight, model, max_rows)
    Xp, yp = np.take(X, index, axis=0), y[index]  # np.take: 2-10x faster than X[index]
    if not np.all(np.isfinite(Xp)):
        raise ValueError("Input X contains NaN or infinity.")
    if not np.all(np.isfinite(yp)):
        raise ValueError("Input y contains NaN or infinity.")
    prior_prec = np.asarray(prior_prec, dtype=float)
    log_post = LogPosterior(Xp, yp, family, weight, prior_prec, fit_intercept)
    theta0 = initial_theta(yp, family, weight, len(prior_prec), fit_intercept)
    # a pilot that stops short of convergence (max_iter) still locates the linear predictors
    theta = newton_map(log_post, theta0, tol=tol, max_iter=max_iter, confirm=False,
                       approx=len(prior_prec) >= _FLOAT32_PILOT_PARAMS)[0]
    return Pilot(Xp, yp, weight, theta, bool(fit_intercept))


def _more_distinct_than(values, k):
    """Whether ``values`` holds more than ``k`` distinct values (k passes; no sort)."""
    for _ in range(k):
        if not len(values):
            return False
        values = values[values != values[0]]
    return len(values) > 0


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
    if scale <= 1e-8 * max(1.0, abs(center)) or not _more_distinct_than(s, degree):
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
                     tol=PILOT_TOL, max_iter=100):
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
