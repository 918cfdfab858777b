"""Counts over an exposure: ``exposure=`` and ``offset=`` of the count models, checked
against statsmodels' GLM and NegativeBinomial, through predict, score, sample_y and
to_arviz, and through a coreset pipeline by metadata routing."""

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from scipy import stats
from sklearn.linear_model import PoissonRegressor
from sklearn.pipeline import Pipeline as SkPipeline

from skcoreset import (BayesianNegativeBinomialRegression, BayesianPoissonRegression,
                       QuasiNewtonCoreset, UniformCoreset)
from skcoreset._linalg import gaussian_kl_cholesky
from skcoreset.pipeline import Pipeline

from ..conftest import elpd

sm = pytest.importorskip("statsmodels.api")

# a wide prior: the posterior mode is statsmodels' maximum-likelihood estimate
_FLAT = dict(prior_scale=1e3, intercept_prior_scale=1e3)


def _counts(n=1500, seed=0, alpha=0.5):
    """Real-shaped counts: skewed exposures (person-years from 0.1 to 20), a binary and two
    heavy-tailed features, NB2 noise with ``alpha`` (0: Poisson)."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.random(n) < 0.3, rng.standard_t(4, n) * 0.5, rng.normal(size=n)])
    exposure = rng.lognormal(0.5, 1.0, n).clip(0.1, 20.0)
    mu = exposure * np.exp(X @ [0.6, -0.4, 0.2] - 0.5)
    if alpha == 0:
        return X, rng.poisson(mu).astype(float), exposure
    return X, rng.negative_binomial(1 / alpha, 1 / (1 + alpha * mu)).astype(float), exposure


def _design(X):
    return sm.add_constant(X, prepend=False)  # intercept last, as theta


@pytest.mark.parametrize("method", ["laplace", "kl_proximal", "pass_glm", "mcmc"])
def test_poisson_offset_and_exposure_are_statsmodels_glm(method):
    X, y, e = _counts(alpha=0)
    offset = np.random.default_rng(1).normal(0.0, 0.3, len(y))
    glm = sm.GLM(y, _design(X), family=sm.families.Poisson(), offset=offset,
                 exposure=e).fit()
    options = dict(method=method, n_draws=400, random_state=0) if method == "mcmc" else {}
    reg = BayesianPoissonRegression(**_FLAT, **options).fit(X, y, exposure=e, offset=offset)
    sd = np.sqrt(np.diag(glm.cov_params()))
    if method == "mcmc":  # Monte Carlo error of the mean of 400 effective draws
        np.testing.assert_allclose(reg.posterior_.mean, glm.params, atol=0.2 * sd.max())
    elif method == "pass_glm":  # the polynomial surrogate errs by a fraction of an sd
        np.testing.assert_allclose(reg.posterior_.mean, glm.params, atol=0.5 * sd.max())
    else:
        np.testing.assert_allclose(reg.posterior_.mean, glm.params, rtol=2e-4, atol=1e-5)
        np.testing.assert_allclose(reg.posterior_.std, sd, rtol=1e-3)
    # predictions of counts over an exposure: statsmodels' mean at the mode
    if method == "laplace":
        mean = reg.predict(X[:5], exposure=e[:5], offset=offset[:5])
        sm_mean = glm.predict(_design(X[:5]), exposure=e[:5], offset=offset[:5])
        np.testing.assert_allclose(mean, sm_mean, rtol=2e-3)  # plus the posterior spread


def test_offset_is_log_exposure_and_both_add_up():
    X, y, e = _counts(alpha=0, n=400)
    by_exposure = BayesianPoissonRegression().fit(X, y, exposure=e)
    by_offset = BayesianPoissonRegression().fit(X, y, offset=np.log(e))
    np.testing.assert_allclose(by_offset.posterior_.mean, by_exposure.posterior_.mean,
                               rtol=1e-10)
    np.testing.assert_allclose(by_offset.log_evidence_, by_exposure.log_evidence_, rtol=1e-10)
    both = BayesianPoissonRegression().fit(X, y, exposure=np.sqrt(e), offset=0.5 * np.log(e))
    np.testing.assert_allclose(both.posterior_.mean, by_exposure.posterior_.mean, rtol=1e-8)
    np.testing.assert_allclose(by_offset.predict(X, offset=np.log(e)),
                               by_exposure.predict(X, exposure=e), rtol=1e-12)
    assert by_offset.score(X, y, offset=np.log(e)) == pytest.approx(
        by_exposure.score(X, y, exposure=e), rel=1e-12)


@pytest.mark.parametrize("method", ["laplace", "kl_proximal"])
def test_negative_binomial_with_exposure_is_statsmodels(method):
    """The coefficients, their standard errors, alpha and its standard error of
    statsmodels' NegativeBinomial (NB2) maximum-likelihood fit with an exposure."""
    X, y, e = _counts()
    fit = sm.NegativeBinomial(y, _design(X), exposure=e).fit(disp=0)
    reg = BayesianNegativeBinomialRegression(method=method, **_FLAT).fit(X, y, exposure=e)
    params, bse = np.asarray(fit.params), np.asarray(fit.bse)
    np.testing.assert_allclose(reg.alpha_, params[-1], rtol=1e-4)
    np.testing.assert_allclose(reg.alpha_std_, bse[-1], rtol=1e-3)
    # the coefficients' posterior is given alpha_; statsmodels' bse allow for alpha, from
    # which the coefficients are nearly orthogonal (NB2's information is block diagonal)
    tol = 1e-3 if method == "laplace" else 0.02  # VI's mean is within 2% of an sd of it
    np.testing.assert_allclose(reg.posterior_.mean, params[:-1], atol=tol * bse.max())
    np.testing.assert_allclose(reg.posterior_.std, bse[:-1], rtol=0.01)
    table = reg.summary().to_frame()
    assert table.index[-1] == "alpha"
    assert table.loc["alpha", "mean"] == reg.alpha_
    assert table.loc["alpha", "sd"] == reg.alpha_std_
    lower, upper = reg.alpha_interval()
    assert lower < reg.alpha_ < upper
    np.testing.assert_allclose(np.log(upper) - np.log(reg.alpha_),
                               1.959964 * reg.log_alpha_std_, rtol=1e-6)
    assert reg.summary().header["Parameters"] == "5"


def test_negative_binomial_mcmc_samples_alpha_with_the_coefficients():
    """NUTS on (theta, log alpha) with an offset: the posterior of alpha and of the
    coefficients is statsmodels' estimate and standard errors, up to Monte Carlo error and
    the skewness of alpha's posterior."""
    X, y, e = _counts(n=500)
    fit = sm.NegativeBinomial(y, _design(X), exposure=e).fit(disp=0)
    params, bse = np.asarray(fit.params), np.asarray(fit.bse)
    mcmc = BayesianNegativeBinomialRegression(method="mcmc", n_draws=200, random_state=0,
                                              **_FLAT).fit(X, y, offset=np.log(e))
    assert mcmc.alpha_samples_.shape == (len(mcmc.posterior_samples_),)
    assert mcmc.posterior_samples_.shape[1] == 4 and len(mcmc.r_hat_) == 4
    np.testing.assert_allclose(mcmc.alpha_, params[-1], atol=0.3 * bse[-1])
    np.testing.assert_allclose(mcmc.alpha_std_, bse[-1], rtol=0.2)
    np.testing.assert_allclose(mcmc.posterior_.mean, params[:-1], atol=0.3 * bse.max())
    np.testing.assert_allclose(mcmc.posterior_.std, bse[:-1], rtol=0.2)
    row = mcmc.summary().to_frame().loc["alpha"]
    assert row["mean"] == mcmc.alpha_ and row["r_hat"] < 1.05 and row["ess"] > 100
    lower, upper = mcmc.alpha_interval(0.9)
    np.testing.assert_allclose([lower, upper], np.quantile(mcmc.alpha_samples_, [0.05, 0.95]))
    az = pytest.importorskip("arviz")
    idata = mcmc.to_arviz()
    alpha = idata.posterior["alpha"].values
    np.testing.assert_array_equal(np.sort(alpha.ravel()),
                                  np.sort(mcmc.alpha_samples_[-alpha.size:]))
    assert az.rhat(idata)["alpha"] < 1.05


def test_negative_binomial_fixed_alpha_has_no_uncertainty():
    X, y, e = _counts(n=300)
    reg = BayesianNegativeBinomialRegression(alpha=0.4).fit(X, y, exposure=e)
    assert reg.alpha_ == 0.4 and reg.alpha_std_ == 0.0
    assert reg.alpha_interval() == (0.4, 0.4)
    # underdispersed counts (the rounded means): the Poisson limit, no Laplace sd
    y = np.round(e * np.exp(X @ [0.6, -0.4, 0.2] - 0.5))
    reg = BayesianNegativeBinomialRegression().fit(X, y, exposure=e)
    assert reg.alpha_ == 1e-8 and np.isnan(reg.alpha_std_)


def test_negative_binomial_accepts_rates_with_weights():
    """Like scikit-learn's count regressors: rates y / e with weights e (a quasi-likelihood,
    not the counts over their exposure)."""
    X, y, e = _counts(n=400)
    rates = BayesianNegativeBinomialRegression(alpha=0.5).fit(X, y / e, sample_weight=e)
    assert np.all(np.isfinite(rates.coef_))
    np.testing.assert_allclose(rates.coef_, [0.6, -0.4, 0.2], atol=0.3)


def test_sample_y_and_to_arviz_count_over_the_exposure():
    X, y, e = _counts(n=200)
    reg = BayesianNegativeBinomialRegression().fit(X, y, exposure=e)
    draws = reg.sample_y(X[:4], n_draws=40_000, random_state=0, exposure=e[:4])
    mean, sd = reg.predict(X[:4], return_std=True, exposure=e[:4])
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * sd / np.sqrt(40_000))
    np.testing.assert_allclose(draws.std(axis=0), sd, rtol=0.05)
    az = pytest.importorskip("arviz")
    idata = reg.to_arviz(n_draws=50, random_state=0)  # the training rows, with their exposure
    theta = np.concatenate([idata.posterior["coef"].values,
                            idata.posterior["intercept"].values[..., None]], -1).reshape(-1, 4)
    mu = e * np.exp(theta[:, :3] @ X.T + theta[:, 3:])
    r = 1 / reg.alpha_
    np.testing.assert_allclose(idata.log_likelihood["y"].values.reshape(-1, len(y)),
                               stats.nbinom.logpmf(y, r, r / (r + mu)), rtol=1e-9)
    assert idata.posterior["alpha"].shape == (4, 50)
    assert elpd(az.loo(idata)) < 0
    passed = reg.to_arviz(X[:20], y[:20], offset=np.log(e[:20]), n_draws=50, random_state=0)
    np.testing.assert_allclose(passed.log_likelihood["y"].values,
                               idata.log_likelihood["y"].values[..., :20], rtol=1e-12)


def test_bad_offsets_are_refused_clearly():
    X, y, e = _counts(n=100, alpha=0)
    with pytest.raises(ValueError, match="offset contains NaN"):
        BayesianPoissonRegression().fit(X, y, offset=np.full(100, np.nan))
    with pytest.raises(ValueError, match="one entry per row"):
        BayesianPoissonRegression().fit(X, y, offset=np.zeros(99))
    with pytest.raises(ValueError, match="link='softplus'.*exposure"):
        BayesianPoissonRegression(link="softplus").fit(X, y, offset=np.log(e))
    # the Poisson model fits the exposure exp(offset) as weights: it must be a float64,
    # and the message names the cause and the fix
    for big in (800.0, -800.0):
        reg = BayesianPoissonRegression()
        with pytest.raises(ValueError, match=r"(?s)exponential is beyond float64.*weighted "
                           r"by it.*Centre the offset.*negative binomial"):
            reg.fit(X, y, offset=np.full(100, big))
        assert not hasattr(reg, "n_features_in_")
    # the softplus link takes an exposure: the rate times it
    reg = BayesianPoissonRegression(link="softplus").fit(X, y, exposure=e)
    draws = reg.sample_y(X[:3], n_draws=20_000, random_state=0, exposure=e[:3])
    np.testing.assert_allclose(draws.mean(axis=0), reg.predict(X[:3], exposure=e[:3]),
                               rtol=0.03)


_NOT_NUMBERS = {
    "boolean mask": (lambda e: e > 1.0, "boolean array"),
    "all-True mask": (lambda e: np.ones(len(e), dtype=bool), "boolean array"),
    "string": (lambda e: "2", "the string '2'"),
    "strings": (lambda e: e.astype(str), "dtype <U"),
    "object": (lambda e: object(), "not a number"),
    "objects": (lambda e: [object()] * len(e), "not a number"),
}


@pytest.mark.parametrize("case", sorted(_NOT_NUMBERS))
@pytest.mark.parametrize("name", ["exposure", "offset"])
def test_exposure_and_offset_that_are_not_numbers_are_refused_by_name(name, case):
    """A boolean mask read as 0.0 and 1.0 fitted silently as if no exposure were given;
    a string failed inside numpy with a message naming no argument."""
    X, y, e = _counts(n=60, alpha=0)
    make, detail = _NOT_NUMBERS[case]
    bad = make(e)
    expected = rf"{name} must be a number or a 1-D array of numbers, got .*{detail}"
    for est in (BayesianPoissonRegression(), BayesianPoissonRegression(method="pass_glm"),
                BayesianNegativeBinomialRegression(alpha=0.5),
                UniformCoreset(M=20, model="poisson", random_state=0)):
        with pytest.raises(TypeError, match=expected):
            est.fit(X, y, **{name: bad})
        assert not hasattr(est, "n_features_in_")
    reg = BayesianPoissonRegression().fit(X, y)
    for call in (reg.predict, reg.sample_y):
        with pytest.raises(TypeError, match=expected):
            call(X, **{name: bad})


def test_dask_exposure_that_is_a_mask_is_refused_before_computing():
    da = pytest.importorskip("dask.array")
    X, y, e = _counts(n=60, alpha=0)
    Xd, yd = da.from_array(X, chunks=20), da.from_array(y, chunks=20)
    mask = da.from_array(e > 1.0, chunks=20)
    for name in ("exposure", "offset"):
        with pytest.raises(TypeError, match=f"{name} must be .* got a boolean array"):
            BayesianPoissonRegression().fit(Xd, yd, **{name: mask})
    # a zero-dimensional array is a scalar
    one = BayesianPoissonRegression().fit(X, y, exposure=np.array(2.0))
    two = BayesianPoissonRegression().fit(X, y, exposure=2.0)
    np.testing.assert_array_equal(one.posterior_.mean, two.posterior_.mean)


@pytest.mark.parametrize("method", ["laplace", "kl_proximal"])
@pytest.mark.parametrize("make", [BayesianNegativeBinomialRegression, BayesianPoissonRegression])
def test_exposure_and_offset_of_memmaps_and_dask_arrays_fit_as_in_memory(make, method,
                                                                         tmp_path):
    """Offsets travel with the chunks of the rows: a ``np.memmap`` (read in chunks) and
    dask arrays in three chunks (the offset given in memory, sent to the chunks) give the
    fit of the rows in memory, overdispersion included, to rounding."""
    da = pytest.importorskip("dask.array")
    X, y, e = _counts(n=900)
    offset = np.random.default_rng(2).normal(0.0, 0.3, len(y))
    reference = make(method=method).fit(X, y, exposure=e, offset=offset)
    mapped = np.memmap(tmp_path / "X.dat", dtype=np.float64, mode="w+", shape=X.shape)
    mapped[:] = X
    fits = [make(method=method).fit(mapped, y, exposure=e, offset=offset),
            make(method=method).fit(da.from_array(X, chunks=300), da.from_array(y, chunks=300),
                                    exposure=da.from_array(e, chunks=300), offset=offset)]
    for fit in fits:
        np.testing.assert_allclose(fit.posterior_.mean, reference.posterior_.mean, rtol=1e-10)
        np.testing.assert_allclose(fit.posterior_.std, reference.posterior_.std, rtol=1e-10)
        np.testing.assert_allclose(fit.loglik_, reference.loglik_, rtol=1e-12)
        if make is BayesianNegativeBinomialRegression:
            np.testing.assert_allclose(fit.alpha_, reference.alpha_, rtol=1e-10)
            np.testing.assert_allclose(fit.alpha_std_, reference.alpha_std_, rtol=1e-8)


def test_negative_binomial_offset_on_dask_is_statsmodels():
    """The coefficients and alpha of statsmodels' NegativeBinomial (NB2) maximum-likelihood
    fit with an offset, from dask arrays in three chunks."""
    da = pytest.importorskip("dask.array")
    X, y, e = _counts()
    offset = np.log(e) + np.random.default_rng(3).normal(0.0, 0.2, len(y))
    fit = sm.NegativeBinomial(y, _design(X), offset=offset).fit(disp=0)
    params, bse = np.asarray(fit.params), np.asarray(fit.bse)
    reg = BayesianNegativeBinomialRegression(**_FLAT).fit(
        da.from_array(X, chunks=500), da.from_array(y, chunks=500),
        offset=da.from_array(offset, chunks=500))
    np.testing.assert_allclose(reg.alpha_, params[-1], rtol=1e-4)
    np.testing.assert_allclose(reg.alpha_std_, bse[-1], rtol=1e-3)
    np.testing.assert_allclose(reg.posterior_.mean, params[:-1], atol=1e-3 * bse.max())


def test_negative_binomial_mcmc_on_dask_refuses_to_sample_alpha_with_the_fix():
    """Sampling alpha with the coefficients needs rows in memory: on dask chunks the
    message says to fix alpha (the coefficients are then sampled given it)."""
    da = pytest.importorskip("dask.array")
    X, y, e = _counts(n=300)
    Xd, yd = da.from_array(X, chunks=100), da.from_array(y, chunks=100)
    with pytest.raises(ValueError, match="for dask arrays pass a number as alpha"):
        BayesianNegativeBinomialRegression(method="mcmc", n_draws=100).fit(
            Xd, yd, offset=np.log(e))


def test_dask_offsets_of_the_wrong_length_or_values_are_refused_by_name():
    da = pytest.importorskip("dask.array")
    X, y, e = _counts(n=90)
    Xd, yd = da.from_array(X, chunks=30), da.from_array(y, chunks=30)
    for name in ("exposure", "offset"):
        with pytest.raises(ValueError, match=rf"{name} must have shape \(90,\), got \(89,\)"):
            BayesianNegativeBinomialRegression().fit(Xd, yd, **{name: e[:-1]})
    with pytest.raises(ValueError, match="exposure contains values <= 0"):
        BayesianNegativeBinomialRegression().fit(Xd, yd, exposure=-e)
    bad = np.log(e)
    bad[40] = np.inf
    with pytest.raises(ValueError, match="offset contains NaN or infinity"):
        BayesianNegativeBinomialRegression().fit(Xd, yd, offset=da.from_array(bad, chunks=30))


# --- through a coreset pipeline -------------------------------------------------------------

def test_exposure_reaches_the_coreset_by_routing_and_by_step_name():
    """The coreset step fits the rates y / e weighted by e and hands them on: the same
    coreset and posterior as passing those rates by hand."""
    X, y, e = _counts(n=3000, alpha=0)
    by_hand = Pipeline([("coreset", UniformCoreset(M=300, model="poisson", random_state=0)),
                        ("reg", BayesianPoissonRegression())]).fit(
        X, y / e, coreset__sample_weight=e)
    by_name = Pipeline([("coreset", UniformCoreset(M=300, random_state=0)),
                        ("reg", BayesianPoissonRegression())]).fit(X, y, coreset__exposure=e)
    assert by_name[0].model_ == "poisson"  # inferred from the counts, not the rates
    np.testing.assert_array_equal(by_name[0].sample_indices_, by_hand[0].sample_indices_)
    np.testing.assert_allclose(by_name[-1].posterior_.mean, by_hand[-1].posterior_.mean,
                               rtol=1e-10)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = Pipeline([
            ("coreset", UniformCoreset(M=300, random_state=0).set_fit_request(exposure=True)),
            ("reg", BayesianPoissonRegression().set_fit_request(exposure=False)
             .set_score_request(exposure=True))]).fit(X, y, exposure=e)
        score = routed.score(X, y, exposure=e)
    np.testing.assert_allclose(routed[-1].posterior_.mean, by_hand[-1].posterior_.mean,
                               rtol=1e-10)
    assert score == pytest.approx(routed[-1].score(X, y, exposure=e), rel=1e-12)
    # the posterior of the coreset's counts over their exposure, each row standing for
    # weight / exposure rows
    rows, weight = by_name[0].sample_indices_, by_name[0].sample_weight_
    counts = BayesianPoissonRegression().fit(X[rows], y[rows], sample_weight=weight / e[rows],
                                             exposure=e[rows])
    np.testing.assert_allclose(by_name[-1].posterior_.mean, counts.posterior_.mean, rtol=1e-8)
    np.testing.assert_allclose(by_name[-1].posterior_.std, counts.posterior_.std, rtol=1e-8)


def test_negative_binomial_offset_through_a_quasi_newton_coreset_is_statsmodels():
    """The coreset is built with the offsets in the rows' linear predictors and hands
    them on with its rows: the pipeline's posterior is the all-rows fit's (Laplace KL) and
    its coefficients and alpha statsmodels' NegativeBinomial(offset=) within a tenth of
    an sd."""
    X, y, e = _counts(n=6000)
    offset = np.log(e) + np.random.default_rng(3).normal(0.0, 0.2, len(y))
    fit = sm.NegativeBinomial(y, _design(X), offset=offset).fit(disp=0)
    params, bse = np.asarray(fit.params), np.asarray(fit.bse)
    full = BayesianNegativeBinomialRegression(**_FLAT).fit(X, y, offset=offset)
    pipe = Pipeline([("coreset", QuasiNewtonCoreset(M=1500, random_state=0)),
                     ("reg", BayesianNegativeBinomialRegression(**_FLAT))]).fit(
        X, y, coreset__offset=offset)
    coreset, reg = pipe[0], pipe[-1]
    assert coreset.model_ == "negative_binomial" and len(coreset.sample_indices_) < 2000
    np.testing.assert_array_equal(coreset.sample_offset_, offset[coreset.sample_indices_])
    kl = gaussian_kl_cholesky(reg.posterior_.mean, reg.posterior_.cov_cholesky,
                              full.posterior_.mean, full.posterior_.cov_cholesky)
    assert kl < 0.01 and coreset.kl_estimate_ < 0.01
    np.testing.assert_allclose(reg.posterior_.mean, params[:-1], atol=0.1 * bse[:-1].min())
    np.testing.assert_allclose(reg.alpha_, params[-1], atol=0.1 * bse[-1])
    # without the offsets the same rows fit another posterior: they matter
    rows, weights = coreset.sample_indices_, coreset.sample_weight_
    blind = BayesianNegativeBinomialRegression(**_FLAT).fit(
        X[rows], y[rows], sample_weight=weights)
    assert np.max(np.abs(blind.posterior_.mean - params[:-1]) / bse[:-1]) > 1


def test_quasi_newton_coreset_reads_offsets_in_every_step(tmp_path):
    """The offsets travel with the rows through a ``np.memmap`` (the same coreset), the
    Monte Carlo iterations (exact and subsampled sums, Laplace and ensemble draws) and the
    exact distance: each reads the coreset's posterior as the full data's, far below the
    nats a missing offset costs."""
    X, y, e = _counts(n=3000)
    offset = np.log(e)
    make = dict(M=600, model="negative_binomial", random_state=0)
    reference = QuasiNewtonCoreset(**make).fit(X, y, offset=offset)
    mapped = np.memmap(tmp_path / "X.dat", dtype=np.float64, mode="w+", shape=X.shape)
    mapped[:] = X
    on_file = QuasiNewtonCoreset(**make).fit(mapped, y, offset=offset)
    np.testing.assert_array_equal(on_file.sample_indices_, reference.sample_indices_)
    np.testing.assert_allclose(on_file.sample_weight_, reference.sample_weight_, rtol=1e-10)
    assert reference.kl_estimate_ < 1e-3
    for options in (dict(n_subsample=None), dict(n_subsample=1000),
                    dict(sampler="mcmc", n_draws=50)):
        refined = QuasiNewtonCoreset(**make, max_iter=2, **options).fit(X, y, offset=offset)
        assert np.all(refined.history_[:, 0] < 1e-3)
    exact = QuasiNewtonCoreset(**make, distance="exact").fit(X, y, offset=offset)
    assert exact.exact_kl_estimate_ < 0.01


def test_exact_correction_reads_the_coreset_rows_offsets():
    """MCMC on a negative binomial coreset with offsets, weighted to the exact posterior
    of all rows: the draws' own density is that of the coreset rows with their offsets (it
    was read without them: 170 nats and k-hat 18 on these data)."""
    X, y, e = _counts(n=3000)
    pipe = Pipeline([("coreset", QuasiNewtonCoreset(M=600, random_state=0)),
                     ("reg", BayesianNegativeBinomialRegression(
                         method="mcmc", n_draws=200, random_state=0))],
                    exact_correction=True).fit(X, y, coreset__exposure=e)
    assert pipe.exact_corrected_ and pipe.pareto_k_ < 0.7 and pipe.kl_before_ < 0.01


def test_negative_binomial_exposure_through_a_uniform_coreset_is_its_rows_fit():
    """Exposure and offset add up in the linear predictor; the final estimator fits the
    coreset's counts with their weights and offsets, given the overdispersion of all rows."""
    X, y, e = _counts(n=2000)
    offset = np.random.default_rng(4).normal(0.0, 0.2, len(y))
    pipe = Pipeline([("coreset", UniformCoreset(M=500, random_state=0)),
                     ("reg", BayesianNegativeBinomialRegression())]).fit(
        X, y, coreset__exposure=e, coreset__offset=offset)
    rows, weights = pipe[0].sample_indices_, pipe[0].sample_weight_
    np.testing.assert_allclose(pipe[0].sample_offset_, offset[rows] + np.log(e[rows]),
                               rtol=1e-12)
    X_core, y_core, w_core = pipe[0].fit_coreset(X, y, exposure=e, offset=offset,
                                                 estimator=pipe[-1])
    np.testing.assert_array_equal(y_core, y[rows])  # counts, not rates
    every_row = BayesianNegativeBinomialRegression().fit(X, y, exposure=e, offset=offset)
    by_hand = BayesianNegativeBinomialRegression(alpha=pipe[0].family_.alpha).fit(
        X[rows], y[rows], sample_weight=weights, exposure=e[rows], offset=offset[rows])
    np.testing.assert_allclose(pipe[-1].posterior_.mean, by_hand.posterior_.mean, rtol=1e-8)
    np.testing.assert_allclose(pipe[-1].alpha_, every_row.alpha_, rtol=1e-8)
    np.testing.assert_allclose(pipe[-1].alpha_std_, every_row.alpha_std_, rtol=1e-6)


def test_exposure_in_a_coreset_needs_a_skcoreset_pipeline():
    X, y, e = _counts(n=300)
    with pytest.raises(ValueError, match="need skcoreset.pipeline.Pipeline"):
        SkPipeline([("coreset", UniformCoreset(M=50)),
                    ("reg", BayesianPoissonRegression())]).fit(X, y, coreset__exposure=e)


def test_pipeline_score_honours_exposure_without_routing():
    """scikit-learn's Pipeline.score drops it and scores rates against counts."""
    X, y, e = _counts(n=400, alpha=0)
    pipe = Pipeline([("coreset", UniformCoreset(M=200, random_state=0)),
                     ("reg", BayesianPoissonRegression())]).fit(X, y, coreset__exposure=e)
    assert pipe.score(X, y, exposure=e) == pytest.approx(
        pipe[-1].score(X, y, exposure=e), rel=1e-12)
    assert pipe.score(X, y, exposure=e) > 0.3 > pipe.score(X, y / e * 0 + y)
    sk = Pipeline([("reg", PoissonRegressor())]).fit(X, y / e, reg__sample_weight=e)
    with pytest.raises(TypeError, match=r"PoissonRegressor.score does not accept \['exposure'\]"):
        sk.score(X, y, exposure=e)


def test_negative_binomial_mcmc_keeps_alpha_fixed_when_the_data_hardly_determine_it():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2)) * 0.5
    y = rng.poisson(np.exp(X @ [0.5, -0.3] + 1.0))  # Poisson: a flat profile in log alpha
    reg = BayesianNegativeBinomialRegression(method="mcmc", n_draws=100, random_state=0)
    with pytest.warns(UserWarning, match="hardly determine the overdispersion"):
        reg.fit(X, y)
    assert reg.log_alpha_std_ > 2 and not hasattr(reg, "alpha_samples_")
    assert reg.posterior_samples_.shape[1] == 3


def test_to_arviz_exposure_needs_the_rows():
    X, y, e = _counts(n=100)
    reg = BayesianPoissonRegression().fit(X, y, exposure=e)
    with pytest.raises(ValueError, match="pass X and y with them"):
        reg.to_arviz(exposure=e)


# --- rates beyond float64's square root ------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: BayesianPoissonRegression(),
    lambda: BayesianNegativeBinomialRegression(alpha=0.5),
    lambda: BayesianPoissonRegression(method="mcmc", n_draws=200, n_burnin=100,
                                      random_state=0)])
@pytest.mark.parametrize("exposure", [1e-160, 1e-200])
def test_predictions_of_rates_beyond_1e154_are_the_log_space_closed_form(make, exposure):
    """Fitted over an exposure of 1e-160 the rate per unit exposure is ~1e160: its variance
    overflows float64, and the std was clipped to 1.007e152 for every row (or inf)."""
    X, y, _ = _counts(n=200, alpha=0)
    reg = make().fit(X, y, exposure=exposure)
    mean, std = reg.predict(X[:6], return_std=True)
    theta = np.append(reg.coef_, reg.intercept_)
    Xi = np.column_stack([X[:6], np.ones(6)])
    if reg.method != "mcmc":
        # log-normal moments of the rate over eta ~ N(m, v), from the Gaussian posterior
        L = reg.posterior_.cov_cholesky
        m, v = Xi @ theta, np.sum((Xi @ L) ** 2, axis=1)
        log_mean, ratio = m + v / 2, np.expm1(v)
        alpha = getattr(reg, "alpha_", 0.0)
    else:
        # the same moments over the draws, in log space (logsumexp)
        from scipy.special import logsumexp
        eta = Xi @ reg.posterior_.samples.T
        S = eta.shape[1]
        log_mean = logsumexp(eta, axis=1) - np.log(S)
        ratio = np.exp(logsumexp(2 * eta, axis=1) - np.log(S) - 2 * log_mean) - 1
        alpha = 0.0
    # Var[y] = E[mu] + Var[mu] + alpha (Var[mu] + E[mu]^2), divided by E[mu]^2
    ratio_y = np.exp(-log_mean) + ratio + alpha * (ratio + 1)
    np.testing.assert_allclose(np.log(mean), log_mean, rtol=1e-12)
    np.testing.assert_allclose(std / mean, np.sqrt(ratio_y), rtol=1e-8)
    assert len(np.unique(std)) == 6  # row-specific, not a cap
    # the same model over the exposure it was fitted on: ordinary counts
    small = reg.predict(X[:6], exposure=exposure)
    np.testing.assert_allclose(small, mean * exposure, rtol=1e-12)


def test_predictions_beyond_float64_warn_with_the_numbers():
    X, y, _ = _counts(n=200, alpha=0)
    reg = BayesianPoissonRegression().fit(X, y)
    unit_mean = reg.predict(X[:6])
    over = unit_mean > np.finfo(float).max / 1e308  # times 1e308 beyond the largest float
    assert 0 < over.sum() < 6
    with pytest.warns(RuntimeWarning, match=rf"{over.sum()} of 6 predicted means or standard "
                      r"deviations are beyond float64 \(up to about 1e30\d\) and are "
                      "returned as inf"):
        mean, std = reg.predict(X[:6], return_std=True, exposure=1e308)
    np.testing.assert_array_equal(np.isinf(mean), over)
    np.testing.assert_allclose(mean[~over], 1e308 * unit_mean[~over], rtol=1e-12)
    assert np.all(np.isfinite(std[~over]))


_NB_METHODS = [
    lambda: BayesianNegativeBinomialRegression(alpha=0.5),
    lambda: BayesianNegativeBinomialRegression(method="mcmc", n_draws=200, n_burnin=100,
                                               random_state=0)]


@pytest.mark.parametrize("make", _NB_METHODS)
def test_negative_binomial_predictions_take_the_offset_in_log_space(make):
    """exp(800) is beyond float64, yet predictions over it are exp(800) times the rates:
    compared in log space (the mean in units of 2**exponent)."""
    X, y, e = _counts(n=200)
    reg = make().fit(X, y)
    rows = X[:6]
    rate, rate_var, rate_exponent = reg._scaled_predictive_moments(rows)
    for o in (800.0, np.linspace(750, 850, 6)):
        mean, var, exponent = reg._scaled_predictive_moments(
            rows, reg._linear_offset(rows, None, o))
        log2 = np.log(2.0)
        np.testing.assert_allclose(np.log(mean) + exponent * log2,
                                   np.log(rate) + rate_exponent * log2 + o, rtol=0,
                                   atol=1e-12 * 800)
        if np.all(exponent > 0):  # the variance scales by exp(2 o)
            np.testing.assert_allclose(np.log(var) + 2 * exponent * log2,
                                       np.log(rate_var) + 2 * rate_exponent * log2 + 2 * o,
                                       rtol=0, atol=1e-12 * 1600)
    # below float64's smallest number the means are 0
    assert np.all(reg.predict(rows, offset=-800.0) == 0.0)
    # moderate offsets: the exposure exp(o) they stand for, to rounding
    o = np.log(e[:6]) + 3.0
    for std in (False, "mean", True):
        np.testing.assert_allclose(reg.predict(rows, offset=o, return_std=std),
                                   reg.predict(rows, exposure=np.exp(o), return_std=std),
                                   rtol=1e-12)
    np.testing.assert_allclose(reg.predict(rows, exposure=e[:6], offset=o - np.log(e[:6])),
                               reg.predict(rows, exposure=np.exp(o)), rtol=1e-12)


def test_negative_binomial_fits_offsets_beyond_700_where_the_counts_are_representable():
    """Counts over an exposure of exp(800 + log e): the intercept absorbs -800 and the
    predictions over the same offset are the counts; statsmodels' with the moderate
    offset log(e) (the same model, with the intercept shifted by 800)."""
    X, y, e = _counts(n=400)
    big = np.log(e) + 800.0
    # priors wide enough that a shift of 800 changes nothing (and the mode is the MLE)
    reg = BayesianNegativeBinomialRegression(alpha=0.5, prior_scale=1e3,
                                             intercept_prior_scale=1e6)
    reg.fit(X, y, offset=big)
    ref = BayesianNegativeBinomialRegression(alpha=0.5, prior_scale=1e3,
                                             intercept_prior_scale=1e6)
    ref.fit(X, y, offset=np.log(e))
    np.testing.assert_allclose(reg.coef_, ref.coef_, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(reg.intercept_ + 800.0, ref.intercept_, atol=1e-4)
    sm_fit = sm.GLM(y, sm.add_constant(X, prepend=False),
                    family=sm.families.NegativeBinomial(alpha=0.5),
                    offset=np.log(e)).fit()
    sm_mean = sm_fit.predict(sm.add_constant(X[:20], prepend=False), offset=np.log(e[:20]))
    mean = reg.predict(X[:20], offset=big[:20])
    np.testing.assert_allclose(mean, ref.predict(X[:20], offset=np.log(e[:20])), rtol=1e-3)
    # the mean at the posterior mode (a wide prior: statsmodels' MLE) over the offset
    plug_in = np.exp(X[:20] @ reg.coef_ + reg.intercept_ + big[:20])
    np.testing.assert_allclose(plug_in, sm_mean, rtol=1e-3)
    # the predictive mean adds the posterior variance of eta: E[exp(eta)] > exp(E[eta])
    assert np.all(mean > plug_in) and np.all(mean < 1.05 * plug_in)
    assert 0.2 < reg.score(X, y, offset=big) == pytest.approx(
        ref.score(X, y, offset=np.log(e)), abs=1e-3)
    # draws of counts over the offset, and the residuals of the counts
    y_draws = reg.sample_y(X[:5], n_draws=20_000, random_state=0, offset=big[:5])
    np.testing.assert_allclose(y_draws.mean(axis=0), mean[:5], rtol=0.05)
    for kind in ("response", "pearson", "deviance"):
        np.testing.assert_allclose(reg.residuals(X, y, kind, offset=big),
                                   ref.residuals(X, y, kind, offset=np.log(e)),
                                   rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(np.sum(reg.residuals(X, y, offset=big) ** 2), reg.deviance_,
                               rtol=1e-10)
    # the rows are kept with their offsets: loo of the training rows is that of the rows
    # passed with the same offsets, and the shifted fit's (the same model) to 1e-3
    kept, passed = reg.loo(random_state=0), reg.loo(X, y, offset=big, random_state=0)
    np.testing.assert_allclose(kept.loo_i, passed.loo_i, rtol=1e-12)
    np.testing.assert_allclose(kept.loo_i, ref.loo(random_state=0).loo_i, rtol=1e-3)
    # MCMC draws of an intercept near -800: their rates exp(-800) underflow, their means
    # over the offset are those of the Laplace fit
    draws = clone(reg).set_params(method="mcmc", n_draws=300, n_burnin=200, random_state=0)
    draws.fit(X, y, offset=big)
    np.testing.assert_allclose(draws.predict(X[:20], offset=big[:20]), mean, rtol=0.05)
