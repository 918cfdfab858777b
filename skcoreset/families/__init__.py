"""Likelihood families of generalized linear models, written in the linear predictor.

A family is the contract the estimators, the inference methods and the coreset constructors
rely on (:class:`Family`, with numpydoc for every method). For targets ``y`` and linear
predictors ``eta = x . theta`` it gives:

* ``loglik(y, eta)``: the log-likelihood ``log p(y | eta)`` of each point (normalising
  constants included, so sums of it are log marginal likelihood terms);
* ``d1(y, eta)``, ``d2(y, eta)``: its first and second derivatives in ``eta``;
* ``link``: a :class:`Link` object (identity, log, softplus, logit, probit, cloglog) with its
  inverse and derivatives; ``mean(eta)``, the conditional mean ``E[y | eta]``, is its inverse;
* ``expected_loglik(y, m, v)``: ``E[log p(y | eta)]`` over ``eta ~ N(m, v)`` with its
  gradients in ``m`` and ``v`` (closed form where it exists, quadrature otherwise), and
  ``expected_mean(m, v)``, the mean and variance of ``E[y | eta]``;
* ``predictive_variance(mean, var)`` and ``sample(eta)``: the spread and draws of new targets;
* ``fit_target(y)`` and ``encode_target(y, classes)``: validation of the targets (its valid
  range, with a ``ValueError`` naming the problem) and their encoding (``{-1, +1}`` labels
  for the binary families, float64 otherwise);
* declared capabilities read instead of names: ``binary``, ``float32_loglik``,
  ``pass_glm_mapping``; and ``unresolved`` for parameters set to ``"auto"``, which the
  estimators and constructors estimate from the data (a family never fits anything).

``y`` has shape ``(n,)`` and ``eta`` shape ``(n,)`` or ``(n, S)`` (one column per parameter
draw); the result has the shape of ``eta``. All functions stay finite for ``|eta|`` up to 1e4.

:data:`FAMILIES` maps the names accepted by ``model=`` to the family classes, and is the
registry: one line, ``FAMILIES[MyFamily.name] = MyFamily``, makes a new family nameable
as ``model=`` of the coreset constructors (with its default parameters; an instance sets
others); :func:`make_family` builds one from a name (or passes an instance through). A binary model
of any link whose inverse is a distribution function (``Link.cdf``, e.g. :class:`CLogLogLink`)
is :func:`binary_family` of that link.
"""

from collections.abc import Iterable, Iterator, Set
from typing import Any, cast
import inspect

from ._base import USABLE_FAMILIES, Family, gauss_hermite, gauss_laguerre
from ._links import (LINKS, CLogLogLink, IdentityLink, Link, LogitLink, LogLink, ProbitLink,
                     SoftplusLink, make_link)
from .binary import BinaryFamily
from .gaussian import GaussianFamily
from .logistic import LogisticFamily
from .negative_binomial import NegativeBinomialFamily
from .poisson import PoissonFamily
from .probit import ProbitFamily

FAMILIES: dict[str, Any] = {family.name: family for family in (
    LogisticFamily, ProbitFamily, PoissonFamily, GaussianFamily, NegativeBinomialFamily)}


class _ModelNames(Set):
    """The names of :data:`FAMILIES` and ``extra`` ones, read at every use: a parameter
    constraint built on it at import accepts a family registered later."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        self._extra = frozenset(extra)

    def _names(self) -> frozenset:
        return self._extra | frozenset(FAMILIES)

    def __contains__(self, name: object) -> bool:
        return name in self._extra or name in FAMILIES

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._names()))

    def __len__(self) -> int:
        return len(self._names())

    @classmethod
    def _from_iterable(cls, values: Iterable[Any]) -> frozenset:
        # set operations give plain sets, not live views
        return frozenset(values)


def model_names(*extra: str) -> Set:
    """The names ``model=`` accepts, ``extra`` ones (e.g. ``"auto"``) and the keys of
    :data:`FAMILIES`, as a set read at every use (for ``StrOptions``)."""
    return _ModelNames(extra)


def make_family(model: str, **params: Any) -> Family:
    """The family of a registered name, or ``model`` itself when it is a :class:`Family`.

    Parameters
    ----------
    model : str or Family
        A key of :data:`FAMILIES` ("logistic", "probit", "poisson", "gaussian",
        "negative_binomial", or a family registered there) or a family instance.
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
            raise TypeError(f"model={model!r} is an abstract base of the likelihoods (its "
                            f"name is None). {USABLE_FAMILIES}")
        return model
    try:
        family = FAMILIES[model]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown model {model!r}; expected one of {sorted(FAMILIES)} or a "
                         "skcoreset.families.Family instance.") from None
    accepted = inspect.signature(family).parameters
    return family(**{key: value for key, value in params.items() if key in accepted})


def binary_family(link: Link | str, n_quadrature: int = 32) -> BinaryFamily:
    """The binary family of a link: the registered family of that link where there is one
    (:class:`LogisticFamily` for ``"logit"``, :class:`ProbitFamily` for ``"probit"``, with
    their faster forms and PASS-GLM), else :class:`BinaryFamily` of the link.

    Parameters
    ----------
    link : str or Link
        The name of a link of :data:`LINKS` whose inverse is a distribution function
        (``"logit"``, ``"probit"``, ``"cloglog"``), or a :class:`Link` instance with
        ``cdf = True``.
    n_quadrature : int, default=32
        Gauss-Hermite points of the expectations over narrow Gaussians.

    Returns
    -------
    family : BinaryFamily
    """
    if not isinstance(link, Link):
        link = make_link(link, allowed=[name for name, cls in LINKS.items() if cls.cdf])
    for family in FAMILIES.values():
        if issubclass(family, BinaryFamily):
            registered = family(n_quadrature=n_quadrature)
            if registered.link == link:
                return cast(BinaryFamily, registered)
    return BinaryFamily(link, n_quadrature=n_quadrature)


__all__ = ["FAMILIES", "LINKS", "BinaryFamily", "CLogLogLink", "Family", "GaussianFamily",
           "IdentityLink", "Link", "LogLink", "LogisticFamily", "LogitLink",
           "NegativeBinomialFamily", "PoissonFamily", "ProbitFamily", "ProbitLink",
           "SoftplusLink", "binary_family", "gauss_hermite", "gauss_laguerre", "make_family",
           "make_link"]
