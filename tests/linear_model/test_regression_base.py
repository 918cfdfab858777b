"""The regressor base: a regressor of a non-count family (Gaussian, with a known noise scale)
derives from it without exposures, and its posterior is the conjugate closed form."""

import inspect

import numpy as np
import pytest

from skcoreset import BayesianNegativeBinomialRegression, BayesianPoissonRegression
from skcoreset.families import GaussianFamily
from skcoreset.linear_model._docs import COMMON_ATTRS_DOC
from skcoreset.linear_model._methods import ESTIMATORS, estimator_params, glm_estimator
from skcoreset.linear_model._regression import _BaseRegression

NOISE = 0.7


@pytest.fixture
def gaussian_regression():
    @glm_estimator(GaussianFamily(noise_scale=NOISE), COMMON_ATTRS_DOC)
    class BayesianGaussianRegression(_BaseRegression):
        """Bayesian linear regression with a known noise scale.

        Parameters
        ----------
        {common_params}
        Attributes
        ----------
        {common_attrs}
        """

        def __init__(self, **params):
            for name, param in estimator_params(type(self)).items():
                setattr(self, name, params.get(name, param.default))

        def get_params(self, deep=True):
            return {name: getattr(self, name) for name in estimator_params(type(self))}

        def _family(self):
            return GaussianFamily(noise_scale=NOISE)

    try:
        yield BayesianGaussianRegression
    finally:
        ESTIMATORS.pop(BayesianGaussianRegression)


def test_a_gaussian_regressor_is_the_conjugate_posterior(gaussian_regression):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.3 + NOISE * rng.normal(size=300)
    w = rng.uniform(0.5, 2.0, size=300)
    est = gaussian_regression(prior_scale=2.0, intercept_prior_scale=5.0).fit(X, y, w)
    # N(0, diag(4, 4, 4, 25)) prior, Gaussian likelihood of weighted rows: closed form
    A = np.column_stack([X, np.ones(300)])
    precision = (A.T * w) @ A / NOISE**2 + np.diag([1 / 4] * 3 + [1 / 25])
    cov = np.linalg.inv(precision)
    mean = cov @ (A.T @ (w * y)) / NOISE**2
    np.testing.assert_allclose(est.posterior_.mean, mean, rtol=1e-9)
    np.testing.assert_allclose(est.posterior_.cov, cov, rtol=1e-9)
    assert est.coef_.shape == (3,) and np.isclose(est.intercept_, mean[-1])
    # predictions: the mean at x, and the noise plus the posterior variance of x . theta
    pred, std = est.predict(X[:5], return_std=True)
    np.testing.assert_allclose(pred, A[:5] @ mean, rtol=1e-9)
    latent_var = np.einsum("ij,jk,ik->i", A[:5], cov, A[:5])
    np.testing.assert_allclose(std, np.sqrt(NOISE**2 + latent_var), rtol=1e-9)
    assert est.score(X, y) > 0.9
    assert est.sample_y(X[:4], n_draws=7, random_state=0).shape == (7, 4)
    # no count semantics: no exposure or offset anywhere
    for method in ("fit", "predict", "score", "sample_y", "to_arviz"):
        assert "exposure" not in inspect.signature(getattr(est, method)).parameters
    assert not est.__sklearn_tags__().target_tags.positive_only


def test_the_count_regressions_derive_from_the_regressor_base():
    for cls in (BayesianPoissonRegression, BayesianNegativeBinomialRegression):
        assert issubclass(cls, _BaseRegression)
        assert "exposure" in inspect.signature(cls.fit).parameters
        assert cls().__sklearn_tags__().target_tags.positive_only
