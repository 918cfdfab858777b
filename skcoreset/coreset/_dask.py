"""Coresets of dask arrays: computed where the chunks live, only coreset rows gathered.

Every constructor's ``fit`` hands a dask ``X`` over to :func:`fit_dask`. The row chunks of
``X`` (with all columns in one block; ``y`` and ``sample_weight`` rechunked alike) are the
blocks; every per-chunk step is a ``dask.delayed`` task, combined by a tree of tasks on the
cluster, and the client receives only small results: the coreset rows and weights, a few
summary numbers, and for the sensitivity coreset the k-means subsample.

* :class:`UniformCoreset` -- exact single-pass sampling: every row of positive weight gets a
  uniform random key in its chunk; the M smallest keys over all chunks (a distributed
  reservoir, merged by the tree) are a uniform sample without replacement, the same
  distribution as in memory.
* :class:`SensitivityCoreset` -- the same algorithm as in memory: k-means on a uniform
  subsample (the distributed reservoir) on the client; one pass for the cluster weights and
  the k-means score (hence the radius); one pass for the bounds of Lemma 3.1 with the global
  cluster weights, in which every chunk draws M rows from its share of the multinomial and
  the tree mixes the draws slot by slot with probabilities proportional to the chunks'
  total importance, so the M draws are exactly multinomial over all rows.
* Hilbert coresets (:class:`GIGACoreset`, :class:`FrankWolfeCoreset`) and any other
  constructor -- merge-reduce over the chunks (paper 002, §3.4; see
  :class:`StreamingCoreset`). The Hilbert weighting distribution is computed once and
  shared by all chunks: ``weighting="laplace"`` is the Laplace posterior of all the data
  (Newton's method with one tree reduction of gradient and Hessian per step), equal to the
  in-memory one; ``"laplace-subsample"`` uses a reservoir subsample; ``"prior"`` the prior.
  The result equals ``StreamingCoreset(coreset, block_size=<chunk size>)`` fitted in memory
  with the same ``random_state``. ``error_`` is the error of the last compression.
* :class:`StreamingCoreset` -- its own tree over chunks rechunked to ``block_size``; the
  result equals its in-memory ``fit``.

The result does not depend on the scheduler (tasks draw from seeds fixed by their place in
the tree) and runs on dask's default scheduler or on a ``distributed.Client``. Validation
needs one pass over ``y`` and the weights, which returns a handful of values (a "witness" of
y's type, the weights' extremes); non-finite X raises inside the first task that reads it.
``transform`` on a dask array compares its shape and computes only the stored coreset rows
(``X[sample_indices_]``) to recognise the training data; any other dask array passes through
lazily. ``fit_coreset`` returns the gathered rows and computes ``y[sample_indices_]``.
"""

from typing import NamedTuple

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import assert_all_finite

from .._validation import check_sample_weight
from ._base import resolve_model
from ._sensitivity import (SensitivityCoreset, _signed_design, assign_clusters,
                           sensitivity_upper_bounds)
from ._streaming import (MergeTree, Part, StreamingCoreset, block_rng, loglik_sums,
                         make_context, summed_laplace)
from ._uniform import UniformCoreset

# fan-in of the associative reductions (sums, reservoirs, draws)
_SPLIT_EVERY = 8


# --------------------------------------------------------------------------------------------
# Input: validation without computing X, chunks as delayed objects
# --------------------------------------------------------------------------------------------
class _Chunks(NamedTuple):
    """Delayed row chunks of X, y, sample_weight and their first row numbers."""

    X: list
    y: list
    w: list
    offsets: list
    sizes: list
    target: tuple  # (family_, classes_) to encode y inside the tasks

    @property
    def n(self):
        return int(sum(self.sizes))


def _witness(values):
    """A few values of y that decide its type and validity like all of it would.

    Up to three distinct values, the minimum and maximum, one non-finite and one
    non-integral value when there are any: ``type_of_target``, ``resolve_model`` and the
    target checks give on the witness the answer they give on the whole of y. The witness of
    concatenated witnesses is the witness of the concatenated data, so chunks reduce by a tree.
    """
    values = np.asarray(values).ravel()
    parts = [np.unique(values)[:3]]
    if values.dtype.kind in "iuf" and len(values):
        finite = np.isfinite(values)
        parts += [[values.min(), values.max()], values[~finite][:1],
                  values[finite & (values != np.round(values))][:1]]
    return np.concatenate(parts).astype(values.dtype)


def _summarise(y, w):
    """``(y witness, min w, max w)`` of a chunk (weights ``None`` mean ones)."""
    w = np.ones(1) if w is None else np.asarray(w, dtype=float)
    return _witness(y), np.min(w, initial=np.inf), np.max(w, initial=-np.inf)


def _merge_summaries(key, *summaries):
    witness = _witness(np.concatenate([s[0] for s in summaries]))
    return witness, min(s[1] for s in summaries), max(s[2] for s in summaries)


def _as_rows(v, X, name):
    import dask.array as da

    # a scalar weight, as in memory: made lazily where the chunks are
    v = da.full(X.shape[0], float(v), chunks=X.chunks[0]) if np.isscalar(v) else da.asarray(v)
    if v.ndim != 1 or v.shape[0] != X.shape[0]:
        raise ValueError(f"{name} must have shape ({X.shape[0]},), got {v.shape}.")
    return v.rechunk((X.chunks[0],)).to_delayed().ravel().tolist()


def _prepare(coreset, X, y, sample_weight, block_rows=None):
    """Validate dask input on the client from small summaries; set ``model_``, ``classes_``,
    ``n_features_in_``; return the delayed chunks."""
    import dask
    import dask.array as da

    X = da.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array, got {X.ndim} dimension(s).")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"Found array with shape {X.shape}; a coreset needs at least one "
                         "row and one feature.")
    X = X.rechunk({0: block_rows or X.chunks[0], 1: -1})
    coreset.n_features_in_ = X.shape[1]
    if hasattr(coreset, "feature_names_in_"):
        del coreset.feature_names_in_
    y_blocks = _as_rows(y, X, "y")
    w_blocks = ([None] * len(y_blocks) if sample_weight is None
                else _as_rows(sample_weight, X, "sample_weight"))
    summarise = dask.delayed(_summarise, pure=True)
    witness, w_min, w_max = _tree_reduce(
        [summarise(yb, wb) for yb, wb in zip(y_blocks, w_blocks)],
        dask.delayed(_merge_summaries, pure=True)).compute()
    check_sample_weight(np.array([w_min, w_max]), 2)  # same checks and messages as in memory
    if witness.dtype.kind in "fc":
        assert_all_finite(witness, input_name="y")
    coreset._set_family(resolve_model(coreset._likelihood_params().model, witness))
    coreset._encode_target(witness)  # target checks; sets classes_ of the logistic model
    sizes = list(X.chunks[0])
    chunks = _Chunks(X.to_delayed().ravel().tolist(), y_blocks, w_blocks,
                     np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist(), sizes,
                     (coreset.family_, getattr(coreset, "classes_", None)))
    if coreset.family_.unresolved:  # parameters estimated from data: on the first chunk
        first = dask.compute(chunks.X[0], chunks.y[0], chunks.w[0])
        coreset._resolve_family(*_chunk_arrays(chunks.target, *first))
        chunks = chunks._replace(target=(coreset.family_, chunks.target[1]))
    return chunks


def _chunk_arrays(target, X, y, w):
    """A chunk as float X, encoded y and weights (runs in the task, where the chunk is)."""
    assert_all_finite(X, input_name="X")
    family, classes = target
    y = family.encode_target(np.asarray(y), classes)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    return np.asarray(X, dtype=float), y, w


def _tree_reduce(items, combine, split_every=_SPLIT_EVERY):
    """Reduce delayed items by a tree of ``combine(key, *items)`` tasks (key = node id)."""
    level = 0
    while len(items) > 1:
        items = [combine((level, i), *items[i:i + split_every])
                 for i in range(0, len(items), split_every)]
        level += 1
    return items[0]


def _map(function, chunks, *args):
    """One delayed task per chunk: ``function(*args, X, y, w, offset, block)``."""
    import dask

    task = dask.delayed(function, pure=True)
    return [task(*args, chunks.target, X, y, w, offset, b)
            for b, (X, y, w, offset) in enumerate(zip(chunks.X, chunks.y, chunks.w,
                                                      chunks.offsets))]


# --------------------------------------------------------------------------------------------
# Sums over rows, and the Laplace weighting distribution from them
# --------------------------------------------------------------------------------------------
def _sum_all(key, *items):
    return tuple(sum(parts) for parts in zip(*items))


def _row_sums(chunks, function, *args):
    import dask

    return _tree_reduce(_map(function, chunks, *args),
                        dask.delayed(_sum_all, pure=True)).compute()


def _target_sums(target, X, y, w, offset, block):
    X, y, w = _chunk_arrays(target, X, y, w)
    return w @ y, w.sum(), np.count_nonzero(w > 0)


def _loglik_sums(family, theta, fit_intercept, scale, target, X, y, w, offset, block):
    X, y, w = _chunk_arrays(target, X, y, w)
    return loglik_sums(X, y, w * scale, family, theta, fit_intercept)


def _laplace(chunks, family, prior_prec, fit_intercept):
    """Laplace posterior of all rows: each Newton trial is one tree reduction of sums.

    As in memory, the weights are divided by their mean over the rows of positive weight
    (:func:`skcoreset.coreset._hilbert.relative_weights`): pi-hat depends on the relative
    weights only.
    """
    weighted_y, total, n_positive = _row_sums(chunks, _target_sums)
    scale = n_positive / total

    def row_sums(theta):
        return _row_sums(chunks, _loglik_sums, family, theta, fit_intercept, scale)

    return summed_laplace(row_sums, weighted_y * scale, float(n_positive), family, prior_prec,
                          fit_intercept)


# --------------------------------------------------------------------------------------------
# Distributed reservoir: a uniform sample without replacement of the rows of positive weight
# --------------------------------------------------------------------------------------------
class _Reservoir(NamedTuple):
    keys: np.ndarray
    part: Part
    total_weight: float


def _smallest(keys, size):
    order = np.argpartition(keys, size)[:size] if size < len(keys) else np.arange(len(keys))
    order = order[np.argsort(keys[order], kind="stable")]
    return order[np.isfinite(keys[order])]


def _reservoir_leaf(size, seed, purpose, target, X, y, w, offset, block):
    X, y, w = _chunk_arrays(target, X, y, w)
    keys = block_rng(seed, 3, purpose, block).random_sample(len(y))
    keys[w <= 0] = np.inf  # rows standing for nothing are never drawn
    rows = _smallest(keys, size)
    return _Reservoir(keys[rows], Part(offset + rows, w[rows], X[rows], y[rows]), w.sum())


def _reservoir_merge(size, key, *samples):
    keys = np.concatenate([s.keys for s in samples])
    part = samples[0].part
    for other in samples[1:]:
        part = part.union(other.part)
    rows = _smallest(keys, size)
    return _Reservoir(keys[rows], part.take(rows, part.weights[rows]),
                      sum(s.total_weight for s in samples))


def _reservoir(chunks, size, seed, purpose):
    """The ``size`` rows with the smallest keys, and the total weight, gathered."""
    import dask
    from functools import partial

    return _tree_reduce(_map(_reservoir_leaf, chunks, size, seed, purpose),
                        dask.delayed(partial(_reservoir_merge, size), pure=True)).compute()


def _fit_uniform(coreset, chunks, seed):
    sample = _reservoir(chunks, coreset.M, seed, 0)
    part = sample.part
    return part.take(np.arange(part.size),
                     part.weights * (sample.total_weight / part.weights.sum()))


# --------------------------------------------------------------------------------------------
# Sensitivity sampling: the in-memory algorithm, pass by pass
# --------------------------------------------------------------------------------------------
def _cluster_stats(centres, fit_intercept, target, X, y, w, offset, block):
    X, y, w = _chunk_arrays(target, X, y, w)
    labels, sq_dist = assign_clusters(X, y, centres, fit_intercept)
    return np.bincount(labels, weights=w, minlength=len(centres)), w @ sq_dist, w.sum()


def _chunk_bounds(coreset, stats, X, y, w):
    cluster_weight, _, total = stats
    labels, _ = assign_clusters(X, y, coreset.cluster_centers_, coreset.fit_intercept)
    return sensitivity_upper_bounds(X, y, w, coreset.cluster_centers_, labels,
                                    coreset.radius_, coreset.fit_intercept,
                                    cluster_weight=cluster_weight, total_weight=total)


class _Draws(NamedTuple):
    """M multinomial draws over some rows: the distinct rows drawn, their importance
    ``w_n m_n``, each draw's row (-1: no draw) and the total importance covered."""

    part: Part
    importance: np.ndarray
    slots: np.ndarray
    total: float


def _draw_leaf(coreset, stats, seed, target, X, y, w, offset, block):
    X, y, w = _chunk_arrays(target, X, y, w)
    importance = w * _chunk_bounds(coreset, stats, X, y, w)
    total = importance.sum()
    if total <= 0:
        return _Draws(Part(*(a[:0] for a in (np.arange(1), w, X, y))), importance[:0],
                      np.full(coreset.M, -1), 0.0)
    draws = block_rng(seed, 4, block).choice(len(y), size=coreset.M, p=importance / total)
    rows, slots = np.unique(draws, return_inverse=True)
    return _Draws(Part(offset + rows, w[rows], X[rows], y[rows]), importance[rows], slots,
                  total)


def _mix_draws(M, seed, key, *children):
    """Slot j takes child i's j-th draw with probability total_i / sum(totals): M i.i.d.
    draws of the multinomial over the union of the children's rows."""
    totals = np.array([c.total for c in children])
    if totals.sum() <= 0:
        return children[0]
    pick = block_rng(seed, 5, *key).choice(len(children), size=M, p=totals / totals.sum())
    starts = np.cumsum([0] + [c.part.size for c in children])
    slots = np.choose(pick, [np.where(c.slots >= 0, c.slots + s, -1)
                             for c, s in zip(children, starts)])
    part, importance = children[0].part, children[0].importance
    for c in children[1:]:
        part, importance = part.union(c.part), np.concatenate([importance, c.importance])
    rows, slots = np.unique(slots, return_inverse=True)
    return _Draws(part.take(rows, part.weights[rows]), importance[rows], slots,
                  totals.sum())


def _lazy_sensitivities(coreset, stats, chunks):
    """The bounds of every row as a lazy dask array (computed only when asked for)."""
    import dask.array as da

    def bounds(target, X, y, w, offset, block):
        return _chunk_bounds(coreset, stats, *_chunk_arrays(target, X, y, w))

    return da.concatenate([da.from_delayed(task, shape=(size,), dtype=float)
                           for task, size in zip(_map(bounds, chunks), chunks.sizes)])


def _fit_sensitivity(coreset, chunks, seed, rng):
    import dask
    from functools import partial

    coreset._check_model()
    fit_intercept = coreset.fit_intercept
    sample = _reservoir(chunks, coreset._kmeans_sample_size(chunks.n), seed, 1).part
    coreset._fit_centres(_signed_design(sample.X, sample.y, slice(None), fit_intercept),
                         sample.weights, rng)
    stats = _row_sums(chunks, _cluster_stats, coreset.cluster_centers_, fit_intercept)
    coreset._set_radius(stats[1] / stats[2])  # normalised k-means score I
    draws = _tree_reduce(_map(_draw_leaf, chunks, coreset, stats, seed),
                         dask.delayed(partial(_mix_draws, coreset.M, seed), pure=True)
                         ).compute()
    coreset.sensitivities_ = _lazy_sensitivities(coreset, stats, chunks)
    coreset._report(draws.total / stats[2])
    counts = np.bincount(draws.slots[draws.slots >= 0], minlength=draws.part.size)
    p = draws.importance / draws.total
    part = draws.part
    return part.take(np.arange(part.size), counts * part.weights / (p * coreset.M))


# --------------------------------------------------------------------------------------------
# Merge-reduce over the chunks
# --------------------------------------------------------------------------------------------
def _leaf(context, target, X, y, w, offset, block):
    return context.leaf(*_chunk_arrays(target, X, y, w), offset, block)


def _merge(context, left, right, first, last):
    return context.merge(left, right, first, last)


def _dask_access(chunks, family, prior_prec, fit_intercept):
    """``full_laplace`` and ``subsample`` of :func:`make_context` on the cluster."""
    def subsample(size, rng):
        part = _reservoir(chunks, size, rng.randint(np.iinfo(np.int32).max), 2).part
        return part.X, part.y, part.weights

    return dict(full_laplace=lambda: _laplace(chunks, family, prior_prec, fit_intercept),
                subsample=subsample)


def _merge_reduce(context, chunks):
    """The merge-reduce tree of :class:`StreamingCoreset` as tasks; only the root gathered."""
    import dask

    shared = dask.delayed(context)  # one copy on the cluster, not one per task
    merge = dask.delayed(_merge, pure=True)
    tree = MergeTree(lambda left, right, first, last: merge(shared, left, right, first, last))
    for block, leaf in enumerate(_map(_leaf, chunks, shared)):
        tree.push(block, leaf)
    return tree, tree.root().compute()


def _fit_merge_reduce(coreset, chunks, seed_rng, base):
    family, prior_prec = coreset._family_and_prior(coreset.n_features_in_)
    context = make_context(base, coreset.model_, chunks.n, family, prior_prec, seed_rng,
                           **_dask_access(chunks, family, prior_prec, base.fit_intercept))
    tree, root = _merge_reduce(context, chunks)
    if context.thetas is not None:
        coreset.weighting_posterior_ = context.builder.weighting_posterior_
    return context, tree, root


def fit_dask(coreset, X, y, sample_weight):
    """Fit a coreset constructor on dask arrays; see the module docstring.

    Parameters
    ----------
    coreset : BaseCoreset
        The constructor (its parameters are already validated).
    X : dask.array.Array of shape (n_samples, n_features)
    y : dask.array.Array or array-like of shape (n_samples,)
    sample_weight : dask.array.Array, array-like of shape (n_samples,) or None

    Returns
    -------
    coreset : BaseCoreset
        The fitted constructor.
    """
    streaming = isinstance(coreset, StreamingCoreset)
    chunks = _prepare(coreset, X, y, sample_weight,
                      block_rows=coreset.block_size if streaming else None)
    rng = check_random_state(coreset.random_state)
    if isinstance(coreset, UniformCoreset):
        part = _fit_uniform(coreset, chunks, rng.randint(np.iinfo(np.int32).max))
    elif isinstance(coreset, SensitivityCoreset):
        part = _fit_sensitivity(coreset, chunks, rng.randint(np.iinfo(np.int32).max), rng)
    else:
        part = None
    if part is not None and coreset.model_ == "logistic" and len(np.unique(part.y)) < 2:
        # the draws on dask are not stratified by class: a rare class can be missed
        raise ValueError(
            f"The {type(coreset).__name__} drawn from the dask array holds rows of only one "
            "class, so no logistic model can be fitted on it (draws on dask arrays are not "
            "stratified by class). Increase M, or fit on an in-memory array or a np.memmap, "
            "where stratify=True keeps every class.")
    if part is None:
        base = coreset._base() if streaming else coreset
        context, tree, part = _fit_merge_reduce(coreset, chunks, rng, base)
        if part.error is not None:
            coreset.error_ = part.error
        if streaming:
            _keep_stream(coreset, context, tree, part, chunks)
    coreset._set_coreset(part.indices, part.weights, part.X, chunks.n)
    if coreset.verbose:
        error = "" if part.error is None else f", error {part.error:.3e}"
        print(f"[{type(coreset).__name__}] dask: {len(chunks.sizes)} chunks, {chunks.n} rows, "
              f"coreset size {len(coreset.sample_indices_)}{error}")
    return coreset


def _keep_stream(coreset, context, tree, root, chunks):
    """After a dask fit a stream continues from the gathered root, placed at the level of
    the whole tree as the coreset of all blocks seen."""
    coreset._start_stream(context)
    stream = coreset._stream
    stream.n_blocks, stream.n_samples = len(chunks.sizes), chunks.n
    stream.tree.levels = [None] * (len(tree.levels) - 1) + [(0, stream.n_blocks - 1, root)]
    coreset.n_samples_seen_, coreset.n_blocks_ = stream.n_samples, stream.n_blocks
