"""Standard errors of the predicted mean against statsmodels' ``get_prediction``
(``mean_se``, the delta method) under a wide prior, and the two standard deviations of
``predict(return_std=...)``."""

import numpy as np
import pytest

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression)

sm = pytest.importorskip("statsmodels.api")

_FLAT = dict(prior_scale=1e3, intercept_prior_scale=1e3)


def _data(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    eta = X @ [0.5, -0.3, 0.2] + 0.5
    return X, eta, rng


def _mean_se(glm_results, X):
    frame = glm_results.get_prediction(sm.add_constant(X, prepend=False)).summary_frame()
    return frame["mean"].to_numpy(), frame["mean_se"].to_numpy()


def _check_log_link(reg, glm, X):
    """The mean and its sd: exactly those of the log-normal ``exp(eta)`` for statsmodels'
    linear predictor and its variance (its posterior under a wide prior), and statsmodels'
    delta-method ``mean_se`` to first order in that variance."""
    linear = glm.get_prediction(sm.add_constant(X, prepend=False), which="linear")
    m, v = linear.predicted, linear.var_pred
    pred, sd = reg.predict(X, return_std="mean")
    np.testing.assert_allclose(pred, np.exp(m + v / 2), rtol=1e-6)
    np.testing.assert_allclose(sd, np.exp(m + v / 2) * np.sqrt(np.expm1(v)), rtol=1e-6)
    mean, se = _mean_se(glm, X)
    np.testing.assert_allclose(sd, se, rtol=2 * v.max())
    return pred, sd


def test_poisson_mean_sd_is_statsmodels_mean_se():
    X, eta, rng = _data()
    y = rng.poisson(np.exp(eta))
    reg = BayesianPoissonRegression(**_FLAT).fit(X, y)
    glm = sm.GLM(y, sm.add_constant(X, prepend=False), family=sm.families.Poisson()).fit()
    pred, sd = _check_log_link(reg, glm, X[:50])
    # the predictive sd adds the Poisson noise: sqrt(E[mu] + Var[mu])
    _, predictive = reg.predict(X[:50], return_std="predictive")
    np.testing.assert_allclose(predictive, np.sqrt(pred + sd**2), rtol=1e-12)
    np.testing.assert_array_equal(reg.predict(X[:50], return_std=True)[1], predictive)


def test_poisson_mean_sd_with_exposure_scales_by_it():
    X, eta, rng = _data(n=2000)
    e = rng.uniform(0.5, 3.0, len(X))
    y = rng.poisson(e * np.exp(eta))
    reg = BayesianPoissonRegression(**_FLAT).fit(X, y, exposure=e)
    _, per_unit = reg.predict(X[:20], return_std="mean")
    _, over = reg.predict(X[:20], return_std="mean", exposure=e[:20])
    np.testing.assert_allclose(over, e[:20] * per_unit, rtol=1e-12)


def test_negative_binomial_mean_sd_is_statsmodels_mean_se_given_alpha():
    X, eta, rng = _data()
    mu = np.exp(eta)
    y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu))
    reg = BayesianNegativeBinomialRegression(**_FLAT).fit(X, y)
    family = sm.families.NegativeBinomial(alpha=reg.alpha_)
    # the observed information (Newton), as the Laplace precision; IRLS gives the expected
    glm = sm.GLM(y, sm.add_constant(X, prepend=False), family=family).fit(method="newton")
    pred, sd = _check_log_link(reg, glm, X[:50])
    _, predictive = reg.predict(X[:50], return_std="predictive")
    np.testing.assert_allclose(predictive**2, pred + sd**2 + reg.alpha_ * (sd**2 + pred**2),
                               rtol=1e-12)


def test_logistic_proba_sd_is_statsmodels_mean_se():
    X, eta, rng = _data()
    y = rng.random(len(X)) < 1 / (1 + np.exp(-eta))
    clf = BayesianLogisticRegression(**_FLAT).fit(X, y)
    glm = sm.GLM(y.astype(float), sm.add_constant(X, prepend=False),
                 family=sm.families.Binomial()).fit()
    mean, se = _mean_se(glm, X[:50])
    proba, sd = clf.predict_proba(X[:50], return_std=True)
    np.testing.assert_allclose(proba[:, 1], mean, rtol=2e-3)
    np.testing.assert_allclose(sd, se, rtol=5e-3)


def test_mcmc_mean_sd_is_the_sd_of_the_draws_of_the_mean():
    X, eta, rng = _data(n=300)
    y = rng.poisson(np.exp(eta))
    reg = BayesianPoissonRegression(method="mcmc", n_draws=200, random_state=0).fit(X, y)
    _, sd = reg.predict(X[:5], return_std="mean")
    draws = reg.posterior_samples_
    mu = np.exp(X[:5] @ draws[:, :-1].T + draws[:, -1])
    np.testing.assert_allclose(sd, mu.std(axis=1), rtol=1e-10)


def test_dask_mean_sd_is_in_memory():
    da = pytest.importorskip("dask.array")
    X, eta, rng = _data(n=500)
    y = rng.poisson(np.exp(eta))
    reg = BayesianPoissonRegression().fit(X, y)
    mean, sd = reg.predict(da.from_array(X, chunks=(100, 3)), return_std="mean")
    np.testing.assert_allclose(sd.compute(), reg.predict(X, return_std="mean")[1],
                               rtol=1e-12)


@pytest.mark.parametrize("bad", ["std", "Mean", 1, None, 2.0])
def test_return_std_refuses_other_values(bad):
    X, eta, rng = _data(n=100)
    reg = BayesianPoissonRegression().fit(X, rng.poisson(np.exp(eta)))
    with pytest.raises(ValueError, match="return_std must be True, False, 'predictive' or "
                                         "'mean'"):
        reg.predict(X, return_std=bad)
