"""The one place that knows how rows are stored.

Constructors and inference functions run against a row storage (the contract:
:class:`RowStorage`; :func:`as_storage` wraps raw rows in one; code asks a storage what
it can do, ``chunked`` and ``file_backed``, never which class it is):
:class:`InMemoryRows` for an ndarray, a ``np.memmap`` (read in row chunks, never
materialised) or a scipy.sparse CSR matrix (whose
chunks and drawn rows stay sparse: :func:`float_rows`, :func:`take_rows`) and
:class:`DaskRows` for dask arrays (every pass a tree of tasks where the chunks live). Both
offer sums over rows, per-row values, and uniform and importance draws of rows
(:mod:`._sampling`); chunk loops anywhere in the package run over :func:`row_chunks`, and
per-row results on dask arrays stay lazy (:func:`map_row_blocks`). Dask is imported only
when dask input arrives.
"""

from ._chunks import (Part, block_rng, dense_rows, float_rows, is_dask_collection,
                      offset_keyword, row_chunks, row_keys, row_slice, row_width, stack_rows,
                      take_offset, take_rows, transpose)
from ._dask import DaskRows, as_row_blocks, map_row_blocks
from ._memory import InMemoryRows, float_dtypes
from ._storage import RowStorage, as_storage, is_chunked
from ._sampling import importance_draws, uniform_subset

__all__ = ["DaskRows", "InMemoryRows", "Part", "RowStorage", "as_row_blocks", "as_storage",
           "block_rng", "dense_rows", "float_dtypes", "float_rows", "importance_draws",
           "is_chunked", "is_dask_collection", "map_row_blocks", "offset_keyword", "row_chunks",
           "row_keys", "row_slice", "row_width", "stack_rows", "take_offset", "take_rows",
           "transpose", "uniform_subset"]
