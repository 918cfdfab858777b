"""Posterior summaries of the GLM estimators: MCMC diagnostics, credible intervals,
summary(), sample_y() and the ArviZ export."""

import sys
import warnings

import numpy as np
import pytest
from scipy import stats

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, GaussianPosterior, SamplePosterior)
from skcoreset._inference.diagnostics import (autocorr_time, bulk_effective_sample_size,
                                              effective_sample_size, rank_r_hat, split_r_hat)

_MCMC = dict(method="mcmc", n_draws=1600, random_state=0)


def _ar1_chains(rho, n_steps, n_chains, p, rng):
    """Stationary AR(1) chains with unit marginal variance and lag-one correlation rho."""
    noise = rng.normal(size=(n_steps, n_chains, p)) * np.sqrt(1.0 - rho**2)
    chain = np.empty_like(noise)
    chain[0] = rng.normal(size=(n_chains, p))
    for t in range(1, n_steps):
        chain[t] = rho * chain[t - 1] + noise[t]
    return chain


# --- diagnostics on chains with known answers ------------------------------------------------

def test_iid_draws_have_ess_n_and_r_hat_one():
    chain = np.random.default_rng(0).normal(size=(4000, 8, 3))
    np.testing.assert_allclose(autocorr_time(chain), 1.0, atol=0.1)
    np.testing.assert_allclose(effective_sample_size(chain), 32_000, rtol=0.1)
    np.testing.assert_allclose(split_r_hat(chain), 1.0, atol=0.005)


@pytest.mark.parametrize("rho", [0.5, 0.9])
def test_ar1_chain_ess_matches_theory(rho):
    n_steps, n_chains = 20_000, 8
    chain = _ar1_chains(rho, n_steps, n_chains, 2, np.random.default_rng(1))
    theory = n_steps * n_chains * (1 - rho) / (1 + rho)
    np.testing.assert_allclose(effective_sample_size(chain), theory, rtol=0.12)
    np.testing.assert_allclose(autocorr_time(chain), (1 + rho) / (1 - rho), rtol=0.12)
    np.testing.assert_allclose(split_r_hat(chain), 1.0, atol=0.01)


def _arviz_diagnostics(chain):
    """ArviZ's bulk ESS and rank-normalized R-hat of each parameter of (n_steps, n_chains,
    p) chains."""
    az = pytest.importorskip("arviz")
    draws = chain.transpose(1, 0, 2)  # ArviZ's (chain, draw) layout
    return (np.array([az.ess(draws[..., j], method="bulk") for j in range(chain.shape[2])]),
            np.array([az.rhat(draws[..., j], method="rank") for j in range(chain.shape[2])]))


@pytest.mark.parametrize("case", ["iid", "ar1", "anticorrelated", "apart", "heavy tails",
                                  "odd and short"])
def test_bulk_ess_and_rank_r_hat_are_arviz(case):
    """Vehtari et al. (2021) as ArviZ implements it, to rounding: rank normalization, the
    split, Geyer's initial monotone sequence and its truncation rules."""
    rng = np.random.default_rng(3)
    chain = {
        "iid": lambda: rng.normal(size=(1000, 4, 3)),
        "ar1": lambda: _ar1_chains(0.9, 501, 4, 3, rng),
        "anticorrelated": lambda: _ar1_chains(-0.5, 300, 4, 2, rng),
        "apart": lambda: _ar1_chains(0.99, 200, 3, 2, rng) + np.arange(3)[None, :, None],
        "heavy tails": lambda: rng.standard_t(1.5, size=(400, 4, 2)) ** 3,
        "odd and short": lambda: _ar1_chains(0.3, 11, 2, 2, rng),
    }[case]()
    ess, r_hat = _arviz_diagnostics(chain)
    np.testing.assert_allclose(bulk_effective_sample_size(chain), ess, rtol=1e-10)
    np.testing.assert_allclose(rank_r_hat(chain), r_hat, rtol=1e-12)


def test_bulk_ess_and_rank_r_hat_known_answers():
    rng = np.random.default_rng(4)
    # independent draws: about as many effective draws as draws; AR(1) chains
    # n (1 - rho) / (1 + rho), like the autocorrelation-time estimate
    np.testing.assert_allclose(bulk_effective_sample_size(rng.normal(size=(4000, 4, 2))),
                               16_000, rtol=0.1)
    chain = _ar1_chains(0.8, 5000, 4, 2, rng)
    np.testing.assert_allclose(bulk_effective_sample_size(chain), 20_000 / 9, rtol=0.15)
    # a monotone transformation changes neither (ranks), where the classic ones move
    heavy = np.exp(3 * chain)
    np.testing.assert_allclose(bulk_effective_sample_size(heavy),
                               bulk_effective_sample_size(chain))
    np.testing.assert_allclose(rank_r_hat(heavy), rank_r_hat(chain))
    # chains that agree in location but not in scale: only the folded half of R-hat sees it
    scales = rng.normal(size=(2000, 4, 1)) * np.array([1.0, 1.0, 3.0, 3.0])[None, :, None]
    assert split_r_hat(scales)[0] < 1.01 < rank_r_hat(scales)[0]
    assert np.isnan(rank_r_hat(np.ones((10, 2, 1)))[0])
    assert np.isnan(bulk_effective_sample_size(np.ones((10, 2, 1)))[0])


def test_r_hat_detects_chains_that_disagree_or_drift():
    rng = np.random.default_rng(2)
    # chains centred 2 sd apart: between-chain variance dominates
    apart = rng.normal(size=(1000, 4, 1)) + 2.0 * np.arange(4)[None, :, None]
    assert split_r_hat(apart)[0] > 2.0
    # every chain drifts the same way: the chain means agree and only the split sees it
    drift = rng.normal(size=(1000, 4, 1)) + np.linspace(0, 3, 1000)[:, None, None]
    assert split_r_hat(drift)[0] > 1.2
    # the formula by hand on a 2-chain, 4-step example (halves of 2 steps)
    chain = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 0.0], [3.0, 1.0]])
    halves = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 3.0], [0.0, 1.0]])  # (4 halves, 2 steps)
    w = halves.var(axis=1, ddof=1).mean()
    b_over_n = halves.mean(axis=1).var(ddof=1)
    np.testing.assert_allclose(split_r_hat(chain), np.sqrt((0.5 * w + b_over_n) / w))


def test_diagnostics_reject_bad_shapes():
    with pytest.raises(ValueError, match="n_steps, n_chains"):
        split_r_hat(np.zeros(10))
    with pytest.raises(ValueError, match="at least one step"):
        effective_sample_size(np.zeros((0, 2, 1)))
    # a constant parameter, or a chain too short to split in halves, has no R-hat
    assert np.isnan(split_r_hat(np.ones((10, 2, 1)))[0])
    assert np.all(np.isnan(split_r_hat(np.random.default_rng(0).normal(size=(3, 4, 2)))))


# --- credible intervals ----------------------------------------------------------------------

def test_gaussian_credible_interval_is_mean_plus_minus_z_sd():
    post = GaussianPosterior(np.array([1.0, -2.0]), np.diag([4.0, 0.25]))
    lower, upper = post.credible_interval(0.95)
    np.testing.assert_allclose(lower, [1.0 - 1.959964 * 2.0, -2.0 - 1.959964 * 0.5], rtol=1e-6)
    np.testing.assert_allclose(upper, [1.0 + 1.959964 * 2.0, -2.0 + 1.959964 * 0.5], rtol=1e-6)
    lower, upper = post.credible_interval(stats.norm.cdf(1) - stats.norm.cdf(-1))
    np.testing.assert_allclose(upper - lower, [4.0, 1.0])


def test_sample_credible_interval_is_empirical_and_keeps_skew():
    rng = np.random.default_rng(0)
    draws = np.column_stack([rng.exponential(size=200_000), rng.normal(size=200_000)])
    lower, upper = SamplePosterior(draws).credible_interval(0.9)
    # exponential(1): quantiles -log(0.95) and -log(0.05), asymmetric about the mean 1
    np.testing.assert_allclose([lower[0], upper[0]], [-np.log(0.95), -np.log(0.05)],
                               rtol=0.02)
    np.testing.assert_allclose([lower[1], upper[1]], [-1.644854, 1.644854], atol=0.02)
    np.testing.assert_allclose(lower, np.quantile(draws, 0.05, axis=0))


@pytest.mark.parametrize("level", [0, 1, 1.5, -0.1, "0.95", True, None])
def test_credible_interval_rejects_bad_levels(level):
    clf = BayesianLogisticRegression().fit(*_binary_data())
    with pytest.raises(ValueError, match="level must be a number strictly between 0 and 1"):
        clf.credible_interval(level)
    with pytest.raises(ValueError, match="level"):
        clf.summary(level)


# --- the estimators ----------------------------------------------------------------------------

def _binary_data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-(X @ [1.0, -1.0] + 0.3))), "yes", "no")
    return X, y


def _count_data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) * 0.5
    return X, rng.poisson(np.exp(X @ [0.5, -0.3] + 1.0))


def test_summary_table_of_a_gaussian_posterior():
    pd = pytest.importorskip("pandas")
    X, y = _binary_data()
    clf = BayesianLogisticRegression().fit(pd.DataFrame(X, columns=["age", "dose"]), y)
    table = clf.summary(level=0.9).to_frame()
    assert list(table.index) == ["age", "dose", "intercept"]
    assert table.index.name == "parameter"
    assert list(table.columns) == ["mean", "sd", "lower", "upper"]
    assert table.attrs["level"] == 0.9
    np.testing.assert_allclose(table["mean"], clf.posterior_.mean)
    np.testing.assert_allclose(table["mean"].iloc[:2], clf.coef_[0])
    np.testing.assert_allclose(table["sd"], np.sqrt(np.diag(clf.posterior_.cov)))
    lower, upper = clf.credible_interval(0.9)
    np.testing.assert_allclose(table["lower"], lower)
    np.testing.assert_allclose(table["upper"], upper)
    np.testing.assert_allclose(upper - table["mean"], 1.644854 * table["sd"], rtol=1e-6)

    # arrays get x0, x1, ...; no intercept row without an intercept
    plain = BayesianLogisticRegression(fit_intercept=False).fit(X, y).summary().to_frame()
    assert list(plain.index) == ["x0", "x1"]
    # names given replace them, and must match the features
    named = clf.summary(feature_names=["a", "b"])
    assert [key[0] for key in named.index] == ["a", "b", "intercept"]
    with pytest.raises(ValueError, match="feature_names has 3 names but the estimator was "
                                         "fitted on 2 features"):
        clf.summary(feature_names=["a", "b", "c"])


@pytest.mark.parametrize("method, measure, attribute", [
    ("laplace", "Log evidence", "log_evidence_"), ("kl_proximal", "ELBO", "elbo_"),
    ("pass_glm", "Log evidence", "log_evidence_")])
def test_summary_header_says_what_was_fitted(method, measure, attribute):
    pytest.importorskip("pandas")
    X, y = _count_data()
    reg = BayesianPoissonRegression(method=method).fit(X, y)
    header = reg.summary().header
    assert header["Estimator"] == "BayesianPoissonRegression"
    assert header["Model"] == "poisson (log link)"
    assert header["Method"] == method
    assert header["Rows"] == "400" and "Total weight" not in header
    assert header["Parameters"] == "3"
    assert float(header[measure]) == pytest.approx(getattr(reg, attribute), rel=1e-5)
    assert float(header["AIC"]) == pytest.approx(reg.aic_, rel=1e-5)
    assert header["Converged"] == f"yes ({reg.n_iter_} iterations)"
    text = repr(reg.summary())
    assert text.index("Log evidence" if measure != "ELBO" else "ELBO") < text.index("intercept")
    # weighted rows: their total weight too; the DataFrame prints plainly
    weighted = BayesianPoissonRegression(method=method).fit(X, y, sample_weight=np.full(400, 2.5))
    assert weighted.summary().header["Total weight"] == "1000"
    assert weighted.summary().to_frame().attrs["header"]["Total weight"] == "1000"
    assert "Rows" not in repr(weighted.summary().to_frame())


def test_summary_header_of_mcmc_has_its_diagnostics():
    pytest.importorskip("pandas")
    X, y = _binary_data()
    clf = BayesianLogisticRegression(method="mcmc", n_draws=200, random_state=0).fit(X, y)
    header = clf.summary().header
    assert header["Method"] == "mcmc (nuts)"
    assert header["Max R-hat"] == f"{clf.r_hat_.max():.4f}"
    assert header["Min ESS"] == f"{clf.effective_sample_size_.min():.0f}"
    assert header["Divergences"] == str(clf.n_divergences_)
    assert header["Draws"] == f"{len(clf.posterior_samples_):,}"
    # the run's figures are in the header, once
    assert header["Acceptance"] == f"{clf.acceptance_fraction_:.3f}"
    assert header["Mean tree depth"] == f"{clf.sample_stats_['tree_depth'].mean():.2f}"


def test_summary_without_pandas_prints_and_holds_arrays(monkeypatch):
    X, y = _binary_data()
    clf = BayesianLogisticRegression().fit(X, y)
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    table = clf.summary()
    assert list(table.columns) == ["mean", "sd", "lower", "upper"]
    assert table.index == [("x0",), ("x1",), ("intercept",)]
    assert table.header["Rows"] == f"{len(y):,}"
    np.testing.assert_allclose(table.columns["mean"], clf.posterior_.mean)
    np.testing.assert_allclose(table.columns["lower"], clf.credible_interval()[0])
    assert "intercept" in str(table)
    with pytest.raises(ImportError, match="to_frame needs pandas"):
        table.to_frame()


def test_summary_text_shows_every_column_and_value():
    """Fixed-width text: every column and every row printed in full, whatever pandas'
    display options; numbers to 4 decimals, in scientific notation when tiny or huge."""
    pd = pytest.importorskip("pandas")
    X, y = _count_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Poisson counts: alpha is not sampled
        est = BayesianNegativeBinomialRegression(method="mcmc", n_draws=200,
                                                 random_state=0).fit(X, y)
    text = str(est.summary())
    lines = text.splitlines()
    head = next(line for line in lines if line.startswith("parameter"))
    assert head.split() == ["parameter", "mean", "sd", "lower", "upper", "ess", "r_hat"]
    assert "..." not in text
    frame = est.summary().to_frame()
    for name, row in frame.iterrows():
        line = next(line for line in lines if line.split()[:1] == [name])
        fields = line.split()[1:]
        np.testing.assert_allclose([float(v) for v in fields[:4]], row.iloc[:4],
                                   atol=5e-5, rtol=5e-4)
        if np.isfinite(row["ess"]):  # blank where there is none (an alpha not sampled)
            assert fields[4:] == [f"{row['ess']:.0f}", f"{row['r_hat']:.3f}"]
        else:
            assert len(fields) == 4
    with pd.option_context("display.max_columns", 2):
        assert str(est.summary()) == text
    tiny = BayesianPoissonRegression(prior_scale=1e-6).fit(X, y).summary()
    assert "e-" in str(tiny).split("-" * 10)[-1]


@pytest.mark.parametrize("Estimator", [BayesianLogisticRegression, BayesianPoissonRegression,
                                       BayesianNegativeBinomialRegression])
def test_mcmc_diagnostics_are_fitted_attributes_and_summary_columns(Estimator):
    pd = pytest.importorskip("pandas")
    X, y = _binary_data() if Estimator is BayesianLogisticRegression else _count_data()
    est = Estimator(**_MCMC).fit(X, y)  # NUTS, the default sampler
    p = X.shape[1] + 1
    # dual averaging aims the mean acceptance statistic at 0.8
    assert 0.7 < est.acceptance_fraction_ < 0.95
    for name in ("effective_sample_size_", "r_hat_"):
        assert getattr(est, name).shape == (p,)
    # the run lasts until the bulk ESS reaches n_draws with R-hat at most 1.01
    draws = est.posterior_samples_.reshape(-1, 4, p)
    np.testing.assert_allclose(est.effective_sample_size_, bulk_effective_sample_size(draws))
    np.testing.assert_allclose(est.r_hat_, rank_r_hat(draws))
    assert np.all(est.effective_sample_size_ >= 1600)
    assert np.all(est.r_hat_ <= 1.01)
    assert est.n_divergences_ == 0 and not hasattr(est, "autocorr_time_")
    stats = est.sample_stats_
    assert set(stats) == {"lp", "energy", "acceptance_rate", "n_steps", "tree_depth",
                          "diverging", "step_size"}
    assert all(value.shape == draws.shape[1::-1] for value in stats.values())
    table = est.summary().to_frame()
    assert isinstance(table, pd.DataFrame)
    # per-parameter diagnostics only; those of the run are in the header
    assert list(table.columns) == ["mean", "sd", "lower", "upper", "ess", "r_hat"]
    table = table.iloc[:len(est.r_hat_)]  # the rows of theta (not the overdispersion's)
    np.testing.assert_allclose(table["ess"], est.effective_sample_size_)
    np.testing.assert_allclose(table["r_hat"], est.r_hat_)
    np.testing.assert_allclose(table["lower"],
                               np.quantile(est.posterior_samples_, 0.025, axis=0))

    # the ensemble sampler: acceptance fraction, autocorrelation time, no NUTS statistics
    est.set_params(sampler="ensemble").fit(X, y)
    assert 0.2 < est.acceptance_fraction_ < 0.8
    for name in ("autocorr_time_", "effective_sample_size_", "r_hat_"):
        assert getattr(est, name).shape == (p,)
    # the default run lasts ~50 autocorrelation times: near-independent draws, mixed walkers
    assert np.all(est.effective_sample_size_ <= 1600)
    assert np.all(est.effective_sample_size_ > 400)
    assert np.all(np.abs(est.r_hat_ - 1) < 0.05)
    assert not hasattr(est, "sample_stats_") and not hasattr(est, "n_divergences_")
    assert list(est.summary().columns) == ["mean", "sd", "lower", "upper", "ess", "r_hat"]
    assert "Acceptance" in est.summary().header and "Mean tree depth" not in est.summary().header

    # refitting with another method removes the MCMC-only attributes and columns
    est.set_params(method="laplace").fit(X, y)
    for name in ("acceptance_fraction_", "autocorr_time_", "effective_sample_size_",
                 "r_hat_", "posterior_samples_", "n_divergences_", "sample_stats_"):
        assert not hasattr(est, name)
    assert list(est.summary().columns) == ["mean", "sd", "lower", "upper"]


def test_sample_y_classifier_draws_labels_at_the_predictive_probability():
    X, y = _binary_data()
    clf = BayesianLogisticRegression().fit(X, y)
    X_new = np.array([[0.0, 0.0], [2.0, -2.0], [-3.0, 3.0], [4.0, 4.0]])
    draws = clf.sample_y(X_new, n_draws=20_000, random_state=0)
    assert draws.shape == (20_000, 4)
    assert set(np.unique(draws)) <= {"no", "yes"}
    p = clf.predict_proba(X_new)[:, 1]
    freq = (draws == "yes").mean(axis=0)
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / 20_000) + 1e-3)
    np.testing.assert_array_equal(draws[:50], clf.sample_y(X_new, 20_000, random_state=0)[:50])


@pytest.mark.parametrize("Estimator,method", [
    (BayesianPoissonRegression, "laplace"),
    (BayesianNegativeBinomialRegression, "laplace"),
    (BayesianPoissonRegression, "mcmc"),
])
def test_sample_y_counts_have_the_predictive_mean_and_sd(Estimator, method):
    X, y = _count_data()
    est = Estimator(method=method, n_draws=1600, random_state=0).fit(X, y)
    X_new = np.array([[0.0, 0.0], [1.0, -1.0], [-1.5, 0.5]])
    draws = est.sample_y(X_new, n_draws=40_000, random_state=1)
    assert draws.shape == (40_000, 3)
    assert np.all(draws >= 0) and np.all(draws == np.round(draws))
    mean, sd = est.predict(X_new, return_std=True)
    # the draws' moments are the closed-form predictive moments up to Monte Carlo error
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 4 * sd / np.sqrt(40_000))
    np.testing.assert_allclose(draws.std(axis=0), sd, rtol=0.03)


@pytest.mark.parametrize("n_draws", [0, -1, 2.5, True])
def test_sample_y_rejects_bad_n_draws(n_draws):
    X, y = _count_data()
    reg = BayesianPoissonRegression().fit(X, y)
    with pytest.raises(ValueError, match="n_draws must be a positive integer"):
        reg.sample_y(X, n_draws=n_draws)


def test_summary_methods_need_a_fitted_estimator():
    from sklearn.exceptions import NotFittedError

    est = BayesianPoissonRegression()
    for call in (est.summary, est.credible_interval, est.to_arviz,
                 lambda: est.sample_y(np.zeros((2, 2)))):
        with pytest.raises(NotFittedError):
            call()


# --- ArviZ -----------------------------------------------------------------------------------

def test_to_arviz_without_arviz_says_how_to_install_it(monkeypatch):
    X, y = _count_data()
    reg = BayesianPoissonRegression().fit(X, y)
    monkeypatch.setitem(sys.modules, "arviz", None)
    with pytest.raises(ImportError, match="pip install arviz"):
        reg.to_arviz()


def test_to_arviz_mcmc_chains_are_the_walkers():
    az = pytest.importorskip("arviz")
    pd = pytest.importorskip("pandas")
    X, y = _count_data()
    reg = BayesianPoissonRegression(method="mcmc", sampler="ensemble", n_draws=1000,
                                    n_walkers=16, random_state=0)
    reg.fit(pd.DataFrame(X, columns=["a", "b"]), y)
    data = reg.to_arviz()
    coef = data.posterior["coef"]
    # 1000 draws of 16 walkers: the latest 62 steps of each walker
    assert coef.shape == (16, 62, 2)
    assert list(coef.coords["feature"].values) == ["a", "b"]
    kept = reg.posterior_samples_[-62 * 16:].reshape(62, 16, 3)
    np.testing.assert_array_equal(coef.values, kept[:, :, :2].transpose(1, 0, 2))
    np.testing.assert_array_equal(data.posterior["intercept"].values, kept[:, :, 2].T)
    # ArviZ's own split-R-hat of the same draws agrees with the thinned chains' R-hat here
    rhat = az.rhat(data, method="split")["coef"].values
    np.testing.assert_allclose(rhat, split_r_hat(kept)[:2], rtol=1e-10)


def test_to_arviz_fewer_mcmc_draws_than_walkers_is_one_chain():
    pytest.importorskip("arviz")
    X, y = _count_data()
    reg = BayesianPoissonRegression(method="mcmc", sampler="ensemble", n_draws=10,
                                    n_walkers=16, n_burnin=50, thin=5, random_state=0)
    with pytest.warns(UserWarning):  # a run this short is flagged
        reg.fit(X, y)
    data = reg.to_arviz()
    np.testing.assert_array_equal(data.posterior["coef"].values[0], reg.posterior_samples_[:, :2])


def test_to_arviz_nuts_chains_and_sample_stats_agree_with_arviz_diagnostics():
    """The NUTS chains are ArviZ's chains, the sample statistics its sample_stats group
    (ArviZ's names), and ArviZ's own bulk ESS and rank-normalized R-hat of the exported
    draws are the estimator's effective_sample_size_ and r_hat_."""
    az = pytest.importorskip("arviz")
    X, y = _binary_data()
    clf = BayesianLogisticRegression(method="mcmc", n_draws=800, random_state=0).fit(X, y)
    data = clf.to_arviz()
    n_draws = clf.posterior_samples_.shape[0] // 4
    assert data.posterior["coef"].shape == (4, n_draws, 2)
    np.testing.assert_array_equal(
        data.posterior["intercept"].values,
        clf.posterior_samples_[:, -1].reshape(n_draws, 4).T)
    for name in ("diverging", "tree_depth", "acceptance_rate", "n_steps", "energy", "lp",
                 "step_size"):
        np.testing.assert_array_equal(data.sample_stats[name].values,
                                      clf.sample_stats_[name])
    ess = np.append(az.ess(data, method="bulk")["coef"].values,
                    az.ess(data, method="bulk")["intercept"].values)
    r_hat = np.append(az.rhat(data, method="rank")["coef"].values,
                      az.rhat(data, method="rank")["intercept"].values)
    np.testing.assert_allclose(clf.effective_sample_size_, ess, rtol=1e-10)
    np.testing.assert_allclose(clf.r_hat_, r_hat, rtol=1e-12)
    # lp is the log posterior of the draw (up to one constant for the whole run)
    from skcoreset._inference import LogPosterior, prior_precision

    log_post = LogPosterior(X, np.where(y == "yes", 1.0, -1.0), clf.family_, np.ones(len(y)),
                            prior_precision(2, prior_scale=1.0, intercept_prior_scale=10.0,
                                            fit_intercept=True), True)
    theta = clf.posterior_samples_.reshape(n_draws, 4, 3)[:5, 0]
    exact = np.array([log_post.value(t) for t in theta])
    np.testing.assert_allclose(clf.sample_stats_["lp"][0, :5] - exact,
                               clf.sample_stats_["lp"][0, 0] - exact[0], atol=1e-8)


def test_pipeline_summary_names_rows_after_the_steps_features():
    """Behind a sparse one-hot ColumnTransformer and a coreset step, the rows are named
    after get_feature_names_out of the steps before the estimator."""
    pd = pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from skcoreset import UniformCoreset
    from skcoreset.pipeline import Pipeline

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"plan": rng.choice(["a", "b", "c"], 500), "age": rng.normal(size=500)})
    y = rng.poisson(np.exp(0.3 * frame["age"] + (frame["plan"] == "b")))
    encode = ColumnTransformer([("plan", OneHotEncoder(), ["plan"]),
                                ("age", StandardScaler(), ["age"])])
    pipe = Pipeline([("encode", encode), ("coreset", UniformCoreset(M=300, random_state=0)),
                     ("reg", BayesianPoissonRegression())]).fit(frame, y)
    names = [key[0] for key in pipe.summary().index]
    assert names == [*pipe[:-1].get_feature_names_out(), "intercept"]
    assert names[:4] == ["plan__plan_a", "plan__plan_b", "plan__plan_c", "age__age"]
    np.testing.assert_array_equal(pipe.summary().columns["mean"], pipe[-1].posterior_.mean)
    assert [key[0] for key in pipe.summary(feature_names=list("pqrs")).index][:4] == list("pqrs")
    # credible_interval, to_arviz and the displays carry the same names
    intervals = pipe.credible_interval(0.9)
    assert list(intervals.names) == names
    lower, upper = intervals
    np.testing.assert_array_equal(lower, pipe[-1].posterior_.credible_interval(0.9)[0])
    np.testing.assert_array_equal(upper, pipe.summary(0.9).columns["upper"])
    frame_ = intervals.to_frame()
    assert list(frame_.index) == names and list(frame_.columns) == ["lower", "upper"]
    assert list(pipe.credible_interval(feature_names=list("pqrs")).names[:4]) == list("pqrs")
    assert list(pipe[-1].credible_interval().names[:2]) == ["x0", "x1"]
    import pickle
    again = pickle.loads(pickle.dumps(intervals))
    assert list(again.names) == names and again.level == 0.9
    np.testing.assert_array_equal(again.upper, upper)
    pytest.importorskip("arviz")
    data = pipe.to_arviz(n_draws=20, n_chains=2, random_state=0)
    assert list(np.asarray(data["posterior"]["coef"].coords["feature"])) == names[:-1]
    data = pipe.to_arviz(n_draws=20, n_chains=2, feature_names=list("pqrs"))
    assert list(np.asarray(data["posterior"]["coef"].coords["feature"])) == list("pqrs")
