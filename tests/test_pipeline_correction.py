"""The exact correction of a pipeline's posterior (Pipeline(exact_correction=True))."""

import warnings

import numpy as np
import pytest
from scipy.special import log_expit
from sklearn.base import clone

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       UniformCoreset)
from skcoreset.datasets import make_logistic_regression
from skcoreset.exceptions import CoresetAccuracyWarning, ImportanceSamplingWarning
from skcoreset.metrics import _exact
from skcoreset.pipeline import Pipeline

PRIOR_SCALE = 5.0


@pytest.fixture(scope="module")
def data():
    return make_logistic_regression(1000, coef=[1.5, -1.0], random_state=0)


@pytest.fixture(scope="module")
def grid_moments(data):
    """Mean and sd of the exact posterior of the two coefficients by a 201 x 201 grid (its
    mass at the edges is negligible)."""
    X, y = data
    a, b = np.meshgrid(np.linspace(0, 3.5, 201), np.linspace(-3, 0.5, 201), indexing="ij")
    theta = np.column_stack([a.ravel(), b.ravel()])
    log_post = (log_expit((2 * y - 1)[:, None] * (X @ theta.T)).sum(axis=0)
                - 0.5 * (theta**2).sum(axis=1) / PRIOR_SCALE**2)
    weights = np.exp(log_post - log_post.max())
    weights /= weights.sum()
    mean = weights @ theta
    return mean, np.sqrt(weights @ (theta - mean) ** 2)


def _pipeline(M, correction=True):
    # a uniform coreset of 300 of 1,000 rows: its posterior is 0.6-0.8 sd off, and close
    # enough to the exact one for its draws to be a good proposal
    return Pipeline([("coreset", UniformCoreset(M=M, fit_intercept=False, random_state=1)),
                     ("clf", BayesianLogisticRegression(method="mcmc", fit_intercept=False,
                                                        prior_scale=PRIOR_SCALE,
                                                        random_state=0))],
                    exact_correction=correction)


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    return _pipeline(300).fit(X, y), _pipeline(300, correction=False).fit(X, y)


def test_corrected_posterior_matches_grid(fitted, grid_moments):
    corrected, uncorrected = fitted
    mean, sd = grid_moments
    error = np.abs(corrected[-1].posterior_.mean - mean) / sd
    raw_error = np.abs(uncorrected[-1].posterior_.mean - mean) / sd
    assert np.max(raw_error) > 0.4  # the case needs correcting
    assert np.max(error) < 0.08
    np.testing.assert_allclose(np.sqrt(np.diag(corrected[-1].posterior_.cov)), sd, rtol=0.06)
    np.testing.assert_allclose(corrected[-1].coef_.ravel(), corrected[-1].posterior_.mean)
    assert 0 <= corrected.pareto_k_ <= 0.7 and corrected.exact_corrected_
    assert 50 < corrected.importance_ess_ <= len(corrected[-1].posterior_samples_)
    assert corrected.kl_before_ > 0.3  # 0.6-0.8 sd off in two parameters
    assert not hasattr(uncorrected, "pareto_k_")


def test_predictions_use_corrected_draws(data, fitted):
    X, _ = data
    corrected, uncorrected = fitted
    draws = corrected[-1].posterior_samples_
    expected = np.mean(np.exp(log_expit(X[:5] @ draws.T)), axis=1)
    np.testing.assert_allclose(corrected.predict_proba(X[:5])[:, 1], expected, rtol=1e-10)
    assert not np.allclose(uncorrected.predict_proba(X[:5]), corrected.predict_proba(X[:5]))
    lower, upper = corrected[-1].credible_interval(0.9)
    np.testing.assert_allclose(lower, np.quantile(draws, 0.05, axis=0), rtol=1e-6)
    np.testing.assert_allclose(upper, np.quantile(draws, 0.95, axis=0), rtol=1e-6)
    assert corrected[-1].sample_y(X[:5], n_draws=3, random_state=0).shape[-1] in (3, 5)
    assert corrected.predict(X[:5]).shape == (5,)


def test_far_posterior_warns_and_is_kept(data):
    X, y = data
    pipe = _pipeline(8)
    with pytest.warns(ImportanceSamplingWarning, match="k-hat .* > 0.7.*larger coreset"):
        with pytest.warns(CoresetAccuracyWarning):
            pipe.fit(X, y)
    plain = _pipeline(8, correction=False)
    with pytest.warns(CoresetAccuracyWarning):
        plain.fit(X, y)
    assert pipe.pareto_k_ > 0.7 and not pipe.exact_corrected_
    np.testing.assert_array_equal(pipe[-1].posterior_samples_, plain[-1].posterior_samples_)


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_bad_option_refused(data, value):
    X, y = data
    pipe = _pipeline(300, correction=value)
    with pytest.raises(ValueError, match="exact_correction must be True, False or 'auto'"):
        pipe.fit(X, y)
    assert not hasattr(pipe[-1], "posterior_")


def test_clone_and_params():
    pipe = _pipeline(300)
    assert pipe.get_params()["exact_correction"] is True
    copy = clone(pipe)
    assert copy.exact_correction is True
    assert copy.set_params(exact_correction=False).exact_correction is False
    assert "exact_correction=True" in repr(pipe)


def test_gaussian_method_is_corrected(data, grid_moments):
    X, y = data
    mean, sd = grid_moments
    pipe = Pipeline([("coreset", UniformCoreset(M=300, fit_intercept=False, random_state=1)),
                     ("clf", BayesianLogisticRegression(fit_intercept=False,
                                                        prior_scale=PRIOR_SCALE,
                                                        random_state=0))],
                    exact_correction=True).fit(X, y)
    assert pipe.exact_corrected_
    assert np.max(np.abs(pipe[-1].posterior_.mean - mean) / sd) < 0.1


def test_negative_binomial_resamples_alpha_with_theta():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    mu = np.exp(0.5 + X @ [0.4, -0.3])
    y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu))

    def route(correction):
        return Pipeline([("coreset", UniformCoreset(M=200, random_state=0)),
                         ("reg", BayesianNegativeBinomialRegression(method="mcmc", n_draws=1000,
                                                                    random_state=0))],
                        exact_correction=correction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoresetAccuracyWarning)
        corrected, raw = route(True).fit(X, y), route(False).fit(X, y)
    assert corrected.exact_corrected_
    reg, raw_reg = corrected[-1], raw[-1]
    # each corrected draw is one joint draw (theta, alpha) of the uncorrected run
    joint = np.column_stack([reg.posterior_samples_, reg.alpha_samples_])
    raw_joint = np.column_stack([raw_reg.posterior_samples_, raw_reg.alpha_samples_])
    same = np.isclose(joint[:, None, :], raw_joint[None], rtol=1e-12, atol=0)
    assert np.all(same.all(axis=2).any(axis=1))
    assert reg.alpha_ == pytest.approx(np.mean(reg.alpha_samples_))
    assert reg.family_.alpha == pytest.approx(reg.alpha_)


def test_thinned_correction_keeps_the_estimate(data, grid_moments, fitted, monkeypatch):
    """Weighting 1,000 evenly thinned draws of the run (what the correction does at a
    million rows) instead of all of them: the same k-hat, ESS per draw and divergence within
    their noise, and the corrected moments within their Monte Carlo error of the grid's."""
    X, y = data
    mean, sd = grid_moments
    full = fitted[0]
    monkeypatch.setattr(_exact, "_CORRECTION_BUDGET", 1000 * len(y))
    thinned = _pipeline(300).fit(X, y)
    n_full = len(full[-1].posterior_samples_)
    assert len(thinned[-1].posterior_samples_) == 1000 < n_full
    # k-hat and ESS of weights this uneven (ESS 15 % of the draws) are noisy themselves
    assert abs(thinned.pareto_k_ - full.pareto_k_) < 0.2 and thinned.exact_corrected_
    assert thinned.importance_ess_ / 1000 == pytest.approx(full.importance_ess_ / n_full,
                                                           rel=0.3)
    assert thinned.kl_before_ == pytest.approx(full.kl_before_, rel=0.15)
    error = np.abs(thinned[-1].posterior_.mean - mean) / sd
    assert np.max(error) < 3.5 / np.sqrt(thinned.importance_ess_)
    np.testing.assert_allclose(np.sqrt(np.diag(thinned[-1].posterior_.cov)), sd, rtol=0.1)


def test_auto_corrects_a_sampled_coreset_posterior_only(data):
    """The default: a coreset step followed by MCMC is corrected; a Gaussian posterior on a
    coreset, and MCMC without a coreset step, are not."""
    X, y = data
    assert Pipeline([("clf", BayesianLogisticRegression())]).exact_correction == "auto"
    sampled = _pipeline(300, correction="auto").fit(X, y)
    assert sampled.exact_corrected_ and len(sampled[-1].posterior_samples_) > 0
    gaussian = Pipeline([("coreset", UniformCoreset(M=300, fit_intercept=False,
                                                    random_state=1)),
                         ("clf", BayesianLogisticRegression(fit_intercept=False))]).fit(X, y)
    alone = Pipeline([("clf", BayesianLogisticRegression(method="mcmc", n_draws=200,
                                                         random_state=0))]).fit(X[:200], y[:200])
    for pipe in (gaussian, alone):
        assert not hasattr(pipe, "pareto_k_") and not hasattr(pipe, "exact_corrected_")
    assert not hasattr(gaussian[-1], "posterior_samples_")


def test_auto_leaves_binomial_cells_uncorrected():
    # the correction does not support n_trials: "auto" skips it, True refuses it
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    n = rng.integers(1, 6, 300)
    k = rng.binomial(n, 1 / (1 + np.exp(-X @ [1.0, -0.5])))

    def route(correction):
        return Pipeline([("coreset", UniformCoreset(M=150, random_state=0)),
                         ("clf", BayesianLogisticRegression(method="mcmc", n_draws=200,
                                                            random_state=0))],
                        exact_correction=correction)

    pipe = route("auto").fit(X, k, coreset__n_trials=n)
    assert not hasattr(pipe, "exact_corrected_")
    with pytest.raises(ValueError, match="not supported with n_trials"):
        route(True).fit(X, k, coreset__n_trials=n)


def test_binary_offsets_are_corrected_to_the_all_rows_posterior():
    # cloglog with log(time at risk) as offset; statsmodels' MLE (a wide prior) as reference
    sm = pytest.importorskip("statsmodels.api")
    from skcoreset import BayesianBinaryRegression, QuasiNewtonCoreset

    rng = np.random.default_rng(5)
    X, offset = rng.normal(size=(3000, 2)), rng.uniform(-3.0, 1.0, 3000)
    y = (rng.random(3000) < -np.expm1(-np.exp(-1.0 + X @ [0.6, -0.4] + offset))).astype(int)
    pipe = Pipeline([("coreset", QuasiNewtonCoreset(M=100, random_state=1)),
                     ("clf", BayesianBinaryRegression(link="cloglog", prior_scale=1e3,
                                                      intercept_prior_scale=1e3,
                                                      random_state=0))],
                    exact_correction=True).fit(X, y, coreset__offset=offset)
    assert pipe.exact_corrected_
    ref = sm.GLM(y, sm.add_constant(X, prepend=False), offset=offset,
                 family=sm.families.Binomial(link=sm.families.links.CLogLog())).fit()
    assert np.max(np.abs(pipe[-1].posterior_.mean - ref.params) / ref.bse) < 0.2
