"""PASS-GLM on rows held in chunks on a cluster: one pass, in which every chunk is summarised
on its worker (its statistics and its pilot sample) and a tree of tasks adds the summaries
up; the data never leave the workers."""

import copy

import numpy as np

from ..._backend import DaskRows
from ._pilot import PILOT_ROWS, PilotSample
from ._statistics import MAX_MONOMIALS, PassGLMStatistics
from ._surrogate import _model_name


def _chunk_summaries(empty, capacity, summaries, X, y, sample_weight, offset):
    # runs on a worker: only the empty statistics and this chunk's rows arrive there (a
    # copy: the threaded scheduler hands every task the same object); ``summaries`` are
    # those of the chunks the task read before (None for its first)
    if np.all(sample_weight == 1.0):
        # unit weights, as in memory: no weight passes (a sixth of the chunk's time)
        sample_weight = None
    if summaries is None:
        stats = copy.deepcopy(empty).add(X, y, sample_weight)
        return stats, PilotSample.of_rows(stats.model, X, y, sample_weight, offset=offset,
                                          capacity=capacity)
    stats, sample = summaries
    # the sample so far bounds the keys this chunk's rows need to enter it
    return (stats.add(X, y, sample_weight),
            sample.add(X, y, sample_weight, offset=offset))


def summarise_chunks(rows, empty, capacity=2 * PILOT_ROWS):
    """The PASS-GLM statistics (with the settings and polynomial of the ``empty`` ones) and
    the :class:`PilotSample` of the given ``capacity`` of the rows of a
    :class:`~skcoreset._backend.DaskRows` storage, from one pass.

    Each chunk is summarised on its worker (:meth:`PassGLMStatistics.add`,
    :meth:`PilotSample.of_rows`) and the summaries are added up by a tree of tasks: only the
    small statistics (``O(p^2)`` numbers for degree 2) and at most ``capacity`` rows per
    stratum travel, never the data, the "trivially distributed" computation of Huggins et
    al. (2017), §5.2. A chunk containing NaN or infinity raises in the task that summarises
    it.
    """
    return rows.fold_with_starts(_chunk_summaries, empty, capacity)


def pass_glm_statistics_dask(X, y, family, *, sample_weight=None, degree=2, radius=4.0,
                             fit_intercept=True, max_monomials=MAX_MONOMIALS, coef=None):
    """PASS-GLM statistics of dask arrays, computed chunk by chunk where they live
    (:func:`summarise_chunks`).

    Parameters
    ----------
    X : dask.array.Array of shape (n, d)
    y : dask.array.Array or ndarray of shape (n,)
        Encoded as for :func:`pass_glm_statistics`; rechunked to the row chunks of ``X``.
    family : Family or {"logistic", "poisson"}
    sample_weight : dask.array.Array or ndarray of shape (n,), default=None
    degree, radius, fit_intercept, max_monomials, coef
        See :meth:`PassGLMStatistics.empty`.

    Returns
    -------
    PassGLMStatistics
    """
    rows = DaskRows.from_arrays(X, y, sample_weight)
    stats = PassGLMStatistics.empty(_model_name(family), rows.n_features, degree=degree,
                                    radius=radius, fit_intercept=fit_intercept,
                                    max_monomials=max_monomials, coef=coef)
    return summarise_chunks(rows, stats)[0]
