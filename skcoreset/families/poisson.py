"""Poisson likelihood for counts (and non-negative rates), with log or softplus link."""

import numpy as np
from scipy.special import expit, gammaln, log_expit, ndtr
from sklearn.utils import check_random_state

from ._base import (LOG_RATE_MAX, Family, as_column, by_width, check_non_negative_targets,
                    exp_log1p_exp_neg, half_lines, lognormal_moments, normal_pdf)

# Below this, softplus(eta) = exp(eta) to double precision; log(softplus) is computed as eta.
_SOFTPLUS_LOG_CUTOFF = -35.0


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
    link : {"log", "softplus"}, default="log"
        Inverse link from the linear predictor to the Poisson rate.
    n_quadrature : int, default=32
        Gauss-Hermite points for the softplus link's expectations.
    """

    name = "poisson"

    def __init__(self, link="log", n_quadrature=32):
        super().__init__(n_quadrature=n_quadrature)
        if link not in ("log", "softplus"):
            raise ValueError(f"link must be 'log' or 'softplus', got {link!r}.")
        self.link_name = link

    def _params(self):
        return {"link": self.link_name, **super()._params()}

    def encode_target(self, y, classes=None):
        """Non-negative targets (counts or rates) as float64; NaN, infinite and negative
        values raise ``ValueError``."""
        return check_non_negative_targets(y, "Poisson")

    @staticmethod
    def exposure_as_weight(y, sample_weight, exposure):
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

    # --- softplus helpers: rate, log rate and sigma/rate, all stable -------------------
    @staticmethod
    def _softplus(eta):
        return np.logaddexp(0.0, eta)

    @classmethod
    def _log_softplus(cls, eta):
        small = eta < _SOFTPLUS_LOG_CUTOFF
        rate = cls._softplus(np.where(small, 0.0, eta))
        return np.where(small, eta, np.log(rate))

    def mean(self, eta):
        """Poisson rate ``E[y | eta]``."""
        if self.link_name == "log":
            return np.exp(np.minimum(eta, LOG_RATE_MAX))
        return self._softplus(eta)

    def link(self, rate):
        """Predictor with the given Poisson rate (rates clipped away from zero)."""
        rate = np.maximum(rate, 1e-3)
        if self.link_name == "log":
            return np.log(rate)
        return rate + np.log(-np.expm1(-rate))  # log(expm1(rate)), stable

    def loglik(self, y, eta):
        y = as_column(y, eta)
        return self._loglik_kernel(y, eta, self.mean(eta)) + self.loglik_constant(y)

    def _loglik_kernel(self, y, eta, rate):
        """``y log(rate) - rate``: the log-likelihood without ``-log y!``."""
        log_rate = eta if self.link_name == "log" else self._log_softplus(eta)
        # y * log_rate with the convention 0 * log 0 = 0
        return np.where(y > 0, y * log_rate, 0.0) - rate

    def loglik_constant(self, y):
        return -gammaln(np.asarray(y, dtype=float) + 1.0)

    def loglik_and_derivatives(self, y, eta, second=False):
        y = as_column(y, eta)
        rate = self.mean(eta)
        loglik = self._loglik_kernel(y, eta, rate)
        if self.link_name == "log":  # d1 = y - rate, d2 = -rate: one exponential
            terms = (loglik, y - rate)
            return terms + (-rate,) if second else terms
        terms = (loglik, self.d1(y, eta))
        return terms + (self.d2(y, eta),) if second else terms

    def d1(self, y, eta):
        y = as_column(y, eta)
        if self.link_name == "log":
            return y - self.mean(eta)
        ratio = np.exp(log_expit(eta) - self._log_softplus(eta))  # sigmoid / rate
        return y * ratio - expit(eta)

    def d2(self, y, eta):
        if self.link_name == "log":
            return -self.mean(eta)
        y = as_column(y, eta)
        sig = expit(eta)
        ratio = np.exp(log_expit(eta) - self._log_softplus(eta))
        return (y * ratio - sig) * (1.0 - sig) - y * ratio**2

    def predictive_variance(self, mean, var):
        """``E[rate] + Var[rate]``: Poisson noise plus the posterior uncertainty of the rate."""
        return mean + var

    def sample(self, eta, random_state=None):
        """Poisson draws of counts given linear predictors."""
        return check_random_state(random_state).poisson(self.mean(eta)).astype(float)

    def expected_loglik(self, y, m, v):
        if self.link_name == "softplus":
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

    def expected_mean(self, m, v):
        if self.link_name == "softplus":
            return by_width(v, super().expected_mean, self._softplus_wide_moments, m, v)
        return lognormal_moments(m, v)
