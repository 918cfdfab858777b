"""Fitting methods and predictions on dask arrays, on the session's 2-worker cluster: every
Newton or proximal step one map-reduce over the chunks (the in-memory fit's steps, so the same
posterior), predictions lazy block by block, scores computed where the rows are."""

import importlib
import time
from functools import partial

import numpy as np
import pytest
from sklearn.base import clone

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, BayesianProbitRegression)
from skcoreset.datasets import make_binary, make_rare_events

from ..coreset.test_scaling import _bytes_to_client

laplace_module = importlib.import_module("skcoreset._inference.laplace")
kl_proximal_module = importlib.import_module("skcoreset._inference.kl_proximal")
common_module = importlib.import_module("skcoreset._inference._common")

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client(dask_cluster):
    with distributed.Client(dask_cluster) as client:
        yield client


def _rare_features(n, seed=0):
    """Paper 002's BINARY10 rows (features of 0.1-1 % frequency, ~7 % positives) with
    string labels."""
    X, y = make_binary(n, random_state=seed)
    return X[:, 1:], np.where(y == 1, "yes", "no")  # its first feature is a constant


def _lognormal_counts(n, seed=0):
    """Poisson counts on standardised log-normal (skewed, heavy-tailed) features."""
    rng = np.random.default_rng(seed)
    X = np.exp(rng.normal(size=(n, 4)))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, rng.poisson(np.exp(X @ [0.3, -0.2, 0.1, 0.05] + 0.5))


def _chunked(X, *rows, chunks=700):
    # columns split and the row arrays chunked unlike X: the fits must align them
    return (da.from_array(X, chunks=(chunks, 3)),
            *(da.from_array(v, chunks=chunks + 90) for v in rows))


def _assert_same_posterior(lazy, ref):
    """The same Newton steps from the same start, up to rounding: the sums over chunks
    round differently from the sums over all rows (as one BLAS thread does from two), which
    moves the mode, found to tol = 1e-10 nats (~1e-7 sd), by as much in memory (measured:
    4e-7 sd between one and two BLAS threads on these rare-feature rows)."""
    sd = ref.posterior_.std
    assert np.max(np.abs(lazy.posterior_.mean - ref.posterior_.mean) / sd) < 1e-6
    np.testing.assert_allclose(lazy.posterior_.cov, ref.posterior_.cov, rtol=1e-6,
                               atol=1e-6 * np.max(np.abs(ref.posterior_.cov)))
    assert lazy.n_iter_ == ref.n_iter_


def test_newton_and_proximal_fits_on_a_cluster_equal_in_memory(client, monkeypatch):
    """KL-proximal from its Laplace start, on the large-N path at small N: a thinned start
    on every 8th row of all chunks (gathered here: no more rows than a chunk),
    single-precision Hessians steering the Newton steps, then fixed-point steps; the same
    steps in memory."""
    for module in (laplace_module, kl_proximal_module):
        monkeypatch.setattr(module, "LARGE_N", 500)
    X, y = _rare_features(6000)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    Xd, yd, wd = _chunked(X, y, w, chunks=800)
    ref = BayesianLogisticRegression(method="kl_proximal").fit(X, y, sample_weight=w)
    with distributed.get_task_stream(client=client) as tasks:
        lazy = clone(ref).fit(Xd, yd, sample_weight=wd)
    _assert_same_posterior(lazy, ref)
    np.testing.assert_allclose(lazy.elbo_, ref.elbo_, rtol=1e-10)
    assert list(lazy.classes_) == ["no", "yes"] and lazy.n_features_in_ == X.shape[1]
    # every pass runs on the worker processes
    for name in ("_loglik_sums", "_elbo_sums"):
        ran = [t for t in tasks.data if name in str(t["key"])]
        assert len(ran) >= 2, name
        assert {t["worker"] for t in ran} <= set(client.scheduler_info()["workers"])


def test_thinned_rows_stay_on_the_cluster_unless_a_chunk_holds_them(client):
    from skcoreset._backend import DaskRows
    from skcoreset._inference._common import ChunkedLogPosterior, LogPosterior
    from skcoreset.families import LogisticFamily

    X, y = _rare_features(3000, seed=2)
    y = np.where(y == "yes", 1.0, -1.0)
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    prior = np.ones(X.shape[1] + 1)
    args = (LogisticFamily(), prior, True)
    theta = np.random.default_rng(3).normal(size=len(prior)) / 4
    full = LogPosterior(X, y, args[0], w, *args[1:])
    chunked = ChunkedLogPosterior(DaskRows.from_arrays(*_chunked(X, y, w, chunks=300)),
                                  *args)
    assert chunked.total_weight == pytest.approx(w.sum(), rel=1e-12)
    expected = full.thinned(8)  # every 8th row of all 3000, reweighted to the total
    on_cluster = chunked.thinned(8)  # 375 rows, more than a chunk
    assert isinstance(on_cluster, ChunkedLogPosterior) and on_cluster.n_rows == 375
    gathered = on_cluster.thinned(8)  # 47 rows: here, a LogPosterior
    assert isinstance(gathered, LogPosterior)
    np.testing.assert_array_equal(gathered.X, expected.thinned(8).X)
    for ours, theirs in [(on_cluster, expected), (gathered, expected.thinned(8))]:
        assert ours.total_weight == pytest.approx(w.sum(), rel=1e-12)
        value, _, grad, hessian = ours.value_and_grad(theta, neg_hessian=np.float64)
        ref_value, _, ref_grad, ref_hessian = theirs.value_and_grad(theta,
                                                                    neg_hessian=np.float64)
        np.testing.assert_allclose([value, *grad], [ref_value, *ref_grad], rtol=1e-12)
        np.testing.assert_allclose(hessian, ref_hessian, rtol=1e-12)


def test_chunks_held_on_the_cluster_are_prepared_once(client):
    """Every pass reads the chunks checked, encoded and weighted by the first: one
    preparation task per chunk, however many passes, a task per worker thread for each
    pass, and the passes' sums those of the rows in memory; a non-finite X still raises
    from the first pass."""
    from skcoreset._backend import DaskRows
    from skcoreset._inference._common import ChunkedLogPosterior, LogPosterior
    from skcoreset.families import LogisticFamily

    X, y = _rare_features(2000, seed=4)
    family = LogisticFamily()
    encode = partial(family.encode_target, classes=np.array(["no", "yes"]))
    prior = np.ones(X.shape[1] + 1)
    full = LogPosterior(X, encode(y), family, np.ones(len(y)), prior, True)
    Xd, yd = _chunked(X, y, chunks=400)
    rows = DaskRows.from_arrays(Xd, yd).encoded(encode)
    chunked = ChunkedLogPosterior(rows, family, prior, True)
    thetas = np.random.default_rng(5).normal(size=(3, len(prior))) / 4
    with distributed.get_task_stream(client=client) as tasks:
        for theta in thetas:
            value, _, grad = chunked.value_and_grad(theta)
            ref_value, _, ref_grad = full.value_and_grad(theta)
            np.testing.assert_allclose([value, *grad], [ref_value, *ref_grad], rtol=1e-12)
    keys = [str(t["key"]) for t in tasks.data]
    assert sum("_prepare" in key for key in keys) == rows.n_chunks
    # a pass is a task per worker thread holding chunks (here 2), and no tree of tasks
    passes = [key for key in keys if "_loglik_sums" in key]
    assert 3 <= len(passes) <= 3 * 2 < 3 * rows.n_chunks
    assert not any("_sum_all" in key for key in keys)
    X[1500, 2] = np.inf  # not in the first chunk
    rows = DaskRows.from_arrays(*_chunked(X, y, chunks=400)).encoded(encode)
    with pytest.raises(ValueError, match="Input X contains infinity"):
        ChunkedLogPosterior(rows, family, prior, True).value_and_grad(thetas[0])


def test_count_models_on_a_cluster_equal_in_memory(client):
    X, y = _lognormal_counts(3000)
    Xd, yd = _chunked(X, y, chunks=500)
    # counts over exposures: the rates weighted by the exposure, and the counts' evidence
    exposure = np.random.default_rng(4).uniform(0.5, 3.0, len(y))
    ed = da.from_array(exposure, chunks=430)
    lazy = BayesianPoissonRegression(link="softplus").fit(Xd, yd, exposure=ed)
    ref = BayesianPoissonRegression(link="softplus").fit(X, y, exposure=exposure)
    _assert_same_posterior(lazy, ref)
    assert lazy.log_evidence_ == pytest.approx(ref.log_evidence_, rel=1e-10)
    with pytest.raises(ValueError, match="exposure contains values <= 0"):
        BayesianPoissonRegression().fit(Xd, yd, exposure=np.where(exposure > 2.9, 0.0, 1.0))
    # alpha="auto" from up to 10,000 rows drawn from all chunks (here: all of them)
    auto = BayesianNegativeBinomialRegression().fit(Xd, yd)
    ref = BayesianNegativeBinomialRegression().fit(X, y)
    assert auto.alpha_ == pytest.approx(ref.alpha_, rel=1e-9)
    _assert_same_posterior(auto, ref)


def test_probit_on_a_cluster_equals_in_memory(client):
    X, y = _rare_features(3000, seed=4)
    Xd, yd = _chunked(X, y, chunks=500)
    ref = BayesianProbitRegression().fit(X, y)
    _assert_same_posterior(BayesianProbitRegression().fit(Xd, yd), ref)


@pytest.mark.parametrize("weighted", [False, True])
def test_pass_glm_on_a_cluster_is_the_in_memory_fit_from_two_passes(client, weighted):
    """PASS-GLM on the cluster: the in-memory posterior (the pilot rows, and so the
    polynomial, are the same) and fit statistics to rounding, from one summary task per
    chunk of y (and weights), one preparation per chunk and two passes over the rows (the
    statistics with the pilot sample, then the log-likelihood at the posterior mean), each
    a task per worker thread."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(6000, 4))
    y = np.where(rng.random(len(X)) < 1 / (1 + np.exp(1 - X @ [0.5, -0.3, 0.2, 0.1])),
                 "yes", "no")
    w = rng.uniform(0.5, 2.0, len(y)) if weighted else None
    Xd, yd = _chunked(X, y, chunks=500)
    ref = BayesianLogisticRegression(method="pass_glm").fit(X, y, sample_weight=w)
    with distributed.get_task_stream(client=client) as tasks:
        lazy = BayesianLogisticRegression(method="pass_glm").fit(
            Xd, yd, sample_weight=None if w is None else da.from_array(w, chunks=610))
    sd = ref.posterior_.std
    assert np.max(np.abs(lazy.posterior_.mean - ref.posterior_.mean) / sd) < 1e-9
    np.testing.assert_allclose(lazy.posterior_.cov, ref.posterior_.cov, rtol=1e-9)
    for name in ("loglik_", "deviance_", "aic_", "bic_"):
        assert getattr(lazy, name) == pytest.approx(getattr(ref, name), rel=1e-11)
    n_chunks = int(np.ceil(len(y) / 500))
    keys = [str(t["key"]) for t in tasks.data]
    assert sum("summarise_chunk" in key for key in keys) == n_chunks
    assert sum("_prepare" in key for key in keys) == n_chunks
    for pass_name in ("_chunk_summaries", "_fit_sums"):
        assert 1 <= sum(pass_name in key for key in keys) <= 2


def test_only_sums_reach_the_client_and_data_travel_once(client):
    """Only O(p^2) numbers per pass and chunk, at most 8 chunks' worth, reach the client.
    A dask array wrapping an in-memory array (and in-memory y or weights given with a dask
    X) would travel in the graph of every pass, each time with dask's large-graph warning:
    such data are scattered to the workers once instead."""
    import warnings

    import dask

    X, y = _rare_features(20_000, seed=3)
    Xd, yd = _chunked(X, y, chunks=2500)  # 1.4 MB of X in its graph
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    clf = BayesianLogisticRegression()
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "200kB"}):
        with pytest.warns(UserWarning, match="Sending large graph"):
            Xd.sum().compute()  # what dask says of every graph that carries the data
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*Sending large graph")
            fitted, sent = _bytes_to_client(client, lambda: clf.fit(Xd, yd, sample_weight=w))
            assert 0.5 < fitted.score(Xd, y, sample_weight=w) <= 1.0
    p = X.shape[1] + 1
    # a few dozen passes, each gathering the sums of at most 8 tasks (here: the 8 chunks'),
    # O(p^2) numbers each: never O(N d)
    assert sent < 60 * 8 * (8 * p * p * 2) + 50_000 and sent < X.nbytes / 10
    _assert_same_posterior(fitted, clone(clf).fit(X, y, sample_weight=w))


@pytest.mark.filterwarnings("ignore::skcoreset._inference.diagnostics.MCMCDiagnosticWarning")
def test_nuts_on_a_cluster_gives_the_in_memory_draws(client):
    """NUTS on all rows of a dask array: every gradient is one reduction over the chunks,
    whose sums round differently from the in-memory pass by ~1e-16 relative. The chains'
    discrete choices (directions, tree depths, the multinomial draw from each trajectory)
    compare energies against uniform numbers, which a perturbation that small almost never
    flips, and the Laplace start is the same to ~1e-10: so with the same seed the draws
    are the in-memory ones to rounding, not only in distribution. Chains in threads (the
    cluster's handles stay in this process) give the same draws."""
    X, y = make_rare_events(3000, n_features=4, positive_rate=0.1, random_state=0)
    w = np.random.default_rng(5).uniform(0.5, 2.0, len(y))
    Xd, yd, wd = _chunked(X, y, w, chunks=1500)
    clf = BayesianLogisticRegression(method="mcmc", n_draws=10, n_burnin=5, n_chains=2,
                                     random_state=0)
    ref = clone(clf).fit(X, y, sample_weight=w)
    with distributed.get_task_stream(client=client) as tasks:
        lazy = clone(clf).set_params(n_jobs=2).fit(Xd, yd, sample_weight=wd)
    np.testing.assert_allclose(lazy.posterior_samples_, ref.posterior_samples_, rtol=1e-8,
                               atol=1e-10)
    np.testing.assert_allclose(lazy.effective_sample_size_, ref.effective_sample_size_,
                               rtol=1e-6)
    leapfrog_steps = lazy.sample_stats_["n_steps"]
    np.testing.assert_array_equal(leapfrog_steps, ref.sample_stats_["n_steps"])
    passes = [t for t in tasks.data if "_loglik_sums" in str(t["key"])]
    # every gradient is a pass on the cluster: a task per worker thread holding chunks (one
    # or two here, as the scheduler placed the two chunks)
    assert len(passes) >= leapfrog_steps.sum()
    proba = lazy.predict_proba(Xd)  # predictions average over the draws, lazily
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute(), ref.predict_proba(X), rtol=1e-8)


def _scaled_logistic_rows(n, seed=0):
    # features of unequal scales (the float32 copy's rounding differs per column)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)) * [1.0, 2.0, 0.5, 3.0, 1.0]
    eta = X @ [0.5, -0.3, 0.2, 0.1, 0.0] - 1.0
    return X, (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(int)


def test_mixed_precision_gradients_on_a_cluster_equal_in_memory(client, monkeypatch):
    """NUTS' gradient passes on a cluster read float32 copies of the chunks made once by
    the workers that hold them, about the same reference as in memory: the same products
    block for block (chunks of the in-memory pass's blocks), so the same value and
    gradient to float64 rounding, and within the single-precision error
    ``MixedProducts`` documents of the float64 pass (about 1e-7 nats per row's
    ``|x . (coef - coef_0)|``, 1e-6 of the gradient's scale)."""
    from skcoreset._backend import DaskRows
    from skcoreset.families import LogisticFamily

    monkeypatch.setattr(common_module, "_MIN_MIXED_BYTES", 0)  # these rows are in cache
    X, y = _scaled_logistic_rows(6000)
    offset = np.random.default_rng(3).normal(0.0, 0.3, len(y))  # known terms of eta
    family = LogisticFamily()
    encode = partial(family.encode_target, classes=np.array([0, 1]))
    prior = np.ones(X.shape[1] + 1)
    exact = common_module.LogPosterior(X, encode(y), family, np.ones(len(y)), prior, True,
                                       offset)
    rows = DaskRows.from_arrays(*_chunked(X, y, chunks=1000), offset=offset).encoded(encode)
    chunked = common_module.ChunkedLogPosterior(rows, family, prior, True)
    reference = np.array([0.5, -0.3, 0.2, 0.1, 0.0, -1.0])
    in_memory = exact.mixed_precision(reference)
    with distributed.get_task_stream(client=client) as tasks:
        on_cluster = chunked.mixed_precision(reference)
        points = reference + np.random.default_rng(1).normal(0.0, 0.05, (3, len(prior)))
        for theta in [reference, *points]:
            value, _, grad = on_cluster.value_and_grad(theta)
            ref_value, _, ref_grad = in_memory.value_and_grad(theta, rows_per_block=1000)
            np.testing.assert_allclose([value, *grad], [ref_value, *ref_grad], rtol=1e-10)
            exact_value, eta, exact_grad = exact.value_and_grad(theta)
            if theta is reference:  # no step: the float64 products alone
                np.testing.assert_allclose([value, *grad], [exact_value, *exact_grad],
                                           rtol=1e-12)
                continue
            assert 0 < np.max(np.abs(grad - exact_grad))  # single precision, not float64
            r = family.d1(encode(y), eta)
            scale = np.append(np.abs(X).T @ np.abs(r), np.abs(r).sum())
            assert np.all(np.abs(grad - exact_grad) <= 1e-5 * scale)
            shift = np.abs(X @ (theta - reference)[:-1]).sum()
            assert abs(value - exact_value) <= 1e-6 * shift
    keys = [str(t["key"]) for t in tasks.data]
    # a copy per chunk, once, where the chunk is held; every pass a task per worker thread
    assert sum("_with_state" in key for key in keys) == rows.n_chunks
    assert 4 <= sum("_mixed_loglik_sums" in key for key in keys) <= 4 * 2
    held = [chunk.key for chunk in on_cluster._mixed.chunks]
    prepared = [chunk.key for chunk in rows._prepared_chunks()]
    where = client.who_has()
    assert [where[key] for key in held] == [where[key] for key in prepared]
    # Newton passes (with the Hessian) stay float64
    np.testing.assert_allclose(on_cluster.value_and_grad(reference, np.float64)[3],
                               exact.value_and_grad(reference, neg_hessian=np.float64)[3],
                               rtol=1e-12)
    # no copy where the in-memory rule makes none (rows in cache), or beyond a worker's bound
    monkeypatch.setattr(common_module, "_MIN_MIXED_BYTES", X.nbytes + 1)
    assert chunked.mixed_precision(reference) is chunked
    monkeypatch.setattr(common_module, "_MIN_MIXED_BYTES", 0)
    monkeypatch.setattr(common_module, "_MAX_MIXED_BYTES", X.nbytes // 4)
    assert chunked.mixed_precision(reference) is chunked


@pytest.mark.filterwarnings("ignore::skcoreset._inference.diagnostics.MCMCDiagnosticWarning")
def test_nuts_on_a_cluster_samples_with_the_in_memory_mixed_precision(client, monkeypatch):
    """With single-precision passes in memory (rows out of cache, forced here), NUTS on a
    cluster samples with them too: the draws are the in-memory ones up to the float32
    rounding of blocks that differ (the chunks' against the pass's), far below a draw's
    Monte Carlo error."""
    monkeypatch.setattr(common_module, "_MIN_MIXED_BYTES", 0)
    X, y = _scaled_logistic_rows(3000, seed=2)
    Xd, yd = _chunked(X, y, chunks=1500)
    clf = BayesianLogisticRegression(method="mcmc", n_draws=10, n_burnin=5, n_chains=2,
                                     random_state=0)
    ref = clone(clf).fit(X, y)
    with distributed.get_task_stream(client=client) as tasks:
        lazy = clone(clf).fit(Xd, yd)
    assert any("_mixed_loglik_sums" in str(t["key"]) for t in tasks.data)
    # the copies are the fit's: released by the workers when it ends
    for _ in range(100):
        if not any("_with_state" in str(key) for key in client.who_has()):
            break
        time.sleep(0.05)
    assert not any("_with_state" in str(key) for key in client.who_has())
    sd = ref.posterior_samples_.std(axis=0)
    assert np.max(np.abs(lazy.posterior_samples_ - ref.posterior_samples_) / sd) < 1e-4
    np.testing.assert_array_equal(lazy.sample_stats_["n_steps"], ref.sample_stats_["n_steps"])


def test_predictions_are_lazy_dask_arrays(client):
    # predictions do not depend on where the fit ran: fitted in memory here
    X, y = _rare_features(2000)
    Xd, yd = _chunked(X, y, chunks=300)
    ref = clf = BayesianLogisticRegression().fit(X, y)
    proba, std = clf.predict_proba(Xd, return_std=True)
    ref_proba, ref_std = ref.predict_proba(X, return_std=True)
    for lazy, expected in [(proba, ref_proba), (std, ref_std),
                           (clf.predict_proba(Xd), ref_proba),
                           (clf.predict_log_proba(Xd), ref.predict_log_proba(X)),
                           (clf.decision_function(Xd), ref.decision_function(X))]:
        assert isinstance(lazy, da.Array) and lazy.chunks[0] == Xd.chunks[0]
        np.testing.assert_allclose(lazy.compute(), expected, rtol=1e-7, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(Xd).compute(), ref.predict(X))
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    assert clf.score(Xd, yd, sample_weight=w) == pytest.approx(ref.score(X, y, w), rel=1e-12)

    # nothing is computed before it is asked for: X's blocks raise when read
    def unreadable(block):
        raise RuntimeError("a block of X was read")
    never = Xd.map_blocks(unreadable, dtype=float)
    proba, std = clf.predict_proba(never, return_std=True)
    with pytest.raises(RuntimeError, match="was read"):
        std.compute()


def test_sample_y_on_dask_draws_from_the_posterior_predictive(client):
    X, y = _lognormal_counts(1200)
    Xd, = _chunked(X, chunks=250)
    reg = BayesianPoissonRegression().fit(X, y)
    draws = reg.sample_y(Xd, n_draws=400, random_state=0)
    assert isinstance(draws, da.Array) and draws.shape == (400, 1200)
    values = draws.compute()
    np.testing.assert_array_equal(values, reg.sample_y(Xd, n_draws=400,
                                                       random_state=0).compute())
    assert np.all(values == np.round(values)) and np.all(values >= 0)
    mean, std = reg.predict(X, return_std=True)
    # posterior predictive moments, within their Monte Carlo error over 400 draws
    z = (values.mean(axis=0) - mean) / (std / np.sqrt(400))
    assert np.mean(np.abs(z) < 3) > 0.98
    Xc, yc = _rare_features(900)
    labels = BayesianLogisticRegression().fit(Xc, yc).sample_y(_chunked(Xc)[0], n_draws=3)
    assert labels.shape == (3, 900) and set(np.unique(labels.compute())) <= {"no", "yes"}


def test_count_predictions_and_scores_with_exposure(client):
    X, y = _lognormal_counts(1500)
    exposure = np.random.default_rng(3).uniform(0.5, 3.0, len(y))
    Xd, yd, ed = _chunked(X, y, exposure, chunks=400)
    ref = reg = BayesianPoissonRegression().fit(X, y)
    for e in (None, exposure):
        mean, std = reg.predict(Xd, return_std=True, exposure=e)
        ref_mean, ref_std = ref.predict(X, return_std=True, exposure=e)
        np.testing.assert_allclose(mean.compute(), ref_mean, rtol=1e-8)
        np.testing.assert_allclose(std.compute(), ref_std, rtol=1e-8)
    assert reg.score(Xd, yd) == pytest.approx(ref.score(X, y), rel=1e-9)
    expected = ref.score(X, y, exposure=exposure)
    assert reg.score(Xd, yd, exposure=ed) == pytest.approx(expected, rel=1e-9)
    nb = BayesianNegativeBinomialRegression(alpha=0.5).fit(X, y)
    assert nb.score(Xd, yd, sample_weight=exposure) == pytest.approx(
        nb.score(X, y, sample_weight=exposure), rel=1e-12)


def test_dask_errors_are_clear(client):
    X, y = _rare_features(900)
    Xd, yd = _chunked(X, y, chunks=300)
    with pytest.raises(ValueError, match="sampler='ensemble' needs the rows in memory"):
        BayesianLogisticRegression(method="mcmc", sampler="ensemble").fit(Xd, yd)
    bad = X.copy()
    bad[700, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        BayesianLogisticRegression().fit(da.from_array(bad, chunks=300), yd)
    with pytest.raises(ValueError, match="negative"):
        BayesianLogisticRegression().fit(Xd, yd, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="one class"):
        BayesianLogisticRegression().fit(Xd, da.from_array(np.full(len(y), "no"), chunks=300))
    with pytest.raises(ValueError, match="shape"):
        BayesianLogisticRegression().fit(Xd, y[:-1])
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        BayesianLogisticRegression().fit(Xd[Xd[:, 0] > -np.inf], y)  # rows of unknown number
    clf = BayesianLogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features"):
        clf.predict_proba(Xd[:, :2])
    with pytest.raises(ValueError, match="dual=False"):
        from skcoreset._backend import DaskRows
        kl_proximal_module.kl_proximal(
            DaskRows.from_arrays(Xd, np.where(y == "yes", 1.0, -1.0)), None, clf.family_,
            sample_weight=None, prior_prec=np.ones(X.shape[1] + 1), fit_intercept=True,
            dual=True)
