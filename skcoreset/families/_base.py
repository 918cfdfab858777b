"""The :class:`Family` base class, the quadrature rules behind its expectations, and the
target checks shared by several families."""

from functools import partial

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from numpy.polynomial.laguerre import laggauss
from sklearn.utils import column_or_1d

# exp() overflows past ~709; log links evaluate exp(min(eta, LOG_RATE_MAX)) so that
# log-likelihoods and derivatives of absurd predictors stay finite (and hugely negative).
LOG_RATE_MAX = 500.0
LOG_VAR_MAX = 700.0  # same idea for the log of a variance
# Gaussians wider than this are integrated by splitting (see LogisticFamily): Hermite nodes
# spaced on the scale of the standard deviation miss curvature concentrated near 0.
_WIDE_VARIANCE = 1.0
_N_LAGUERRE = 64
# (variance bound, Gauss-Hermite nodes) of expected_loglik's rows of small variance
_NARROW_NODES = ((1e-3, 4), (3e-2, 8))


def gauss_hermite(n_points):
    """Nodes and weights of ``n_points``-point Gauss-Hermite quadrature for N(0, 1).

    ``sum(weights * f(nodes))`` approximates ``E[f(z)]`` for ``z ~ N(0, 1)``; it is exact for
    polynomials of degree up to ``2 * n_points - 1``.
    """
    nodes, weights = hermegauss(n_points)
    return nodes, weights / np.sqrt(2.0 * np.pi)


def gauss_laguerre(n_points):
    """Nodes and weights with ``sum(weights * f(nodes)) ~ int_0^inf exp(-x) f(x) dx``."""
    return laggauss(n_points)


def normal_pdf(x, mean, sd):
    return np.exp(-0.5 * ((x - mean) / sd) ** 2) / (sd * np.sqrt(2.0 * np.pi))


def half_lines(mean, var):
    """Gauss-Laguerre nodes x, weights, and the N(mean, var) density at x and at -x.

    ``(f(x) * right + g(x) * left) @ weights`` approximates
    ``int_0^inf exp(-x) [f(x) N(x) + g(x) N(-x)] dx`` for each row's Gaussian.
    """
    x, weights = gauss_laguerre(_N_LAGUERRE)
    sd = np.sqrt(var)[:, None]
    return x, weights, normal_pdf(x, mean[:, None], sd), normal_pdf(-x, mean[:, None], sd)


def exp_log1p_exp_neg(x):
    """``exp(x) log(1 + exp(-x))`` for x >= 0, stable (it tends to 1)."""
    u = np.exp(-x)
    return np.where(u > 1e-8, np.log1p(u) / np.where(u > 0, u, 1.0), 1.0 - 0.5 * u)


def piecewise(pieces, *arrays):
    """Evaluate each ``function(*arrays[mask])`` of ``pieces`` (pairs ``(mask, function)``,
    disjoint masks covering the broadcast shape of ``arrays``); each function returns a tuple
    of arrays. Returns the merged tuple."""
    arrays = [np.asarray(a, dtype=float) for a in arrays]
    shape = np.broadcast(*arrays).shape
    arrays = [np.broadcast_to(a, shape) for a in arrays]
    outputs = None
    for mask, function in pieces:
        if not np.any(mask):
            continue
        parts = function(*(a[mask] for a in arrays))
        if outputs is None:
            outputs = [np.empty(shape) for _ in parts]
        for out, part in zip(outputs, parts):
            out[mask] = part
    return tuple(outputs) if outputs is not None else ()


def by_width(v, narrow, wide, *arrays):
    """Evaluate ``narrow(*arrays)`` where ``v <= 1`` and ``wide(*arrays)`` elsewhere; each
    returns a tuple of arrays. Returns the merged tuple."""
    shape = np.broadcast(*(np.asarray(a) for a in arrays)).shape
    is_narrow = np.broadcast_to(np.asarray(v, dtype=float), shape) <= _WIDE_VARIANCE
    return piecewise([(is_narrow, narrow), (~is_narrow, wide)], *arrays)


def as_column(y, eta):
    """Broadcast a target vector against predictors of shape (n,) or (n, S)."""
    y = np.asarray(y, dtype=float)
    return y[:, None] if np.ndim(eta) == 2 and y.ndim == 1 else y


def lognormal_moments(m, v):
    """Mean and variance of ``exp(eta)`` for ``eta ~ N(m, v)``, finite for any m, v >= 0."""
    m = np.asarray(m, dtype=float)
    v = np.asarray(v, dtype=float)
    mean = np.exp(np.minimum(m + 0.5 * v, LOG_RATE_MAX))
    # the variance exp(2m + v) (e^v - 1), formed in log space
    with np.errstate(divide="ignore"):  # v = 0 gives log(0) = -inf, i.e. variance 0
        log_var = 2.0 * m + 2.0 * v + np.log(-np.expm1(-v))
    return mean, np.exp(np.minimum(log_var, LOG_VAR_MAX))


def check_real_targets(y):
    """Targets as float64 of shape (n,); NaN and infinity are refused."""
    y = column_or_1d(y, warn=True).astype(np.float64, copy=False)
    if not np.all(np.isfinite(y)):
        raise ValueError("Input y contains NaN or infinity.")
    return y


def check_non_negative_targets(y, model="Poisson", what="non-negative"):
    """Non-negative real targets: finite and ``>= 0``. Returns float64 of shape (n,).

    ``model`` and ``what`` name the family and its targets in the message (e.g. "Poisson
    targets are non-negative: y contains negative values.").
    """
    y = check_real_targets(y)
    if np.any(y < 0):
        raise ValueError(f"{model} targets are {what}: y contains negative values.")
    return y


def check_counts(y, model):
    """Count targets: finite, non-negative integers. Returns float64 of shape (n,).

    ``model`` names the family in the messages (e.g. "Negative binomial targets are counts:
    ...").
    """
    y = check_non_negative_targets(y, model, "counts")
    if np.any(y != np.round(y)):
        raise ValueError(f"{model} targets are counts: y contains non-integer values.")
    return y


class Family:
    """A likelihood written in the linear predictor ``eta = x @ theta``.

    Subclasses set :attr:`name` (the key of the registry, :data:`skcoreset.families.FAMILIES`)
    and implement ``loglik``, ``d1``, ``d2`` (the log-likelihood of each point and its first
    two derivatives in ``eta``), ``mean`` (the inverse link), ``link``,
    ``predictive_variance`` and ``sample``; this class gives Gauss-Hermite expectations on
    top of them, validation of real-valued targets and the hooks the estimators and coreset
    constructors call. A subclass whose ``loglik`` evaluates float32 predictors in float32
    without overflow sets :attr:`float32_loglik` to True: the Hilbert coresets' projection,
    stored in float32, is then computed in float32 too (``False`` by default: float64).

    Parameters
    ----------
    n_quadrature : int, default=32
        Number of Gauss-Hermite points used by :meth:`expected_loglik` and
        :meth:`expected_mean` when no closed form exists.
    """

    name = None
    float32_loglik = False

    def __init__(self, n_quadrature=32):
        self.n_quadrature = n_quadrature

    def __repr__(self):
        params = ", ".join(f"{key}={value!r}" for key, value in self._params().items())
        return f"{type(self).__name__}({params})"

    def _params(self):
        """Constructor arguments that differ from their defaults (for ``repr``)."""
        return {} if self.n_quadrature == 32 else {"n_quadrature": self.n_quadrature}

    # --- targets ---------------------------------------------------------------------------
    def fit_target(self, y, classes=None):
        """Validate the training targets and learn what their encoding needs.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Targets as the user gives them.
        classes : array-like, default=None
            Class labels declared up front (classification families only; others ignore it).

        Returns
        -------
        y_encoded : ndarray of shape (n_samples,)
            Float64 targets in the encoding ``loglik`` expects.
        classes : ndarray or None
            What :meth:`encode_target` needs to encode more targets the same way (the class
            labels of a classification family), ``None`` for the others.
        """
        return self.encode_target(y), None

    def encode_target(self, y, classes=None):
        """Validate and encode targets with the ``classes`` returned by :meth:`fit_target`
        (a later block of a stream, or the targets of a fitted model).

        Returns
        -------
        y_encoded : ndarray of shape (n_samples,)
        """
        return check_real_targets(y)

    @property
    def unresolved(self):
        """Whether parameters set to ``"auto"`` wait to be estimated by :meth:`resolve`."""
        return False

    def resolve(self, X, y, sample_weight, *, prior_prec, fit_intercept):
        """The family with every parameter estimated from data (``"auto"``) set from the
        given rows (encoded targets); ``self`` when there is none."""
        return self

    # --- one pass over many rows ---------------------------------------------------------
    def loglik_constant(self, y):
        """The terms of :meth:`loglik` that do not depend on ``eta`` (e.g. ``-log y!``), per
        target: an array of y's shape (zeros here). A sum of log-likelihoods evaluated
        many times at the same targets (Newton's passes over the data) adds them once; see
        :meth:`loglik_and_derivatives`."""
        return np.zeros(np.shape(y))

    def loglik_and_derivatives(self, y, eta, second=False):
        """``(loglik - loglik_constant, d1)`` per point, or ``(..., d1, d2)`` with
        ``second=True``: one evaluation, which a subclass overrides to share the work of the
        terms (e.g. one exponential) and to skip the ``eta``-free ones."""
        y = as_column(y, eta)
        terms = (self.loglik(y, eta) - self.loglik_constant(y), self.d1(y, eta))
        return terms + (self.d2(y, eta),) if second else terms

    # --- expectations over a Gaussian linear predictor -------------------------------------
    def _nodes(self, m, v, n_points=None):
        z, weights = gauss_hermite(self.n_quadrature if n_points is None else n_points)
        m = np.asarray(m, dtype=float)
        sd = np.sqrt(np.maximum(np.asarray(v, dtype=float), 0.0))
        return m[..., None] + sd[..., None] * z, weights

    def _quadrature_loglik(self, y, m, v, n_points):
        eta, weights = self._nodes(m, v, n_points)
        y = np.asarray(y, dtype=float)[:, None]
        value = self.loglik(y, eta) @ weights
        grad_m = self.d1(y, eta) @ weights
        grad_v = 0.5 * (self.d2(y, eta) @ weights)
        return value, grad_m, grad_v

    def expected_loglik(self, y, m, v):
        """``E[log p(y | eta)]`` for ``eta ~ N(m, v)`` and its gradients.

        Gauss-Hermite quadrature with ``n_quadrature`` nodes, fewer where the variance is
        small: ``k`` nodes err by ``g^(2k) v^k k! / (2k)!`` for a smooth integrand ``g``, so
        4 nodes for ``v <= 1e-3`` and 8 for ``v <= 3e-2`` (:data:`_NARROW_NODES`) agree with
        the full rule to rounding (a 1e-16 relative change at most for the log-likelihoods'
        derivatives here), at a fraction of the cost when the posterior is concentrated.

        Parameters
        ----------
        y, m, v : ndarray of shape (n,)
            Targets, means and variances of the Gaussian linear predictors.

        Returns
        -------
        value, grad_m, grad_v : ndarray of shape (n,)
            The expectation and its partial derivatives. With quadrature, ``grad_m = E[d1]``
            and ``grad_v = E[d2] / 2`` (Bonnet's and Price's theorems).
        """
        y, m, v = (np.asarray(a, dtype=float) for a in (y, m, v))
        n_points = np.full(v.shape, self.n_quadrature)
        for bound, k in reversed(_NARROW_NODES):
            n_points[v <= bound] = min(k, self.n_quadrature)
        counts = np.unique(n_points)
        if len(counts) == 1:
            return self._quadrature_loglik(y, m, v, int(counts[0]))
        return piecewise([(n_points == k, partial(self._quadrature_loglik, n_points=int(k)))
                          for k in counts], y, m, v)

    def expected_mean(self, m, v):
        """Mean and variance of ``E[y | eta]`` over ``eta ~ N(m, v)``.

        Returns
        -------
        mean, var : ndarray of shape (n,)
            ``E[mu(eta)]`` and ``Var[mu(eta)]`` where ``mu`` is the inverse link.
        """
        eta, weights = self._nodes(m, v)
        mu = self.mean(eta)
        mean = mu @ weights
        var = np.maximum((mu**2) @ weights - mean**2, 0.0)
        return mean, var
