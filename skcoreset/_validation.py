"""Input checks shared by estimators and coreset constructors, with messages naming the problem."""

import numbers

import numpy as np
from sklearn.utils import check_array


def check_sample_weight(sample_weight, n_samples):
    """Validate ``sample_weight`` as likelihood multipliers.

    Returns a float64 array of shape ``(n_samples,)``: ones for ``None``, the value repeated
    for a scalar. Raises ``ValueError`` for a wrong length, NaN/inf, negative entries,
    weights that are all zero or weights whose total overflows float64.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, float(sample_weight))
    else:
        sample_weight = check_array(sample_weight, ensure_2d=False, dtype=np.float64,
                                    input_name="sample_weight")
        if sample_weight.ndim != 1:
            raise ValueError(
                f"sample_weight must be 1-D, got an array of shape {sample_weight.shape}.")
        if sample_weight.shape[0] != n_samples:
            raise ValueError(f"sample_weight has {sample_weight.shape[0]} entries but X has "
                             f"{n_samples} rows.")
    if not np.all(np.isfinite(sample_weight)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(sample_weight < 0):
        raise ValueError("sample_weight contains negative values; weights must be >= 0.")
    if n_samples > 0 and not np.any(sample_weight > 0):
        raise ValueError("sample_weight is zero everywhere; at least one weight must be > 0.")
    with np.errstate(over="ignore"):  # an overflowing total is reported just below
        total = sample_weight.sum()
    if not np.isfinite(total):
        # totals and importance probabilities are computed from the sum
        raise ValueError("sample_weight sums to infinity in float64; a weight is the number "
                         "of rows a row stands for, so use weights of a representable size.")
    return sample_weight


def check_exposure(exposure, n_samples):
    """Validate the exposures of count targets: a float64 array of shape ``(n_samples,)`` of
    positive finite values (a scalar is repeated). Raises ``ValueError`` otherwise."""
    if isinstance(exposure, numbers.Number):
        exposure = np.full(n_samples, float(exposure))
    else:
        exposure = check_array(exposure, ensure_2d=False, dtype=np.float64,
                               ensure_all_finite=False, input_name="exposure")
        if exposure.ndim != 1:
            raise ValueError(f"exposure must be 1-D, got an array of shape {exposure.shape}.")
        if exposure.shape[0] != n_samples:
            raise ValueError(f"exposure has {exposure.shape[0]} entries but X has "
                             f"{n_samples} rows.")
    if not np.all(np.isfinite(exposure)):
        raise ValueError("exposure contains NaN or infinity.")
    if np.any(exposure <= 0):
        raise ValueError("exposure contains values <= 0; an exposure (time, population, "
                         "area the count was observed over) must be positive. Drop rows "
                         "with zero exposure: they carry no information.")
    return exposure
