"""Metrics against closed forms and direct (slow) computations."""

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import gammaln, log_expit
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skcoreset import (BayesianLogisticRegression, BayesianPoissonRegression, GaussianPosterior,
                       GIGACoreset, StreamingCoreset, UniformCoreset)
from skcoreset import metrics
from skcoreset.metrics import _evaluation, _mmd
from skcoreset.coreset import BaseCoreset
from skcoreset.datasets import make_logistic_regression, make_poisson_regression
from skcoreset.families import GaussianFamily, PoissonFamily
from skcoreset.metrics import (CoresetQuality, coreset_quality, gaussian_kl,
                               loglik_relative_error, mean_error_sd, polynomial_mmd,
                               posterior_kl)

from ..conftest import conjugate_linear_regression, gaussian_kl_closed_form


def _random_spd(rng, p):
    a = rng.normal(size=(p, p))
    return a @ a.T + p * np.eye(p)


# --- gaussian_kl ----------------------------------------------------------------------------

def test_gaussiangaussian_kl_closed_form():
    rng = np.random.default_rng(0)
    for p in (1, 3, 6):
        m0, m1 = rng.normal(size=p), rng.normal(size=p)
        S0, S1 = _random_spd(rng, p), _random_spd(rng, p)
        kl = gaussian_kl(m0, S0, m1, S1)
        assert isinstance(kl, float)
        np.testing.assert_allclose(kl, gaussian_kl_closed_form(m0, S0, m1, S1), rtol=1e-10)
        assert kl > 0 and kl != pytest.approx(gaussian_kl(m1, S1, m0, S0))  # not symmetric
        assert abs(gaussian_kl(m0, S0, m0, S0)) < 1e-12
    # univariate: log(s1/s0) + (s0^2 + (m0 - m1)^2) / (2 s1^2) - 1/2
    expected = np.log(2.0 / 1.0) + (1.0 + 9.0) / (2 * 4.0) - 0.5
    assert gaussian_kl([0.0], [[1.0]], [3.0], [[4.0]]) == pytest.approx(expected)


@pytest.mark.parametrize("args, match", [
    (([0.0, 0.0], np.eye(3), [0.0, 0.0], np.eye(2)), "shape"),
    (([0.0, 0.0], np.eye(2), [0.0], np.eye(1)), "dimensions"),
    ((np.zeros((2, 1)), np.eye(2), [0.0, 0.0], np.eye(2)), "1-D"),
    (([0.0, np.nan], np.eye(2), [0.0, 0.0], np.eye(2)), "NaN"),
    (([0.0, 0.0], -np.eye(2), [0.0, 0.0], np.eye(2)), "positive definite"),
])
def test_gaussian_kl_errors(args, match):
    with pytest.raises(ValueError, match=match):
        gaussian_kl(*args)


# --- posterior_kl ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def logistic_data():
    return make_logistic_regression(300, coef=[1.0, -1.0, 0.5], intercept=0.2, random_state=0)


def test_posterior_kl_between_estimators(logistic_data):
    X, y = logistic_data
    wide = BayesianLogisticRegression(prior_scale=10.0).fit(X, y)
    narrow = BayesianLogisticRegression(prior_scale=0.1).fit(X, y)
    same = BayesianLogisticRegression(prior_scale=10.0).fit(X, y)
    kl = posterior_kl(narrow, wide)
    assert kl > 0.1
    assert kl == pytest.approx(gaussian_kl(narrow.posterior_.mean, narrow.posterior_.cov,
                                           wide.posterior_.mean, wide.posterior_.cov))
    assert kl == pytest.approx(narrow.posterior_.kl(wide.posterior_))
    assert posterior_kl(wide, narrow) != pytest.approx(kl)
    assert abs(posterior_kl(wide, same)) < 1e-10
    assert abs(posterior_kl(wide, wide)) < 1e-12


def test_posterior_kl_pipelines_and_posterior_objects(logistic_data):
    X, y = logistic_data
    est = BayesianLogisticRegression().fit(StandardScaler().fit_transform(X), y)
    pipe = make_pipeline(StandardScaler(), BayesianLogisticRegression(prior_scale=0.3)).fit(X, y)
    post = pipe[-1].posterior_
    assert posterior_kl(pipe, est) == pytest.approx(post.kl(est.posterior_))
    assert posterior_kl(post, est.posterior_) == pytest.approx(post.kl(est.posterior_))
    # anything with mean and cov (e.g. MCMC samples) is moment matched
    draws = post.sample(20_000, random_state=0)
    samples = SimpleNamespace(mean=draws.mean(axis=0), cov=np.cov(draws.T))
    assert posterior_kl(samples, post) == pytest.approx(
        gaussian_kl(samples.mean, samples.cov, post.mean, post.cov))
    assert posterior_kl(samples, post) < 1e-2


def test_posterior_kl_errors(logistic_data):
    X, y = logistic_data
    fitted = BayesianLogisticRegression().fit(X, y)
    with pytest.raises(NotFittedError):
        posterior_kl(BayesianLogisticRegression(), fitted)
    with pytest.raises(NotFittedError):
        posterior_kl(fitted, make_pipeline(StandardScaler(), BayesianLogisticRegression()))
    no_intercept = BayesianLogisticRegression(fit_intercept=False).fit(X, y)
    with pytest.raises(ValueError, match="different lengths"):
        posterior_kl(fitted, no_intercept)
    with pytest.raises(ValueError, match="different lengths"):
        posterior_kl(fitted, BayesianLogisticRegression().fit(X[:, :2], y))
    with pytest.raises(TypeError, match="posterior"):
        posterior_kl(fitted, np.zeros(4))
    with pytest.raises(TypeError, match="no posterior_"):
        posterior_kl(LogisticRegression().fit(X, y), fitted)
    bad = SimpleNamespace(mean=np.zeros(4), cov=np.eye(3))
    with pytest.raises(ValueError, match="shape"):
        posterior_kl(fitted, bad)


# --- polynomial_mmd -------------------------------------------------------------------------

def _mmd2_loops(A, B, degree, coef0, unbiased):
    def k(x, y):
        return (float(np.dot(x, y)) + coef0) ** degree

    def mean_k(P, Q, skip_diagonal):
        total, count = 0.0, 0
        for i in range(len(P)):
            for j in range(len(Q)):
                if skip_diagonal and i == j:
                    continue
                total += k(P[i], Q[j])
                count += 1
        return total / count

    return (mean_k(A, A, unbiased) + mean_k(B, B, unbiased) - 2 * mean_k(A, B, False))


@pytest.mark.parametrize("degree, coef0", [(1, 0.0), (2, 1.0), (3, 0.2), (4, 0.5)])
@pytest.mark.parametrize("unbiased", [False, True])
def test_mmd_matches_double_loop(degree, coef0, unbiased):
    rng = np.random.default_rng(degree)
    A = rng.normal(size=(7, 3))
    B = rng.normal(loc=0.3, size=(5, 3))
    expected = _mmd2_loops(A, B, degree, coef0, unbiased)
    got = polynomial_mmd(A, B, degree=degree, coef0=coef0, unbiased=unbiased)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    # both internal routes, whichever the public function picked
    for route in (_mmd._mmd2_gram, _mmd._mmd2_features):
        mmd2, k_aa, k_bb = route(A, B, degree, coef0)
        np.testing.assert_allclose(mmd2, _mmd2_loops(A, B, degree, coef0, False), rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(k_aa, np.mean((A @ A.T + coef0) ** degree), rtol=1e-12)
        np.testing.assert_allclose(k_bb, np.mean((B @ B.T + coef0) ** degree), rtol=1e-12)


def test_mmd_routes_and_blocks_agree(monkeypatch):
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(300, 4)), rng.normal(size=(200, 4)) * 1.2
    assert _mmd._use_features(500, 4, 3)
    assert not _mmd._use_features(50, 40, 3)
    gram = _mmd._mmd2_gram(A, B, 3, 0.2)
    features = _mmd._mmd2_features(A, B, 3, 0.2)
    np.testing.assert_allclose(gram, features, rtol=1e-9)
    # tiny blocks: many row batches give the same sums
    monkeypatch.setattr(_mmd, "_BLOCK_ELEMENTS", 1000)
    np.testing.assert_allclose(_mmd._mmd2_gram(A, B, 3, 0.2), gram, rtol=1e-12)
    np.testing.assert_allclose(_mmd._mmd2_features(A, B, 3, 0.2), features, rtol=1e-12)
    # high dimension, few samples: the public function takes the Gram route
    A, B = rng.normal(size=(6, 40)), rng.normal(size=(5, 40))
    np.testing.assert_allclose(polynomial_mmd(A, B), _mmd2_loops(A, B, 3, 0.2, False),
                               rtol=1e-10)


def test_mmd_same_distribution_near_zero_and_grows_with_shift():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(3000, 3))
    B = rng.normal(size=(3000, 3))
    values = [polynomial_mmd(A, B + shift) for shift in (0.0, 0.25, 0.5, 1.0)]
    assert np.all(np.diff(values) > 0)
    assert values[0] < 0.05 * values[1]
    assert polynomial_mmd(A, A) == pytest.approx(0.0, abs=1e-12)
    # unbiased: centred on 0 under the null, so small in absolute terms
    assert abs(polynomial_mmd(A, B, unbiased=True)) < 0.05 * values[1]
    assert polynomial_mmd(A, B) == pytest.approx(polynomial_mmd(B, A))
    assert polynomial_mmd(A, B + 0.5, squared=False) == pytest.approx(np.sqrt(values[2]))


def test_mmd_detects_third_moment_only_up_to_degree():
    # same mean and variance, different skewness: degree 3 sees it, degree 2 does not
    rng = np.random.default_rng(0)
    A = rng.normal(size=(4000, 1))
    B = rng.exponential(size=(4000, 1)) - 1.0
    assert polynomial_mmd(A, B, degree=3) > 10 * polynomial_mmd(A, B, degree=2)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"samples_b": np.zeros((4, 3))}, ValueError, "features"),
    ({"samples_a": [[np.nan, 0.0]] * 3}, ValueError, "NaN"),
    ({"degree": 0}, ValueError, "degree"),
    ({"degree": 2.5}, TypeError, "degree"),
    ({"coef0": -1.0}, ValueError, "coef0"),
    ({"samples_a": np.zeros((1, 2)), "unbiased": True}, ValueError, "two samples"),
])
def test_mmd_errors(kwargs, error, match):
    args = {"samples_a": np.zeros((4, 2)), "samples_b": np.ones((3, 2))}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        polynomial_mmd(args.pop("samples_a"), args.pop("samples_b"), **args)


# --- loglik_relative_error ------------------------------------------------------------------

def _direct_error(loglik, weights_full, indices, weights_core):
    full = sum(weights_full[n] * loglik[n] for n in range(len(loglik)))
    core = sum(w * loglik[i] for i, w in zip(indices, weights_core))
    return abs(full - core) / abs(full)


@pytest.fixture(scope="module")
def coreset():
    rng = np.random.default_rng(0)
    indices = rng.choice(400, size=30, replace=False)
    return indices, rng.uniform(5.0, 20.0, size=30)


def test_loglik_error_zero_for_full_data(logistic_data):
    X, y = logistic_data
    thetas = np.random.default_rng(0).normal(size=(25, 4))
    n = len(y)
    err = loglik_relative_error(X, y, np.arange(n), np.ones(n), thetas)
    assert err.shape == (25,) and np.all(err == 0.0)
    # the same with weighted full data and the coreset carrying those weights
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=n)
    err = loglik_relative_error(X, y, np.arange(n), w, thetas, sample_weight=w)
    assert np.all(err == 0.0)


def test_loglik_error_logistic_matches_direct(coreset):
    X, y = make_logistic_regression(400, coef=[2.0, -1.0], random_state=0)
    indices, weights = coreset
    thetas = np.random.default_rng(2).normal(size=(5, 3))
    labels = np.where(y == 1, "yes", "no")  # any two classes: the larger ("yes") is +1
    err = loglik_relative_error(X, labels, indices, weights, thetas)
    for s, theta in enumerate(thetas):
        eta = X @ theta[:2] + theta[2]
        loglik = log_expit(np.where(y == 1, eta, -eta))
        assert err[s] == pytest.approx(_direct_error(loglik, np.ones(400), indices, weights),
                                       rel=1e-10)
    for encoded in (y, 2 * y - 1):
        np.testing.assert_allclose(loglik_relative_error(X, encoded, indices, weights, thetas),
                                   err, rtol=1e-12)
    # a single parameter vector gives a float
    single = loglik_relative_error(X, y, indices, weights, thetas[0])
    assert isinstance(single, float) and single == pytest.approx(err[0])


def test_loglik_error_without_intercept_and_chunked(monkeypatch, coreset):
    X, y = make_logistic_regression(400, coef=[2.0, -1.0], random_state=0)
    indices, weights = coreset
    thetas = np.random.default_rng(3).normal(size=(6, 2))
    err = loglik_relative_error(X, y, indices, weights, thetas, fit_intercept=False)
    for s, theta in enumerate(thetas):
        loglik = log_expit((2 * y - 1) * (X @ theta))
        assert err[s] == pytest.approx(_direct_error(loglik, np.ones(400), indices, weights))
    monkeypatch.setattr(_evaluation, "_BLOCK_ELEMENTS", 50)  # row blocks of 8
    chunked = loglik_relative_error(X, y, indices, weights, thetas, fit_intercept=False)
    np.testing.assert_allclose(chunked, err, rtol=1e-12)


@pytest.mark.parametrize("link", ["log", "softplus"])
def test_loglik_error_poisson_matches_direct(link, coreset):
    X, y = make_poisson_regression(400, coef=[0.5, -0.2], intercept=0.5, link=link,
                                   random_state=0)
    indices, weights = coreset
    sample_weight = np.random.default_rng(4).uniform(0.5, 1.5, size=400)
    thetas = np.random.default_rng(5).normal(scale=0.5, size=(4, 3))
    err = loglik_relative_error(X, y, indices, weights, thetas, model="poisson", link=link,
                                sample_weight=sample_weight)
    for s, theta in enumerate(thetas):
        eta = X @ theta[:2] + theta[2]
        rate = np.exp(eta) if link == "log" else np.log1p(np.exp(eta))
        loglik = y * np.log(rate) - rate - gammaln(y + 1)
        assert err[s] == pytest.approx(_direct_error(loglik, sample_weight, indices, weights),
                                       rel=1e-9)


def test_loglik_error_gaussian_matches_direct(coreset):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(400, 2))
    y = X @ [1.0, 2.0] + rng.normal(scale=0.5, size=400)
    indices, weights = coreset
    thetas = rng.normal(size=(3, 3))
    err = loglik_relative_error(X, y, indices, weights, thetas, model="gaussian",
                                noise_scale=0.5)
    for s, theta in enumerate(thetas):
        resid = y - X @ theta[:2] - theta[2]
        loglik = -0.5 * resid**2 / 0.25 - 0.5 * np.log(2 * np.pi * 0.25)
        assert err[s] == pytest.approx(_direct_error(loglik, np.ones(400), indices, weights))


def test_loglik_error_repeated_indices_add_up(logistic_data):
    X, y = logistic_data
    thetas = np.random.default_rng(7).normal(size=(3, 4))
    repeated = loglik_relative_error(X, y, [3, 3, 8], [1.0, 2.0, 4.0], thetas)
    merged = loglik_relative_error(X, y, [3, 8], [3.0, 4.0], thetas)
    np.testing.assert_allclose(repeated, merged, rtol=1e-12)
    # an empty coreset is off by 100 %
    np.testing.assert_allclose(loglik_relative_error(X, y, [], [], thetas), 1.0)


@pytest.mark.parametrize("kwargs, match", [
    ({"coreset_indices": [0, 300]}, r"\[0, 300\)"),
    ({"coreset_indices": [-1, 2]}, r"\[0, 300\)"),
    ({"coreset_indices": [0.5, 2.0]}, "integers"),
    ({"coreset_weights": [1.0]}, "shape"),
    ({"coreset_weights": [1.0, -1.0]}, "negative"),
    ({"coreset_weights": [1.0, np.nan]}, "NaN"),
    ({"theta": np.zeros(3)}, "theta must have shape"),
    ({"theta": np.zeros((2, 5))}, "theta must have shape"),
    ({"theta": [np.nan] * 4}, "NaN"),
    ({"X": np.full((300, 3), np.nan)}, "NaN"),
    ({"y": np.arange(300) % 3}, "binary"),
    ({"y": np.zeros(10)}, "inconsistent"),
    ({"model": "cauchit"}, "cauchit"),
    ({"sample_weight": np.ones(5)}, "sample_weight"),
])
def test_loglik_error_validation(kwargs, match, logistic_data):
    X, y = logistic_data
    args = {"X": X, "y": y, "coreset_indices": [0, 1], "coreset_weights": [1.0, 2.0],
            "theta": np.zeros(4)}
    args.update(kwargs)
    positional = [args.pop(k) for k in ("X", "y", "coreset_indices", "coreset_weights",
                                        "theta")]
    with pytest.raises(ValueError, match=match):
        loglik_relative_error(*positional, **args)


def test_loglik_error_single_class_labels():
    X = np.random.default_rng(0).normal(size=(20, 2))
    theta = np.array([0.5, -0.5, 0.1])
    err_pos = loglik_relative_error(X, np.ones(20), [0], [5.0], theta)
    eta = X @ theta[:2] + theta[2]
    assert err_pos == pytest.approx(_direct_error(log_expit(eta), np.ones(20), [0], [5.0]))
    err_neg = loglik_relative_error(X, np.zeros(20), [0], [5.0], theta)
    assert err_neg == pytest.approx(_direct_error(log_expit(-eta), np.ones(20), [0], [5.0]))
    with pytest.raises(ValueError, match="ambiguous"):
        loglik_relative_error(X, np.full(20, "a"), [0], [5.0], theta)


def test_public_names():
    assert set(metrics.__all__) == {"gaussian_kl", "posterior_kl", "polynomial_mmd",
                                    "loglik_relative_error", "mean_error_sd",
                                    "coreset_quality", "CoresetQuality", "exact_kl", "ExactKL",
                                    "gaussian_check", "GaussianCheck"}


# --- mean_error_sd --------------------------------------------------------------------------

def test_mean_error_sd_known_shift():
    rng = np.random.default_rng(0)
    cov = _random_spd(rng, 3)
    sd = np.sqrt(np.diag(cov))
    ref = GaussianPosterior(rng.normal(size=3), cov)
    shift = np.array([0.5, -2.5, 1.0]) * sd  # 2.5 sd in the second coordinate
    moved = GaussianPosterior(ref.mean + shift, 4.0 * cov)  # a's covariance plays no part
    assert mean_error_sd(moved, ref) == pytest.approx(2.5)
    assert mean_error_sd(ref, ref) == 0.0
    # the reference's sd sets the scale: the other direction divides by 2 sd
    assert mean_error_sd(ref, moved) == pytest.approx(1.25)


def test_mean_error_sd_accepts_what_posterior_kl_accepts(logistic_data):
    X, y = logistic_data
    est = BayesianLogisticRegression().fit(StandardScaler().fit_transform(X), y)
    pipe = make_pipeline(StandardScaler(), BayesianLogisticRegression(prior_scale=0.3)).fit(X, y)
    post = pipe[-1].posterior_
    expected = np.max(np.abs(post.mean - est.posterior_.mean) / est.posterior_.std)
    assert expected > 0.05
    assert mean_error_sd(pipe, est) == pytest.approx(expected)
    assert mean_error_sd(post, est.posterior_) == pytest.approx(expected)
    samples = SimpleNamespace(mean=post.mean, cov=post.cov)  # e.g. MCMC moments
    assert mean_error_sd(samples, est) == pytest.approx(expected)


def test_mean_error_sd_errors(logistic_data):
    X, y = logistic_data
    fitted = BayesianLogisticRegression().fit(X, y)
    with pytest.raises(NotFittedError):
        mean_error_sd(BayesianLogisticRegression(), fitted)
    with pytest.raises(ValueError, match="different lengths"):
        mean_error_sd(fitted, BayesianLogisticRegression(fit_intercept=False).fit(X, y))
    with pytest.raises(TypeError, match="no posterior_"):
        mean_error_sd(fitted, LogisticRegression().fit(X, y))


# --- coreset_quality ------------------------------------------------------------------------

def _given_coreset(indices, weights, **params):
    """A constructor whose coreset is the given rows with the given weights (times the
    incoming sample weights): a coreset of known error."""

    class Given(BaseCoreset):
        def _build(self, X, y, sample_weight, family, prior_prec, rng):
            return np.asarray(indices), np.asarray(weights) * sample_weight[indices]

    return Given(**params)


def _prior(prior_prec):
    return GaussianPosterior(np.zeros(len(prior_prec)), np.diag(1.0 / prior_prec))


def test_coreset_quality_gaussian_model_exact():
    """The Gaussian model's posterior is Gaussian: the Laplace fits are exact, and so is the
    KL against the closed-form conjugate posteriors."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.3 + 0.7 * rng.normal(size=400)
    v = rng.uniform(0.5, 2.0, size=400)  # weights of the full data
    params = dict(model=GaussianFamily(noise_scale=0.7), prior_scale=2.0,
                  intercept_prior_scale=3.0)
    coreset = UniformCoreset(M=40, random_state=0, **params).fit(X, y, sample_weight=v)
    quality = coreset_quality(coreset, X, y, sample_weight=v)
    assert isinstance(quality, CoresetQuality)

    prior_prec = np.array([0.25, 0.25, 0.25, 1 / 9])
    idx, w = coreset.sample_indices_, coreset.sample_weight_
    m_full, S_full, _ = conjugate_linear_regression(X, y, v, 0.7, prior_prec)
    m_core, S_core, _ = conjugate_linear_regression(X[idx], y[idx], w, 0.7, prior_prec)
    kl = gaussian_kl_closed_form(m_core, S_core, m_full, S_full)
    assert kl > 1.0
    assert quality.kl == pytest.approx(kl, rel=1e-8)
    assert quality.max_mean_error_sd == pytest.approx(
        np.max(np.abs(m_core - m_full) / np.sqrt(np.diag(S_full))), rel=1e-8)
    assert quality.size == 40
    prior_kl = gaussian_kl_closed_form(np.zeros(4), np.diag(1 / prior_prec), m_full, S_full)
    assert quality.relative_kl == pytest.approx(kl / prior_kl, rel=1e-8)
    np.testing.assert_allclose(quality.full_posterior.mean, m_full, rtol=1e-10)
    np.testing.assert_allclose(quality.full_posterior.cov, S_full, rtol=1e-10)


def test_coreset_quality_known_mean_shift():
    """Gaussian model, x = 1 and no intercept: theta is a mean. The rows with y = a, half of
    them, with weight 2 give the full posterior's precision and a mean shifted by
    N (a - b) / (2 sqrt(N + 1/tau^2)) full-posterior sd: k sd, and KL = k^2 / 2 nats."""
    n, tau, k = 1000, 10.0, 3.0
    prec = n + tau**-2
    gap = 2 * k * np.sqrt(prec) / n
    X = np.ones((n, 1))
    y = np.where(np.arange(n) % 2 == 0, 1.0 + gap, 1.0)
    coreset = _given_coreset(np.arange(0, n, 2), np.full(n // 2, 2.0), model="gaussian",
                             prior_scale=tau, fit_intercept=False).fit(X, y)
    quality = coreset_quality(coreset, X, y)
    assert quality.max_mean_error_sd == pytest.approx(k, rel=1e-9)
    assert quality.kl == pytest.approx(k**2 / 2, rel=1e-9)
    assert quality.size == n // 2
    full_mean = (1.0 + gap / 2) * n / prec
    prior_kl = 0.5 * (tau**2 * prec + full_mean**2 * prec - 1 - np.log(tau**2 * prec))
    assert quality.relative_kl == pytest.approx(k**2 / 2 / prior_kl, rel=1e-9)


@pytest.mark.parametrize("model, kwargs", [
    ("logistic", {}),
    (PoissonFamily("softplus"), dict(prior_scale=0.5, intercept_prior_scale=2.0)),
    ("poisson", dict(fit_intercept=False)),
])
def test_coreset_quality_full_data_coreset_is_exact(model, kwargs):
    if model == "logistic":
        X, y = make_logistic_regression(600, coef=[1.0, -1.0, 0.5], random_state=0)
    else:
        X, y = make_poisson_regression(600, coef=[0.5, -0.3], intercept=0.5, random_state=0)
    v = np.random.default_rng(0).uniform(0.5, 2.0, size=600)
    coreset = UniformCoreset(M=600, model=model, **kwargs).fit(X, y, sample_weight=v)
    quality = coreset_quality(coreset, X, y, sample_weight=v)
    assert quality.size == 600
    assert abs(quality.kl) < 1e-9
    assert quality.max_mean_error_sd < 1e-5
    assert abs(quality.relative_kl) < 1e-9


def test_coreset_quality_uses_the_constructors_likelihood():
    """Same numbers as the estimators with the constructor's link and prior fitted on the
    coreset and on the full data (a different link or prior would change them)."""
    X, y = make_poisson_regression(2000, coef=[0.5, -0.3, 0.2], intercept=0.5, random_state=0)
    params = dict(link="softplus", prior_scale=0.5, intercept_prior_scale=2.0)
    coreset = UniformCoreset(M=60, random_state=0, model=PoissonFamily("softplus"),
                             prior_scale=0.5, intercept_prior_scale=2.0).fit(X, y)
    quality = coreset_quality(coreset, X, y)
    idx = coreset.sample_indices_
    on_core = BayesianPoissonRegression(**params).fit(X[idx], y[idx],
                                                      sample_weight=coreset.sample_weight_)
    on_full = BayesianPoissonRegression(**params).fit(X, y)
    assert quality.kl > 0.1
    assert quality.kl == pytest.approx(posterior_kl(on_core, on_full), rel=1e-5)
    assert quality.max_mean_error_sd == pytest.approx(mean_error_sd(on_core, on_full),
                                                      rel=1e-5)
    other = BayesianPoissonRegression(link="log", prior_scale=0.5, intercept_prior_scale=2.0)
    assert posterior_kl(on_full, other.fit(X, y)) > 1e-3  # the link matters
    # a meta-constructor's likelihood is its base constructor's
    stream = StreamingCoreset(GIGACoreset(M=60, projection_dim=100, **params),
                              block_size=500, random_state=0).fit(X, y)
    streamed = coreset_quality(stream, X, y, full_posterior=quality.full_posterior)
    assert streamed.kl == pytest.approx(coreset_quality(stream, X, y).kl, rel=1e-8)


def test_coreset_quality_full_posterior_reused(logistic_data):
    X, y = logistic_data
    coreset = UniformCoreset(M=50, random_state=0).fit(X, y)
    first = coreset_quality(coreset, X, y)
    again = coreset_quality(coreset, X, y, full_posterior=first.full_posterior)
    assert again == first
    # a fitted estimator with the same prior gives the same full posterior
    est = BayesianLogisticRegression().fit(X, y)
    assert coreset_quality(coreset, X, y, full_posterior=est).kl == pytest.approx(
        first.kl, rel=1e-6)
    # the nats are what the ratio is made of
    assert first.relative_kl == pytest.approx(
        first.kl / _prior(np.array([1, 1, 1, 0.01])).kl(first.full_posterior))
    assert first.max_mean_error_sd > 0.1 and first.kl > 0.1


def test_coreset_quality_labels_encoded_as_at_fit():
    """String labels: the positive class is classes_[1], as in the constructor."""
    X, y = make_logistic_regression(500, coef=[2.0, -1.0], random_state=0)
    coreset = UniformCoreset(M=100, random_state=0).fit(X, y)
    named = np.where(y == 1, "yes", "no")
    named_coreset = UniformCoreset(M=100, random_state=0).fit(X, named)
    np.testing.assert_array_equal(coreset.sample_indices_, named_coreset.sample_indices_)
    assert coreset_quality(named_coreset, X, named)[:4] == pytest.approx(
        coreset_quality(coreset, X, y)[:4])


def test_coreset_quality_errors(logistic_data):
    X, y = logistic_data
    coreset = UniformCoreset(M=50, random_state=0).fit(X, y)
    with pytest.raises(NotFittedError):
        coreset_quality(UniformCoreset(M=50), X, y)
    with pytest.raises(TypeError, match="coreset constructor"):
        coreset_quality(BayesianLogisticRegression().fit(X, y), X, y)
    with pytest.raises(TypeError, match="coreset constructor"):
        coreset_quality((coreset.sample_indices_, coreset.sample_weight_), X, y)
    with pytest.raises(ValueError, match="features"):
        coreset_quality(coreset, X[:, :2], y)
    with pytest.raises(ValueError, match="not the data the coreset was fitted on"):
        coreset_quality(coreset, X[:-1], y[:-1])
    with pytest.raises(ValueError, match="not the data the coreset was fitted on"):
        coreset_quality(coreset, X[::-1], y[::-1])
    with pytest.raises(ValueError, match="y has 299 entries but X has 300 rows"):
        coreset_quality(coreset, X, y[:-1])
    with pytest.raises(ValueError, match="not fitted on"):
        coreset_quality(coreset, X, np.where(y == 1, 2, 0))
    with pytest.raises(ValueError, match="sample_weight has 10 entries"):
        coreset_quality(coreset, X, y, sample_weight=np.ones(10))
    with pytest.raises(ValueError, match="5 parameters"):
        coreset_quality(coreset, X, y, full_posterior=GaussianPosterior(np.zeros(5),
                                                                        np.eye(5)))
    with pytest.raises(TypeError, match="full_posterior"):
        coreset_quality(coreset, X, y, full_posterior=np.zeros(4))
    counts = np.arange(300) % 4
    poisson = UniformCoreset(M=50, model="poisson", random_state=0).fit(X, counts)
    with pytest.raises(ValueError, match="negative"):
        coreset_quality(poisson, X, -counts)
