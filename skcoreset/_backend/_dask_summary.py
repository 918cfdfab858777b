"""What validation needs of the rows of dask arrays, from one pass over y and the weights:
small summaries of each chunk (:class:`Summary`), merged by a tree of tasks, on which the
in-memory checks give the answers they give on all the rows."""

from typing import NamedTuple

import numpy as np

from .._validation import check_sample_weight


def _smallest_distinct(values, k=3):
    """``np.unique(values)[:k]`` of numeric values without sorting or copying them: the
    minimum, then the minimum of the larger values, up to ``k`` times (a sort took most of
    a chunk's summary)."""
    if values.dtype.kind == "f" and np.isnan(values).any():
        return np.unique(values)[:k]  # NaN, sorted last (y with NaN is refused anyway)
    if not len(values):
        return values[:0]
    low, top = values.min(), values.max()
    if low == top:
        distinct = [low]
    elif ((values == low) | (values == top)).all():  # two values (binary targets)
        distinct = [low, top]
    else:
        distinct = [low]
        while len(distinct) < k and distinct[-1] < top:
            distinct.append(np.where(values > distinct[-1], values, top).min())
    return np.array(distinct[:k], dtype=values.dtype)


def witness(values):
    """A few values of y that decide its type and validity like all of it would.

    Up to three distinct values, the minimum and maximum, one non-finite and one
    non-integral value when there are any: ``type_of_target``, ``resolve_model`` and the
    target checks give on the witness the answer they give on the whole of y. The witness of
    concatenated witnesses is the witness of the concatenated data, so chunks reduce by a tree.
    """
    values = np.asarray(values).ravel()
    if values.dtype.kind not in "biuf":
        return np.unique(values)[:3]
    parts = [_smallest_distinct(values)]
    if values.dtype.kind in "iuf" and len(values):
        finite = np.isfinite(values) if values.dtype.kind == "f" else None
        if finite is None or finite.all():  # integers, or finite floats: no masks
            parts += [[values.min(), values.max()]]
            if values.dtype.kind == "f":
                parts += [values[values != np.round(values)][:1]]
        else:
            parts += [[values.min(), values.max()], values[~finite][:1],
                      values[finite & (values != np.round(values))][:1]]
    return np.concatenate(parts).astype(values.dtype)


class Summary(NamedTuple):
    """What validation needs of y and the weights, from one pass: the witness of y, that of
    the targets of rows of positive weight, the extreme weights, their total and the number
    of rows of positive weight."""

    witness: np.ndarray
    positive_witness: np.ndarray
    min_weight: float
    max_weight: float
    total_weight: float
    n_positive: int


def summarise_chunk(y, w, block, offset):
    """The summary of one chunk; its weights get the entry checks of in-memory weights
    (the totals are checked on the client), with messages naming the chunk."""
    y = np.asarray(y)
    if w is None:  # unit weights: every row of positive weight, no weight passes
        seen = witness(y)
        return Summary(seen, seen, *((1.0, 1.0) if len(y) else (np.inf, -np.inf)),
                       float(len(y)), len(y))
    where = f"in chunk {block} (rows {offset} to {offset + len(y) - 1})"
    w = check_sample_weight(w, len(y), where=where)
    with np.errstate(over="ignore"):  # an overflowing total is reported on the client
        total = w.sum()
    positive = w > 0
    n_positive = int(np.count_nonzero(positive))
    seen = witness(y)
    return Summary(seen, seen if n_positive == len(y) else witness(y[positive]),
                   np.min(w, initial=np.inf), np.max(w, initial=-np.inf), total, n_positive)


def merge_summaries(key, *summaries):
    with np.errstate(over="ignore"):
        total = np.sum([s.total_weight for s in summaries])
    return Summary(witness(np.concatenate([s.witness for s in summaries])),
                   witness(np.concatenate([s.positive_witness for s in summaries])),
                   min(s.min_weight for s in summaries), max(s.max_weight for s in summaries),
                   total, sum(s.n_positive for s in summaries))
