"""Data-driven surrogate polynomial from pilot rows (``radius="auto"``), and held-out rows.

A uniform sample of the rows, the same however they arrive (:class:`PilotSample`), gives
pilot rows and held-out rows. A Laplace fit on the pilot rows locates the linear predictors;
``f_M'`` is the weighted least-squares fit of ``f'`` on them. The statistics do not depend on
the polynomial, so it is chosen after the rows are summarised (after the last block of a
stream, or the map-reduce over a dask array's chunks). The held-out rows measure the
approximation's error (:func:`mean_error_estimate`).
"""

from dataclasses import dataclass

import numpy as np

from ..._warnings import warn
from ..._backend import row_keys, stack_rows
from ..._design import linear_predictor
from .._common import LogPosterior
from ..laplace import initial_theta, newton_map
from ._statistics import MAX_MONOMIALS, PassGLMStatistics
from ...exceptions import PassGLMAccuracyWarning
from ._surrogate import (_check_bounded, _model_name, check_pass_degree, mapping,
                         surrogate_of_polynomial)

# Rows of the pilot subsample for radius="auto", and of the held-out rows of the accuracy
# diagnostic: enough for a stable least-squares fit and an error estimate whose noise is well
# below one posterior sd.
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
class WeightedRows:
    """Rows standing in for all the data: each stratum's weights add up to its total.

    Attributes
    ----------
    X : ndarray of shape (m, d)
    y : ndarray of shape (m,)
        Encoded targets (``{-1, +1}`` or counts).
    sample_weight : ndarray of shape (m,)
    fit_intercept : bool
    strata : ndarray of shape (m,) or None
        The stratum of each row, when the rows are a stratified sample.
    fractions : ndarray of shape (n_strata,) or None
        Each stratum's sampling fraction (1: all its rows are here), for the standard
        errors of sums estimated from the rows.
    """

    X: np.ndarray
    y: np.ndarray
    sample_weight: np.ndarray
    fit_intercept: bool
    strata: np.ndarray | None = None
    fractions: np.ndarray | None = None

    def eta(self, theta):
        return linear_predictor(self.X, theta, self.fit_intercept)


@dataclass(eq=False)
class Pilot(WeightedRows):
    """Pilot rows (:class:`WeightedRows`) and ``theta``, the mode of their weighted log
    posterior (to :data:`PILOT_TOL`)."""

    theta: np.ndarray | None = None

    @classmethod
    def of(cls, rows, theta):
        return cls(rows.X, rows.y, rows.sample_weight, rows.fit_intercept, rows.strata,
                   rows.fractions, theta)


def _strata(model, y):
    """Row masks of the strata: the classes (positive first) for a binary model, which
    gives a rare class its own share of the pilot; one stratum for counts."""
    return [y > 0, y <= 0] if mapping(model).binary else [np.ones(len(y), dtype=bool)]


def _allocation(counts, max_rows):
    """Rows of each stratum in a pilot of at most ``max_rows``: the rarer class up to half
    of them, the other the rest (one stratum: ``max_rows``)."""
    counts = np.asarray(counts)
    if len(counts) == 1:
        return np.minimum(counts, max_rows)
    rare = int(np.argmin(counts))
    alloc = np.zeros(len(counts), dtype=np.intp)
    alloc[rare] = min(counts[rare], max_rows // 2)
    alloc[1 - rare] = min(counts[1 - rare], max_rows - alloc[rare])
    return alloc


def _smallest_keys(keys, candidates, count, size):
    """The rows (among the ``count`` where ``candidates`` is true) of the ``size`` smallest
    keys, in key order. The uniform keys are first cut at a threshold that keeps a little
    more than ``size`` of them with overwhelming probability (``size / count`` plus six
    binomial standard deviations), so only those few are sorted."""
    if count > 4 * size:
        threshold = (size + 6 * np.sqrt(size) + 10) / count
        cut = np.flatnonzero(candidates & (keys < threshold))
        rows = cut if len(cut) >= size else np.flatnonzero(candidates)
    else:
        rows = np.flatnonzero(candidates)
    if len(rows) > size:
        rows = rows[np.argpartition(keys[rows], size)[:size]]
    return rows[np.argsort(keys[rows], kind="stable")]


@dataclass(eq=False)
class PilotSample:
    """A uniform sample without replacement of the rows of positive weight, per stratum,
    that does not depend on how the rows arrive.

    Every row's key is a hash of its number (:func:`~skcoreset._backend.row_keys`); each
    stratum (:func:`_strata`) keeps its ``capacity`` rows of smallest keys in key order,
    with its number of rows of positive weight and their total weight. So sampling all rows
    at once, adding them block by block (:meth:`add`, a stream) or merging the samples of
    disjoint chunks (:meth:`merge`, a tree of tasks on a cluster) give the same sample, and
    a pilot chosen from it after the last block is the pilot of all the rows.

    :meth:`split` gives the pilot rows (the smallest keys) and the held-out rows (the next
    ones) on which the approximation's error is measured.
    """

    model: str
    capacity: int
    keys: list
    index: list
    X: list
    y: list
    weight: list
    counts: np.ndarray
    totals: np.ndarray

    @classmethod
    def of_rows(cls, model, X, y, sample_weight=None, *, offset=0,
                capacity=2 * PILOT_ROWS, below=None):
        """The sample of rows ``offset, offset + 1, ...`` (encoded targets); with
        ``below`` (a key per stratum), only the rows of smaller keys are kept (the others
        cannot enter a sample they are merged into whose largest key it is)."""
        y = np.asarray(y, dtype=float).ravel()
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        keys = row_keys(offset, offset + len(y))
        parts = dict(keys=[], index=[], X=[], y=[], weight=[], counts=[], totals=[])
        for s, in_stratum in enumerate(_strata(model, y)):
            if w is not None:
                in_stratum &= w > 0
            count = np.count_nonzero(in_stratum)
            if below is None or below[s] == np.inf:
                rows = _smallest_keys(keys, in_stratum, count, capacity)
            else:
                candidates = in_stratum & (keys < below[s])
                rows = _smallest_keys(keys, candidates, np.count_nonzero(candidates),
                                      capacity)
            for name, values in (("keys", keys[rows]), ("index", offset + rows),
                                 ("X", X[rows]), ("y", y[rows]),
                                 ("weight", np.ones(len(rows)) if w is None else w[rows])):
                parts[name].append(values)
            parts["counts"].append(count)
            parts["totals"].append(count if w is None else w[in_stratum].sum())
        parts["counts"] = np.array(parts["counts"])
        parts["totals"] = np.array(parts["totals"], dtype=float)
        return cls(model, capacity, **parts)

    @classmethod
    def empty(cls, model, n_features, capacity=2 * PILOT_ROWS):
        return cls.of_rows(model, np.empty((0, n_features)), np.empty(0), capacity=capacity)

    def merge(self, other):
        """The sample of the union of the rows of two samples of disjoint rows."""
        parts = dict(keys=[], index=[], X=[], y=[], weight=[])
        for s in range(len(self.keys)):
            keys = np.concatenate([self.keys[s], other.keys[s]])
            order = np.argsort(keys, kind="stable")[:self.capacity]
            for name in parts:
                concatenate = stack_rows if name == "X" else np.concatenate
                values = concatenate([getattr(self, name)[s], getattr(other, name)[s]])
                parts[name].append(values[order])
        return PilotSample(self.model, self.capacity, **parts,
                           counts=self.counts + other.counts,
                           totals=self.totals + other.totals)

    __add__ = merge

    def add(self, X, y, sample_weight=None, *, offset):
        """The sample with the rows ``offset, offset + 1, ...`` added (a new object)."""
        # a full stratum keeps no row whose key is above its largest
        below = [keys[-1] if len(keys) >= self.capacity else np.inf for keys in self.keys]
        return self.merge(PilotSample.of_rows(self.model, X, y, sample_weight, offset=offset,
                                              capacity=self.capacity, below=below))

    def _rows(self, takes, fit_intercept):
        """The rows ``takes[s]`` (slices) of each stratum, reweighted to its total weight."""
        X, y, weight, strata = [], [], [], []
        for s, rows in enumerate(takes):
            w = self.weight[s][rows]
            X.append(self.X[s][rows])
            y.append(self.y[s][rows])
            weight.append(w * (self.totals[s] / w.sum()) if w.sum() > 0 else w)
            strata.append(np.full(len(w), s))
        fractions = np.array([len(w) / max(n, 1) for w, n in zip(weight, self.counts)])
        return WeightedRows(stack_rows(X), np.concatenate(y), np.concatenate(weight),
                            bool(fit_intercept), np.concatenate(strata), fractions)

    def split(self, max_rows, fit_intercept):
        """Pilot rows and held-out rows, each standing for all the data.

        The pilot takes, per stratum, the rows of smallest keys: at most ``max_rows`` in all,
        the rarer class up to half of them (:func:`_allocation`). The held-out rows are, per
        stratum, the sample's other rows; a stratum held whole by the sample (at most
        ``capacity`` rows) is held out whole instead, pilot rows included, so that its sums
        are exact rather than estimated.

        Returns
        -------
        pilot, held_out : WeightedRows
        """
        if not np.any(self.counts):
            raise ValueError("No rows of positive weight were seen.")
        alloc = _allocation(self.counts, max_rows)
        pilot = self._rows([slice(0, m) for m in alloc], fit_intercept)
        held_out = self._rows([slice(None) if n <= self.capacity else slice(m, None)
                               for n, m in zip(self.counts, alloc)], fit_intercept)
        return pilot, held_out


def pilot_fit(rows, family, *, prior_prec, tol=PILOT_TOL, max_iter=100, theta0=None):
    """:class:`Pilot`: the mode of the weighted log posterior of pilot rows
    (:meth:`PilotSample.split`).

    Newton's method (:func:`~skcoreset._inference.laplace.newton_map`) from ``theta0`` (by
    default :func:`initial_theta`) to half a Newton decrement of ``tol`` nats (the weights
    add up to the data's, so these are nats of about the full log posterior). The mode only
    has to be accurate compared with its sampling error (the polynomial uses nothing else),
    so no exact Hessian confirms convergence (single-precision Hessians steer the steps from
    ``_FLOAT32_PILOT_PARAMS`` parameters) and no covariance or evidence is computed.
    """
    prior_prec = np.asarray(prior_prec, dtype=float)
    log_post = LogPosterior(rows.X, rows.y, family, rows.sample_weight, prior_prec,
                            rows.fit_intercept)
    if theta0 is None:
        theta0 = initial_theta(rows.y, family, rows.sample_weight, len(prior_prec),
                               rows.fit_intercept)
    # a pilot that stops short of convergence (max_iter) still locates the linear predictors
    theta = newton_map(log_post, theta0, tol=tol, max_iter=max_iter, confirm=False,
                       approx=len(prior_prec) >= _FLOAT32_PILOT_PARAMS)[0]
    return Pilot.of(rows, theta)


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
    mean square at its linear predictors ``s_n = a_n . theta_pilot`` (for a mapping
    approximated at the margins, ``phi'`` at ``t_n = y_n s_n``); ``b_0`` makes ``f_M``
    match ``f`` on weighted average (it enters only the evidence). Where the ``s_n`` barely
    vary, the Taylor polynomial of degree 2 at their mean is used instead.

    Returns
    -------
    coef : ndarray of shape (degree + 1,)
    center, half_width : float
        Weighted mean of the ``s_n`` (or ``t_n``) and their largest distance from it.
    """
    m = mapping(model)
    s = pilot.eta(pilot.theta)
    if m.margin:
        s = pilot.y * s
    w = pilot.sample_weight
    center = float(np.average(s, weights=w))
    half_width = float(np.max(np.abs(s - center))) if len(s) else 0.0
    fprime, f = m.derivative, m.function
    scale = float(np.sqrt(np.average((s - center) ** 2, weights=w)))
    b = np.zeros(degree + 1)
    if scale <= 1e-8 * max(1.0, abs(center)) or not _more_distinct_than(s, degree):
        # Taylor at the centre
        curvature = m.curvature(center)
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
    return _check_bounded(surrogate_of_polynomial(model, b)), center, half_width


def surrogate_options(family, degree, pilot):
    """Keyword arguments of :meth:`PassGLMStatistics.with_polynomial` for
    ``pass_radius="auto"``: the least-squares fit on the pilot
    (:func:`fitted_coefficients`); when a binary pilot has a single class it cannot locate
    the linear predictors, so the paper's ``[-4, 4]`` is used with a warning.
    """
    model = _model_name(family)
    if mapping(model).binary and len(np.unique(pilot.y)) < 2:
        warn(
            "The PASS-GLM pilot rows contain one class only, so pass_radius='auto' falls "
            "back to the fixed interval [-4, 4] of Huggins et al. (2017). Fit rows of both "
            "classes, or set pass_radius.", PassGLMAccuracyWarning)
        return {"radius": 4.0}
    return {"coef": fitted_coefficients(model, check_pass_degree(model, degree), pilot)[0]}


def start_statistics(family, n_features, *, degree=2, radius="auto", fit_intercept=True,
                     max_monomials=MAX_MONOMIALS):
    """Empty statistics for ``pass_radius=radius``: with the Chebyshev polynomial of a
    numeric radius, or for ``"auto"`` with the polynomial chosen later
    (:meth:`PassGLMStatistics.with_polynomial`), after the rows are summarised."""
    auto = isinstance(radius, str) and radius == "auto"
    return PassGLMStatistics.empty(family, n_features, degree=degree,
                                   radius=None if auto else radius,
                                   fit_intercept=fit_intercept, max_monomials=max_monomials)
