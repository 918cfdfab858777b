"""The linear predictor ``eta = X @ coef + intercept`` and its adjoints.

Parameter vectors are ``theta = [coef..., intercept]`` (intercept last, as in the papers' data
files) when ``fit_intercept`` is true. The intercept column is never materialised, so a large
``X`` is not copied.

``X`` may be a scipy.sparse CSR matrix: products go through sparse BLAS, Grams are summed over
row blocks, over the pairs of nonzero positions of equally long rows (one-hot rows) or by
sparse products (:func:`add_sparse_gram`), and latent variances are quadratic forms over each
row's nonzeros, by the same position pairs for one-hot rows (:func:`latent_variances`), so no
dense copy of many rows is made.
"""

import numpy as np
from scipy import linalg, sparse
# the kernel of scipy's sparse products, for products accumulated over row blocks
from scipy.sparse import _sparsetools

from ._backend import row_slice, transpose


def n_params(n_features, fit_intercept):
    """Length of theta."""
    return n_features + int(fit_intercept)


def split_theta(theta, fit_intercept):
    """``(coef, intercept)`` from theta of shape (p,) or (S, p); intercept is 0 without one."""
    theta = np.asarray(theta)
    if fit_intercept:
        return theta[..., :-1], theta[..., -1]
    return theta, np.zeros(theta.shape[:-1])


def linear_predictor(X, theta, fit_intercept):
    """``eta`` of shape (n,) for theta of shape (p,), or (n, S) for S draws of shape (S, p)."""
    coef, intercept = split_theta(theta, fit_intercept)
    return X @ coef.T + intercept


def rmatvec(X, r, fit_intercept):
    """``A.T @ r`` for the design ``A = [X, 1]`` (or ``X``) and r of shape (n,)."""
    out = np.asarray((transpose(X) if sparse.issparse(X) else X.T) @ r)
    if fit_intercept:
        out = np.append(out, r.sum())
    return out


def add_rmatvec(out, X, r):
    """``out += X.T @ r`` for a CSR block X of float64 rows (e.g. :func:`row_slice`'s) and
    r of its rows: scipy's own kernel of ``X.T @ r``, which adds each row's terms into its
    output in the order of the rows, so a pass over consecutive blocks into one ``out``
    gives the bits of one product with the whole matrix, without a vector of every row."""
    _sparsetools.csc_matvec(X.shape[1], X.shape[0], X.indptr, X.indices, X.data,
                            np.ascontiguousarray(r, dtype=np.float64), out)
    return out


def accumulates_rmatvec(X):
    """Whether :func:`add_rmatvec` takes X's row blocks: a float64 CSR matrix."""
    return (sparse.issparse(X) and X.format == "csr" and X.dtype == np.float64
            and X.indptr.dtype == X.indices.dtype)


_MIN_BLOCK_ROWS = 4096
_BLOCK_BYTES = 2**21
# Nonzeros per row block of a sparse X: each block's Gram is one sparse product whose d x d
# result is added to the dense Gram, so blocks are large (the scaled copy of a block is
# about 12 MB), and their number, not their size, sets that overhead.
_SPARSE_BLOCK_NNZ = 2**20
# Pairs of nonzeros (in the same row) per block of the sparse latent variances: a few
# arrays of this length (about 15 MB in all).
_SPARSE_BLOCK_PAIRS = 2**18


def block_rows(width):
    """Rows per block of a blocked pass over a design of ``width`` float64 columns: about
    2 MB, so that a block stays in cache for the several products made with it, and at least
    4096 rows (at small widths, fewer and larger blocks save per-block Python overhead: 10-20%
    of a pass at d = 10)."""
    return max(_MIN_BLOCK_ROWS, _BLOCK_BYTES // (8 * max(width, 1)))


def sparse_block_rows(X):
    """Rows per block of a blocked pass over a sparse X: about ``2**20`` nonzeros."""
    per_row = max(1.0, X.nnz / max(X.shape[0], 1))
    return max(_MIN_BLOCK_ROWS, int(_SPARSE_BLOCK_NNZ / per_row))


def _fill_block(buffer, X, root, fit_intercept, extra=()):
    """The first ``len(X)`` rows of ``buffer`` set to ``diag(root) @ [X, 1, e_1, ...]`` (the
    intercept column only with ``fit_intercept``; ``root=None``: unscaled, and the intercept
    column is left as it is, i.e. filled with ones once by the caller); returns that view."""
    d = X.shape[1]
    p = d + int(fit_intercept)
    scaled = buffer[:len(X)]
    columns = [(X, scaled[:, :d])] + [(e, scaled[:, p + j]) for j, e in enumerate(extra)]
    if root is None:
        for values, target in columns:
            np.copyto(target, values, casting="same_kind")
        return scaled
    for values, target in columns:
        np.multiply(values, root if values.ndim == 1 else root[:, None], out=target,
                    casting="same_kind")
    if fit_intercept:
        scaled[:, d] = root
    return scaled


def weighted_gram(X, c, fit_intercept, *, dtype=np.float64, extra=()):
    """``A.T @ diag(c) @ A`` for the design ``A = [X, 1]`` (or ``X``) and ``c >= 0``.

    ``c=None`` stands for unit weights (e.g. no sample_weight), without a check of ``c``.

    With ``extra`` columns ``e_1, ..., e_k`` (arrays of shape (n,)), the Gram of
    ``[A, e_1, ..., e_k]`` instead, of shape (p + k, p + k): its last k columns hold
    ``A.T @ (c * e_j)`` and the ``c``-weighted products of the ``e_j``, from the same pass
    over X (e.g. a weighted Gram and a weighted ``A.T @ r`` at the cost of one).

    Accumulated in float64 over blocks of rows of ``sqrt(c) * A``, each written into one
    reused buffer (intercept column included, so one product per block gives every entry) and
    multiplied by its transpose (numpy hands ``B.T @ B`` to BLAS ``syrk``); each block stays
    in cache, and no scaled copy of the whole of X is made. Unit weights are detected: in
    float64 no block is copied (:func:`_unit_gram`), in float32 the blocks are copied unscaled.

    ``dtype=np.float32`` computes the block products in single precision (about twice as
    fast, relative error ~1e-6): an approximate Hessian for intermediate Newton steps, never
    a returned precision. Each block is scaled by its largest weight so its products cannot
    overflow (:func:`add_scaled_gram`); a non-finite result (e.g. from huge entries of X)
    falls back to float64.

    A sparse (CSR) X is summed over blocks of its rows (:func:`add_sparse_gram`: position
    pairs of one-hot-like rows, sparse products of the others), always in float64.
    """
    n, d = X.shape
    if sparse.issparse(X):
        out = np.zeros((d + int(fit_intercept) + len(extra),) * 2)
        size = sparse_block_rows(X)
        for start in range(0, n, size):
            rows = slice(start, min(start + size, n))
            add_sparse_gram(out, row_slice(X, rows), None if c is None else c[rows], fit_intercept,
                            [column[rows] for column in extra])
        return out
    dtype = np.dtype(dtype)
    unit = c is None or np.all(c == 1.0)
    if unit and dtype == np.float64 and X.dtype == np.float64:
        return _unit_gram(X, fit_intercept, extra)
    # unit weights (e.g. no sample_weight): plain copies, about half the cost of the products
    sqrt_c = None if unit else np.sqrt(c)
    width = d + int(fit_intercept) + len(extra)
    size = block_rows(width)
    block = np.empty((min(size, n), width), dtype=dtype)
    if fit_intercept and sqrt_c is None:
        block[:, d] = 1.0
    out = np.zeros((width, width))
    for start in range(0, n, size):
        rows = slice(start, min(start + size, n))
        add_scaled_gram(out, block, X[rows], None if sqrt_c is None else sqrt_c[rows],
                        fit_intercept, [column[rows] for column in extra])
    if dtype != np.float64 and not np.all(np.isfinite(out)):
        return weighted_gram(X, c, fit_intercept, extra=extra)
    return out


def _unit_gram(X, fit_intercept, extra):
    """:func:`weighted_gram` for unit weights in float64, without copying X.

    Per block of rows ``X_b``: its Gram ``X_b.T @ X_b`` (BLAS ``syrk``) and the products
    ``v_b @ X_b`` (``gemv``) of the other columns ``v`` (the intercept's ones, then
    ``extra``) while the block is in cache; their own products from the whole vectors. Copying
    each block into ``[X_b, 1, e_1, ...]`` for one ``syrk``, as the weighted path does, costs
    about as much as the product itself at small d (N = 1e6, d = 20 with one extra column:
    0.046 s against 0.034 s here and 0.024 s for ``X.T @ X``).
    """
    n, d = X.shape
    rows = block_rows(d)
    columns = [np.asarray(column, dtype=np.float64) for column in extra]
    first = int(fit_intercept)  # index of the first extra column among the others
    ones = np.ones(min(rows, n))
    out = np.zeros((d + first + len(columns),) * 2)
    gram, cross, corner = out[:d, :d], out[d:, :d], out[d:, d:]
    for start in range(0, n, rows):
        stop = min(start + rows, n)
        block = X[start:stop]
        gram += block.T @ block
        if fit_intercept:
            cross[0] += ones[:stop - start] @ block
        for j, column in enumerate(columns, start=first):
            cross[j] += column[start:stop] @ block
    out[:d, d:] = cross.T
    if fit_intercept:
        corner[0, 0] = n
        corner[0, 1:] = corner[1:, 0] = [column.sum() for column in columns]
    for j, column in enumerate(columns, start=first):
        for k, other in enumerate(columns[:j - first + 1], start=first):
            corner[j, k] = corner[k, j] = column @ other
    return out


def add_scaled_gram(out, buffer, X, root, fit_intercept, extra=()):
    """Add ``B.T @ B`` to ``out`` for the block of rows ``B = diag(root) @ [A, e_1, ...]``,
    ``A = [X, 1]`` (or ``X``): one block of :func:`weighted_gram` (``root = sqrt(c)``), also
    for callers that make their own pass over the rows (e.g. the value, gradient and Hessian
    of a log posterior together).

    ``buffer`` has at least ``len(X)`` rows and ``out``'s width; ``root=None`` stands for unit
    weights, with the buffer's intercept column set to ones by the caller. In float32 (an
    approximate Gram) the block is scaled by its largest ``root`` so its products cannot
    overflow; entries of X beyond float32's range still give a non-finite ``out``, which the
    caller checks for. A sparse X is added by :func:`add_sparse_gram` (``buffer`` unused).
    """
    if sparse.issparse(X):
        add_sparse_gram(out, X, None if root is None else root * root, fit_intercept, extra)
        return
    scale = 1.0
    if root is not None and buffer.dtype != np.float64:
        scale = float(np.max(root, initial=0.0))
        if scale == 0.0:
            return
        root = root / scale
    with np.errstate(over="ignore", invalid="ignore"):  # the caller checks out
        scaled = _fill_block(buffer, X, root, fit_intercept, extra)
        if scale == 1.0:
            out += scaled.T @ scaled  # numpy hands B.T @ B to BLAS syrk
        else:
            out += scale * scale * (scaled.T @ scaled)


def add_sparse_gram(out, X, c, fit_intercept, extra=()):
    """Add ``B.T @ diag(c) @ B`` to ``out`` for the block of rows ``B = [A, e_1, ...]``,
    ``A = [X, 1]`` (or ``X``) of a sparse (CSR) X; ``c=None``: unit weights.

    The ``d x d`` corner is summed over the pairs of nonzero positions of rows of equal
    length (:func:`_add_position_pairs`, e.g. one-hot rows) where that is cheaper, and by
    one sparse product ``X_r.T @ (c * X_r)`` of the other rows. The intercept and ``extra``
    columns are dense, so their products with X are sparse matrix-vector products. Nothing
    of X is densified.
    """
    n, d = X.shape
    X = X.tocsr()
    c = None if c is None else np.asarray(c, dtype=np.float64)
    rest = _add_pair_gram(out[:d, :d], X, c)
    if rest is None or len(rest):
        X_r, c_r = (X, c) if rest is None else (X[rest], None if c is None else c[rest])
        scaled = X_r if c_r is None else type(X_r)(
            (X_r.data * np.repeat(c_r, np.diff(X_r.indptr)), X_r.indices, X_r.indptr),
            shape=X_r.shape)
        # the d x d product is nearly dense for one-hot rows: adding it as a dense array
        # costs a fifth of scattering its nonzeros (N = 1e5 rows, d = 2000)
        out[:d, :d] += (transpose(X_r) @ scaled).toarray()
    columns = ([np.ones(n)] if fit_intercept else []) + [np.asarray(e, dtype=np.float64)
                                                         for e in extra]
    if columns:
        dense = np.column_stack(columns)
        dense_c = dense if c is None else c[:, None] * dense
        cross = np.asarray(transpose(X) @ dense_c)  # (d, k): X.T @ (c * e)
        out[:d, d:] += cross
        out[d:, :d] += cross.T
        out[d:, d:] += dense.T @ dense_c


# Which rows of a sparse block :func:`_add_pair_gram` sums over position pairs: a cost model in
# units of about 10 ns, measured on one thread (/1 BLAS thread, blocks of 2**20 nonzeros).
# The position-pair sum of n rows of k nonzeros costs ``n P + S + 2000 P`` for the P = k (k -
# 1) / 2 pairs (each row's pair one bincount entry; S the entries of their boxes, each
# zeroed and added twice; about 20 us of numpy calls per pair); the sparse product costs
# ``n k^2`` (5-30 ns per product of two nonzeros) plus ``d^2`` for its dense result, shared
# by the block's rows. Measured crossovers (pairs / sparse product time): one-hot rows,
# d = 2,000: k = 10, 1e5 rows: 0.03 / 0.22 s; k = 100: 0.17 / 0.50 s; k = 300, 3,495 rows:
# 0.93 / 1.03 s (the calls' cost). Positions spanning w of d = 2,000 columns (k = 10):
# 1e5 rows, w = 400: 0.10 / 0.52 s, w = 800: 0.32 / 0.31 s, w = 2000: 2.1 / 0.34 s; 8,192
# rows, w = 200: 0.009 / 0.027 s, w = 400: 0.078 / 0.028 s. Wide boxes that tile the Gram
# still win (k = 10, d = 10,000, 4,096 rows: 0.22 / 0.93 s), overlapping ones (text-like
# rows, every position spanning most columns) lose and take the sparse product.
_PAIR_CALL_COST = 2000


def _add_pair_gram(gram, X, c):
    """Add ``X_g.T @ diag(c_g) @ X_g`` to ``gram`` (``d x d``) for the groups ``g`` of rows
    of X (CSR) with equal numbers of nonzeros whose position-pair sum
    (:func:`_add_position_pairs`) is cheaper than a sparse product (``_PAIR_CALL_COST``);
    returns the indices of the other rows, or None for all of them."""
    n, d = X.shape

    def max_boxes(n_k, k):  # S + 2000 P must fit
        pairs = k * (k - 1) // 2
        return n_k * k * k + d * d * n_k / n - n_k * pairs - _PAIR_CALL_COST * pairs

    done = np.zeros(n, dtype=bool)
    for group in _position_groups(X, max_boxes):
        _add_position_pairs(gram, group, None if c is None else _take_rows(c, group.rows))
        done[_all_rows(group.rows)] = True
    return _rows_left(X, done)


class _PositionGroup:
    """The rows of a CSR matrix with ``k`` nonzeros each, position by position: ``rows``
    (None: all of them), ``columns`` and ``values`` of shape (k, n_rows), the entries at each
    position, and the range ``[lo, lo + width)`` of the columns at each position;
    ``unit``: all values are 1 (one-hot rows).

    When every row of X has ``k`` entries, ``columns`` and ``values`` are views of X's own
    indices and data (row by row, transposed: no copy); otherwise the group's entries are
    gathered position by position (``columns`` in X's index type, no ``k x n_rows`` index
    array of pointers)."""

    def __init__(self, X, rows, k):
        if rows is None:
            span = slice(X.indptr[0], X.indptr[-1])
            self.columns = X.indices[span].reshape(-1, k).T
            self.values = X.data[span].reshape(-1, k).T
        else:
            starts = X.indptr[rows].astype(np.intp)
            self.columns = np.empty((k, len(rows)), dtype=X.indices.dtype)
            self.values = np.empty((k, len(rows)), dtype=X.data.dtype)
            for a in range(k):
                np.take(X.indices, starts, out=self.columns[a])
                np.take(X.data, starts, out=self.values[a])
                starts += 1
        self.rows = rows
        self.lo = self.columns.min(axis=1).astype(np.intp)
        self.width = self.columns.max(axis=1) - self.lo + 1
        self.unit = bool(np.all(self.values == 1.0))


def _position_groups(X, max_boxes):
    """Yield a :class:`_PositionGroup` per group of rows of X (CSR) with ``k >= 1`` nonzeros
    each whose position-pair boxes (``w_a w_b`` entries for each pair of positions
    ``a < b``) hold at most ``max_boxes(n_k, k)`` entries in all, for ``n_k`` such rows.

    The columns found at position ``a`` of the rows span a range ``[lo_a, hi_a]`` (for
    one-hot rows with sorted indices: one feature's levels), so a pair of positions touches
    one small box of a ``d x d`` matrix that stays in cache. Unsorted indices and duplicate
    entries are positions like any other (the sums over positions hold for them too).
    """
    n = X.shape[0]
    counts = np.diff(X.indptr)
    lengths = np.bincount(counts)
    for k in np.flatnonzero(lengths[1:]) + 1:
        n_k = int(lengths[k])
        allowed = max_boxes(n_k, int(k))
        if allowed < 0:  # dear even with empty boxes
            continue
        group = _PositionGroup(X, None if n_k == n else np.flatnonzero(counts == k), int(k))
        width = group.width
        if (np.sum(width) ** 2 - np.sum(width * width)) / 2 > allowed:
            continue
        yield group


def _all_rows(rows):
    return slice(None) if rows is None else rows


def _take_rows(array, rows):
    return array if rows is None else array[rows]


def _rows_left(X, done):
    """The indices of the nonempty rows of X not ``done`` (empty rows add nothing), or None
    when no row is done."""
    if not done.any():
        return None
    return np.flatnonzero(~done & (np.diff(X.indptr) > 0))


def _add_position_pairs(gram, group, c):
    """Add the Gram ``X_g.T @ diag(c) @ X_g`` of a :class:`_PositionGroup` to ``gram``
    (``c=None``: unit weights), summed over the pairs of positions ``a < b`` of its rows.

    The products ``c_i v_ia v_ib`` of a pair of positions are summed by one ``np.bincount``
    into the box ``(lo_a.., lo_b..)`` of the Gram; the Gram gets the box and its transpose,
    and the diagonal the squares ``c_i v_ia^2`` (a duplicate pair's box entry lands on the
    diagonal, twice). For one-hot rows (all values 1) the pairs' weights are ``c`` itself.
    Every temporary is one vector of the group's rows (the positions are read where the
    group holds them): no array of all its entries.
    """
    columns, values, lo, width, unit = (group.columns, group.values, group.lo, group.width,
                                        group.unit)
    k, n_rows = columns.shape
    d = len(gram)
    offset = np.empty(n_rows, dtype=np.intp)
    index = np.empty(n_rows, dtype=np.intp)
    weighted = None if unit else np.empty(n_rows)  # c_i v_ia, per position a
    product = None if unit else np.empty(n_rows)
    diagonal = np.zeros(d)
    for a in range(k):
        np.copyto(offset, columns[a])
        if unit:
            weights_a = c
            diagonal += np.bincount(offset, weights=c, minlength=d)
        else:
            weights_a = values[a] if c is None else np.multiply(values[a], c, out=weighted)
            diagonal += np.bincount(offset, weights=np.multiply(weights_a, values[a],
                                                                out=product), minlength=d)
        offset -= lo[a]  # within position a's range
        rows_a = slice(lo[a], lo[a] + width[a])
        for b in range(a + 1, k):
            # offset_a w_b + column_b: the box's flat index, shifted by lo_b
            np.multiply(offset, width[b], out=index)
            index += columns[b]
            weights = weights_a if unit else np.multiply(weights_a, values[b], out=product)
            box = np.bincount(index, weights=weights, minlength=lo[b] + width[a] * width[b])
            box = box[lo[b]:].reshape(width[a], width[b])
            cols_b = slice(lo[b], lo[b] + width[b])
            gram[rows_a, cols_b] += box
            gram[cols_b, rows_a] += box.T
    gram[np.diag_indices_from(gram)] += diagonal


def latent_moments(X, mean, cov_chol, fit_intercept):
    """Mean and variance of ``eta = x . theta`` for ``theta ~ N(mean, L L^T)``, per row of X.

    ``cov_chol`` is the lower Cholesky factor ``L`` of the covariance; the variance is
    ``||L^T a||^2`` for each design row ``a`` (:func:`latent_variances` with the upper
    triangular ``L^T``), computed without forming ``A @ cov @ A.T``.
    """
    return latent_variances(X, cov_chol.T, fit_intercept, mean=mean, lower=False)


def latent_variances(X, factor, fit_intercept, dtype=np.float64, mean=None, lower=True):
    """``v_n = ||F a_n||^2`` for a triangular ``F`` (e.g. ``L^-1`` with ``V = L^-T L^-1``)
    and each design row ``a_n``: the variance of ``a_n . theta`` for ``theta`` of covariance
    ``F^T F``.

    One blocked pass: each block of design rows is copied (transposed, with its intercept
    row) into a buffer, multiplied in place by ``F`` (BLAS ``trmm``, half the flops of a
    general product; ``lower`` says which triangle ``F`` holds) and reduced to its squared
    column norms, so no ``n x p`` product is stored. ``dtype=np.float32`` runs the products
    in single precision (relative error ~1e-7, about 2.5x faster at p = 100) where the
    variances only enter expectations of smooth functions. ``F`` is scaled by its largest
    entry so the products cannot under- or overflow; a non-finite result (entries of X beyond
    float32's range) is recomputed in float64. With ``mean``, ``(m, v)``: the float64 linear
    predictors ``a_n . mean`` too, from each block while it is in cache.

    A sparse (CSR) X takes :func:`_sparse_latent_variances` instead (in float64).
    """
    if sparse.issparse(X):
        return _sparse_latent_variances(X, factor, fit_intercept, mean, lower)
    n, d = X.shape
    if mean is not None:
        coef, intercept = split_theta(mean, fit_intercept)
        m_lat = np.empty(n)
    p = len(factor)
    dtype = np.dtype(dtype)
    trmm = linalg.get_blas_funcs("trmm", dtype=dtype)
    scale = float(np.max(np.abs(factor), initial=0.0)) or 1.0
    scaled_factor = np.asfortranarray(factor / scale, dtype=dtype)
    block = np.empty((p, min(_MIN_BLOCK_ROWS, n)), dtype=dtype, order="F")
    out = np.empty(n)
    with np.errstate(over="ignore", invalid="ignore"):  # checked below
        for start in range(0, n, _MIN_BLOCK_ROWS):
            stop = min(start + _MIN_BLOCK_ROWS, n)
            rows = X[start:stop]
            if mean is not None:
                np.dot(rows, coef, out=m_lat[start:stop])
            columns = block[:, :stop - start]  # F-ordered: trmm works in place
            np.copyto(columns[:d], rows.T, casting="same_kind")
            if fit_intercept:
                columns[d] = 1.0
            proj = trmm(1.0, scaled_factor, columns, side=0, lower=int(lower), trans_a=0,
                        diag=0, overwrite_b=1)
            out[start:stop] = np.einsum("ij,ij->j", proj, proj)
    out *= scale * scale
    if dtype != np.float64 and not np.all(np.isfinite(out)):
        out = latent_variances(X, factor, fit_intercept, lower=lower)
    if mean is None:
        return out
    return m_lat + intercept, out


def _sparse_latent_variances(X, factor, fit_intercept, mean, lower):
    """:func:`latent_variances` of a sparse (CSR) X: ``v_n = a_n^T Sigma a_n`` with
    ``Sigma = F^T F`` formed once (one ``syrk``, ``p^3 / 3`` flops), each row's quadratic
    form summed over the pairs of its nonzeros (``k^2`` terms for ``k`` nonzeros, against
    ``k p`` for the product ``F a_n``)."""
    n, d = X.shape
    X = X.tocsr()
    factor = np.asarray(factor, dtype=np.float64)
    sigma = linalg.blas.dsyrk(1.0, factor, trans=1)  # F^T F in the upper triangle, 0 below
    p = len(sigma)
    for start in range(0, p, 256):  # the lower triangle from the upper, by column blocks
        stop = min(start + 256, p)
        block = sigma[start:stop, start:stop]
        block[...] = np.triu(block) + np.triu(block, 1).T
        sigma[stop:, start:stop] = sigma[start:stop, stop:].T
    out = row_quadratic_forms(X, sigma, fit_intercept)
    if mean is None:
        return out
    return linear_predictor(X, mean, fit_intercept), out


def row_quadratic_forms(X, matrix, fit_intercept):
    """``a_n^T matrix a_n`` for every design row ``a_n = [x_n, 1]`` (or ``x_n``) and a
    symmetric ``matrix`` of shape (p, p); for a sparse (CSR) X over the position pairs of
    one-hot-like rows or the pairs of each row's nonzeros (:func:`_sparse_quadratic_forms`)."""
    d = X.shape[1]
    if not sparse.issparse(X):
        product = linear_predictor(X, matrix, fit_intercept)  # row n: (matrix a_n)^T
        out = np.einsum("ij,ij->i", product[:, :d], X)
        return out + product[:, d] if fit_intercept else out
    # the whole (contiguous) matrix: the columns of X index its leading d x d block, and a
    # copy of that block would be one more d x d array (32 MB at d = 2000)
    out = _sparse_quadratic_forms(X.tocsr(), np.asarray(matrix))
    if fit_intercept:
        out += 2.0 * np.asarray(X @ matrix[:d, d]) + matrix[d, d]
    return out


def _sparse_quadratic_forms(X, sigma):
    """``x_n^T sigma x_n`` for every row of a CSR matrix X (``sigma`` at least ``d x d``:
    its leading block is used), over blocks of rows of about ``2**20`` nonzeros: summed
    over position pairs (:func:`_add_pair_quadratic_forms`) for groups of one-hot-like rows
    of equal length, over the pairs of each row's nonzeros
    (:func:`_pairwise_quadratic_forms`) for the others."""
    n = X.shape[0]
    # the flat gathers need a C-contiguous array: a Fortran-ordered symmetric sigma (e.g.
    # from BLAS) is its own transpose, which is one (no copy of a p x p array)
    sigma = sigma.T if sigma.flags.f_contiguous else np.ascontiguousarray(sigma)
    out = np.zeros(n)
    size = sparse_block_rows(X)
    for start in range(0, n, size):
        stop = min(start + size, n)
        block = row_slice(X, slice(start, stop))
        rest = _add_pair_quadratic_forms(out[start:stop], block, sigma)
        if rest is None:
            out[start:stop] = _pairwise_quadratic_forms(block, sigma)
        elif len(rest):
            out[start + rest] = _pairwise_quadratic_forms(block[rest], sigma)
    return out


# Which rows :func:`_add_pair_quadratic_forms` sums over position pairs, in the units of
# ``_PAIR_CALL_COST`` (about 10 ns, one thread): the generic sum costs about 4 per term, k^2
# terms per row of k nonzeros (mostly the index arithmetic of its pairs); the position-pair
# sum ``n P + 1000 P`` for the P = k (k - 1) / 2 pairs of n rows (per row and pair an index,
# a gather and an add; the numpy calls of a pair). Measured (generic / pairs, one thread):
# one-hot rows, d = 2,000, k = 10, 2e5 rows: 0.64 / 0.076 s; k = 100, 1e5 rows: 25 / 0.95 s;
# k = 300 (d = 1,800), 2e4 rows: 33 / 1.8 s; k = 10 positions spanning w columns, 1e5 rows:
# w = 800: 0.37 / 0.03 s, w = 2,000: 0.38 / 0.04 s (gathering from sigma itself: copying
# each pair's box first took 0.07 and 0.21 s); text-like rows (20-200 nonzeros of 5,000
# columns, about 100 rows of each length): 3.4 s generic / 3.5 s by pairs, which the model
# leaves to the generic sum.
_PAIRWISE_TERM_COST = 4
_QUADFORM_CALL_COST = 1000


def _add_pair_quadratic_forms(out, X, sigma):
    """Add ``x_n^T sigma x_n`` to ``out[n]`` for the rows of the groups of equally long rows
    of X (CSR) whose position-pair sum is cheaper than the generic one; returns the indices
    of the other nonempty rows, or None for all of them.

    For a pair of positions ``a < b`` the rows' terms ``2 v_a v_b sigma[col_a, col_b]`` are
    gathered from the C-contiguous ``sigma`` (``q x q``, ``q >= d``) by flat index
    ``col_a q + col_b``; the diagonal
    terms are ``v_a^2 sigma[col_a, col_a]``. For one-hot rows the entries themselves lie in
    one small box of sigma per pair (in cache), but gathering from a wide box costs no more
    than index arithmetic, so the boxes' sizes are not limited.
    """
    n = X.shape[0]
    d = sigma.shape[1]

    def max_boxes(n_k, k):
        pairs = k * (k - 1) // 2
        cheaper = (n_k + _QUADFORM_CALL_COST) * pairs <= _PAIRWISE_TERM_COST * n_k * k * k
        return np.inf if cheaper else -1

    done = np.zeros(n, dtype=bool)
    flat = sigma.ravel()  # a view: sigma is C-contiguous
    diagonal = np.diagonal(sigma)
    for group in _position_groups(X, max_boxes):
        columns, values = group.columns, group.values
        k, n_rows = columns.shape
        row_start, index = np.empty(n_rows, dtype=np.intp), np.empty(n_rows, dtype=np.intp)
        terms = np.empty(n_rows)
        total = np.zeros(n_rows)  # the diagonal terms, position by position
        for a in range(k):
            np.copyto(index, columns[a])
            np.take(diagonal, index, out=terms)
            if not group.unit:
                terms *= values[a]
                terms *= values[a]
            total += terms
        pair_sum = np.zeros(n_rows)
        for a in range(k - 1):
            np.multiply(columns[a], d, out=row_start)
            for b in range(a + 1, k):
                np.add(row_start, columns[b], out=index)
                np.take(flat, index, out=terms)
                if not group.unit:
                    terms *= values[a]
                    terms *= values[b]
                pair_sum += terms
        total += 2.0 * pair_sum
        out[_all_rows(group.rows)] += total
        done[_all_rows(group.rows)] = True
    return _rows_left(X, done)


def _pairwise_quadratic_forms(X, sigma):
    """``x_n^T sigma x_n`` for every row of a CSR matrix X, over the pairs of each row's
    nonzeros, in blocks of at most about ``2**18`` pairs."""
    n = X.shape[0]
    counts = np.diff(X.indptr)
    pairs = np.cumsum(counts.astype(np.int64) ** 2)
    out = np.empty(n)
    start = 0
    while start < n:
        done = pairs[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(pairs, done + _SPARSE_BLOCK_PAIRS,
                                                  side="right")))
        stop = min(stop, n)
        lo, hi = X.indptr[start], X.indptr[stop]
        count = counts[start:stop]
        row = np.repeat(np.arange(stop - start), count)  # row of each nonzero
        partners = count[row]  # each nonzero pairs with every nonzero of its row
        first = np.repeat(np.arange(hi - lo), partners)
        within = np.arange(len(first)) - np.repeat(np.cumsum(partners) - partners, partners)
        second = (X.indptr[start:stop] - lo)[row[first]] + within
        data, columns = X.data[lo:hi], X.indices[lo:hi]
        terms = data[first] * data[second] * sigma[columns[first], columns[second]]
        out[start:stop] = np.bincount(row[first], terms, minlength=stop - start)
        start = stop
    return out
