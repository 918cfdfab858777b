"""A coreset is built under the model that is fitted on it: in a Pipeline with
``model="auto"`` the final estimator's family, link and prior; an explicit model that
disagrees warns, naming both."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, QuasiNewtonCoreset, UniformCoreset)
from skcoreset.exceptions import ModelMismatchWarning
from skcoreset.metrics import coreset_quality, mean_error_sd, posterior_kl
from skcoreset.pipeline import Pipeline


def _overdispersed_counts(n=20_000, alpha=1.3, seed=0):
    """Counts with ``Var = mu + alpha mu^2``, like the RAND HIE doctor visits (mean 3,
    alpha about 1.3)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    mu = np.exp(0.9 + X @ np.array([0.3, -0.2, 0.1, 0.25, 0.0, -0.15]))
    return X, rng.negative_binomial(1 / alpha, 1 / (1 + alpha * mu)).astype(float)


@pytest.fixture(scope="module")
def counts():
    return _overdispersed_counts()


def test_auto_takes_the_final_negative_binomial_model(counts):
    X, y = counts
    coreset = QuasiNewtonCoreset(random_state=0)
    params = coreset.get_params()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelMismatchWarning)
        pipe = Pipeline([("coreset", coreset),
                         ("reg", BayesianNegativeBinomialRegression())]).fit(X, y)
    assert coreset.get_params() == params  # the user's parameters are left alone
    assert coreset.model_ == "negative_binomial"
    full = BayesianNegativeBinomialRegression().fit(X, y)
    reg = pipe.named_steps["reg"]
    # under the Poisson model the same pipeline is several nats off (its weights match
    # the Poisson gradient and curvature, not the negative binomial's)
    assert posterior_kl(reg, full) < 0.1
    assert mean_error_sd(reg, full) < 0.15
    # a plain fit still reads counts as Poisson, and is far off
    poisson = clone(coreset).fit(X, y)
    assert poisson.model_ == "poisson"
    wrong = BayesianNegativeBinomialRegression().fit(
        X[poisson.sample_indices_], y[poisson.sample_indices_],
        sample_weight=poisson.sample_weight_)
    assert posterior_kl(wrong, full) > 1.0


def test_auto_takes_link_and_prior_of_the_final_estimator():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 3))
    y = rng.poisson(np.log1p(np.exp(1.0 + X @ [0.5, -0.5, 0.2]))).astype(float)
    coreset = UniformCoreset(M=300, random_state=0)
    final = BayesianPoissonRegression(link="softplus", prior_scale=0.3,
                                      intercept_prior_scale=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelMismatchWarning)
        Pipeline([("coreset", coreset), ("reg", final)]).fit(X, y)
    assert coreset.family_.link.name == "softplus"
    assert (coreset.prior_scale_, coreset.intercept_prior_scale_) == (0.3, 2.0)
    assert (coreset.prior_scale, coreset.intercept_prior_scale) == (1.0, 10.0)
    # coreset_quality judges it under the prior it was built for: the same KL as the
    # estimators' Laplace fits under that prior
    quality = coreset_quality(coreset, X, y)
    core = clone(final).fit(X[coreset.sample_indices_], y[coreset.sample_indices_],
                            sample_weight=coreset.sample_weight_)
    assert quality.kl == pytest.approx(posterior_kl(core, clone(final).fit(X, y)), rel=1e-5)


def test_explicit_model_that_disagrees_warns_naming_both(counts):
    X, y = counts
    coreset = QuasiNewtonCoreset(M=300, model="poisson", random_state=0)
    with pytest.warns(ModelMismatchWarning,
                      match=r"QuasiNewtonCoreset is built under the poisson model, but "
                            r"BayesianNegativeBinomialRegression fits the negative_binomial"):
        Pipeline([("coreset", coreset), ("reg", BayesianNegativeBinomialRegression())]).fit(
            X, y)
    assert coreset.model_ == "poisson"  # an explicit model is kept


def test_explicit_prior_that_disagrees_warns(counts):
    X, y = counts
    y = (y > 2).astype(int)
    with pytest.warns(ModelMismatchWarning, match=r"UniformCoreset\(prior_scale=5.0\) is ignored"):
        Pipeline([("coreset", UniformCoreset(M=500, prior_scale=5.0, random_state=0)),
                  ("clf", BayesianLogisticRegression())]).fit(X, y)
    with pytest.warns(ModelMismatchWarning, match=r"fit_intercept=True, but "
                                                  r"BayesianLogisticRegression fits with "
                                                  r"fit_intercept=False"):
        Pipeline([("coreset", UniformCoreset(M=500, random_state=0)),
                  ("clf", BayesianLogisticRegression(fit_intercept=False))]).fit(X, y)


def test_agreeing_explicit_model_is_silent(counts):
    X, y = counts
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelMismatchWarning)
        Pipeline([("coreset", UniformCoreset(M=500, model="negative_binomial",
                                             random_state=0)),
                  ("reg", BayesianNegativeBinomialRegression())]).fit(X, y)
