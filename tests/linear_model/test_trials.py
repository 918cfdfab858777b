"""Binomial counts with trials (``fit(X, successes, n_trials=...)``) checked against
statsmodels' GLM with a two-column Binomial endog and against the expanded 0/1 rows."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import statsmodels.api as sm
from scipy import stats
from scipy.special import gammaln

from skcoreset import BayesianBinaryRegression, BayesianLogisticRegression
from skcoreset.families import BinaryFamily

from ..conftest import gaussian_kl_closed_form

INVERSE = {"logit": lambda eta: 1.0 / (1.0 + np.exp(-eta)), "probit": stats.norm.cdf,
           "cloglog": lambda eta: -np.expm1(-np.exp(eta))}
SM_LINK = {"logit": sm.families.links.Logit, "probit": sm.families.links.Probit,
           "cloglog": sm.families.links.CLogLog}


def _cells(link, n_cells=200, max_trials=30, seed=0, min_trials=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_cells, 3))
    n = rng.integers(min_trials, max_trials, n_cells)
    k = rng.binomial(n, INVERSE[link](0.3 + X @ [0.5, -0.4, 0.2]))
    return X, k, n


def _weak(link, **params):
    return BayesianBinaryRegression(link=link, prior_scale=1e4, intercept_prior_scale=1e4,
                                    **params)


@pytest.mark.parametrize("link", ["logit", "probit", "cloglog"])
def test_laplace_equals_statsmodels_binomial(link):
    X, k, n = _cells(link)
    # Newton's method: standard errors from the observed information, as the Laplace fit's
    # (IRLS's expected information differs for the probit and cloglog links)
    ref = sm.GLM(np.c_[k, n - k], sm.add_constant(X),
                 family=sm.families.Binomial(link=SM_LINK[link]())).fit(
        method="newton", tol=1e-12, maxiter=100)
    est = _weak(link).fit(X, k, n_trials=n)
    coef = np.r_[est.intercept_, est.coef_.ravel()]
    sd = np.sqrt(np.diag(est.posterior_.cov))[[3, 0, 1, 2]]
    np.testing.assert_allclose(coef, ref.params, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(sd, ref.bse, rtol=1e-4)
    np.testing.assert_array_equal(est.classes_, [0, 1])
    # the cells' statistics, as statsmodels gives them
    assert est.loglik_ == pytest.approx(ref.llf, rel=1e-8)
    assert est.deviance_ == pytest.approx(ref.deviance, rel=1e-6)
    assert est.aic_ == pytest.approx(ref.aic, rel=1e-8)


@pytest.mark.parametrize("link", ["logit", "cloglog"])
def test_laplace_equals_expanded_rows(link):
    X, k, n = _cells(link, n_cells=60, max_trials=8, min_trials=0)
    cells = np.repeat(np.arange(len(n)), n)
    y01 = np.concatenate([np.r_[np.ones(s), np.zeros(t - s)] for s, t in zip(k, n)])
    expanded = BayesianBinaryRegression(link=link).fit(X[cells], y01)
    grouped = BayesianBinaryRegression(link=link).fit(X, k, n_trials=n)
    np.testing.assert_allclose(grouped.posterior_.mean, expanded.posterior_.mean, atol=1e-8)
    np.testing.assert_allclose(grouped.posterior_.cov, expanded.posterior_.cov, atol=1e-10)
    # the evidence of the counts adds log C(n, k) to that of the ordered 0/1 rows
    choose = np.sum(gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0))
    assert grouped.log_evidence_ == pytest.approx(expanded.log_evidence_ + choose, rel=1e-9)
    np.testing.assert_allclose(grouped.predict_proba(X), expanded.predict_proba(X),
                               atol=1e-8)


def test_sparse_and_scalar_trials_and_weights():
    X, k, n = _cells("logit", n_cells=80, max_trials=5)
    n = np.full(len(k), 5)
    dense = BayesianLogisticRegression().fit(X, k, n_trials=n, sample_weight=2.0)
    scalar = BayesianLogisticRegression().fit(sp.csr_matrix(X), k, n_trials=5,
                                              sample_weight=np.full(len(k), 2.0))
    np.testing.assert_allclose(scalar.posterior_.mean, dense.posterior_.mean, atol=1e-10)
    doubled = BayesianLogisticRegression().fit(X, 2 * k, n_trials=2 * n)
    np.testing.assert_allclose(doubled.posterior_.mean, dense.posterior_.mean, atol=1e-10)


@pytest.mark.parametrize("method", ["kl_proximal", "pass_glm"])
def test_other_methods_equal_their_fit_of_the_weighted_rows(method):
    X, k, n = _cells("logit", n_cells=100)
    hits, misses = k > 0, n - k > 0
    rows = np.r_[X[hits], X[misses]]
    y = np.r_[np.ones(hits.sum()), np.zeros(misses.sum())]
    w = np.r_[k[hits], (n - k)[misses]].astype(float)
    ref = BayesianLogisticRegression(method=method, random_state=0)
    ref.fit(rows, y, sample_weight=w)
    est = BayesianLogisticRegression(method=method, random_state=0).fit(X, k, n_trials=n)
    np.testing.assert_allclose(est.posterior_.mean, ref.posterior_.mean, atol=1e-8)


def test_mcmc_agrees_with_laplace_within_monte_carlo_error():
    X, k, n = _cells("probit", n_cells=150, max_trials=40)
    laplace = _weak("probit").fit(X, k, n_trials=n)
    mcmc = _weak("probit", method="mcmc", n_draws=1000, n_chains=2,
                 random_state=0).fit(X, k, n_trials=n)
    sd = np.sqrt(np.diag(laplace.posterior_.cov))
    # many trials: the posterior is close to Gaussian; the draws' mean within 5 MC errors
    # (effective sample size at least ~200 here)
    assert np.all(np.abs(mcmc.posterior_.mean - laplace.posterior_.mean) < 5 * sd / np.sqrt(200))
    np.testing.assert_allclose(np.sqrt(np.diag(mcmc.posterior_.cov)), sd, rtol=0.2)


def test_trials_as_rows_keeps_at_most_two_rows_per_cell():
    k, n = np.array([0.0, 3.0, 5.0, 0.0]), np.array([4.0, 5.0, 5.0, 0.0])
    rows, y, w, const = BinaryFamily.trials_as_rows(k, n, np.ones(4))
    assert sorted(zip(rows, y, w)) == [(0, -1.0, 4.0), (1, -1.0, 2.0), (1, 1.0, 3.0),
                                       (2, 1.0, 5.0)]
    assert const == pytest.approx(np.log(10.0))


@pytest.mark.parametrize("y, n_trials, message", [
    ([1, 2, 3], [2, 2, 2], "exceeds n_trials"),
    ([0.5, 0.2, 0.1], [2, 2, 2], "fractional"),
    ([1, 0, 1], [2, -1, 2], "n_trials must hold non-negative whole"),
    ([1, 0, 1], [2, 1.5, 2], "n_trials must hold non-negative whole"),
    ([1, 0, 1], [0, 0, 0], "n_trials is zero"),
    ([1, 0, 1], [2, 2], "n_trials must be 1-D"),
    ([0, 0, 0], [2, 2, 2], "no successes"),
    ([2, 2, 2], [2, 2, 2], "no failures"),
])
def test_invalid_trials_are_refused_and_leave_the_estimator(y, n_trials, message):
    X = np.arange(6.0).reshape(3, 2)
    est = BayesianLogisticRegression()
    with pytest.raises(ValueError, match=message):
        est.fit(X, y, n_trials=n_trials)
    assert not hasattr(est, "coef_")
    with pytest.raises(TypeError, match="n_trials"):
        est.fit(X, [1, 0, 1], n_trials=True)


def test_coreset_of_the_cells_matches_the_cells_fit():
    from skcoreset import QuasiNewtonCoreset
    from skcoreset.pipeline import Pipeline
    X, k, n = _cells("logit", n_cells=3000, max_trials=200, seed=1)
    cells = BayesianLogisticRegression().fit(X, k, n_trials=n)
    pipe = Pipeline([("coreset", QuasiNewtonCoreset(M=300, random_state=0)),
                     ("clf", BayesianLogisticRegression())])
    pipe.fit(X, k, coreset__n_trials=n)
    post, full = pipe[-1].posterior_, cells.posterior_
    assert gaussian_kl_closed_form(post.mean, post.cov, full.mean, full.cov) < 0.05
    np.testing.assert_array_equal(pipe[-1].classes_, [0, 1])
    # the coreset of the cells is the coreset of their weighted rows, its rows mapped to
    # their cells
    rows, labels, weights, _ = BinaryFamily.trials_as_rows(k, n, np.ones(len(n)))
    of_rows = QuasiNewtonCoreset(M=300, random_state=0).fit(X[rows], labels,
                                                            sample_weight=weights)
    coreset = pipe[0]
    order = np.lexsort((-labels[of_rows.sample_indices_], rows[of_rows.sample_indices_]))
    np.testing.assert_array_equal(coreset.sample_indices_,
                                  rows[of_rows.sample_indices_][order])
    np.testing.assert_allclose(coreset.sample_weight_, of_rows.sample_weight_[order])
    X_core, y_core, w_core = coreset.fit_coreset(X, k, n_trials=n)
    np.testing.assert_array_equal(y_core, labels[of_rows.sample_indices_][order] > 0)
    np.testing.assert_array_equal(X_core, X[coreset.sample_indices_])
    # loo of all cells under the coreset's posterior, as the pipeline's final step gives it
    assert pipe.loo(X, k, n_trials=n, n_draws=100, random_state=0).elpd_loo == pytest.approx(
        pipe[-1].loo(X, k, n_trials=n, n_draws=100, random_state=0).elpd_loo, rel=1e-12)


def test_every_coreset_constructor_takes_n_trials():
    from skcoreset import coreset as constructors
    X, k, n = _cells("logit", n_cells=400, max_trials=50, seed=2)
    rows, labels, weights, _ = BinaryFamily.trials_as_rows(k, n, np.ones(len(n)))
    for name in constructors.__all__:
        cls = getattr(constructors, name)
        if name in ("BaseCoreset", "WeightedSubset", "SparseWeightedSubset"):
            continue
        params = ({"base_coreset": constructors.UniformCoreset(M=40), "block_size": 300,
                   "random_state": 0} if name == "StreamingCoreset"
                  else {"M": 40, "random_state": 0})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cells = cls(**params).fit(X, k, n_trials=n)
            of_rows = cls(**params).fit(X[rows], labels, sample_weight=weights)
        assert cells.model_ == "logistic", name
        np.testing.assert_array_equal(cells.classes_, [0, 1])
        np.testing.assert_array_equal(np.sort(cells.sample_indices_),
                                      np.sort(rows[of_rows.sample_indices_]), err_msg=name)
        np.testing.assert_allclose(np.sort(cells.sample_weight_),
                                   np.sort(of_rows.sample_weight_), err_msg=name)


def test_coreset_trials_are_refused_where_unsupported():
    from skcoreset import BayesianPoissonRegression, QuasiNewtonCoreset
    from skcoreset.pipeline import Pipeline
    X, k, n = _cells("logit", n_cells=100)
    with pytest.raises(ValueError, match="n_trials is of the binary models"):
        QuasiNewtonCoreset(M=20, model="poisson").fit(X, k, n_trials=n)
    with pytest.raises(ValueError, match="n_trials is of the binary models"):
        Pipeline([("coreset", QuasiNewtonCoreset(M=20)),
                  ("reg", BayesianPoissonRegression())]).fit(X, k, coreset__n_trials=n)
    with pytest.raises(ValueError, match="n_trials cannot reach"):
        Pipeline([("coreset", QuasiNewtonCoreset(M=20)),
                  ("clf", BayesianLogisticRegression())]).fit(
                      X, k, coreset__n_trials=n, clf__n_trials=n)
    with pytest.raises(ValueError, match="exact_correction is not supported with n_trials"):
        Pipeline([("coreset", QuasiNewtonCoreset(M=20)),
                  ("clf", BayesianLogisticRegression())],
                 exact_correction=True).fit(X, k, coreset__n_trials=n)
    with pytest.raises(ValueError, match="needs skcoreset.pipeline.Pipeline"):
        QuasiNewtonCoreset(M=20).fit_transform(X, k, n_trials=n)
    with pytest.raises(ValueError, match="exceeds n_trials"):
        QuasiNewtonCoreset(M=20).fit(X, n + 1, n_trials=n)
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match="rows in memory"):
        QuasiNewtonCoreset(M=20).fit(da.from_array(X, chunks=50), da.from_array(k, chunks=50),
                                     n_trials=n)


def test_n_trials_is_routed_to_the_coreset_step():
    from sklearn import config_context
    from skcoreset import QuasiNewtonCoreset
    from skcoreset.pipeline import Pipeline
    X, k, n = _cells("logit", n_cells=500, max_trials=100, seed=3)
    by_name = Pipeline([("coreset", QuasiNewtonCoreset(M=60, random_state=0)),
                        ("clf", BayesianLogisticRegression())]).fit(X, k, coreset__n_trials=n)
    with config_context(enable_metadata_routing=True):
        routed = Pipeline([
            ("coreset", QuasiNewtonCoreset(M=60, random_state=0).set_fit_request(
                n_trials=True)),
            ("clf", BayesianLogisticRegression().set_fit_request(n_trials=False))]).fit(
                X, k, n_trials=n)
    np.testing.assert_allclose(routed[-1].posterior_.mean, by_name[-1].posterior_.mean)


def test_loglik_with_trials_is_the_binomial_pmf():
    family = BayesianBinaryRegression(link="cloglog").get_family()
    k = np.array([0.0, 3.0, 5.0, 0.0, 7.0])
    n = np.array([4.0, 5.0, 5.0, 0.0, 9.0])
    eta = np.array([[-40.0, 0.3], [0.2, -1.0], [3.0, 0.0], [1.0, 2.0], [-0.5, 0.5]])
    p = INVERSE["cloglog"](eta)
    np.testing.assert_allclose(family.loglik_with_trials(k, eta, n),
                               stats.binom.logpmf(k[:, None], n[:, None], p), rtol=1e-10,
                               atol=1e-15)
    draws = family.sample_with_trials(np.zeros(3), np.array([0.0, 1.0, 1000.0]), 0)
    assert draws[0] == 0 and draws[1] in (0.0, 1.0) and 500 < draws[2] < 800


def test_to_arviz_and_loo_of_cells_are_binomial_per_cell():
    X, k, n = _cells("logit", n_cells=80, max_trials=30, seed=4)
    est = BayesianLogisticRegression().fit(X, k, n_trials=n)
    data = est.to_arviz(n_draws=50, n_chains=2, random_state=0)
    loglik = np.asarray(data["log_likelihood"]["y"])
    assert loglik.shape == (2, 50, 80)
    theta = est.posterior_.sample(100, random_state=np.random.RandomState(0))
    coef = np.concatenate([np.asarray(data["posterior"]["coef"]),
                           np.asarray(data["posterior"]["intercept"])[..., None]], axis=-1)
    eta = X @ coef[..., :3].reshape(-1, 3).T + coef[..., 3].ravel()
    expected = stats.binom.logpmf(k[:, None], n[:, None], INVERSE["logit"](eta))
    np.testing.assert_allclose(loglik.reshape(100, 80), expected.T, rtol=1e-9)
    np.testing.assert_array_equal(np.asarray(data["observed_data"]["y"]), k)
    np.testing.assert_array_equal(np.asarray(data["constant_data"]["n_trials"]), n)
    predictive = np.asarray(data["posterior_predictive"]["y"])
    assert np.all((predictive >= 0) & (predictive <= n)) and predictive.max() > 1
    del theta
    # the kept cells and the cells passed again give the same loo, and ArviZ's on the export
    kept = est.loo(n_draws=500, n_chains=2, random_state=0)
    passed = est.loo(X, k, n_trials=n, n_draws=500, n_chains=2, random_state=0)
    assert kept.elpd_loo == pytest.approx(passed.elpd_loo, rel=1e-12)
    az = pytest.importorskip("arviz")
    reference = az.loo(est.to_arviz(n_draws=500, n_chains=2, random_state=0))
    assert kept.elpd_loo == pytest.approx(float(reference["elpd_loo"]
                                                if "elpd_loo" in reference else
                                                reference.elpd_loo), rel=1e-4)
    with pytest.raises(ValueError, match="pass X and y"):
        est.loo(n_trials=n)


def test_counts_without_n_trials_and_dask_are_refused_naming_n_trials():
    X, k, n = _cells("logit", n_cells=50)
    with pytest.raises(ValueError, match="n_trials="):
        BayesianLogisticRegression().fit(X, k)
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match="n_trials is fitted on rows in memory"):
        BayesianLogisticRegression().fit(da.from_array(X, chunks=25),
                                         da.from_array(k, chunks=25), n_trials=n)


def test_score_with_trials_is_the_accuracy_of_the_expanded_rows():
    X, k, n = _cells("logit", n_cells=60, max_trials=8, min_trials=0)
    est = BayesianLogisticRegression().fit(X, k, n_trials=n)
    cells = np.repeat(np.arange(len(n)), n)
    y01 = np.concatenate([np.r_[np.ones(s), np.zeros(t - s)] for s, t in zip(k, n)])
    w = np.linspace(0.5, 2.0, len(n))
    assert est.score(X, k, n_trials=n) == pytest.approx(est.score(X[cells], y01), rel=1e-12)
    assert est.score(X, k, sample_weight=w, n_trials=n) == pytest.approx(
        est.score(X[cells], y01, sample_weight=w[cells]), rel=1e-12)
    with pytest.raises(ValueError, match="exceeds n_trials"):
        est.score(X, n + 1, n_trials=n)


def test_sample_y_with_trials_draws_binomial_counts():
    X, k, n = _cells("probit", n_cells=40, max_trials=50)
    est = BayesianBinaryRegression(link="probit").fit(X, k, n_trials=n)
    draws = est.sample_y(X[:5], n_draws=4000, random_state=0, n_trials=n[:5])
    assert draws.shape == (4000, 5)
    assert np.all((draws >= 0) & (draws <= n[:5]) & (draws == np.round(draws)))
    # E[k] = n E[F(eta)] = n * predict_proba, within 5 Monte Carlo errors
    p = est.predict_proba(X[:5])[:, 1]
    error = draws.std(axis=0) / np.sqrt(4000)
    assert np.all(np.abs(draws.mean(axis=0) - n[:5] * p) < 5 * error)
    labels = est.sample_y(X[:5], n_draws=10, random_state=0)
    assert set(np.unique(labels)) <= {0, 1}
