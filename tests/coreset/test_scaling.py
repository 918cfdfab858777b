"""Scaling out (issue 6): merge-reduce coresets (Huggins, Campbell & Broderick 2016, §3.4),
parallel and streaming construction, dask arrays on a 2-worker distributed cluster, memmap input."""

import tracemalloc
import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import clone

from skcoreset import (BayesianLogisticRegression, GIGACoreset, QuasiNewtonCoreset,
                       SensitivityCoreset, StreamingCoreset, UniformCoreset, WeightedSubset)
from skcoreset._posterior import GaussianPosterior
from skcoreset.coreset._sensitivity import assign_clusters, sensitivity_upper_bounds
from skcoreset.datasets import make_heavy_tailed, make_rare_events
from skcoreset.families import make_family

from ..conftest import LOGISTIC_SETS, POISSON_SETS, load_paper_dataset, logistic_data
from .test_coreset import PAPER_KWARGS, _coreset_posterior, _full_weights


def _logistic_data(n, d=3, seed=0):
    return logistic_data(n, np.linspace(1.5, -1.0, d), 0.2, seed=seed)


def _relative_kl(X, y, model, coreset, full, prior_kl):
    """KL(coreset Laplace posterior || full-data Laplace posterior) / KL(prior || full)."""
    return _coreset_posterior(X, y, model, _full_weights(coreset, len(y))).kl(full) / prior_kl


def _geometric_mean(values):
    return float(np.exp(np.mean(np.log(values))))


def _kl_merge_reduce_vs_single(X, y, model, base, n_seeds):
    """Geometric means over seeds of the relative KL of the merge-reduce coreset (8 blocks)
    and of the single-pass coreset of the same final size.

    "Same final size": for Uniform and Sensitivity the single pass gets a budget equal to
    the number of distinct rows the merge-reduce coreset ended with (so it never has more
    rows); GIGA is deterministic in its budget M (iterations), so both get the same M.
    """
    full = _coreset_posterior(X, y, model, np.ones(len(y)))
    p = len(full.mean)
    prior_kl = GaussianPosterior(np.zeros(p), np.eye(p)).kl(full)
    block_size = -(-len(y) // 8)
    merged, single = [], []
    for seed in range(n_seeds):
        stream = StreamingCoreset(base, block_size=block_size, random_state=seed).fit(X, y)
        size = base.M if isinstance(base, GIGACoreset) else len(stream.sample_indices_)
        one_pass = clone(base).set_params(M=size, random_state=seed).fit(X, y)
        merged.append(_relative_kl(X, y, model, stream, full, prior_kl))
        single.append(_relative_kl(X, y, model, one_pass, full, prior_kl))
    return _geometric_mean(merged), _geometric_mean(single)


# --- merge-reduce: the tree, the stream, the parallel leaves ---------------------------------
BASES = [UniformCoreset(M=40), SensitivityCoreset(M=40),
         GIGACoreset(M=40, projection_dim=100, weighting="prior")]
BASE_IDS = ["uniform", "sensitivity", "giga-prior"]


@pytest.mark.parametrize("base", BASES, ids=BASE_IDS)
def test_fit_equals_stream_and_parallel_leaves(base):
    X, y = _logistic_data(2400)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    fitted = StreamingCoreset(base, block_size=300, random_state=0).fit(X, y, sample_weight=w)
    assert fitted.n_blocks_ == 8 and fitted.n_samples_seen_ == 2400
    assert 0 < len(fitted.sample_indices_) <= base.M
    assert np.all(np.diff(fitted.sample_indices_) > 0) and np.all(fitted.sample_weight_ > 0)
    # the same tree, fed as a stream in uneven calls (indices in the stream's numbering)
    stream = StreamingCoreset(base, block_size=300, random_state=0)
    for start, stop in [(0, 300), (300, 1200), (1200, 1500), (1500, 2400)]:
        stream.partial_fit(X[start:stop], y[start:stop], sample_weight=w[start:stop])
    np.testing.assert_array_equal(stream.sample_indices_, fitted.sample_indices_)
    np.testing.assert_allclose(stream.sample_weight_, fitted.sample_weight_, rtol=1e-12)
    # leaves built by two joblib worker processes: seeds follow the tree, not the worker
    parallel = StreamingCoreset(base, block_size=300, n_jobs=2, random_state=0).fit(
        X, y, sample_weight=w)
    np.testing.assert_array_equal(parallel.sample_indices_, fitted.sample_indices_)
    np.testing.assert_allclose(parallel.sample_weight_, fitted.sample_weight_, rtol=1e-12)


def test_streaming_contract_pipeline_and_weights(capsys):
    X, y = _logistic_data(1500)
    w = np.ones(len(y))
    w[:200] = 0.0
    coreset = StreamingCoreset(UniformCoreset(M=50), block_size=250, random_state=0,
                               verbose=1)
    subset = coreset.fit_transform(X, y, sample_weight=w)
    assert np.all(coreset.sample_indices_ >= 200)  # zero-weight rows stand for nothing
    np.testing.assert_allclose(coreset.sample_weight_.sum(), w.sum())
    assert coreset.model_ == "logistic" and list(coreset.classes_) == [0, 1]
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 6 and "block 6: 1500 rows" in lines[-1] and "coreset size" in lines[-1]
    assert isinstance(subset, WeightedSubset)
    np.testing.assert_array_equal(subset.sample_indices, coreset.sample_indices_)
    assert coreset.transform(X) is X
    clf = BayesianLogisticRegression().fit(subset, y)
    ref = BayesianLogisticRegression().fit(X[coreset.sample_indices_],
                                           y[coreset.sample_indices_],
                                           sample_weight=coreset.sample_weight_)
    np.testing.assert_allclose(clf.coef_, ref.coef_)
    assert StreamingCoreset().M == UniformCoreset().M  # default base: UniformCoreset()


def test_hilbert_stream_shares_one_projection_and_reports_error(capsys):
    X, y = _logistic_data(2000)
    base = GIGACoreset(M=30, projection_dim=100)
    coreset = StreamingCoreset(base, block_size=250, random_state=0, verbose=1).fit(X, y)
    full = GIGACoreset(M=30, projection_dim=100, random_state=0).fit(X, y)
    # weighting="laplace": the Laplace posterior of all rows, computed in row chunks
    np.testing.assert_allclose(coreset.weighting_posterior_.mean,
                               full.weighting_posterior_.mean, rtol=1e-8)
    np.testing.assert_allclose(coreset.weighting_posterior_.cov,
                               full.weighting_posterior_.cov, rtol=1e-8)
    assert "error" in capsys.readouterr().out.strip().splitlines()[-1]


def test_partial_fit_classes_and_errors():
    X, y = _logistic_data(600)
    first = np.flatnonzero(y == 1)[:50]
    stream = StreamingCoreset(SensitivityCoreset(M=30), block_size=100, random_state=0)
    with pytest.raises(ValueError, match="two classes"):
        clone(stream).partial_fit(X[first], y[first])
    stream.partial_fit(X[first], y[first], classes=[0, 1])
    stream.partial_fit(X, y)
    assert stream.n_samples_seen_ == 650 and list(stream.classes_) == [0, 1]
    with pytest.raises(ValueError, match="not in classes_"):
        stream.partial_fit(X[:10], np.full(10, 2))
    with pytest.raises(ValueError, match="features"):
        stream.partial_fit(X[:10, :2], y[:10])
    with pytest.raises(ValueError, match="block_size"):
        StreamingCoreset(block_size=0).fit(X, y)


# --- merge-reduce quality: KL within 2x of the single-pass coreset of the same size -----------
@pytest.mark.parametrize("name", LOGISTIC_SETS + POISSON_SETS)
def test_merge_reduce_kl_on_paper_data(name):
    X, y, model = load_paper_dataset(name)
    options = dict(model=make_family(model, link="softplus"), **PAPER_KWARGS)
    cases = {"uniform": (UniformCoreset(M=100, **options), 20),
             "giga": (GIGACoreset(M=100, **options), 3)}
    if model == "logistic":
        cases["sensitivity"] = (SensitivityCoreset(M=100, **options), 8)
    ratios = {}
    for key, (base, n_seeds) in cases.items():
        merged, single = _kl_merge_reduce_vs_single(X, y, model, base, n_seeds)
        ratios[key] = merged / single
    assert max(ratios.values()) <= 2.0, ratios


@pytest.mark.parametrize("n", [20_000, pytest.param(100_000, marks=pytest.mark.slow)])
def test_merge_reduce_kl_on_synthetic_logistic(n):
    X, y = _logistic_data(n, d=5, seed=3)
    cases = [(UniformCoreset(M=100), 5), (SensitivityCoreset(M=100), 3),
             (GIGACoreset(M=100), 1)]
    ratios = {}
    for base, n_seeds in cases:
        merged, single = _kl_merge_reduce_vs_single(X, y, "logistic", base, n_seeds)
        ratios[type(base).__name__] = merged / single
    assert max(ratios.values()) <= 2.0, ratios


# --- memmap: bounded memory on one machine ---------------------------------------------------
def test_float32_memmap_is_read_in_chunks(tmp_path):
    n, d = 200_000, 50
    X = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=np.float32,
                                  shape=(n, d))
    rng = np.random.default_rng(0)
    for start in range(0, n, 50_000):
        X[start:start + 50_000] = rng.normal(size=(50_000, d))
    X.flush()
    y = (rng.random(n) < expit(X[:, 0] - X[:, 1])).astype(int)
    X = np.load(tmp_path / "X.npy", mmap_mode="r")
    for coreset in [UniformCoreset(M=50, random_state=0),
                    SensitivityCoreset(M=50, random_state=0),
                    StreamingCoreset(GIGACoreset(M=20, projection_dim=50), block_size=5_000,
                                     random_state=0)]:
        tracemalloc.start()
        clone(coreset).fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        # X is 40 MB (a float64 copy would be 80 MB): the chunked paths never hold a copy
        assert peak < X.nbytes / 2, (type(coreset).__name__, peak)
    # reading float32 rows in chunks gives the in-memory float64 result
    X64 = np.asarray(X, dtype=np.float64)
    for coreset in [SensitivityCoreset(M=50, random_state=0),
                    StreamingCoreset(GIGACoreset(M=20, projection_dim=50), block_size=50_000,
                                     random_state=0)]:
        a, b = clone(coreset), clone(coreset).fit(X64, y)
        subset = a.fit_transform(X, y)
        np.testing.assert_array_equal(a.sample_indices_, b.sample_indices_)
        np.testing.assert_allclose(a.sample_weight_, b.sample_weight_, rtol=1e-10)
    assert isinstance(subset, WeightedSubset) and subset.shape == (len(a.sample_indices_), d)


# --- dask: a 2-worker distributed cluster ----------------------------------------------------
@pytest.fixture(scope="module")
def client(dask_cluster):
    distributed = pytest.importorskip("distributed")
    with distributed.Client(dask_cluster) as client:
        yield client


def _dask_inputs(X, y, w=None, chunks=500):
    da = pytest.importorskip("dask.array")
    # columns split and y chunked differently: the dask path must rechunk them
    return (da.from_array(X, chunks=(chunks, 2)), da.from_array(y, chunks=chunks + 70),
            None if w is None else da.from_array(w, chunks=chunks))


def _bytes_to_client(client, run):
    """Bytes the workers sent to anything but another worker (the client, through the
    scheduler or directly) while ``run()`` ran, from the workers' transfer logs."""
    def outgoing(dask_worker):
        return [(entry["who"], entry["total"]) for entry in dask_worker.transfer_outgoing_log]

    workers = set(client.scheduler_info()["workers"])
    before = {w: len(log) for w, log in client.run(outgoing).items()}
    result = run()
    after = client.run(outgoing)
    return result, sum(total for w, log in after.items() for who, total in log[before[w]:]
                       if who not in workers)


@pytest.mark.parametrize("base", [UniformCoreset(M=40), SensitivityCoreset(M=40),
                                  GIGACoreset(M=40, projection_dim=100)],
                         ids=["uniform", "sensitivity", "giga"])
def test_dask_streaming_equals_in_memory(client, base):
    distributed = pytest.importorskip("distributed")
    X, y = _logistic_data(3000)
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    Xd, yd, wd = _dask_inputs(X, y, w)
    stream = StreamingCoreset(base, block_size=400, random_state=0)
    expected = clone(stream).fit(X, y, sample_weight=w)
    with distributed.get_task_stream(client=client) as tasks:
        result = clone(stream).fit(Xd, yd, sample_weight=wd)
    np.testing.assert_array_equal(result.sample_indices_, expected.sample_indices_)
    np.testing.assert_allclose(result.sample_weight_, expected.sample_weight_, rtol=1e-8)
    leaves = [t for t in tasks.data if str(t["key"]).startswith("('_leaf")
              or "_leaf-" in str(t["key"])]
    assert len(leaves) == 8  # one task per block, on both worker processes
    assert {t["worker"] for t in leaves} == set(client.scheduler_info()["workers"])
    # a stream continues from the gathered coreset
    result.partial_fit(X[:400], y[:400])
    assert result.n_blocks_ == 9 and result.n_samples_seen_ == 3400


def test_dask_hilbert_equals_merge_reduce_over_chunks(client):
    X, y = _logistic_data(3000)
    Xd, yd, _ = _dask_inputs(X, y, chunks=500)
    giga = GIGACoreset(M=40, projection_dim=100, random_state=0)
    result = clone(giga).fit(Xd, yd)
    expected = StreamingCoreset(GIGACoreset(M=40, projection_dim=100), block_size=500,
                                random_state=0).fit(X, y)
    np.testing.assert_array_equal(result.sample_indices_, expected.sample_indices_)
    np.testing.assert_allclose(result.sample_weight_, expected.sample_weight_, rtol=1e-8)
    # deterministic part: the full-data Laplace weighting, by tree reductions of sums
    in_memory = clone(giga).fit(X, y).weighting_posterior_
    np.testing.assert_allclose(result.weighting_posterior_.mean, in_memory.mean, rtol=1e-9)
    np.testing.assert_allclose(result.weighting_posterior_.cov, in_memory.cov, rtol=1e-9)
    assert 0 < result.error_ < 1


def test_dask_quasi_newton_equals_in_memory(client):
    """QuasiNewtonCoreset on dask runs its in-memory steps where the chunks are: pilot and
    candidates are priority samples merged from all chunks, with keys hashed from the row
    numbers, and the Laplace fit, the calibration targets and the potential sums of the
    iterations are reductions over the chunks; so the same seed gives the same rows, and
    weights and KL estimates equal up to the rounding of sums over chunks."""
    distributed = pytest.importorskip("distributed")
    X, y = make_rare_events(6000, n_features=4, positive_rate=0.03, random_state=0)
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    counts, rates = make_heavy_tailed(5000, n_features=3, random_state=1)
    for (X, y, w), params in [
            ((X, y, w), dict(M=150)),
            ((counts, rates, None), dict(M="auto", target_kl=1e-3, model="poisson",
                                         max_iter=2, tol=0.0, n_subsample=None))]:
        coreset = QuasiNewtonCoreset(random_state=0, **params)
        memory = clone(coreset).fit(X, y, sample_weight=w)
        with distributed.get_task_stream(client=client) as tasks:
            lazy = clone(coreset).fit(*_dask_inputs(X, y, w, chunks=700))
        np.testing.assert_array_equal(lazy.sample_indices_, memory.sample_indices_)
        np.testing.assert_allclose(lazy.sample_weight_, memory.sample_weight_, rtol=1e-5)
        assert lazy.kl_estimate_ == pytest.approx(memory.kl_estimate_, rel=1e-3)
        np.testing.assert_allclose(lazy.kl_path_, memory.kl_path_, rtol=1e-3)
        np.testing.assert_allclose(lazy.history_, memory.history_, rtol=1e-3)
        ran = {name: [t for t in tasks.data if name in str(t["key"])]
               for name in ("_loglik_sums", "priority_leaf", "merge_priority",
                            "potential_sums")}
        chunks = -(-len(y) // 700)
        assert len(ran["_loglik_sums"]) >= 2  # passes of the Laplace fit, on the workers
        # pilot and candidates: a task per worker thread holding chunks, which merges its
        # chunks' samples, and one merging theirs (no tree of tasks)
        assert 2 <= len(ran["priority_leaf"]) <= 2 * 2 < 2 * chunks
        assert len(ran["merge_priority"]) == 2
        # an iteration's potential sums: a task per worker holding chunks
        assert lazy.n_iter_ <= len(ran["potential_sums"]) <= 2 * lazy.n_iter_
    assert lazy.stop_reason_ == "max_iter" and lazy.n_iter_ == 2


def test_dask_sensitivity_bounds_equal_in_memory(client):
    X, y = _logistic_data(3000)
    w = np.random.default_rng(4).uniform(0.5, 2.0, len(y))
    Xd, yd, wd = _dask_inputs(X, y, w)
    coreset = SensitivityCoreset(M=60, random_state=0).fit(Xd, yd, sample_weight=wd)
    # with the centres found on the reservoir sample, the radius and every bound equal
    # those of the in-memory computation over all rows
    y_pm = np.where(y == 1, 1.0, -1.0)
    labels, sq_dist = assign_clusters(X, y_pm, coreset.cluster_centers_, True)
    np.testing.assert_allclose(coreset.radius_, 3.0 / np.sqrt(np.average(sq_dist, weights=w)),
                               rtol=1e-10)
    expected = sensitivity_upper_bounds(X, y_pm, w, coreset.cluster_centers_, labels,
                                        coreset.radius_, True)
    np.testing.assert_allclose(coreset.sensitivities_.compute(), expected, rtol=1e-10)
    assert 0 < len(coreset.sample_indices_) <= 60


def test_dask_random_parts_match_in_memory_quality(client):
    X, y = _logistic_data(3000, d=4, seed=5)
    Xd, yd, _ = _dask_inputs(X, y)
    full = _coreset_posterior(X, y, "logistic", np.ones(len(y)))
    prior_kl = GaussianPosterior(np.zeros(5), np.eye(5)).kl(full)
    for base, n_seeds in [(UniformCoreset(M=80), 10), (SensitivityCoreset(M=80), 6)]:
        kl = {"dask": [], "memory": []}
        for seed in range(n_seeds):
            for key, data in [("dask", (Xd, yd)), ("memory", (X, y))]:
                coreset = clone(base).set_params(random_state=seed).fit(*data)
                kl[key].append(_relative_kl(X, y, "logistic", coreset, full, prior_kl))
                assert 0 < len(coreset.sample_indices_) <= 80
        ratio = _geometric_mean(kl["dask"]) / _geometric_mean(kl["memory"])
        assert 0.5 <= ratio <= 2.0, (type(base).__name__, ratio)
    # exact weights: N / M unstratified, N_c / M_c within each class when stratified
    plain = UniformCoreset(M=80, stratify=False, random_state=0).fit(Xd, yd)
    np.testing.assert_allclose(plain.sample_weight_, 3000 / 80)
    stratified = UniformCoreset(M=80, random_state=0).fit(Xd, yd)
    assert len(stratified.sample_indices_) == 80
    for label in (0, 1):
        in_class = y[stratified.sample_indices_] == label
        np.testing.assert_allclose(stratified.sample_weight_[in_class],
                                   np.sum(y == label) / in_class.sum())


def test_dask_gathers_only_coreset_rows(client):
    n, d, M = 40_000, 5, 50
    X, y = _logistic_data(n, d=d)
    Xd, yd, _ = _dask_inputs(X, y, chunks=4000)
    row_bytes = 8 * (d + 4)  # a row, its target, weight, index and key
    for coreset, gathered_rows in [
            (UniformCoreset(M=M, random_state=0), M),
            # plus the k-means sample of min(1000 k, 0.025 N) rows
            (SensitivityCoreset(M=M, random_state=0), M + 1000),
            (GIGACoreset(M=M, projection_dim=100, random_state=0), M),
            # plus its pilot of max(5000, 100 p) rows per class, whatever N
            (QuasiNewtonCoreset(M=M, random_state=0), M + 10_000)]:
        fitted, sent = _bytes_to_client(client, lambda: clone(coreset).fit(Xd, yd))
        # O(M d) bytes plus small per-pass summaries (sums, Newton steps), never O(N d)
        assert sent <= 2 * row_bytes * gathered_rows + 20_000, (type(coreset).__name__, sent)
        assert sent < X.nbytes * max(1 / 20, 3 * gathered_rows / n)
        assert len(fitted.sample_indices_) <= M


def test_dask_transform_fit_coreset_and_estimator(client, capsys):
    X, y = _logistic_data(2000)
    Xd, yd, _ = _dask_inputs(X, y)
    coreset = GIGACoreset(M=30, projection_dim=100, random_state=0, verbose=1)
    subset = coreset.fit_transform(Xd, yd)  # only the coreset rows are computed
    assert "dask: 4 chunks, 2000 rows, coreset size" in capsys.readouterr().out
    assert isinstance(subset, WeightedSubset)
    np.testing.assert_array_equal(np.asarray(subset), X[coreset.sample_indices_])
    assert coreset.transform(Xd) is Xd  # data pass through after fit, still lazy
    X_core, y_core, w_core = clone(coreset).fit_coreset(Xd, yd)
    np.testing.assert_array_equal(X_core, X[coreset.sample_indices_])
    np.testing.assert_array_equal(y_core, y[coreset.sample_indices_])
    clf = BayesianLogisticRegression().fit(subset, y)
    ref = BayesianLogisticRegression().fit(X_core, y_core, sample_weight=w_core)
    np.testing.assert_allclose(clf.coef_, ref.coef_)
    with pytest.raises(ValueError, match="features"):
        coreset.transform(Xd[:, :2])


def test_dask_input_validation():
    da = pytest.importorskip("dask.array")
    X, y = _logistic_data(300)
    bad = X.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        UniformCoreset(M=10).fit(da.from_array(bad, chunks=100), y)
    with pytest.raises(ValueError, match="negative"):
        UniformCoreset(M=10).fit(da.from_array(X, chunks=100), y, sample_weight=-np.ones(300))
    with pytest.raises(ValueError, match="two classes"):
        GIGACoreset(M=10, model="logistic").fit(da.from_array(X, chunks=100), np.arange(300) % 3)
    with pytest.raises(ValueError, match="logistic model"):
        SensitivityCoreset(M=10).fit(da.from_array(X, chunks=100), np.arange(300) % 4)
    with pytest.raises(ValueError, match="shape"):
        UniformCoreset(M=10).fit(da.from_array(X, chunks=100), y[:-1])
    counts = UniformCoreset(M=10).fit(da.from_array(X, chunks=100), np.arange(300) % 4)
    assert counts.model_ == "poisson"
    assert UniformCoreset(M=10).fit(da.from_array(X, chunks=100), X[:, 0]).model_ == "gaussian"


# --- validation of the base constructor (issue 11.6) ----------------------------------------

@pytest.mark.parametrize("base, match", [
    (GIGACoreset(M=10, prior_scale=-1, projection_dim=20), "prior_scale"),
    (GIGACoreset(M=10, weighting="uniform", projection_dim=20), "weighting"),
    (GIGACoreset(M=0, projection_dim=20), "'M'"),
    (UniformCoreset(M=0), "'M'"),
])
@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_base_coreset_parameters_are_validated(base, match, method):
    X, y = _logistic_data(300)
    with pytest.raises(ValueError, match=f"Invalid base_coreset.*{match}"):
        getattr(StreamingCoreset(base, block_size=100), method)(X, y)


def test_streaming_m_points_to_the_base_constructor():
    with pytest.raises(ValueError, match="base_coreset__M"):
        StreamingCoreset(GIGACoreset()).set_params(M=5)
    stream = StreamingCoreset(GIGACoreset(M=10)).set_params(base_coreset__M=5)
    assert stream.M == 5


def test_streaming_hilbert_is_scale_invariant_and_resolves_auto_projection():
    X, y = _logistic_data(1200)
    stream = StreamingCoreset(GIGACoreset(M=20), block_size=400, random_state=0)
    reference = clone(stream).fit(X, y)
    assert reference.weighting_posterior_ is not None
    for c in (1e-300, 1e8):
        scaled = clone(stream).fit(X, y, sample_weight=np.full(len(y), c))
        np.testing.assert_array_equal(scaled.sample_indices_, reference.sample_indices_)
        np.testing.assert_allclose(scaled.sample_weight_, c * reference.sample_weight_,
                                   rtol=1e-6)
    # under the Poisson model, the weighting distribution of the weighted rows, as in memory
    counts = np.random.default_rng(0).poisson(np.exp(0.3 * X[:, 0]))
    w = np.full(len(y), 1e3)
    stream = StreamingCoreset(GIGACoreset(M=20), block_size=400, random_state=0)
    streamed = stream.fit(X, counts, sample_weight=w).weighting_posterior_
    in_memory = GIGACoreset(M=20, random_state=0).fit(X, counts, sample_weight=w)
    np.testing.assert_allclose(streamed.mean, in_memory.weighting_posterior_.mean, rtol=1e-8)
    np.testing.assert_allclose(streamed.cov, in_memory.weighting_posterior_.cov, rtol=1e-8)
    unit = GIGACoreset(M=20, random_state=0).fit(X, counts).weighting_posterior_
    np.testing.assert_allclose(np.diag(streamed.cov), 1e-3 * np.diag(unit.cov), rtol=1e-2)


def test_streaming_model_auto_warns_when_the_first_block_is_binary_counts():
    from skcoreset import StreamingCoreset, UniformCoreset

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    first = rng.integers(0, 2, size=200)  # 0/1: labels, or counts of a rare event
    stream = StreamingCoreset(UniformCoreset(M=20, random_state=0), block_size=100)
    with pytest.warns(UserWarning, match="first block"):
        stream.partial_fit(X, first)
    declared = StreamingCoreset(UniformCoreset(M=20, random_state=0), block_size=100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        declared.partial_fit(X, first, classes=[0, 1])
    assert declared.model_ == "logistic"


def test_dask_draws_are_stratified_by_class():
    da = pytest.importorskip("dask.array")
    from skcoreset import SensitivityCoreset, UniformCoreset

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 2))
    y = np.zeros(2000, dtype=int)
    y[7] = 1  # one positive row: an unstratified draw of 5 rows almost surely misses it
    X_dask, y_dask = da.from_array(X, chunks=500), da.from_array(y, chunks=500)
    for coreset in (UniformCoreset(M=5, random_state=0),
                    SensitivityCoreset(M=5, random_state=0)):
        for data in ((X_dask, y_dask), (X, y)):
            fitted = clone(coreset).fit(*data)
            # the class keeps its row, standing for itself alone: weight 1 (its class's
            # total weight for uniform; K w / (p K) with p = 1 for sensitivity)
            assert 7 in fitted.sample_indices_
            np.testing.assert_allclose(
                fitted.sample_weight_[fitted.sample_indices_ == 7], 1.0)
            assert len(fitted.sample_indices_) <= 5
    with pytest.raises(ValueError, match="only one class.*stratify=True"):
        UniformCoreset(M=5, stratify=False, random_state=0).fit(X_dask, y_dask)


def test_streaming_rows_sorted_by_outcome_are_told_to_shuffle():
    # all y = 0 blocks, then all y = 1: each block's coreset fits a log-likelihood unlike
    # that of all rows (QuasiNewtonCoreset in 10 blocks: 0.7 nats sorted, 0.00006 shuffled)
    X, y = _logistic_data(2000)
    order = np.argsort(y, kind="stable")
    stream = StreamingCoreset(GIGACoreset(M=50, projection_dim=50), block_size=200,
                              random_state=0)
    with pytest.warns(UserWarning, match=r"9\d% of the variance of y lies between its 10 "
                                         r"blocks.*0.45%.*Shuffle the rows"):
        clone(stream).fit(X[order], y[order])
    streamed = clone(stream)
    with pytest.warns(UserWarning, match="sorted or grouped by their outcome") as caught:
        for start in range(0, 2000, 500):
            streamed.partial_fit(X[order][start:start + 500], y[order][start:start + 500],
                                 classes=[0, 1])
    assert len([w for w in caught if "Shuffle" in str(w.message)]) == 1  # once a stream
    counts = np.random.default_rng(0).poisson(3.0, size=2000)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*sorted or grouped")
        clone(stream).fit(X, y)  # random order
        clone(stream).set_params(block_size=1).fit(X[:300], y[:300])  # blocks of one row
        clone(stream).fit(X, counts)
        # a sampling base draws the same subsets in law whatever the order
        StreamingCoreset(UniformCoreset(M=50), block_size=200).fit(X[order], y[order])
    with pytest.warns(UserWarning, match="sorted or grouped"):
        clone(stream).fit(X, np.sort(counts))
