"""Row subsets, optionally stratified by class, with weights that keep the totals: uniform
without replacement, importance sampling with replacement, and priority sampling (importance
without replacement, in one pass over row chunks)."""

from typing import NamedTuple

import numpy as np

from ._chunks import Part, offset_keyword, row_keys, take_offset


def _allocate(size, counts):
    """Split ``size`` draws over strata of ``counts`` rows: proportional by largest remainder,
    at least one per non-empty stratum while the budget allows, never more than a stratum has.
    """
    counts = np.asarray(counts, dtype=np.intp)
    size = min(size, int(counts.sum()))
    if size == 0:
        return np.zeros_like(counts)
    nonempty = np.flatnonzero(counts > 0)
    alloc = np.zeros_like(counts)
    if size <= len(nonempty):  # not enough for every stratum: the largest ones first
        alloc[nonempty[np.argsort(-counts[nonempty], kind="stable")[:size]]] = 1
        return alloc
    alloc[nonempty] = 1
    while alloc.sum() < size:
        room = counts - alloc
        share = (size - alloc.sum()) * room / room.sum()
        extra = np.minimum(np.floor(share).astype(np.intp), room)
        if extra.sum() == 0:  # remainders only: one more draw to each largest remainder
            order = np.argsort(-(share - np.floor(share)), kind="stable")
            extra[order[:size - alloc.sum()]] = 1
            extra = np.minimum(extra, room)
        alloc += extra
    return alloc


def uniform_subset(size, sample_weight, rng, strata=None):
    """``size`` distinct rows of positive weight, uniformly without replacement.

    Each selected row keeps its incoming weight, rescaled so that the subset's total weight
    equals the data's. With ``strata`` (e.g. the class labels) the draws are split over the
    strata in proportion to their numbers of rows, every stratum gets at least one row while
    ``size`` allows, and the rescaling is per stratum, so each stratum keeps its own total
    weight: a rare class is never dropped.

    Parameters
    ----------
    size : int
        Number of rows to draw (all rows of positive weight when there are fewer).
    sample_weight : ndarray of shape (n,)
        Non-negative incoming weights.
    rng : numpy.random.RandomState
    strata : ndarray of shape (n,), default=None
        Stratum label of every row.

    Returns
    -------
    indices : ndarray of shape (n_selected,)
    weights : ndarray of shape (n_selected,)
    """
    if size < 1:  # a constructor whose parameters were not validated (e.g. nested in another)
        raise ValueError(f"The coreset size M must be at least 1, got {size}.")
    candidates = np.flatnonzero(sample_weight > 0)
    if strata is None:
        groups = [candidates]
    else:
        _, codes = np.unique(strata[candidates], return_inverse=True)
        order = np.argsort(codes, kind="stable")
        groups = np.split(candidates[order], np.cumsum(np.bincount(codes))[:-1])
    alloc = _allocate(size, [len(group) for group in groups])
    indices, weights = [], []
    for group, n_draw in zip(groups, alloc):
        if n_draw == 0:
            continue
        chosen = rng.choice(group, size=n_draw, replace=False)
        indices.append(chosen)
        weights.append(sample_weight[chosen]
                       * (sample_weight[group].sum() / sample_weight[chosen].sum()))
    return np.concatenate(indices), np.concatenate(weights)


def _allocate_draws(size, mass):
    """Split ``size`` draws with replacement over strata of positive ``mass``: one each while
    the budget allows (largest masses first), the rest in proportion to the mass by largest
    remainder."""
    alloc = np.zeros(len(mass), dtype=np.intp)
    order = np.argsort(-mass, kind="stable")
    if size <= len(mass):
        alloc[order[:size]] = 1
        return alloc
    share = (size - len(mass)) * mass / mass.sum()
    alloc += 1 + np.floor(share).astype(np.intp)
    remainder = np.argsort(-(share - np.floor(share)), kind="stable")
    alloc[remainder[:size - alloc.sum()]] += 1
    return alloc


def importance_draws(size, importance, rng, strata=None):
    """``size`` i.i.d. draws of rows with probability proportional to ``importance``.

    Returns the distinct drawn rows and the factor ``K_n / (p_n size)`` (``K_n`` draws of
    row n, each with probability ``p_n``) that makes ``sample_weight * factor`` an unbiased
    reweighting. With ``strata`` the draws are split over the strata (at least one each
    while ``size`` allows, the rest in proportion to their importance) and ``p_n`` and the
    number of draws are those of the row's stratum: stratified sampling, still unbiased,
    and no stratum of positive importance is missed. Rows are drawn by inverse transform
    sampling on the cumulative importance, which, unlike ``multinomial``, has no tolerance
    on the sum of the probabilities.

    Parameters
    ----------
    size : int
        Number of draws.
    importance : ndarray of shape (n,)
        Finite, non-negative, with a positive sum.
    rng : numpy.random.RandomState
    strata : ndarray of shape (n,), default=None
        Stratum label of every row.

    Returns
    -------
    indices : ndarray of shape (n_selected,)
    factor : ndarray of shape (n_selected,)
    """
    # row groups built from boolean masks: few O(N) temporaries (X may be a large memmap)
    positive = importance > 0
    if strata is None:
        groups = [np.flatnonzero(positive)]
    else:
        groups = [np.flatnonzero(positive & (strata == label))
                  for label in np.unique(strata[positive])]
    mass = np.array([importance[group].sum() for group in groups])
    alloc = _allocate_draws(size, mass)
    indices, factors = [], []
    for group, group_mass, n_draw in zip(groups, mass, alloc):
        if n_draw == 0:
            continue
        cumulative = np.cumsum(importance[group])
        u = rng.random_sample(n_draw) * cumulative[-1]
        # u < cumulative[-1], so the first cumulative sum above u is a row of positive mass
        position = np.minimum(np.searchsorted(cumulative, u, side="right"), len(group) - 1)
        rows, draws = np.unique(group[position], return_counts=True)
        indices.append(rows)
        factors.append(draws * group_mass / (importance[rows] * n_draw))
    order = np.argsort(np.concatenate(indices), kind="stable")
    return np.concatenate(indices)[order], np.concatenate(factors)[order]


# --------------------------------------------------------------------------------------------
# Priority sampling: importance sampling without replacement, chunk by chunk
# --------------------------------------------------------------------------------------------
class PrioritySample(NamedTuple):
    """The rows of highest priority ``lambda_n / u_n`` (``u_n`` uniform on (0, 1]) of some
    rows, per stratum: at most ``capacity + 1`` of them, in decreasing priority.

    ``parts`` holds each stratum's kept rows (their incoming weights, X and encoded y),
    ``priorities`` and ``importance`` their priorities and importances ``lambda_n``,
    ``masses`` the stratum's total importance and ``counts`` its number of rows of positive
    importance. Samples of disjoint rows merge into the sample of their union
    (:func:`merge_priority`), so one pass over row chunks, or a tree of tasks over dask
    chunks, draws from all rows; :meth:`draw` then takes any budget up to ``capacity``.
    """

    priorities: list
    importance: list
    parts: list
    masses: np.ndarray
    counts: np.ndarray

    def allocation(self, size, balanced=False):
        """Rows per stratum for a budget of ``size``: one each while the budget allows,
        the rest in proportion to the strata's masses (:func:`_allocate_draws`) or, with
        ``balanced``, equally; a stratum never gets more rows than it has, its surplus going
        to the others."""
        alloc = np.zeros(len(self.masses), dtype=np.intp)
        open_ = self.masses > 0
        shares = np.ones(len(self.masses)) if balanced else self.masses
        size = min(size, int(self.counts[open_].sum()))
        while size > alloc.sum():
            strata = np.flatnonzero(open_)
            alloc[strata] += _allocate_draws(size - alloc.sum(), shares[strata])
            full = alloc >= self.counts
            alloc = np.minimum(alloc, self.counts)
            open_ &= ~full
        return alloc

    def draw(self, size, balanced=False):
        """The ``size`` rows of highest priority (per stratum, as allocated), as a
        :class:`Part` with Horvitz-Thompson weights ``w_n / min(1, lambda_n / z)``.

        ``z`` is the stratum's next-highest priority: conditionally on the other rows' keys,
        row n is kept exactly when its priority exceeds ``z``, which has probability
        ``min(1, lambda_n / z)``, so the weighted sum of any function of the rows is
        unbiased for its sum over all rows (Duffield, Lund & Thorup, 2007). Rows whose
        importance alone reaches the threshold are kept with certainty and their own
        weight. The rows of a smaller budget are a subset of those of a larger one.
        ``balanced`` allocates the budget equally over the strata (see :meth:`allocation`).
        """
        parts = []
        for part, priority, importance, k in zip(self.parts, self.priorities, self.importance,
                                                 self.allocation(size, balanced)):
            if k == 0:
                continue
            inclusion = (np.ones(k) if len(priority) <= k
                         else np.minimum(1.0, importance[:k] / priority[k]))
            rows = np.arange(k)
            parts.append(part.take(rows, part.weights[:k] / inclusion))
        if not parts:
            return None
        out = parts[0]
        for part in parts[1:]:
            out = out.union(part)
        return out


def _top(priority, size):
    """Positions of the ``size`` largest priorities, largest first."""
    if size < len(priority):
        order = np.argpartition(-priority, size)[:size]
    else:
        order = np.arange(len(priority))
    return order[np.argsort(-priority[order], kind="stable")]


# Rows per random stream of priority keys: the streams of a seed never overlap below it.
_STREAM_ROWS = 2**40


def priority_keys(seed, stream, start, stop):
    """Uniform keys in ``[0, 1)`` of the rows numbered ``start, ..., stop - 1`` for random
    stream ``stream`` of the root ``seed``: a hash of the row numbers (:func:`row_keys`,
    shifted to the stream's own range), so a priority sample keeps the same rows however
    they are split into chunks, in memory or on a cluster."""
    first_row = ((seed * 16 + stream) % 2**23) * _STREAM_ROWS
    return row_keys(start, stop, seed=first_row)


def priority_leaf(capacity, keys, importance, strata, X, y, w, start, offset=None):
    """The :class:`PrioritySample` of one chunk of rows (global row numbers from
    ``start``; ``offset`` their offsets, kept with the rows): ``keys`` are the rows' uniform
    keys (:func:`priority_keys`); ``importance`` is ``lambda_n`` of every row (rows of zero
    importance are never kept), ``strata`` the values of y that define the strata (None:
    one stratum)."""
    importance = np.asarray(importance, dtype=float)
    u = 1.0 - keys  # in (0, 1]: finite priorities
    with np.errstate(divide="ignore", invalid="ignore"):
        priority = np.where(importance > 0, importance / u, 0.0)
    out = PrioritySample([], [], [], [], [])
    for value in ([None] if strata is None else strata):
        member = importance > 0 if value is None else (importance > 0) & (y == value)
        rows = np.flatnonzero(member)
        keep = rows[_top(priority[rows], capacity + 1)]
        out.priorities.append(priority[keep])
        out.importance.append(importance[keep])
        out.parts.append(Part(start + keep, w[keep], X[keep], y[keep],
                              offset=take_offset(offset, keep)))
        out.masses.append(importance[rows].sum())
        out.counts.append(len(rows))
    return out._replace(masses=np.array(out.masses), counts=np.array(out.counts))


def merge_priority(capacity, *samples):
    """The :class:`PrioritySample` of the union of the rows of ``samples`` (disjoint rows,
    the same strata)."""
    first = samples[0]
    out = PrioritySample([], [], [], sum(s.masses for s in samples),
                         sum(s.counts for s in samples))
    for s in range(len(first.parts)):
        priority = np.concatenate([sample.priorities[s] for sample in samples])
        importance = np.concatenate([sample.importance[s] for sample in samples])
        part = first.parts[s]
        for sample in samples[1:]:
            part = part.union(sample.parts[s])
        keep = _top(priority, capacity + 1)
        out.priorities.append(priority[keep])
        out.importance.append(importance[keep])
        out.parts.append(part.take(keep, part.weights[keep]))
    return out


def priority_chunk(capacities, seed, strata, function, args, X, y, w, start, offset=None):
    """One :class:`PrioritySample` per budget in ``capacities`` of a chunk (global row
    numbers from ``start``), with independent keys (stream ``k`` of ``seed`` for the k-th
    budget, :func:`priority_keys`) and the importance ``w_n * function(*args, X, y, w)``
    (with ``offset=`` the rows' offsets when there are any) computed once for all of them."""
    importance = w * np.asarray(function(*args, X, y, w, **offset_keyword(offset)),
                                dtype=float)
    stop = start + len(importance)
    return [priority_leaf(capacity, priority_keys(seed, stream, start, stop), importance,
                          strata, X, y, w, start, offset)
            for stream, capacity in enumerate(capacities)]


def merge_priority_lists(capacities, *lists):
    """:func:`merge_priority` of lists of samples (one per budget), position by position."""
    return [merge_priority(capacity, *samples)
            for capacity, samples in zip(capacities, zip(*lists))]
