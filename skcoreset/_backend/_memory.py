"""Rows held by this process: an ndarray, a ``np.memmap`` read in row chunks, or a CSR
matrix whose rows stay sparse."""

import numpy as np
from scipy import sparse

from ._chunks import Part, float_rows, offset_keyword, row_chunks, row_width, take_rows
from ._sampling import (importance_draws, merge_priority_lists, priority_chunk,
                        uniform_subset)


def float_dtypes(X):
    """The float dtypes rows ``X`` are validated to: float64, except that a float32
    ``np.memmap`` stays float32, since converting it would load the whole file into memory
    (its rows are read in chunks, :class:`InMemoryRows`)."""
    return [np.float64, np.float32] if isinstance(X, np.memmap) else np.float64


def _unit_scale(values):
    """``values`` times the power of two that brings their largest entry to [0.5, 1)."""
    top = np.max(values, initial=0.0)
    return values if not top > 0 else np.ldexp(values, -np.frexp(top)[1])


class InMemoryRows:
    """Validated rows in this process, with encoded targets and sample weights.

    ``X`` may be a ``np.memmap``: the functions handed to :meth:`sum` and :meth:`map_rows`
    read it in row chunks (:func:`row_chunks`), and only drawn rows are copied. Draws use
    ``rng`` in sequence (the ``stream`` keys of the chunked storage play no role here).

    Parameters
    ----------
    X : ndarray or np.memmap of shape (n, d)
    y : ndarray of shape (n,)
        Encoded targets (``±1`` for the logistic model).
    sample_weight : ndarray of shape (n,)
    offset : ndarray of shape (n,), default=None
        A known term of each row's linear predictor (the log exposure of counts): handed
        with the rows to the functions of :meth:`sum`, :meth:`map_rows` and
        :meth:`priority_sample` as ``offset=`` (see :func:`~._chunks.offset_keyword`).
    """

    chunked = False

    def __init__(self, X, y, sample_weight, offset=None):
        self.X, self.y, self.sample_weight = X, y, sample_weight
        self.offset = offset

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def file_backed(self):
        """Whether X reads a file (a ``np.memmap``, or a view of one: validation returns
        ndarray views), whose rows are never all in memory."""
        array = self.X
        while isinstance(array, np.ndarray):
            if isinstance(array, np.memmap):
                return True
            array = array.base
        return False

    @property
    def has_offset(self):
        """Whether the rows have offsets in their linear predictors."""
        return self.offset is not None

    @property
    def n_features(self):
        return self.X.shape[1]

    def sum(self, function, *args):
        """``function(*args, X, y, w)`` (and ``offset=`` the offsets, when the rows have
        them): a sum over rows (tuple of arrays or numbers)."""
        return function(*args, self.X, self.y, self.sample_weight,
                        **offset_keyword(self.offset))

    def map_rows(self, function, *args):
        """``function(*args, X, y, w)`` (and ``offset=``, as :meth:`sum`): one value per
        row, as an ndarray."""
        return function(*args, self.X, self.y, self.sample_weight,
                        **offset_keyword(self.offset))

    def max_abs(self):
        """Largest ``|x|`` of X (max and min: ``abs`` would copy a memmap whole)."""
        values = self.X.data if sparse.issparse(self.X) else self.X
        return max(float(np.max(values, initial=0.0)), -float(np.min(values, initial=0.0)))

    def max_weight(self):
        return float(np.max(self.sample_weight))

    def total_weight(self):
        return float(np.sum(self.sample_weight))

    def n_positive(self):
        """The number of rows of positive weight."""
        return int(np.count_nonzero(self.sample_weight > 0))

    def has_both_classes(self):
        """Whether rows of positive weight hold both ``±1`` targets."""
        positive = self.sample_weight > 0
        return bool(np.any((self.y > 0) & positive) and np.any((self.y < 0) & positive))

    def every(self, stride, *, gather_rows=None):
        """Rows ``0, stride, 2 stride, ...`` with their weights (and offsets), copied
        contiguously (products with a strided view, or a strided ``np.memmap``, would copy
        them every time)."""
        rows = slice(0, None, stride)
        offset = None if self.offset is None else np.ascontiguousarray(self.offset[rows])
        return InMemoryRows(np.ascontiguousarray(self.X[rows]), self.y[rows],
                            np.ascontiguousarray(self.sample_weight[rows]), offset)

    def scaled(self, factor, exponent=0):
        """The same rows with their weights multiplied by ``factor`` and by ``2**exponent``
        (exactly, by ``np.ldexp``: no power of two under- or overflows on its own)."""
        return InMemoryRows(self.X, self.y, np.ldexp(self.sample_weight, exponent) * factor,
                            self.offset)

    def take(self, indices, weights):
        """The given rows as a :class:`Part` with the given weights; every row in order
        shares X and y (float rows are not copied: a coreset of the whole data)."""
        return Part(indices, weights, float_rows(take_rows(self.X, indices)),
                    take_rows(self.y, indices),
                    offset=None if self.offset is None else self.offset[indices])

    def subsample(self, size, rng, *, stream=0):
        """Up to ``size`` distinct rows of positive weight, uniformly without replacement,
        with their own weights, in the order drawn."""
        rows = np.flatnonzero(self.sample_weight > 0)
        rows = rng.choice(rows, size=min(size, len(rows)), replace=False)
        return self.take(rows, self.sample_weight[rows])

    def uniform_sample(self, size, rng, *, stream=0, stratify=False):
        """Uniform draw without replacement, reweighted to the data's (each stratum's) total
        weight; ``stratify`` draws within each target value (:func:`uniform_subset`)."""
        indices, weights = uniform_subset(size, self.sample_weight, rng,
                                          strata=self.y if stratify else None)
        return self.take(indices, weights)

    def importance_sample(self, size, rng, importance, *, stratify=False):
        """``size`` i.i.d. draws with probability proportional to ``w_n importance_n``
        (:func:`importance_draws`), reweighted to be unbiased.

        Returns the drawn rows and the total of ``w_n importance_n`` (not finite when an
        importance is not: no rows are drawn then).
        """
        with np.errstate(over="ignore", invalid="ignore"):
            total = float(np.sum(self.sample_weight * importance))
        if not np.isfinite(total) or not np.all(np.isfinite(importance)):
            return None, total
        # the draws depend on the proportions only: both factors scaled to a largest entry
        # near 1 (by powers of two, exact), so that weights of 1e-300 do not underflow
        scaled = _unit_scale(self.sample_weight) * _unit_scale(importance)
        indices, factor = importance_draws(size, scaled, rng,
                                           strata=self.y if stratify else None)
        return self.take(indices, self.sample_weight[indices] * factor), total

    def priority_sample(self, capacities, rng, function, *args, stratify=False):
        """Priority samples (:class:`~skcoreset._backend._sampling.PrioritySample`) of the
        rows with importance ``w_n * function(*args, X, y, w)``, one per budget in
        ``capacities``, with independent keys, by one pass over row chunks (the importance
        of a chunk is computed once and never stored for all rows); ``stratify`` samples
        within each target value. The keys hash the row numbers with a seed drawn from
        ``rng`` (:func:`~skcoreset._backend._sampling.priority_keys`): the same rows as
        :meth:`DaskRows.priority_sample` with the same ``rng``."""
        strata = (-1.0, 1.0) if stratify else None
        seed = rng.randint(np.iinfo(np.int32).max)
        samples = None
        for rows in row_chunks(self.n, row_width(self.X) + 1):
            offset = None if self.offset is None else self.offset[rows]
            chunk = priority_chunk(capacities, seed, strata, function, args,
                                   float_rows(self.X[rows]), self.y[rows],
                                   self.sample_weight[rows], rows.start, offset=offset)
            samples = (chunk if samples is None
                       else merge_priority_lists(capacities, samples, chunk))
        return samples
