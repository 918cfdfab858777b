"""The draws of dask rows, chunk by chunk and merged by a tree of tasks (see
:mod:`._dask`): a distributed reservoir for uniform samples without replacement, priority
samples, and exact multinomial draws mixed slot by slot."""

from typing import NamedTuple

import numpy as np

from ._chunks import Part, block_rng, take_offset
from ._sampling import (_allocate, _allocate_draws, merge_priority_lists,
                        priority_chunk)


# --------------------------------------------------------------------------------------------
# Distributed reservoir: uniform samples without replacement of the rows of positive weight
# --------------------------------------------------------------------------------------------
class _Reservoir(NamedTuple):
    """Per stratum: the smallest keys and their rows, the number and total weight of the
    stratum's rows of positive weight."""

    keys: list
    parts: list
    counts: np.ndarray
    totals: np.ndarray


def _smallest(keys, size):
    order = np.argpartition(keys, size)[:size] if size < len(keys) else np.arange(len(keys))
    order = order[np.argsort(keys[order], kind="stable")]
    return order[np.isfinite(keys[order])]


def reservoir_leaf(size, seed, purpose, strata, X, y, w, start, block, offset=None):
    keys = block_rng(seed, 3, purpose, block).random_sample(len(y))
    keys[w <= 0] = np.inf  # rows standing for nothing are never drawn
    out = _Reservoir([], [], [], [])
    for in_stratum in ([np.ones(len(y), bool)] if strata is None
                       else [y == value for value in strata]):
        stratum_keys = np.where(in_stratum, keys, np.inf)
        rows = _smallest(stratum_keys, size)
        out.keys.append(stratum_keys[rows])
        out.parts.append(Part(start + rows, w[rows], X[rows], y[rows],
                              offset=take_offset(offset, rows)))
        out.counts.append(np.count_nonzero(in_stratum & (w > 0)))
        out.totals.append(w[in_stratum].sum())
    return out._replace(counts=np.array(out.counts), totals=np.array(out.totals))


def reservoir_merge(size, key, *samples):
    keys, parts = [], []
    for s, first in enumerate(samples[0].parts):
        stratum_keys = np.concatenate([sample.keys[s] for sample in samples])
        part = first
        for other in samples[1:]:
            part = part.union(other.parts[s])
        rows = _smallest(stratum_keys, size)
        keys.append(stratum_keys[rows])
        parts.append(part.take(rows, part.weights[rows]))
    return _Reservoir(keys, parts, sum(s.counts for s in samples),
                      sum(s.totals for s in samples))


def first_part(sample):
    return sample.parts[0]


def _union(parts):
    out = parts[0]
    for part in parts[1:]:
        out = out.union(part)
    return out


def finish_uniform(size, sample):
    """Allocate the draws over the strata as in memory; each stratum's rows of smallest
    keys, reweighted to its total weight."""
    alloc = _allocate(size, sample.counts)
    return _union([part.take(np.arange(n_draw), part.weights[:n_draw]
                             * (total / part.weights[:n_draw].sum()))
                   for part, n_draw, total in zip(sample.parts, alloc, sample.totals)
                   if n_draw > 0])


def priority_leaf(capacities, seed, strata, function, args, X, y, w, start, block,
                  offset=None):
    return priority_chunk(capacities, seed, strata, function, args, X, y, w, start, offset)


def merge_priority(capacities, key, *lists):
    return merge_priority_lists(capacities, *lists)


# --------------------------------------------------------------------------------------------
# Importance sampling: per-chunk multinomial draws, mixed slot by slot
# --------------------------------------------------------------------------------------------
class _Draws(NamedTuple):
    """M multinomial draws over some rows: the distinct rows drawn, their importance
    ``w_n m_n``, each draw's row (-1: no draw) and the total importance covered."""

    part: Part
    importance: np.ndarray
    slots: np.ndarray
    total: float


def _draw(M, rng, importance, X, y, w, start, offset=None):
    total = importance.sum()
    if not total > 0 or not np.isfinite(total):  # nothing to draw, or a non-finite importance
        return _Draws(Part(*(a[:0] for a in (np.arange(1), w, X, y)),
                           offset=take_offset(offset, slice(0, 0))), importance[:0],
                      np.full(M, -1), 0.0 if total <= 0 else total)
    draws = rng.choice(len(y), size=M, p=importance / total)
    rows, slots = np.unique(draws, return_inverse=True)
    return _Draws(Part(start + rows, w[rows], X[rows], y[rows],
                       offset=take_offset(offset, rows)), importance[rows], slots, total)


def draw_leaf(M, seed, strata, scores, X, y, w, start, block, offset=None):
    importance = w * np.asarray(scores)
    if strata is None:
        return [_draw(M, block_rng(seed, 4, block), importance, X, y, w, start, offset)]
    out = []
    for s, value in enumerate(strata):
        rows = np.flatnonzero(y == value)
        draws = _draw(M, block_rng(seed, 4, block, s), importance[rows], X[rows], y[rows],
                      w[rows], 0, take_offset(offset, rows))
        out.append(draws._replace(part=draws.part._replace(
            indices=start + rows[draws.part.indices])))
    return out


def _mix(M, rng, children):
    """Slot j takes child i's j-th draw with probability total_i / sum(totals): M i.i.d.
    draws of the multinomial over the union of the children's rows."""
    totals = np.array([c.total for c in children])
    if not totals.sum() > 0 or not np.isfinite(totals.sum()):
        return children[0]._replace(total=totals.sum())
    pick = rng.choice(len(children), size=M, p=totals / totals.sum())
    starts = np.cumsum([0] + [c.part.size for c in children])
    slots = np.choose(pick, [np.where(c.slots >= 0, c.slots + s, -1)
                             for c, s in zip(children, starts)])
    part, importance = children[0].part, children[0].importance
    for c in children[1:]:
        part, importance = part.union(c.part), np.concatenate([importance, c.importance])
    rows, slots = np.unique(slots, return_inverse=True)
    return _Draws(part.take(rows, part.weights[rows]), importance[rows], slots,
                  totals.sum())


def mix_draws(M, seed, key, *children):
    n_strata = len(children[0])
    if n_strata == 1:
        return [_mix(M, block_rng(seed, 5, *key), [c[0] for c in children])]
    return [_mix(M, block_rng(seed, 5, *key, s), [c[s] for c in children])
            for s in range(n_strata)]


def _unbiased(M, draws):
    """Rows and weights ``K_n w_n / (p_n M)`` of M draws (``K_n`` draws of row n)."""
    counts = np.bincount(draws.slots[draws.slots >= 0], minlength=draws.part.size)
    keep = counts > 0
    p = draws.importance[keep] / draws.total
    part = draws.part
    rows = np.flatnonzero(keep)
    return part.take(rows, counts[keep] * part.weights[rows] / (p * M))


def finish_draws(size, strata, draws):
    """The drawn rows and the total importance; stratified, the first draws of each stratum
    as allocated in memory (the first k of M i.i.d. draws are k i.i.d. draws)."""
    totals = np.array([d.total for d in draws])
    total = float(totals.sum())
    if not np.isfinite(total):
        return None, total
    alloc = np.full(1, size)
    if strata is not None:  # as in memory: over the strata of positive importance
        alloc = np.zeros(len(totals), dtype=np.intp)
        alloc[totals > 0] = _allocate_draws(size, totals[totals > 0])
    return _union([_unbiased(n_draw, d._replace(slots=d.slots[:n_draw]))
                   for d, n_draw in zip(draws, alloc) if n_draw > 0]), total
