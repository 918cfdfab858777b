"""StreamingCoreset on dask arrays tells rows sorted by their outcome to shuffle, as in
memory (the blocks' outcome sums come from the leaf tasks that read them), and so do the
constructors that merge-reduce the chunks of dask arrays."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skcoreset import GIGACoreset, QuasiNewtonCoreset, StreamingCoreset, UniformCoreset

from ..conftest import logistic_data


@pytest.fixture(scope="module")
def client(dask_cluster):
    distributed = pytest.importorskip("distributed")
    with distributed.Client(dask_cluster) as client:
        yield client


def _order_warnings(caught):
    return [str(w.message) for w in caught if "sorted or grouped" in str(w.message)]


def test_dask_rows_sorted_by_outcome_are_told_to_shuffle(client):
    da = pytest.importorskip("dask.array")
    X, y = logistic_data(2000, np.linspace(1.5, -1.0, 3), 0.2, seed=0)
    order = np.argsort(y, kind="stable")
    stream = StreamingCoreset(QuasiNewtonCoreset(M=50), block_size=200,
                              random_state=0)

    def dask_rows(rows):
        # chunks unlike the blocks: the stream rechunks them into its blocks of 200 rows
        return da.from_array(X[rows], chunks=(300, 3)), da.from_array(y[rows], chunks=450)

    with warnings.catch_warnings(record=True) as in_memory:
        warnings.simplefilter("always")
        clone(stream).fit(X[order], y[order])
    with pytest.warns(UserWarning, match=r"9\d% of the variance of y lies between its 10 "
                                         r"blocks.*0.45%.*Shuffle the rows") as caught:
        fitted = clone(stream).fit(*dask_rows(order))
    # the same blocks' sums as in memory: the same message
    assert _order_warnings(caught) == _order_warnings(in_memory) != []
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*sorted or grouped")
        fitted.partial_fit(X[order][:200], y[order][:200])  # told once a stream
        clone(stream).fit(*dask_rows(np.arange(len(y))))  # random order


@pytest.mark.filterwarnings("ignore::skcoreset.exceptions.CoresetAccuracyWarning")
def test_dask_chunks_sorted_by_outcome_are_told_to_shuffle(client):
    # a constructor fitted on dask arrays merge-reduces their chunks as the stream does:
    # the same rule, naming the chunks
    da = pytest.importorskip("dask.array")
    X, y = logistic_data(2000, np.linspace(1.5, -1.0, 3), 0.2, seed=0)
    order = np.argsort(y, kind="stable")
    giga = GIGACoreset(M=20, projection_dim=50, random_state=0)

    def dask_rows(rows):
        return da.from_array(X[rows], chunks=(200, 3)), da.from_array(y[rows], chunks=200)

    with pytest.warns(UserWarning, match=r"GIGACoreset: 9\d% of the variance of y lies "
                                         r"between the 10 chunks.*0.45%.*Shuffle the rows"):
        clone(giga).fit(*dask_rows(order))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*sorted or grouped")
        clone(giga).fit(*dask_rows(np.arange(len(y))))  # random order
        # sampling draws the same subsets in law whatever the order
        UniformCoreset(M=20, random_state=0).fit(*dask_rows(order))
