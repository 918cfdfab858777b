"""Hostile inputs through both estimators and all four methods: every case either raises
ValueError/TypeError with a message naming the problem, or fits and predicts finite numbers.
Small data and short MCMC runs keep the module fast."""

import re
import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from skcoreset import BayesianLogisticRegression, BayesianPoissonRegression

METHODS = ["laplace", "kl_proximal", "pass_glm", "mcmc"]
# short chains: the diagnostics warn, which is not what these tests are about
_MCMC = dict(n_draws=40, n_burnin=10, thin=1, random_state=0)


def _clf(method):
    return BayesianLogisticRegression(method=method, **(_MCMC if method == "mcmc" else {}))


def _reg(method):
    return BayesianPoissonRegression(method=method, **(_MCMC if method == "mcmc" else {}))


def _data(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y_bin = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    y_cnt = rng.poisson(np.exp(0.3 * X[:, 0] + 0.2))
    return X, y_bin, y_cnt


def _fit_or_raise(est, X, y, match, sample_weight=None):
    """Either a ValueError/TypeError whose message matches ``match``, or finite results."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence and accuracy diagnostics are fine here
        try:
            est.fit(X, y, sample_weight=sample_weight)
        except (ValueError, TypeError) as error:
            assert match is not None, f"unexpected error: {error}"
            assert any(m in str(error) for m in match.split("|")), str(error)
            return None
        Xp = np.asarray(X, dtype=float)[:5]
        assert np.all(np.isfinite(est.coef_)) and np.all(np.isfinite(est.intercept_))
        if hasattr(est, "predict_proba"):
            proba, std = est.predict_proba(Xp, return_std=True)
            assert np.all(np.isfinite(proba)) and np.all(np.isfinite(std))
        else:
            mean, std = est.predict(Xp, return_std=True)
            assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std))
    return est


def _must_raise(est, X, y, match, sample_weight=None):
    with pytest.raises((ValueError, TypeError), match=match):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_X_y_and_weights_are_named(method, bad):
    X, y_bin, y_cnt = _data()
    for make, y in ((_clf, y_bin), (_reg, y_cnt)):
        Xb = X.copy()
        Xb[3, 1] = bad
        _must_raise(make(method), Xb, y, "NaN|infinity|infinite")
        yb = y.astype(float)
        yb[4] = bad
        _must_raise(make(method), X, yb, "NaN|infinity|infinite")
        w = np.ones(len(y))
        w[5] = bad
        _must_raise(make(method), X, y, "sample_weight", sample_weight=w)
        _must_raise(make(method), X, y, "negative", sample_weight=-np.ones(len(y)))


@pytest.mark.parametrize("method", METHODS)
def test_classifier_label_sets(method):
    X, y, _ = _data()
    _must_raise(_clf(method), X, y % 3 + (X[:, 1] > 1), "binary|classes")
    _must_raise(_clf(method), X, np.zeros(len(y), dtype=int), "one class")
    labels = np.where(y == 1, "spam", "ham")
    est = _fit_or_raise(_clf(method), X, labels, None)
    assert set(est.predict(X)) <= {"spam", "ham"}
    _must_raise(_clf(method), X, X[:, 0], "continuous|Unknown label type")


@pytest.mark.parametrize("method", METHODS)
def test_poisson_targets_must_be_non_negative_and_exposures_positive(method):
    X, _, y = _data()
    _must_raise(_reg(method), X, y - 5, "negative")
    _fit_or_raise(_reg(method), X, y + 0.5, None)  # rates: a quasi-likelihood
    for bad in (0.0, -1.0, np.nan):
        exposure = np.ones(len(y))
        exposure[3] = bad
        with pytest.raises(ValueError, match="exposure"):
            _reg(method).fit(X, y, exposure=exposure)
    with pytest.raises(ValueError, match="exposure must be 1-D with one entry per row "
                       "of X; got 3 entries"):
        _reg(method).fit(X, y, exposure=np.ones(3))


@pytest.mark.parametrize("method", METHODS)
def test_empty_data_and_a_single_row(method):
    X, y_bin, y_cnt = _data()
    for make, y in ((_clf, y_bin), (_reg, y_cnt)):
        _must_raise(make(method), X[:0], y[:0], "0 sample|empty")
        _must_raise(make(method), np.empty((5, 0)), y[:5], "0 feature")
    _must_raise(_clf(method), X[:1], y_bin[:1], "one class")
    _fit_or_raise(_reg(method), X[:1], y_cnt[:1], "sample")


@pytest.mark.parametrize("method", METHODS)
def test_huge_linear_predictors(method):
    X, y_bin, y_cnt = _data()
    _fit_or_raise(_clf(method), X * 1e8, y_bin, "scale|overflow|finite|positive definite")
    _fit_or_raise(_reg(method), X * 1e8, y_cnt, "scale|overflow|finite|positive definite")
    for make, y in ((_clf, y_bin), (_reg, y_cnt)):  # squares beyond float64
        _fit_or_raise(make(method), X * 1e200, y, "Standardise X")


@pytest.mark.parametrize("method", METHODS)
def test_separable_and_duplicated_rows(method):
    X, y_bin, y_cnt = _data()
    separable = (X[:, 0] > 0).astype(int)
    _fit_or_raise(_clf(method), X, separable, None)
    _fit_or_raise(_clf(method), np.repeat(X, 3, axis=0), np.repeat(y_bin, 3), None)
    _fit_or_raise(_reg(method), np.repeat(X, 3, axis=0), np.repeat(y_cnt, 3), None)
    # identical rows only: no information beyond the prior, still finite
    _fit_or_raise(_reg(method), np.ones((10, 3)), np.full(10, 2), None)


@pytest.mark.parametrize("method", METHODS)
def test_predict_before_fit_and_with_wrong_n_features(method):
    X, y_bin, y_cnt = _data()
    for make, y in ((_clf, y_bin), (_reg, y_cnt)):
        with pytest.raises(NotFittedError):
            make(method).predict(X)
        est = _fit_or_raise(make(method), X, y, None)
        with pytest.raises(ValueError, match="features"):
            est.predict(X[:, :2])
        with pytest.raises(ValueError, match="features"):
            est.predict(np.column_stack([X, X]))


def _all_public_estimators():
    from sklearn.base import clone

    from skcoreset import (BayesianNegativeBinomialRegression, FrankWolfeCoreset, GIGACoreset,
                           QuasiNewtonCoreset, SensitivityCoreset, SparseVICoreset,
                           StreamingCoreset, UniformCoreset)
    from skcoreset.multiclass import BayesianOneVsRestClassifier

    return [clone(e) for e in (
        BayesianLogisticRegression(), BayesianPoissonRegression(),
        BayesianNegativeBinomialRegression(), BayesianOneVsRestClassifier(),
        UniformCoreset(), SensitivityCoreset(), GIGACoreset(), FrankWolfeCoreset(),
        SparseVICoreset(), QuasiNewtonCoreset(), StreamingCoreset())]


@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_booleans_are_refused_wherever_a_number_is_meant(value):
    """One rule (skcoreset._numbers.is_number) for every numeric parameter: Python's True
    is the integer 1, but M=True or prior_scale=True is never meant."""
    X, y_bin, y_cnt = _data()
    checked = 0
    for est in _all_public_estimators():
        for name, default in est.get_params(deep=False).items():
            numeric = isinstance(default, (int, float)) and not isinstance(default, bool)
            if not numeric or name in ("verbose", "random_state", "n_jobs"):
                continue
            est_bool = est.set_params(**{name: value})
            y = y_cnt if "Poisson" in type(est).__name__ or "Binomial" in type(
                est).__name__ else y_bin
            with pytest.raises((TypeError, ValueError), match=f"'{name}' parameter"):
                est_bool.fit(X, y)
            est.set_params(**{name: default})
            checked += 1
    assert checked >= 30
    for name in ("sample_weight", "exposure"):
        with pytest.raises(TypeError, match=f"{name} must be a number or an array"):
            BayesianPoissonRegression().fit(X, y_cnt, **{name: value})


def test_unclear_inputs_get_messages_naming_them():
    from skcoreset import GIGACoreset, UniformCoreset
    from skcoreset.families import Family, GaussianFamily

    X, y_bin, _ = _data()
    with pytest.raises(TypeError, match="noise_scale must be a positive number, got '1'"):
        GaussianFamily(noise_scale="1")
    with pytest.raises(ValueError, match="noise_scale must be a finite positive number"):
        GaussianFamily(noise_scale=np.inf)
    with pytest.raises(ValueError, match="'noise_scale' parameter"):
        GIGACoreset(model="gaussian", noise_scale=np.inf).fit(X, X[:, 0])
    # the abstract base, or a subclass missing part of the likelihood, names what to use
    usable = "Use model='logistic', 'probit', 'poisson', 'gaussian' or 'negative_binomial'"
    with pytest.raises(TypeError, match=f"Family cannot be used as a model: it does not "
                       f"implement d1, d2, loglik, predictive_variance, sample. {usable}"):
        Family()

    class Incomplete(Family):
        name = "incomplete"

        def loglik(self, y, eta):
            return -eta**2

    with pytest.raises(TypeError, match=f"Incomplete cannot .* implement d1, d2, "
                       f"predictive_variance, sample. {usable}"):
        Incomplete("identity")

    class Unnamed(GaussianFamily):
        name = None

    for coreset in (UniformCoreset(), GIGACoreset()):
        with pytest.raises(TypeError, match=f"abstract base of the likelihoods.*{usable}"):
            coreset.set_params(model=Unnamed()).fit(X, y_bin)
    est = BayesianLogisticRegression(method="pass_glm").partial_fit(X, y_bin)
    est.set_params(method="laplace")
    with pytest.raises(AttributeError, match="only available with method='pass_glm'"):
        est.partial_fit(X, y_bin)


@pytest.mark.parametrize("sampler", ["nuts", "ensemble"])
@pytest.mark.parametrize("make", [_clf, _reg])
def test_mcmc_refuses_a_posterior_too_concentrated_for_float64(make, sampler):
    """Weights of 1e250 make the log posterior ~1e252 nats, rounded by ~1e236: NUTS ran
    with every transition divergent and emcee failed on its walkers' condition number.
    Weights of 1e12 (rounding ~0.01 nats) still sample."""
    X, y_bin, y_cnt = _data()
    y = y_bin if make is _clf else y_cnt
    est = make("mcmc").set_params(sampler=sampler)
    _must_raise(est, X, y, "float64.*sample_weight", sample_weight=np.full(60, 1e250))
    assert not hasattr(est, "coef_")
    assert _fit_or_raise(est, X, y, None, sample_weight=np.full(60, 1e12)) is not None


def test_mcmc_start_checks_the_rounding_of_the_log_posterior():
    from skcoreset._inference import _start

    X, y, _ = _data()
    y = np.where(y == 1, 1.0, -1.0)
    family = BayesianLogisticRegression()._family()
    kwargs = dict(prior_prec=np.ones(4), fit_intercept=True, tol=1e-10, max_iter=100,
                  verbose=0)
    for scale, refused in ((1e13, False), (1e17, True)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if not refused:
                start = _start.mcmc_start(X, y, family, sample_weight=np.full(60, scale),
                                          **kwargs)
                rounding = np.finfo(float).eps * abs(start.extra["log_posterior"])
                assert 0.01 < rounding < _start.MAX_ROUNDING_NATS
                continue
            with pytest.raises(ValueError, match=r"rounds by about [0-9.e+]+ nats"):
                _start.mcmc_start(X, y, family, sample_weight=np.full(60, scale), **kwargs)


def test_count_predictions_at_absurd_predictors_are_inf_with_a_warning():
    """At |x| = 1e3 the predictive moments exceed float64: both count models return inf
    for those rows and say so, with the size (they were capped, silently, at exp(500) and
    exp(700): a wrong number), and the representable rows as they are."""
    from skcoreset import BayesianNegativeBinomialRegression

    X, _, y = _data()
    far = np.array([[1e3, 1e3, 1e3], [1.0, -1.0, 1.0], [-1e3, -1e3, -1e3]])
    design = np.column_stack([far, np.ones(3)])
    for est in (BayesianPoissonRegression(), BayesianNegativeBinomialRegression(alpha=0.5)):
        est.fit(X, y)
        # the log-normal moments of the rate: log E = m + v / 2, log sd >= m + v / 2 too
        m = design @ est.posterior_.mean
        v = np.sum((design @ est.posterior_.cov_cholesky) ** 2, axis=1)
        beyond = m + v / 2 + 0.5 * np.log(np.expm1(v)) > np.log(np.finfo(float).max)
        np.testing.assert_array_equal(beyond, [True, False, True])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mean, std = est.predict(far, return_std=True)
        messages = [str(c.message) for c in caught]
        assert len(messages) == 1 and re.search(
            rf"{beyond.sum()} of 3 predicted .* beyond float64 \(.*\) and "
            "are returned as inf", messages[0]), messages
        np.testing.assert_array_equal(np.isinf(std), beyond)
        assert np.isfinite(std[1]) and std[1] >= np.sqrt(mean[1])
        np.testing.assert_allclose(np.log(mean[1]), m[1] + v[1] / 2, rtol=1e-12)


def test_exposure_given_to_fit_but_not_to_score_warns():
    """GridSearchCV without metadata routing hands fit params to fit only: R^2 of rates
    against counts (-0.5 here instead of 0.8) must not pass silently."""
    import sklearn
    from sklearn.model_selection import GridSearchCV

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    exposure = rng.uniform(0.1, 10.0, 300)
    y = rng.poisson(exposure * np.exp(X @ [0.5, -0.3]))
    grid = {"prior_scale": [1.0, 10.0]}
    with pytest.warns(UserWarning, match="fitted with exposure or offset but is scored without"):
        GridSearchCV(BayesianPoissonRegression(), grid, cv=3).fit(X, y, exposure=exposure)
    with sklearn.config_context(enable_metadata_routing=True):
        est = (BayesianPoissonRegression().set_fit_request(exposure=True)
               .set_score_request(exposure=True))
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            search = GridSearchCV(est, grid, cv=3).fit(X, y, exposure=exposure)
    assert search.best_score_ > 0.5
    fitted = BayesianPoissonRegression().fit(X, y)  # no exposure: scoring rates is fine
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        fitted.score(X, y)


def test_input_errors_say_what_is_allowed():
    """scikit-learn's messages on X and y say what is wrong; the fit adds what is allowed
    (estimators and constructors alike)."""
    from skcoreset import BayesianNegativeBinomialRegression, UniformCoreset
    from skcoreset.multiclass import BayesianOneVsRestClassifier

    X, y_bin, y_cnt = _data()
    for est, y in ((BayesianLogisticRegression(), y_bin), (UniformCoreset(M=5), y_bin),
                   (BayesianPoissonRegression(), y_cnt), (BayesianOneVsRestClassifier(), y_bin)):
        with pytest.raises(ValueError, match="inconsistent numbers of samples.*X, y and "
                           "sample_weight must have one entry per row of X"):
            est.fit(X, y[:-2])
        with pytest.raises(ValueError, match=r"0 sample\(s\).*X must have at least one row"):
            est.fit(X[:0], y[:0])
        with pytest.raises(ValueError, match="X contains infinity.*X and y must hold finite"):
            est.fit(np.where(np.arange(X.size).reshape(X.shape) == 4, np.inf, X), y)
    with pytest.raises(ValueError, match="X contains NaN or infinity; X must hold finite"):
        BayesianLogisticRegression(method="pass_glm").fit(np.where(X > 2, np.nan, X), y_bin)
    with pytest.raises(ValueError, match=r"y contains NaN.*must .*finite"):
        BayesianLogisticRegression().fit(X, np.where(np.arange(len(y_bin)) == 3, np.nan,
                                                     y_bin))
    for est in (BayesianPoissonRegression(), BayesianNegativeBinomialRegression()):
        with pytest.raises(ValueError, match="y must hold numbers for this model, got "
                           "values such as 'a'; encode them as numbers first"):
            est.fit(X, np.array(["a", "b"] * (len(X) // 2)))
