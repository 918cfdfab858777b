"""Rows read in chunks of bounded memory, seeded random streams, and weighted row sets."""

from typing import NamedTuple

import numpy as np
from scipy import sparse

# Elements (float64: 32 MB) of working memory per row chunk unless a caller sets its budget.
_CHUNK_ELEMENTS = 2**22


def is_dask_collection(obj):
    """Whether ``obj`` is a dask collection, without importing dask."""
    return hasattr(obj, "__dask_graph__") and callable(obj.__dask_graph__)


def row_chunks(n, n_cols=1, *, max_elements=_CHUNK_ELEMENTS, min_rows=1):
    """Slices of consecutive rows, each with at most ``max_elements`` values of ``n_cols``
    columns (at least ``min_rows`` rows), covering ``range(n)``.

    Every loop over the rows of a large array (an ndarray, a ``np.memmap`` read chunk by
    chunk, or one chunk of a dask array) runs over these slices, so its temporaries stay
    bounded whatever ``n``.
    """
    step = max(min_rows, 1, max_elements // max(n_cols, 1))
    for start in range(0, n, step):
        yield slice(start, min(start + step, n))


def block_rng(seed, *key):
    """The random state of one node of a computation over chunks, fixed by the root seed and
    the node's key, so results depend neither on the order nor on the place tasks run in."""
    return np.random.RandomState([seed, *key])


# splitmix64 (Steele, Lea & Flood 2014): the golden-ratio increment and the finaliser's
# multipliers and shifts
_SPLITMIX = tuple(np.uint64(c) for c in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9,
                                         0x94D049BB133111EB, 30, 27, 31, 11))


def row_keys(start, stop, seed=0):
    """Uniform keys in ``[0, 1)`` of the rows numbered ``start, ..., stop - 1``: a hash of
    the numbers (the splitmix64 finaliser), so the rows of smallest keys are the same uniform
    sample without replacement however the rows are split into chunks or arrive in blocks.

    Computed in place in blocks of 65,536 rows (about 10 ns a row).
    """
    golden, mix1, mix2, s30, s27, s31, s11 = _SPLITMIX
    n = stop - start
    out = np.empty(n)
    block = 1 << 16
    z, tmp = np.empty(min(block, n), dtype=np.uint64), np.empty(min(block, n), dtype=np.uint64)
    with np.errstate(over="ignore"):  # the hash wraps around 2^64 by design
        for first in range(0, n, block):
            m = min(block, n - first)
            zz, tt = z[:m], tmp[:m]
            zz[:] = np.arange(start + first + seed + 1, start + first + seed + 1 + m,
                              dtype=np.uint64)
            zz *= golden
            for shift, factor in ((s30, mix1), (s27, mix2), (s31, None)):
                np.right_shift(zz, shift, out=tt)
                zz ^= tt
                if factor is not None:
                    zz *= factor
            zz >>= s11  # 53 random bits
            np.multiply(zz, 2.0**-53, out=out[first:first + m], casting="unsafe")
    return out


def is_every_row(indices, n):
    """Whether ``indices`` are ``0, 1, ..., n - 1`` in order: rows taken so are the array
    itself, which need not be copied (a coreset of the whole data)."""
    indices = np.asarray(indices)
    if len(indices) != n or indices.dtype.kind not in "iu":
        return False
    # n strictly increasing integers from 0 to n - 1 are exactly 0, ..., n - 1
    return n == 0 or (indices[0] == 0 and indices[-1] == n - 1
                      and bool(np.all(indices[1:] > indices[:-1])))


def take_rows(X, indices):
    """Rows of X (ndarray, memmap, DataFrame, scipy.sparse matrix, which stays sparse, or
    dask array; only these rows of a dask array are computed and gathered). Every row in
    order is X itself (as an ndarray or a CSR matrix), not a copy."""
    if hasattr(X, "iloc"):
        return X.iloc[indices]
    if is_dask_collection(X):
        return np.asarray(X[indices].compute())
    if sparse.issparse(X):  # row indexing of CSC is O(nnz) too: no conversion of all rows
        if is_every_row(indices, X.shape[0]):
            return X.tocsr()
        return (X if X.format in ("csr", "csc") else X.tocsr())[indices].tocsr()
    X = np.asarray(X)
    return X if is_every_row(indices, len(X)) else X[indices]


def row_slice(X, rows):
    """The consecutive ``rows`` (a slice) of X without copying them: a view of an ndarray or
    a ``np.memmap``; of a CSR matrix, one sharing its data and indices (scipy's row slicing
    copies them, a second matrix's worth of memory for a block of every row)."""
    if not (sparse.issparse(X) and X.format == "csr"):
        return X[rows]
    start, stop, step = rows.indices(X.shape[0])
    if step != 1:
        return X[rows]
    if start == 0 and stop == X.shape[0]:
        return X
    first, last = X.indptr[start], X.indptr[stop]
    block = sparse.csr_matrix((stop - start, X.shape[1]), dtype=X.dtype)
    # set after construction: scipy's constructor copies a view of less than half of an
    # array (its prune step), i.e. every block of a blocked pass
    block.data, block.indices = X.data[first:last], X.indices[first:last]
    block.indptr = (X.indptr[start:stop + 1] - first).astype(X.indices.dtype, copy=False)
    return block


def transpose(X):
    """``X.T`` of a CSR matrix: a CSC matrix sharing its data, indices and index pointers
    (scipy's own transpose copies the data and indices of a block of rows, whose arrays are
    views of less than half of the matrix's, as its constructor does; 12 MiB per block of
    ``2**20`` nonzeros)."""
    X = X.tocsr()
    csc = sparse.csc_array if isinstance(X, sparse.sparray) else sparse.csc_matrix
    out = csc((X.shape[1], X.shape[0]), dtype=X.dtype)
    # set after construction, as row_slice sets a block's
    out.data, out.indices, out.indptr = X.data, X.indices, X.indptr
    return out


def float_rows(X):
    """Rows of X in float64 for computing with them: a sparse matrix as CSR (products with
    it run through sparse BLAS, nothing is densified), anything else as an ndarray (a
    memmap's rows are read)."""
    if sparse.issparse(X):
        return X.tocsr().astype(np.float64, copy=False)
    return np.asarray(X, dtype=np.float64)


def dense_rows(X):
    """Rows of X as a float64 ndarray, for the few computations that need dense rows; callers
    pass a bounded number of rows (a block, or a coreset's), never all rows of large data."""
    if sparse.issparse(X):
        return X.toarray().astype(np.float64, copy=False)
    return np.asarray(X, dtype=np.float64)


def stack_rows(blocks):
    """Row blocks one under the other: a CSR matrix when they are sparse, else an ndarray."""
    if any(sparse.issparse(block) for block in blocks):
        return sparse.vstack(blocks, format="csr")
    return np.concatenate(blocks)


def row_width(X):
    """Stored values per row of X, the measure of row chunks' memory: the number of columns,
    or the mean number of nonzeros per row of a sparse matrix."""
    if sparse.issparse(X):
        return max(1, -(-X.nnz // max(X.shape[0], 1)))
    return X.shape[1]


def offset_keyword(offset):
    """The keyword arguments that hand a chunk's offsets (a known term of each row's linear
    predictor) to a function of rows: ``offset=`` the offsets, or none when the rows have
    none. A function that reads the rows' linear predictors takes ``offset=None``; one that
    does not cannot be handed rows with offsets by mistake (it fails, naming ``offset``)."""
    return {} if offset is None else {"offset": offset}


def take_offset(offset, rows):
    """The offsets of some rows, or None when there are none."""
    return None if offset is None else take_rows(offset, rows)


class Part(NamedTuple):
    """Weighted rows gathered from some storage: global row numbers, weights, rows and
    encoded targets.

    ``target`` is an additive summary of all the rows the part stands in for (the exact
    projected log-likelihood sum for Hilbert constructors, whose merges then approximate
    the data itself rather than the previous coreset); ``error`` the relative error of the
    part against it (else ``None``); ``offset`` the rows' offsets in the linear predictor
    when the storage has them (else ``None``).
    """

    indices: np.ndarray
    weights: np.ndarray
    X: np.ndarray
    y: np.ndarray
    target: np.ndarray | None = None
    error: float | None = None
    offset: np.ndarray | None = None

    @property
    def size(self):
        """Number of rows (not ``len``: a part must stay a plain tuple of its fields for
        dask's ``sizeof``)."""
        return len(self.indices)

    def take(self, rows, weights, error=None):
        """The sub-part of the given local rows, with new weights, for the same data (every
        row in order: the same arrays, not copies)."""
        return Part(take_rows(self.indices, rows), weights, take_rows(self.X, rows),
                    take_rows(self.y, rows), self.target, error, take_offset(self.offset, rows))

    def union(self, other):
        """The union of parts of disjoint rows (their targets add up)."""
        target = None if self.target is None else self.target + other.target
        offset = (None if self.offset is None
                  else np.concatenate([self.offset, other.offset]))
        return Part(np.concatenate([self.indices, other.indices]),
                    np.concatenate([self.weights, other.weights]),
                    stack_rows([self.X, other.X]), np.concatenate([self.y, other.y]), target,
                    offset=offset)
