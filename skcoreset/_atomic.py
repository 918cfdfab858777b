"""Fits that either complete or leave the estimator as it was.

Every ``fit`` and ``partial_fit`` of skcoreset runs in :func:`fit_context`: scikit-learn's
parameter validation plus a snapshot of the attributes of the estimator and of the estimators
among its parameters (a stream's base constructor, a pipeline's steps), put back when the fit
raises -- an error, or a ``KeyboardInterrupt`` at any point. A fit publishes its results by
binding attributes, so putting the previous bindings back restores the previous fitted (or
unfitted) state; the few fits that update an object in place (a stream's merge tree,
PASS-GLM's statistics) update a copy and bind it at the end.
"""

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from sklearn.base import BaseEstimator

from ._sklearn_compat import _fit_context


def _estimators(estimator):
    """The estimator and the distinct estimators among its (nested) parameters."""
    found = [estimator]
    try:
        params = estimator.get_params(deep=True).values()
    except Exception:  # invalid parameters: the fit's validation reports them
        params = ()
    for value in params:
        if isinstance(value, BaseEstimator) and not any(value is other for other in found):
            found.append(value)
    return found


def atomic(fit_method):
    """Decorate a fit method so that it leaves every attribute as it was when it raises."""

    @functools.wraps(fit_method)
    def fit(estimator, *args, **kwargs):
        snapshot = [(obj, dict(vars(obj))) for obj in _estimators(estimator)]
        try:
            return fit_method(estimator, *args, **kwargs)
        except BaseException:
            for obj, attributes in snapshot:
                vars(obj).clear()
                vars(obj).update(attributes)
            raise

    return fit


_Fit = TypeVar("_Fit", bound=Callable[..., Any])


def fit_context(*, prefer_skip_nested_validation: bool) -> Callable[[_Fit], _Fit]:
    """scikit-learn's ``_fit_context`` (parameter validation, nested-validation config) of
    an atomic fit (:func:`atomic`); the decorated method keeps its signature."""

    def decorator(fit_method: _Fit) -> _Fit:
        return atomic(_fit_context(
            prefer_skip_nested_validation=prefer_skip_nested_validation)(fit_method))

    return decorator
