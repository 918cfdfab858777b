"""Any binary link through the estimator, every fitting method and every coreset constructor:
the complementary log-log link checked against statsmodels and scipy.stats."""

import warnings

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from sklearn.base import clone

import skcoreset.coreset
from skcoreset import (BayesianBinaryRegression, BayesianLogisticRegression,
                       BayesianProbitRegression, StreamingCoreset)
from skcoreset.families import CLogLogLink, LogLink, binary_family
from skcoreset.multiclass import BayesianOneVsRestClassifier
from skcoreset.pipeline import Pipeline


def _cloglog_data(n=2000, coef=(0.8, -0.5, 0.3), intercept=-1.0, seed=0):
    """Rare-ish events, P(y = 1) = 1 - exp(-exp(x . coef + intercept)): about 30 %."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(coef))) * np.linspace(0.7, 1.5, len(coef)) + 0.2
    y = (rng.random(n) < stats.gumbel_l.cdf(X @ np.asarray(coef) + intercept)).astype(int)
    return X, y


def test_map_is_statsmodels_cloglog_binomial():
    X, y = _cloglog_data()
    model = sm.GLM(y, sm.add_constant(X), family=sm.families.Binomial(
        link=sm.families.links.CLogLog()))
    reference = model.fit(tol=1e-12)
    # the observed information (the Laplace precision; IRLS's bse use the expected one)
    information = -model.hessian(reference.params, observed=True)
    observed_sd = np.sqrt(np.diag(np.linalg.inv(information)))
    for link in ("cloglog", CLogLogLink()):
        # a weak prior: the MAP is the maximum-likelihood estimate to within 1e-5
        est = BayesianBinaryRegression(link=link, prior_scale=1e4,
                                       intercept_prior_scale=1e4).fit(X, y)
        np.testing.assert_allclose(est.intercept_, reference.params[:1], atol=1e-5)
        np.testing.assert_allclose(est.coef_[0], reference.params[1:], atol=1e-5)
        np.testing.assert_allclose(np.sqrt(np.diag(est.posterior_.cov))[[-1, 0, 1, 2]],
                                   observed_sd, rtol=1e-6)
        assert est.family_.name == "cloglog" and list(est.classes_) == [0, 1]
        assert est.summary().header["Model"] == "binary (cloglog link)"


def test_logit_and_probit_links_are_the_named_classifiers():
    X, y = _cloglog_data(n=500, seed=1)
    for link, named in (("logit", BayesianLogisticRegression),
                        ("probit", BayesianProbitRegression)):
        est = BayesianBinaryRegression(link=link).fit(X, y)
        np.testing.assert_array_equal(est.posterior_.mean, named().fit(X, y).posterior_.mean)
        assert type(est.family_) is type(named()._family())
    with pytest.raises(ValueError, match="link must be one of.*LogLink"):
        BayesianBinaryRegression(link=LogLink()).fit(X, y)
    with pytest.raises(ValueError, match="'link' parameter"):
        BayesianBinaryRegression(link="log").fit(X, y)


def test_predict_is_where_the_predictive_probability_passes_one_half():
    # cloglog's F(0) = 1 - 1/e: rows with -0.37 < eta < 0 are predicted positive
    X, y = _cloglog_data(n=3000, seed=2)
    est = BayesianBinaryRegression(link="cloglog").fit(X, y)
    proba = est.predict_proba(X)[:, 1]
    predicted = est.predict(X)
    np.testing.assert_array_equal(predicted, (proba > 0.5).astype(int))
    eta = X @ est.coef_[0] + est.intercept_[0]
    assert np.sum((eta < 0) & (predicted == 1)) > 20
    # decision_function is the log-odds of that probability: its sign is the prediction
    np.testing.assert_allclose(est.decision_function(X), np.log(proba / (1 - proba)),
                               rtol=1e-10)
    np.testing.assert_array_equal(est.decision_function(X) > 0, predicted == 1)
    # the symmetric links keep the linear predictor
    logistic = BayesianBinaryRegression().fit(X, y)
    np.testing.assert_allclose(logistic.decision_function(X),
                               X @ logistic.coef_[0] + logistic.intercept_[0])


@pytest.mark.parametrize("method, options, tolerance, sd_tolerance", [
    ("kl_proximal", {}, 0.2, 0.1),
    ("mcmc", {"n_draws": 400, "n_chains": 2, "random_state": 0}, 0.35, 0.25),
])
def test_every_method_fits_the_cloglog_posterior(method, options, tolerance, sd_tolerance):
    # within a fraction of a posterior sd of the Laplace fit on a near-Gaussian posterior
    X, y = _cloglog_data(n=1500, seed=3)
    reference = BayesianBinaryRegression(link="cloglog").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no convergence or sampler warnings either
        est = BayesianBinaryRegression(link="cloglog", method=method, **options).fit(X, y)
    sd = np.sqrt(np.diag(reference.posterior_.cov))
    assert np.max(np.abs(est.posterior_.mean - reference.posterior_.mean) / sd) < tolerance
    np.testing.assert_allclose(np.sqrt(np.diag(est.posterior_.cov)), sd, rtol=sd_tolerance)


def test_pass_glm_refuses_the_cloglog_link_clearly():
    X, y = _cloglog_data(n=200)
    with pytest.raises(ValueError, match="method='pass_glm' supports the logistic, probit.*"
                                         "not cloglog; use method= one of"):
        BayesianBinaryRegression(link="cloglog", method="pass_glm").fit(X, y)


# --- every exported coreset constructor -----------------------------------------------------

# settings that keep a constructor quick here; one not listed runs with its defaults
_QUICK = {
    "FrankWolfeCoreset": {"projection_dim": 100},
    "GIGACoreset": {"projection_dim": 100},
    "SparseVICoreset": {"M": 30, "n_draws": 30, "n_iter_opt": 10},
}
# constructors that support only the logistic model, by design (with the reason in the error)
_LOGISTIC_ONLY = {"SensitivityCoreset"}


def _constructors():
    for name in skcoreset.coreset.__all__:
        cls = getattr(skcoreset.coreset, name)
        if isinstance(cls, type) and hasattr(cls, "fit_coreset") and name != "BaseCoreset":
            yield pytest.param(cls, id=name)


def _build(cls, model):
    if cls is StreamingCoreset:
        return StreamingCoreset(skcoreset.GIGACoreset(M=100, projection_dim=100, model=model),
                                block_size=500, random_state=0)
    params = {"M": 150, "random_state": 0, **_QUICK.get(cls.__name__, {})}
    return cls(model=model, **params)


@pytest.mark.parametrize("cls", list(_constructors()))
def test_every_constructor_builds_a_cloglog_coreset(cls):
    X, y = _cloglog_data(n=1500, seed=5)
    family = binary_family("cloglog")
    if cls.__name__ in _LOGISTIC_ONLY:
        with pytest.raises(ValueError, match="only the logistic model.*'cloglog'"):
            _build(cls, family).fit(X, y)
        return
    fitted = _build(cls, family).fit(X, y)
    assert fitted.model_ == "cloglog" and list(fitted.classes_) == [0, 1]
    assert len(np.unique(y[fitted.sample_indices_])) == 2
    pipe = Pipeline([("coreset", clone(fitted)),
                     ("clf", BayesianBinaryRegression(link="cloglog"))]).fit(X, y)
    full = BayesianBinaryRegression(link="cloglog").fit(X, y)
    # the posterior of a tenth of the rows stays within a few full-data posterior sds
    # (a uniform sample's error is of order sqrt(N / M) = 3 sds)
    sd = np.sqrt(np.diag(full.posterior_.cov))
    error = np.abs(pipe[-1].posterior_.mean - full.posterior_.mean) / sd
    assert np.max(error) < 6.0, error


def test_one_vs_rest_with_cloglog_models():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(600, 2))
    y = np.argmax(X @ rng.normal(size=(2, 3)) + rng.normal(size=(600, 3)), axis=1)
    clf = BayesianOneVsRestClassifier(BayesianBinaryRegression(link="cloglog"),
                                      random_state=0).fit(X, y)
    proba, std = clf.predict_proba(X[:10], return_std=True)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert all(est.family_.name == "cloglog" for est in clf.estimators_)
    assert np.all(std > 0) and clf.score(X, y) > 0.5


def test_dask_rows_fit_and_predict_as_in_memory():
    da = pytest.importorskip("dask.array")
    X, y = _cloglog_data(n=1200, seed=7)
    in_memory = BayesianBinaryRegression(link="cloglog").fit(X, y)
    on_dask = BayesianBinaryRegression(link="cloglog").fit(
        da.from_array(X, chunks=(300, -1)), da.from_array(y, chunks=300))
    np.testing.assert_allclose(on_dask.posterior_.mean, in_memory.posterior_.mean, rtol=1e-8)
    X_dask = da.from_array(X, chunks=(300, -1))
    np.testing.assert_array_equal(on_dask.predict(X_dask).compute(), in_memory.predict(X))
    np.testing.assert_allclose(on_dask.decision_function(X_dask).compute(),
                               in_memory.decision_function(X), rtol=1e-8)
