"""Poisson likelihood for counts (and non-negative rates), with log or softplus link."""

from typing import cast

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln, ndtr
from sklearn.utils import check_random_state

from ._base import (Family, as_column, by_width, check_non_negative_targets,
                    exp_log1p_exp_neg, half_lines, normal_pdf)
from ._links import (LOG_RATE_MAX, SOFTPLUS_LOG_CUTOFF, Link, LogLink, lognormal_log_moments,
                     make_link)
from .._typing import FloatArray, Moments, RandomStateLike


class PoissonFamily(Family):
    """Poisson likelihood for counts with ``link="log"`` or ``link="softplus"``.

    The rate is ``exp(eta)`` (log link) or ``log(1 + exp(eta))`` (softplus link, as in the
    coreset papers). ``log p(y | eta) = y log(rate) - rate - log(y!)``. Targets are
    non-negative: integer counts, or non-negative reals such as rates ``y / exposure``.
    For non-integer y the same formula, with ``log(y!) = log Gamma(y + 1)``, is a
    quasi-likelihood: its dependence on ``eta`` is that of the Poisson likelihood, which
    is what makes the weighted rates of :meth:`exposure_as_weight` exact.

    Parameters
    ----------
    link : {"log", "softplus"} or Link, default="log"
        Inverse link from the linear predictor to the Poisson rate (a name, or a
        :class:`LogLink` or :class:`SoftplusLink`); stored as the link object.
    n_quadrature : int, default=32
        Gauss-Hermite points for the softplus link's expectations.
    """

    name = "poisson"

    def __init__(self, link: Link | str = "log", n_quadrature: int = 32) -> None:
        super().__init__(make_link(link, allowed=("log", "softplus")),
                         n_quadrature=n_quadrature)
        # the canonical link has closed forms and one-exponential derivatives and kernel
        self._log_link = isinstance(self.link, LogLink)

    def _params(self):
        return {"link": self.link_name, **super()._params()}

    @property
    def link_name(self) -> str | None:
        """The name of :attr:`link`, ``"log"`` or ``"softplus"``."""
        return self.link.name

    # a read-only property where other families have a class constant
    @property
    def pass_glm_mapping(self) -> str | None:  # type: ignore[override]
        """``"poisson"`` with the log link (``y s - e^s``, the canonical form PASS-GLM
        approximates), else None."""
        return "poisson" if self._log_link else None

    def encode_target(self, y: ArrayLike, classes: ArrayLike | None = None) -> FloatArray:
        """Non-negative targets (counts or rates) as float64; NaN, infinite and negative
        values raise ``ValueError``.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Counts or rates.
        classes : None
            Ignored.

        Returns
        -------
        y_encoded : ndarray of shape (n_samples,)
        """
        return check_non_negative_targets(y, "Poisson")

    @staticmethod
    def exposure_as_weight(y: FloatArray, sample_weight: FloatArray,
                           exposure: FloatArray) -> tuple[FloatArray, FloatArray, float]:
        """Counts observed over an exposure, as rates weighted by the exposure.

        The model ``y_n ~ Poisson(e_n mu(eta_n))`` (the rate ``mu`` per unit of exposure
        ``e_n``; for the log link an offset ``log e_n`` in the linear predictor) has, for any
        link, ``log p(y_n | eta) = e_n [r_n log mu - mu - log Gamma(r_n + 1)] + c_n`` with the
        rate ``r_n = y_n / e_n`` and ``c_n = y_n log e_n - log y_n! + e_n log Gamma(r_n + 1)``,
        which does not depend on ``eta``. So the rates with weights ``w_n e_n`` give the same
        posterior as the counts with their exposure (scikit-learn's ``PoissonRegressor``
        idiom ``fit(X, y / exposure, sample_weight=exposure)``), and ``sum_n w_n c_n`` turns
        their log evidence into that of the counts.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Non-negative targets (counts).
        sample_weight : ndarray of shape (n,)
        exposure : ndarray of shape (n,)
            Positive exposures.

        Returns
        -------
        rates : ndarray of shape (n,)
            ``y / exposure``.
        weights : ndarray of shape (n,)
            ``sample_weight * exposure``.
        log_constant : float
            ``sum_n w_n c_n``: the counts' log-likelihood minus the weighted rates' one.
        """
        rates = y / exposure
        constant = (np.where(y > 0, y * np.log(exposure), 0.0) - gammaln(y + 1.0)
                    + exposure * gammaln(rates + 1.0))
        return rates, sample_weight * exposure, float(sample_weight @ constant)

    def initial_predictor(self, mean_target: float) -> float:
        """The link of the mean count, clipped below at 1e-3 (a finite start for all-zero
        counts).

        Parameters
        ----------
        mean_target : float
            Weighted mean of the counts.

        Returns
        -------
        eta : float
        """
        return self.link(np.maximum(mean_target, 1e-3))

    # --- the likelihood: y log(rate) - rate - log(y!) ------------------------------------
    def loglik(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """``y log(rate) - rate - log Gamma(y + 1)`` with ``rate = link.inverse(eta)``.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Non-negative targets.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        loglik : ndarray of the shape of ``eta``
        """
        y = as_column(y, eta)
        return self._loglik_kernel(y, eta, self.mean(eta)) + self.loglik_constant(y)

    def _loglik_kernel(self, y, eta, rate):
        """``y log(rate) - rate``: the log-likelihood without ``-log y!``."""
        # y * log_rate with the convention 0 * log 0 = 0
        return np.where(y > 0, y * self.link.log_inverse(eta), 0.0) - rate

    def loglik_constant(self, y: FloatArray) -> FloatArray:
        """``-log Gamma(y + 1)``, the terms without ``eta``.

        Parameters
        ----------
        y : ndarray
            Non-negative targets.

        Returns
        -------
        constant : ndarray of the shape of ``y``
        """
        return -gammaln(np.asarray(y, dtype=float) + 1.0)

    def loglik_and_derivatives(self, y: FloatArray, eta: FloatArray,
                               second: bool = False) -> tuple[FloatArray, ...]:
        """``y log(rate) - rate`` and its derivatives ``y (log rate)' - rate'`` and
        ``y (log rate)'' - rate''``, from one evaluation of the rate (one exponential for
        the log link, whose derivatives are the rate itself).

        Parameters
        ----------
        y : ndarray of shape (n,)
            Non-negative targets.
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
        rate = self.mean(eta)
        loglik = self._loglik_kernel(y, eta, rate)
        if self._log_link:  # the canonical link: d1 = y - rate, d2 = -rate
            return (loglik, y - rate, -rate) if second else (loglik, y - rate)
        rate_d1, rate_d2 = self.link.inverse_derivatives(eta, rate)
        log_d1, log_d2 = self.link.log_inverse_derivatives(eta)
        terms = (loglik, y * log_d1 - rate_d1)
        return terms + (y * log_d2 - rate_d2,) if second else terms

    def d1(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """``y (log rate)' - rate'``: ``y - rate`` for the log link.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Non-negative targets.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        d1 : ndarray of the shape of ``eta``
        """
        y = as_column(y, eta)
        if self._log_link:
            return y - self.mean(eta)
        rate_d1 = self.link.inverse_derivatives(eta)[0]
        return y * self.link.log_inverse_derivatives(eta)[0] - rate_d1

    def d2(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """``y (log rate)'' - rate''``: ``-rate`` for the log link.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Non-negative targets.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        d2 : ndarray of the shape of ``eta``
        """
        if self._log_link:
            return -self.mean(eta)
        y = as_column(y, eta)
        rate_d2 = self.link.inverse_derivatives(eta)[1]
        return y * self.link.log_inverse_derivatives(eta)[1] - rate_d2

    def loglik_in_place(self, y: FloatArray, eta: FloatArray,
                        scratch: FloatArray) -> None:
        """In place: ``eta <- y log(rate) - rate`` (``-log y!`` dropped), from vectorised
        ufuncs in the two scratch buffers.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Non-negative targets.
        eta : ndarray of shape (n, S)
            Linear predictors; overwritten.
        scratch : ndarray of shape (2, n, S)
            Work buffers.
        """
        if self._log_link:  # y eta - exp(eta)
            rate = scratch[0]
            np.minimum(eta, LOG_RATE_MAX, out=rate)
            np.exp(rate, out=rate)
            np.multiply(eta, y[:, None], out=eta)
            np.subtract(eta, rate, out=eta)
            return
        rate, log_rate = scratch  # softplus(eta) = max(eta, 0) + log1p(exp(-|eta|))
        np.abs(eta, out=rate)
        np.negative(rate, out=rate)
        np.exp(rate, out=rate)
        np.log1p(rate, out=rate)
        np.maximum(eta, 0.0, out=log_rate)
        rate += log_rate
        with np.errstate(divide="ignore"):
            np.log(rate, out=log_rate)
        far_left = eta < SOFTPLUS_LOG_CUTOFF
        if far_left.any():  # softplus(eta) = exp(eta) to double precision, even past underflow
            np.copyto(log_rate, eta, where=far_left)
        np.multiply(log_rate, y[:, None], out=eta)
        np.subtract(eta, rate, out=eta)

    def predictive_variance(self, mean: FloatArray, var: FloatArray,
                            exponent: ArrayLike | None = None) -> FloatArray:
        """``E[rate] + Var[rate]``: Poisson noise plus the posterior uncertainty of the rate.

        Parameters
        ----------
        mean, var : ndarray of shape (n,)
            Posterior mean and variance of the rate.
        exponent : ndarray of int of shape (n,), default=None
            ``mean`` and ``var`` in units of ``2**exponent`` and its square (rates beyond
            float64's square root, whose variance is not representable); the variance is
            returned in units of ``4**exponent``.

        Returns
        -------
        variance : ndarray of shape (n,)
        """
        return mean + var if exponent is None else np.ldexp(mean, -np.asarray(exponent)) + var

    def sample(self, eta: FloatArray, random_state: RandomStateLike = None,
               exposure: FloatArray | None = None) -> FloatArray:
        """Poisson draws of counts given linear predictors.

        Parameters
        ----------
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws.
        exposure : ndarray of shape (n,), default=None
            Positive exposure of each row: the draws are ``Poisson(exposure * rate)``.

        Returns
        -------
        y : ndarray of the shape of ``eta``
            Counts as floats.
        """
        rate = self.mean(eta)
        if exposure is not None:
            rate = as_column(exposure, eta) * rate
        return check_random_state(random_state).poisson(rate).astype(float)

    def loglik_with_exposure(self, y: FloatArray, eta: FloatArray,
                             exposure: FloatArray) -> FloatArray:
        """``log p(y | eta)`` of counts observed over an exposure, ``y ~ Poisson(e rate)``:
        ``y log(e rate) - e rate - log y!`` (for the log link, :meth:`loglik` at
        ``eta + log e``).

        Parameters
        ----------
        y : ndarray of shape (n,)
            Counts.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.
        exposure : ndarray of shape (n,)
            Positive exposures.

        Returns
        -------
        loglik : ndarray of the shape of ``eta``
        """
        y, exposure = as_column(y, eta), as_column(exposure, eta)
        log_mean = np.log(exposure) + self.link.log_inverse(eta)
        return (np.where(y > 0, y * log_mean, 0.0) - exposure * self.mean(eta)
                + self.loglik_constant(y))

    def expected_loglik(self, y: FloatArray, m: FloatArray,
                        v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``E[log p(y | eta)]`` for ``eta ~ N(m, v)`` and its gradients: in closed form for
        the log link (``y m - exp(m + v / 2) - log y!``), by quadrature otherwise
        (:meth:`Family.expected_loglik`).

        Parameters
        ----------
        y, m, v : ndarray of shape (n,)
            Targets, means and variances of the Gaussian linear predictors.

        Returns
        -------
        value, grad_m, grad_v : ndarray of shape (n,)
        """
        if not self._log_link:
            return super().expected_loglik(y, m, v)
        y = np.asarray(y, dtype=float)
        m = np.asarray(m, dtype=float)
        v = np.asarray(v, dtype=float)
        rate = np.exp(np.minimum(m + 0.5 * v, LOG_RATE_MAX))
        return y * m - rate - gammaln(y + 1.0), y - rate, -0.5 * rate

    @staticmethod
    def _softplus_wide_moments(m, v):
        """Mean and variance of ``softplus(eta)``, ``eta ~ N(m, v)``, v > 1, by splitting
        ``softplus = max(eta, 0) + r`` with ``r(eta) = log1p(exp(-|eta|))`` even and decaying
        like ``exp(-|eta|)`` (closed-form Gaussian moments of ``max(eta, 0)``, half-line
        Gauss-Laguerre for the terms with r)."""
        x, weights, right, left = half_lines(m, v)
        sd = np.sqrt(v)
        z = m / sd
        e_max = m * ndtr(z) + sd * normal_pdf(z, 0.0, 1.0)
        e_max_sq = (m**2 + v) * ndtr(z) + m * sd * normal_pdf(z, 0.0, 1.0)
        r_scaled = exp_log1p_exp_neg(x)  # exp(x) r(x)
        e_r = (r_scaled * (right + left)) @ weights
        e_max_r = (x * r_scaled * right) @ weights
        e_r_sq = (r_scaled * np.log1p(np.exp(-x)) * (right + left)) @ weights
        mean = e_max + e_r
        return mean, np.maximum(e_max_sq + 2.0 * e_max_r + e_r_sq - mean**2, 0.0)

    def expected_mean(self, m: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Mean and variance of the rate over ``eta ~ N(m, v)``: log-normal moments for the
        log link (:meth:`LogLink.gaussian_moments`); for the softplus link Gauss-Hermite
        quadrature for ``v <= 1`` and a splitting of the softplus beyond.

        Parameters
        ----------
        m, v : ndarray of shape (n,)
            Means and variances of the Gaussian linear predictors.

        Returns
        -------
        mean, var : ndarray of shape (n,)
        """
        if self._log_link:
            # LogLink's closed form
            return cast(Moments, self.link.gaussian_moments(m, v))
        return by_width(v, super().expected_mean, self._softplus_wide_moments, m, v)

    def log_expected_mean(self, m: FloatArray,
                          v: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        """The logarithms of the log-normal moments (log link; ``None`` for the softplus link,
        whose rates grow like the predictor and stay representable).

        Parameters
        ----------
        m, v : ndarray of shape (n,)
            Means and variances of the Gaussian linear predictors.

        Returns
        -------
        log_moments : tuple of ndarray of shape (n,) or None
            ``(log E[mu], log Var[mu])``.
        """
        return lognormal_log_moments(m, v) if self._log_link else None
