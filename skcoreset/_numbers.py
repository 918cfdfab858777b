"""The one rule for what counts as a number in a parameter: a ``numbers.Real`` (or
``numbers.Integral``) that is not a boolean.

Python's ``True`` is the integer 1, so ``isinstance(True, Integral)`` holds and scikit-learn's
``Interval`` constraints accept it; but ``M=True`` or ``exposure=True`` is a mistake, never a
meant budget or exposure. Every check of a numeric parameter goes through :func:`is_number`
(scikit-learn's constraints through ``skcoreset._sklearn_compat.Interval``).
"""

import numbers

import numpy as np


def is_number(value, kind=numbers.Real):
    """Whether ``value`` is a number of ``kind`` (``numbers.Real`` or ``numbers.Integral``),
    booleans excluded."""
    return isinstance(value, kind) and not isinstance(value, (bool, np.bool_))


def check_positive_number(name, value, alternatives=""):
    """``value`` as a float after checking that it is a finite positive number; a
    ``TypeError`` (not a number) or ``ValueError`` (not finite and positive) names it and
    the ``alternatives`` (e.g. ``" or 'auto'"``) it may also take."""
    if not is_number(value):
        raise TypeError(f"{name} must be a positive number{alternatives}, got {value!r} of "
                        f"type {type(value).__name__}.")
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite positive number{alternatives}, got "
                         f"{value!r}.")
    return float(value)
