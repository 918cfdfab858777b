"""The surrogate polynomial: supported mappings, valid degrees, Chebyshev coefficients.

A degree-``M`` polynomial stands in for the GLM mapping function of a family
(``family.pass_glm_mapping``), in one of two forms (Huggins, Adams & Broderick 2017, §3):

* canonical, ``y s - f(s)`` with ``f`` the softplus (logistic, labels as 0/1) or ``e^s``
  (Poisson with log link): ``f_M(s) = sum_m b_m s^m`` and the surrogate coefficients are
  ``beta = -b``; the linear term ``sum_n w_n y_n a_n`` is kept exactly;
* margin, ``phi(y s)`` with ``phi = log Phi`` (probit, labels ±1): at degree 2,
  ``phi_M(t) = c_0 + c_1 t + c_2 t^2`` at the margins ``t = y s`` needs only the statistics
  of the canonical form, since ``t^2 = s^2`` and ``sum_n w_n y_n a_n`` is twice the 0/1
  linear term minus ``sum_n w_n a_n``: ``beta = (c_0, -c_1, c_2)`` with the linear term
  scaled by ``2 c_1`` (for the logistic ``phi`` this is the canonical form itself, ``c_1``
  being 1/2). Higher degrees would need label-weighted moments of odd degree.

The degree rules keep the surrogate bounded above, so that its posterior is proper.
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy.special import expit, log_ndtr

from ...families import LogisticFamily, PoissonFamily, ProbitFamily, ProbitLink
from ._chebyshev import chebyshev_coefficients

# The monomial coefficients come from Chebyshev ones through cheb2poly, whose cancellation
# error grows like 2^M: past ~20 the monomial basis loses the approximation's accuracy.
MAX_DEGREE = 20
_SUPPORTED = ("the logistic family and the Poisson family with link='log', and the probit "
              "family at pass_degree=2")


def _probit_derivative(t):
    return ProbitLink().log_inverse_derivatives(t)[0]


def _probit_curvature(t):
    return ProbitLink().log_inverse_derivatives(t)[1]


class _Mapping(NamedTuple):
    """What PASS-GLM approximates for one ``pass_glm_mapping``."""

    function: object  # f (canonical) or phi (margin), vectorised
    derivative: object
    curvature: object  # the second derivative, for the Taylor polynomial
    chebyshev: object  # the function argument of chebyshev_coefficients
    binary: bool  # labels ±1: a 0/1 linear term, class strata
    margin: bool  # phi(y s) rather than y s - f(s)
    family: Callable[[], object]  # evaluates the exact log-likelihood (the accuracy estimate)


_MAPPINGS = {
    "logistic": _Mapping(lambda s: np.logaddexp(0.0, s), expit,
                         lambda s: expit(s) * expit(-s), "softplus", True, False,
                         LogisticFamily),
    "poisson": _Mapping(np.exp, np.exp, np.exp, "exp", False, False,
                        lambda: PoissonFamily(link="log")),
    "probit": _Mapping(log_ndtr, _probit_derivative, _probit_curvature, log_ndtr, True, True,
                       ProbitFamily),
}


def _model_name(family):
    """The ``pass_glm_mapping`` of a Family object (or a mapping's name)."""
    model = family if isinstance(family, str) else getattr(family, "pass_glm_mapping", None)
    if model in _MAPPINGS:
        return model
    raise ValueError(
        f"PASS-GLM supports {_SUPPORTED}; got {family!r}. The softplus-link Poisson "
        "log-likelihood needs a polynomial in log(softplus(s)) and softplus(s) at once, and "
        "the Gaussian posterior is already exact with method='laplace'.")


def mapping(model):
    """The :class:`_Mapping` of a ``pass_glm_mapping`` name."""
    return _MAPPINGS[model]


def check_pass_degree(model, degree):
    """Raise ``ValueError`` with the reason when ``degree`` gives an improper surrogate.

    Parameters
    ----------
    model : {"logistic", "poisson", "probit"}
        The family's ``pass_glm_mapping``.
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
    if model == "probit" and degree != 2:
        raise ValueError(
            f"pass_degree={degree} is invalid for probit regression: a polynomial of "
            "log Phi(y s) has terms of odd degree beyond the first (log Phi(t) - t / 2 is "
            "not even, unlike the logistic log sigmoid), whose statistics would depend on "
            "the labels. Use pass_degree=2.")
    return degree


def surrogate_of_polynomial(model, poly):
    """Surrogate coefficients ``beta`` of the polynomial ``poly`` standing in for the mapping
    function: ``-b`` in the canonical form, ``(c_0, -c_1, c_2)`` in the margin form."""
    poly = np.asarray(poly, dtype=float)
    if not mapping(model).margin:
        return -poly
    return poly * np.where(np.arange(len(poly)) % 2, -1.0, 1.0)


def linear_scale(model, coef):
    """The factor of the exact linear term ``sum_n w_n y_n a_n`` (0/1 labels for the binary
    mappings) in the surrogate: 1 in the canonical form, ``2 c_1 = -2 beta_1`` in the margin
    form."""
    return -2.0 * coef[1] if mapping(model).margin else 1.0


def _surrogate_coefficients(model, degree, radius):
    """``beta`` with per-point surrogate ``kappa y s + sum_m beta_m s^m``, ``s = a . theta``,
    from the Chebyshev series on ``[-radius, radius]``."""
    return surrogate_of_polynomial(
        model, chebyshev_coefficients(mapping(model).chebyshev, degree, radius))


def _check_bounded(coef):
    """The surrogate ``sum_m beta_m s^m`` must tend to ``-oo`` both ways (a proper posterior)."""
    nonzero = np.flatnonzero(coef[2:]) + 2
    if not len(nonzero) or nonzero[-1] % 2 or coef[nonzero[-1]] >= 0:
        raise ValueError(
            "The fitted PASS-GLM polynomial is not bounded above, so its posterior would be "
            "improper (the pilot's linear predictors do not pin down a degree-"
            f"{len(coef) - 1} fit). Use pass_degree=2 or a numeric pass_radius.")
    return coef


def gradient_residual(model, coef, y, s):
    """Per row, the exact log-likelihood's derivative in ``s`` minus the surrogate's.

    Canonical form: ``f_M'(s) - f'(s)``; margin form: ``y (phi'(t) - phi_M'(t))`` at
    ``t = y s``.
    """
    m = mapping(model)
    if not m.margin:
        return np.polynomial.polynomial.polyval(s, np.polynomial.polynomial.polyder(-coef)) \
            - m.derivative(s)
    t = y * s
    poly = surrogate_of_polynomial(model, coef)  # the signs flip back: phi_M's coefficients
    return y * (m.derivative(t) - np.polynomial.polynomial.polyval(
        t, np.polynomial.polynomial.polyder(poly)))


def _family_of(model):
    return mapping(model).family()
