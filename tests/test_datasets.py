"""Synthetic generators: shapes, dtypes, reproducibility and the statistics of the process."""

import numpy as np
import pytest
from scipy.special import expit
from sklearn.linear_model import LogisticRegression, PoissonRegressor

from skcoreset import BayesianPoissonRegression
from skcoreset.datasets import (make_binary, make_clustered, make_heavy_tailed,
                                make_logistic_regression, make_misspecified_counts,
                                make_mixture, make_poisson_regression, make_rare_events)

GENERATORS = [
    (make_logistic_regression, {"n_features": 3}, 3),
    (make_poisson_regression, {"n_features": 3}, 3),
    (make_binary, {"n_features": 5}, 5),
    (make_binary, {}, 10),
    (make_mixture, {}, 10),
    (make_rare_events, {"n_features": 4}, 4),
    (make_heavy_tailed, {"n_features": 4}, 4),
    (make_heavy_tailed, {"n_features": 4, "distribution": "t", "model": "logistic"}, 4),
    (make_clustered, {"n_features": 4}, 4),
    (make_misspecified_counts, {"n_features": 4}, 4),
]


@pytest.mark.parametrize("make, kwargs, n_features", GENERATORS)
def test_shapes_dtypes_and_return_coef(make, kwargs, n_features):
    X, y = make(50, random_state=0, **kwargs)
    assert X.shape == (50, n_features) and X.dtype == np.float64
    assert y.shape == (50,) and y.dtype == np.int64
    X2, y2, coef = make(50, random_state=0, return_coef=True, **kwargs)
    assert coef.shape == (n_features,) and coef.dtype == np.float64
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)


@pytest.mark.parametrize("make, kwargs, n_features", GENERATORS)
def test_reproducible_with_random_state(make, kwargs, n_features):
    X1, y1 = make(200, random_state=3, **kwargs)
    X2, y2 = make(200, random_state=np.random.RandomState(3), **kwargs)
    X3, _ = make(200, random_state=4, **kwargs)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)


@pytest.mark.parametrize("make", [make_logistic_regression, make_poisson_regression,
                                  make_binary, make_mixture, make_rare_events,
                                  make_heavy_tailed, make_clustered, make_misspecified_counts])
@pytest.mark.parametrize("n_samples", [0, -1, 2.5])
def test_invalid_n_samples(make, n_samples):
    with pytest.raises((ValueError, TypeError)):
        make(n_samples)


def test_logistic_mle_recovers_coefficients():
    coef, intercept = np.array([1.0, -2.0, 0.5]), 0.3
    X, y = make_logistic_regression(40_000, coef=coef, intercept=intercept, random_state=0)
    assert np.allclose(X.mean(axis=0), 0, atol=0.02) and np.allclose(X.std(axis=0), 1, atol=0.02)
    assert set(np.unique(y)) == {0, 1}
    mle = LogisticRegression(C=1e6, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(mle.coef_.ravel(), coef, atol=0.08)
    assert abs(mle.intercept_[0] - intercept) < 0.05


def test_logistic_drawn_coef():
    _, _, coef = make_logistic_regression(10, return_coef=True, random_state=0)
    assert coef.shape == (2,)  # default n_features
    _, _, coef5 = make_logistic_regression(10, 5, return_coef=True, random_state=0)
    _, _, again = make_logistic_regression(10, 5, return_coef=True, random_state=0)
    assert coef5.shape == (5,)
    np.testing.assert_array_equal(coef5, again)
    # the given coefficients are returned as given
    _, _, given = make_logistic_regression(10, coef=[3, 3], return_coef=True)
    np.testing.assert_array_equal(given, [3.0, 3.0])


@pytest.mark.parametrize("kwargs, match", [
    ({"n_features": 3, "coef": [1.0, 2.0]}, "does not match"),
    ({"coef": [[1.0, 2.0]]}, "1-D"),
    ({"coef": [1.0, np.nan]}, "NaN"),
    ({"coef": [1.0], "intercept": np.inf}, "finite"),
])
def test_logistic_invalid_coef(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_logistic_regression(10, **kwargs)


def test_poisson_log_link_mle_recovers_coefficients():
    coef, intercept = np.array([0.5, -0.3]), 1.0
    X, y = make_poisson_regression(20_000, coef=coef, intercept=intercept, random_state=0)
    assert y.min() >= 0
    mle = PoissonRegressor(alpha=0.0, tol=1e-10, max_iter=1000).fit(X, y)
    np.testing.assert_allclose(mle.coef_, coef, atol=0.03)
    assert abs(mle.intercept_ - intercept) < 0.03


def test_poisson_softplus_link():
    # the papers' synthetic Poisson data: x ~ N(0, 1), theta = [1, 0], softplus rate
    X, y = make_poisson_regression(20_000, coef=[1.0], link="softplus", random_state=1)
    rate = np.logaddexp(0.0, X[:, 0])
    assert abs(y.mean() - rate.mean()) < 4 * np.sqrt(rate.mean() / len(y)) + 0.02
    reg = BayesianPoissonRegression(link="softplus", prior_scale=10.0).fit(X, y)
    assert abs(reg.coef_[0] - 1.0) < 0.05 and abs(reg.intercept_) < 0.05


def test_poisson_errors():
    with pytest.raises(ValueError, match="link"):
        make_poisson_regression(10, link="identity")
    with pytest.raises(ValueError, match="rate"):
        make_poisson_regression(10, coef=[100.0], intercept=50.0, random_state=0)


@pytest.mark.parametrize("n_features, positive_rate", [(5, 0.095), (10, 0.089)])
def test_binary_matches_paper(n_features, positive_rate):
    n = 200_000
    X, y, coef = make_binary(n, n_features, return_coef=True, random_state=0)
    probs = np.array([1, .2, .3, .5, .01, .1, .2, .007, .005, .001])[:n_features]
    np.testing.assert_array_equal(
        coef, np.array([-3, 1.2, -.5, .8, 3, -1, -.7, 4, 3.5, 4.5])[:n_features])
    assert set(np.unique(X)) <= {0.0, 1.0}
    assert np.all(X[:, 0] == 1.0)  # p_1 = 1: the constant column acting as the intercept
    freq = X.mean(axis=0)
    se = np.sqrt(probs * (1 - probs) / n) + 1e-12
    assert np.all(np.abs(freq - probs) < 5 * se)
    # features are independent
    corr = np.corrcoef(X[:, 1:].T)
    assert np.all(np.abs(corr - np.eye(n_features - 1)) < 0.02)
    # Huggins, Campbell & Broderick 2016, Table 1: 9.5 % (BINARY5) and 8.9 % (BINARY10)
    # positive examples
    assert abs(y.mean() - positive_rate) < 0.003
    # labels are logistic in theta: exact P(y = 1) for each x, averaged
    assert abs(y.mean() - expit(X @ coef).mean()) < 5 * np.sqrt(0.1 / n)


def test_binary5_mle_recovers_theta():
    X, y, coef = make_binary(200_000, 5, return_coef=True, random_state=2)
    mle = LogisticRegression(C=1e6, fit_intercept=False, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(mle.coef_.ravel(), coef, atol=0.2)


def test_binary_invalid_n_features():
    with pytest.raises(ValueError, match="BINARY5"):
        make_binary(10, n_features=7)


def test_mixture_matches_paper():
    n = 100_000
    X, y, coef = make_mixture(n, return_coef=True, random_state=0)
    mu_pos = np.array([1.0] * 5 + [0.0] * 5)
    mu_neg = np.array([0.0] * 5 + [1.0] * 5)
    np.testing.assert_array_equal(coef, mu_pos - mu_neg)
    assert set(np.unique(y)) == {0, 1}
    assert abs(y.mean() - 0.5) < 5 * np.sqrt(0.25 / n)
    for label, mu in [(1, mu_pos), (0, mu_neg)]:
        Xc = X[y == label]
        np.testing.assert_allclose(Xc.mean(axis=0), mu, atol=0.03)
        np.testing.assert_allclose(np.cov(Xc.T), np.eye(10), atol=0.03)
    # the log-odds are exactly x . (mu_pos - mu_neg): the MLE finds them, with no intercept
    mle = LogisticRegression(C=1e6, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(mle.coef_.ravel(), coef, atol=0.05)
    assert abs(mle.intercept_[0]) < 0.05


def test_rare_events_hit_the_rate_with_correlated_features():
    for rate in (0.05, 0.002):
        X, y = make_rare_events(200_000, n_features=6, positive_rate=rate, correlation=0.6,
                                random_state=0)
        assert abs(y.mean() - rate) < 4 * np.sqrt(rate / 200_000)
    corr = np.corrcoef(X, rowvar=False)
    np.testing.assert_allclose(np.diag(corr, 1), 0.6, atol=0.01)
    np.testing.assert_allclose(np.diag(corr, 2), 0.36, atol=0.01)
    np.testing.assert_allclose(X.std(axis=0), 1.0, atol=0.01)


@pytest.mark.parametrize("distribution", ["lognormal", "t"])
def test_heavy_tailed_features_are_standardised_with_heavy_tails(distribution):
    X, y = make_heavy_tailed(400_000, n_features=2, distribution=distribution, df=5.0,
                             random_state=0)
    np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=0.02)
    np.testing.assert_allclose(X.std(axis=0), 1.0, atol=0.05)
    assert np.abs(X).max() > 10  # tens of sds out, unlike Gaussian features
    # the Poisson response: the log rate is linear in X (a Poisson GLM is well specified)
    reg = PoissonRegressor(alpha=0.0, max_iter=300).fit(X, y)
    _, _, coef = make_heavy_tailed(400_000, n_features=2, distribution=distribution, df=5.0,
                                   return_coef=True, random_state=0)
    np.testing.assert_allclose(reg.coef_, coef, atol=0.02)


def test_clustered_rows_and_capped_counts():
    X, y = make_clustered(100_000, n_features=3, cluster_fraction=0.2, shift=5.0,
                          correlation=0.0, random_state=0)
    in_cluster = np.linalg.norm(X, axis=1) > 2.5 + 0.5 * np.sqrt(3)
    assert abs(in_cluster.mean() - 0.2) < 0.02
    X, y, coef = make_misspecified_counts(100_000, n_features=3, max_rate=5.0,
                                          return_coef=True, random_state=0)
    saturated = X @ coef + 0.5 > np.log(5.0) + 1.0
    assert saturated.sum() > 100
    assert abs(y[saturated].mean() - 5.0) < 4 * np.sqrt(5.0 / saturated.sum())


@pytest.mark.parametrize("make, kwargs, match", [
    (make_rare_events, {"positive_rate": 1.0}, "positive_rate"),
    (make_rare_events, {"correlation": -0.1}, "correlation"),
    (make_heavy_tailed, {"distribution": "cauchy"}, "distribution"),
    (make_heavy_tailed, {"model": "gaussian"}, "model"),
    (make_clustered, {"cluster_fraction": 0.0}, "cluster_fraction"),
    (make_misspecified_counts, {"max_rate": 0.0}, "max_rate"),
])
def test_real_shaped_generators_reject_bad_parameters(make, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make(100, **kwargs)
