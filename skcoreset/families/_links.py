"""Link functions: the map ``eta = g(mu)`` from a mean to the linear predictor, its inverse
and their derivatives, as small stateless objects the families hold.

Modelled on the link objects of scikit-learn's ``_loss/link.py`` and of statsmodels: a link
is called on means (``link(mu)``), :meth:`Link.inverse` maps predictors to means. The
families read what they need of it: the inverse and its derivatives (Poisson rates), the log
of the inverse and its derivatives (``log mu`` in the Poisson likelihood, ``log F(y eta)`` for
a binary likelihood with a cumulative distribution function ``F`` as inverse link), and the
Gaussian moments of the inverse where they have a closed form (predictions integrated over a
Gaussian posterior of ``eta``). Every function stays finite for ``|eta|`` up to 1e4.
"""

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

import numpy as np
from scipy.special import erfcx, expit, log_expit, log_ndtr, logit, ndtr, ndtri, owens_t

from .._typing import FloatArray

# exp() overflows past ~709; log links evaluate exp(min(eta, LOG_RATE_MAX)) so that
# log-likelihoods and derivatives of absurd predictors stay finite (and hugely negative).
LOG_RATE_MAX = 500.0
LOG_VAR_MAX = 700.0  # same idea for the log of a variance
# Below this, softplus(eta) = exp(eta) to double precision; log(softplus) is computed as eta.
SOFTPLUS_LOG_CUTOFF = -35.0
# Below this, eta + phi(eta) / Phi(eta) (which tends to 0 like -1 / eta) is summed from its
# asymptotic series: the direct difference loses eps * eta^2 of its relative accuracy.
_PROBIT_SERIES_BELOW = -40.0
# (eta + phi / Phi) * u = 1 - 2 x + 10 x^2 - ... with u = -eta, x = 1 / u^2: the reciprocal of
# the Mills ratio's series sum_k (-1)^k (2k - 1)!! x^k, truncated where the next term is
# below 1e-14 for u >= 40.
_PROBIT_SERIES = (1.0, -2.0, 10.0, -74.0, 706.0, -8162.0)


def lognormal_log_moments(m, v):
    """Logarithms of the mean and variance of ``exp(eta)`` for ``eta ~ N(m, v)``:
    ``m + v / 2`` and ``2 m + v + log(e^v - 1)``, finite where the moments overflow."""
    m = np.asarray(m, dtype=float)
    v = np.asarray(v, dtype=float)
    with np.errstate(divide="ignore"):  # v = 0 gives log(0) = -inf, i.e. variance 0
        return m + 0.5 * v, 2.0 * m + 2.0 * v + np.log(-np.expm1(-v))


def lognormal_moments(m, v):
    """Mean and variance of ``exp(eta)`` for ``eta ~ N(m, v)``, finite for any m, v >= 0
    (capped at ``exp(500)`` and ``exp(700)``; :func:`lognormal_log_moments` uncapped)."""
    log_mean, log_var = lognormal_log_moments(m, v)
    return np.exp(np.minimum(log_mean, LOG_RATE_MAX)), np.exp(np.minimum(log_var, LOG_VAR_MAX))


class Link(ABC):
    """A link function ``eta = g(mu)`` with its inverse and derivatives.

    Subclasses set :attr:`name` and implement :meth:`__call__` (the link), :meth:`inverse`
    and :meth:`inverse_derivatives`; the log of the inverse, its derivatives and the Gaussian
    moments have defaults derived from those, which a subclass overrides with stable or
    closed forms. Links hold no state: two links of the same class are equal.

    Attributes
    ----------
    name : str
        The name families and estimators accept for it (``link="log"``).
    cdf : bool
        Whether the inverse is a continuous distribution function onto ``(0, 1)``: such a
        link gives a binary likelihood ``P(y = +1 | eta) = inverse(eta)``, with
        ``log p(y | eta)`` equal to :meth:`log_inverse` for ``y = +1`` and to
        :meth:`log_complement` for ``y = -1``
        (:class:`~skcoreset.families.BinaryFamily`).
    symmetric : bool
        Whether that distribution is symmetric about 0, ``inverse(-eta) = 1 - inverse(eta)``,
        so that ``log p(y | eta) = log_inverse(y eta)`` for ``y in {-1, +1}`` (the binary
        family's faster form).
    """

    name: str | None = None
    cdf = False
    symmetric = False

    def __repr__(self):
        return f"{type(self).__name__}()"

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    @abstractmethod
    def __call__(self, mean):
        """The linear predictor of a mean, ``eta = g(mean)``.

        Parameters
        ----------
        mean : array-like
            Means in the range of the inverse link.

        Returns
        -------
        eta : ndarray
            Same shape as ``mean``.
        """

    @abstractmethod
    def inverse(self, eta: FloatArray) -> FloatArray:
        """The mean of a linear predictor, ``mu = g^-1(eta)``.

        Parameters
        ----------
        eta : array-like
            Linear predictors.

        Returns
        -------
        mean : ndarray
            Same shape as ``eta``.
        """

    @abstractmethod
    def inverse_derivatives(self, eta: FloatArray,
                            mean: FloatArray | None = None) -> tuple[Any, ...]:
        """First and second derivatives of the inverse link in ``eta``.

        Parameters
        ----------
        eta : array-like
            Linear predictors.
        mean : ndarray, default=None
            ``inverse(eta)`` when the caller has it already (saves its evaluation).

        Returns
        -------
        d1, d2 : ndarray or float
            ``d mu / d eta`` and ``d^2 mu / d eta^2``; constants may be returned as floats,
            which broadcast against ``eta``.
        """

    def log_inverse(self, eta: FloatArray) -> FloatArray:
        """``log g^-1(eta)``, for links onto positive means.

        This default takes the log of :meth:`inverse`; links whose inverse underflows
        override it with a stable form.

        Parameters
        ----------
        eta : array-like
            Linear predictors.

        Returns
        -------
        log_mean : ndarray
            Same shape as ``eta``.
        """
        return np.log(self.inverse(eta))

    def log_inverse_derivatives(self, eta: FloatArray) -> tuple[Any, ...]:
        """First and second derivatives of :meth:`log_inverse` in ``eta``.

        This default forms ``mu' / mu`` and ``mu'' / mu - (mu' / mu)^2`` from
        :meth:`inverse_derivatives`; links override it with stable forms.

        Parameters
        ----------
        eta : array-like
            Linear predictors.

        Returns
        -------
        d1, d2 : ndarray or float
            Constants may be returned as floats, which broadcast against ``eta``.
        """
        mean = self.inverse(eta)
        d1, d2 = self.inverse_derivatives(eta, mean)
        ratio = d1 / mean
        return ratio, d2 / mean - ratio**2

    def log_complement(self, eta: FloatArray) -> FloatArray:
        """``log(1 - g^-1(eta))``, for links onto ``(0, 1)`` (:attr:`cdf`): the
        log-probability of the negative class.

        This default is ``log_inverse(-eta)`` for a :attr:`symmetric` link and
        ``log1p(-inverse(eta))`` otherwise; links whose complement underflows override it
        with a stable form.

        Parameters
        ----------
        eta : array-like
            Linear predictors.

        Returns
        -------
        log_complement : ndarray
            Same shape as ``eta``.
        """
        if self.symmetric:
            return self.log_inverse(np.negative(eta))
        return np.log1p(-self.inverse(eta))

    def log_complement_derivatives(self, eta: FloatArray) -> tuple[Any, ...]:
        """First and second derivatives of :meth:`log_complement` in ``eta``.

        This default reflects :meth:`log_inverse_derivatives` for a :attr:`symmetric` link,
        and otherwise forms ``-mu' / (1 - mu)`` and ``-mu'' / (1 - mu) - (mu' / (1 - mu))^2``
        from :meth:`inverse_derivatives`; links override it with stable forms.

        Parameters
        ----------
        eta : array-like
            Linear predictors.

        Returns
        -------
        d1, d2 : ndarray
        """
        if self.symmetric:
            d1, d2 = self.log_inverse_derivatives(np.negative(eta))
            return np.negative(d1), d2
        mean = self.inverse(eta)
        d1, d2 = self.inverse_derivatives(eta, mean)
        ratio = d1 / (1.0 - mean)
        return -ratio, -d2 / (1.0 - mean) - ratio**2

    def gaussian_moments(self, m: FloatArray,
                         v: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        """Mean and variance of ``g^-1(eta)`` over ``eta ~ N(m, v)`` in closed form.

        Parameters
        ----------
        m, v : ndarray of shape (n,)
            Means and variances of the Gaussian linear predictors.

        Returns
        -------
        moments : tuple of ndarray of shape (n,) or None
            ``(E[mu], Var[mu])``; ``None`` (this default) where no closed form is known,
            and the family integrates numerically.
        """
        return None


class IdentityLink(Link):
    """``eta = mu``: the Gaussian model's link."""

    name = "identity"

    def __call__(self, mean):
        """``eta = mean``."""
        return np.asarray(mean, dtype=float)

    def inverse(self, eta: FloatArray) -> FloatArray:
        """``mu = eta``."""
        return np.asarray(eta, dtype=float)

    def inverse_derivatives(self, eta: FloatArray,
                            mean: FloatArray | None = None) -> tuple[Any, ...]:
        """``(1, 0)``."""
        return 1.0, 0.0

    def gaussian_moments(self, m: FloatArray,
                         v: FloatArray) -> tuple[FloatArray, FloatArray]:
        """``(m, v)``: the mean is the predictor itself."""
        return np.asarray(m, dtype=float), np.asarray(v, dtype=float)


class LogLink(Link):
    """``eta = log(mu)``: positive means ``exp(eta)``, capped at ``exp(500)``."""

    name = "log"

    def __call__(self, mean):
        """``eta = log(mean)``."""
        return np.log(mean)

    def inverse(self, eta: FloatArray) -> FloatArray:
        """``mu = exp(min(eta, 500))``: finite at any predictor."""
        return np.exp(np.minimum(eta, LOG_RATE_MAX))

    def inverse_derivatives(self, eta: FloatArray,
                            mean: FloatArray | None = None) -> tuple[Any, ...]:
        """``(mu, mu)``: both derivatives of ``exp`` are the mean."""
        mean = self.inverse(eta) if mean is None else mean
        return mean, mean

    def log_inverse(self, eta: FloatArray) -> FloatArray:
        """``log mu = eta`` (uncapped)."""
        return np.asarray(eta, dtype=float)

    def log_inverse_derivatives(self, eta: FloatArray) -> tuple[Any, ...]:
        """``(1, 0)``."""
        return 1.0, 0.0

    def gaussian_moments(self, m: FloatArray,
                         v: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The log-normal moments ``exp(m + v / 2)`` and ``exp(2 m + v) (e^v - 1)``."""
        return lognormal_moments(m, v)


class SoftplusLink(Link):
    """``mu = log(1 + exp(eta))``: positive means growing linearly.

    The link of the coreset papers' Poisson model.
    """

    name = "softplus"

    def __call__(self, mean):
        """``eta = log(exp(mean) - 1)``, stable."""
        mean = np.asarray(mean, dtype=float)
        return mean + np.log(-np.expm1(-mean))

    def inverse(self, eta: FloatArray) -> FloatArray:
        """``mu = log(1 + exp(eta))``, stable."""
        return np.logaddexp(0.0, eta)

    def inverse_derivatives(self, eta: FloatArray,
                            mean: FloatArray | None = None) -> tuple[Any, ...]:
        """``(sigmoid(eta), sigmoid(eta) sigmoid(-eta))``."""
        sig = expit(eta)
        return sig, sig * expit(np.negative(eta))

    def log_inverse(self, eta: FloatArray) -> FloatArray:
        """``log softplus(eta)``, equal to ``eta`` to double precision below -35 (where the
        softplus itself would underflow)."""
        eta = np.asarray(eta, dtype=float)
        small = eta < SOFTPLUS_LOG_CUTOFF
        return np.where(small, eta, np.log(self.inverse(np.where(small, 0.0, eta))))

    def log_inverse_derivatives(self, eta: FloatArray) -> tuple[Any, ...]:
        """``r = sigmoid / softplus`` and ``r (1 - sigmoid) - r^2``; for ``eta <= 0`` the
        second as ``r^2 (log(1 + u) / u - 1)`` with ``u = exp(eta)``, which keeps its sign
        where the first form cancels to rounding (``eta`` below about -30)."""
        eta = np.asarray(eta, dtype=float)
        ratio = np.exp(log_expit(eta) - self.log_inverse(eta))
        second = ratio * (1.0 - expit(eta)) - ratio**2
        negative = eta <= 0.0
        u = np.exp(np.where(negative, eta, 0.0))
        # log(1 + u) / u - 1 = sum_k (-u)^k / (k + 1), k >= 1: its series below u = 0.1
        # (16 terms: relative error 1e-16), directly above (relative error <= 2e-15)
        series = np.zeros_like(u)
        for k in range(16, 0, -1):
            series = (-u) * (1.0 / (k + 1) + series)
        with np.errstate(divide="ignore", invalid="ignore"):
            direct = np.log1p(u) / u - 1.0
        stable = ratio**2 * np.where(u < 0.1, series, direct)
        return ratio, np.where(negative, stable, second)


class LogitLink(Link):
    """``eta = log(p / (1 - p))``: the logistic distribution function as inverse.

    The canonical link of binary data; its inverse is the sigmoid.
    """

    name = "logit"
    cdf = True
    symmetric = True

    def __call__(self, mean):
        """``eta = log(p / (1 - p))``."""
        return logit(mean)

    def inverse(self, eta: FloatArray) -> FloatArray:
        """``p = sigmoid(eta)``."""
        return expit(eta)

    def inverse_derivatives(self, eta: FloatArray,
                            mean: FloatArray | None = None) -> tuple[Any, ...]:
        """``p q`` and ``p q (q - p)`` with ``p = sigmoid(eta)``, ``q = sigmoid(-eta)``
        (``q`` evaluated, not ``1 - p``, which cancels to 0 for large ``eta``)."""
        p, q = expit(eta), expit(np.negative(eta))
        return p * q, p * q * (q - p)

    def log_inverse(self, eta: FloatArray) -> FloatArray:
        """``log sigmoid(eta)``, stable."""
        return log_expit(eta)

    def log_inverse_derivatives(self, eta: FloatArray) -> tuple[Any, ...]:
        """``sigmoid(-eta)`` and ``-sigmoid(eta) sigmoid(-eta)``."""
        q = expit(np.negative(eta))
        return q, -expit(eta) * q


class ProbitLink(Link):
    """``eta = Phi^-1(p)``: the standard normal distribution function ``Phi`` as inverse.

    Stable in both tails: ``log Phi`` by :func:`scipy.special.log_ndtr`, the inverse Mills
    ratio ``phi / Phi`` by the scaled complementary error function
    (``sqrt(2 / pi) / erfcx(-eta / sqrt(2))``), and the second derivative of ``log Phi``,
    ``-r (eta + r)``, from the asymptotic series of ``eta + r`` below -40, where the direct
    difference cancels. The Gaussian moments of ``Phi`` have closed forms: ``E[Phi(eta)] =
    Phi(m / sqrt(1 + v))`` and ``E[Phi(eta)^2] = Phi(h) - 2 T(h, 1 / sqrt(1 + 2 v))`` with
    ``h = m / sqrt(1 + v)`` and Owen's ``T`` function (Owen, 1956).
    """

    name = "probit"
    cdf = True
    symmetric = True

    def __call__(self, mean):
        """``eta = Phi^-1(p)``."""
        return ndtri(mean)

    def inverse(self, eta: FloatArray) -> FloatArray:
        """``p = Phi(eta)``."""
        return ndtr(eta)

    def inverse_derivatives(self, eta: FloatArray,
                            mean: FloatArray | None = None) -> tuple[Any, ...]:
        """``phi(eta)`` and ``-eta phi(eta)``."""
        eta = np.asarray(eta, dtype=float)
        pdf = np.exp(-0.5 * eta**2) / np.sqrt(2.0 * np.pi)
        return pdf, -eta * pdf

    def log_inverse(self, eta: FloatArray) -> FloatArray:
        """``log Phi(eta)``, stable in both tails."""
        return log_ndtr(eta)

    def log_inverse_derivatives(self, eta: FloatArray) -> tuple[Any, ...]:
        """The inverse Mills ratio ``r = phi / Phi`` and ``-r (eta + r)``."""
        eta = np.asarray(eta, dtype=float)
        r = np.sqrt(2.0 / np.pi) / erfcx(-eta / np.sqrt(2.0))
        gap = eta + r  # tends to 0 like -1 / eta as eta -> -inf
        far = eta < _PROBIT_SERIES_BELOW
        if np.any(far):
            u = -np.minimum(eta, _PROBIT_SERIES_BELOW)
            series = np.polynomial.polynomial.polyval(1.0 / u**2, _PROBIT_SERIES) / u
            gap = np.where(far, series, gap)
        return r, -r * gap

    def gaussian_moments(self, m: FloatArray,
                         v: FloatArray) -> tuple[FloatArray, FloatArray]:
        """``Phi(h)`` and ``Phi(h) Phi(-h) - 2 T(h, 1 / sqrt(1 + 2 v))``,
        ``h = m / sqrt(1 + v)``."""
        m, v = np.asarray(m, dtype=float), np.asarray(v, dtype=float)
        h = m / np.sqrt(1.0 + v)
        # E[Phi^2] - E[Phi]^2 with Phi(h) (1 - Phi(h)) as Phi(h) Phi(-h): no 1 - 1 cancellation
        var = ndtr(h) * ndtr(-h) - 2.0 * owens_t(h, 1.0 / np.sqrt(1.0 + 2.0 * v))
        return ndtr(h), np.maximum(var, 0.0)


class CLogLogLink(Link):
    """``eta = log(-log(1 - p))``: the complementary log-log link, whose inverse
    ``p = 1 - exp(-exp(eta))`` is the distribution function of the minimum extreme value
    (Gumbel) distribution.

    Not symmetric: ``p`` approaches 0 like ``exp(eta)`` and 1 doubly exponentially, and
    ``p = 1 - 1/e`` at ``eta = 0``. It is the binary model of an event of a Poisson process,
    ``P(count > 0)`` for the rate ``exp(eta)``, and the right link for probabilities far from
    1/2 on one side (statsmodels' ``CLogLog``). With ``u = exp(eta)``: ``log(1 - p) = -u``,
    and ``log p = log(1 - exp(-u))`` is formed as ``eta + log((1 - e^-u) / u)`` for small
    ``u`` (where ``p`` underflows) and as ``log1p(-e^-u)`` for large ``u`` (where ``1 - p``
    rounds away). ``u`` is capped at ``exp(500)``, as for the log link.
    """

    name = "cloglog"
    cdf = True

    def __call__(self, mean):
        """``eta = log(-log(1 - mean))``."""
        return np.log(-np.log1p(-np.asarray(mean, dtype=float)))

    @staticmethod
    def _rate(eta):
        eta = np.asarray(eta, dtype=float)
        return eta, np.exp(np.minimum(eta, LOG_RATE_MAX))

    def inverse(self, eta: FloatArray) -> FloatArray:
        """``p = 1 - exp(-exp(eta))``."""
        return -np.expm1(-self._rate(eta)[1])

    def inverse_derivatives(self, eta: FloatArray,
                            mean: FloatArray | None = None) -> tuple[Any, ...]:
        """``u e^-u`` and ``u e^-u (1 - u)`` with ``u = exp(eta)``."""
        u = self._rate(eta)[1]
        density = u * np.exp(-u)
        return density, density * (1.0 - u)

    def log_inverse(self, eta: FloatArray) -> FloatArray:
        """``log(1 - exp(-u))``, ``u = exp(eta)``, stable for every ``eta``."""
        eta, u = self._rate(eta)
        small = u <= np.log(2.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            # (1 - e^-u) / u -> 1 as u -> 0 (also where exp(eta) underflows to 0)
            ratio = np.where(u > 0.0, -np.expm1(-u) / np.where(small, u, 1.0), 1.0)
            return np.where(small, eta + np.log(ratio), np.log1p(-np.exp(-u)))

    def log_inverse_derivatives(self, eta: FloatArray) -> tuple[Any, ...]:
        """``r = u / (e^u - 1)`` and ``r (1 - u / (1 - e^-u))``; the bracket from its
        series ``-(u/2 + u^2/12 - u^4/720 + ...)`` below ``u = 0.1``, where the direct form
        cancels (its sign kept: the likelihood stays log-concave)."""
        u = self._rate(eta)[1]
        with np.errstate(divide="ignore", invalid="ignore"):
            complement = -np.expm1(-u)  # 1 - e^-u, relative accuracy kept for small u
            ratio = np.where(u > 0.0, u * np.exp(-u) / complement, 1.0)
            direct = 1.0 - u / complement
        small = np.minimum(u, 0.1)
        # u / (1 - e^-u) = sum_n B_n^+ u^n / n!: Bernoulli numbers, to the u^10 term
        # (the next, 691 / 2730 u^12 / 12!, is below 1e-20 of the sum at u = 0.1)
        series = -small * (0.5 + small * (1.0 / 12.0 + small**2 * (
            -1.0 / 720.0 + small**2 * (1.0 / 30240.0 + small**2 * (
                -1.0 / 1209600.0 + small**2 / 47900160.0)))))
        return ratio, ratio * np.where(u < 0.1, series, direct)

    def log_complement(self, eta: FloatArray) -> FloatArray:
        """``log(1 - p) = -exp(eta)``."""
        return -self._rate(eta)[1]

    def log_complement_derivatives(self, eta: FloatArray) -> tuple[Any, ...]:
        """``(-exp(eta), -exp(eta))``."""
        u = self._rate(eta)[1]
        return -u, -u


LINKS = {link.name: link for link in (IdentityLink, LogLink, SoftplusLink, LogitLink,
                                      ProbitLink, CLogLogLink)}


def make_link(link: Link | str, allowed: Iterable[str] | None = None) -> Link:
    """The link of a name, or ``link`` itself when it is a :class:`Link`.

    Parameters
    ----------
    link : str or Link
        A key of :data:`LINKS` or a link instance.
    allowed : collection of str, default=None
        The names the caller accepts (all by default); the message names them.

    Returns
    -------
    link : Link
    """
    names = sorted(LINKS) if allowed is None else list(allowed)
    if isinstance(link, Link) and link.name in names:
        return link
    if isinstance(link, str) and link in names:
        return LINKS[link]()
    expected = " or ".join(repr(name) for name in names)
    raise ValueError(f"link must be {expected} (or that Link instance), got {link!r}.")
