"""Negative binomial likelihood (NB2) for overdispersed counts, with log link."""

import numpy as np
from scipy.special import expit, gammaln, log_expit
from sklearn.utils import check_random_state

from .._numbers import check_positive_number
from ._base import LOG_RATE_MAX, LOG_VAR_MAX, Family, as_column, check_counts, lognormal_moments

# Pilot rows of the method-of-moments estimate of alpha (evenly spaced through the data).
_PILOT_ROWS = 10_000
# alpha -> 0 is the Poisson limit; underdispersed data get this (the Poisson model, in effect).
_MIN_ALPHA = 1e-8


def estimate_alpha(X, y, sample_weight, *, prior_prec, fit_intercept):
    """Method-of-moments estimate of the NB2 overdispersion from a Poisson fit.

    Under NB2, ``E[(y - mu)^2] = mu + alpha mu^2``, so with the means ``mu_n`` of a pilot
    Poisson fit (the Laplace mode on at most 10,000 rows of positive weight, evenly spaced)
    ``alpha = sum_n w_n ((y_n - mu_n)^2 - mu_n) / sum_n w_n mu_n^2`` (Cameron and Trivedi,
    2013, chapter 3), at least ``1e-8`` (data that are not overdispersed get the Poisson
    limit).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Counts.
    sample_weight : ndarray of shape (n_samples,)
    prior_prec : ndarray of shape (n_params,)
        Diagonal prior precision of the pilot fit.
    fit_intercept : bool

    Returns
    -------
    alpha : float
    """
    from .._inference.laplace import laplace  # the inference code imports the families
    from .poisson import PoissonFamily

    rows = np.flatnonzero(sample_weight > 0)
    rows = rows[::max(1, -(-len(rows) // _PILOT_ROWS))]
    X, y, w = np.asarray(X[rows], dtype=float), y[rows], sample_weight[rows]
    family = PoissonFamily(link="log")
    theta = laplace(X, y, family, sample_weight=w, prior_prec=prior_prec,
                    fit_intercept=fit_intercept).posterior.mean
    eta = X @ (theta[:-1] if fit_intercept else theta) + (theta[-1] if fit_intercept else 0.0)
    mu = family.mean(eta)
    alpha = np.sum(w * ((y - mu) ** 2 - mu)) / np.sum(w * mu**2)
    return float(max(alpha, _MIN_ALPHA)) if np.isfinite(alpha) else _MIN_ALPHA


class NegativeBinomialFamily(Family):
    """Negative binomial likelihood (NB2) for overdispersed counts, log link.

    With mean ``mu = exp(eta)`` and overdispersion ``alpha > 0`` (``r = 1 / alpha``),
    ``Var[y | eta] = mu + alpha mu^2`` and

    ``log p(y | eta) = log Gamma(y + r) - log Gamma(r) - log y! + r log(r / (r + mu))
    + y log(mu / (r + mu))``,

    a Poisson rate with a Gamma(r, r / mu) mixing distribution (Cameron and Trivedi, 2013,
    chapter 3). As ``alpha -> 0`` it tends to the Poisson likelihood. Targets are
    non-negative integer counts.

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        Overdispersion. ``"auto"``: estimated from the data by the estimators and coreset
        constructors when they fit (:meth:`resolve`, the method-of-moments estimate of
        :func:`estimate_alpha` from a pilot Poisson fit); the likelihood can be evaluated
        only once it is a number.
    n_quadrature : int, default=32
        Gauss-Hermite points of :meth:`expected_loglik`.

    References
    ----------
    A. C. Cameron and P. K. Trivedi. *Regression Analysis of Count Data*, 2nd edition.
    Cambridge University Press, 2013.
    """

    name = "negative_binomial"

    def __init__(self, alpha="auto", n_quadrature=32):
        super().__init__(n_quadrature=n_quadrature)
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

    def encode_target(self, y, classes=None):
        """Counts as float64; NaN, negative and non-integer values raise ``ValueError``."""
        return check_counts(y, "Negative binomial")

    @property
    def unresolved(self):
        return isinstance(self.alpha, str)

    def resolve(self, X, y, sample_weight, *, prior_prec, fit_intercept):
        """This family with ``alpha="auto"`` replaced by :func:`estimate_alpha` on the rows."""
        if not self.unresolved:
            return self
        alpha = estimate_alpha(X, y, sample_weight, prior_prec=prior_prec,
                               fit_intercept=fit_intercept)
        return NegativeBinomialFamily(alpha=alpha, n_quadrature=self.n_quadrature)

    # --- the likelihood: u = eta - log r, mu / (r + mu) = sigmoid(u) ---------------------
    def loglik(self, y, eta):
        y = as_column(y, eta)
        return self._loglik_kernel(y, eta - np.log(self._r)) + self.loglik_constant(y)

    def _loglik_kernel(self, y, u):
        """``y log sigmoid(u) - r log(1 + exp(u))``: the log-likelihood without its
        ``eta``-free Gamma-function terms."""
        return y * log_expit(u) - self._r * np.logaddexp(0.0, u)

    def loglik_constant(self, y):
        r = self._r
        y = np.asarray(y, dtype=float)
        return gammaln(y + r) - gammaln(r) - gammaln(y + 1.0)

    def loglik_and_derivatives(self, y, eta, second=False):
        r = self._r
        y = as_column(y, eta)
        u = eta - np.log(r)
        p, q = expit(u), expit(-u)
        terms = (self._loglik_kernel(y, u), y * q - r * p)
        return terms + (-(y + r) * p * q,) if second else terms

    def d1(self, y, eta):
        r = self._r
        u = eta - np.log(r)
        return as_column(y, eta) * expit(-u) - r * expit(u)  # r (y - mu) / (r + mu)

    def d2(self, y, eta):
        r = self._r
        u = eta - np.log(r)
        return -(as_column(y, eta) + r) * expit(u) * expit(-u)

    def mean(self, eta):
        """``E[y | eta] = exp(eta)``."""
        return np.exp(np.minimum(eta, LOG_RATE_MAX))

    def link(self, mean_y):
        """Predictor with the given mean (means clipped away from zero)."""
        return np.log(np.maximum(mean_y, 1e-3))

    def expected_mean(self, m, v):
        return lognormal_moments(m, v)

    def predictive_variance(self, mean, var):
        """``E[mu + alpha mu^2] + Var[mu] = E[mu] + Var[mu] + alpha (Var[mu] + E[mu]^2)``,
        capped at ``exp(700)`` like the variance of the mean (:func:`lognormal_moments`)."""
        with np.errstate(over="ignore"):  # E[mu]^2 beyond float64 at absurd predictors
            total = mean + var + (var + mean**2) / self._r
        return np.minimum(total, np.exp(LOG_VAR_MAX))

    def sample(self, eta, random_state=None):
        """Negative binomial draws of counts given linear predictors."""
        r = self._r
        mu = self.mean(eta)
        return check_random_state(random_state).negative_binomial(r, r / (r + mu)).astype(
            float)
