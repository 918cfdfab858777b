"""The ArviZ export, ``to_arviz()``: ArviZ's model comparison, plots and summaries run on
every method's output, and its groups hold what the model says, checked against
scipy.stats."""

import pickle
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, BayesianProbitRegression, UniformCoreset)
from skcoreset.pipeline import Pipeline

from ..conftest import elpd, groups, pointwise_elpd

az = pytest.importorskip("arviz")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

_FAST_MCMC = dict(method="mcmc", n_draws=200, n_burnin=100, random_state=0)


def plot_ppc(idata):
    if hasattr(az, "plot_ppc"):
        return az.plot_ppc(idata, num_pp_samples=20)
    return az.plot_ppc_dist(idata)


def _binary(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_t(5, size=(n, 2))
    return X, np.where(rng.random(n) < expit(X @ [1.0, -0.7] + 0.3), "yes", "no")


def _counts(n=120, seed=0, overdispersed=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    mu = np.exp(X @ [0.4, -0.3] + 1.0)
    if overdispersed:  # alpha = 1 / 2
        return X, rng.negative_binomial(2.0, 2.0 / (2.0 + mu))
    return X, rng.poisson(mu)


def _overdispersed():
    return _counts(overdispersed=True)


def _independent_loglik(est, X, y, theta, alpha=None):
    """log p(y_n | theta_s) by scipy.stats, shape (S, n); ``alpha`` (S,): the negative
    binomial's draws of alpha sampled with theta (else ``alpha_``)."""
    coef, intercept = theta[:, :-1], theta[:, -1]
    eta = coef @ X.T + intercept[:, None]
    if isinstance(est, BayesianLogisticRegression):
        return stats.bernoulli.logpmf(y == est.classes_[1], expit(eta))
    if isinstance(est, BayesianProbitRegression):
        return stats.bernoulli.logpmf(y == est.classes_[1], stats.norm.cdf(eta))
    if isinstance(est, BayesianNegativeBinomialRegression):
        r = 1.0 / (est.alpha_ if alpha is None else alpha[:, None])
        return stats.nbinom.logpmf(y, r, r / (r + np.exp(eta)))
    return stats.poisson.logpmf(y, np.exp(eta))


_CASES = [
    (BayesianLogisticRegression, "laplace", _binary),
    (BayesianLogisticRegression, "kl_proximal", _binary),
    (BayesianLogisticRegression, "pass_glm", _binary),
    (BayesianLogisticRegression, "mcmc", _binary),
    (BayesianProbitRegression, "laplace", _binary),
    (BayesianPoissonRegression, "laplace", _counts),
    (BayesianPoissonRegression, "kl_proximal", _counts),
    (BayesianPoissonRegression, "pass_glm", _counts),
    (BayesianPoissonRegression, "mcmc", _counts),
    (BayesianNegativeBinomialRegression, "laplace", _overdispersed),
    (BayesianNegativeBinomialRegression, "kl_proximal", _overdispersed),
    (BayesianNegativeBinomialRegression, "mcmc", _overdispersed),
]


@pytest.mark.parametrize("cls, method, data", _CASES,
                         ids=[f"{c.__name__}-{m}" for c, m, _ in _CASES])
def test_loo_plot_ppc_and_summary_run_on_every_method(cls, method, data):
    X, y = data()
    options = _FAST_MCMC if method == "mcmc" else dict(method=method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short MCMC runs and PASS-GLM's accuracy warn
        est = cls(**options).fit(X, y)
    idata = est.to_arviz(n_draws=250, random_state=0)
    n_chains, n_draws = idata.posterior["coef"].shape[:2]
    assert n_chains >= 4
    # the log-likelihood group is that of the model at the exported draws
    theta = np.concatenate([idata.posterior["coef"].values,
                            idata.posterior["intercept"].values[..., None]], axis=-1)
    # MCMC samples the negative binomial's alpha with theta: each draw has its own
    joint = method == "mcmc" and hasattr(est, "alpha_samples_")
    alpha = idata.posterior["alpha"].values.ravel() if joint else None
    expected = _independent_loglik(est, X, y, theta.reshape(-1, 3), alpha)
    loglik = idata.log_likelihood["y"].values
    assert loglik.shape == (n_chains, n_draws, len(y))
    np.testing.assert_allclose(loglik.reshape(-1, len(y)), expected, rtol=1e-9, atol=1e-9)
    # loo: PSIS on these values; its pointwise elpd is below the pointwise lppd, and the
    # difference, the effective number of parameters, is about the 3 of the model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PSIS warns of high Pareto k on a few draws
        loo = az.loo(idata, pointwise=True)
    lppd = np.log(np.mean(np.exp(expected), axis=0))
    loo_i = pointwise_elpd(loo)
    assert np.all(loo_i <= lppd + 1e-6)
    assert 1.5 < lppd.sum() - elpd(loo) < 6.0
    np.testing.assert_allclose(elpd(loo), loo_i.sum(), rtol=1e-10)
    observed = idata.observed_data["y"].values
    if cls in (BayesianLogisticRegression, BayesianProbitRegression):
        np.testing.assert_array_equal(observed, (y == "yes").astype(int))
    else:
        np.testing.assert_array_equal(observed, y)
    assert idata.posterior_predictive["y"].shape == (n_chains, n_draws, len(y))
    table = az.summary(idata)
    assert table.loc["coef[x0]", "r_hat"] < 1.05
    plot_ppc(idata)
    matplotlib.pyplot.close("all")


def test_gaussian_posterior_chains_are_independent_draws():
    X, y = _binary()
    clf = BayesianLogisticRegression(fit_intercept=False).fit(X, y)
    idata = clf.to_arviz(n_draws=500, n_chains=3, random_state=0)
    assert idata.posterior["coef"].shape == (3, 500, 2)
    assert "intercept" not in idata.posterior
    rhat = az.rhat(idata)["coef"].values
    assert np.all(np.abs(rhat - 1.0) < 0.01)
    draws = idata.posterior["coef"].values.reshape(-1, 2)
    np.testing.assert_allclose(draws.mean(axis=0), clf.posterior_.mean,
                               atol=4 * clf.posterior_.std.max() / np.sqrt(1500))


def test_posterior_predictive_draws_follow_the_model():
    """The predictive draws average to predict()'s posterior predictive mean."""
    X, y = _counts(n=60)
    reg = BayesianPoissonRegression().fit(X, y)
    idata = reg.to_arviz(n_draws=2000, random_state=1)
    draws = idata.posterior_predictive["y"].values.reshape(-1, len(y))
    mean, sd = reg.predict(X, return_std=True)
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * sd / np.sqrt(len(draws)))


def test_feature_names_name_the_coordinates():
    pd = pytest.importorskip("pandas")
    X, y = _counts()
    reg = BayesianPoissonRegression().fit(pd.DataFrame(X, columns=["age", "dose"]), y)
    idata = reg.to_arviz(n_draws=100, random_state=0)
    assert list(idata.posterior["coef"].coords["feature"].values) == ["age", "dose"]
    assert list(az.summary(idata).index[:2]) == ["coef[age]", "coef[dose]"]


def test_rows_passed_replace_the_training_rows():
    X, y = _binary(n=200)
    clf = BayesianLogisticRegression().fit(X[:150], y[:150])
    idata = clf.to_arviz(X[150:], y[150:], n_draws=100, random_state=0)
    assert idata.log_likelihood["y"].shape == (4, 100, 50)
    with pytest.raises(ValueError, match="both X and y"):
        clf.to_arviz(X[150:])
    with pytest.raises(ValueError, match="not in classes_"):
        clf.to_arviz(X[150:], np.full(50, "maybe"))


def test_weighted_fit_exports_its_weighted_rows():
    """A weighted row's log-likelihood is its weight times the row's: their sum at a draw
    is the weighted log-likelihood the posterior conditions on."""
    X, y = _binary(n=400)
    pipe = Pipeline([("coreset", UniformCoreset(M=100, random_state=0)),
                     ("clf", BayesianLogisticRegression())]).fit(X, y)
    est = pipe[-1]
    idata = est.to_arviz(n_draws=100, random_state=0)
    rows = est.to_arviz(X[pipe[0].sample_indices_], y[pipe[0].sample_indices_], n_draws=100,
                        random_state=0)
    np.testing.assert_allclose(idata.log_likelihood["y"].values,
                               rows.log_likelihood["y"].values * pipe[0].sample_weight_,
                               rtol=1e-12)
    assert elpd(az.loo(est.to_arviz(X, y, n_draws=100))) < 0


def test_too_many_values_are_refused_with_the_numbers():
    X, y = _binary(n=200)
    clf = BayesianLogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="200 rows and 4 x 100000 draws"):
        clf.to_arviz(X, y, n_draws=100_000)
    # the training rows: left out with a warning that points to loo
    with pytest.warns(UserWarning, match=r"Use loo\(\)"):
        idata = clf.to_arviz(n_draws=100_000)
    assert "log_likelihood" not in groups(idata)


@pytest.mark.parametrize("n_draws", [0, 2.5, True])
def test_bad_numbers_of_draws_are_refused(n_draws):
    X, y = _binary()
    clf = BayesianLogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="n_draws must be a positive integer"):
        clf.to_arviz(n_draws=n_draws)


@pytest.mark.parametrize("cls, method, data", _CASES,
                         ids=[f"{c.__name__}-{m}" for c, m, _ in _CASES])
def test_overwriting_the_training_arrays_after_fit_changes_nothing(cls, method, data):
    """The estimator keeps copies of its training rows, not the caller's arrays."""
    X, y = data()
    X, y = X.copy(), y.copy()
    exposure = np.linspace(0.5, 2.0, len(y)) if cls is BayesianPoissonRegression else None
    options = _FAST_MCMC if method == "mcmc" else dict(method=method)
    rows = {} if exposure is None else dict(exposure=exposure)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(**options).fit(X, y, **rows)
    before = est.to_arviz(n_draws=20, random_state=0)
    X[:] = 7.0
    y[:] = y[::-1]
    if exposure is not None:
        exposure[:] = 100.0
    after = est.to_arviz(n_draws=20, random_state=0)
    for group in ("log_likelihood", "observed_data"):
        np.testing.assert_array_equal(getattr(after, group)["y"].values,
                                      getattr(before, group)["y"].values)


@pytest.mark.parametrize("sparse_X", [False, True])
def test_large_training_rows_are_referenced_and_a_change_is_refused(monkeypatch, sparse_X):
    """Rows beyond the copy limit are kept by reference (no second copy of a large matrix)
    with a checksum: unchanged they are read as they are, changed in place they are refused
    rather than read."""
    from scipy import sparse

    from skcoreset.linear_model import _results

    monkeypatch.setattr(_results, "COPIED_VALUES", 10)
    X, y = _binary(n=200)
    X = sparse.csr_matrix(X) if sparse_X else X.copy()
    clf = BayesianLogisticRegression().fit(X, y)
    kept = _results.kept_rows(clf).X
    data = (kept.data, X.data) if sparse_X else (kept, X)
    assert np.shares_memory(*data)
    before = clf.to_arviz(n_draws=20, random_state=0)
    np.testing.assert_array_equal(clf.to_arviz(n_draws=20, random_state=0).log_likelihood["y"],
                                  before.log_likelihood["y"])
    (X.data if sparse_X else X)[0] += 1.0
    with pytest.raises(ValueError, match="changed in place after fit"):
        clf.to_arviz(n_draws=20)
    with pytest.raises(ValueError, match="changed in place after fit"):
        clf.loo()


def test_negative_binomial_mcmc_data_groups_use_each_draws_alpha():
    """MCMC samples alpha with the coefficients: each draw's log-likelihood is the
    negative binomial log pmf at that draw's own alpha, not at the posterior mean."""
    X, y = _counts(n=60, overdispersed=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = BayesianNegativeBinomialRegression(**_FAST_MCMC).fit(X, y)
    idata = est.to_arviz()
    coef = idata.posterior["coef"].values.reshape(-1, 2)
    intercept = idata.posterior["intercept"].values.ravel()
    alpha = idata.posterior["alpha"].values.ravel()
    assert np.ptp(alpha) > 0.1 * np.mean(alpha)
    mu = np.exp(X @ coef.T + intercept)  # (n, S)
    r = 1.0 / alpha
    expected = stats.nbinom.logpmf(y[:, None], r, r / (r + mu)).T
    np.testing.assert_allclose(idata.log_likelihood["y"].values.reshape(len(alpha), -1),
                               expected, rtol=1e-9, atol=1e-9)
    # loo sums the same pointwise values
    np.testing.assert_allclose(est.loo().elpd_loo, elpd(_az_loo(idata)), rtol=_LOO_RTOL)


def _az_loo(idata, reff=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # high Pareto k on a few rows
        return az.loo(idata, pointwise=True, reff=reff)


# loo() implements PSIS as ArviZ 0.x does (to rounding). ArviZ 1.x (arviz_stats) has its
# own implementation of the Pareto smoothing, whose elpd differs by up to 1e-5 relative
# (measured: 1e-7 to 9e-6 on these cases, 0.002 nats at most), a thousandth of elpd's
# Monte Carlo standard error; against it the comparison is to that precision.
_ARVIZ_1 = int(az.__version__.split(".")[0]) >= 1
_LOO_RTOL = 1e-4 if _ARVIZ_1 else 1e-10
_LOO_ATOL = 1e-2 if _ARVIZ_1 else 1e-12


def _check_loo(ours, theirs):
    np.testing.assert_allclose(ours.elpd_loo, elpd(theirs), rtol=_LOO_RTOL)
    # ArviZ 1.x's standard error takes the pointwise elpd's sd with n - 1 in the
    # denominator, 0.x's (and loo()'s) with n
    n = len(ours.loo_i)
    se = ours.se * np.sqrt(n / (n - 1)) if _ARVIZ_1 else ours.se
    np.testing.assert_allclose(se, float(theirs.se), rtol=_LOO_RTOL)
    p_loo = theirs.p_loo if hasattr(theirs, "p_loo") else theirs.p  # ArviZ 1.x: p
    np.testing.assert_allclose(ours.p_loo, float(p_loo), rtol=1e-9, atol=_LOO_ATOL)
    np.testing.assert_allclose(ours.loo_i, pointwise_elpd(theirs), rtol=_LOO_RTOL,
                               atol=_LOO_ATOL)
    # ArviZ 1.x fits the generalized Pareto tail its own way: its k-hat differs from
    # 0.x's (and loo()'s) by up to 0.12 on single rows of these cases (measured with
    # ArviZ 1.3), and so may its warning flag
    np.testing.assert_allclose(ours.pareto_k, np.asarray(theirs.pareto_k),
                               rtol=0 if _ARVIZ_1 else 1e-10, atol=0.2 if _ARVIZ_1 else 1e-12)
    if not _ARVIZ_1:
        assert ours.warning == bool(theirs.warning)


@pytest.mark.parametrize("cls, data", [(BayesianLogisticRegression, _binary),
                                       (BayesianNegativeBinomialRegression, _overdispersed)])
def test_loo_is_arviz_loo_of_the_same_draws(cls, data):
    """loo() in blocks of rows: az.loo of to_arviz with the same seed (reff 1, the draws
    of a Gaussian posterior being independent), without ArviZ."""
    X, y = data()
    est = cls().fit(X, y)
    ours = est.loo(n_draws=300, random_state=0)
    _check_loo(ours, _az_loo(est.to_arviz(n_draws=300, random_state=0), reff=1.0))
    assert ours.n_samples == 1200 and ours.n_data_points == len(y)
    # blocks of a few rows give the same
    from skcoreset import _arviz
    block = _arviz._LOO_BLOCK_VALUES
    try:
        _arviz._LOO_BLOCK_VALUES = 7 * 1200
        np.testing.assert_allclose(est.loo(n_draws=300, random_state=0).loo_i, ours.loo_i,
                                   rtol=1e-13)
    finally:
        _arviz._LOO_BLOCK_VALUES = block
    # rows passed
    held = est.loo(X[:40], y[:40], n_draws=300, random_state=0)
    _check_loo(held, _az_loo(est.to_arviz(X[:40], y[:40], n_draws=300, random_state=0),
                             reff=1.0))


def test_loo_of_mcmc_draws_takes_arvizs_relative_ess():
    X, y = _counts()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = BayesianPoissonRegression(**_FAST_MCMC).fit(X, y, exposure=np.full(len(y), 2.0))
    _check_loo(est.loo(), _az_loo(est.to_arviz()))


def test_loo_of_a_weighted_fit_and_of_many_rows():
    """Weighted rows (their log-likelihood times the weight), and rows beyond the
    draw-by-row groups of to_arviz: PSIS-LOO in blocks."""
    X, y = _counts(n=300)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    est = BayesianPoissonRegression().fit(X, y, sample_weight=w)
    _check_loo(est.loo(n_draws=200, random_state=1),
               _az_loo(est.to_arviz(n_draws=200, random_state=1), reff=1.0))
    X, y = _counts(n=30_000, seed=2)
    est = BayesianPoissonRegression().fit(X, y)
    with pytest.warns(UserWarning, match="Use loo"):
        est.to_arviz()
    big = est.loo(n_draws=100, random_state=0)
    assert big.n_data_points == 30_000 and not big.warning
    assert abs(big.p_loo - 3) < 0.5  # about the model's 3 parameters


def test_loo_without_rows_is_refused_with_the_fix():
    X, y = _counts(n=200)
    est = BayesianPoissonRegression(method="pass_glm")
    est.partial_fit(X, y)
    with pytest.raises(ValueError, match=r"Pass the rows, e.g. loo\(X, y\)"):
        est.loo()
    assert est.loo(X, y, n_draws=100).n_data_points == 200


def test_pipeline_loo_and_to_arviz_evaluate_all_rows_after_a_coreset():
    """After a coreset step, the pipeline's loo and to_arviz are over the rows it was
    fitted on (kept copies, transformed by the steps before the estimator): the elpd of
    the whole data under the coreset's posterior."""
    from sklearn.preprocessing import StandardScaler

    X, y = _binary(n=600)
    pipe = Pipeline([("scale", StandardScaler()),
                     ("coreset", UniformCoreset(M=150, random_state=0)),
                     ("clf", BayesianLogisticRegression())]).fit(X, y)
    Xt = pipe[0].transform(X)
    ours = pipe.loo(n_draws=200, random_state=0)
    assert ours.n_data_points == 600
    _check_loo(ours, _az_loo(pipe[-1].to_arviz(Xt, y, n_draws=200, random_state=0),
                             reff=1.0))
    idata = pipe.to_arviz(n_draws=50, random_state=0)
    assert idata.log_likelihood["y"].shape == (4, 50, 600)
    X[:] = 0.0  # the caller's arrays change: the kept copies do not
    assert pipe.loo(n_draws=200, random_state=0).elpd_loo == ours.elpd_loo
    assert pipe.loo(X[:10], y[:10], n_draws=20).n_data_points == 10
    with pytest.raises(ValueError, match="needs both X and y"):
        pipe.loo(X)


@pytest.mark.parametrize("Estimator", [BayesianPoissonRegression,
                                       BayesianNegativeBinomialRegression])
def test_dask_fit_loo_sums_over_its_chunks(Estimator):
    """A dask fit's loo() evaluates its rows chunk by chunk where they live: the in-memory
    fit's loo on the same rows and weights, to rounding; to_arviz() says to use it."""
    da = pytest.importorskip("dask.array")
    X, y = _counts(n=300)
    w = np.linspace(0.5, 2.0, len(y))
    est = Estimator().fit(da.from_array(X, chunks=(70, 2)), da.from_array(y, chunks=70),
                          sample_weight=da.from_array(w, chunks=70))
    memory = Estimator().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(est.posterior_.mean, memory.posterior_.mean, rtol=1e-6)
    ours = est.loo(n_draws=200, random_state=0)
    theirs = memory.loo(n_draws=200, random_state=0)
    np.testing.assert_allclose(ours.loo_i, theirs.loo_i, rtol=1e-6)
    np.testing.assert_allclose(ours.pareto_k, theirs.pareto_k, atol=1e-6)
    assert ours.elpd_loo == pytest.approx(theirs.elpd_loo, rel=1e-8)
    assert ours.p_loo == pytest.approx(theirs.p_loo, rel=1e-5)
    with pytest.warns(UserWarning, match=r"dask arrays.*Use loo\(\)"):
        est.to_arviz(n_draws=10)
    np.testing.assert_allclose(est.loo(X, y, n_draws=100, random_state=0).loo_i,
                               memory.loo(X, y, n_draws=100, random_state=0).loo_i, rtol=1e-6)
    # the reference to the dask arrays is not pickled: the rows are passed again
    with pytest.raises(ValueError, match=r"unpickled .* Pass the rows, e.g. loo\(X, y\)"):
        pickle.loads(pickle.dumps(est)).loo()
    # with an exposure the fitted rows are weighted rates, not the counts: no rows kept
    exposed = BayesianPoissonRegression().fit(da.from_array(X, chunks=(70, 2)),
                                              da.from_array(y, chunks=70),
                                              exposure=np.full(len(y), 2.0))
    with pytest.raises(ValueError, match="with the Poisson model.s exposure"):
        exposed.loo()
