"""Laplace approximation: MAP against scikit-learn, covariance against an independent Hessian,
exact agreement with the conjugate Gaussian posterior."""

import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, PoissonRegressor

from skcoreset import BayesianLogisticRegression, BayesianPoissonRegression
from skcoreset.families import (GaussianFamily, LogisticFamily, NegativeBinomialFamily,
                                PoissonFamily)
from skcoreset._inference import laplace, prior_precision

from ..conftest import conjugate_linear_regression, logistic_data, poisson_data


def _logistic_data(n=300, d=4, seed=0):
    return logistic_data(n, np.linspace(-1, 1.5, d), 0.3, seed=seed)


def _poisson_data(n=300, d=3, seed=0):
    return poisson_data(n, np.linspace(-0.5, 0.8, d), 1.0, seed=seed, scale=0.5)


@pytest.mark.parametrize("prior_scale", [0.3, 1.0, 5.0])
def test_logistic_map_equals_sklearn(prior_scale):
    X, y = _logistic_data()
    ours = BayesianLogisticRegression(prior_scale=prior_scale, fit_intercept=False).fit(X, y)
    ref = LogisticRegression(C=prior_scale**2, fit_intercept=False, tol=1e-12,
                             max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-5)


@pytest.mark.parametrize("prior_scale", [0.3, 1.0, 5.0])
def test_poisson_map_equals_sklearn(prior_scale):
    X, y = _poisson_data()
    n = len(y)
    ours = BayesianPoissonRegression(prior_scale=prior_scale, fit_intercept=False).fit(X, y)
    ref = PoissonRegressor(alpha=1 / (n * prior_scale**2), fit_intercept=False, tol=1e-12,
                           max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-5)


def _numerical_neg_hessian(f, theta, h=1e-4):
    p = len(theta)
    H = np.empty((p, p))
    for i in range(p):
        for j in range(p):
            ei, ej = np.eye(p)[i] * h, np.eye(p)[j] * h
            H[i, j] = -(f(theta + ei + ej) - f(theta + ei - ej)
                        - f(theta - ei + ej) + f(theta - ei - ej)) / (4 * h * h)
    return H


@pytest.mark.parametrize("family,data", [
    (LogisticFamily(), _logistic_data(n=120, d=2)),
    (PoissonFamily("log"), _poisson_data(n=120, d=2)),
    (PoissonFamily("softplus"), _poisson_data(n=120, d=2)),
])
def test_covariance_is_inverse_of_finite_difference_hessian(family, data):
    X, y = data
    if family.name == "logistic":
        y = np.where(y == 1, 1.0, -1.0)
    rng = np.random.default_rng(1)
    w = rng.uniform(0.5, 2.0, len(y))
    prior = prior_precision(2, prior_scale=1.5, intercept_prior_scale=4.0, fit_intercept=True)

    def log_post(theta):
        eta = X @ theta[:-1] + theta[-1]
        return w @ family.loglik(y, eta) - 0.5 * np.sum(prior * theta**2)

    result = laplace(X, y, family, sample_weight=w, prior_prec=prior, fit_intercept=True)
    H = _numerical_neg_hessian(log_post, result.posterior.mean)
    np.testing.assert_allclose(result.posterior.cov @ H, np.eye(3), atol=1e-5)
    # the mode is a stationary point of the log posterior
    h = 1e-6
    grad = [(log_post(result.posterior.mean + h * e) - log_post(result.posterior.mean - h * e))
            / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(grad, 0.0, atol=1e-5)


def test_gaussian_family_gives_the_exact_conjugate_posterior_and_evidence():
    rng = np.random.default_rng(4)
    n, d, noise, s, s0 = 50, 3, 0.6, 2.0, 5.0
    X = rng.normal(size=(n, d))
    y = X @ [1.0, -2.0, 0.5] + 0.7 + noise * rng.normal(size=n)
    w = rng.uniform(0.0, 3.0, n)
    prior = prior_precision(d, prior_scale=s, intercept_prior_scale=s0, fit_intercept=True)
    result = laplace(X, y, GaussianFamily(noise_scale=noise), sample_weight=w,
                     prior_prec=prior, fit_intercept=True)
    mean, cov, log_evidence = conjugate_linear_regression(X, y, w, noise, prior)
    np.testing.assert_allclose(result.posterior.mean, mean, rtol=1e-9)
    np.testing.assert_allclose(result.posterior.cov, cov, rtol=1e-9)
    np.testing.assert_allclose(result.log_evidence, log_evidence, rtol=1e-10)
    assert result.n_iter == 1


def test_separable_data_stay_finite_and_converge():
    X = np.concatenate([np.linspace(-3, -0.5, 50), np.linspace(0.5, 3, 50)])[:, None]
    y = (X[:, 0] > 0).astype(int)
    clf = BayesianLogisticRegression(prior_scale=10.0).fit(X, y)
    assert np.all(np.isfinite(clf.coef_)) and np.all(np.isfinite(clf.posterior_.cov))
    assert clf.coef_[0, 0] > 1
    proba, std = clf.predict_proba(np.array([[-1e4], [-1.0], [1.0], [1e4]]), return_std=True)
    assert np.all(np.isfinite(proba)) and np.all(np.isfinite(std))
    assert np.all(np.diff(proba[:, 1]) > 0) and proba[0, 1] < 0.1 and proba[-1, 1] > 0.9


def test_huge_predictors_and_duplicated_rows_stay_finite():
    rng = np.random.default_rng(0)
    X = np.repeat(rng.normal(size=(5, 2)) * 1e3, 40, axis=0)
    y = np.repeat([0, 1, 0, 1, 1], 40)
    clf = BayesianLogisticRegression().fit(X, y)
    assert np.all(np.isfinite(clf.posterior_.cov))
    assert np.all(np.isfinite(clf.predict_proba(X * 1e3)))
    counts = np.repeat([0, 3, 1, 500, 2], 40)
    reg = BayesianPoissonRegression().fit(X / 1e3, counts)
    # at 1e3 times the fitted scale the log-normal moments are beyond float64: inf, said so
    with pytest.warns(RuntimeWarning, match="200 of 200 predicted .* beyond float64"):
        mean, std = reg.predict(X, return_std=True)
    assert not np.any(np.isnan(mean)) and np.all(np.isinf(std))
    assert np.all(np.isfinite(reg.predict(X / 1e3, return_std=True)))


def test_convergence_warning_when_max_iter_is_hit():
    X, y = _logistic_data()
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        clf = BayesianLogisticRegression(max_iter=1).fit(X, y)
    assert clf.n_iter_ == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert BayesianLogisticRegression().fit(X, y).n_iter_ < 15


def test_warm_start_from_the_mode_needs_no_step():
    X, y = _logistic_data()
    y_pm = np.where(y == 1, 1.0, -1.0)
    prior = prior_precision(X.shape[1], prior_scale=1.0, intercept_prior_scale=10.0,
                            fit_intercept=True)
    kwargs = dict(sample_weight=np.ones(len(y)), prior_prec=prior, fit_intercept=True)
    first = laplace(X, y_pm, LogisticFamily(), **kwargs)
    again = laplace(X, y_pm, LogisticFamily(), theta0=first.posterior.mean, **kwargs)
    assert again.n_iter == 0
    np.testing.assert_allclose(again.posterior.cov, first.posterior.cov)


def test_large_n_warm_start_and_chord_steps_reach_the_same_mode():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60_000, 3))
    y = np.where(rng.random(60_000) < expit(X @ [0.5, -1.0, 0.2]), 1.0, -1.0)
    w = rng.uniform(0.5, 1.5, 60_000)
    prior = prior_precision(3, prior_scale=1.0, intercept_prior_scale=10.0, fit_intercept=True)
    kwargs = dict(sample_weight=w, prior_prec=prior, fit_intercept=True)
    warm = laplace(X, y, LogisticFamily(), **kwargs)  # thinned start, then chord steps
    plain = laplace(X, y, LogisticFamily(), theta0=np.zeros(4), **kwargs)
    np.testing.assert_allclose(warm.posterior.mean, plain.posterior.mean, rtol=1e-9, atol=1e-10)
    # large N steers with single-precision Hessians and stops at decrement/2 <= 1e-2 tol
    # (newton's APPROX_MARGIN): the two paths' modes differ by ~1e-6 posterior sd
    np.testing.assert_allclose(warm.posterior.precision, plain.posterior.precision, rtol=1e-8)
    # the returned precision is the Hessian at the returned mode
    from skcoreset._inference import LogPosterior
    log_post = LogPosterior(X, y, LogisticFamily(), w, prior, True)
    np.testing.assert_allclose(log_post.neg_hessian(log_post.eta(warm.posterior.mean)),
                               warm.posterior.precision, rtol=1e-12)


def test_single_precision_gram_is_close_but_the_default_is_exact():
    from skcoreset._design import weighted_gram
    rng = np.random.default_rng(3)
    X = rng.normal(size=(10_000, 6))
    c = rng.exponential(size=10_000)
    exact = np.column_stack([X, np.ones(10_000)]).T @ (c[:, None] * np.column_stack(
        [X, np.ones(10_000)]))
    np.testing.assert_allclose(weighted_gram(X, c, True), exact, rtol=1e-12, atol=1e-9)
    single = weighted_gram(X, c, True, dtype=np.float32)
    np.testing.assert_allclose(single, exact, rtol=1e-4, atol=1e-2)
    assert single.dtype == np.float64 and not np.allclose(single, exact, rtol=1e-12, atol=0)
    # weights that would overflow single-precision products are scaled first
    np.testing.assert_allclose(weighted_gram(X, c * 1e60, True, dtype=np.float32),
                               exact * 1e60, rtol=1e-4, atol=1e56)
    # entries of X beyond float32's range fall back to float64, unit weights included
    X[7, 1] = 1e30
    for weights in (c, np.ones(10_000)):
        np.testing.assert_allclose(weighted_gram(X, weights, True, dtype=np.float32),
                                   weighted_gram(X, weights, True), rtol=1e-12)


@pytest.mark.parametrize("family", [PoissonFamily(), LogisticFamily(),
                                    NegativeBinomialFamily(alpha=0.5)])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_value_gradient_and_hessian_in_one_pass_match_the_separate_ones(fit_intercept,
                                                                        family):
    from skcoreset._design import add_scaled_gram, weighted_gram
    from skcoreset._inference import LogPosterior
    rng = np.random.default_rng(7)
    X = rng.normal(size=(10_001, 5))
    y = rng.poisson(np.exp(0.3 * X[:, 0])).astype(float)
    if family.name == "logistic":
        y = np.where(y > 0, 1.0, -1.0)
    w = rng.uniform(0, 2, 10_001)
    w[::7] = 0.0
    prior = prior_precision(5, prior_scale=1.0, intercept_prior_scale=5.0,
                            fit_intercept=fit_intercept)
    log_post = LogPosterior(X, y, family, w, prior, fit_intercept)
    theta = rng.normal(scale=0.2, size=len(prior))
    value, eta, grad = log_post.value_and_grad(theta, rows_per_block=1000)
    # against the separate evaluations (whole log-likelihoods, eta-free terms included)
    np.testing.assert_allclose(eta, log_post.eta(theta), rtol=1e-14)
    assert value == pytest.approx(log_post.value(theta), rel=1e-13)
    np.testing.assert_allclose(grad, log_post.grad(theta, eta), rtol=1e-12)
    exact = log_post.neg_hessian(eta)
    fused = log_post.value_and_grad(theta, rows_per_block=1000, neg_hessian=np.float64)
    assert fused[0] == pytest.approx(value, rel=1e-14)
    np.testing.assert_array_equal(fused[1], eta)
    np.testing.assert_allclose(fused[2], grad, rtol=1e-14)
    np.testing.assert_allclose(fused[3], exact, rtol=1e-12)
    single = log_post.value_and_grad(theta, rows_per_block=1000, neg_hessian=np.float32)[3]
    np.testing.assert_allclose(single, exact, rtol=1e-4)
    assert not np.allclose(single, exact, rtol=1e-12, atol=0)
    # one block's update, as weighted_gram
    c = rng.exponential(size=300)
    out = np.zeros((len(prior), len(prior)))
    add_scaled_gram(out, np.empty((300, len(prior))), X[:300], np.sqrt(c), fit_intercept)
    np.testing.assert_allclose(out, weighted_gram(X[:300], c, fit_intercept), rtol=1e-13)


def test_fused_single_precision_hessian_falls_back_on_overflow():
    from skcoreset._inference import LogPosterior
    rng = np.random.default_rng(8)
    X = rng.normal(size=(500, 3))
    X[3, 1] = 1e30  # beyond float32's range
    y = np.where(rng.random(500) < 0.5, 1.0, -1.0)
    log_post = LogPosterior(X, y, LogisticFamily(), np.ones(500), np.ones(4), True)
    theta = np.array([0.1, 0.0, -0.2, 0.3])
    single = log_post.value_and_grad(theta, neg_hessian=np.float32)[3]
    assert np.all(np.isfinite(single))
    np.testing.assert_allclose(single, log_post.neg_hessian(log_post.eta(theta)), rtol=1e-4)


@pytest.mark.parametrize("family, data", [(LogisticFamily(), "logistic"),
                                          (PoissonFamily(), "poisson")])
def test_large_n_returns_the_exact_hessian_at_a_converged_mode(family, data):
    # N >= 50,000: thinned starts, single-precision and fused Hessians; the returned
    # precision must still be the float64 Hessian at the returned mode, where half the
    # decrement is below tol
    from skcoreset._inference import LogPosterior
    rng = np.random.default_rng(9)
    X = rng.normal(size=(120_000, 8))
    eta = X @ np.linspace(-0.4, 0.4, 8)
    y = (np.where(rng.random(120_000) < expit(eta), 1.0, -1.0) if data == "logistic"
         else rng.poisson(np.exp(0.5 * eta)).astype(float))
    w = rng.uniform(0, 2, 120_000)
    prior = prior_precision(8, prior_scale=1.0, intercept_prior_scale=10.0, fit_intercept=True)
    result = laplace(X, y, family, sample_weight=w, prior_prec=prior, fit_intercept=True)
    log_post = LogPosterior(X, y, family, w, prior, True)
    mode = result.posterior.mean
    H = log_post.neg_hessian(log_post.eta(mode))
    np.testing.assert_allclose(result.posterior.precision, H, rtol=1e-12)
    g = log_post.grad(mode, log_post.eta(mode))
    assert result.converged and g @ np.linalg.solve(H, g) / 2 <= 1e-10
    assert result.log_evidence == pytest.approx(
        log_post.value(mode) + log_post.log_prior_normaliser() + 4.5 * np.log(2 * np.pi)
        - 0.5 * np.linalg.slogdet(H)[1], rel=1e-12)


def test_mode_without_keeping_the_hessian_returns_its_factor_in_its_place():
    """find_mode(keep_neg_hessian=False): the same steps, and the Cholesky factor of the
    same exact Hessian, bit for bit, instead of the Hessian (one p x p array, not two)."""
    from skcoreset._inference import LogPosterior, find_mode
    from skcoreset._linalg import stable_cholesky

    X, y = logistic_data(3000, np.linspace(-1.0, 1.0, 6), 0.3, seed=4)[:2]
    prior = prior_precision(6, prior_scale=1.0, intercept_prior_scale=10.0, fit_intercept=True)
    log_post = LogPosterior(X, np.where(y > 0, 1.0, -1.0), LogisticFamily(), np.ones(3000),
                            prior, True)
    kept = find_mode(log_post, tol=1e-10, max_iter=100)
    factored = find_mode(log_post, tol=1e-10, max_iter=100, keep_neg_hessian=False)
    assert kept.neg_hessian_factor is None and factored.neg_hessian is None
    np.testing.assert_array_equal(factored.x, kept.x)
    assert factored.n_iter == kept.n_iter
    np.testing.assert_array_equal(factored.neg_hessian_factor, stable_cholesky(kept.neg_hessian))
