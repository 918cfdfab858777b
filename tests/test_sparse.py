"""scipy.sparse X: every estimator, method and constructor gives the results of the same rows
dense (to rounding), never densifies all rows, and refuses bad sparse input clearly."""

import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import sparse
from scipy.special import expit
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline as SklearnPipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, BayesianProbitRegression,
                       FrankWolfeCoreset, GIGACoreset, QuasiNewtonCoreset, SensitivityCoreset,
                       SparseVICoreset, SparseWeightedSubset, StreamingCoreset, UniformCoreset)
from skcoreset import _design as design
from skcoreset._backend._chunks import row_slice
from skcoreset._design import latent_variances, row_quadratic_forms, weighted_gram
from skcoreset.metrics import coreset_quality
from skcoreset.multiclass import BayesianOneVsRestClassifier
from skcoreset.pipeline import Pipeline


def one_hot_data(n, n_levels=(8, 5, 12), seed=0, model="logistic"):
    """Real-shaped sparse rows: one-hot codes of skewed categorical columns (rare levels)
    next to a log-normal numeric column, as a ColumnTransformer makes them; CSR."""
    rng = np.random.default_rng(seed)
    blocks = []
    for levels in n_levels:
        p = rng.dirichlet(np.full(levels, 0.5))  # a few common levels, several rare ones
        codes = rng.choice(levels, size=n, p=p)
        blocks.append(sparse.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, levels)))
    amount = rng.lognormal(0.0, 1.0, size=n)
    amount[rng.random(n) < 0.6] = 0.0  # mostly zero: stored sparsely
    blocks.append(sparse.csr_matrix(amount[:, None]))
    X = sparse.hstack(blocks, format="csr")
    coef = rng.normal(0.0, 0.8, size=X.shape[1])
    eta = X @ coef - 1.0
    if model == "logistic":
        y = (rng.random(n) < expit(eta)).astype(int)
    else:
        y = rng.poisson(np.exp(0.5 * eta + 1.0))
    return X, y


X_SPARSE, Y_BINARY = one_hot_data(1500)
X_COUNTS, Y_COUNTS = one_hot_data(1500, seed=1, model="counts")


# --- the design's primitives -------------------------------------------------------------

@pytest.mark.parametrize("fit_intercept", [True, False])
def test_sparse_grams_and_latent_variances_match_dense(fit_intercept):
    rng = np.random.default_rng(0)
    X = X_SPARSE
    dense = X.toarray()
    c = rng.random(X.shape[0])
    extra = (rng.normal(size=X.shape[0]),)
    for weights, columns in ((c, ()), (None, ()), (c, extra)):
        np.testing.assert_allclose(
            weighted_gram(X, weights, fit_intercept, extra=columns),
            weighted_gram(dense, weights, fit_intercept, extra=columns), rtol=1e-12,
            atol=1e-9)
    p = X.shape[1] + int(fit_intercept)
    factor = np.tril(rng.normal(size=(p, p)))
    mean = rng.normal(size=p)
    for lower, F in ((True, factor), (False, factor.T)):
        got = latent_variances(X, F, fit_intercept, mean=mean, lower=lower)
        want = latent_variances(dense, F, fit_intercept, mean=mean, lower=lower)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-10)
    sym = factor @ factor.T
    np.testing.assert_allclose(row_quadratic_forms(X, sym, fit_intercept),
                               row_quadratic_forms(dense, sym, fit_intercept), rtol=1e-10)


def _one_hot_codes(n, levels, rng):
    """CSR one-hot rows: one nonzero per feature of ``levels[j]`` levels (skewed)."""
    offsets = np.cumsum([0, *levels])
    codes = np.column_stack([offsets[j] + rng.choice(m, size=n, p=rng.dirichlet(np.ones(m)))
                             for j, m in enumerate(levels)])
    k = len(levels)
    return sparse.csr_matrix((np.ones(n * k), codes.ravel(), np.arange(0, n * k + 1, k)),
                             shape=(n, offsets[-1]))


def _dense_gram(X, c, fit_intercept, extra):
    A = np.column_stack([X.toarray()] + [np.ones(X.shape[0])] * fit_intercept + list(extra))
    return A.T @ (c[:, None] * A)


def _sparse_gram_cases(rng, n=5000):
    """Sparse designs that the position-pair Gram takes (in whole or in part), by name."""
    one_hot = _one_hot_codes(n, (6, 9, 4, 12), rng)
    scaled = (one_hot @ sparse.diags(rng.lognormal(size=one_hot.shape[1]))).tocsr()
    # drop="first": the first level of each feature is no column, so rows have 0-4 nonzeros
    dropped = one_hot[:, np.flatnonzero(~np.isin(np.arange(31), [0, 6, 15, 19]))].tocsr()
    with_numeric = sparse.hstack([scaled, sparse.random(n, 1, density=0.4, random_state=0)],
                                 format="csr")
    shuffled = scaled.copy()  # unsorted indices within each row, and duplicate entries
    order = np.argsort(rng.random((n, 4)), axis=1) + 4 * np.arange(n)[:, None]
    shuffled.indices, shuffled.data = shuffled.indices[order.ravel()], shuffled.data[order.ravel()]
    repeated = np.arange(0, 4 * n - 1, 7)  # entry 7 i repeats entry 7 i + 1's column
    shuffled.indices[repeated] = shuffled.indices[repeated + 1]
    shuffled.data[::11] = 0.0  # explicit zeros
    shuffled.has_sorted_indices = False
    assert not shuffled.has_canonical_format
    return {"one-hot": one_hot, "scaled": scaled, "drop-first": dropped,
            "with numeric": with_numeric, "non-canonical": shuffled}


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_position_pair_gram_matches_dense(fit_intercept):
    rng = np.random.default_rng(1)
    for name, X in _sparse_gram_cases(rng).items():
        n = X.shape[0]
        c = rng.random(n)
        c[::13] = 0.0
        for weights, extra in ((c, ()), (None, ()), (c, (rng.normal(size=n),
                                                         rng.random(n)))):
            want = _dense_gram(X, np.ones(n) if weights is None else weights,
                               fit_intercept, extra)
            got = weighted_gram(X, weights, fit_intercept, extra=extra)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max(),
                                       err_msg=name)


def test_position_pair_sums_of_shared_row_blocks_match_dense():
    """Blocks sharing a CSR matrix's data and indices (as the fits' passes take them, the
    one-hot block's positions read in place), in float32 too, sum to the dense Gram and
    quadratic forms; so do blocks of rows of several lengths (their positions gathered)."""
    rng = np.random.default_rng(5)
    one_hot = _one_hot_codes(3000, (6, 9, 4, 12), rng)
    scaled = (one_hot @ sparse.diags(rng.lognormal(size=31))).tocsr()
    dropped = one_hot[:, np.flatnonzero(~np.isin(np.arange(31), [0, 6, 15, 19]))].tocsr()
    c = rng.random(3000)
    for X in (one_hot, scaled, scaled.astype(np.float32), dropped):
        p = X.shape[1] + 1
        gram = np.zeros((p, p))
        for start, stop in ((0, 1100), (1100, 1101), (1101, 3000)):
            design.add_sparse_gram(gram, row_slice(X, slice(start, stop)), c[start:stop], True)
        want = _dense_gram(X.astype(np.float64), c, True, ())
        np.testing.assert_allclose(gram, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
        sigma = rng.normal(size=(p, p))
        sigma = sigma @ sigma.T
        block = row_slice(X, slice(1101, 3000))
        np.testing.assert_allclose(row_quadratic_forms(block, sigma, True),
                                   row_quadratic_forms(block.toarray(), sigma, True),
                                   rtol=1e-12)


@pytest.fixture
def position_groups(monkeypatch):
    """The lengths ``k`` of the groups of rows summed over position pairs, as they are taken."""
    taken = []
    original = design._position_groups

    def spy(X, max_boxes):
        for group in original(X, max_boxes):
            taken.append(len(group.columns))
            yield group

    monkeypatch.setattr(design, "_position_groups", spy)
    return taken


def _text_like_rows(rng, n=3000):
    """10 nonzeros in every row, anywhere among 400 columns: every position's boxes overlap."""
    columns = np.sort(np.argsort(rng.random((n, 400)), axis=1)[:, :10], axis=1)
    return sparse.csr_matrix((rng.random(10 * n), columns.ravel(), np.arange(0, 10 * n + 1, 10)),
                             shape=(n, 400))


def test_position_pair_gram_takes_rows_by_cost(position_groups):
    """One-hot rows go the position-pair way, text-like rows (every position spanning most
    columns) the sparse product, both giving the Gram."""
    rng = np.random.default_rng(2)
    one_hot = _one_hot_codes(3000, (5, 7, 3), rng)
    c = rng.random(3000)
    np.testing.assert_allclose(weighted_gram(one_hot, c, True),
                               _dense_gram(one_hot, c, True, ()), rtol=1e-12)
    assert position_groups == [3]
    position_groups.clear()
    text = _text_like_rows(rng)
    np.testing.assert_allclose(weighted_gram(text, c, True), _dense_gram(text, c, True, ()),
                               rtol=1e-12)
    assert position_groups == []


def _dense_quadratic_forms(X, sym, fit_intercept):
    A = np.column_stack([X.toarray()] + [np.ones(X.shape[0])] * fit_intercept)
    return np.einsum("ni,ij,nj->n", A, sym, A)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_position_pair_quadratic_forms_match_dense(fit_intercept, position_groups):
    rng = np.random.default_rng(3)
    cases = _sparse_gram_cases(rng, n=3000)
    cases["empty rows"] = cases["drop-first"][:, 4:].tocsr()  # also rows of 0 nonzeros
    assert np.any(np.diff(cases["empty rows"].indptr) == 0)
    for name, X in cases.items():
        p = X.shape[1] + int(fit_intercept)
        factor = rng.normal(size=(p, p))
        sym = factor @ factor.T
        position_groups.clear()
        got = row_quadratic_forms(X, sym, fit_intercept)
        assert position_groups, name  # summed over position pairs, not the generic way
        np.testing.assert_allclose(got, _dense_quadratic_forms(X, sym, fit_intercept),
                                   rtol=1e-12, err_msg=name)


def test_position_pair_quadratic_forms_count_each_pair_twice():
    """Exact one-hot rows and a sigma of distinct entries: every off-diagonal entry
    ``sigma[a, b]`` of a row's pair counts twice (a dropped factor 2 fails here)."""
    X = _one_hot_codes(2000, (3, 4, 5), np.random.default_rng(4))
    sym = np.add.outer(np.arange(12.0), np.arange(12.0)) ** 2 + 1.0
    columns = X.indices.reshape(-1, 3)
    want = (sym[columns, columns].sum(axis=1)
            + 2.0 * sum(sym[columns[:, a], columns[:, b]] for a, b in ((0, 1), (0, 2), (1, 2))))
    np.testing.assert_array_equal(row_quadratic_forms(X, sym, False), want)


def test_quadratic_forms_of_overlapping_rows_take_the_generic_sum(position_groups):
    """Rows of many lengths, few of each, every position spanning most columns (text-like):
    the generic sum over each row's pairs of nonzeros, with the same answer."""
    rng = np.random.default_rng(5)
    counts = rng.integers(20, 60, size=300)
    columns = np.concatenate([rng.choice(200, size=k, replace=False) for k in counts])
    X = sparse.csr_matrix((rng.random(counts.sum()), columns,
                           np.concatenate([[0], np.cumsum(counts)])), shape=(300, 200))
    factor = rng.normal(size=(201, 201))
    sym = factor @ factor.T
    np.testing.assert_allclose(row_quadratic_forms(X, sym, True),
                               _dense_quadratic_forms(X, sym, True), rtol=1e-12)
    assert position_groups == []


def test_sparse_quadratic_forms_of_empty_rows_are_the_intercept_term():
    X = sparse.csr_matrix((4, 3))
    sym = np.eye(4) * 2.0
    np.testing.assert_array_equal(row_quadratic_forms(X, sym, True), np.full(4, 2.0))


# --- estimators ------------------------------------------------------------------------------

_MCMC = {"n_draws": 200, "n_chains": 2, "random_state": 0}
_METHODS = [("laplace", {}), ("kl_proximal", {}), ("pass_glm", {}), ("mcmc", _MCMC)]


def _fit_both(estimator, method, options, X, y):
    """The estimator fitted on sparse X and on the same rows dense, and the tolerance of
    their agreement."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PASS-GLM's accuracy warning, the same both ways
        a = estimator(method=method, **options).fit(X, y)
        b = estimator(method=method, **options).fit(X.toarray(), y)
    rtol = 0.1 if method == "mcmc" else 1e-9  # MCMC: within Monte Carlo error, see _assert_same_fit
    _assert_same_fit(a, b, rtol)
    return a, b, rtol


def _assert_same_fit(sparse_est, dense_est, rtol):
    if sparse_est.method == "mcmc":
        # the gradients agree to rounding, but NUTS trajectories amplify any difference
        # (the negative binomial's joint draws of alpha the most): the chains agree within
        # their Monte Carlo error, as two dense runs with different seeds do (negative
        # binomial: 0.05 sd and 13 % of the largest covariance apart; the sparse and dense
        # log posteriors themselves agree to rounding, test_sparse_log_posterior_equals_dense)
        sd = np.sqrt(np.diag(dense_est.posterior_.cov))
        assert np.all(np.abs(sparse_est.posterior_.mean - dense_est.posterior_.mean) < 0.15 * sd)
        cov_a, cov_b = sparse_est.posterior_.cov, dense_est.posterior_.cov
        assert np.max(np.abs(cov_a - cov_b)) < 0.25 * np.max(np.abs(cov_b))
        return
    np.testing.assert_allclose(sparse_est.posterior_.mean, dense_est.posterior_.mean,
                               rtol=rtol, atol=rtol)
    np.testing.assert_allclose(sparse_est.posterior_.cov, dense_est.posterior_.cov,
                               rtol=rtol, atol=rtol)


def test_sparse_log_posterior_equals_dense():
    """What every method evaluates: value, gradient and Hessian in one blocked pass."""
    from skcoreset._inference._common import LogPosterior
    from skcoreset.families import LogisticFamily

    rng = np.random.default_rng(0)
    y = np.where(Y_BINARY > 0, 1.0, -1.0)
    w = rng.random(len(y))
    theta = rng.normal(size=X_SPARSE.shape[1] + 1)
    prior = np.ones(len(theta))
    a = LogPosterior(X_SPARSE, y, LogisticFamily(), w, prior, True).value_and_grad(
        theta, rows_per_block=100, neg_hessian=np.float64)
    b = LogPosterior(X_SPARSE.toarray(), y, LogisticFamily(), w, prior, True).value_and_grad(
        theta, rows_per_block=100, neg_hessian=np.float64)
    for got, want in zip(a, b):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-10)


# CSC is converted to CSR on input: MCMC, the slowest, runs on CSR only
_FORMATS = [(fmt, method, options) for fmt in ("csr", "csc") for method, options in _METHODS
            if fmt == "csr" or method != "mcmc"]


@pytest.mark.parametrize("estimator", [BayesianLogisticRegression, BayesianProbitRegression])
@pytest.mark.parametrize("fmt, method, options", _FORMATS)
def test_classifiers_on_sparse_equal_dense(estimator, fmt, method, options):
    X = X_SPARSE.asformat(fmt)
    dense = X.toarray()
    a, b, rtol = _fit_both(estimator, method, options, X, Y_BINARY)
    proba_a, std_a = a.predict_proba(X, return_std=True)
    proba_b, std_b = b.predict_proba(dense, return_std=True)
    np.testing.assert_allclose(proba_a, proba_b, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(std_a, std_b, rtol=rtol, atol=rtol)
    np.testing.assert_array_equal(a.predict(X), b.predict(dense))
    assert a.score(X, Y_BINARY) == pytest.approx(b.score(dense, Y_BINARY))
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(dense),
                               rtol=rtol, atol=rtol)
    if method != "mcmc":
        np.testing.assert_array_equal(a.sample_y(X[:20], 50, random_state=0),
                                      b.sample_y(dense[:20], 50, random_state=0))


# PASS-GLM has no negative binomial mapping
_COUNT_FITS = [(estimator, method, options) for estimator in (
    BayesianPoissonRegression, BayesianNegativeBinomialRegression) for method, options in _METHODS
    if not (method == "pass_glm" and estimator is BayesianNegativeBinomialRegression)]


@pytest.mark.parametrize("estimator, method, options", _COUNT_FITS)
def test_count_models_on_sparse_equal_dense(estimator, method, options):
    X, dense = X_COUNTS, X_COUNTS.toarray()
    a, b, rtol = _fit_both(estimator, method, options, X, Y_COUNTS)
    mean_a, std_a = a.predict(X, return_std=True)
    mean_b, std_b = b.predict(dense, return_std=True)
    if method == "mcmc":  # Monte Carlo agreement: relative to the spread where means are ~0
        # (a rare category's rate of 2e-8 with a predictive sd of 1e-4 may differ by 17 %)
        assert np.all(np.abs(mean_a - mean_b) <= rtol * (mean_b + std_b))
    else:
        np.testing.assert_allclose(mean_a, mean_b, rtol=rtol)
    np.testing.assert_allclose(std_a, std_b, rtol=rtol)
    assert a.score(X, Y_COUNTS) == pytest.approx(b.score(dense, Y_COUNTS), rel=rtol)


def test_kl_proximal_dual_path_on_sparse():
    """More parameters than rows: the dual updates (their n x p design is dense)."""
    X, y = X_SPARSE[:12], Y_BINARY[:12].copy()
    y[:2] = [0, 1]
    a = BayesianLogisticRegression(method="kl_proximal").fit(X, y)
    b = BayesianLogisticRegression(method="kl_proximal").fit(X.toarray(), y)
    _assert_same_fit(a, b, 1e-9)


def test_pass_glm_partial_fit_on_sparse_chunks():
    chunks = [slice(0, 700), slice(700, 1500)]
    a = BayesianLogisticRegression(method="pass_glm")
    b = BayesianLogisticRegression(method="pass_glm")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rows in chunks:
            a.partial_fit(X_SPARSE[rows], Y_BINARY[rows], classes=[0, 1])
            b.partial_fit(X_SPARSE[rows].toarray(), Y_BINARY[rows], classes=[0, 1])
    _assert_same_fit(a, b, 1e-9)


def test_one_vs_rest_on_sparse():
    y = np.random.default_rng(0).integers(0, 3, X_SPARSE.shape[0])
    a = BayesianOneVsRestClassifier(random_state=0).fit(X_SPARSE.tocsc(), y)
    b = BayesianOneVsRestClassifier(random_state=0).fit(X_SPARSE.toarray(), y)
    np.testing.assert_allclose(a.predict_proba(X_SPARSE), b.predict_proba(X_SPARSE.toarray()),
                               rtol=1e-9)


def test_large_sparse_laplace_forms_two_hessians_and_equals_dense(monkeypatch):
    """From LARGE_N rows on, a sparse fit takes inexact Newton steps (conjugate gradients
    with Hessian products) from one Hessian at the start, and the exact one at the mode:
    the same posterior as the dense fit's exact Newton steps."""
    from skcoreset._inference._common import LogPosterior
    from skcoreset._inference.laplace import LARGE_N

    X, y = one_hot_data(LARGE_N + 1000, n_levels=(30, 12, 40), seed=3)
    hessians = []
    neg_hessian, value_and_grad = LogPosterior.neg_hessian, LogPosterior.value_and_grad

    def counted(self, eta, dtype=np.float64):
        hessians.append(issparse_rows(self))
        return neg_hessian(self, eta, dtype)

    def counted_fused(self, theta, rows_per_block=None, neg_hessian=None):
        if neg_hessian is not None:
            hessians.append(issparse_rows(self))
        return value_and_grad(self, theta, rows_per_block, neg_hessian)

    def issparse_rows(log_post):
        return sparse.issparse(log_post.X)

    monkeypatch.setattr(LogPosterior, "neg_hessian", counted)
    monkeypatch.setattr(LogPosterior, "value_and_grad", counted_fused)
    est = BayesianLogisticRegression().fit(X, y)
    assert hessians == [True, True]
    hessians.clear()
    dense = BayesianLogisticRegression().fit(X.toarray(), y)
    assert len(hessians) >= 2 and not any(hessians)
    sd = np.sqrt(np.diag(dense.posterior_.cov))
    assert np.max(np.abs(est.posterior_.mean - dense.posterior_.mean) / sd) < 1e-6
    # the covariances at modes 1e-6 sd apart
    np.testing.assert_allclose(est.posterior_.cov, dense.posterior_.cov, rtol=1e-6,
                               atol=1e-6 * np.max(np.abs(dense.posterior_.cov)))


def test_laplace_fit_on_wide_sparse_data_never_densifies_the_rows():
    """A dense copy of these rows would be 320 MB; fit and predictions stay far below."""
    n, d = 40_000, 1000
    rng = np.random.default_rng(0)
    columns = rng.integers(0, d, size=(n, 5))
    X = sparse.csr_matrix((np.ones(5 * n), (np.repeat(np.arange(n), 5), columns.ravel())),
                          shape=(n, d))
    y = (rng.random(n) < expit(X @ rng.normal(0.0, 0.5, d))).astype(int)
    tracemalloc.start()
    try:
        est = BayesianLogisticRegression().fit(X, y)
        est.predict_proba(X, return_std=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.25 * n * d * 8, f"peak {peak / 1e6:.0f} MB"


def test_sparse_laplace_holds_about_two_vectors_of_every_row(monkeypatch):
    """Newton's method on CSR rows keeps the linear predictors of one point (a trial's
    replace the current point's), sums the gradient and the Hessian's products by row
    blocks, and holds the curvature while it solves: about two vectors of every row at its
    peak where it held about 3.5 (two points' linear predictors and the residuals, or the
    curvature and a product's latent values). Small blocks, so that they do not count."""
    from skcoreset._inference.laplace import laplace
    from skcoreset.families.logistic import LogisticFamily

    monkeypatch.setattr(design, "_SPARSE_BLOCK_NNZ", 2**14)
    n = 100_000
    X, y = one_hot_data(n, n_levels=(30, 12, 40), seed=3)
    y, w, prior = np.where(y > 0, 1.0, -1.0), np.ones(n), np.ones(X.shape[1] + 1)
    tracemalloc.start()
    try:
        result = laplace(X, y, LogisticFamily(), sample_weight=w, prior_prec=prior,
                         fit_intercept=True, keep_precision=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.converged
    assert peak < 2.75 * 8 * n, f"peak {peak / (8 * n):.2f} vectors of every row"


def test_fit_keeps_its_encoded_targets_without_copying_them(monkeypatch):
    """The targets kept for to_arviz and loo are the fit's own encoding of the labels (no
    second vector of every row); the caller's float targets, which the fit may share, are
    still copied."""
    from skcoreset.linear_model import _results

    copied = []
    copy = _results._copy
    monkeypatch.setattr(_results, "_copy", lambda a: copied.append(a) or copy(a))
    labels = np.where(Y_BINARY > 0, "yes", "no")
    est = BayesianLogisticRegression().fit(X_SPARSE, labels)
    assert not any(a is est._kept_rows.y for a in copied)
    assert not any(a.shape == labels.shape for a in copied if not sparse.issparse(a))
    counts = Y_COUNTS.astype(float)
    poisson = BayesianPoissonRegression().fit(X_COUNTS, counts)
    assert not np.shares_memory(poisson._kept_rows.y, counts)
    counts[:] = 0.0  # the caller's array changed after the fit
    assert np.any(poisson._kept_rows.y != 0.0)


# --- coreset constructors --------------------------------------------------------------------

_CONSTRUCTORS = [
    UniformCoreset(M=100, random_state=0),
    SensitivityCoreset(M=100, random_state=0),
    GIGACoreset(M=40, random_state=0),
    FrankWolfeCoreset(M=40, random_state=0),
    QuasiNewtonCoreset(M=200, random_state=0),
    QuasiNewtonCoreset(M=200, max_iter=2, n_draws=50, random_state=0),
    SparseVICoreset(M=10, n_draws=20, n_iter_opt=5, random_state=0),
    StreamingCoreset(QuasiNewtonCoreset(M=150), block_size=500, random_state=0),
    StreamingCoreset(GIGACoreset(M=40), block_size=500, random_state=0),
]


# Continuous sparse rows without duplicates: one-hot rows repeat, and k-means breaks the
# ties between equally distant duplicates by rounding, which differs between scikit-learn's
# sparse and dense kernels (the sensitivity coreset is then another draw, not a worse one).
X_DISTINCT = sparse.random(1500, 20, density=0.2, format="csr", random_state=1)
Y_DISTINCT = (np.random.default_rng(1).random(1500)
              < expit(X_DISTINCT @ np.linspace(-2.0, 2.0, 20))).astype(int)


@pytest.mark.parametrize("coreset", _CONSTRUCTORS, ids=lambda c: type(c).__name__)
def test_constructors_on_sparse_equal_dense(coreset):
    X, y = ((X_DISTINCT, Y_DISTINCT) if isinstance(coreset, SensitivityCoreset)
            else (X_SPARSE, Y_BINARY))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quality warnings, the same both ways
        a = coreset.fit(X, y)
        indices, weights = a.sample_indices_.copy(), a.sample_weight_.copy()
        subset = coreset.fit_transform(X.tocsc(), y)
        b = coreset.fit(X.toarray(), y)
    np.testing.assert_array_equal(indices, b.sample_indices_)
    # the Hilbert projections are stored in float32
    np.testing.assert_allclose(weights, b.sample_weight_, rtol=1e-5)
    assert isinstance(subset, SparseWeightedSubset)
    np.testing.assert_array_equal(subset.toarray(), X[subset.sample_indices].toarray())


def test_streaming_partial_fit_on_sparse_blocks():
    a = StreamingCoreset(UniformCoreset(M=50), block_size=500, random_state=0)
    b = StreamingCoreset(UniformCoreset(M=50), block_size=500, random_state=0)
    for rows in (slice(0, 800), slice(800, 1500)):
        a.partial_fit(X_SPARSE[rows], Y_BINARY[rows], classes=[0, 1])
        b.partial_fit(X_SPARSE[rows].toarray(), Y_BINARY[rows], classes=[0, 1])
    np.testing.assert_array_equal(a.sample_indices_, b.sample_indices_)
    np.testing.assert_allclose(a.sample_weight_, b.sample_weight_)


def test_sparse_weighted_subset_reaches_estimators():
    coreset = UniformCoreset(M=300, random_state=0)
    subset = coreset.fit_transform(X_SPARSE, Y_BINARY)
    est = BayesianLogisticRegression().fit(subset, Y_BINARY)  # y of all rows: indexed
    ref = BayesianLogisticRegression().fit(X_SPARSE[coreset.sample_indices_],
                                           Y_BINARY[coreset.sample_indices_],
                                           sample_weight=coreset.sample_weight_)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-12)
    assert subset[:5].sample_weight is None  # derived matrices carry no weights
    with pytest.raises(ValueError, match="weighted subset"):
        est.predict(subset)
    # a plain Pipeline hands the subset to a skcoreset estimator, which reads the weights
    plain = SklearnPipeline([("coreset", UniformCoreset(M=300, random_state=0)),
                             ("clf", BayesianLogisticRegression())]).fit(X_SPARSE, Y_BINARY)
    np.testing.assert_allclose(plain[-1].coef_, ref.coef_, rtol=1e-12)
    quality = coreset_quality(coreset, X_SPARSE, Y_BINARY)
    dense_quality = coreset_quality(coreset.fit(X_SPARSE.toarray(), Y_BINARY),
                                    X_SPARSE.toarray(), Y_BINARY)
    assert quality.kl == pytest.approx(dense_quality.kl, rel=1e-8)


def _frame(n, seed=0):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "shop": rng.choice([f"s{i}" for i in range(30)], size=n,
                           p=rng.dirichlet(np.full(30, 0.3))),
        "device": rng.choice(["phone", "tablet", "desktop"], size=n, p=[0.6, 0.1, 0.3]),
        "amount": rng.lognormal(3.0, 1.0, size=n),
        "age": rng.normal(40.0, 12.0, size=n),
    })
    shop_effect = rng.normal(0.0, 1.0, size=30)
    eta = (shop_effect[frame["shop"].str[1:].astype(int)] + 0.8 * (frame["device"] == "tablet")
           + 0.5 * np.log(frame["amount"]) - 3.0)
    return frame, (rng.random(n) < expit(eta)).astype(int)


def _column_pipeline(sparse_threshold):
    columns = ColumnTransformer([("cat", OneHotEncoder(), ["shop", "device"]),
                                 ("num", StandardScaler(with_mean=False), ["amount", "age"])],
                                sparse_threshold=sparse_threshold)
    return Pipeline([("columns", columns),
                     ("coreset", QuasiNewtonCoreset(M=600, random_state=0)),
                     ("clf", BayesianLogisticRegression())])


def test_column_transformer_one_hot_coreset_pipeline_end_to_end():
    frame, y = _frame(6000)
    pipe = _column_pipeline(sparse_threshold=0.3).fit(frame, y)  # the default sparse output
    assert sparse.issparse(pipe.named_steps["columns"].transform(frame.iloc[:5]))
    dense_pipe = _column_pipeline(sparse_threshold=0.0).fit(frame, y)
    proba, std = pipe.predict_proba(frame, return_std=True)
    dense_proba, dense_std = dense_pipe.predict_proba(frame, return_std=True)
    np.testing.assert_allclose(proba, dense_proba, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(std, dense_std, rtol=1e-6, atol=1e-9)
    assert pipe.score(frame, y) == dense_pipe.score(frame, y)
    assert pipe.named_steps["coreset"].kl_estimate_ < 1.0


# --- bad sparse input -------------------------------------------------------------------------

@pytest.mark.parametrize("estimator", [BayesianLogisticRegression(),
                                       BayesianLogisticRegression(method="pass_glm"),
                                       QuasiNewtonCoreset(M=50), UniformCoreset(M=50)],
                         ids=lambda e: f"{type(e).__name__}-{getattr(e, 'method', '')}")
def test_non_finite_sparse_entries_are_refused(estimator):
    X = X_SPARSE.copy()
    X.data[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        estimator.fit(X, Y_BINARY)
    X.data[3] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        estimator.fit(X, Y_BINARY)


def test_sparse_input_of_the_wrong_shape_is_refused():
    est = BayesianLogisticRegression().fit(X_SPARSE, Y_BINARY)
    with pytest.raises(ValueError, match="features"):
        est.predict_proba(X_SPARSE[:, :-1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        BayesianLogisticRegression().fit(X_SPARSE[:-1], Y_BINARY)
    coreset = UniformCoreset(M=50).fit(X_SPARSE, Y_BINARY)
    with pytest.raises(ValueError, match="features"):
        coreset.transform(X_SPARSE[:, :-1])


@pytest.mark.parametrize("estimator", [BayesianPoissonRegression,
                                       BayesianNegativeBinomialRegression])
def test_count_models_with_exposure_on_sparse_equal_dense(estimator):
    exposure = np.random.default_rng(0).uniform(0.5, 2.0, len(Y_COUNTS))
    a = estimator().fit(X_COUNTS, Y_COUNTS, exposure=exposure)
    b = estimator().fit(X_COUNTS.toarray(), Y_COUNTS, exposure=exposure)
    _assert_same_fit(a, b, 1e-9)
    np.testing.assert_allclose(a.predict(X_COUNTS, exposure=exposure),
                               b.predict(X_COUNTS.toarray(), exposure=exposure), rtol=1e-9)


def test_to_arviz_and_one_vs_rest_draws_on_sparse_rows():
    pytest.importorskip("arviz")
    est = BayesianLogisticRegression().fit(X_SPARSE, Y_BINARY)
    a = est.to_arviz(X_SPARSE[:50], Y_BINARY[:50], random_state=0)
    b = est.to_arviz(X_SPARSE[:50].toarray(), Y_BINARY[:50], random_state=0)
    np.testing.assert_allclose(np.asarray(a["log_likelihood"]["y"]),
                               np.asarray(b["log_likelihood"]["y"]), rtol=1e-12)
    y = np.random.default_rng(0).integers(0, 3, X_SPARSE.shape[0])
    ovr = BayesianOneVsRestClassifier(random_state=0).fit(X_SPARSE, y)
    np.testing.assert_array_equal(ovr.sample_y(X_SPARSE[:10], 5, random_state=0),
                                  ovr.sample_y(X_SPARSE[:10].toarray(), 5, random_state=0))
