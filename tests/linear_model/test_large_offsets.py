"""Offsets of any finite size: the negative binomial model takes ``offset + log(exposure)``
in its linear predictor everywhere (fit, predictions, draws, ``to_arviz`` and ``loo``, dask
arrays, coreset constructors, ``exact_kl``), checked against the NB2 probability mass in
log space, against scipy's, and against the same model with the offset shifted into the
intercept; the Poisson model's exposure weights refuse an exponential
beyond float64 by name."""

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

from skcoreset import (BayesianNegativeBinomialRegression, BayesianPoissonRegression,
                       QuasiNewtonCoreset, UniformCoreset)
from skcoreset.metrics import exact_kl
from skcoreset.metrics._exact import exact_correction
from skcoreset.pipeline import Pipeline

# priors wide enough that shifting the intercept by 800 changes the posterior by < 1e-6 sd
_WIDE = dict(alpha=0.5, prior_scale=1e3, intercept_prior_scale=1e6)
_SHIFT = 800.0


def _counts(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=n), rng.random(n) < 0.4])
    exposure = rng.lognormal(0.0, 1.0, n)
    mu = exposure * np.exp(X @ [0.5, -0.4] + 0.3)
    y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu)).astype(float)  # alpha = 1 / 2
    return X, y, np.log(exposure)


def _draws(idata):
    """The posterior draws of a to_arviz export as rows ``[coef..., intercept]``."""
    coef = idata.posterior["coef"].values
    theta = np.concatenate([coef, idata.posterior["intercept"].values[..., None]], -1)
    return theta.reshape(-1, theta.shape[-1])


def _nb2_logpmf(y, eta, alpha):
    """``log P(y)`` of NB2 with mean ``mu = exp(eta)`` and variance ``mu + alpha mu^2``,
    ``log Gamma(y + r) - log Gamma(r) - log y! + r log(r / (r + mu)) + y log(mu / (r + mu))``
    with ``r = 1 / alpha``, in log space: ``log(r + mu) = logaddexp(log r, eta)`` for
    means of any size."""
    r = 1.0 / alpha
    log_total = np.logaddexp(np.log(r), eta)
    return (gammaln(y + r) - gammaln(r) - gammaln(y + 1.0) + r * (np.log(r) - log_total)
            + y * (eta - log_total))


@pytest.fixture(scope="module")
def shifted_fits():
    """The same model fitted with the offsets o + 800 and o: intercepts 800 apart."""
    X, y, o = _counts()
    big = BayesianNegativeBinomialRegression(**_WIDE).fit(X, y, offset=o + _SHIFT)
    small = BayesianNegativeBinomialRegression(**_WIDE).fit(X, y, offset=o)
    return X, y, o, big, small


def test_fit_with_an_offset_of_800_is_the_intercept_shifted(shifted_fits):
    X, y, o, big, small = shifted_fits
    np.testing.assert_allclose(big.coef_, small.coef_, rtol=1e-6)
    np.testing.assert_allclose(big.intercept_ + _SHIFT, small.intercept_, atol=1e-6)
    np.testing.assert_allclose(big.posterior_.std, small.posterior_.std, rtol=1e-6)
    np.testing.assert_allclose(big.loglik_, small.loglik_, rtol=1e-9)


def test_to_arviz_log_likelihood_beyond_float64_is_the_nb2_mass_in_log_space(shifted_fits):
    """Rows passed with offsets o + 800 to the fit of o: means of exp(800) (beyond
    float64) whose counts are small; the log-likelihood of every draw is the NB2 mass
    in log space, and with the offset o scipy's nbinom.logpmf."""
    pytest.importorskip("arviz")
    X, y, o, big, small = shifted_fits
    rows = slice(0, 6)
    far = small.to_arviz(X[rows], y[rows], offset=o[rows] + _SHIFT, n_draws=4, n_chains=2,
                         random_state=0)
    theta = _draws(far)
    eta = X[rows] @ theta[:, :-1].T + theta[:, -1] + o[rows, None] + _SHIFT
    expected = _nb2_logpmf(y[rows, None], eta, small.alpha_).T
    got = far.log_likelihood["y"].values.reshape(len(theta), -1)
    assert np.all(expected < -1500)  # counts of a few at a mean of exp(800)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    # the moderate offset: scipy's probability mass with mu = exp(eta + o)
    near = small.to_arviz(X[rows], y[rows], offset=o[rows], n_draws=4, n_chains=2,
                          random_state=0)
    r = 1.0 / small.alpha_
    mu = np.exp(eta - _SHIFT)
    scipy_logpmf = stats.nbinom.logpmf(y[rows, None], r, r / (r + mu)).T
    np.testing.assert_allclose(near.log_likelihood["y"].values.reshape(len(theta), -1),
                               scipy_logpmf, rtol=1e-10)
    # (the log-space reference is scipy's where scipy's is finite)
    np.testing.assert_allclose(_nb2_logpmf(y[rows, None], eta - _SHIFT, small.alpha_).T,
                               scipy_logpmf, rtol=1e-10)
    # the exposure and the offset are one representation: both add up
    both = small.to_arviz(X[rows], y[rows], exposure=np.exp(o[rows]), offset=_SHIFT,
                          n_draws=4, n_chains=2, random_state=0)
    np.testing.assert_allclose(both.log_likelihood["y"].values, far.log_likelihood["y"].values,
                               rtol=1e-12)


def test_loo_of_offsets_of_800_is_that_of_the_shifted_model(shifted_fits):
    """The training rows are kept with their offsets: loo of the fit of o + 800 is the
    fit of o's (the same model), on the kept rows and on rows passed."""
    X, y, o, big, small = shifted_fits
    kept = big.loo(n_draws=300, random_state=0)
    np.testing.assert_allclose(kept.loo_i, small.loo(n_draws=300, random_state=0).loo_i,
                               rtol=1e-6)
    passed = big.loo(X[:50], y[:50], offset=o[:50] + _SHIFT, n_draws=300, random_state=0)
    np.testing.assert_allclose(passed.loo_i, kept.loo_i[:50], rtol=1e-12)


def test_dask_fit_predict_and_loo_with_offsets_of_800_are_in_memory(shifted_fits):
    """Dask chunks carry the offsets o + 800 in log space: the fit, the predictions (mean,
    both standard deviations), R^2, draws of counts and loo of the kept chunks equal the
    in-memory ones."""
    da = pytest.importorskip("dask.array")
    X, y, o, big, small = shifted_fits
    Xd, yd = da.from_array(X, chunks=(100, 2)), da.from_array(y, chunks=100)
    offset = da.from_array(o + _SHIFT, chunks=100)
    on_dask = BayesianNegativeBinomialRegression(**_WIDE).fit(Xd, yd, offset=offset)
    np.testing.assert_allclose(on_dask.posterior_.mean, big.posterior_.mean, rtol=1e-9)
    np.testing.assert_allclose(on_dask.posterior_.std, big.posterior_.std, rtol=1e-8)
    for std in (False, "mean", True):
        lazy = on_dask.predict(Xd, return_std=std, offset=offset)
        memory = big.predict(X, return_std=std, offset=o + _SHIFT)
        computed = da.compute(*lazy) if std else lazy.compute()
        np.testing.assert_allclose(computed, memory, rtol=1e-9)
    # the moderate offset's predictions, from the other fit (the same model)
    np.testing.assert_allclose(on_dask.predict(Xd, offset=offset).compute(),
                               small.predict(X, offset=o), rtol=1e-5)
    assert on_dask.score(Xd, yd, offset=offset) == pytest.approx(
        big.score(X, y, offset=o + _SHIFT), rel=1e-9)
    draws = on_dask.sample_y(Xd[:100], n_draws=4000, random_state=0, offset=offset[:100])
    mean, sd = big.predict(X[:100], return_std=True, offset=o[:100] + _SHIFT)
    z = (draws.mean(axis=0).compute() - mean) / (sd / np.sqrt(4000))
    assert np.all(np.abs(z) < 5)
    np.testing.assert_allclose(on_dask.loo(n_draws=200, random_state=0).loo_i,
                               big.loo(n_draws=200, random_state=0).loo_i, rtol=1e-8)


def test_dask_predictions_of_a_mean_of_exp_800_are_in_memory():
    """A mean of e^800 counts is beyond float64 (inf, with the warning); the dask blocks
    take the offset in log space as the rows in memory do, whose log is the closed form."""
    da = pytest.importorskip("dask.array")
    X, y, o = _counts(n=120)
    reg = BayesianNegativeBinomialRegression(alpha=0.5).fit(X, y, offset=o)
    Xd = da.from_array(X, chunks=(40, 2))
    for shift in (-_SHIFT, 300.0 - _SHIFT):  # means of e^-800 (0) and of e^-500
        lazy = reg.predict(Xd, offset=da.from_array(o + _SHIFT + shift, chunks=40)).compute()
        np.testing.assert_allclose(lazy, reg.predict(X, offset=o + _SHIFT + shift),
                                   rtol=1e-12)
    tiny = reg.predict(X, offset=o - 500.0)
    np.testing.assert_allclose(np.log(tiny), np.log(reg.predict(X, offset=o)) - 500.0,
                               rtol=1e-12)
    with pytest.warns(RuntimeWarning, match="beyond float64"):
        huge = reg.predict(Xd, offset=o + _SHIFT).compute()
    assert np.all(np.isinf(huge))


def test_poisson_offsets_beyond_700_in_log_space_and_its_fit_refuses_800_by_name():
    """The Poisson model predicts and evaluates counts over any offset with the log link
    (in memory and on dask; here means of about 1e-306), but fits the exposure
    exp(offset) as weights: beyond float64 the message names the cause and the fix, on
    dask too."""
    da = pytest.importorskip("dask.array")
    X, y, o = _counts(n=200)
    reg = BayesianPoissonRegression(prior_scale=1e3, intercept_prior_scale=1e6)
    reg.fit(X, y, offset=o)
    Xd = da.from_array(X, chunks=(50, 2))
    far = o - 705.0
    np.testing.assert_allclose(reg.predict(Xd, offset=far).compute(),
                               reg.predict(X, offset=far), rtol=1e-12)
    np.testing.assert_allclose(np.log(reg.predict(X, offset=far)),
                               np.log(reg.predict(X, offset=o)) - 705.0, rtol=1e-12)
    pytest.importorskip("arviz")
    idata = reg.to_arviz(X[:20], y[:20], offset=far[:20], n_draws=5, n_chains=2,
                         random_state=0)
    theta = _draws(idata)
    mu = np.exp(X[:20] @ theta[:, :-1].T + theta[:, -1] + far[:20, None])
    np.testing.assert_allclose(idata.log_likelihood["y"].values.reshape(len(theta), -1),
                               stats.poisson.logpmf(y[:20, None], mu).T, rtol=1e-12)
    message = r"(?s)exponential is beyond float64.*Centre the offset.*negative binomial"
    with pytest.raises(ValueError, match=message):
        BayesianPoissonRegression().fit(X, y, offset=o + _SHIFT)
    with pytest.raises(ValueError, match=message):
        BayesianPoissonRegression().fit(Xd, da.from_array(y, chunks=50),
                                        offset=da.from_array(o + _SHIFT, chunks=50))
    with pytest.raises(ValueError, match=message):
        UniformCoreset(M=50, model="poisson", random_state=0).fit(X, y, offset=o + _SHIFT)


@pytest.mark.parametrize("coreset", [UniformCoreset(M=150, random_state=0),
                                     QuasiNewtonCoreset(M=150, random_state=0)])
def test_coresets_and_exact_kl_of_offsets_of_800_are_the_shifted_models(coreset):
    """Coreset constructors build under offsets o + 800 as under o (the same rows and
    weights), the final fit is the shifted one, and the exact distance of either to all
    rows (and the exact correction's) is the same."""
    X, y, o = _counts(n=600)
    fits = []
    for shift in (_SHIFT, 0.0):
        pipe = Pipeline([("coreset", coreset),
                         ("reg", BayesianNegativeBinomialRegression(**_WIDE))],
                        exact_correction=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the coreset's accuracy is not measured here
            fits.append(pipe.fit(X, y, coreset__offset=o + shift))
    big, small = fits
    np.testing.assert_array_equal(big[0].sample_indices_, small[0].sample_indices_)
    np.testing.assert_allclose(big[0].sample_weight_, small[0].sample_weight_, rtol=1e-6)
    np.testing.assert_allclose(big[-1].intercept_ + _SHIFT, small[-1].intercept_, atol=1e-5)
    near = exact_kl(small, X, y, offset=o, n_draws=200, random_state=0)
    far = exact_kl(big, X, y, offset=o + _SHIFT, n_draws=200, random_state=0)
    assert np.isfinite(far.kl) and far.kl == pytest.approx(near.kl, rel=1e-4, abs=1e-6)
    np.testing.assert_allclose(far.mean[:-1], near.mean[:-1], rtol=1e-5)
    np.testing.assert_allclose(far.mean[-1] + _SHIFT, near.mean[-1], atol=1e-5)
    # the exact correction weighs the same draws, shifted, by the same weights
    far, near = (exact_correction(fit, X, y, offset=o + shift, n_draws=200, random_state=0)
                 for fit, shift in ((big, _SHIFT), (small, 0.0)))
    assert far.pareto_k == pytest.approx(near.pareto_k, rel=1e-4)
    np.testing.assert_allclose(far.draws[:, :-1], near.draws[:, :-1], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(far.draws[:, -1] + _SHIFT, near.draws[:, -1], atol=1e-5)
