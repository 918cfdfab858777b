"""Row subsets, optionally stratified by class, with weights that keep the totals: uniform
without replacement, and importance sampling with replacement."""

import numpy as np


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
