"""Chunks held on the workers of a ``distributed`` cluster between passes: the prepared
chunks (checked, encoded, with any state kept beside them), where they are, and a pass over
them submitted as a task per worker thread with the chunks' futures (no graph built)."""

from typing import NamedTuple

import numpy as np

from ._allocator import reusing_memory
from ._chunks import offset_keyword


def _client():
    """The ``distributed`` client computations go to, or None (dask's local schedulers run
    in this process, where wrapping an in-memory array costs nothing)."""
    try:
        from distributed import default_client

        return default_client()
    except (ImportError, ValueError):  # no distributed, or no client
        return None


class _Prepared:
    """A chunk's float X, encoded y and weights (:func:`_chunk_arrays`) and checked offsets,
    held on the cluster between passes: checked, encoded and filled once, not in every
    pass (a third of a gradient task's time). Its size (for the workers' memory
    accounting) is that of the arrays it adds to the chunk of X it shares. ``state``: what
    :meth:`DaskRows.hold` keeps beside the chunk (empty, or one object handed to the
    chunk's functions before its rows)."""

    def __init__(self, arrays, offset, nbytes, state=()):
        self.arrays, self.offset, self.nbytes = arrays, offset, nbytes
        self.state = state

    def __sizeof__(self):
        return self.nbytes


def _with_state(function, args, chunk):
    # the chunk's arrays shared (the same worker), with the state made from them beside
    with reusing_memory():
        state = function(*args, *chunk.arrays, **offset_keyword(chunk.offset))
    from dask.sizeof import sizeof

    return _Prepared(chunk.arrays, chunk.offset, sizeof(state), (state,))


def _in_prepared(function, args, chunk, start, block, *extra):
    with reusing_memory():
        return function(*args, *extra, *chunk.state, *chunk.arrays, start, block,
                        **offset_keyword(chunk.offset))


def _in_prepared_group(combine, function, args, chunks, starts, blocks):
    # the results of several chunks held by one worker, combined: one task and one
    # (small) message instead of a task per chunk and per node of a tree; combine=None
    # folds them (the state of the chunks before enters every chunk's function)
    with reusing_memory():
        if combine is None:
            state = None
            for chunk, start, block in zip(chunks, starts, blocks):
                state = function(*args, state, *chunk.state, *chunk.arrays, start, block,
                                 **offset_keyword(chunk.offset))
            return state
        result = None
        for chunk, start, block in zip(chunks, starts, blocks):
            out = function(*args, *chunk.state, *chunk.arrays, start, block,
                           **offset_keyword(chunk.offset))
            # combined as they come: one chunk's result held at a time
            result = out if result is None else combine(("group", block), result, out)
        return result


def _held(array):
    """Whether the blocks of a dask array are held on a ``distributed`` cluster (persisted
    or scattered: its graph holds a future per block)."""
    from distributed import Future

    graph = dict(array.__dask_graph__())
    return (len(graph) == int(np.prod(array.numblocks))
            and all(isinstance(value, Future) for value in graph.values()))


def _placement(chunks):
    """The numbers of chunks held on the cluster (persisted delayed objects) by the worker
    that holds them; None when some chunk is not held (a failed task, whose error the
    chunk's task then raises)."""
    from distributed import wait

    futures = [chunk.__dask_graph__()[chunk.key] for chunk in chunks]
    wait(futures)
    holders = _client().who_has(futures)
    by_worker = {}
    for block, future in enumerate(futures):
        where = holders.get(future.key) or [None]
        by_worker.setdefault(where[0], []).append(block)
    return None if None in by_worker else by_worker


def _thread_groups(by_worker):
    """The chunks of each worker (:func:`_placement`) split over its threads."""
    threads = {address: info.get("nthreads", 1) for address, info
               in _client().scheduler_info(n_workers=-1)["workers"].items()}
    return tuple(tuple(group.tolist()) for worker, blocks in by_worker.items()
                 for group in np.array_split(blocks, threads.get(worker, 1)) if len(group))


class _Held(NamedTuple):
    """Chunks with state kept on the cluster (:meth:`DaskRows.hold`): persisted
    :class:`_Prepared` objects and their numbers grouped by worker thread."""

    chunks: tuple
    groups: tuple


def _submitted_pass(name, chunks, starts, groups, group_combine, function, args, root_here,
                    combine):
    """A pass over held chunks (persisted delayed objects): a task per group of chunks
    (:func:`_in_prepared_group`) submitted with the chunks' futures, not built into a graph
    (no graph, tokenisation or optimisation on the client; unique keys instead of hashes
    of the arguments, among them the parameters), one message to the scheduler for all;
    their results are gathered and combined here (``root_here``) or by one more task whose
    result is gathered."""
    from uuid import uuid4

    from dask.utils import funcname

    client = _client()
    held = [chunk.__dask_graph__()[chunk.key] for chunk in chunks]
    futures = client.map(
        _in_prepared_group, [group_combine] * len(groups), [function] * len(groups),
        [args] * len(groups), [[held[b] for b in group] for group in groups],
        [[starts[b] for b in group] for group in groups], [list(group) for group in groups],
        key=[f"{name}-{uuid4().hex}" for _ in groups], pure=False)
    if root_here:
        return combine(("groups", 0), *client.gather(futures))
    return client.submit(combine, ("groups", 0), *futures,
                         key=f"{funcname(combine)}-{uuid4().hex}", pure=False).result()
