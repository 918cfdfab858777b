"""Negative binomial likelihood (NB2) for overdispersed counts, with log link."""

from typing import cast

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import digamma, gammaln, polygamma
from sklearn.utils import check_random_state

from .._numbers import check_positive_number
from ._base import Family, as_column, check_non_negative_targets
from ._links import LOG_VAR_MAX, LogLink, lognormal_log_moments
from .poisson import PoissonFamily
from .._typing import FloatArray, Moments, RandomStateLike

# alpha -> 0 is the Poisson limit; underdispersed data get this (the Poisson model, in effect).
_MIN_ALPHA = 1e-8


def _sigmoids(u):
    """``(log sigmoid(u), log sigmoid(-u), sigmoid(u), sigmoid(-u))`` from one exponential
    and one ``log1p``: with ``e = exp(-|u|)``, ``log sigmoid(u) = min(u, 0) - log1p(e)``,
    ``log sigmoid(-u) = -max(u, 0) - log1p(e)`` and the sigmoids ``1 / (1 + e)`` and
    ``e / (1 + e)`` on either side of 0. About 8x faster than
    scipy's ``log_expit`` and two ``expit`` (which NUTS evaluates at every leapfrog step on
    every row), and as accurate in both tails."""
    e = np.exp(-np.abs(u))
    inverse = 1.0 / (1.0 + e)
    small = e * inverse
    positive = u > 0
    softplus = np.log1p(e)
    return (np.minimum(u, 0.0) - softplus, -np.maximum(u, 0.0) - softplus,
            np.where(positive, inverse, small), np.where(positive, small, inverse))


def _loglik_kernel(y, u, r):
    """``y log sigmoid(u) + r log sigmoid(-u)`` (``u = eta - log r``): the log-likelihood
    without its ``eta``-free Gamma-function terms."""
    log_p, log_q, _, _ = _sigmoids(u)
    return y * log_p + r * log_q


def _loglik_constant(y, r):
    """``log Gamma(y + r) - log Gamma(r) - log y!``."""
    return gammaln(y + r) - gammaln(r) - gammaln(y + 1.0)


class NegativeBinomialFamily(Family):
    """Negative binomial likelihood (NB2) for overdispersed counts, log link.

    With mean ``mu = exp(eta)`` and overdispersion ``alpha > 0`` (``r = 1 / alpha``),
    ``Var[y | eta] = mu + alpha mu^2`` and

    ``log p(y | eta) = log Gamma(y + r) - log Gamma(r) - log y! + r log(r / (r + mu))
    + y log(mu / (r + mu))``,

    a Poisson rate with a Gamma(r, r / mu) mixing distribution (Cameron and Trivedi, 2013,
    chapter 3). As ``alpha -> 0`` it tends to the Poisson likelihood. Targets are
    non-negative: counts, or non-negative reals such as rates ``counts / exposure`` fitted
    with ``sample_weight=exposure`` (with ``log y! = log Gamma(y + 1)`` and
    ``log Gamma(y + r)`` for real y, a quasi-likelihood with the negative binomial
    dependence on ``eta``, as scikit-learn's count regressors take rates).

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        Overdispersion. ``"auto"``: estimated from the data by the estimators and coreset
        constructors when they fit (the method-of-moments estimate of :meth:`resolve` from
        the means of a pilot Poisson fit, :meth:`pilot_family`); the likelihood can be
        evaluated only once it is a number.
    n_quadrature : int, default=32
        Gauss-Hermite points of :meth:`expected_loglik`.

    References
    ----------
    A. C. Cameron and P. K. Trivedi. *Regression Analysis of Count Data*, 2nd edition.
    Cambridge University Press, 2013.
    """

    name = "negative_binomial"

    def __init__(self, alpha: float | str = "auto", n_quadrature: int = 32) -> None:
        super().__init__(LogLink(), n_quadrature=n_quadrature)
        if isinstance(alpha, str) and alpha != "auto":
            raise ValueError(f"alpha must be a positive number or 'auto', got {alpha!r}.")
        if alpha != "auto":
            alpha = check_positive_number("alpha", alpha, " or 'auto'")
        self.alpha = alpha

    def _params(self):
        return {"alpha": self.alpha, **super()._params()}

    @property
    def _r(self):
        """The Gamma shape ``1 / alpha``."""
        if self.unresolved:
            raise ValueError(
                "NegativeBinomialFamily(alpha='auto') has no alpha yet: it is estimated from "
                "data when an estimator or coreset constructor fits (resolve). Pass a number "
                "as alpha to evaluate the likelihood directly.")
        return 1.0 / self.alpha

    def encode_target(self, y: ArrayLike, classes: ArrayLike | None = None) -> FloatArray:
        """Non-negative targets (counts or rates) as float64; NaN, infinite and negative
        values raise ``ValueError``.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Counts, or rates.
        classes : None
            Ignored.

        Returns
        -------
        y_encoded : ndarray of shape (n_samples,)
        """
        return check_non_negative_targets(y, "Negative binomial")

    @property
    def unresolved(self) -> bool:
        """Whether ``alpha`` is ``"auto"``, still to be estimated (:meth:`resolve`)."""
        return isinstance(self.alpha, str)

    def pilot_family(self) -> Family:
        """The Poisson model with log link: its fit has the means of the negative binomial
        model (the same mean function), from which :meth:`resolve` estimates ``alpha``.

        Returns
        -------
        family : PoissonFamily
        """
        return PoissonFamily(link="log")

    def resolve(self, y: FloatArray, mean: FloatArray, sample_weight: FloatArray) -> Family:
        """This family with ``alpha="auto"`` set to its method-of-moments estimate.

        Under NB2, ``E[(y - mu)^2] = mu + alpha mu^2``, so with the means ``mu_n`` of a
        pilot fit (:meth:`pilot_family`) ``alpha = sum_n w_n ((y_n - mu_n)^2 - mu_n) /
        sum_n w_n mu_n^2`` (Cameron and Trivedi, 2013, chapter 3), at least ``1e-8`` (data
        that are not overdispersed get the Poisson limit).

        Parameters
        ----------
        y : ndarray of shape (n,)
            Counts of the pilot rows.
        mean : ndarray of shape (n,)
            Their means under the pilot fit.
        sample_weight : ndarray of shape (n,)
            Their weights.

        Returns
        -------
        family : NegativeBinomialFamily
            ``self`` when ``alpha`` is a number already.
        """
        if not self.unresolved:
            return self
        w = sample_weight
        alpha: float = np.sum(w * ((y - mean) ** 2 - mean)) / np.sum(w * mean**2)
        alpha = float(max(alpha, _MIN_ALPHA)) if np.isfinite(alpha) else _MIN_ALPHA
        return NegativeBinomialFamily(alpha=alpha, n_quadrature=self.n_quadrature)

    def with_alpha(self, alpha: float | str) -> "NegativeBinomialFamily":
        """Return this family with the overdispersion ``alpha``.

        Parameters
        ----------
        alpha : float
            The overdispersion of the new family (variance ``mu + alpha mu^2``).

        Returns
        -------
        family : NegativeBinomialFamily
            A new family; this one is unchanged.
        """
        return NegativeBinomialFamily(alpha=float(alpha), n_quadrature=self.n_quadrature)

    def log_alpha_derivatives(self, y: FloatArray, eta: FloatArray, second: bool = True,
                              gamma_terms: bool = True) -> tuple[FloatArray, ...]:
        """Differentiate :meth:`loglik` in ``rho = log alpha``.

        ``dl/drho``, ``d2l/drho2`` and ``d2l/drho deta`` follow from the derivatives in
        ``r = 1 / alpha``,

        ``dl/dr = psi(y + r) - psi(r) + log(r / (r + mu)) + (mu - y) / (r + mu)``,
        ``d2l/dr2 = psi'(y + r) - psi'(r) + 1 / r - 2 / (r + mu) + (r + y) / (r + mu)^2``,
        ``d2l/dr deta = mu (y - mu) / (r + mu)^2``,

        with ``dr / drho = -r``.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Targets.
        eta : ndarray of shape (n,)
            Linear predictors.
        second : bool, default=True
            Also the second derivatives (else only ``d_rho``, in a tuple).
        gamma_terms : bool, default=True
            Include the terms ``psi(y + r) - psi(r)`` (and ``psi'``), which do not depend on
            ``eta``; False leaves them to the caller, e.g. to sum them over the distinct
            targets only (:meth:`gamma_log_alpha_derivative`).

        Returns
        -------
        d_rho, d_rho_rho, d_rho_eta : ndarray of shape (n,)
            The first derivative in ``rho``, the second, and the mixed one in ``rho`` and
            ``eta``, per row.
        """
        r = self._r
        y = np.asarray(y, dtype=float)
        _, log_q, p, q = _sigmoids(eta - np.log(r))  # q = r / (r + mu), p = mu / (r + mu)
        d_r = log_q + p - y * q / r
        if gamma_terms:
            d_r += digamma(y + r) - digamma(r)
        if not second:
            return (-r * d_r,)
        d_rr = (1.0 - 2.0 * q) / r + (r + y) * (q / r) ** 2
        if gamma_terms:
            d_rr += polygamma(1, y + r) - polygamma(1, r)
        d_r_eta = p * (y * q / r - p)
        return -r * d_r, r * r * d_rr + r * d_r, -r * d_r_eta

    def gamma_log_alpha_derivative(self, y: FloatArray) -> FloatArray:
        """The terms of ``d log p / d rho`` (``rho = log alpha``) that do not depend on
        ``eta``: ``-r (psi(y + r) - psi(r))``, ``r = 1 / alpha`` (those that
        :meth:`log_alpha_derivatives` leaves out with ``gamma_terms=False``).

        Parameters
        ----------
        y : ndarray
            Targets.

        Returns
        -------
        d_rho : ndarray of the shape of ``y``
        """
        r = self._r
        return -r * (digamma(np.asarray(y, dtype=float) + r) - digamma(r))

    initial_predictor = PoissonFamily.initial_predictor  # the same mean function

    # --- the likelihood: u = eta - log r, mu / (r + mu) = sigmoid(u) ---------------------
    def loglik(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """The NB2 log-likelihood of the class docstring, with ``mu = exp(eta)``.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Counts.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        loglik : ndarray of the shape of ``eta``
        """
        y = as_column(y, eta)
        r = self._r
        return _loglik_kernel(y, eta - np.log(r), r) + _loglik_constant(y, r)

    def loglik_per_alpha(self, y: FloatArray, eta: FloatArray,
                         alpha: FloatArray) -> FloatArray:
        """:meth:`loglik` with one overdispersion per column of ``eta``: draws of
        ``alpha`` made jointly with the coefficients (this family's ``alpha`` is ignored).

        Parameters
        ----------
        y : ndarray of shape (n,)
            Counts.
        eta : ndarray of shape (n, S)
            Linear predictors, one column per draw.
        alpha : ndarray of shape (S,)
            Positive overdispersion of each draw.

        Returns
        -------
        loglik : ndarray of shape (n, S)
        """
        r = 1.0 / np.asarray(alpha, dtype=float)
        y = as_column(y, eta)
        return _loglik_kernel(y, eta - np.log(r), r) + _loglik_constant(y, r)

    def sample_per_alpha(self, eta: FloatArray, alpha: FloatArray,
                         random_state: RandomStateLike = None) -> FloatArray:
        """:meth:`sample` with one overdispersion per column of ``eta`` (as
        :meth:`loglik_per_alpha`).

        Parameters
        ----------
        eta : ndarray of shape (n, S)
            Linear predictors, one column per draw.
        alpha : ndarray of shape (S,)
            Positive overdispersion of each draw.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws.

        Returns
        -------
        y : ndarray of shape (n, S)
            Counts as floats.
        """
        r = np.broadcast_to(1.0 / np.asarray(alpha, dtype=float), np.shape(eta))
        mu = self.mean(eta)
        return check_random_state(random_state).negative_binomial(r, r / (r + mu)).astype(
            float)

    def loglik_constant(self, y: FloatArray) -> FloatArray:
        """``log Gamma(y + r) - log Gamma(r) - log y!``, the terms without ``eta``.

        Parameters
        ----------
        y : ndarray
            Counts.

        Returns
        -------
        constant : ndarray of the shape of ``y``
        """
        return _loglik_constant(np.asarray(y, dtype=float), self._r)

    def loglik_and_derivatives(self, y: FloatArray, eta: FloatArray,
                               second: bool = False) -> tuple[FloatArray, ...]:
        """``y log sigmoid(u) - r log(1 + e^u)`` (``u = eta - log r``) and its derivatives
        ``y sigmoid(-u) - r sigmoid(u)`` and ``-(y + r) sigmoid(u) sigmoid(-u)``, from one
        evaluation.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Counts.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.
        second : bool, default=False
            Also return the second derivative.

        Returns
        -------
        terms : tuple of ndarray of the shape of ``eta``
            ``(loglik - loglik_constant, d1)``, or ``(..., d1, d2)`` with ``second=True``.
        """
        r = self._r
        y = as_column(y, eta)
        log_p, log_q, p, q = _sigmoids(eta - np.log(r))
        terms = (y * log_p + r * log_q, y * q - r * p)
        return terms + (-(y + r) * p * q,) if second else terms

    def d1(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """``y sigmoid(-u) - r sigmoid(u) = r (y - mu) / (r + mu)``, ``u = eta - log r``.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Counts.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        d1 : ndarray of the shape of ``eta``
        """
        r = self._r
        u = eta - np.log(r)
        _, _, p, q = _sigmoids(u)
        return as_column(y, eta) * q - r * p  # r (y - mu) / (r + mu)

    def d2(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """``-(y + r) sigmoid(u) sigmoid(-u)``, ``u = eta - log r``.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Counts.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        d2 : ndarray of the shape of ``eta``
        """
        r = self._r
        u = eta - np.log(r)
        _, _, p, q = _sigmoids(u)
        return -(as_column(y, eta) + r) * p * q

    def expected_mean(self, m: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The log-normal moments of ``mu = exp(eta)`` over ``eta ~ N(m, v)``
        (:meth:`LogLink.gaussian_moments`).

        Parameters
        ----------
        m, v : ndarray of shape (n,)
            Means and variances of the Gaussian linear predictors.

        Returns
        -------
        mean, var : ndarray of shape (n,)
        """
        # LogLink's closed form
        return cast(Moments, self.link.gaussian_moments(m, v))

    def log_expected_mean(self, m: FloatArray,
                          v: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        """The logarithms of the log-normal moments of ``mu = exp(eta)``.

        Parameters
        ----------
        m, v : ndarray of shape (n,)
            Means and variances of the Gaussian linear predictors.

        Returns
        -------
        log_moments : tuple of ndarray of shape (n,)
            ``(log E[mu], log Var[mu])``.
        """
        return lognormal_log_moments(m, v)

    def predictive_variance(self, mean: FloatArray, var: FloatArray,
                            exponent: ArrayLike | None = None) -> FloatArray:
        """``E[mu + alpha mu^2] + Var[mu] = E[mu] + Var[mu] + alpha (Var[mu] + E[mu]^2)``,
        capped at ``exp(700)`` like the variance of the mean
        (:meth:`LogLink.gaussian_moments`).

        Parameters
        ----------
        mean, var : ndarray of shape (n,)
            Posterior mean and variance of ``mu``.
        exponent : ndarray of int of shape (n,), default=None
            ``mean`` and ``var`` in units of ``2**exponent`` and its square (means beyond
            float64's square root, whose variance is not representable); the variance is
            returned in the units ``4**exponent``.

        Returns
        -------
        variance : ndarray of shape (n,)
        """
        noise = mean if exponent is None else np.ldexp(mean, -np.asarray(exponent))
        with np.errstate(over="ignore"):  # E[mu]^2 beyond float64 at absurd predictors
            total = noise + var + (var + mean**2) / self._r
        return np.minimum(total, np.exp(LOG_VAR_MAX))

    def sample(self, eta: FloatArray, random_state: RandomStateLike = None) -> FloatArray:
        """Negative binomial draws of counts given linear predictors.

        Parameters
        ----------
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws.

        Returns
        -------
        y : ndarray of the shape of ``eta``
            Counts as floats.
        """
        r = self._r
        mu = self.mean(eta)
        return check_random_state(random_state).negative_binomial(r, r / (r + mu)).astype(
            float)
