"""Input checks shared by estimators and coreset constructors, with messages naming the problem."""

from contextlib import contextmanager

import numpy as np
from sklearn.utils import check_array

from ._numbers import is_number

# The scipy.sparse input taken for X by every estimator and constructor: any format
# scikit-learn's check_array accepts, converted once (CSC, COO, ... copied) to CSR, the
# format whose row blocks and products X @ theta the fitting code uses.
ACCEPT_SPARSE = "csr"


def _reject_boolean(name, value):
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a number or an array of numbers, got {value!r}.")


def check_numeric_dtype(name, value, allowed="a number or a 1-D array of numbers"):
    """``TypeError`` naming ``name`` unless ``value`` (a scalar, array-like or dask array,
    whose dtype is read without computing it) holds real numbers. A boolean array is a mask
    passed by mistake (read as 0.0 and 1.0 it would fit silently), a string is never a
    number; both are refused, as are objects that do not convert to float."""
    _reject_boolean(name, value)
    if is_number(value):
        return
    dtype = getattr(value, "dtype", None)
    if dtype is None or not hasattr(value, "shape"):
        if isinstance(value, (str, bytes)):
            raise TypeError(f"{name} must be {allowed}, got the string {value!r}.")
        try:
            dtype = np.asarray(value).dtype
        except (TypeError, ValueError) as error:  # ragged lists
            raise TypeError(f"{name} must be {allowed}, got {type(value).__name__} "
                            f"({error}).") from None
    kind = getattr(dtype, "kind", "O")
    if kind == "b":
        raise TypeError(f"{name} must be {allowed}, got a boolean array (a mask, which "
                        f"would be read as 0.0 and 1.0); if 0/1 values are meant, pass "
                        f"them as numbers, e.g. {name}.astype(float).")
    if kind in "USVMm":
        raise TypeError(f"{name} must be {allowed}, got an array of dtype {dtype}.")
    if kind == "O":
        try:
            np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            shown = (f"a {type(value).__name__} holding an" if hasattr(value, "__len__")
                     else f"{value!r}, an")
            raise TypeError(f"{name} must be {allowed}, got {shown} object that is not a "
                            "number.") from None


def check_numeric_dtypes(**values):
    """:func:`check_numeric_dtype` of each named value given (not None), e.g. an exposure
    and an offset, from their dtypes (a dask array is not computed)."""
    for name, value in values.items():
        if value is not None:
            check_numeric_dtype(name, value)


def _float_vector(name, value, n_samples):
    """``value`` (a number or array of numbers, checked by :func:`check_numeric_dtype`) as
    a float64 array of shape ``(n_samples,)``; a scalar or 0-d array is repeated."""
    check_numeric_dtype(name, value)
    if not is_number(value) and np.ndim(value) == 0 and not hasattr(value, "tocsr"):
        value = np.asarray(value, dtype=np.float64).item()
    if is_number(value):
        return np.full(n_samples, float(value))
    value = check_array(value, ensure_2d=False, dtype=np.float64, ensure_all_finite=False,
                        input_name=name)
    if value.ndim != 1 or value.shape[0] != n_samples:
        detail = (f"{value.shape[0]} entries but X has {n_samples} rows" if value.ndim == 1
                  else f"an array of shape {value.shape}")
        raise ValueError(f"{name} must be 1-D with one entry per row of X; got {detail}.")
    return value


# Hints appended to scikit-learn's messages on X and y, which say what is wrong but not what
# is allowed.
_INPUT_HINTS = (
    ("inconsistent numbers of samples",
     "X, y and sample_weight must have one entry per row of X."),
    ("contains infinity", "X and y must hold finite numbers: drop or rescale those rows."),
    ("y contains NaN", "y must hold finite numbers: drop the rows without a target."),
    ("0 sample(s)", "X must have at least one row."),
)


@contextmanager
def explained_input_errors():
    """Re-raise scikit-learn's input errors (``validate_data``) with what is allowed."""
    try:
        yield
    except ValueError as error:
        message = str(error)
        for pattern, hint in _INPUT_HINTS:
            if pattern in message:
                raise ValueError(f"{message.rstrip()} {hint}") from error
        raise


def check_sample_weight(sample_weight, n_samples, *, where=None):
    """Validate ``sample_weight`` as likelihood multipliers.

    Returns a float64 array of shape ``(n_samples,)``: ones for ``None``, the value repeated
    for a scalar. Raises ``ValueError`` for a wrong length, NaN/inf, negative entries,
    weights that are all zero or weights whose total overflows float64.

    ``where`` names a part of the data (a dask chunk, e.g. ``"in chunk 2 (rows 40 to 59)"``)
    in the messages; a part's entries are checked but not its total, which is the whole
    data's (:func:`check_weight_total`).
    """
    if sample_weight is None:
        return np.ones(n_samples)
    suffix = "" if where is None else f" {where}"
    _reject_boolean("sample_weight", sample_weight)
    if is_number(sample_weight):
        sample_weight = np.full(n_samples, float(sample_weight))
    else:
        sample_weight = check_array(sample_weight, ensure_2d=False, dtype=np.float64,
                                    ensure_all_finite=False, input_name="sample_weight")
        if sample_weight.ndim != 1:
            raise ValueError(f"sample_weight must be 1-D, got an array of shape "
                             f"{sample_weight.shape}{suffix}.")
        if sample_weight.shape[0] != n_samples:
            raise ValueError(f"sample_weight has {sample_weight.shape[0]} entries but X has "
                             f"{n_samples} rows{suffix}.")
    if not np.all(np.isfinite(sample_weight)):
        raise ValueError(f"sample_weight contains NaN or infinity{suffix}; weights must be "
                         "finite numbers >= 0.")
    if np.any(sample_weight < 0):
        raise ValueError(f"sample_weight contains negative values{suffix}; weights must be "
                         ">= 0.")
    if where is None:
        with np.errstate(over="ignore"):  # an overflowing total is reported by the check
            check_weight_total(sample_weight.sum(), sample_weight.max(initial=0.0), n_samples)
    return sample_weight


def check_weight_total(total, largest, n_samples):
    """Checks of the weights as a whole, from their ``total`` and ``largest`` entry:
    ``ValueError`` when all are zero or their total overflows float64."""
    if n_samples > 0 and not largest > 0:
        raise ValueError("sample_weight is zero everywhere; at least one weight must be > 0.")
    if not np.isfinite(total):
        # totals and importance probabilities are computed from the sum
        raise ValueError("sample_weight sums to infinity in float64; a weight is the number "
                         "of rows a row stands for, so use weights of a representable size.")


def check_exposure(exposure, n_samples):
    """Validate the exposures of count targets: a float64 array of shape ``(n_samples,)`` of
    positive finite values (a scalar is repeated). Raises ``TypeError`` for booleans,
    strings and other non-numbers, ``ValueError`` for wrong shapes and values."""
    exposure = _float_vector("exposure", exposure, n_samples)
    if not np.all(np.isfinite(exposure)):
        raise ValueError("exposure contains NaN or infinity; an exposure must be a finite "
                         "positive number.")
    if np.any(exposure <= 0):
        raise ValueError("exposure contains values <= 0; an exposure (time, population, "
                         "area the count was observed over) must be positive. Drop rows "
                         "with zero exposure: they carry no information.")
    return exposure


def check_trials(successes, n_trials, n_samples):
    """Validate binomial targets ``successes`` out of ``n_trials``: float64 arrays of shape
    ``(n_samples,)`` (a scalar ``n_trials`` is repeated) of whole numbers with
    ``0 <= successes <= n_trials``. Fractional successes (proportions) are refused: whether
    ``0.3`` with 10 trials means 3 successes or 0.3 of one is ambiguous, and the message says
    how to pass them. Raises ``TypeError`` for booleans and non-numbers, ``ValueError``
    otherwise, naming ``n_trials``."""
    n_trials = _float_vector("n_trials", n_trials, n_samples)
    if not np.all(np.isfinite(n_trials)) or np.any(n_trials < 0) or np.any(
            n_trials != np.round(n_trials)):
        raise ValueError("n_trials must hold non-negative whole numbers (the number of "
                         "trials of each row), got NaN, infinite, negative or fractional "
                         "values.")
    if not np.any(n_trials > 0):
        raise ValueError("n_trials is zero on every row; rows of no trials carry no "
                         "information.")
    successes = _float_vector("y", successes, n_samples)
    if not np.all(np.isfinite(successes)) or np.any(successes < 0):
        raise ValueError("With n_trials, y must be the number of successes of each row, "
                         "whole numbers >= 0; y contains NaN, infinite or negative values.")
    if np.any(successes != np.round(successes)):
        raise ValueError(
            "With n_trials, y must be the number of successes of each row (whole numbers); "
            "y contains fractional values. For proportions pass y=proportion * n_trials "
            "(rounded to whole numbers), or fit them as sample_weight=n_trials on 0/1 "
            "rows.")
    if np.any(successes > n_trials):
        row = int(np.argmax(successes > n_trials))
        raise ValueError(
            f"y (successes) exceeds n_trials at {int(np.sum(successes > n_trials))} rows "
            f"(first: row {row}, y={successes[row]:g} > n_trials={n_trials[row]:g}); "
            "the successes of a row are at most its number of trials.")
    return successes, n_trials


def _offset_values(offset, n_samples, link_name):
    """Validate an offset: a float64 array of shape ``(n_samples,)`` of finite values; of
    count targets (a ``link_name`` given), for the log link only (for another link it does
    not scale the mean). A binary model's offset (``link_name=None``) suits any link."""
    check_numeric_dtype("offset", offset)
    if link_name is not None and link_name != "log":
        raise ValueError(
            f"offset adds to the linear predictor, which scales the mean only with the log "
            f"link; this model has link={link_name!r}. Pass exposure (the multiplier of the "
            "mean) instead, or use link='log'.")
    offset = _float_vector("offset", offset, n_samples)
    if not np.all(np.isfinite(offset)):
        raise ValueError("offset contains NaN or infinity; an offset must be a finite "
                         "number.")
    return offset


def linear_offset(exposure, offset, n_samples, link_name):
    """The one representation of ``exposure`` and ``offset`` of count targets: the log of
    the multiplier of each row's mean, ``offset + log(exposure)`` as in statsmodels' GLM,
    or None when neither is given. With the log link it is the known term of each row's
    linear predictor; with another link (which takes ``exposure`` only) the log of the
    exposure. Any finite value: consumers add it to the linear predictor, or to the log of
    the mean, and only the Poisson model's exposure weights need its exponential
    (:func:`exposure_of`).

    ``offset`` of counts needs the log link (for another link it does not scale the mean);
    with ``link_name=None`` (a binary model, whose offset is a known term of its linear
    predictor under any link) it is not checked against a link. ``ValueError`` otherwise,
    as for invalid values (NaN, infinite or non-positive exposure, NaN or infinite
    offset); ``TypeError`` for values that are not numbers.
    """
    if exposure is None and offset is None:
        return None
    total = (np.zeros(n_samples) if offset is None
             else _offset_values(offset, n_samples, link_name))
    if exposure is not None:
        total = total + np.log(check_exposure(exposure, n_samples))
    return total


def exposure_of(log_exposure):
    """The exposure ``exp(log_exposure)`` of a :func:`linear_offset` (None for None), where
    a number must be the multiplier of the mean: the Poisson model fits counts over an
    exposure as rates weighted by it. ``ValueError`` naming the cause and the fix where it
    is beyond float64 (``offset + log(exposure)`` above 709 or below -745)."""
    if log_exposure is None:
        return None
    with np.errstate(over="ignore", under="ignore"):
        exposure = np.exp(log_exposure)
    if not np.all(np.isfinite(exposure) & (exposure > 0)):
        raise ValueError(
            "offset + log(exposure) has values whose exponential is beyond float64 "
            "(above 709 or below -745); the Poisson model fits counts over an exposure as "
            "rates weighted by it, so it must be a float64. Centre the offset (subtract a "
            "constant, which the intercept absorbs), or fit the negative binomial model, "
            "which takes any finite offset in its linear predictor.")
    return exposure


def combined_exposure(exposure, offset, n_samples, link_name):
    """The multiplier of the mean of count targets from ``exposure`` and ``offset``, or
    None when neither is given: :func:`exposure_of` the :func:`linear_offset`, with their
    checks and messages."""
    return exposure_of(linear_offset(exposure, offset, n_samples, link_name))
