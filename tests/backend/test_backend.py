"""The row storages of skcoreset._backend: in memory (ndarray, memmap) and dask give the same
sums and the same sampling distributions (the import cycles are checked in test_layers)."""

import os
import sys

import numpy as np
import pytest

from skcoreset import StreamingCoreset, UniformCoreset
from skcoreset._backend import DaskRows, InMemoryRows, row_chunks
from skcoreset.coreset import BaseCoreset


def _rows(n=1000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.2, 1.0, -1.0)
    w = rng.uniform(0.0, 2.0, n)
    w[::7] = 0.0  # rows standing for nothing
    return X, y, w


def _dask_rows(X, y, w, chunks=130):
    da = pytest.importorskip("dask.array")
    rows = DaskRows.from_arrays(da.from_array(X, chunks=(chunks, 2)), y,
                                da.from_array(w, chunks=chunks + 11))
    return rows


def _sums(X, y, w):
    return X.T @ (w * y), w.sum(), np.count_nonzero(w > 0)


@pytest.mark.parametrize("n, n_cols, max_elements, min_rows",
                         [(0, 3, 10, 1), (10, 3, 10, 1), (10, 3, 10, 4), (10_000, 7, 2**12, 1)])
def test_row_chunks_cover_the_rows_within_the_budget(n, n_cols, max_elements, min_rows):
    chunks = list(row_chunks(n, n_cols, max_elements=max_elements, min_rows=min_rows))
    assert np.array_equal(np.concatenate([np.arange(n)[c] for c in chunks] or [[]]),
                          np.arange(n))
    step = max(min_rows, max_elements // n_cols, 1)
    assert all(c.stop - c.start <= step for c in chunks)
    assert all(c.stop - c.start == step for c in chunks[:-1])


def test_sums_and_row_maps_agree_across_storages(tmp_path):
    X, y, w = _rows()
    memmap = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=float,
                                       shape=X.shape)
    memmap[:] = X
    expected = _sums(X, y, w)
    dask_rows = _dask_rows(X, y, w)
    assert dask_rows.n == 1000 and dask_rows.n_features == 3 and dask_rows.n_chunks == 8
    for data in (InMemoryRows(X, y, w), InMemoryRows(memmap, y, w), dask_rows):
        for got, want in zip(data.sum(_sums), expected):
            np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(data.map_rows(lambda X, y, w: w * X[:, 0])),
                                   w * X[:, 0])
        assert data.max_abs() == np.abs(X).max()
        assert data.max_weight() == w.max()
        assert data.has_both_classes()
    one_class = InMemoryRows(X, np.where(w > 0, -1.0, 1.0), w)  # +1 only at weight 0
    assert not one_class.has_both_classes()


def test_memmap_log_posterior_is_read_in_row_chunks(tmp_path, monkeypatch):
    """A memmap (or the ndarray view of it that validation returns) gets the chunked log
    posterior, which holds no linear predictor of all rows, with the in-memory values."""
    from sklearn.utils import check_array

    from skcoreset._inference._common import (ChunkedLogPosterior, LogPosterior,
                                              log_posterior_of)
    from skcoreset.families import LogisticFamily

    X, y, w = _rows(n=2000, d=4, seed=5)
    memmap = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=float,
                                       shape=X.shape)
    memmap[:] = X
    view = check_array(np.load(tmp_path / "X.npy", mmap_mode="r"))
    assert not isinstance(view, np.memmap)
    assert InMemoryRows(view, y, w).file_backed and not InMemoryRows(X, y, w).file_backed
    args = (LogisticFamily(), np.full(5, 0.5), True)
    assert isinstance(log_posterior_of(InMemoryRows(X, y, w), *args), LogPosterior)
    # row chunks of 300 rows: each pass sums several
    monkeypatch.setattr(row_chunks, "__kwdefaults__", {"max_elements": 300 * 5,
                                                       "min_rows": 1})
    chunked = log_posterior_of(InMemoryRows(view, y, w), *args)
    assert isinstance(chunked, ChunkedLogPosterior)
    theta = np.random.default_rng(1).normal(size=5) / 3
    for ours, theirs in [(chunked, LogPosterior(X, y, args[0], w, *args[1:])),
                         (chunked.thinned(4), LogPosterior(X, y, args[0], w,
                                                           *args[1:]).thinned(4))]:
        value, _, grad, hessian = ours.value_and_grad(theta, neg_hessian=np.float64)
        ref_value, _, ref_grad, ref_hessian = theirs.value_and_grad(theta,
                                                                    neg_hessian=np.float64)
        assert value == pytest.approx(ref_value, rel=1e-12)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(hessian, ref_hessian, rtol=1e-10)
    assert chunked.n_passes == 2  # the total weight (for the thinned rows), one evaluation


def test_dask_summary_witnesses_the_targets_of_positive_weight():
    X, y, w = _rows()
    w[y > 0] = 0.0
    data = _dask_rows(X, y, w)
    assert set(np.unique(data.summary.witness)) == {-1.0, 1.0}
    assert set(np.unique(data.summary.positive_witness)) == {-1.0}
    assert not data.has_both_classes()
    assert data.summary.min_weight == 0.0 and data.summary.max_weight == w.max()


@pytest.mark.parametrize("values", [
    [], [3], [True, False, True], np.array([2, 2, 2], dtype=np.int8), [1.0, np.inf, -np.inf, 0.5],
    [np.nan, 1.0, 0.0], [np.nan], np.arange(-5, 5).astype(np.uint8), [-0.0, 0.0, 1.0],
    [7, 3, 3, 9, 1], [np.inf, 1.0], np.array([0, 1, 1, 0], dtype=np.int8)])
def test_smallest_distinct_values_are_those_of_a_sort(values):
    # the summary's witness finds y's smallest distinct values without sorting the chunk
    from skcoreset._backend._dask_summary import _smallest_distinct

    values = np.asarray(values)
    expected = np.unique(values)[:3]
    found = _smallest_distinct(values)
    assert found.dtype == expected.dtype
    np.testing.assert_array_equal(found, expected)


def test_dask_summary_of_unit_weights_is_that_of_ones():
    from skcoreset._backend._dask_summary import summarise_chunk

    y = np.array([0, 1, 1, 0, 2], dtype=np.int8)
    for a, b in zip(summarise_chunk(y, None, 0, 0), summarise_chunk(y, np.ones(5), 0, 0)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("stratify", [False, True])
def test_uniform_sample_keeps_each_total_weight(stratify):
    X, y, w = _rows()
    for data in (InMemoryRows(X, y, w), _dask_rows(X, y, w)):
        part = data.uniform_sample(50, np.random.RandomState(0), stratify=stratify)
        assert part.size == 50 == len(np.unique(part.indices))
        assert np.all(w[part.indices] > 0)
        np.testing.assert_array_equal(part.X, X[part.indices])
        np.testing.assert_array_equal(part.y, y[part.indices])
        groups = [(y == -1, part.y == -1), (y == 1, part.y == 1)] if stratify else [
            (np.ones(1000, bool), np.ones(50, bool))]
        for in_data, in_part in groups:
            # each kept row keeps its weight up to one factor: the group's total weight
            np.testing.assert_allclose(part.weights[in_part].sum(), w[in_data].sum())
            ratio = part.weights[in_part] / w[part.indices[in_part]]
            np.testing.assert_allclose(ratio, ratio[0])
        if stratify:  # classes in proportion to their rows of positive weight
            positive = np.bincount((y[w > 0] > 0).astype(int))
            drawn = np.bincount((part.y > 0).astype(int))
            assert np.all(np.abs(drawn - 50 * positive / positive.sum()) < 1)


def test_subsample_is_uniform_over_rows_of_positive_weight():
    X, y, w = _rows(n=60)
    for data in (InMemoryRows(X, y, w), _dask_rows(X, y, w, chunks=13)):
        counts = np.zeros(60)
        for seed in range(300):
            part = data.subsample(10, np.random.RandomState(seed), stream=1)
            np.testing.assert_array_equal(part.weights, w[part.indices])
            counts[part.indices] += 1
        assert np.all(counts[w == 0] == 0)
        # each of the 51 rows of positive weight is drawn with probability 10 / 51
        expected = 300 * 10 / np.count_nonzero(w > 0)
        assert np.all(np.abs(counts[w > 0] - expected) < 5 * np.sqrt(expected))


@pytest.mark.parametrize("stratify", [False, True])
def test_importance_sample_is_unbiased(stratify):
    """E[sum_n weight_n f_n] = sum_n w_n f_n for the reweighted draws (closed form of the
    estimator), checked by the mean over seeds, on both storages."""
    X, y, w = _rows(n=200)
    importance = 0.1 + X[:, 0] ** 2
    f = X[:, 1] + 3.0
    exact = w @ f
    for data, scores in [(InMemoryRows(X, y, w), importance),
                         (_dask_rows(X, y, w, chunks=37), None)]:
        if scores is None:
            scores = data.map_rows(lambda X, y, w: 0.1 + X[:, 0] ** 2)
        estimates = []
        for seed in range(200):
            part, total = data.importance_sample(20, np.random.RandomState(seed), scores,
                                                 stratify=stratify)
            np.testing.assert_allclose(total, w @ importance)
            if stratify:
                assert set(part.y) == {-1.0, 1.0}
            estimates.append(part.weights @ f[part.indices])
        estimates = np.array(estimates)
        assert abs(estimates.mean() - exact) < 4 * estimates.std() / np.sqrt(200)


def _importance(scale, X, y, w):
    return 0.1 + scale * X[:, 0] ** 2


@pytest.mark.parametrize("stratify", [False, True])
def test_priority_sample_is_unbiased_nested_and_keeps_certain_rows(stratify, tmp_path):
    """Horvitz-Thompson weights of priority sampling: E[sum_kept weight_n f_n] equals
    sum_n w_n f_n (mean over seeds, within 4 standard errors) for every budget, on memory,
    memmap and dask storages; smaller budgets keep subsets of larger ones, and a row whose
    importance dominates is kept with its own weight."""
    X, y, w = _rows(n=200)
    X[5, 0] = 40.0  # importance ~1600 times the others': kept with certainty
    memmap = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=float,
                                       shape=X.shape)
    memmap[:] = X
    f = X[:, 1] + 3.0
    exact = w @ f
    for data in (InMemoryRows(X, y, w), InMemoryRows(memmap, y, w),
                 _dask_rows(X, y, w, chunks=37)):
        estimates = {10: [], 30: []}
        for seed in range(300):
            first, second = data.priority_sample((30, 5), np.random.RandomState(seed),
                                                 _importance, 1.0, stratify=stratify)
            assert second.parts[0].size <= 6
            np.testing.assert_allclose(sum(first.masses), w @ _importance(1.0, X, y, w))
            parts = {size: first.draw(size) for size in estimates}
            assert set(parts[10].indices) <= set(parts[30].indices)
            for size, part in parts.items():
                assert len(part.indices) == size and np.all(w[part.indices] > 0)
                assert 5 in part.indices
                np.testing.assert_allclose(part.weights[part.indices == 5], w[5])
                if stratify:
                    assert set(part.y) == {-1.0, 1.0}
                estimates[size].append(part.weights @ f[part.indices])
        for values in estimates.values():
            values = np.array(values)
            assert abs(values.mean() - exact) < 4 * values.std() / np.sqrt(len(values))


def test_priority_samples_are_the_same_however_the_rows_are_chunked():
    """The keys hash the row numbers with a seed drawn from the rng: in memory (row chunks
    of any size) and on dask chunks, the same rng keeps the same rows with the same
    weights, and the budgets' samples are independent."""
    X, y, w = _rows(n=3000)
    samples = [data.priority_sample((40, 40), np.random.RandomState(7), _importance, 1.0,
                                    stratify=True)
               for data in (InMemoryRows(X, y, w), _dask_rows(X, y, w, chunks=170))]
    for memory, dask in zip(*samples):
        part, other = memory.draw(40), dask.draw(40)
        np.testing.assert_array_equal(part.indices, other.indices)
        np.testing.assert_allclose(part.weights, other.weights, rtol=1e-12)
    first, second = (sample.draw(40).indices for sample in samples[0])
    assert len(np.intersect1d(first, second)) < 20
    assert _dask_rows(X, y, w).n_positive() == np.count_nonzero(w > 0)


def test_priority_allocation_caps_strata_at_their_rows():
    X, y, w = _rows(n=200)
    sample, = InMemoryRows(X, y, w).priority_sample((150,), np.random.RandomState(0),
                                                    _importance, 1.0, stratify=True)
    counts = sample.counts
    alloc = sample.allocation(150)
    assert alloc.sum() == 150 and np.all(alloc <= counts) and np.all(alloc >= 1)
    assert np.array_equal(sample.allocation(10**6), counts)


def test_importance_sample_reports_non_finite_importance():
    X, y, w = _rows(n=100)
    scores = np.ones(100)
    scores[3] = np.inf
    w[3] = 1.0
    part, total = InMemoryRows(X, y, w).importance_sample(5, np.random.RandomState(0),
                                                          scores)
    assert part is None and total == np.inf
    data = _dask_rows(X, y, w, chunks=30)
    x3 = X[3, 0]
    scores = data.map_rows(lambda X, y, w: np.where(X[:, 0] == x3, np.inf, 1.0))
    part, total = data.importance_sample(5, np.random.RandomState(0), scores)
    assert part is None and total == np.inf


def test_base_coreset_is_abstract():
    with pytest.raises(TypeError, match="abstract"):
        BaseCoreset()

    class Incomplete(BaseCoreset):
        pass

    with pytest.raises(TypeError, match="_build"):
        Incomplete()


def test_streaming_partial_fit_validates_parameters_on_the_first_call():
    X, y = _rows(n=200)[:2]
    with pytest.raises(ValueError, match="block_size"):
        StreamingCoreset(block_size=0).partial_fit(X, y, classes=[-1, 1])
    with pytest.raises(ValueError, match="Invalid base_coreset.*'M'"):
        StreamingCoreset(UniformCoreset(M=0)).partial_fit(X, y, classes=[-1, 1])


def test_chunks_too_small_for_a_task_are_merged_once():
    """A few hundred one-row chunks cost a task per row in every pass (minutes for a
    sampler) and, for merge-reduce, coresets of one row each: they are merged into one
    block, held in memory, for the estimators and the constructors alike."""
    da = pytest.importorskip("dask.array")
    from skcoreset import BayesianLogisticRegression, FrankWolfeCoreset
    from skcoreset._backend import as_row_blocks

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X @ [1.0, -0.5, 0.3] + rng.logistic(size=400) > 0).astype(int)
    tiny = da.from_array(X, chunks=(1, 3)), da.from_array(y, chunks=1)
    blocks = as_row_blocks(tiny[0])
    assert blocks.chunks == ((400,), (3,))
    assert len(blocks.__dask_graph__()) == 1  # persisted: no pass reads the 400 chunks
    rows = DaskRows.from_arrays(*tiny)
    assert rows.sizes == [400]
    # a few chunks of real size are the caller's choice, kept as they are
    assert as_row_blocks(da.from_array(X, chunks=(25, 3))).chunks[0] == (25,) * 16
    # the same coreset as from one chunk (merge-reduce no longer over one-row coresets)
    one = da.from_array(X, chunks=(400, 3)), da.from_array(y, chunks=400)
    merged = FrankWolfeCoreset(M=20, random_state=0).fit(*tiny)
    whole = FrankWolfeCoreset(M=20, random_state=0).fit(*one)
    np.testing.assert_array_equal(merged.sample_indices_, whole.sample_indices_)
    np.testing.assert_allclose(merged.sample_weight_, whole.sample_weight_, rtol=1e-12)
    # the estimators' check is the same function
    reg = BayesianLogisticRegression().fit(*tiny)
    np.testing.assert_allclose(reg.coef_, BayesianLogisticRegression().fit(X, y).coef_,
                               rtol=1e-8)


def test_large_data_in_small_chunks_warn_with_the_fix():
    """Too large to hold merged: merged lazily in every pass, with a warning naming the
    chunk size and the fix (nothing is computed)."""
    da = pytest.importorskip("dask.array")
    from skcoreset._backend import as_row_blocks

    X = da.zeros((5_000_000, 2), chunks=(10_000, 2))
    with pytest.warns(UserWarning, match=r"X has 500 chunks of 10,000 rows on average.*"
                      r"X = X.rechunk\(\{0: 32768\}\).persist\(\)"):
        blocks = as_row_blocks(X)
    assert blocks.chunks[0][0] == 32768


def test_every_storage_fulfils_the_row_storage_contract():
    # the inference functions use only what RowStorage declares: each storage must offer
    # every member, with the declared parameters (extra ones must have defaults)
    import inspect

    import dask.array as da

    from skcoreset._backend import RowStorage

    X, y = np.ones((10, 2)), np.ones(10)
    storages = [InMemoryRows(X, y, np.ones(10)),
                DaskRows.from_arrays(da.from_array(X, chunks=5), da.from_array(y, chunks=5))]
    declared = {name: member for name, member in vars(RowStorage).items()
                if not name.startswith("_") and callable(member)}
    for storage in storages:
        assert isinstance(storage, RowStorage)
        assert isinstance(storage.chunked, bool) and isinstance(storage.file_backed, bool)
        for name, member in declared.items():
            wanted = inspect.signature(member).parameters
            offered = inspect.signature(getattr(type(storage), name)).parameters
            assert set(wanted) <= set(offered), (type(storage).__name__, name)
            for extra in set(offered) - set(wanted):
                assert (offered[extra].default is not inspect.Parameter.empty
                        or offered[extra].kind in (inspect.Parameter.VAR_POSITIONAL,
                                                   inspect.Parameter.VAR_KEYWORD)), \
                    (type(storage).__name__, name, extra)


def test_no_code_outside_the_backend_switches_on_a_storage_class():
    import pathlib
    import re

    import skcoreset

    root = pathlib.Path(skcoreset.__file__).parent
    pattern = re.compile(r"isinstance\([^)]*\b(InMemoryRows|DaskRows)\b")
    offenders = [str(path.relative_to(root)) for path in root.rglob("*.py")
                 if "_backend" not in path.parts and pattern.search(path.read_text())]
    assert offenders == []


@pytest.mark.parametrize("rows", [slice(0, 50), slice(0, 40), slice(7, 31), slice(0, 0),
                                  slice(49, 50)])
def test_row_slice_of_csr_equals_scipys_and_shares_its_rows(rows):
    from scipy import sparse

    from skcoreset._backend import row_slice

    X = sparse.random(50, 8, density=0.3, format="csr", random_state=0)
    got = row_slice(X, rows)
    np.testing.assert_array_equal(got.toarray(), X[rows].toarray())
    if got.nnz:
        assert np.shares_memory(got.data, X.data) and np.shares_memory(got.indices, X.indices)
    np.testing.assert_array_equal(got @ np.arange(8.0), X[rows] @ np.arange(8.0))
    np.testing.assert_array_equal(got.T @ np.arange(got.shape[0]),
                                  X[rows].T @ np.arange(got.shape[0]))
    dense = X.toarray()
    assert np.shares_memory(row_slice(dense, rows), dense) or not dense[rows].size


_MAPPINGS = """
import ctypes, numpy as np
from skcoreset._backend._allocator import reusing_memory

class Info(ctypes.Structure):  # glibc's struct mallinfo2
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info

def mappings_while_held():
    block = np.ones(2**17)  # 1 MiB
    return libc.mallinfo2().hblks

before = mappings_while_held()
with reusing_memory():
    inside = mappings_while_held()
after = mappings_while_held()
print(before, inside, after)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_task_temporaries_reuse_the_heap_where_the_environment_fixed_its_thresholds():
    """With ``MALLOC_TRIM_THRESHOLD_`` set (as distributed sets it for its workers), a 1 MiB
    temporary is a mapping of its own, except inside the tasks' context, after which the
    thresholds are restored."""
    import subprocess

    def mappings(env):
        out = subprocess.run([sys.executable, "-c", _MAPPINGS], capture_output=True,
                             text=True, env={**os.environ, **env})
        if "mallinfo2" in out.stderr:
            pytest.skip("not glibc >= 2.33")
        assert out.returncode == 0, out.stderr
        return [int(v) for v in out.stdout.split()]

    before, inside, after = mappings({"MALLOC_TRIM_THRESHOLD_": "65536"})
    assert before == after == inside + 1


def _fold_chunks(state, X, y, w, start):
    # the chunks a task folded, in its order: rows read, weighted sums, first rows
    if state is None:
        state = (0, 0.0, [])
    rows, sums, starts = state
    assert not starts or starts[-1] < start  # a task reads its chunks in row order
    return rows + len(y), sums + X.T @ (w * y), starts + [start]


@pytest.mark.parametrize("on_cluster", [False, True])
def test_fold_reads_every_chunk_once_in_row_order_within_a_task(on_cluster, request):
    """``fold_with_starts`` hands each chunk the state of the chunks its task read before:
    every chunk is read once, the tasks' states add up to the sums over all rows, and on
    a cluster a pass is a task per worker thread holding chunks."""
    X, y, w = _rows(n=2000)
    if not on_cluster:
        rows = _dask_rows(X, y, w, chunks=250)
        n_rows, sums, starts = rows.fold_with_starts(_fold_chunks)
    else:
        distributed = pytest.importorskip("distributed")
        with distributed.Client(request.getfixturevalue("dask_cluster")) as client:
            rows = _dask_rows(X, y, w, chunks=250)
            rows = DaskRows(*client.persist([rows._X, rows._y, rows._w]), rows.summary)
            with distributed.get_task_stream(client=client) as tasks:
                n_rows, sums, starts = rows.fold_with_starts(_fold_chunks)
        folds = [t for t in tasks.data if "_fold_chunks" in str(t["key"])]
        assert 1 <= len(folds) <= 2 < rows.n_chunks
    assert n_rows == len(y)
    assert sorted(starts) == rows.starts
    np.testing.assert_allclose(sums, X.T @ (w * y), rtol=1e-12)


class _Unhashable:
    """Parameters of a pass that dask cannot hash: a pass over chunks held on a cluster
    sends its arguments as they are (hashing them cost a pass more than its arithmetic
    at NUTS' thousands of passes)."""

    def __init__(self, theta):
        self.theta = theta

    def __dask_tokenize__(self):
        raise AssertionError("a pass hashed its arguments")


def _offset_sums(params, X, y, w, offset=None):
    eta = X @ params.theta + offset
    return X.T @ (w * eta), w @ eta


def test_passes_over_held_chunks_submit_their_arguments_unhashed(dask_cluster):
    """Chunks held on a cluster: a pass is a task per worker thread submitted with the
    chunks' futures (no graph, no hash of the parameters) whose sums, with the rows'
    offsets and weights, equal those in memory."""
    distributed = pytest.importorskip("distributed")
    X, y, w = _rows(n=2000)
    offset = np.random.default_rng(1).normal(size=len(y))
    with distributed.Client(dask_cluster) as client:
        rows = _dask_rows(X, y, w, chunks=250)
        rows = DaskRows(*client.persist([rows._X, rows._y, rows._w]),
                        rows.summary).with_offset(offset)
        for theta in ([0.5, -1.0, 2.0], [0.0, 0.25, -0.5]):
            grad, total = rows.sum(_offset_sums, _Unhashable(np.array(theta)))
            eta = X @ theta + offset
            np.testing.assert_allclose(grad, X.T @ (w * eta), rtol=1e-12)
            assert total == pytest.approx(w @ eta, rel=1e-12)
        assert 1 <= len(rows._held_groups()) <= 2 < rows.n_chunks
