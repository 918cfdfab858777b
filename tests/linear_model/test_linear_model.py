"""The estimators' contract: weights, predictions with uncertainty, and input errors."""

import pickle

import numpy as np
import pytest
from scipy.special import expit, gammaln
from scipy.stats import poisson
from sklearn.base import clone
from sklearn.datasets import load_diabetes
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import cross_val_score
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression)

from ..conftest import logistic_data, poisson_data


def _logistic_data(n=200, seed=0):
    return logistic_data(n, [1.0, -2.0, 0.5], -0.3, seed=seed, labels=("ham", "spam"))


def _poisson_data(n=200, seed=0):
    return poisson_data(n, [0.7, -0.4], 1.2, seed=seed, scale=0.5)


def _fit_both(est, X, y, **fit_kwargs):
    return clone(est).fit(X, y, **fit_kwargs)


ESTIMATOR_DATA = [
    (BayesianLogisticRegression(), _logistic_data()),
    (BayesianPoissonRegression(), _poisson_data()),
    (BayesianPoissonRegression(link="softplus"), _poisson_data()),
]


def _assert_same_posterior(a, b, rtol=1e-7):
    np.testing.assert_allclose(a.posterior_.mean, b.posterior_.mean, rtol=rtol, atol=1e-10)
    np.testing.assert_allclose(a.posterior_.cov, b.posterior_.cov, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("est,data", ESTIMATOR_DATA)
def test_weight_semantics_are_unnormalised_likelihood_multipliers(est, data):
    X, y = data
    n = len(y)
    plain = _fit_both(est, X, y)
    _assert_same_posterior(plain, _fit_both(est, X, y, sample_weight=np.ones(n)))
    # zero weight == dropping the row
    w = np.ones(n)
    w[:20] = 0
    _assert_same_posterior(_fit_both(est, X, y, sample_weight=w), _fit_both(est, X[20:], y[20:]))
    # integer weights == repeated rows
    w = np.random.default_rng(1).integers(1, 4, n)
    _assert_same_posterior(_fit_both(est, X, y, sample_weight=w),
                           _fit_both(est, np.repeat(X, w, axis=0), np.repeat(y, w)))
    # scaling every weight tempers the likelihood: the posterior narrows
    hot = _fit_both(est, X, y, sample_weight=np.full(n, 4.0))
    assert np.all(np.diag(hot.posterior_.cov) < np.diag(plain.posterior_.cov))
    assert hot.log_evidence_ != pytest.approx(plain.log_evidence_)


def test_predict_proba_integrates_the_sigmoid_over_the_posterior():
    X, y = _logistic_data(n=60)
    clf = BayesianLogisticRegression().fit(X, y)
    Xq = np.array([[0.3, -0.2, 1.0], [2.0, 1.0, -1.0], [0.0, 0.0, 0.0]])
    proba, std = clf.predict_proba(Xq, return_std=True)
    draws = clf.posterior_.sample(400_000, random_state=0)
    p = expit(Xq @ draws[:, :-1].T + draws[:, -1])
    np.testing.assert_allclose(proba[:, 1], p.mean(axis=1), atol=2e-3)
    np.testing.assert_allclose(std, p.std(axis=1), rtol=1e-2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert proba.shape == (3, 2) and std.shape == (3,)
    assert list(clf.classes_) == ["ham", "spam"]
    # the integrated probability is pulled towards 1/2 relative to the plug-in estimate
    plug_in = expit(clf.decision_function(Xq))
    assert np.all(np.abs(proba[:, 1] - 0.5) <= np.abs(plug_in - 0.5) + 1e-12)
    np.testing.assert_array_equal(clf.predict(Xq), clf.classes_[(plug_in > 0.5).astype(int)])
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(Xq)), proba)


@pytest.mark.parametrize("link", ["log", "softplus"])
def test_poisson_predictive_mean_and_std_match_monte_carlo(link):
    X, y = _poisson_data(n=40)
    reg = BayesianPoissonRegression(link=link).fit(X, y)
    Xq = np.array([[0.5, -0.5], [-1.0, 2.0]])
    mean, std = reg.predict(Xq, return_std=True)
    rng = np.random.default_rng(0)
    draws = reg.posterior_.sample(200_000, random_state=rng)
    eta = Xq @ draws[:, :-1].T + draws[:, -1]
    rate = np.exp(eta) if link == "log" else np.logaddexp(0, eta)
    counts = rng.poisson(rate)
    np.testing.assert_allclose(mean, counts.mean(axis=1), rtol=1e-2)
    np.testing.assert_allclose(std, counts.std(axis=1), rtol=2e-2)
    np.testing.assert_allclose(reg.predict(Xq), mean)
    assert reg.coef_.shape == (2,) and isinstance(reg.intercept_, float)


@pytest.mark.parametrize("est,data", ESTIMATOR_DATA)
def test_fitting_does_not_mutate_inputs_and_clones_pickle(est, data):
    X, y = data
    w = np.linspace(0.5, 2, len(y))
    copies = X.copy(), y.copy(), w.copy()
    fitted = clone(est).fit(X, y, sample_weight=w)
    for a, b in zip((X, y, w), copies):
        np.testing.assert_array_equal(a, b)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict(X), fitted.predict(X))


def test_dataframe_feature_names_are_recorded():
    pd = pytest.importorskip("pandas")
    X, y = _logistic_data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    clf = BayesianLogisticRegression().fit(frame, y)
    assert list(clf.feature_names_in_) == ["a", "b", "c"]
    with pytest.warns(UserWarning, match="feature names"):
        np.testing.assert_allclose(clf.predict_proba(frame), clf.predict_proba(X))


def test_cross_validation_and_one_vs_rest_work():
    X, y = _logistic_data()
    scores = cross_val_score(BayesianLogisticRegression(), X, y, cv=3, scoring="neg_log_loss")
    assert np.all(scores < 0) and np.all(scores > -1)
    rng = np.random.default_rng(0)
    y3 = rng.integers(0, 3, len(y))
    ovr = OneVsRestClassifier(BayesianLogisticRegression()).fit(X, y3)
    assert ovr.predict_proba(X).shape == (len(y), 3)


@pytest.mark.parametrize("y,match", [
    (np.r_[np.zeros(10), np.ones(10), 2 * np.ones(10)],
     "Only binary classification.*BayesianOneVsRestClassifier"),
    (np.ones(30), "only one class"),
    (np.linspace(0, 1, 30), "Unknown label type"),
])
def test_classifier_target_errors(y, match):
    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValueError, match=match):
        BayesianLogisticRegression().fit(X, y)


@pytest.mark.parametrize("y,match", [
    (np.r_[-1.0, np.ones(29)], "negative"),
    (np.r_[np.nan, np.ones(29)], "NaN"),
])
def test_poisson_target_errors(y, match):
    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValueError, match=match):
        BayesianPoissonRegression().fit(X, y)


@pytest.mark.parametrize("est,data", ESTIMATOR_DATA)
def test_input_errors_name_the_problem(est, data):
    X, y = data
    n = len(y)
    bad_X = X.copy()
    bad_X[3, 1] = np.nan
    cases = [
        ((bad_X, y), {}, "NaN"),
        ((np.where(bad_X == bad_X, X, np.inf), y), {}, "infinity"),
        ((X, y), {"sample_weight": -np.ones(n)}, "negative"),
        ((X, y), {"sample_weight": np.zeros(n)}, "zero everywhere"),
        ((X, y), {"sample_weight": np.ones(n + 1)}, "entries but X has"),
        ((X, y), {"sample_weight": np.r_[np.nan, np.ones(n - 1)]}, "NaN"),
        ((X, y[:-1]), {}, "inconsistent numbers of samples"),
        ((X[:0], y[:0]), {}, "0 sample"),
    ]
    for args, kwargs, match in cases:
        with pytest.raises(ValueError, match=match):
            clone(est).fit(*args, **kwargs)
    for param in ({"prior_scale": 0.0}, {"prior_scale": -1.0}, {"max_iter": 0},
                  {"method": "nuts"}, {"tol": -1.0}):
        with pytest.raises(ValueError, match=list(param)[0]):
            clone(est).set_params(**param).fit(X, y)
    with pytest.raises(NotFittedError):
        clone(est).predict(X)
    fitted = clone(est).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        fitted.predict(X[:, :1])


# --- negative binomial ----------------------------------------------------------------------

def _predictive_interval_coverage(estimator, X, y, level=0.9):
    """Share of y inside the central posterior predictive intervals (posterior draws of the
    coefficients, then one draw of the target per coefficient draw)."""
    theta = estimator.posterior_.sample(2000, random_state=0)
    draws = estimator.family_.sample(X @ theta[:, :-1].T + theta[:, -1], random_state=1)
    low, high = np.percentile(draws, [50 * (1 - level), 50 * (1 + level)], axis=1)
    return np.mean((y >= low) & (y <= high))


def test_negative_binomial_intervals_cover_overdispersed_counts():
    # the diabetes target (integers 25-346) as counts: its variance is far above its mean
    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    poisson = BayesianPoissonRegression().fit(X, y)
    negbin = BayesianNegativeBinomialRegression().fit(X, y)
    assert 0.05 < negbin.alpha_ < 0.2  # the mode of the joint posterior in log alpha
    assert _predictive_interval_coverage(poisson, X, y) < 0.5  # Poisson intervals too narrow
    assert 0.82 < _predictive_interval_coverage(negbin, X, y) < 0.96


def test_negative_binomial_predictive_std_is_the_spread_of_new_counts():
    X, y = _poisson_data()
    reg = BayesianNegativeBinomialRegression(alpha=0.4).fit(X, y)
    assert reg.alpha_ == 0.4 and reg.family_.alpha == 0.4
    mean, std = reg.predict(X[:5], return_std=True)
    theta = reg.posterior_.sample(200_000, random_state=0)
    draws = reg.family_.sample(X[:5] @ theta[:, :-1].T + theta[:, -1], random_state=1)
    np.testing.assert_allclose(mean, draws.mean(axis=1), rtol=2e-2)
    np.testing.assert_allclose(std, draws.std(axis=1), rtol=2e-2)


def test_negative_binomial_methods():
    X, y = _poisson_data()
    laplace = BayesianNegativeBinomialRegression(alpha=0.3).fit(X, y)
    kl = BayesianNegativeBinomialRegression(alpha=0.3, method="kl_proximal").fit(X, y)
    np.testing.assert_allclose(kl.coef_, laplace.coef_, atol=0.05)
    assert kl.elbo_ < laplace.log_evidence_ + 1.0
    with pytest.raises(ValueError, match="pass_glm.*not negative_binomial.*'laplace', "
                                         "'kl_proximal', 'mcmc'"):
        BayesianNegativeBinomialRegression(method="pass_glm").fit(X, y)
    assert "pass_degree" not in BayesianNegativeBinomialRegression().get_params()
    with pytest.raises(ValueError, match="Negative binomial targets are non-negative"):
        BayesianNegativeBinomialRegression().fit(X, -y)


# --- Poisson with rates and exposure -----------------------------------------------------------
def _exposure_data(n=300, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    exposure = rng.uniform(0.2, 5.0, n)
    y = rng.poisson(exposure * np.exp(X @ [0.4, -0.3] + 0.5))
    return X, y, exposure


def test_poisson_exposure_is_an_offset_in_the_linear_predictor():
    """The Laplace posterior with exposure e solves the score equations of the counts with
    the offset log(e), has their Hessian as precision, and their log evidence."""
    from scipy.stats import multivariate_normal

    X, y, e = _exposure_data()
    reg = BayesianPoissonRegression(prior_scale=2.0).fit(X, y, exposure=e)
    theta = reg.posterior_.mean
    A = np.column_stack([X, np.ones(len(y))])
    prior_prec = np.array([0.25, 0.25, 0.01])
    mu = e * np.exp(A @ theta)  # the count mean, offset log(e)
    score = A.T @ (y - mu) - prior_prec * theta
    assert np.max(np.abs(score)) < 1e-8 * np.sum(y)
    precision = A.T @ (mu[:, None] * A) + np.diag(prior_prec)
    np.testing.assert_allclose(np.linalg.inv(reg.posterior_.cov), precision, rtol=1e-8)
    log_joint = (poisson.logpmf(y, mu).sum()
                 + multivariate_normal(np.zeros(3), np.diag(1 / prior_prec)).logpdf(theta))
    laplace = (log_joint + 1.5 * np.log(2 * np.pi)
               + 0.5 * np.linalg.slogdet(reg.posterior_.cov)[1])
    assert reg.log_evidence_ == pytest.approx(laplace, rel=1e-10)


_METHOD_LINKS = [(method, link) for method in ("laplace", "kl_proximal", "pass_glm", "mcmc")
                 for link in ("log", "softplus") if (method, link) != ("pass_glm", "softplus")]


@pytest.mark.parametrize("method,link", _METHOD_LINKS)
def test_poisson_rates_weighted_by_exposure_are_the_exposure_fit(method, link):
    """scikit-learn's idiom fit(X, y / e, sample_weight=e) (non-integer targets) and
    fit(X, y, exposure=e) have the same posterior with every method (PASS-GLM: log link)."""
    X, y, e = _exposure_data()
    est = BayesianPoissonRegression(link=link, method=method, n_draws=400, random_state=0)
    counts = clone(est).fit(X, y, exposure=e)
    rates = clone(est).fit(X, y / e, sample_weight=e)
    # the fit's weights are exp(log e), e to a few ulps, which 400 NUTS draws carry along
    # (to 1e-8 of the largest covariance; the other methods to 1e-12)
    rtol = 1e-8 if method == "mcmc" else 1e-12
    cov = rates.posterior_.cov
    np.testing.assert_allclose(counts.posterior_.mean, rates.posterior_.mean, rtol=rtol)
    np.testing.assert_allclose(counts.posterior_.cov, cov, rtol=rtol,
                               atol=rtol * np.abs(cov).max())
    # the evidence is that of the counts: the log-likelihoods differ by a constant in theta,
    # here evaluated at a rate of 1 (scipy's Poisson pmf of the counts with mean e)
    r = y / e
    constant = np.sum(poisson.logpmf(y, e) - e * (-1.0 - gammaln(r + 1.0)))
    for name in ("log_evidence_", "elbo_"):
        if hasattr(rates, name):
            difference = getattr(counts, name) - getattr(rates, name)
            assert difference == pytest.approx(constant, rel=1e-10)


def test_poisson_rates_match_sklearn_poisson_regressor():
    """Non-integer targets: the MAP of y / e with weights e is scikit-learn's
    PoissonRegressor with alpha = 1 / (sum(e) prior_scale^2) (a flat intercept prior)."""
    from sklearn.linear_model import PoissonRegressor

    X, y, e = _exposure_data()
    reg = BayesianPoissonRegression(prior_scale=0.5, intercept_prior_scale=1e6).fit(
        X, y / e, sample_weight=e)
    ref = PoissonRegressor(alpha=1 / (e.sum() * 0.25), tol=1e-12, max_iter=1000).fit(
        X, y / e, sample_weight=e)
    np.testing.assert_allclose(reg.coef_, ref.coef_, rtol=1e-6)
    assert reg.intercept_ == pytest.approx(ref.intercept_, rel=1e-6)


def test_poisson_predictions_scale_with_exposure():
    X, y, e = _exposure_data()
    reg = BayesianPoissonRegression().fit(X, y, exposure=e)
    mean, std = reg.predict(X[:10], return_std=True)
    mean_e, std_e = reg.predict(X[:10], return_std=True, exposure=e[:10])
    np.testing.assert_allclose(mean_e, e[:10] * mean, rtol=1e-12)
    # Var[y] = E[e mu] + Var[e mu], with Var[mu] = std^2 - E[mu] at exposure 1
    np.testing.assert_allclose(std_e**2, e[:10] * mean + e[:10]**2 * (std**2 - mean),
                               rtol=1e-10)
    np.testing.assert_allclose(reg.predict(X[:10], exposure=2.0), 2.0 * mean, rtol=1e-12)
    assert reg.score(X, y, exposure=e) == pytest.approx(
        1 - np.sum((y - reg.predict(X, exposure=e))**2) / np.sum((y - y.mean())**2))


def test_exposure_is_routed_by_grid_search():
    import sklearn
    from sklearn.model_selection import GridSearchCV

    X, y, e = _exposure_data()
    with sklearn.config_context(enable_metadata_routing=True):
        reg = BayesianPoissonRegression().set_fit_request(exposure=True).set_score_request(
            exposure=True)
        search = GridSearchCV(reg, {"prior_scale": [0.5, 2.0]}, cv=3).fit(X, y, exposure=e)
    full = BayesianPoissonRegression(prior_scale=search.best_params_["prior_scale"]).fit(
        X, y, exposure=e)
    np.testing.assert_allclose(search.best_estimator_.coef_, full.coef_)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
