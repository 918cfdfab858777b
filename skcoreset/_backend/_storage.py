"""The contract every row storage fulfils, and the one place that wraps raw rows in one.

The inference functions and the coreset constructors take a :class:`RowStorage`: rows in
this process (:class:`~._memory.InMemoryRows`: an ndarray, a ``np.memmap`` read in chunks,
a CSR matrix) or chunks of dask arrays where they live (:class:`~._dask.DaskRows`). They ask
the storage what it can do (``chunked``, ``file_backed``) rather than which class it is.
"""

from typing import Any, Protocol, runtime_checkable

from ._dask import DaskRows
from ._memory import InMemoryRows


@runtime_checkable
class RowStorage(Protocol):
    """Rows with encoded targets, sample weights and optional offsets (a known term of each
    row's linear predictor, e.g. the log exposure of counts), processed chunk by chunk.

    The functions of rows handed to :meth:`sum`, :meth:`map_rows` and
    :meth:`priority_sample` are called ``function(*args, X, y, w)`` with a chunk's rows,
    and with ``offset=`` its offsets when the rows have them (``has_offset``): a function
    that reads linear predictors takes ``offset=None``, and one that does not fails loudly
    rather than ignore the offsets.

    ``chunked`` says whether every pass is a tree of tasks over chunks that live elsewhere
    (no row is in this process; per-row values are lazy dask arrays) and ``file_backed``
    whether the rows are read from a file, so that code holding per-row state in memory
    can choose a chunked algorithm.
    """

    chunked: bool

    @property
    def n(self) -> int: ...

    @property
    def n_features(self) -> int: ...

    @property
    def file_backed(self) -> bool: ...

    @property
    def has_offset(self) -> bool: ...

    def sum(self, function: Any, *args: Any) -> tuple:
        """``function(*args, X, y, w[, offset=])`` of every chunk, summed (a tuple of
        sums)."""

    def map_rows(self, function: Any, *args: Any) -> Any:
        """``function(*args, X, y, w[, offset=])``: one value per row."""

    def max_abs(self) -> float: ...

    def max_weight(self) -> float: ...

    def total_weight(self) -> float: ...

    def n_positive(self) -> int: ...

    def has_both_classes(self) -> bool: ...

    def every(self, stride: int, *, gather_rows: Any = ...) -> "RowStorage": ...

    def scaled(self, factor: float, exponent: int = 0) -> "RowStorage": ...

    def subsample(self, size: int, rng: Any, *, stream: int = 0) -> Any: ...

    def uniform_sample(self, size: int, rng: Any, *, stream: int = 0,
                       stratify: bool = False) -> Any: ...

    def importance_sample(self, size: int, rng: Any, importance: Any, *,
                          stratify: bool = False) -> Any: ...

    def priority_sample(self, capacities: Any, rng: Any, function: Any, *args: Any,
                        stratify: bool = False) -> Any: ...


def as_storage(X, y=None, sample_weight=None, offset=None):
    """``X`` itself when it is a row storage, else validated rows of this process wrapped
    as one (:class:`~._memory.InMemoryRows` of ``X, y, sample_weight, offset``)."""
    if isinstance(X, (InMemoryRows, DaskRows)):
        return X
    return InMemoryRows(X, y, sample_weight, offset)


def is_chunked(X):
    """Whether ``X`` is a storage of chunks that live elsewhere (dask), whose rows are
    never all in this process."""
    return isinstance(X, (InMemoryRows, DaskRows)) and X.chunked
