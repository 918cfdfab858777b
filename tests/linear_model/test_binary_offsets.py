"""Offsets of the binary models: ``offset=`` of fit and of every prediction, checked against
statsmodels' ``GLM(family=Binomial(link=...), offset=)`` for the logit, probit and cloglog
links, through a ``np.memmap``, dask arrays and a coreset pipeline."""

import numpy as np
import pytest
from scipy import sparse, stats

from skcoreset import (BayesianBinaryRegression, BayesianLogisticRegression,
                       BayesianProbitRegression, QuasiNewtonCoreset, UniformCoreset)
from skcoreset._linalg import gaussian_kl_cholesky
from skcoreset.families import binary_family
from skcoreset.pipeline import Pipeline

sm = pytest.importorskip("statsmodels.api")

# a wide prior: the posterior mode is statsmodels' maximum-likelihood estimate
_FLAT = dict(prior_scale=1e4, intercept_prior_scale=1e4)
_SM_LINKS = {"logit": "Logit", "probit": "Probit", "cloglog": "CLogLog"}


def _rows(link, n=1500, seed=0):
    """Binary outcomes of ``link`` whose offsets, correlated with the first feature, move
    the probabilities as much as the features do."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=n), rng.random(n) < 0.4, rng.standard_t(5, n)])
    offset = 0.8 * X[:, 0] + rng.normal(0.0, 1.0, n)
    eta = X @ [0.5, -0.7, 0.3] - 0.4 + offset
    y = (rng.random(n) < binary_family(link).link.inverse(eta)).astype(int)
    return X, y, offset


def _design(X):
    return sm.add_constant(X, prepend=False, has_constant="add")  # intercept last, as theta


def _glm(X, y, offset, link, **fit):
    family = sm.families.Binomial(link=getattr(sm.families.links, _SM_LINKS[link])())
    return sm.GLM(y, _design(X), family=family, offset=offset).fit(**fit)


@pytest.mark.parametrize("link", ["logit", "probit", "cloglog"])
def test_laplace_with_offset_is_statsmodels_glm(link):
    """The mode and the observed-information standard errors of statsmodels' GLM with the
    same offset (its Newton fit), and its predicted probabilities at new offsets; the fit
    without the offset is standard errors away."""
    X, y, offset = _rows(link)
    glm = _glm(X, y, offset, link, method="newton")
    clf = BayesianBinaryRegression(link=link, **_FLAT).fit(X, y, offset=offset)
    np.testing.assert_allclose(clf.posterior_.mean, glm.params, atol=1e-5 * glm.bse.min())
    np.testing.assert_allclose(clf.posterior_.std, glm.bse, rtol=1e-5)
    sm_p = glm.predict(_design(X[:50]), offset=offset[:50])
    p = clf.predict_proba(X[:50], offset=offset[:50])[:, 1]
    np.testing.assert_allclose(p, sm_p, atol=0.01)  # plus the posterior spread of eta
    # the probability at the posterior mean is statsmodels' to rounding
    mean_only = clf.family_.link.inverse(clf.decision_function(X[:50], offset=offset[:50]))
    if clf.family_.link.symmetric:
        np.testing.assert_allclose(mean_only, sm_p, rtol=1e-6)
    # the fit statistics and residuals of the rows with their offsets
    np.testing.assert_allclose(clf.deviance_, glm.deviance, rtol=1e-9)
    # (statsmodels' deviance residuals near 0 carry its rounding, sqrt(eps) = 1.5e-8)
    np.testing.assert_allclose(clf.residuals(X, y, offset=offset), glm.resid_deviance,
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(clf.residuals(X, y, "pearson", offset=offset),
                               glm.resid_pearson, rtol=1e-6, atol=1e-7)
    blind = BayesianBinaryRegression(link=link, **_FLAT).fit(X, y)
    assert np.max(np.abs(blind.posterior_.mean - glm.params) / glm.bse) > 3


def test_named_estimators_take_offsets_as_the_link_does():
    X, y, offset = _rows("probit", n=600)
    for named, link in ((BayesianLogisticRegression, "logit"),
                        (BayesianProbitRegression, "probit")):
        by_name = named().fit(X, y, offset=offset)
        by_link = BayesianBinaryRegression(link=link).fit(X, y, offset=offset)
        np.testing.assert_allclose(by_name.posterior_.mean, by_link.posterior_.mean,
                                   rtol=1e-12)


@pytest.mark.parametrize("method", ["kl_proximal", "mcmc"])
def test_other_methods_fit_the_offset(method):
    """Variational inference and NUTS under the offsets: statsmodels' estimate within a
    fraction of its standard errors (the Monte Carlo error of 200 effective draws)."""
    X, y, offset = _rows("cloglog", n=500)
    glm = _glm(X, y, offset, "cloglog", method="newton")
    options = dict(n_draws=200, random_state=0) if method == "mcmc" else {}
    clf = BayesianBinaryRegression(link="cloglog", method=method, **_FLAT,
                                   **options).fit(X, y, offset=offset)
    tol = 0.3 if method == "mcmc" else 0.2  # VI's mean is not the mode: 0.1 sd here
    np.testing.assert_allclose(clf.posterior_.mean, glm.params, atol=tol * glm.bse.min())
    np.testing.assert_allclose(clf.posterior_.std, glm.bse, rtol=tol)
    # predictions average over the draws with the offsets in their linear predictors
    p = clf.predict_proba(X[:20], offset=offset[:20])[:, 1]
    np.testing.assert_allclose(p, glm.predict(_design(X[:20]), offset=offset[:20]),
                               atol=0.03)


def test_pass_glm_refuses_offsets_by_name():
    X, y, offset = _rows("logit", n=200)
    clf = BayesianLogisticRegression(method="pass_glm")
    with pytest.raises(ValueError, match="method='pass_glm' cannot fit an offset"):
        clf.fit(X, y, offset=offset)
    assert not hasattr(clf, "posterior_")
    clf.fit(X, y)  # without offsets as before


@pytest.mark.parametrize("method", ["laplace", "kl_proximal"])
def test_memmap_and_dask_offsets_fit_as_in_memory(method, tmp_path):
    """Offsets travel with the rows: CSR rows, a ``np.memmap`` (read in chunks) and dask
    arrays in three chunks (the offset as a dask array, or in memory) give the fit of
    dense rows in memory to rounding, and the dask predictions, score and loo are those
    of the rows in memory."""
    da = pytest.importorskip("dask.array")
    X, y, offset = _rows("logit", n=900)
    make = dict(link="logit", method=method)
    reference = BayesianBinaryRegression(**make).fit(X, y, offset=offset)
    mapped = np.memmap(tmp_path / "X.dat", dtype=np.float64, mode="w+", shape=X.shape)
    mapped[:] = X
    Xd, yd, od = (da.from_array(a, chunks=300) for a in (X, y, offset))
    fits = [BayesianBinaryRegression(**make).fit(sparse.csr_matrix(X), y, offset=offset),
            BayesianBinaryRegression(**make).fit(mapped, y, offset=offset),
            BayesianBinaryRegression(**make).fit(Xd, yd, offset=od),
            BayesianBinaryRegression(**make).fit(Xd, yd, offset=offset)]
    for fit in fits:
        np.testing.assert_allclose(fit.posterior_.mean, reference.posterior_.mean, rtol=1e-10)
        np.testing.assert_allclose(fit.posterior_.std, reference.posterior_.std, rtol=1e-10)
        np.testing.assert_allclose(fit.loglik_, reference.loglik_, rtol=1e-12)
    on_dask = fits[2]
    for name in ("decision_function", "predict_proba", "predict_log_proba", "predict"):
        lazy = getattr(on_dask, name)(Xd, offset=od).compute()
        eager = getattr(reference, name)(X, offset=offset)
        if name == "predict":
            np.testing.assert_array_equal(lazy, eager)
        else:
            np.testing.assert_allclose(lazy, eager, rtol=1e-9)
    assert on_dask.score(Xd, yd, offset=od) == pytest.approx(
        reference.score(X, y, offset=offset), rel=1e-12)
    draws = on_dask.sample_y(Xd, n_draws=50, random_state=0, offset=od).compute()
    assert draws.shape == (50, 900)
    # the training rows' PSIS-LOO, summed over the dask chunks with their offsets
    np.testing.assert_allclose(on_dask.loo(random_state=0).elpd_loo,
                               reference.loo(random_state=0).elpd_loo, rtol=1e-9)


def test_predictions_include_the_offset():
    """P(y=1) >= 1/2 with the offset decides the class, whatever the link; no offset is
    offset 0; sample_y draws outcomes at the probabilities with the offset."""
    X, y, offset = _rows("cloglog", n=800)
    clf = BayesianBinaryRegression(link="cloglog").fit(X, y, offset=offset)
    p = clf.predict_proba(X, offset=offset)[:, 1]
    np.testing.assert_array_equal(clf.predict(X, offset=offset), (p > 0.5).astype(int))
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X, offset=offset)[:, 1]), p,
                               rtol=1e-12)
    assert np.all((clf.decision_function(X, offset=offset) > 0) == (p > 0.5))
    np.testing.assert_array_equal(clf.predict_proba(X), clf.predict_proba(X, offset=0.0))
    assert np.mean(clf.predict(X) != clf.predict(X, offset=offset)) > 0.1
    draws = clf.sample_y(X, n_draws=4000, random_state=0, offset=offset)
    np.testing.assert_allclose(draws.mean(axis=0), p, atol=0.035)  # 4.5 sd of 4000 draws
    accuracy = np.mean(clf.predict(X, offset=offset) == y)
    assert clf.score(X, y, offset=offset) == pytest.approx(accuracy, rel=1e-12)
    with pytest.warns(UserWarning, match="fitted with offset but is scored without"):
        clf.score(X, y)


def test_to_arviz_and_loo_use_the_offsets():
    """The log-likelihood of each row under each draw is the Bernoulli's at
    ``F(x . theta + offset)``, for the training rows (kept with their offsets) and rows
    passed with theirs."""
    pytest.importorskip("arviz")
    X, y, offset = _rows("probit", n=300)
    clf = BayesianProbitRegression().fit(X, y, offset=offset)
    idata = clf.to_arviz(n_draws=50, n_chains=2, random_state=0)
    coef = idata.posterior["coef"].values.reshape(100, -1)
    intercept = idata.posterior["intercept"].values.reshape(100)
    p = stats.norm.cdf(X @ coef.T + intercept + offset[:, None])
    by_hand = stats.bernoulli.logpmf(y[:, None], p).T
    np.testing.assert_allclose(idata.log_likelihood["y"].values.reshape(100, -1), by_hand,
                               rtol=1e-10, atol=1e-14)
    passed = clf.to_arviz(X, y, offset=offset, n_draws=50, n_chains=2, random_state=0)
    np.testing.assert_array_equal(passed.log_likelihood["y"].values,
                                  idata.log_likelihood["y"].values)
    kept, given = clf.loo(random_state=0), clf.loo(X, y, offset=offset, random_state=0)
    assert kept.elpd_loo == given.elpd_loo
    assert clf.loo(X, y, random_state=0).elpd_loo < kept.elpd_loo - 20  # offsets matter
    with pytest.raises(ValueError, match="offset of loo describes the rows X, y"):
        clf.loo(offset=offset)


def test_binomial_cells_with_offsets_are_statsmodels():
    """Successes out of trials per cell with an offset per cell: statsmodels' GLM on the
    endog ``[k, n - k]``, fitted as at most two weighted rows per cell."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 2))
    offset = rng.normal(0.0, 1.0, 200)
    trials = rng.integers(1, 30, 200)
    k = rng.binomial(trials, stats.norm.cdf(X @ [0.4, -0.6] + 0.2 + offset))
    glm = _glm(X, np.column_stack([k, trials - k]), offset, "probit", method="newton")
    clf = BayesianProbitRegression(**_FLAT).fit(X, k, n_trials=trials, offset=offset)
    np.testing.assert_allclose(clf.posterior_.mean, glm.params, atol=1e-5 * glm.bse.min())
    np.testing.assert_allclose(clf.posterior_.std, glm.bse, rtol=1e-5)
    np.testing.assert_allclose(clf.deviance_, glm.deviance, rtol=1e-6)
    draws = clf.sample_y(X, n_draws=2000, random_state=0, n_trials=trials, offset=offset)
    np.testing.assert_allclose(draws.mean(axis=0) / trials, glm.fittedvalues, atol=0.05)


@pytest.mark.parametrize("case, error, match", [
    ("short", ValueError, "offset must be 1-D with one entry per row of X; got 119"),
    ("nan", ValueError, "offset contains NaN or infinity"),
    ("mask", TypeError, "offset must be .* got a boolean array"),
    ("text", TypeError, "offset must be"),
])
def test_bad_offsets_are_refused_by_name(case, error, match):
    X, y, offset = _rows("logit", n=120)
    bad = {"short": offset[:-1], "nan": np.where(np.arange(120) == 7, np.nan, offset),
           "mask": offset > 0, "text": np.array(["a"] * 120)}[case]
    clf = BayesianLogisticRegression()
    with pytest.raises(error, match=match):
        clf.fit(X, y, offset=bad)
    assert not hasattr(clf, "posterior_")
    clf.fit(X, y)
    for call in (lambda: clf.predict(X, offset=bad), lambda: clf.predict_proba(X, offset=bad),
                 lambda: clf.sample_y(X, offset=bad)):
        with pytest.raises(error, match=match):
            call()


def test_dask_offsets_of_the_wrong_length_or_values_are_refused_by_name():
    da = pytest.importorskip("dask.array")
    X, y, offset = _rows("logit", n=90)
    Xd, yd = da.from_array(X, chunks=30), da.from_array(y, chunks=30)
    with pytest.raises(ValueError, match=r"offset must have shape \(90,\), got \(89,\)"):
        BayesianLogisticRegression().fit(Xd, yd, offset=offset[:-1])
    with pytest.raises(TypeError, match="offset must be .* got a boolean array"):
        BayesianLogisticRegression().fit(Xd, yd, offset=da.from_array(offset > 0, chunks=30))
    bad = offset.copy()
    bad[40] = np.inf
    with pytest.raises(ValueError, match="offset contains NaN or infinity"):
        BayesianLogisticRegression().fit(Xd, yd, offset=da.from_array(bad, chunks=30))


# --- through a pipeline ---------------------------------------------------------------------

# a uniform quarter of the rows is nats from the full posterior: not what is checked here
@pytest.mark.filterwarnings("ignore::skcoreset.exceptions.CoresetAccuracyWarning")
def test_offsets_through_a_uniform_coreset_are_its_rows_fit():
    """The coreset step hands on its rows' offsets; the final estimator fits the coreset's
    rows with their weights and offsets."""
    X, y, offset = _rows("cloglog", n=2000)
    pipe = Pipeline([("coreset", UniformCoreset(M=500, random_state=0)),
                     ("clf", BayesianBinaryRegression(link="cloglog"))]).fit(
        X, y, coreset__offset=offset)
    rows, weights = pipe[0].sample_indices_, pipe[0].sample_weight_
    assert pipe[0].model_ == "cloglog"  # the final estimator's model
    np.testing.assert_array_equal(pipe[0].sample_offset_, offset[rows])
    by_hand = BayesianBinaryRegression(link="cloglog").fit(
        X[rows], y[rows], sample_weight=weights, offset=offset[rows])
    np.testing.assert_allclose(pipe[-1].posterior_.mean, by_hand.posterior_.mean, rtol=1e-8)
    np.testing.assert_allclose(pipe.predict_proba(X[:10], offset=offset[:10]),
                               by_hand.predict_proba(X[:10], offset=offset[:10]), rtol=1e-8)
    # without a coreset step, offset reaches the estimator by its step name
    alone = Pipeline([("clf", BayesianBinaryRegression(link="cloglog"))]).fit(
        X, y, clf__offset=offset)
    np.testing.assert_allclose(
        alone[-1].posterior_.mean,
        BayesianBinaryRegression(link="cloglog").fit(X, y, offset=offset).posterior_.mean,
        rtol=1e-12)


def test_offsets_through_a_quasi_newton_coreset_give_the_full_posterior():
    """The coreset is built with the offsets in the rows' linear predictors: the pipeline's
    posterior is the all-rows fit's (Laplace KL); the same rows fitted without their
    offsets are far off."""
    X, y, offset = _rows("probit", n=6000)
    full = BayesianProbitRegression().fit(X, y, offset=offset)
    pipe = Pipeline([("coreset", QuasiNewtonCoreset(M=800, random_state=0)),
                     ("clf", BayesianProbitRegression())]).fit(X, y, coreset__offset=offset)
    coreset, clf = pipe[0], pipe[-1]
    kl = gaussian_kl_cholesky(clf.posterior_.mean, clf.posterior_.cov_cholesky,
                              full.posterior_.mean, full.posterior_.cov_cholesky)
    assert kl < 0.05 and coreset.kl_estimate_ < 0.05
    rows, weights = coreset.sample_indices_, coreset.sample_weight_
    blind = BayesianProbitRegression().fit(X[rows], y[rows], sample_weight=weights)
    blind_kl = gaussian_kl_cholesky(blind.posterior_.mean, blind.posterior_.cov_cholesky,
                                    full.posterior_.mean, full.posterior_.cov_cholesky)
    assert blind_kl > 100 * kl


def test_negative_binomial_loo_on_dask_reads_the_chunks_offsets():
    """The offsets travel with the dask chunks into PSIS-LOO for every family: the
    training rows' elpd of the rows in memory."""
    da = pytest.importorskip("dask.array")
    from skcoreset import BayesianNegativeBinomialRegression

    rng = np.random.default_rng(6)
    X = rng.normal(size=(600, 2))
    offset = rng.normal(0.0, 1.0, 600)
    y = rng.poisson(np.exp(X @ [0.3, -0.2] + offset) * rng.gamma(2.0, 0.5, 600))
    make = dict(alpha=0.5)
    in_memory = BayesianNegativeBinomialRegression(**make).fit(X, y, offset=offset)
    on_dask = BayesianNegativeBinomialRegression(**make).fit(
        da.from_array(X, chunks=200), da.from_array(y, chunks=200), offset=offset)
    np.testing.assert_allclose(on_dask.loo(random_state=0).elpd_loo,
                               in_memory.loo(random_state=0).elpd_loo, rtol=1e-10)


def test_binomial_cells_with_offsets_through_a_coreset():
    """A coreset of cells hands on its rows' 0/1 outcomes, weights and their cells'
    offsets: the pipeline's posterior is the fit of those rows by hand, and close to the
    fit of all cells (Laplace KL)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(3000, 2))
    offset = 0.8 * X[:, 0] + rng.normal(0.0, 1.0, 3000)
    trials = rng.integers(1, 10, 3000)
    k = rng.binomial(trials, stats.norm.cdf(X @ [0.4, -0.6] + 0.2 + offset))
    full = BayesianProbitRegression().fit(X, k, n_trials=trials, offset=offset)
    pipe = Pipeline([("coreset", QuasiNewtonCoreset(M=600, random_state=0)),
                     ("clf", BayesianProbitRegression())]).fit(
        X, k, coreset__n_trials=trials, coreset__offset=offset)
    coreset = pipe[0]
    np.testing.assert_array_equal(coreset.sample_offset_, offset[coreset.sample_indices_])
    X_core, y_core, w_core = coreset.fit_coreset(X, k, n_trials=trials, offset=offset,
                                                 estimator=pipe[-1])
    by_hand = BayesianProbitRegression().fit(X_core, y_core, sample_weight=w_core,
                                             offset=coreset.sample_offset_)
    np.testing.assert_allclose(pipe[-1].posterior_.mean, by_hand.posterior_.mean, rtol=1e-8)
    kl = gaussian_kl_cholesky(by_hand.posterior_.mean, by_hand.posterior_.cov_cholesky,
                              full.posterior_.mean, full.posterior_.cov_cholesky)
    assert kl < 0.05


def test_offsets_are_routed_to_fit_and_score():
    """With metadata routing, cross-validation hands each fold's offsets to fit and
    score: the scores of the folds fitted and scored by hand."""
    import sklearn
    from sklearn.model_selection import KFold, cross_validate

    X, y, offset = _rows("logit", n=600)
    with sklearn.config_context(enable_metadata_routing=True):
        clf = (BayesianLogisticRegression().set_fit_request(offset=True)
               .set_score_request(offset=True))
        scores = cross_validate(clf, X, y, params={"offset": offset}, cv=KFold(3))
    by_hand = [BayesianLogisticRegression().fit(X[train], y[train], offset=offset[train])
               .score(X[test], y[test], offset=offset[test])
               for train, test in KFold(3).split(X)]
    np.testing.assert_allclose(scores["test_score"], by_hand, rtol=1e-12)
