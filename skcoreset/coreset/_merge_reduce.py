"""Merge-reduce (Huggins, Campbell & Broderick 2016, §3.4): the binary tree of block coresets, the
context every leaf and merge shares, and the weighting distribution of Hilbert constructors
computed from sums over all rows.

Two observations make any coreset construction streaming and parallel: the union of coresets
of disjoint blocks is a coreset of the union of the blocks, and a coreset of a coreset is a
coreset of the original data (with the errors compounding as ``(1 + eps)(1 + eps') - 1``).
Coresets of consecutive blocks are therefore merged pairwise in a binary tree, each union
compressed again by the base constructor, so only ``O(log B)`` block coresets of ``B`` blocks
are alive at once. The same tree runs in memory (:class:`StreamingCoreset`, leaves optionally
built in parallel with joblib) and over the chunks of a dask array
(:func:`merge_reduce_chunks`, every leaf and merge a task on the cluster), which is how
every constructor without a chunked algorithm of its own fits dask arrays.
"""

import copy
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from .._backend import Part, block_rng, float_rows, offset_keyword, row_chunks, take_offset
from .._inference import laplace
from ._projection import project_loglik, weighting_exponent, weights_carry_exposures

# Row chunks of at most 2**19 float64 values (4 MiB), at least 1024 rows.
_CHUNKS = dict(max_elements=2**19, min_rows=1024)


def projected_sum(X, y, sample_weight, family, thetas, fit_intercept, offset=None):
    """Sum of the rows' projected log-likelihood vectors (Campbell & Broderick 2018, eq. 39), in
    chunks (with the rows' offsets in their linear predictors)."""
    total = np.zeros(len(thetas))
    for rows in row_chunks(X.shape[0], len(thetas), **_CHUNKS):
        total += project_loglik(X[rows], y[rows], sample_weight[rows], family, thetas,
                                fit_intercept,
                                offset=None if offset is None else offset[rows]).sum(axis=0)
    return total


@dataclass
class BlockContext:
    """What every leaf and merge task needs: the base constructor and the shared likelihood.

    Parameters
    ----------
    builder : BaseCoreset
        A clone of the base constructor with ``model_`` set (its ``_build`` is called).
    family : Family
        Likelihood family of the encoded targets.
    prior_prec : ndarray of shape (p,)
        Diagonal prior precision.
    seed : int
        Root seed; node ``key`` draws from ``block_rng(seed, *key)``.
    thetas : ndarray of shape (J, p) or None
        Shared projection draws for Hilbert constructors (``None`` for the others).
    """

    builder: object
    family: object
    prior_prec: np.ndarray
    seed: int
    thetas: np.ndarray | None = None

    def compress(self, part, key):
        """Coreset of a weighted part by the base constructor (observation (2)).

        A part with at most M rows of positive weight is already as small as the budget:
        compressing it could only add error, so it is returned as it is (a builder that
        sizes its coresets itself, ``M="auto"``, has no such budget and sees every part).
        """
        keep = np.flatnonzero(part.weights > 0)
        budget = self.builder._budget()
        if budget is not None and len(keep) <= budget:
            return part.take(keep, part.weights[keep], self._error(part))
        X, y, w = part.X[keep], part.y[keep], part.weights[keep]
        builder = copy.copy(self.builder)  # _build sets attributes: one copy per task/thread
        rows, weights = builder._build_block(
            X, y, w, self.family, self.prior_prec, block_rng(self.seed, *key),
            thetas=self.thetas, target=part.target,
            **offset_keyword(take_offset(part.offset, keep)))
        positive = weights > 0
        return part.take(keep[rows[positive]], weights[positive],
                         getattr(builder, "error_", None))

    def _error(self, part):
        """Relative error of a Hilbert part against its exact target, else ``None``."""
        if self.thetas is None:
            return None
        vectors = project_loglik(part.X, part.y, part.weights, self.family, self.thetas,
                                 self.builder.fit_intercept, offset=part.offset)
        # relative to the target's largest entry, so that tiny weights do not underflow
        top = np.max(np.abs(part.target))
        if not top > 0:
            return 0.0
        residual = np.linalg.norm((part.target - vectors.sum(axis=0)) / top)
        return residual / np.linalg.norm(part.target / top)

    def leaf(self, X, y, sample_weight, start, block, offset=None):
        """Coreset of one block of rows ``start, start + 1, ...`` (with their offsets in
        the linear predictor, or None)."""
        X, w = float_rows(X), np.asarray(sample_weight, dtype=float)
        target = None
        if self.thetas is not None:
            target = projected_sum(X, y, w, self.family, self.thetas,
                                   self.builder.fit_intercept, offset)
        whole = Part(np.arange(start, start + X.shape[0]), w, X, np.asarray(y), target,
                     offset=offset)
        return self.compress(whole, (0, block))

    def merge(self, left, right, first, last):
        """Union of two parts covering blocks ``first..last``, compressed again."""
        return self.compress(left.union(right), (1, first, last))


class MergeTree:
    """Binary-counter merge-reduce tree over consecutive blocks (Huggins et al. 2016, §3.4).

    ``levels[k]`` holds ``(first, last, part)`` covering ``2**k`` blocks or ``None``: pushing a
    block merges equal levels like a carry in binary addition, so ``B`` blocks leave at most
    ``log2(B) + 1`` parts alive. ``merge(left, right, first, last)`` may return a value now
    (in memory) or a ``dask.delayed`` object (on a cluster): the tree is the same.
    """

    def __init__(self, merge):
        self.merge = merge
        self.levels = []

    def copy(self):
        """A tree with the same parts, to push more blocks into."""
        tree = MergeTree(self.merge)
        tree.levels = list(self.levels)
        return tree

    def _combine(self, left, right):
        return (left[0], right[1], self.merge(left[2], right[2], left[0], right[1]))

    def push(self, block, part):
        """Add the coreset of block ``block`` (blocks arrive in order)."""
        node, k = (block, block, part), 0
        while k < len(self.levels) and self.levels[k] is not None:
            node = self._combine(self.levels[k], node)
            self.levels[k] = None
            k += 1
        if k == len(self.levels):
            self.levels.append(None)
        self.levels[k] = node
        return node[2]

    def root(self):
        """Fold the live parts, smallest first, into one coreset (the tree is unchanged)."""
        acc = None
        for node in self.levels:
            if node is not None:
                acc = node if acc is None else self._combine(node, acc)
        return acc[2]

    def n_alive(self):
        return sum(node is not None for node in self.levels)


def block_builder(base, model, dispersion_estimated=False):
    """A quiet clone of the base constructor ready for ``_build`` on encoded data;
    ``dispersion_estimated``: the family's overdispersion was estimated from the data (the
    estimator fitted on the coreset estimates it again, so the blocks calibrate it too)."""
    builder = clone(base)
    if "verbose" in builder.get_params():
        builder.set_params(verbose=0)
    builder.model_ = model
    builder._dispersion_estimated = dispersion_estimated
    return builder


def make_context(base, model, data, family, prior_prec, rng, dispersion_estimated=False):
    """The :class:`BlockContext` of a new tree over the rows of ``data`` (an
    :class:`~skcoreset._backend.InMemoryRows` or :class:`~skcoreset._backend.DaskRows`):
    root seed, builder and, for Hilbert constructors, the shared projection drawn from the
    weighting distribution of all of ``data`` (see :func:`weighting_access`).
    """
    seed = rng.randint(np.iinfo(np.int32).max)
    builder = block_builder(base, model, dispersion_estimated)
    thetas = builder._block_projection(
        data.n, family, prior_prec, block_rng(seed, 2),
        **weighting_access(data, family, prior_prec, builder.fit_intercept))
    return BlockContext(builder, family, prior_prec, seed, thetas)


# --------------------------------------------------------------------------------------------
# The shared weighting distribution of Hilbert coresets: the Laplace fit of all rows
# --------------------------------------------------------------------------------------------
def _positive_weight(top, X, y, sample_weight, offset=None):
    """``sum_n ldexp(w_n, -top)`` over the rows (in row chunks: no temporary of all the
    rows; their offsets play no part)."""
    total = 0.0
    for rows in row_chunks(len(y), 1, **_CHUNKS):
        total += np.ldexp(sample_weight[rows], -top).sum()
    return (total,)


def weighting_access(data, family, prior_prec, fit_intercept):
    """``full_laplace`` and ``subsample`` callables of ``BaseCoreset._block_projection`` for
    the rows of a storage, which read them by sums over rows and by draws.

    ``full_laplace`` is the Laplace fit of the estimators on all rows (every Newton step one
    pass over the rows in memory, or one reduction over their chunks on a cluster), on
    the weights of :func:`~skcoreset.coreset._projection.weighting_weights`, as in memory:
    under the Poisson model the weights as they are (scaled down past a total of 2^32),
    under the others divided by their mean over the rows of positive weight (after an
    exact rescaling by a power of two, so that neither 1e-300 nor 1e300 under- or
    overflows).
    """
    def full_laplace():
        if weights_carry_exposures(family):
            rows = data.scaled(1.0, exponent=weighting_exponent(data.total_weight()))
        else:
            top = np.frexp(data.max_weight())[1]
            total, = data.sum(_positive_weight, top)
            rows = data.scaled(data.n_positive() / total, exponent=-top)
        return laplace(rows, None, family, sample_weight=None, prior_prec=prior_prec,
                       fit_intercept=fit_intercept).posterior

    def subsample(size, rng):
        part = data.subsample(size, rng, stream=2)
        rows = np.argsort(part.indices)  # in row order: a memmap is read sequentially
        return part.X[rows], part.y[rows], part.weights[rows], take_offset(part.offset, rows)

    return dict(full_laplace=full_laplace, subsample=subsample)


# --------------------------------------------------------------------------------------------
# The tree over the chunks of a chunked storage (dask): every leaf and merge a task
# --------------------------------------------------------------------------------------------
def _leaf(context, per_chunk, X, y, sample_weight, start, block, offset=None):
    part = context.leaf(X, y, sample_weight, start, block, offset)
    return part, (() if per_chunk is None else (per_chunk(y, sample_weight),))


def _merge(context, left, right, first, last):
    # the chunks' values travel up the tree with their coresets: no task of their own
    return context.merge(left[0], right[0], first, last), left[1] + right[1]


def chunk_tree(base, model, data, family, prior_prec, rng, dispersion_estimated=False,
               per_chunk=None):
    """The tree of :func:`merge_reduce_chunks` as tasks of the storage, not computed.

    Every node is the task of a pair: the coreset of its chunks (a
    :class:`~skcoreset._backend.Part`) and, with ``per_chunk``, the tuple of
    ``per_chunk(y, sample_weight)`` of each of its chunks (encoded targets and weights), in
    chunk order, computed in the chunk's leaf task, so that they read no row again and
    add no task (empty without ``per_chunk``).

    Returns
    -------
    context : BlockContext
    tree : MergeTree
        ``data.gather(tree.root())`` is the pair of all the chunks.
    """
    context = make_context(base, model, data, family, prior_prec, rng,
                           dispersion_estimated)
    shared = data.shared(context)  # one copy on the cluster, not one per task
    merge = data.task(_merge)
    tree = MergeTree(lambda left, right, first, last: merge(shared, left, right, first, last))
    for block, leaf in enumerate(data.chunk_tasks(_leaf, shared, per_chunk)):
        tree.push(block, leaf)
    return context, tree


def merge_reduce_chunks(base, model, data, family, prior_prec, rng,
                        dispersion_estimated=False, per_chunk=None):
    """Merge-reduce with ``base`` over the chunks of ``data`` (one leaf per chunk).

    The tree of :class:`StreamingCoreset` as tasks of the storage, so the result equals
    ``StreamingCoreset(base, block_size=<chunk size>)`` fitted in memory with the same
    ``rng``; only the root is gathered (with ``per_chunk`` as in :func:`chunk_tree`).

    Returns
    -------
    context : BlockContext
    tree : MergeTree
        Its nodes are the storage's tasks (see :func:`chunk_tree`).
    root : Part
        The gathered coreset of all rows.
    values : tuple
        ``per_chunk(y, sample_weight)`` of every chunk, in chunk order (empty without
        ``per_chunk``).
    """
    context, tree = chunk_tree(base, model, data, family, prior_prec, rng,
                               dispersion_estimated, per_chunk)
    root, values = data.gather(tree.root())
    return context, tree, root, values
