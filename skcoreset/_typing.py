"""Type aliases of the public signatures (the package ships PEP 561 type hints).

The estimators take more than :data:`numpy.typing.ArrayLike` describes: pandas DataFrames,
scipy.sparse matrices and dask arrays, which have no common static type. Their aliases are
therefore ``ArrayLike | Any``: they document what a parameter takes without rejecting those
types in user code.
"""

from typing import Any, Literal, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

# Rows of data: array-likes, pandas DataFrames, scipy.sparse matrices, dask arrays, or a
# coreset's WeightedSubset.
MatrixLike: TypeAlias = ArrayLike | Any
# One value per row (targets, weights, exposures, offsets): array-likes, pandas Series or dask
# arrays.
VectorLike: TypeAlias = ArrayLike | Any
# Seed of a random draw, as scikit-learn's check_random_state takes it.
RandomStateLike: TypeAlias = int | np.random.RandomState | None
# An array-like (a list, an ndarray, a pandas object) that the function validates at run time
# (``np.asarray``, scikit-learn's ``check_array``): Any to the type checker, which cannot
# follow those checks.
ArrayInput: TypeAlias = Any
# What a prediction returns: an ndarray, or a lazy dask array for dask input (with
# return_std=True, a tuple of them).
Prediction: TypeAlias = Any
FloatArray: TypeAlias = NDArray[np.float64]
# (mean, variance) of a quantity at each row
Moments: TypeAlias = tuple[FloatArray, FloatArray]

FitMethod: TypeAlias = Literal["laplace", "kl_proximal", "pass_glm", "mcmc"]
Sampler: TypeAlias = Literal["nuts", "ensemble"]
