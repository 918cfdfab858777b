"""The weighted subset a coreset hands on: the rows with their weights, as an ndarray or in
a DataFrame's attrs, and how estimators read it back."""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike
from scipy import sparse

from .._sklearn_compat import _num_samples


class WeightedSubset(np.ndarray):
    """Rows of a data set with the weights under which they stand in for all of it.

    An ``ndarray`` subclass returned by a coreset constructor's ``fit_transform`` (how a
    Pipeline's ``fit`` hands the coreset to the next step). The estimators of
    :mod:`skcoreset.linear_model` read ``sample_weight`` and ``sample_indices`` from it, so
    they can follow a coreset step in a plain
    :class:`sklearn.pipeline.Pipeline`. Slicing or computing with it gives plain arrays
    semantics: derived arrays do not carry the weights. Rows of sparse data are handed on as
    a :class:`SparseWeightedSubset`, a CSR matrix with the same three attributes.

    It never has as many rows as the data it was drawn from: when a coreset keeps every row,
    ``fit_transform`` splits one row into two copies with half its weight each (the weighted
    log-likelihood is unchanged), so an estimator that cannot read the weights fails with a
    sample-count mismatch instead of being fitted unweighted.

    Parameters
    ----------
    rows : array-like of shape (n_rows, n_features)
        The rows.
    sample_weight : array-like of shape (n_rows,)
        Positive weight of each row.
    sample_indices : array-like of shape (n_rows,)
        Row indices into the data the coreset was built from.
    n_samples_fit : int, default=None
        Number of rows of that data (``None`` when unknown).

    Attributes
    ----------
    sample_weight : ndarray of shape (n_rows,)
        Positive weight of each row.
    sample_indices : ndarray of shape (n_rows,)
        Row indices into the data the coreset was built from.
    n_samples_fit : int or None
        Number of rows of that data (``None`` when unknown).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import UniformCoreset
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> y = np.array([0, 1] * 5)
    >>> subset = UniformCoreset(M=4, random_state=0).fit_transform(X, y)
    >>> subset.shape, subset.sample_weight
    ((4, 2), array([2.5, 2.5, 2.5, 2.5]))
    """

    def __new__(cls, rows, sample_weight, sample_indices, n_samples_fit=None):
        obj = np.asarray(rows).view(cls)
        obj.sample_weight = np.asarray(sample_weight, dtype=float)
        obj.sample_indices = np.asarray(sample_indices)
        obj.n_samples_fit = None if n_samples_fit is None else int(n_samples_fit)
        return obj

    def __array_finalize__(self, obj):
        # views and results of operations are not the coreset any more
        self.sample_weight = None
        self.sample_indices = None
        self.n_samples_fit = None

    def __reduce__(self):
        return (WeightedSubset, (np.asarray(self), self.sample_weight, self.sample_indices,
                                 self.n_samples_fit))


class SparseWeightedSubset(sparse.csr_matrix):
    """:class:`WeightedSubset` of sparse data: the coreset rows as a CSR matrix carrying
    ``sample_weight``, ``sample_indices`` and ``n_samples_fit``.

    Returned by a coreset constructor's ``fit_transform`` on scipy.sparse input, so the rows
    stay sparse on their way to the next step. As with :class:`WeightedSubset`, matrices
    derived from it (slices, products, format conversions) are plain: they do not carry the
    weights.

    Parameters
    ----------
    arg1 : sparse matrix or tuple
        The rows, anything :class:`scipy.sparse.csr_matrix` accepts.
    shape : tuple of int, default=None
        Shape of the matrix, as for :class:`scipy.sparse.csr_matrix`.
    dtype : dtype, default=None
        Data type, as for :class:`scipy.sparse.csr_matrix`.
    copy : bool, default=False
        Copy the rows' arrays, as for :class:`scipy.sparse.csr_matrix`.
    sample_weight : array-like of shape (n_rows,), default=None
        Positive weight of each row (``None`` for a derived matrix).
    sample_indices : array-like of shape (n_rows,), default=None
        Row indices into the data the coreset was built from.
    n_samples_fit : int, default=None
        Number of rows of that data (``None`` when unknown).

    Attributes
    ----------
    sample_weight : ndarray of shape (n_rows,) or None
        Positive weight of each row.
    sample_indices : ndarray of shape (n_rows,) or None
        Row indices into the data the coreset was built from.
    n_samples_fit : int or None
        Number of rows of that data.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import sparse
    >>> from skcoreset import UniformCoreset
    >>> X = sparse.random(10, 3, density=0.5, format="csr", random_state=0)
    >>> y = np.array([0, 1] * 5)
    >>> subset = UniformCoreset(M=4, random_state=0).fit_transform(X, y)
    >>> subset.shape, subset.sample_weight
    ((4, 3), array([2.5, 2.5, 2.5, 2.5]))
    """

    def __init__(self, arg1: Any, shape: tuple[int, int] | None = None,
                 dtype: DTypeLike | None = None, copy: bool = False, *,
                 sample_weight: ArrayLike | None = None,
                 sample_indices: ArrayLike | None = None,
                 n_samples_fit: int | None = None) -> None:
        # scipy builds derived matrices of the same class from (data, indices, indptr):
        # those get no weights
        super().__init__(arg1, shape=shape, dtype=dtype, copy=copy)
        self.sample_weight = (None if sample_weight is None
                              else np.asarray(sample_weight, dtype=float))
        self.sample_indices = None if sample_indices is None else np.asarray(sample_indices)
        self.n_samples_fit = None if n_samples_fit is None else int(n_samples_fit)


def weighted_subset(rows, sample_weight, sample_indices, n_samples_fit=None):
    """The coreset rows as handed on: a :class:`SparseWeightedSubset` of sparse rows, else a
    :class:`WeightedSubset`."""
    if sparse.issparse(rows):
        return SparseWeightedSubset(rows.tocsr(), sample_weight=sample_weight,
                                    sample_indices=sample_indices,
                                    n_samples_fit=n_samples_fit)
    return WeightedSubset(rows, sample_weight, sample_indices, n_samples_fit)


class _AttrsArray(np.ndarray):
    """An array stored in ``DataFrame.attrs`` that compares equal as a whole.

    pandas propagates ``attrs`` through ``pd.concat`` only when ``a.attrs == b.attrs``,
    which needs a single bool; plain arrays would make every such concat raise.
    """

    def __eq__(self, other):
        return np.array_equal(np.asarray(self), np.asarray(other))

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = None


def _attrs_array(values):
    return np.array(values).view(_AttrsArray)


def _frame_weights(frame, attrs):
    """The weights and indices in a coreset DataFrame's ``attrs``, following its rows.

    ``fit_transform`` stores the row labels next to the weights, so a frame that was
    reordered, filtered or concatenated with itself after ``fit_transform`` gets each row's
    own weight back; anything that cannot be matched by label is an error, never a
    misaligned fit.
    """
    import pandas as pd

    weights = np.asarray(attrs["coreset_sample_weight"], dtype=float)
    indices = np.asarray(attrs["coreset_sample_indices"])
    labels = attrs.get("coreset_row_labels")
    if labels is None:  # attrs written by hand: only positional use is possible
        if len(weights) != len(frame):
            raise ValueError(
                f"The DataFrame carries {len(weights)} coreset weights in attrs but has "
                f"{len(frame)} rows. Fit on the DataFrame the coreset's fit_transform "
                "returned, or pass plain data with an explicit sample_weight.")
        return weights, indices
    labels = pd.Index(np.asarray(labels))
    if frame.index.equals(labels):
        return weights, indices
    table = pd.DataFrame({"weight": weights, "index": indices}, index=labels)
    unique = table[~table.index.duplicated()]
    if len(unique) != len(table.reset_index().drop_duplicates()):
        raise ValueError(
            "The coreset DataFrame was reordered or filtered after fit_transform, and its row "
            "labels are not unique, so its weights (DataFrame.attrs) cannot follow the rows. "
            "Give the data unique row labels before fitting the coreset, or fit on the "
            "DataFrame fit_transform returned.")
    position = unique.index.get_indexer(frame.index)
    if np.any(position < 0):
        raise ValueError(
            f"{int(np.sum(position < 0))} row label(s) of the DataFrame are not rows of the "
            "coreset whose weights it carries in DataFrame.attrs: it was combined with other "
            "rows or relabelled (e.g. reset_index) after fit_transform. Fit on the coreset "
            "rows as fit_transform returned them (reordering and filtering are fine), or pass "
            "plain data with an explicit sample_weight.")
    return unique["weight"].to_numpy()[position], unique["index"].to_numpy()[position]


def _subset_weights(X):
    """``(sample_weight, sample_indices, n_samples_fit)`` carried by a coreset's output, or
    ``None``; for a DataFrame they follow its current rows (see :func:`_frame_weights`)."""
    if isinstance(X, (WeightedSubset, SparseWeightedSubset)) and X.sample_weight is not None:
        return X.sample_weight, X.sample_indices, X.n_samples_fit
    attrs = getattr(X, "attrs", None)  # pandas output keeps them in DataFrame.attrs
    if isinstance(attrs, dict) and "coreset_sample_weight" in attrs:
        weights, indices = _frame_weights(X, attrs)
        return weights, indices, attrs.get("coreset_n_samples")
    return None


def _coreset_targets(y, indices, n_rows, n_samples_fit):
    """y for the coreset rows: as given when it has one entry per row, else ``y[indices]``
    when it has one entry per row of the data the coreset was built from."""
    n_y = _num_samples(y)
    if n_y == n_rows:
        return y
    if n_y == n_samples_fit or (n_samples_fit is None and n_y > np.max(indices, initial=-1)):
        return y.iloc[indices] if hasattr(y, "iloc") else np.asarray(y)[indices]
    source = ("the data it was built from" if n_samples_fit is None
              else f"the {n_samples_fit} rows it was built from")
    raise ValueError(
        f"y has {n_y} entries, but X is a coreset's weighted subset of {n_rows} rows drawn "
        f"from {source}. Pass y for the coreset rows ({n_rows} entries) or for all the "
        "data the coreset was fitted on.")


def unpack_weighted_subset(X, y, sample_weight):
    """Read the weights of a coreset's output at the start of an estimator's ``fit``.

    When ``X`` is a :class:`WeightedSubset` (or a DataFrame produced by a coreset with pandas
    output), return plain ``X``, ``y`` for the coreset rows (as given when it has one entry
    per row of ``X``, else its entries at the coreset's ``sample_indices`` when it has one
    per row of the data the coreset was fitted on; any other length is an error) and the
    coreset weights. Otherwise return the inputs unchanged.
    """
    carried = _subset_weights(X)
    if carried is None:
        return X, y, sample_weight
    weights, indices, n_samples_fit = carried
    if sample_weight is not None:
        raise ValueError(
            "X is a coreset's weighted subset, which already carries its sample weights; "
            "pass sample_weight to the coreset step instead of the estimator.")
    if hasattr(X, "iloc"):
        X = X.copy()
    else:  # a plain matrix or array of the same rows, without the weights
        X = sparse.csr_matrix(X) if sparse.issparse(X) else np.asarray(X)
    if y is not None:
        y = _coreset_targets(y, indices, _num_samples(X), n_samples_fit)
    return X, y, weights


def carries_weights(X):
    """Whether X is a coreset's output with its weights (without reading them)."""
    if isinstance(X, (WeightedSubset, SparseWeightedSubset)):
        return X.sample_weight is not None
    attrs = getattr(X, "attrs", None)
    return isinstance(attrs, dict) and "coreset_sample_weight" in attrs


def reject_weighted_subset(X):
    """Prediction must see every row: refuse a coreset's weighted subset, loudly."""
    if carries_weights(X):
        raise ValueError(
            "predict received a coreset's weighted subset (the output of its fit_transform) "
            "instead of the data: predictions are made for the rows given, so pass the data "
            "itself. (Fitted Pipelines do: a coreset's transform returns its input.)")
