"""Likelihood families of generalized linear models, written in the linear predictor.

Every family gives, for targets ``y`` and linear predictors ``eta = x . theta``:

* ``loglik(y, eta)``: the log-likelihood ``log p(y | eta)`` of each point (normalising
  constants included, so sums of it are log marginal likelihood terms);
* ``d1(y, eta)``, ``d2(y, eta)``: its first and second derivatives in ``eta``;
* ``expected_loglik(y, m, v)``: ``E[log p(y | eta)]`` over ``eta ~ N(m, v)`` with its
  gradients in ``m`` and ``v`` (closed form where it exists, Gauss-Hermite otherwise);
* ``mean(eta)``: the conditional mean ``E[y | eta]`` (inverse link), ``link`` its inverse;
* ``predictive_variance(mean, var)`` and ``sample(eta)``: the spread and draws of new targets;
* ``fit_target(y)`` and ``encode_target(y, classes)``: validation of the targets (its valid
  range, with a ``ValueError`` naming the problem) and their encoding (``{-1, +1}`` labels
  for the logistic family, float64 otherwise);
* ``resolve(X, y, sample_weight, ...)``: the family with parameters set to ``"auto"``
  estimated from the data.

``y`` has shape ``(n,)`` and ``eta`` shape ``(n,)`` or ``(n, S)`` (one column per parameter
draw); the result has the shape of ``eta``. All functions stay finite for ``|eta|`` up to 1e4.

:data:`FAMILIES` maps the names accepted by ``model=`` to the family classes;
:func:`make_family` builds one from a name (or passes an instance through).
"""

import inspect
from types import MappingProxyType

from ._base import Family, gauss_hermite, gauss_laguerre
from .gaussian import GaussianFamily
from .logistic import LogisticFamily
from .negative_binomial import NegativeBinomialFamily, estimate_alpha
from .poisson import PoissonFamily

FAMILIES = MappingProxyType({family.name: family for family in (
    LogisticFamily, PoissonFamily, GaussianFamily, NegativeBinomialFamily)})


def make_family(model, **params):
    """The family of a registered name, or ``model`` itself when it is a :class:`Family`.

    Parameters
    ----------
    model : str or Family
        A key of :data:`FAMILIES` ("logistic", "poisson", "gaussian", "negative_binomial")
        or a family instance.
    **params
        Family parameters (``link``, ``noise_scale``, ``alpha``, ...). Those the named
        family does not take are ignored, so callers can pass every parameter they have;
        all are ignored for an instance.

    Returns
    -------
    family : Family
    """
    if isinstance(model, Family):
        if model.name is None:
            raise TypeError(
                f"model={model!r} is the abstract base of the likelihoods; use a family such "
                "as LogisticFamily(), PoissonFamily(link=...), GaussianFamily(noise_scale=...) "
                "or NegativeBinomialFamily(alpha=...), or a subclass that sets name and "
                "implements the likelihood.")
        return model
    try:
        family = FAMILIES[model]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown model {model!r}; expected one of {sorted(FAMILIES)} or a "
                         "skcoreset.families.Family instance.") from None
    accepted = inspect.signature(family).parameters
    return family(**{key: value for key, value in params.items() if key in accepted})


__all__ = ["FAMILIES", "Family", "GaussianFamily", "LogisticFamily", "NegativeBinomialFamily",
           "PoissonFamily", "estimate_alpha", "gauss_hermite", "gauss_laguerre", "make_family"]
