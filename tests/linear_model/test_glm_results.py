"""The log-likelihood, deviance, AIC, BIC and residuals of a fit against statsmodels' GLM
results under a wide prior (where the posterior mean is the maximum-likelihood
estimate)."""

import numpy as np
import pytest

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, BayesianProbitRegression)

sm = pytest.importorskip("statsmodels.api")

_FLAT = dict(prior_scale=1e4, intercept_prior_scale=1e4)


def _rows(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, X @ [0.5, -0.3, 0.2] + 0.3, rng


def _design(X):
    return sm.add_constant(X, prepend=False)


def _check(est, glm, X, y, n_params, **rows):
    np.testing.assert_allclose(est.loglik_, glm.llf, rtol=1e-8)
    np.testing.assert_allclose(est.deviance_, glm.deviance, rtol=1e-7)
    np.testing.assert_allclose(est.aic_, -2 * glm.llf + 2 * n_params, rtol=1e-8)
    np.testing.assert_allclose(est.bic_, -2 * glm.llf + np.log(len(y)) * n_params, rtol=1e-8)
    for kind, expected in (("response", glm.resid_response), ("pearson", glm.resid_pearson),
                           ("deviance", glm.resid_deviance)):
        np.testing.assert_allclose(est.residuals(X, y, kind=kind, **rows), expected,
                                   rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(np.sum(est.residuals(X, y, **rows) ** 2), est.deviance_,
                               rtol=1e-10)


def test_poisson_statistics_and_residuals_are_statsmodels():
    X, eta, rng = _rows()
    y = rng.poisson(np.exp(eta)).astype(float)
    reg = BayesianPoissonRegression(**_FLAT).fit(X, y)
    glm = sm.GLM(y, _design(X), family=sm.families.Poisson()).fit()
    assert glm.aic == pytest.approx(-2 * glm.llf + 8)  # its AIC counts the 4 parameters
    _check(reg, glm, X, y, n_params=4)


def test_poisson_over_an_exposure_is_statsmodels():
    X, eta, rng = _rows()
    e = rng.uniform(0.2, 5.0, len(X))
    y = rng.poisson(e * np.exp(eta)).astype(float)
    reg = BayesianPoissonRegression(**_FLAT).fit(X, y, exposure=e)
    glm = sm.GLM(y, _design(X), family=sm.families.Poisson(), exposure=e).fit()
    _check(reg, glm, X, y, n_params=4, exposure=e)
    by_offset = BayesianPoissonRegression(**_FLAT).fit(X, y, offset=np.log(e))
    np.testing.assert_allclose(by_offset.residuals(X, y, offset=np.log(e)),
                               glm.resid_deviance, rtol=1e-5, atol=1e-8)


def test_negative_binomial_is_statsmodels_given_alpha():
    """statsmodels' GLM with the estimated alpha fixed; the AIC counts alpha too, as
    statsmodels' NegativeBinomial model does."""
    X, eta, rng = _rows()
    e = rng.uniform(0.2, 5.0, len(X))
    mu = e * np.exp(eta)
    y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu)).astype(float)
    reg = BayesianNegativeBinomialRegression(**_FLAT).fit(X, y, exposure=e)
    glm = sm.GLM(y, _design(X), family=sm.families.NegativeBinomial(alpha=reg.alpha_),
                 exposure=e).fit(method="newton")
    _check(reg, glm, X, y, n_params=5, exposure=e)
    nb = sm.NegativeBinomial(y, _design(X), exposure=e).fit(disp=0, method="newton")
    np.testing.assert_allclose(reg.aic_, nb.aic, rtol=1e-8)
    np.testing.assert_allclose(reg.bic_, nb.bic, rtol=1e-8)


@pytest.mark.parametrize("cls, link", [(BayesianLogisticRegression, "Logit"),
                                       (BayesianProbitRegression, "Probit")])
def test_binary_statistics_and_residuals_are_statsmodels(cls, link):
    X, eta, rng = _rows()
    labels = np.where(rng.random(len(X)) < 1 / (1 + np.exp(-eta)), "yes", "no")
    clf = cls(**_FLAT).fit(X, labels)
    family = sm.families.Binomial(link=getattr(sm.families.links, link)())
    glm = sm.GLM((labels == "yes").astype(float), _design(X), family=family).fit()
    _check(clf, glm, X, labels, n_params=4)


def test_weights_count_rows_as_repeated():
    X, eta, rng = _rows(n=400)
    y = rng.poisson(np.exp(eta)).astype(float)
    w = rng.integers(1, 4, len(y)).astype(float)
    reg = BayesianPoissonRegression(**_FLAT).fit(X, y, sample_weight=w)
    rep = np.repeat(np.arange(len(y)), w.astype(int))
    full = BayesianPoissonRegression(**_FLAT).fit(X[rep], y[rep])
    for name in ("loglik_", "deviance_", "aic_", "bic_"):
        np.testing.assert_allclose(getattr(reg, name), getattr(full, name), rtol=1e-9)


def test_dask_statistics_are_those_in_memory():
    da = pytest.importorskip("dask.array")
    X, eta, rng = _rows(n=1000)
    y = rng.poisson(np.exp(eta)).astype(float)
    reg = BayesianPoissonRegression().fit(X, y)
    lazy = BayesianPoissonRegression().fit(da.from_array(X, chunks=(300, 3)),
                                           da.from_array(y, chunks=300))
    for name in ("loglik_", "deviance_", "aic_", "bic_"):
        np.testing.assert_allclose(getattr(lazy, name), getattr(reg, name), rtol=1e-8)


def test_a_stream_has_no_statistics_and_bad_kinds_are_refused():
    X, eta, rng = _rows(n=300)
    y = rng.poisson(np.exp(eta)).astype(float)
    reg = BayesianPoissonRegression(method="pass_glm").fit(X, y)
    assert hasattr(reg, "deviance_")
    reg.partial_fit(X, y)
    assert not hasattr(reg, "deviance_") and not hasattr(reg, "loglik_")
    with pytest.raises(ValueError, match="kind must be one of"):
        reg.residuals(X, y, kind="working")
