"""The :class:`Family` base class (the contract every likelihood fulfils), the quadrature
rules behind its expectations, and the target checks shared by several families."""

from abc import ABC, abstractmethod
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from numpy.polynomial.hermite_e import hermegauss
from numpy.polynomial.laguerre import laggauss
from numpy.polynomial.legendre import leggauss
from sklearn.utils import column_or_1d

from ._links import (LOG_RATE_MAX, LOG_VAR_MAX, Link, lognormal_log_moments,  # noqa: F401
                     lognormal_moments)
from .._typing import FloatArray, RandomStateLike

# Gaussians wider than this are integrated by splitting (see LogisticFamily): Hermite nodes
# spaced on the scale of the standard deviation miss curvature concentrated near 0.
_WIDE_VARIANCE = 1.0
_N_LAGUERRE = 64
# (variance bound, Gauss-Hermite nodes) of expected_loglik's rows of small variance
_NARROW_NODES = ((1e-3, 4), (3e-2, 8))


def gauss_hermite(n_points: int) -> tuple[FloatArray, FloatArray]:
    """Return the nodes and weights of Gauss-Hermite quadrature for N(0, 1).

    ``sum(weights * f(nodes))`` approximates ``E[f(z)]`` for ``z ~ N(0, 1)``; it is exact for
    polynomials of degree up to ``2 * n_points - 1``.

    Parameters
    ----------
    n_points : int
        Number of nodes.

    Returns
    -------
    nodes, weights : ndarray of shape (n_points,)
    """
    nodes, weights = hermegauss(n_points)
    return nodes, weights / np.sqrt(2.0 * np.pi)


def gauss_laguerre(n_points: int) -> tuple[FloatArray, FloatArray]:
    """Return the nodes and weights of Gauss-Laguerre quadrature.

    ``sum(weights * f(nodes))`` approximates ``int_0^inf exp(-x) f(x) dx``.

    Parameters
    ----------
    n_points : int
        Number of nodes.

    Returns
    -------
    nodes, weights : ndarray of shape (n_points,)
    """
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


# Gauss-Legendre panels of wide_gaussian_nodes: their ends in standard units of the Gaussian
# (nine sds hold all but 2e-19 of its mass) and at the predictors where a likelihood's
# curvature changes (0, the edges +-8 of a distribution function's transition, and +-64, past
# which a log-likelihood is close to its asymptotic form).
_PANEL_Z = np.array([-9.0, -4.5, 0.0, 4.5, 9.0])
_PANEL_ETA = np.array([-64.0, -8.0, 0.0, 8.0, 64.0])
_PANEL_NODES = 16


def wide_gaussian_nodes(mean, var, breaks=_PANEL_ETA):
    """Nodes and weights of a quadrature rule for ``E[f(s)]``, ``s ~ N(mean, var)``, that
    stays accurate for wide Gaussians.

    Gauss-Hermite nodes are spaced on the scale of the standard deviation and miss where a
    log-likelihood's curvature changes over a few units of ``s``; here each row's real line
    is cut into panels at fixed multiples of its sd and at fixed predictors (``0``, ``+-8``,
    ``+-64``), each integrated by 16-point Gauss-Legendre against the Gaussian density. For
    ``log Phi`` and its derivatives this errs by at most 1e-9 (relative to the scale of
    the values) for variances up to 1e4, 1e-7 up to 1e8.

    Parameters
    ----------
    mean, var : ndarray of shape (n,)
    breaks : ndarray, default=[-64, -8, 0, 8, 64]
        The predictors where panels end besides the multiples of the sd: where the
        integrand's curvature changes.

    Returns
    -------
    nodes, weights : ndarray of shape (n, K)
        ``(f(nodes) * weights).sum(axis=1)`` approximates each row's expectation.
    """
    mean = np.asarray(mean, dtype=float)
    sd = np.sqrt(np.asarray(var, dtype=float))[:, None]
    z_of_eta = np.clip((breaks - mean[:, None]) / sd, _PANEL_Z[0], _PANEL_Z[-1])
    breaks = np.sort(np.concatenate(
        [np.broadcast_to(_PANEL_Z, (len(mean), len(_PANEL_Z))), z_of_eta], axis=1), axis=1)
    half = 0.5 * (breaks[:, 1:] - breaks[:, :-1])[..., None]
    x, w = leggauss(_PANEL_NODES)
    z = 0.5 * (breaks[:, 1:] + breaks[:, :-1])[..., None] + half * x
    weights = half * w * normal_pdf(z, 0.0, 1.0)  # empty panels (equal breaks) weigh 0
    nodes = mean[:, None, None] + sd[..., None] * z
    return nodes.reshape(len(mean), -1), weights.reshape(len(mean), -1)


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


def by_width(v, narrow, wide, *arrays, threshold=_WIDE_VARIANCE):
    """Evaluate ``narrow(*arrays)`` where ``v <= threshold`` (1 by default) and
    ``wide(*arrays)`` elsewhere; each returns a tuple of arrays. Returns the merged tuple."""
    shape = np.broadcast(*(np.asarray(a) for a in arrays)).shape
    is_narrow = np.broadcast_to(np.asarray(v, dtype=float), shape) <= threshold
    return piecewise([(is_narrow, narrow), (~is_narrow, wide)], *arrays)


def as_column(y, eta):
    """Broadcast a target vector against predictors of shape (n,) or (n, S)."""
    y = np.asarray(y, dtype=float)
    return y[:, None] if np.ndim(eta) == 2 and y.ndim == 1 else y


def check_real_targets(y):
    """Targets as float64 of shape (n,); NaN and infinity are refused."""
    y = column_or_1d(y, warn=True)
    if y.dtype.kind in "USO":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"y must hold numbers for this model, got values such as "
                             f"{y[:1].tolist()[0]!r}; encode them as numbers first.") from None
    y = y.astype(np.float64, copy=False)
    if not np.all(np.isfinite(y)):
        raise ValueError("Input y contains NaN or infinity; targets must be finite numbers.")
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


USABLE_FAMILIES = (
    "Use model='logistic', 'probit', 'poisson', 'gaussian' or 'negative_binomial', an "
    "instance such as LogisticFamily(), ProbitFamily(), PoissonFamily(link='log'), "
    "GaussianFamily(noise_scale=1.0) or NegativeBinomialFamily(alpha='auto'), or write a "
    "subclass of skcoreset.families.Family that sets name and implements loglik, d1, d2, "
    "predictive_variance and sample (a binary model: BinaryFamily with any Link, e.g. "
    "binary_family('cloglog')).")


class _NamesUsableFamilies:
    """Refuses to instantiate an incomplete family with a message naming the usable ones
    (Python's own, "Can't instantiate abstract class ...", names what is missing but not
    what to use instead). A base after :class:`Family` in its MRO, so that the signature
    of ``Family`` is that of its ``__init__``."""

    def __new__(cls, *args, **kwargs):
        missing = sorted(getattr(cls, "__abstractmethods__", ()))
        if missing:
            raise TypeError(f"{cls.__name__} cannot be used as a model: it does not implement "
                            f"{', '.join(missing)}. {USABLE_FAMILIES}")
        return super().__new__(cls)


class Family(ABC, _NamesUsableFamilies):
    """A likelihood written in the linear predictor ``eta = x @ theta``: the contract every
    family fulfils for the estimators, the inference methods and the coreset constructors.

    **What a family must provide** (abstract here): :meth:`loglik`, :meth:`d1`, :meth:`d2`
    (the log-likelihood of each point and its first two derivatives in ``eta``),
    :meth:`predictive_variance` and :meth:`sample` (the noise of new targets), and a
    :class:`~skcoreset.families.Link` passed to ``__init__``, stored as :attr:`link`.

    **What it may override** (defaults here): :meth:`mean` (the inverse link),
    :meth:`initial_predictor` (Newton's starting intercept), :meth:`fit_target` and
    :meth:`encode_target` (real-valued targets), :meth:`loglik_constant`,
    :meth:`loglik_and_derivatives` and :meth:`loglik_in_place` (faster evaluations of the
    same log-likelihood), :meth:`expected_loglik` and :meth:`expected_mean` (Gauss-Hermite
    quadrature), and, for parameters estimated from data (``"auto"``), :attr:`unresolved`,
    :meth:`pilot_family` and :meth:`resolve`.

    **What it declares** (class attributes the estimators and constructors read instead of
    its name): :attr:`name`, :attr:`binary`, :attr:`float32_loglik`,
    :attr:`pass_glm_mapping`.

    ``y`` has shape ``(n,)`` and ``eta`` shape ``(n,)`` or ``(n, S)`` (one column per
    parameter draw); results have the shape of ``eta``. Every function stays finite for
    ``|eta|`` up to 1e4.

    Parameters
    ----------
    link : Link
        The link between the mean of y and the linear predictor.
    n_quadrature : int, default=32
        Number of Gauss-Hermite points used by :meth:`expected_loglik` and
        :meth:`expected_mean` when no closed form exists.

    Attributes
    ----------
    name : str
        The key of the registry :data:`skcoreset.families.FAMILIES` (``model=`` of the
        coreset constructors); ``None`` on abstract bases.
    binary : bool, default=False
        Targets are two class labels, encoded ``{-1, +1}`` (``classes_[1]`` is +1) and
        :meth:`mean` is the probability of the positive class: estimators set ``classes_``,
        constructors stratify their samples by class and keep both classes.
    float32_loglik : bool, default=False
        :meth:`loglik` evaluates float32 predictors in float32 without overflow, so the
        Hilbert coresets' projection, stored in float32, is computed in float32 too.
    pass_glm_mapping : {"logistic", "poisson", "probit"} or None, default=None
        The mapping function ``method="pass_glm"`` replaces by a polynomial (Huggins, Adams
        and Broderick, 2017): ``"logistic"`` (``y s - log(1 + e^s)`` with 0/1 labels),
        ``"poisson"`` (``y s - e^s``), ``"probit"`` (``log Phi(y s)`` with ±1 labels);
        ``None``: PASS-GLM does not support the family.
    link : Link
        The link passed to ``__init__``.
    """

    name: str | None = None
    binary = False
    float32_loglik = False
    pass_glm_mapping: str | None = None

    def __init__(self, link: Link | str, n_quadrature: int = 32) -> None:
        if not isinstance(link, Link):
            raise TypeError(f"link must be a skcoreset.families.Link, got {link!r}.")
        self.link = link
        self.n_quadrature = n_quadrature

    def __repr__(self):
        params = ", ".join(f"{key}={value!r}" for key, value in self._params().items())
        return f"{type(self).__name__}({params})"

    def _params(self):
        """Constructor arguments that differ from their defaults (for ``repr``)."""
        return {} if self.n_quadrature == 32 else {"n_quadrature": self.n_quadrature}

    # --- the likelihood (abstract) -------------------------------------------------------
    @abstractmethod
    def loglik(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """The log-likelihood ``log p(y | eta)`` of each point, normalising constants
        included (so sums of it are log marginal likelihood terms).

        Parameters
        ----------
        y : ndarray of shape (n,)
            Encoded targets (see :meth:`fit_target`).
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors, one column per parameter draw.

        Returns
        -------
        loglik : ndarray of the shape of ``eta``
        """

    @abstractmethod
    def d1(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """First derivative of :meth:`loglik` in ``eta``.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Encoded targets.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        d1 : ndarray of the shape of ``eta``
        """

    @abstractmethod
    def d2(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """Second derivative of :meth:`loglik` in ``eta`` (non-positive for the
        log-concave likelihoods here).

        Parameters
        ----------
        y : ndarray of shape (n,)
            Encoded targets.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        d2 : ndarray of the shape of ``eta``
        """

    @abstractmethod
    def predictive_variance(self, mean: FloatArray, var: FloatArray) -> FloatArray:
        """Variance of a new target given the posterior moments of its mean.

        Parameters
        ----------
        mean, var : ndarray of shape (n,)
            Posterior mean and variance of ``E[y | x]`` (:meth:`expected_mean`).

        Returns
        -------
        variance : ndarray of shape (n,)
            ``Var[y_new | x, data]``: the noise of y plus the posterior uncertainty of its
            mean.
        """

    @abstractmethod
    def sample(self, eta: FloatArray, random_state: RandomStateLike = None) -> FloatArray:
        """Draw targets, in the encoding of :meth:`fit_target`, given linear predictors.

        Parameters
        ----------
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws.

        Returns
        -------
        y : ndarray of the shape of ``eta``
        """

    # --- the mean ------------------------------------------------------------------------
    def mean(self, eta: FloatArray) -> FloatArray:
        """The conditional mean ``E[y | eta]``, the inverse link (for a binary family the
        probability of the positive class).

        Parameters
        ----------
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        mean : ndarray of the shape of ``eta``
        """
        return self.link.inverse(eta)

    def initial_predictor(self, mean_target: float) -> float:
        """The constant linear predictor that fits the weighted mean of the encoded targets:
        where Newton's method starts the intercept.

        Parameters
        ----------
        mean_target : float
            Weighted mean of the encoded targets.

        Returns
        -------
        eta : float
            The link of that mean, kept finite.
        """
        return self.link(mean_target)

    # --- targets ---------------------------------------------------------------------------
    def fit_target(self, y: ArrayLike,
                   classes: ArrayLike | None = None) -> tuple[FloatArray, Any]:
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

    def encode_target(self, y: ArrayLike, classes: ArrayLike | None = None) -> FloatArray:
        """Validate and encode targets with the ``classes`` returned by :meth:`fit_target`
        (a later block of a stream, or the targets of a fitted model).

        Real-valued targets here: finite float64 of shape (n,).

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Targets as the user gives them.
        classes : ndarray, default=None
            What :meth:`fit_target` returned (ignored by the families without classes).

        Returns
        -------
        y_encoded : ndarray of shape (n_samples,)
        """
        return check_real_targets(y)

    # --- parameters estimated from data ----------------------------------------------------
    @property
    def unresolved(self) -> bool:
        """Whether parameters set to ``"auto"`` wait to be estimated from data.

        They are estimated by :meth:`resolve`; the likelihood cannot be evaluated until
        then.
        """
        return False

    def pilot_family(self) -> "Family":
        """The family whose fit gives the means :meth:`resolve` needs (an unresolved
        family only; e.g. the Poisson model for the negative binomial overdispersion).

        Returns
        -------
        family : Family
        """
        raise TypeError(f"{self!r} has no parameters to estimate from data.")

    def resolve(self, y: FloatArray, mean: FloatArray, sample_weight: FloatArray) -> "Family":
        """The family with every parameter set to ``"auto"`` estimated from targets and
        the fitted means of a pilot fit of :meth:`pilot_family`.

        The fit itself is the inference code's (``skcoreset._inference.resolve_family``):
        a family never fits anything.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Encoded targets of the pilot rows.
        mean : ndarray of shape (n,)
            Their means under the pilot fit.
        sample_weight : ndarray of shape (n,)
            Their weights.

        Returns
        -------
        family : Family
            ``self`` when nothing is unresolved (this default).
        """
        return self

    # --- one pass over many rows ---------------------------------------------------------
    def loglik_constant(self, y: FloatArray) -> FloatArray:
        """The terms of :meth:`loglik` that do not depend on ``eta`` (e.g. ``-log y!``).

        A sum of log-likelihoods evaluated many times at the same targets (Newton's passes
        over the data) adds them once; see :meth:`loglik_and_derivatives`.

        Parameters
        ----------
        y : ndarray
            Encoded targets.

        Returns
        -------
        constant : ndarray of the shape of ``y``
            Zeros here.
        """
        return np.zeros(np.shape(y))

    def loglik_and_derivatives(self, y: FloatArray, eta: FloatArray,
                               second: bool = False) -> tuple[FloatArray, ...]:
        """:meth:`loglik` without :meth:`loglik_constant`, and its derivatives, from one
        evaluation, which a subclass overrides to share the work of the terms (e.g. one
        exponential).

        Parameters
        ----------
        y : ndarray of shape (n,)
            Encoded targets.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.
        second : bool, default=False
            Also return the second derivative.

        Returns
        -------
        terms : tuple of ndarray of the shape of ``eta``
            ``(loglik - loglik_constant, d1)``, or ``(..., d1, d2)`` with ``second=True``.
        """
        y = as_column(y, eta)
        terms = (self.loglik(y, eta) - self.loglik_constant(y), self.d1(y, eta))
        return terms + (self.d2(y, eta),) if second else terms

    def loglik_in_place(self, y: FloatArray, eta: FloatArray,
                        scratch: FloatArray) -> None:
        """Overwrite ``eta`` with :meth:`loglik` up to a per-row constant: the potentials of
        the Monte Carlo coreset constructions (only their differences across draws enter),
        an ``(n, S)`` block at a time.

        Families with a faster kernel of vectorised ufuncs working in the scratch buffers
        override this default, which calls :meth:`loglik`.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Encoded targets.
        eta : ndarray of shape (n, S)
            Linear predictors; overwritten.
        scratch : ndarray of shape (2, n, S)
            Two buffers the kernel may use.
        """
        eta[...] = self.loglik(y, eta)

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

    def expected_loglik(self, y: FloatArray, m: FloatArray,
                        v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
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

    def expected_mean(self, m: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Mean and variance of ``E[y | eta]`` over ``eta ~ N(m, v)``, by Gauss-Hermite
        quadrature with ``n_quadrature`` nodes (families override it with closed forms).

        Parameters
        ----------
        m, v : ndarray of shape (n,)
            Means and variances of the Gaussian linear predictors.

        Returns
        -------
        mean, var : ndarray of shape (n,)
            ``E[mu(eta)]`` and ``Var[mu(eta)]`` where ``mu`` is :meth:`mean`.
        """
        eta, weights = self._nodes(m, v)
        mu = self.mean(eta)
        mean = mu @ weights
        var = np.maximum((mu**2) @ weights - mean**2, 0.0)
        return mean, var

    def log_expected_mean(self, m: FloatArray,
                          v: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        """The logarithms of :meth:`expected_mean` where a closed form keeps them finite beyond
        float64 (means growing like ``exp(eta)``); ``None`` (this default) otherwise, where
        :meth:`expected_mean` is representable.

        Parameters
        ----------
        m, v : ndarray of shape (n,)
            Means and variances of the Gaussian linear predictors.

        Returns
        -------
        log_moments : tuple of ndarray of shape (n,) or None
            ``(log E[mu], log Var[mu])``.
        """
        return None
