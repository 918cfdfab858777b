"""Sparse non-negative vector-sum solvers: GIGA and Frank–Wolfe on raw vectors.

Both solvers approximate a target vector ``L`` (by default the sum of the rows of ``vectors``)
by a sparse non-negative combination ``L(w) = sum_n w_n L_n`` of the rows, adding at most one
row per iteration (Campbell & Broderick 2018, Eq. 3). They work on plain arrays, so the geometry
can be used and tested without a model; the Hilbert coreset constructors call them on projected
log-likelihood vectors.

* :func:`giga` — Greedy Iterative Geodesic Ascent (Campbell & Broderick 2018, Algorithm 1) with
  the optimal scaling of Eqs. (10) and (27).
* :func:`frank_wolfe` — Frank–Wolfe on the simplex constraint ``sum_n sigma_n w_n = sigma`` of
  Campbell & Broderick 2018, Eq. (5) (the construction of Campbell & Broderick, "Automated
  scalable Bayesian inference via Hilbert coresets"), with exact line search.

Each iteration reads the ``(N, J)`` matrix once; everything else is ``O(N + J + t)``. The
matrix may be float32 (half the memory; the Hilbert constructors' Monte Carlo projection is far
less accurate than float32 rounding): it is read as it is, and everything accumulated across
rows or iterations is float64. Both solvers are invariant to the scale of their input: vectors
and target are rescaled internally by powers of two, so norms of 1e-200 or 1e200 neither
underflow nor overflow.
"""

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._numbers import is_number
from ._progress import Progress, format_seconds
from ._typing import ArrayInput

__all__ = ["SolverResult", "giga", "frank_wolfe"]

_EPS = np.finfo(np.float64).eps
# Rounding units of the combination's scale sum_n w_n ||L_n|| (relative to ||L||) below which
# a relative residual is noise: a sum of vectors cannot be resolved more finely than that.
_FLOOR_ULPS = 4.0
# A degenerate step with a relative error above this is a genuine optimum, not rounding.
_OPTIMUM_ERROR = np.sqrt(_EPS)
# Rows within ~1e-7 rad of +-ell(w) have no well-defined geodesic direction (Eq. 17). With
# float32 vectors <L_n, ell(w)>^2 carries a relative error ~1e-7, hence the wider float32 cone.
_ALIGNED = {np.dtype(np.float64): 1e-14, np.dtype(np.float32): 1e-5}
# A step whose two terms cancel to this fraction of their size has no significant digits left.
_CANCELLATION = 1e-8
# Bytes per block of rows in the two-column products: ~1 MiB, so that the second column reads
# the block from cache rather than RAM.
_BLOCK_BYTES = 1 << 20
# GIGA derives <L_n, ell(w)> from <L_n, ell> (computed once) and the one per-iteration product
# <L_n, residual>, dividing by the coefficient of ell(w) in the residual; below this coefficient
# (the first iterations, when ell(w) is far from ell) that would amplify rounding, and
# <L_n, ell(w)> gets its own product instead.
_DERIVED_ALIGNMENT = 0.5
# Rows per chunk of GIGA's per-iteration scores: the chunk's few float64 arrays (256 KiB each)
# stay in cache between the elementwise steps instead of going through RAM at each.
_SCORE_ROWS = 1 << 15
# Largest |entry| (as a power of two) kept without rescaling: squares and products of vectors
# this size stay normal floats. Outside, the vectors are copied once, rescaled by 2**-k (exact).
_SAFE_EXPONENT = {np.dtype(np.float64): 400, np.dtype(np.float32): 40}
# "Nothing improves": stop once this many iterations lowered the error by less than this many
# float64 rounding units of it (relative), e.g. steps that only reweight at the rounding floor.
_STALL_WINDOW = 10
_STALL_ULPS = 16.0


@dataclass
class SolverResult:
    """Output of :func:`giga` and :func:`frank_wolfe`.

    Attributes
    ----------
    weights : ndarray of shape (n_vectors,)
        Non-negative weights ``w``; ``sum_n w_n L_n`` approximates the target.
    error : float
        Relative error ``||target - sum_n w_n L_n|| / ||target||`` of ``weights``, recomputed
        exactly from the weights (0 when the target is zero).
    history : ndarray of shape (n_iter, 2)
        Row ``t`` describes the iterate after ``t + 1`` iterations: column 0 is the number of
        non-zero weights, column 1 the relative error tracked by the solver's running sum (for
        GIGA, the error after the optimal scaling of Eq. 10). It agrees with the exact ``error``
        up to accumulated rounding.
    n_iter : int
        Iterations run (each adds or re-weights one vector).
    stop_reason : str
        ``"n_iter"`` (budget used up), ``"tol"`` (relative error <= ``tol``),
        ``"numerical precision"`` (the residual or the step is no longer resolvable in float64:
        the weights are as accurate as the arithmetic allows), ``"optimum"`` (no vector gives an
        improving direction, e.g. the target lies outside the cone of the vectors),
        ``"no progress"`` (the last iterations did not lower a non-negligible error by more
        than rounding),
        ``"zero target"`` (``w = 0`` is exact) or ``"all zero vectors"`` (``w = 0`` is the only
        solution).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.solvers import giga
    >>> vectors = np.random.default_rng(0).normal(size=(200, 5))
    >>> result = giga(vectors, n_iter=20)
    >>> result.size <= 20, result.error < 0.1, result.history.shape
    (True, True, (20, 2))
    """

    weights: np.ndarray
    error: float
    history: np.ndarray
    n_iter: int
    stop_reason: str

    @property
    def converged(self) -> bool:
        """Whether the solver stopped before its iteration budget ran out (bool)."""
        return self.stop_reason != "n_iter"

    @property
    def size(self) -> int:
        """Number of non-zero weights, the coreset size (int)."""
        return int(np.count_nonzero(self.weights))


class _ActiveSet:
    """Weights on the selected rows only, so per-iteration updates cost O(t), not O(N)."""

    def __init__(self, n_iter, n):
        # at most one new row per iteration and never more than all rows: a huge n_iter
        # (e.g. M = 10**10) must not allocate anything of that length
        capacity = min(n_iter, n)
        self.index = np.empty(capacity, dtype=np.intp)
        self.coef = np.zeros(capacity)
        self.k = 0

    def scale(self, factor):
        self.coef[:self.k] *= factor

    def add(self, row, amount):
        hit = np.flatnonzero(self.index[:self.k] == row)
        if hit.size:
            self.coef[hit[0]] += amount
        else:
            self.index[self.k] = row
            self.coef[self.k] = amount
            self.k += 1

    def n_nonzero(self):
        return int(np.count_nonzero(self.coef[:self.k] > 0))

    def combination(self, vectors, row_scale=None):
        """``sum_i coef_i * vectors[index_i] * row_scale[index_i]``, exactly (no running sum)."""
        idx, coef = self.index[:self.k], self.coef[:self.k]
        if row_scale is not None:
            coef = coef * row_scale[idx]
        return coef @ vectors[idx]

    def dense(self, n, row_scale=None):
        weights = np.zeros(n)
        idx, coef = self.index[:self.k], self.coef[:self.k]
        weights[idx] = coef if row_scale is None else coef * row_scale[idx]
        return np.maximum(weights, 0.0)


def _validate(vectors, target, n_iter, tol, scale_target=True):
    """Checked ``(N, J)`` vectors and ``(J,)`` target, rescaled by powers of two.

    Returns ``(vectors, target, sq_norms, shift)``: float32 vectors stay float32 (no copy),
    anything else becomes float64; ``sq_norms`` are float64. The solver runs on
    ``2**a vectors`` and ``2**b target`` with ``a``, ``b`` chosen so that nothing underflows
    or overflows (exact scalings); weights ``w`` found for those are weights
    ``2**(a - b) w`` of the inputs, and ``shift = a - b`` is what :func:`_unscale` applies.
    """
    vectors = np.asarray(vectors)
    if vectors.dtype not in _SAFE_EXPONENT:
        vectors = vectors.astype(np.float64)
    if vectors.ndim != 2 or vectors.shape[0] == 0 or vectors.shape[1] == 0:
        raise ValueError("vectors must be a non-empty 2-D array of shape (n_vectors, dim), got "
                         f"shape {vectors.shape}.")
    if not is_number(n_iter, numbers.Integral) or n_iter < 1:
        raise ValueError(f"n_iter must be a positive integer, got {n_iter!r}.")
    if not is_number(tol) or not tol >= 0:
        raise ValueError(f"tol must be a non-negative number, got {tol!r}.")
    largest = _max_abs(vectors)
    if not np.isfinite(largest):
        raise ValueError("vectors contains NaN or infinity.")
    a = 0
    if largest > 0 and abs(_exponent(largest)) > _SAFE_EXPONENT[vectors.dtype]:
        a = -_exponent(largest)
        vectors = np.ldexp(vectors, a).astype(vectors.dtype, copy=False)
    sq_norms = _sq_norms(vectors)
    if target is None:
        target = vectors.sum(axis=0, dtype=np.float64)
        b = a
    else:
        target = np.asarray(target, dtype=np.float64)
        if target.shape != (vectors.shape[1],):
            raise ValueError(f"target must have shape ({vectors.shape[1]},), got "
                             f"{target.shape}.")
        if not np.all(np.isfinite(target)):
            raise ValueError("target contains NaN or infinity.")
        b = 0
    if not scale_target:  # Frank-Wolfe: the simplex of Eq. (5) ties both to one scale
        target = np.ldexp(target, a - b)
        return vectors, target, sq_norms, 0
    # GIGA's weights follow the target's scale (Eq. 10): bring its largest entry near 1
    top = np.max(np.abs(target))
    if top > 0:
        c = -_exponent(top)
        target = np.ldexp(target, c)
        b += c
    return vectors, target, sq_norms, a - b


def _unscale(result, shift):
    """Weights of the caller's vectors and target from those of the rescaled ones."""
    if shift:
        result.weights = np.ldexp(result.weights, shift)
    return result


def _exponent(x):
    """``k`` with ``2**(k-1) <= |x| < 2**k``."""
    return int(np.frexp(x)[1])


def _blocks(vectors):
    rows = max(1, _BLOCK_BYTES // (vectors.itemsize * vectors.shape[1]))
    for start in range(0, vectors.shape[0], rows):
        yield slice(start, start + rows)


def _max_abs(vectors):
    """Largest ``|entry|`` (NaN if any entry is NaN), in blocks: no ``(N, J)`` temporary."""
    largest = 0.0
    for rows in _blocks(vectors):
        block = vectors[rows]
        top, bottom = float(block.max()), float(block.min())
        if np.isnan(top) or np.isnan(bottom):  # max() would drop a NaN
            return np.nan
        largest = max(largest, top, -bottom)
    return largest


def _sq_norms(vectors):
    """Squared row norms in float64, in blocks (a float32 block is converted, not all rows)."""
    out = np.empty(vectors.shape[0])
    for rows in _blocks(vectors):
        block = np.asarray(vectors[rows], dtype=np.float64)
        np.einsum("ij,ij->i", block, block, out=out[rows])
    return out


def _trivial_result(vectors, target, sq_norms):
    """The zero solution when the target or every vector is zero, else None."""
    target_norm = np.linalg.norm(target)
    if target_norm == 0:
        reason, error = "zero target", 0.0
    elif not np.any(sq_norms > 0):
        reason, error = "all zero vectors", 1.0
    else:
        return None
    return SolverResult(np.zeros(vectors.shape[0]), error, np.empty((0, 2)), 0, reason)


def _exact_error(vectors, weights, target):
    """Relative error of ``weights``, summed over the non-zero rows only."""
    idx = np.flatnonzero(weights)
    residual = target - weights[idx] @ vectors[idx]
    return float(np.linalg.norm(residual) / np.linalg.norm(target))


def _stop_label(error):
    """Name a degenerate step: rounding noise near zero error, a true optimum otherwise."""
    return "numerical precision" if error <= _OPTIMUM_ERROR else "optimum"


def _products(vectors, columns, out):
    """``out[k] = vectors @ columns[k]`` for each row of ``columns``, reading ``vectors`` once.

    BLAS ``gemm`` with a couple of output columns runs far below memory bandwidth; one ``gemv``
    per column on cache-sized blocks of rows reads each block from RAM once and from cache for
    the other columns. Float32 vectors are multiplied in float32 (no converted copy) and the
    products written to the float64 ``out``.
    """
    columns = np.asarray(columns, dtype=vectors.dtype)
    same = out.dtype == vectors.dtype
    for rows in _blocks(vectors):
        block = vectors[rows]
        for column, result in zip(columns, out):
            if same:
                np.matmul(block, column, out=result[rows])
            else:
                result[rows] = block @ column
    return out


def _product(vectors, column, out):
    """``out = vectors @ column`` in the vectors' precision (``out`` of their dtype).

    One BLAS call reads a contiguous matrix once at memory speed; other layouts go by blocks
    of rows, so that no converted copy of all rows is made.
    """
    column = column.astype(vectors.dtype, copy=False)
    if vectors.flags.c_contiguous or vectors.flags.f_contiguous:
        return np.matmul(vectors, column, out=out)
    for rows in _blocks(vectors):
        np.matmul(vectors[rows], column, out=out[rows])
    return out


def _float64_product(vectors, column):
    """``vectors @ column`` accumulated in float64, in blocks (no converted copy of all rows)."""
    if vectors.dtype == np.float64:
        return vectors @ column
    out = np.empty(vectors.shape[0])
    for rows in _blocks(vectors):
        np.matmul(np.asarray(vectors[rows], dtype=np.float64), column, out=out[rows])
    return out


def giga(vectors: Any, target: ArrayInput | None = None, n_iter: int = 100, *,
         tol: float = 0.0, verbose: int = 0) -> SolverResult:
    """Greedy Iterative Geodesic Ascent (Campbell & Broderick 2018, Algorithm 1).

    Builds a sparse non-negative ``w`` with ``sum_n w_n L_n ~ L`` by ascending the alignment
    ``<ell(w), ell>`` on the unit hypersphere (Eq. 12): each iteration picks the row whose
    geodesic from the current direction ``ell(w)`` is best aligned with the geodesic to
    ``ell = L / ||L||`` (Eqs. 17-18), moves along it with the closed-form step (Eq. 21), and the
    output is rescaled optimally (Eqs. 10, 27). The error decays geometrically in the number of
    iterations and is never worse than ``||L||`` (Theorem 3.1, Corollary 3.2).

    Bookkeeping follows option (B) of §3.3: ``ell(w)`` is kept as a running unit vector, so an
    iteration costs one pass over ``vectors`` (one matrix-vector product with the residual
    direction gives every score) plus ``O(N + J + t)``. If rounding makes a step
    degenerate, ``ell(w)`` is rebuilt from the weights once before giving up.

    Parameters
    ----------
    vectors : array-like of shape (n_vectors, dim)
        Row ``n`` is the vector ``L_n`` (e.g. a projected log-likelihood). Converted to float64.
        Zero rows are never selected and get weight 0.
    target : array-like of shape (dim,), default=None
        The vector ``L`` to approximate; defaults to ``sum_n L_n`` (Algorithm 1, line 1).
    n_iter : int, default=100
        Number of iterations ``M``; the result has at most ``n_iter`` non-zero weights.
    tol : float, default=0.0
        Stop once the relative error (after optimal scaling) is at most ``tol``.
    verbose : int, default=0
        When positive, print a progress line every few seconds (iteration, coreset size,
        relative error, elapsed time and an estimate of the time the rest of the
        ``n_iter`` budget would take) and a line saying why and when the solver stopped.

    Returns
    -------
    result : SolverResult
        ``weights``, the exact relative ``error``, per-iteration ``history``, ``n_iter`` and
        ``stop_reason``.

    See Also
    --------
    frank_wolfe : The simplex-constrained baseline of Campbell & Broderick 2018, Eq. (5).

    Notes
    -----
    If no row has a positive inner product with the target, no non-negative combination can do
    better than ``w = 0`` (Eq. 10 gives scale 0); the solver returns it with
    ``stop_reason="optimum"`` and relative error 1.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.solvers import giga
    >>> V = np.random.default_rng(0).standard_normal((1000, 5))
    >>> result = giga(V, n_iter=50)
    >>> result.error < 1e-3, result.size <= 50
    (True, True)
    """
    vectors, target, sq_norms, shift = _validate(vectors, target, n_iter, tol)
    trivial = _trivial_result(vectors, target, sq_norms)
    if trivial is not None:
        return trivial
    n = vectors.shape[0]
    norms = np.sqrt(sq_norms)
    inv_norms = np.divide(1.0, norms, out=np.zeros(n), where=norms > 0)
    state = _GeodesicState(target / np.linalg.norm(target))
    search = _GeodesicSearch(vectors, norms, sq_norms, state.ell)
    active = _ActiveSet(n_iter, n)
    history = []
    progress = Progress("giga", n_iter, verbose)
    for it in range(n_iter):
        stop_reason = _stop_check(state.error, tol, state.floor())
        if stop_reason:
            break
        row, step = search(state)
        if not state.accept(step) and active.k:
            # option (B) drift: rebuild ell(w) from the weights and retry once
            state.rebuild(active, vectors, inv_norms)
            row, step = search(state)
            if not state.accept(step):
                step = None
        if step is None:
            stop_reason = _stop_label(state.error)
            break
        a, b, _ = step
        active.scale(a)
        active.add(row, b)
        history.append((active.n_nonzero(), state.error))
        if progress.due():
            _report(progress, history)
        stop_reason = _stalled(history)
        if stop_reason:
            break
    else:
        stop_reason = "n_iter"

    weights = _giga_output_weights(vectors, target, active, inv_norms, n)
    result = _finish(progress, vectors, weights, target, history, stop_reason)
    if result.error > 1.0:
        # only rounding can make the optimally scaled weights worse than w = 0 (Corollary 3.2)
        result.weights, result.error = np.zeros(n), 1.0
    return _unscale(result, shift)


class _GeodesicState:
    """The running unit vector ``ell(w)`` of option (B), §3.3, and its alignment with ``ell``."""

    def __init__(self, ell):
        self.ell = ell
        self.ell_w = np.zeros_like(ell)
        self.coef_sum = 0.0  # sum_n c_n for ell(w) = sum_n c_n ell_n
        self._align()

    def _align(self):
        self.zeta1 = float(self.ell @ self.ell_w)
        # ||ell - zeta1 ell(w)|| = sqrt(1 - zeta1^2) without the cancellation near zeta1 = 1
        residual = self.ell - self.zeta1 * self.ell_w
        # Re-orthogonalise: the O(eps) component along ell(w) left by rounding would dominate
        # <ell_n, residual> for rows nearly (anti-)parallel to ell(w) once the error is small.
        correction = float(residual @ self.ell_w)
        residual -= correction * self.ell_w
        self.residual = residual
        # residual = ell - along * ell(w) (up to rounding), which _GeodesicSearch.select uses
        self.along = self.zeta1 + correction
        # Eq. (10): a direction with non-positive alignment is scaled to 0, error 1
        self.error = float(np.linalg.norm(self.residual)) if self.zeta1 > 0 else 1.0

    def floor(self):
        """Relative error that rounding of ``ell(w) = sum_n c_n ell_n`` cannot resolve."""
        return _FLOOR_ULPS * _EPS * max(1.0, self.coef_sum)

    def accept(self, step):
        """Move to ``step = (a, b, new ell(w))`` unless it is None or increases the error.

        Eq. (28) makes the error non-increasing; an increase beyond rounding means the step
        was computed from noise, so the state is left unchanged and False returned.
        """
        if step is None:
            return False
        previous = (self.ell_w, self.coef_sum, self.zeta1, self.residual, self.error)
        a, b, self.ell_w = step
        self.coef_sum = a * self.coef_sum + b
        self._align()
        if self.error <= previous[-1] + self.floor():
            return True
        self.ell_w, self.coef_sum, self.zeta1, self.residual, self.error = previous
        return False

    def rebuild(self, active, vectors, inv_norms):
        """Recompute ``ell(w)`` from the weights, renormalising both (Eq. 26)."""
        ell_w = active.combination(vectors, inv_norms)
        norm = np.linalg.norm(ell_w)
        if not (np.isfinite(norm) and norm > 0):
            return
        active.scale(1.0 / norm)
        self.ell_w = ell_w / norm
        self.coef_sum /= norm
        self._align()


class _GeodesicSearch:
    """Point selection (Eqs. 17-18) and step (Eqs. 19-21, 25-26) of Algorithm 1."""

    def __init__(self, vectors, norms, sq_norms, ell):
        self.vectors, self.norms, self.sq_norms = vectors, norms, sq_norms
        # rows (anti-)parallel to ell(w) have no geodesic direction (Eq. 17): their score is
        # set to 0, as is that of zero rows (which would otherwise be 0 / 0)
        self.den_floor = np.where(norms > 0, _ALIGNED[vectors.dtype] * sq_norms, np.inf)
        n = vectors.shape[0]
        # <L_n, ell> in float64, once: with it one product per iteration gives both scores
        self.to_target = _float64_product(vectors, ell)
        # per-chunk buffers: the scores are computed chunk by chunk while they are in cache
        rows = min(n, _SCORE_ROWS)
        self.buffer = np.empty((2, rows))
        # the product with the residual in the vectors' own precision, written in place
        same = vectors.dtype == np.float64
        self.num = self.buffer[0] if same else np.empty(rows, vectors.dtype)
        self.mask = np.empty(rows, dtype=bool)

    def __call__(self, state):
        """Best row and its step ``(a, b, new ell(w))``; the step is None if degenerate."""
        row, score = self.select(state)
        if not score > 0:
            return row, None
        return row, self.step(state, row)

    def select(self, state):
        """Row maximising the geodesic alignment ``<d_t, d_tn>`` (Eqs. 17-18).

        ``residual = ell - zeta1 ell(w)`` is orthogonal to ``ell(w)``, so the alignment is
        ``<L_n, residual> / sqrt(||L_n||^2 - <L_n, ell(w)>^2)`` up to a positive factor common
        to all rows. Since ``residual = ell - c ell(w)``, ``<L_n, ell(w)> = (<L_n, ell> -
        <L_n, residual>) / c``: one matrix-vector product with the raw vectors gives every
        score (its relative rounding shrinks with the residual, so the derived value is as
        accurate as a product of its own once ``c`` is not small).
        """
        derived = state.along >= _DERIVED_ALIGNMENT
        if derived:
            column = state.residual.astype(self.vectors.dtype, copy=False)
        else:
            columns = np.stack([state.residual, state.ell_w])
        n = self.vectors.shape[0]
        best_row, best = 0, -np.inf
        for start in range(0, n, _SCORE_ROWS):
            rows = slice(start, min(start + _SCORE_ROWS, n))
            size = rows.stop - start
            den, mask = self.buffer[1, :size], self.mask[:size]
            if derived:
                num = _product(self.vectors[rows], column, self.num[:size])
                np.subtract(self.to_target[rows], num, out=den)
                np.divide(den, state.along, out=den)
            else:
                num, den = _products(self.vectors[rows], columns, self.buffer[:, :size])
            np.multiply(den, den, out=den)
            np.subtract(self.sq_norms[rows], den, out=den)
            np.less_equal(den, self.den_floor[rows], out=mask)
            np.copyto(den, np.inf, where=mask)
            np.sqrt(den, out=den)
            np.divide(num, den, out=den)
            k = int(np.argmax(den))
            score = float(den[k])
            if np.isnan(score):  # as np.argmax over all rows: the first NaN
                return start + k, score
            if score > best:  # strict: the first of equal maxima, as np.argmax
                best_row, best = start + k, score
        return best_row, best

    def step(self, state, row):
        """Closed-form line search towards ``ell_row`` (Eq. 21), normalised as in Eqs. 25-26.

        Returns ``(a, b, new_ell_w)`` with ``ell(w_{t+1}) = a ell(w_t) + b ell_row``, or None if
        rounding breaks Lemma 3.4 (a step outside [0, 1]) or the result is not finite.
        """
        ell_n = self.vectors[row] / self.norms[row]
        zeta0 = state.ell @ ell_n
        zeta2 = ell_n @ state.ell_w
        # zeta0 - zeta1 zeta2 = <ell_n, residual>: computed directly, without cancellation
        grad_new = ell_n @ state.residual
        grad_old = state.zeta1 - zeta0 * zeta2
        if not (grad_new > 0 and grad_old >= 0):
            return None
        # gamma = grad_new / (grad_new + grad_old); this vector is the projection of ell onto
        # span{ell(w), ell_n} up to a positive factor
        new = grad_old * state.ell_w + grad_new * ell_n
        norm = np.linalg.norm(new)
        # ||new|| << grad_old + grad_new only if ell_n ~ -ell(w): the sum is rounding noise
        if not (np.isfinite(norm) and norm > _CANCELLATION * (grad_old + grad_new)):
            return None
        return grad_old / norm, grad_new / norm, new / norm


def _giga_output_weights(vectors, target, active, inv_norms, n):
    """Weights on the raw vectors with the optimal scaling of Eq. (10).

    Same as Eq. (27) when ``ell(w)`` is exact; computing ``alpha*`` from the combination that
    the returned weights actually give keeps the scaling optimal despite option (B) drift.
    """
    if active.k == 0:
        return np.zeros(n)
    combination = active.combination(vectors, inv_norms)
    sq_norm = combination @ combination
    if not sq_norm > 0:
        return np.zeros(n)
    alpha = max(0.0, float(combination @ target)) / sq_norm
    return active.dense(n, inv_norms) * alpha


def _stalled(history):
    """Stop reason when the last ``_STALL_WINDOW`` iterations improved nothing, else None."""
    if len(history) <= _STALL_WINDOW:
        return None
    before, now = history[-1 - _STALL_WINDOW][1], history[-1][1]
    if before - now > _STALL_ULPS * _EPS * before:
        return None
    return "numerical precision" if now <= _OPTIMUM_ERROR else "no progress"


def _stop_check(error, tol, floor):
    """Stop reason before the next iteration, or None to continue."""
    if tol > 0 and error <= tol:
        return "tol"
    if error <= floor:
        return "numerical precision"
    return None


def _report(progress, history):
    """One progress line; called only when one is due (one clock read per iteration)."""
    size, error = history[-1]
    progress.line(len(history), f"size {size:{progress.width}d}  relative error {error:.3e}")


def _finish(progress, vectors, weights, target, history, stop_reason):
    error = _exact_error(vectors, weights, target)
    progress.message(f"stop: {stop_reason} after {len(history)} iterations, relative error "
                     f"{error:.3e}, {format_seconds(progress.elapsed())}")
    history = np.asarray(history, dtype=np.float64).reshape(-1, 2)
    return SolverResult(weights, error, history, len(history), stop_reason)


def frank_wolfe(vectors: Any, target: ArrayInput | None = None, n_iter: int = 100, *,
                tol: float = 0.0, verbose: int = 0) -> SolverResult:
    """Frank–Wolfe on the simplex-constrained problem of Campbell & Broderick 2018, Eq. (5).

    Minimises ``||L - sum_n w_n L_n||`` over ``w >= 0`` with ``sum_n sigma_n w_n = sigma``,
    ``sigma_n = ||L_n||`` and ``sigma = sum_n sigma_n`` (Eq. 4), i.e. over the convex hull of
    the vertices ``(sigma / sigma_n) L_n`` (Campbell & Broderick's Hilbert coreset construction,
    the baseline of Campbell & Broderick 2018). It starts at the vertex best aligned with ``L``;
    each iteration picks the vertex maximising ``<L - L(w), L_n / sigma_n>`` and takes the exact
    line-search step on the segment towards it. No rescaling is applied: the weights keep the
    simplex scale, which is the point of comparison with :func:`giga` (Campbell & Broderick 2018,
    §2 and Proposition 2.1).

    ``L(w)`` is kept as a running sum, so an iteration costs one matrix-vector product with
    ``vectors`` plus ``O(N + J + t)``. If rounding makes a step degenerate, ``L(w)`` is rebuilt
    from the weights once before giving up.

    Parameters
    ----------
    vectors : array-like of shape (n_vectors, dim)
        Row ``n`` is the vector ``L_n``. Converted to float64. Zero rows are never selected and
        get weight 0.
    target : array-like of shape (dim,), default=None
        The vector ``L`` to approximate; defaults to ``sum_n L_n``. The constraint keeps
        ``sigma = sum_n ||L_n||`` either way.
    n_iter : int, default=100
        Number of iterations (the initial vertex counts as the first); the result has at most
        ``n_iter`` non-zero weights.
    tol : float, default=0.0
        Stop once the relative error is at most ``tol``.
    verbose : int, default=0
        When positive, print a progress line every few seconds (iteration, coreset size,
        relative error, elapsed time and an estimate of the time the rest of the
        ``n_iter`` budget would take) and a line saying why and when the solver stopped.

    Returns
    -------
    result : SolverResult
        ``weights``, the exact relative ``error``, per-iteration ``history``, ``n_iter`` and
        ``stop_reason``; ``"optimum"`` means the Frank–Wolfe gap is not positive (the weights are
        optimal on the simplex). A zero target gives ``w = 0``, exact though off the simplex.

    See Also
    --------
    giga : Geodesic ascent with optimal scaling, Campbell & Broderick 2018, Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset.solvers import frank_wolfe
    >>> V = np.random.default_rng(0).standard_normal((1000, 5))
    >>> result = frank_wolfe(V, n_iter=50)
    >>> bool(np.all(result.weights >= 0)), result.size <= 50
    (True, True)
    """
    vectors, target, sq_norms, shift = _validate(vectors, target, n_iter, tol,
                                                 scale_target=False)
    trivial = _trivial_result(vectors, target, sq_norms)
    if trivial is not None:
        return trivial
    n = vectors.shape[0]
    norms = np.sqrt(sq_norms)
    sigma = norms.sum()
    inv_norms = np.divide(1.0, norms, out=np.zeros(n), where=norms > 0)
    zero_rows = np.flatnonzero(norms == 0)
    target_norm = np.linalg.norm(target)
    # L(w) sums vertices of norm sigma (Eq. 5), so it is rounded at the scale eps * sigma
    floor = _FLOOR_ULPS * _EPS * sigma / target_norm

    active = _ActiveSet(n_iter, n)
    approx = np.zeros_like(target)
    scores = np.empty(n)
    error = 1.0
    history = []
    progress = Progress("frank_wolfe", n_iter, verbose)
    for it in range(n_iter):
        stop_reason = _stop_check(error, tol, floor)
        if stop_reason:
            break
        residual = target - approx
        row, gamma, direction = _fw_step(vectors, inv_norms, zero_rows, sigma, approx, residual,
                                         scores, first=(it == 0))
        if gamma is None:
            # running-sum drift: rebuild L(w) from the weights and retry once
            approx = active.combination(vectors)
            residual = target - approx
            error = float(np.linalg.norm(residual) / target_norm)
            row, gamma, direction = _fw_step(vectors, inv_norms, zero_rows, sigma, approx,
                                             residual, scores, first=False)
        if gamma is None:
            stop_reason = _stop_label(error)
            break
        active.scale(1.0 - gamma)
        active.add(row, gamma * sigma * inv_norms[row])
        approx = approx + gamma * direction
        error = float(np.linalg.norm(target - approx) / target_norm)
        history.append((active.n_nonzero(), error))
        if progress.due():
            _report(progress, history)
        stop_reason = _stalled(history)
        if stop_reason:
            break
    else:
        stop_reason = "n_iter"

    result = _finish(progress, vectors, active.dense(n), target, history, stop_reason)
    return _unscale(result, shift)


def _fw_step(vectors, inv_norms, zero_rows, sigma, approx, residual, scores, first):
    """Frank–Wolfe vertex and exact line-search step; ``gamma`` is None if degenerate.

    Returns ``(row, gamma, direction)`` with ``direction = (sigma / sigma_row) L_row - L(w)``;
    the first step moves all the way to the vertex (the initialisation).
    """
    _products(vectors, residual[None, :], scores[None, :])
    scores *= inv_norms
    scores[zero_rows] = -np.inf
    row = int(np.argmax(scores))
    direction = (sigma * inv_norms[row]) * vectors[row] - approx
    if first:
        return row, 1.0, direction
    # the Frank-Wolfe gap <vertex - L(w), L - L(w)> must be positive to make progress
    gap = direction @ residual
    curvature = direction @ direction
    if not (np.isfinite(gap) and np.isfinite(curvature) and gap > 0 and curvature > 0):
        return row, None, direction
    return row, min(1.0, gap / curvature), direction
