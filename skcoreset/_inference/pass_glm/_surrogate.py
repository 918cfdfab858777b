"""The surrogate polynomial: supported models, valid degrees, Chebyshev coefficients.

A degree-``M`` polynomial ``f_M`` stands in for the softplus (logistic) or ``e^s`` (Poisson
with log link) in the GLM log-likelihood ``y s - f(s)``; the degree rules keep the surrogate
bounded above, so that its posterior is proper (Huggins, Adams & Broderick 2017, §3).
"""

import numpy as np
from scipy.special import expit

from ._chebyshev import chebyshev_coefficients

# The monomial coefficients come from Chebyshev ones through cheb2poly, whose cancellation
# error grows like 2^M: past ~20 the monomial basis loses the approximation's accuracy.
MAX_DEGREE = 20
_SUPPORTED = "the logistic family and the Poisson family with link='log'"


def _model_name(family):
    """``"logistic"`` or ``"poisson"`` (log link) from a Family object or a model name."""
    if isinstance(family, str):
        name, link = family, "log"
    else:
        name, link = getattr(family, "name", None), getattr(family, "link_name", "log")
    if name == "logistic" or (name == "poisson" and link == "log"):
        return name
    described = name if name != "poisson" else f"poisson with link={link!r}"
    raise ValueError(
        f"PASS-GLM supports {_SUPPORTED}; got {described!r}. The softplus-link Poisson "
        "log-likelihood needs a polynomial in log(softplus(s)) and softplus(s) at once, and "
        "the Gaussian posterior is already exact with method='laplace'.")


def check_pass_degree(model, degree):
    """Raise ``ValueError`` with the reason when ``degree`` gives an improper surrogate.

    Parameters
    ----------
    model : {"logistic", "poisson"}
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
    return degree


def _surrogate_coefficients(model, degree, radius):
    """``beta_m = -b_m`` with per-point surrogate ``y s + sum_m beta_m s^m``, ``s = a . theta``."""
    return -chebyshev_coefficients("softplus" if model == "logistic" else "exp", degree, radius)


def _check_bounded(coef):
    """The surrogate ``sum_m beta_m s^m`` must tend to ``-oo`` both ways (a proper posterior)."""
    nonzero = np.flatnonzero(coef[2:]) + 2
    if not len(nonzero) or nonzero[-1] % 2 or coef[nonzero[-1]] >= 0:
        raise ValueError(
            "The fitted PASS-GLM polynomial is not bounded above, so its posterior would be "
            "improper (the pilot's linear predictors do not pin down a degree-"
            f"{len(coef) - 1} fit). Use pass_degree=2 or a numeric pass_radius.")
    return coef


def _derivative(model):
    """``f'``: the sigmoid for logistic, ``exp`` for Poisson (the GLM mean function)."""
    return expit if model == "logistic" else np.exp


def _family_of(model):
    from ...families import LogisticFamily, PoissonFamily

    return LogisticFamily() if model == "logistic" else PoissonFamily(link="log")


class PassGLMAccuracyWarning(UserWarning):
    """The PASS-GLM posterior is measurably off the exact one (see :func:`mean_error_estimate`)."""
