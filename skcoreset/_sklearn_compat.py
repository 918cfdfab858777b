"""The one place that imports scikit-learn's private helpers.

``pyproject.toml`` declares the scikit-learn range these imports are tested on; if a release
moves them, only this module changes.
"""

from collections.abc import Callable
from typing import Any, TypeVar

from sklearn.base import _fit_context
from sklearn.utils._available_if import _AvailableIfDescriptor
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils._param_validation import Interval as _SklearnInterval
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.validation import _num_samples

from ._numbers import is_number


class Interval(_SklearnInterval):
    """scikit-learn's ``Interval`` constraint, refusing booleans (:func:`is_number`): it
    accepts ``True`` as the integer 1."""

    def is_satisfied_by(self, val):
        return is_number(val) and super().is_satisfied_by(val)


class _AvailableIf(_AvailableIfDescriptor):
    def _check(self, obj, owner):
        try:
            super()._check(obj, owner)
        except AttributeError as error:
            reason = error.__cause__
            if isinstance(reason, AttributeError) and str(reason):
                raise AttributeError(f"{error} ({reason})") from None
            raise


_Method = TypeVar("_Method", bound=Callable[..., Any])


def available_if(check: Callable[[Any], Any]) -> Callable[[_Method], _Method]:
    """scikit-learn's ``available_if``, with the message of an ``AttributeError`` raised by
    ``check`` (why the method is missing, what to do) in the error users see. Typed as
    returning the method unchanged, as type checkers see it on an instance."""
    return lambda fn: _AvailableIf(fn, check=check, attribute_name=fn.__name__)


__all__ = ["HasMethods", "Interval", "StrOptions", "_fit_context", "_get_output_config",
           "_num_samples", "available_if"]
