"""Rows of dask arrays: every pass over them is a tree of tasks where the chunks live.

The row chunks of ``X`` (all columns in one block; ``y`` and ``sample_weight`` rechunked
alike) are the blocks; every per-chunk step is a ``dask.delayed`` task, combined by a tree of
tasks on the cluster (chunks held on a ``distributed`` cluster: a task per worker thread,
submitted with the chunks' futures: :mod:`._dask_held`), and the client receives only small
results: sums over rows, the drawn rows and their weights. Draws are exact:

* :meth:`DaskRows.uniform_sample` -- every row of positive weight gets a uniform random key
  in its chunk; the smallest keys over all chunks (a distributed reservoir, merged by the
  tree) are a uniform sample without replacement, the same distribution as in memory.
  Stratified, every stratum keeps its own reservoir and the draws are allocated over the
  strata as in memory.
* :meth:`DaskRows.importance_sample` -- every chunk draws M rows from its share of the
  multinomial and the tree mixes the draws slot by slot with probabilities proportional to
  the chunks' total importance, so the M draws are exactly multinomial over all rows
  (stratified: per stratum, then allocated as in memory).

Draws do not depend on the scheduler: tasks draw from seeds fixed by their place in the tree
and a root seed, which the storage draws once from each ``rng`` it is handed. Non-finite X
raises inside the first task that reads it.

In-memory data given with dask input (an in-memory ``y`` with a dask ``X``, or a dask array
wrapping an ndarray) are scattered to the workers once (:func:`on_cluster`), not carried in
the graph of every pass. Per-row results that stay per row (predictions) are lazy dask
arrays (:func:`map_row_blocks`).
"""

import operator
from functools import partial, reduce

import numpy as np
from sklearn.utils.validation import assert_all_finite

from .._warnings import warn
from .._validation import check_weight_total
from ._allocator import reusing_memory
from ._chunks import offset_keyword
from ._dask_held import (_Held, _Prepared, _client, _held, _in_prepared, _placement,
                         _submitted_pass, _thread_groups, _with_state)
from ._dask_draws import (draw_leaf, finish_draws, finish_uniform, first_part, merge_priority,
                          mix_draws, priority_leaf, reservoir_leaf, reservoir_merge)
from ._dask_summary import merge_summaries, summarise_chunk
from ._memory import InMemoryRows

# fan-in of the associative reductions (sums, reservoirs, draws)
_SPLIT_EVERY = 8
# Chunks of rows are merged (as_row_blocks) when there are more than this many and they
# hold fewer than _MIN_TASK_ELEMENTS values each on average (about 0.5 MB of float64).
_MAX_SMALL_CHUNKS = 64
_MIN_TASK_ELEMENTS = 2**16
# Merged small chunks are held (persisted) up to this many values (32 MB of float64).
_PERSIST_ELEMENTS = 2**22


def tree_levels(items, combine, split_every=_SPLIT_EVERY, until=1):
    """Reduce delayed items by a tree of ``combine(key, *items)`` tasks (key = node id) down
    to at most ``until`` items; returns them and the level of the node that combines them
    (its key is ``(level, 0)``)."""
    level = 0
    while len(items) > until:
        items = [combine((level, i), *items[i:i + split_every])
                 for i in range(0, len(items), split_every)]
        level += 1
    return items, level


def tree_reduce(items, combine, split_every=_SPLIT_EVERY):
    """Reduce delayed items by a tree of ``combine(key, *items)`` tasks to its root."""
    return tree_levels(items, combine, split_every)[0][0]


# --------------------------------------------------------------------------------------------
# In-memory arrays on a cluster: sent once, never embedded in the graphs
# --------------------------------------------------------------------------------------------
def _embeds_data(array):
    """Whether ``array`` is an in-memory array wrapped by dask (``dask.array.from_array``
    or ``asarray`` of an ndarray): its graph holds the blocks themselves, so every graph
    that uses it carries the data."""
    graph = array.__dask_graph__()
    layers = getattr(graph, "layers", {})
    return len(layers) == 1 and all(isinstance(value, np.ndarray)
                                    for value in dict(graph).values())


def on_cluster(array):
    """``array``, with the blocks of a wrapped in-memory array (see :func:`_embeds_data`)
    scattered once to the workers of the active ``distributed`` client: the graphs of every
    later pass then refer to them instead of carrying (and re-sending) the data, which is
    what dask's "Sending large graph ... Consider loading the data with Dask directly"
    warning is about. Other arrays, and all arrays without a client, are returned as they
    are."""
    import dask.array as da
    from dask.core import flatten

    client = _client()
    if client is None or not _embeds_data(array):
        return array
    graph = dict(array.__dask_graph__())
    blocks = np.empty(int(np.prod(array.numblocks)), dtype=object)
    # unique keys (not content hashes): a fit's futures must not be released by the
    # garbage collection of an earlier fit's copies of the same data
    blocks[:] = client.scatter([graph[key] for key in flatten(array.__dask_keys__())],
                               hash=False)
    blocks = blocks.reshape(array.numblocks)
    pieces = np.empty(array.numblocks, dtype=object)
    for index in np.ndindex(*array.numblocks):
        shape = tuple(chunks[i] for chunks, i in zip(array.chunks, index))
        pieces[index] = da.from_delayed(blocks[index], shape=shape, dtype=array.dtype)
    return da.block(pieces.tolist())


def known_chunks(collection):
    """A dask DataFrame or Series as a dask array whose chunk sizes are known (computed by
    one pass over its partitions); anything else as it is."""
    if hasattr(collection, "to_dask_array") and hasattr(collection, "__dask_graph__"):
        return collection.to_dask_array(lengths=True)
    return collection


def _as_rows(v, X, name):
    """Per-row values (a dask array, a dask Series, an array-like or a scalar) as a dask
    array in the row chunks of X; in-memory values are sent to the cluster once
    (:func:`on_cluster`)."""
    import dask.array as da

    v = known_chunks(v)

    if np.isscalar(v):  # a scalar weight, as in memory: made lazily where the chunks are
        return da.full(X.shape[0], float(v), chunks=X.chunks[0])
    if not hasattr(v, "__dask_graph__"):
        v = np.asarray(v)
        if v.shape == (X.shape[0],):
            v = da.from_array(v, chunks=(X.chunks[0],))
    v = da.asarray(v)
    shipped = on_cluster(v)
    if v.ndim != 1 or v.shape[0] != X.shape[0]:
        raise ValueError(f"{name} must have shape ({X.shape[0]},), got {v.shape}.")
    rechunked = shipped.rechunk((X.chunks[0],))
    # held on the cluster (or, from chunks too small for a task, in memory): rechunked
    # once, not again in every pass
    merged = _too_small(v.shape[0], 1, len(v.chunks[0])) and v.shape[0] <= _PERSIST_ELEMENTS
    return rechunked.persist() if shipped is not v or merged else rechunked


def _too_small(n, d, n_chunks):
    """Whether ``n_chunks`` chunks of ``n`` rows of ``d`` values are too small to be worth
    a task each (:func:`as_row_blocks`)."""
    return n_chunks > _MAX_SMALL_CHUNKS and n * d < _MIN_TASK_ELEMENTS * n_chunks


def _chunk_arrays(encode, X, y, w):
    """A chunk as float X, encoded y and weights (runs in the task, where the chunk is)."""
    assert_all_finite(X, input_name="X")
    y = encode(np.asarray(y))
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    return np.asarray(X, dtype=float), y, w


def _as_float(y):
    return y.astype(float)


def _checked_offset(offset):
    # the rows' offsets (if any), checked where they are read, like X
    if offset is not None:
        offset = np.asarray(offset, dtype=float)
        assert_all_finite(offset, input_name="offset")
    return offset


def _in_chunk(function, args, encode, X, y, w, offset, start, block, *extra):
    with reusing_memory():
        return function(*args, *extra, *_chunk_arrays(encode, X, y, w), start, block,
                        **offset_keyword(_checked_offset(offset)))


def _prepare(encode, X, y, w, offset):
    arrays = _chunk_arrays(encode, X, y, w)
    offset = _checked_offset(offset)
    added = [a for a in (*arrays, offset) if a is not None and not np.shares_memory(a, X)]
    return _Prepared(arrays, offset, sum(a.nbytes for a in added))


def _rows_only(function, *args_and_rows, **offset):
    # drops the number of the chunk's first row and the chunk's, for per-row functions and
    # sums
    return function(*args_and_rows[:-2], **offset)


def _rows_and_start(function, *args_and_rows, **offset):
    # drops the chunk's number (keeps the number of its first row)
    return function(*args_and_rows[:-1], **offset)


def _fold_first(function, *args_and_rows, **offset):
    # the first chunk of a fold: no state before it
    return function(*args_and_rows[:-5], None, *args_and_rows[-5:], **offset)


def _task_name(function, args):
    # named after the function, not the wrappers, for dashboards and task streams
    while function in (_rows_only, _rows_and_start, _fold_first):
        function, args = args[0], args[1:]
    return function.__name__


def _sum_all(key, *items):
    # reduce, not sum: the parts may be any objects that add up (e.g. statistics)
    return tuple(reduce(operator.add, parts) for parts in zip(*items))


def _max_abs(X, y, w, offset=None):
    # of X alone: the rows' offsets play no part
    return max(float(np.max(X, initial=0.0)), -float(np.min(X, initial=0.0)))


def _max_all(key, *items):
    return max(items)


# --------------------------------------------------------------------------------------------
# Per-row results, lazily
# --------------------------------------------------------------------------------------------
def _on_row_block(X, function, n_shared, *shared_and_rows, block_id=None):
    shared, rows = shared_and_rows[:n_shared], shared_and_rows[n_shared:]
    with reusing_memory():
        return function(*shared, X, *(values[:, 0] for values in rows), block=block_id[0])


def map_row_blocks(function, X, *row_arrays, shared=(), columns=None, dtype=np.float64):
    """``function(*shared, X_block, *row_blocks, block=b)`` for every row block ``b`` of
    the dask array ``X`` (all columns in one block), as a lazy dask array of shape ``(n,)``
    or ``(n, columns)``: nothing is computed until asked for.

    ``row_arrays`` are ``(name, values)`` pairs of per-row values (dask arrays, arrays or
    scalars) handed to ``function`` in ``X``'s row blocks; ``shared`` objects enter the
    graph once, not once per block.
    """
    import dask

    X = on_cluster(X).rechunk({1: -1})
    # per-row values as columns, so that their blocks line up with X's row blocks
    rows = [_as_rows(values, X, name)[:, None] for name, values in row_arrays]
    args = (_on_row_block, function, len(shared), *map(dask.delayed, shared), *rows)
    if columns is None:
        return X.map_blocks(*args, drop_axis=1, chunks=(X.chunks[0],), dtype=dtype)
    return X.map_blocks(*args, chunks=(X.chunks[0], (columns,)), dtype=dtype)


def as_row_blocks(X, block_rows=None):
    """The one check of a dask ``X`` of rows (estimators and constructors): 2-D, of known
    shape, with a row and a feature, all columns in one block, rows in ``block_rows`` when
    given.

    Chunks too small to be worth a task are merged: every pass over the rows is a task per
    chunk, so a few hundred one-row chunks cost a few hundred tasks per gradient of a
    sampler (minutes for a few hundred rows), and merge-reduce over them builds coresets
    of one row each (several times further from the posterior than in memory). More than
    ``_MAX_SMALL_CHUNKS`` chunks holding fewer than ``_MIN_TASK_ELEMENTS`` values on average
    are rechunked to blocks of about that many values.
    """
    import dask.array as da

    X = da.asarray(known_chunks(X))  # a dask DataFrame's lengths computed
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array, got {X.ndim} dimension(s).")
    if np.isnan(X.shape[0]) or np.isnan(X.shape[1]):
        raise ValueError(
            "X has chunks of unknown size (e.g. from a dask DataFrame's to_dask_array()): "
            "compute them first with X.compute_chunk_sizes(), or use "
            "to_dask_array(lengths=True).")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"Found array with shape {X.shape}; at least one row and one "
                         "feature are required.")
    n, d = X.shape
    n_chunks = len(X.chunks[0])
    merge = block_rows is None and _too_small(n, d, n_chunks)
    if merge:
        block_rows = min(n, -(-_MIN_TASK_ELEMENTS // d))
    shipped = on_cluster(X)
    rechunked = shipped.rechunk({0: block_rows or X.chunks[0], 1: -1})
    if merge and n * d > _PERSIST_ELEMENTS:
        # too large to hold merged: every pass still reads the small chunks
        warn(
            f"X has {n_chunks:,} chunks of {n / n_chunks:,.0f} rows on average: each pass "
            f"over the rows runs a task per chunk. They are merged into blocks of "
            f"{block_rows:,} rows in every pass; merge them once where the data are read "
            f"instead, e.g. X = X.rechunk({{0: {block_rows}}}).persist() (with y and "
            "sample_weight alike), or read them in larger chunks.", UserWarning)
        return rechunked
    # held in memory (or on the cluster): rechunked once, not again in every pass
    return rechunked.persist() if shipped is not X or merge else rechunked


# --------------------------------------------------------------------------------------------
# The storage
# --------------------------------------------------------------------------------------------
class DaskRows:
    """Rows of dask arrays, processed chunk by chunk where the chunks live.

    Built by :meth:`from_arrays`, which checks shapes and summarises y and the weights in
    one pass (:class:`~skcoreset._backend._dask_summary.Summary`); :meth:`encoded` then
    fixes the target encoding applied in every task. Offers the operations of
    :class:`InMemoryRows` (sums over rows, per-row values as a lazy dask array, uniform and
    importance draws, :meth:`scaled` weights), :meth:`sum_with_starts` and
    :meth:`fold_with_starts` for sums that need the rows' numbers, :meth:`every` for a
    thinned copy of the rows, :meth:`first_chunk` for estimates from pilot rows and, for
    merge-reduce, :meth:`chunk_tasks`, :meth:`task`, :meth:`shared` and :meth:`gather`.
    """

    chunked = True
    file_backed = False  # the chunks live with dask, not in a file this process reads

    def __init__(self, X, y, sample_weight, summary, encode=_as_float, offset=None):
        self._X, self._y, self._w, self._offset = X, y, sample_weight, offset
        self.summary = summary
        self.encode = encode
        self._seed = None
        self._prepared = None  # the chunks as _Prepared futures, made by the first pass
        self._groups = None  # the chunks by the worker thread that holds them
        self.sizes = list(X.chunks[0])
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(int).tolist()

    @classmethod
    def from_arrays(cls, X, y, sample_weight=None, block_rows=None, offset=None):
        """Check the shapes of dask ``X`` (and of ``y``, ``sample_weight`` and ``offset``:
        dask arrays, array-likes or, for the weights and offsets, scalars) without computing
        them, put all columns in one block (rows in ``block_rows`` when given) and summarise
        y and the weights. The offsets (a known term of each row's linear predictor) travel
        with the chunks to every function of rows as ``offset=`` (checked finite in the
        tasks that read them)."""
        import dask

        X = as_row_blocks(X, block_rows)
        y = _as_rows(y, X, "y")
        w = None if sample_weight is None else _as_rows(sample_weight, X, "sample_weight")
        summarise = dask.delayed(summarise_chunk, pure=True)
        y_blocks = y.to_delayed().ravel().tolist()
        w_blocks = [None] * len(y_blocks) if w is None else w.to_delayed().ravel().tolist()
        offsets = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(int).tolist()
        summary = tree_reduce([summarise(yb, wb, block, offset) for block, (yb, wb, offset)
                               in enumerate(zip(y_blocks, w_blocks, offsets))],
                              dask.delayed(merge_summaries, pure=True)).compute()
        check_weight_total(summary.total_weight, summary.max_weight, int(sum(X.chunks[0])))
        offset = None if offset is None else _as_rows(offset, X, "offset")
        return cls(X, y, w, summary, offset=offset)

    @property
    def has_offset(self):
        """Whether the rows have offsets in their linear predictors."""
        return self._offset is not None

    def encoded(self, encode):
        """The same rows with targets encoded by ``encode`` (a picklable function of a
        chunk of y) in every task."""
        return DaskRows(self._X, self._y, self._w, self.summary, encode, self._offset)

    def with_offset(self, offset):
        """The same rows with offsets in their linear predictors (a dask array, an
        array-like or a scalar, checked as by :meth:`from_arrays`)."""
        return DaskRows(self._X, self._y, self._w, self.summary, self.encode,
                        _as_rows(offset, self._X, "offset"))

    def first_chunk(self):
        """The first chunk as float X, encoded y, weights and offsets (None without),
        gathered to the client (the pilot rows of estimates that need rows in memory)."""
        import dask

        w, offset = (None if v is None else v.blocks[0] for v in (self._w, self._offset))
        X, y, w, offset = dask.compute(self._X.blocks[0], self._y.blocks[0], w, offset)
        return (*_chunk_arrays(self.encode, X, y, w), _checked_offset(offset))

    def rechunk(self, block_rows):
        """The same rows in chunks of ``block_rows`` rows."""
        X = self._X.rechunk({0: block_rows})
        w, offset = (None if v is None else v.rechunk((X.chunks[0],))
                     for v in (self._w, self._offset))
        return DaskRows(X, self._y.rechunk((X.chunks[0],)), w, self.summary, self.encode,
                        offset)

    def every(self, stride, *, gather_rows=0):
        """Rows ``0, stride, 2 stride, ...`` of all chunks (global row numbers) with their
        weights: held on the cluster (persisted: a pass over them reads no other row; in
        chunks as large as this storage's, so that a pass has fewer tasks), or gathered into
        this process as :class:`InMemoryRows` when there are at most ``gather_rows`` of
        them."""
        import dask

        w, offset = (None if v is None else v[::stride] for v in (self._w, self._offset))
        X, y = self._X[::stride], self._y[::stride]
        if X.shape[0] <= gather_rows:
            X, y, w, offset = dask.compute(X, y, w, offset)
            offset = None if offset is None else np.asarray(offset, dtype=float)
            return InMemoryRows(*_chunk_arrays(self.encode, X, y, w), offset)
        X = X.rechunk({0: max(self.sizes)})
        y = y.rechunk((X.chunks[0],))
        w, offset = (None if v is None else v.rechunk((X.chunks[0],)) for v in (w, offset))
        X, y, w, offset = dask.persist(X, y, w, offset)
        return DaskRows(X, y, w, self.summary, self.encode, offset)

    def scaled(self, factor, exponent=0):
        """The same rows with their weights multiplied by ``factor`` and by ``2**exponent``
        (exactly, by ``np.ldexp``: no power of two under- or overflows on its own)."""
        import dask.array as da

        def scale(w):
            return np.ldexp(w, exponent) * factor

        w = (_as_rows(scale(1.0), self._X, "sample_weight") if self._w is None
             else da.ldexp(self._w, exponent) * factor)
        summary = self.summary._replace(min_weight=scale(self.summary.min_weight),
                                        max_weight=scale(self.summary.max_weight),
                                        total_weight=scale(self.summary.total_weight))
        return DaskRows(self._X, self._y, w, summary, self.encode, self._offset)

    @property
    def n(self):
        return int(sum(self.sizes))

    @property
    def n_features(self):
        return self._X.shape[1]

    @property
    def n_chunks(self):
        return len(self.sizes)

    # -- tasks ------------------------------------------------------------------------------
    def _prepared_chunks(self):
        """The chunks as :class:`_Prepared` futures, or None. Made once (persisted) when X
        is float64 held on a cluster, whose chunks they share: the encoded targets and
        weights then add two floats per row to the rows held. Other X (lazy, read in
        every pass, or of another dtype, which the float copy would double) are prepared
        in every task."""
        import dask

        if self._prepared is None:
            self._prepared = ()
            if (_client() is not None and self._X.dtype == np.float64
                    and _held(self._X)):
                prepare = dask.delayed(_prepare, pure=True)
                self._prepared = dask.persist(*(
                    prepare(self.encode, *blocks) for blocks in zip(*self._blocks())))
        return self._prepared or None

    def _held_groups(self):
        """The numbers of the prepared chunks, grouped by the worker that holds them and
        split over its threads; None without prepared chunks or when some chunk is not
        held (a failed preparation, whose error the chunk's task then raises)."""
        if self._groups is None:
            self._groups = ()
            prepared = self._prepared_chunks()
            if prepared is not None:
                by_worker = _placement(prepared)
                if by_worker is not None:
                    self._groups = _thread_groups(by_worker)
        return self._groups or None

    def hold(self, function, *args, max_bytes=np.inf, grows=0.0):
        """``function(*args, X, y, w[, offset=])`` of every prepared chunk, made once by
        the worker that holds the chunk and kept there beside it (persisted), for
        :meth:`sum_held`: state of a chunk that many passes read (a copy of its rows in
        another precision). None when the chunks are not prepared on a cluster, when a
        worker holds more than ``max_bytes`` of X, or when its X with the state (about
        ``grows`` times its X's bytes) would pass the share of its memory limit at which it
        starts spilling to disk."""
        import dask

        prepared = self._prepared_chunks()
        by_worker = None if prepared is None else _placement(prepared)
        if by_worker is None:
            return None
        workers = _client().scheduler_info(n_workers=-1)["workers"]
        share = dask.config.get("distributed.worker.memory.target", 1.0) or 1.0
        for worker, blocks in by_worker.items():
            rows_bytes = sum(self.sizes[b] for b in blocks) * self.n_features * 8
            limit = workers.get(worker, {}).get("memory_limit") or np.inf
            if rows_bytes > max_bytes or rows_bytes * (1 + grows) > share * limit:
                return None
        keep = dask.delayed(_with_state, pure=True)
        tasks = [None] * len(prepared)
        for worker, blocks in by_worker.items():
            # where the chunk is: made from the arrays it holds, not from a copy sent (on
            # another worker only if that one is gone)
            with dask.annotate(workers=[worker], allow_other_workers=True):
                for b in blocks:
                    tasks[b] = keep(function, args, prepared[b])
        chunks = dask.persist(*tasks)
        by_worker = _placement(chunks)
        return None if by_worker is None else _Held(chunks, _thread_groups(by_worker))

    def sum_held(self, held, function, *args):
        """``function(*args, state, X, y, w[, offset=])`` of every chunk, with the chunk's
        ``state`` kept by :meth:`hold`, summed as by :meth:`sum`."""
        return self._sum(_rows_only, function, *args, held=held)

    def _blocks(self):
        """The delayed blocks of X, y, the weights and the offsets (None without)."""
        # unoptimised graphs keep the futures of arrays held on the cluster, so that lazy
        # results (map_rows) keep them alive after this storage is gone
        y_blocks = self._y.to_delayed(optimize_graph=False).ravel()
        w_blocks, offset_blocks = ([None] * len(y_blocks) if v is None
                                   else v.to_delayed(optimize_graph=False).ravel()
                                   for v in (self._w, self._offset))
        return (self._X.to_delayed(optimize_graph=False).ravel(), y_blocks, w_blocks,
                offset_blocks)

    def chunk_tasks(self, function, *args, row_values=None):
        """One delayed task per chunk: ``function(*args, X, y, w, start, block)`` on the
        chunk's float X, encoded y and weights (``start``: the number of its first row),
        and ``offset=`` the chunk's offsets when the rows have them; with ``row_values`` (a
        lazy array of :meth:`map_rows`), ``function(*args, values, X, y, w, start, block)``
        with the chunk's values."""
        import dask
        from dask.base import tokenize

        extra = ([()] * self.n_chunks if row_values is None
                 else [(v,) for v in row_values.rechunk((tuple(self.sizes),))
                       .to_delayed().ravel()])
        name = _task_name(function, args)
        prepared = self._prepared_chunks()
        if prepared is None:
            task = dask.delayed(_in_chunk, pure=True)
            chunks = [(self.encode, *blocks) for blocks in zip(*self._blocks())]
        else:
            task = dask.delayed(_in_prepared, pure=True)
            chunks = [(chunk,) for chunk in prepared]
        tasks = []
        for b, (chunk, start, more) in enumerate(zip(chunks, self.starts, extra)):
            inputs = (function, args, *chunk, start, b, *more)
            tasks.append(task(*inputs, dask_key_name=f"{name}-{tokenize(*inputs)}"))
        return tasks

    @staticmethod
    def task(function):
        """``function`` as a delayed task."""
        import dask

        return dask.delayed(function, pure=True)

    @staticmethod
    def shared(obj):
        """One copy of ``obj`` on the cluster for all tasks that use it."""
        import dask

        return dask.delayed(obj)

    @staticmethod
    def gather(obj):
        """Compute a delayed result and bring it to the client."""
        return obj.compute()

    def _reduce(self, tasks, combine, finish=None):
        """Reduce tasks by a tree of ``combine``; ``finish`` runs on the root where it
        lies, so that only its (small) result is gathered."""
        root = tree_reduce(tasks, self.task(combine))
        return (root if finish is None else self.task(finish)(root)).compute()

    def _sum(self, function, *args, combine=_sum_all, fold=False, root_here=True,
             held=None):
        """``function(*args, X, y, w, start, block)`` of every chunk, added up by a tree of
        ``combine`` whose root runs here: at most ``_SPLIT_EVERY`` small results are
        gathered, and a pass takes one round trip to the cluster fewer (its latency is most
        of the cost of a pass over few rows).

        Chunks prepared on the cluster are read by one task per worker thread, which
        combines the results of its chunks, and the client those of the tasks: a few tasks
        and messages a pass instead of one per chunk and per node of the tree (what a pass
        costs beyond its arithmetic, the more so on busy cores), submitted as futures
        (:func:`_submitted_pass`) rather than built into a graph. The sums are then added
        in an order that depends on where the chunks are, which changes their rounding
        only.

        With ``fold``, ``function(*args, state, X, y, w, start, block)`` takes the result
        of the chunks before it in its task (``state``; None for a task's first chunk),
        and the tasks' results are combined. With ``root_here=False`` the last ``combine``
        runs on the cluster too, so that only its result is gathered (results holding
        rows). ``held``: chunks with state (:meth:`hold`) to read instead of the prepared
        ones."""
        import dask

        groups = self._held_groups() if held is None else held.groups
        if groups is None:
            tasks = (self.chunk_tasks(_fold_first, function, *args) if fold
                     else self.chunk_tasks(function, *args))
            if not root_here:
                return tree_reduce(tasks, self.task(combine)).compute()
            top, level = tree_levels(tasks, self.task(combine), until=_SPLIT_EVERY)
            return combine((level, 0), *dask.compute(*top))
        prepared = self._prepared_chunks() if held is None else held.chunks
        return _submitted_pass(_task_name(function, args), prepared, self.starts, groups,
                               None if fold else combine, function, args, root_here,
                               combine)

    def _root_seed(self, rng):
        """The root seed of the tasks' draws: drawn once from each ``rng`` handed in, so the
        draws of one fit share it (e.g. the k-means subsample and the draws of
        sensitivity sampling) whatever the scheduler."""
        if self._seed is None or self._seed[0] is not rng:
            self._seed = (rng, rng.randint(np.iinfo(np.int32).max))
        return self._seed[1]

    # -- the operations of InMemoryRows ----------------------------------------------------
    def sum(self, function, *args):
        """``function(*args, X, y, w)`` (and ``offset=`` the chunk's offsets, when the rows
        have them) of every chunk, summed (a tuple of sums)."""
        return self._sum(_rows_only, function, *args)

    def sum_with_starts(self, function, *args):
        """``function(*args, X, y, w, start)`` of every chunk (``start``: the number of its
        first row), added up by a tree of tasks (a tuple of sums, of anything with ``+``)."""
        return self._sum(_rows_and_start, function, *args)

    def fold_with_starts(self, function, *args):
        """``state = function(*args, state, X, y, w, start)`` over the chunks each task
        reads in turn (``state`` None for its first chunk), the tasks' states added up
        (``+``): :meth:`sum_with_starts` for results a chunk computes faster knowing those
        of the chunks before it (a sample of the smallest keys reads only the keys below
        the largest kept so far)."""
        return self._sum(_rows_and_start, function, *args, fold=True)

    def map_rows(self, function, *args):
        """``function(*args, X, y, w)`` (and ``offset=``, as :meth:`sum`): one value per
        row, as a lazy dask array (computed only when asked for)."""
        import dask.array as da

        return da.concatenate([
            da.from_delayed(task, shape=(size,), dtype=float)
            for task, size in zip(self.chunk_tasks(_rows_only, function, *args), self.sizes)])

    def max_abs(self):
        """Largest ``|x|`` of X, by one pass."""
        return self._sum(_rows_only, _max_abs, combine=_max_all)

    def max_weight(self):
        return float(self.summary.max_weight)

    def total_weight(self):
        return float(self.summary.total_weight)

    def n_positive(self):
        """The number of rows of positive weight."""
        return int(self.summary.n_positive)

    def has_both_classes(self):
        """Whether rows of positive weight hold both ``±1`` targets."""
        values = self.encode(self.summary.positive_witness)
        return bool(np.any(values > 0) and np.any(values < 0))

    def _strata(self, stratify):
        return (-1.0, 1.0) if stratify else None

    def subsample(self, size, rng, *, stream=0):
        """Up to ``size`` distinct rows of positive weight, uniformly without replacement
        (the distributed reservoir of random stream ``stream``), with their own weights."""
        return self._reduce(
            self.chunk_tasks(reservoir_leaf, size, self._root_seed(rng), stream, None),
            partial(reservoir_merge, size), finish=first_part)

    def uniform_sample(self, size, rng, *, stream=0, stratify=False):
        """Uniform draw without replacement, reweighted to the data's total weight or, with
        ``stratify``, within each target value (``±1``) to that stratum's, with the draws
        allocated over the strata as in memory."""
        strata = self._strata(stratify)
        return self._reduce(
            self.chunk_tasks(reservoir_leaf, size, self._root_seed(rng), stream, strata),
            partial(reservoir_merge, size), finish=partial(finish_uniform, size))

    def importance_sample(self, size, rng, importance, *, stratify=False):
        """``size`` i.i.d. draws with probability proportional to ``w_n importance_n``
        (``importance``: a lazy array of :meth:`map_rows`), reweighted to be unbiased; with
        ``stratify`` the draws are allocated over the target values as in memory.

        Returns the drawn rows and the total of ``w_n importance_n`` (not finite when an
        importance is not: no rows are drawn then).
        """
        seed, strata = self._root_seed(rng), self._strata(stratify)
        return self._reduce(
            self.chunk_tasks(draw_leaf, size, seed, strata, row_values=importance),
            partial(mix_draws, size, seed), finish=partial(finish_draws, size, strata))

    def priority_sample(self, capacities, rng, function, *args, stratify=False):
        """Priority samples of the rows with importance ``w_n * function(*args, X, y, w)``,
        one per budget in ``capacities`` with independent keys: every chunk keeps its rows
        of highest priority and the tasks merge them (:meth:`_sum`), so the client receives
        only the kept rows (see :meth:`InMemoryRows.priority_sample`: the same rows with the
        same ``rng``, the keys being hashes of the row numbers)."""
        seed = rng.randint(np.iinfo(np.int32).max)
        # the merged samples do not depend on the order of the merges: a task per worker
        # thread merges its chunks' as they come, and one task those of the tasks (no tree
        # of tasks passing kept rows between workers; one sample of rows gathered)
        return self._sum(priority_leaf, tuple(capacities), seed, self._strata(stratify),
                         function, args, combine=partial(merge_priority, tuple(capacities)),
                         root_here=False)
