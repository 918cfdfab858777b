"""SparseVICoreset (Campbell & Beronov 2019): the closed forms of the Gaussian model, the Monte
Carlo estimates against them, the greedy algorithm's quality against GIGA and uniform
subsampling, and the scikit-learn contract."""

import numpy as np
import pytest
from numpy.polynomial.legendre import leggauss
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline as SkPipeline

from skcoreset import (BayesianLogisticRegression, GIGACoreset, SparseVICoreset,
                       UniformCoreset)
from skcoreset.families import make_family
from skcoreset._inference import laplace, prior_precision
from skcoreset._posterior import GaussianPosterior
from skcoreset._inference import PotentialEvaluator
from skcoreset.coreset._samplers import LaplaceSampler
from skcoreset.coreset import _sparsevi_moments
from skcoreset.coreset._sparsevi import sparse_vi
from skcoreset.coreset._sparsevi_moments import (AUTO_SUBSAMPLE, _ExactGaussianMoments,
                                                 _MonteCarloMoments, resolve_subsample)
from skcoreset.pipeline import Pipeline

from ..conftest import LOGISTIC_SETS, POISSON_SETS, load_paper_dataset, logistic_data

PAPER_KWARGS = dict(prior_scale=1.0, intercept_prior_scale=1.0)


def _logistic_data(n=300, seed=0):
    return logistic_data(n, [1.5, -1.0, 0.5], 0.2, seed=seed)


def _regression_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ rng.normal(size=d) + 0.5 + rng.normal(size=n)


def _exact(X, y, sample_weight=None, noise_scale=1.0):
    prior = prior_precision(X.shape[1], prior_scale=1.0, intercept_prior_scale=1.0,
                            fit_intercept=True)
    s = np.ones(len(y)) if sample_weight is None else sample_weight
    return _ExactGaussianMoments(X, y, s, noise_scale, prior, True)


def _exact_kl(oracle, weights):
    active = np.flatnonzero(weights)
    oracle.refresh(active, weights[active])
    return oracle.kl()


# ---------------------------------------------------------------------------------------
# Potentials and closed forms
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("model, link", [("logistic", "log"), ("poisson", "softplus"),
                                         ("poisson", "log"), ("gaussian", "log")])
def test_potential_kernels_are_the_loglik_up_to_a_row_constant(model, link):
    rng = np.random.default_rng(0)
    n, d = 300, 3
    X = rng.normal(size=(n, d))
    y = {"logistic": np.where(rng.random(n) < 0.5, 1.0, -1.0),
         "poisson": rng.poisson(3.0, size=n).astype(float),
         "gaussian": rng.normal(size=n)}[model]
    family = make_family(model, link=link, noise_scale=0.7)
    # S draws with wild predictors too (|eta| up to ~400, softplus far left)
    thetas = rng.normal(size=(40, d + 1)) * np.r_[np.ones(20), 100 * np.ones(20)][:, None]
    got = PotentialEvaluator(family, True, 40, block_elements=1000)(X, y, thetas)
    eta = X @ thetas[:, :-1].T + thetas[:, -1]
    expected = family.loglik(y, eta)
    assert np.all(np.isfinite(got))
    diff = got - expected
    np.testing.assert_allclose(diff - diff[:, :1], 0.0, atol=1e-9 * (1 + np.abs(expected)).max())


def test_exact_gradient_matches_finite_differences_of_the_closed_form_kl():
    X, y = _regression_data(60, 4)
    oracle = _exact(X, y)
    rng = np.random.default_rng(1)
    active = np.array([3, 17, 29, 41, 55])
    w = rng.uniform(2.0, 15.0, size=5)
    grad = oracle.gradient(active, w)
    full = np.zeros(len(y))
    eps = 1e-4
    for i, n in enumerate(active):
        full[active] = w
        full[n] += eps
        up = _exact_kl(oracle, full)[0]
        full[n] -= 2 * eps
        down = _exact_kl(oracle, full)[0]
        np.testing.assert_allclose(grad[i], (up - down) / (2 * eps), rtol=1e-5)


def test_exact_moments_match_monte_carlo_under_pi_w():
    X, y = _regression_data(40, 2, seed=2)
    oracle = _exact(X, y, noise_scale=0.8)
    active = np.array([0, 5, 9])
    w = np.array([4.0, 7.0, 2.5])
    oracle.refresh(active, w)
    cov, var = oracle.moments(np.arange(40))
    draws = GaussianPosterior(oracle.mean, oracle.cov).sample(400_000, random_state=0)
    f = make_family("gaussian", noise_scale=0.8).loglik(y, X @ draws[:, :-1].T + draws[:, -1])
    f -= f.mean(axis=1, keepdims=True)
    r = np.ones(40)
    r[active] -= w
    mc_cov = f @ (r @ f) / f.shape[1]
    mc_var = np.mean(f**2, axis=1)
    np.testing.assert_allclose(var, mc_var, rtol=0.02)
    np.testing.assert_allclose(cov, mc_cov, rtol=0.03, atol=0.03 * np.abs(mc_cov).max())


def test_symmetrised_kl_is_lemma_3s_path_integral():
    # KL(pi_w || pi) + KL(pi || pi_w) = int_0^1 (s - w)^T G(gamma(t)) (s - w) dt with
    # gamma(t) = (1 - t) w + t s; G(gamma) (s - gamma) is what moments() returns and
    # s - gamma(t) = (1 - t)(s - w)
    X, y = _regression_data(50, 3, seed=3)
    s = np.random.default_rng(0).integers(1, 3, size=50).astype(float)
    oracle = _exact(X, y, sample_weight=s)
    w = np.zeros(50)
    w[[1, 8, 20, 33]] = [10.0, 20.0, 15.0, 30.0]
    nodes, quad_weights = leggauss(40)
    integral = 0.0
    for node, weight in zip(0.5 * (nodes + 1), 0.5 * quad_weights):
        oracle.refresh(np.arange(50), (1 - node) * w + node * s)
        integral += weight * (s - w) @ oracle.moments(np.arange(50))[0] / (1 - node)
    forward, symmetrised = _exact_kl(oracle, w)
    np.testing.assert_allclose(symmetrised, integral, rtol=1e-6)
    assert 0 < forward < symmetrised


def test_monte_carlo_moments_agree_with_the_exact_ones():
    # for the Gaussian model the Laplace approximation is exact, so the Monte Carlo path
    # estimates the same gradient as the closed form
    X, y = _regression_data(80, 3, seed=4)
    family = make_family("gaussian")
    prior = prior_precision(3, prior_scale=1.0, intercept_prior_scale=1.0, fit_intercept=True)
    active, w = np.array([2, 11, 40]), np.array([20.0, 25.0, 30.0])
    exact = _ExactGaussianMoments(X, y, np.ones(80), 1.0, prior, True)
    sampler = LaplaceSampler(X, y, family, prior, True)
    rng = np.random.RandomState(0)
    mc = _MonteCarloMoments(X, y, np.ones(80), family, True, prior, sampler, 20_000, None, 10,
                            rng)
    grads = [mc.gradient(active, w) for _ in range(5)]
    expected = exact.gradient(active, w)
    np.testing.assert_allclose(np.mean(grads, axis=0), expected, rtol=0.05,
                               atol=0.02 * np.abs(expected).max())
    np.testing.assert_allclose(mc.kl(), exact.kl(), rtol=1e-8)


# ---------------------------------------------------------------------------------------
# Algorithm 1 on the Gaussian model (Campbell & Beronov 2019, sections 5.1-5.2)
# ---------------------------------------------------------------------------------------
def _gaussian_experiment(n, d, M, seed):
    X, y = _regression_data(n, d, seed=seed)
    kwargs = dict(model="gaussian", prior_scale=1.0, intercept_prior_scale=1.0,
                  random_state=seed)
    svi = SparseVICoreset(M=M, **kwargs).fit(X, y)
    giga = GIGACoreset(M=M, weighting="laplace-subsample", **kwargs).fit(X, y)
    oracle = _exact(X, y)
    kl = {}
    for name, coreset in (("sparsevi", svi), ("giga", giga)):
        w = np.zeros(n)
        w[coreset.sample_indices_] = coreset.sample_weight_
        kl[name] = _exact_kl(oracle, w)[0]
    return svi, kl


def _check_gaussian_experiment(svi, kl, factor):
    history = svi.history_[:, 1]
    assert svi.sampler_ == "exact" and svi.n_iter_ == len(history)
    np.testing.assert_allclose(history[-1], kl["sparsevi"], rtol=1e-8)
    # the exact KL falls over the greedy steps: by orders of magnitude, and never rises
    # from one quarter of the budget to the next (it may stall once no point helps)
    quarters = history[np.linspace(0, len(history) - 1, 5).astype(int)]
    assert np.all(np.diff(quarters) <= 1e-5 * quarters[1:]), quarters
    assert history[-1] < 1e-2 * history[0]
    assert kl["sparsevi"] * factor <= kl["giga"], kl


def test_gaussian_model_kl_falls_and_beats_giga_small():
    svi, kl = _gaussian_experiment(n=400, d=8, M=40, seed=0)
    _check_gaussian_experiment(svi, kl, factor=10)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_gaussian_model_kl_falls_and_beats_giga_paper_scale(seed):
    # d = 50 random features, N = 2000, M = 200: at least 10x below GIGA's KL with the
    # realistic (subsample Laplace) weighting (measured: 100-240x over 5 seeds)
    svi, kl = _gaussian_experiment(n=2000, d=50, M=200, seed=seed)
    _check_gaussian_experiment(svi, kl, factor=10)


# ---------------------------------------------------------------------------------------
# Posterior quality on the papers' N = 500 data sets (Campbell & Beronov 2019, section 5.3)
# ---------------------------------------------------------------------------------------
def _relative_kl(X, y, model, coreset, full):
    family = make_family(model, link="softplus")
    y_enc = np.where(y == 1, 1.0, -1.0) if model == "logistic" else y.astype(float)
    prior = prior_precision(X.shape[1], prior_scale=1.0, intercept_prior_scale=1.0,
                            fit_intercept=True)
    w = np.zeros(len(y))
    if full is None:
        w[:] = 1.0
    else:
        w[coreset.sample_indices_] = coreset.sample_weight_
    post = laplace(X, y_enc, family, sample_weight=w, prior_prec=prior,
                   fit_intercept=True).posterior
    if full is None:
        return post
    p = len(full.mean)
    return post.kl(full) / GaussianPosterior(np.zeros(p), np.eye(p)).kl(full)


def _median_kls(name, M, seeds, **svi_params):
    X, y, model = load_paper_dataset(name)
    full = _relative_kl(X, y, model, None, None)
    makers = {
        "sparsevi": lambda s: SparseVICoreset(M, random_state=s, **svi_params),
        "giga-subsample": lambda s: GIGACoreset(M, weighting="laplace-subsample",
                                                random_state=s),
        "uniform": lambda s: UniformCoreset(M, random_state=s),
    }
    return {key: np.median([_relative_kl(X, y, model, make(s).set_params(
        model=make_family(model, link="softplus"), **PAPER_KWARGS).fit(X, y), full)
        for s in seeds])
        for key, make in makers.items()}


def test_paper_data_small_coresets_beat_giga_subsample_and_uniform():
    # fast version of the section 5.3 comparison: M = 30, one seed, fewer draws and steps
    wins_giga = wins_uniform = 0
    for name in LOGISTIC_SETS + POISSON_SETS:
        kl = _median_kls(name, 30, [0], n_draws=50, n_iter_opt=30)
        wins_giga += kl["sparsevi"] <= kl["giga-subsample"]
        wins_uniform += kl["sparsevi"] < 0.5 * kl["uniform"]
    assert wins_giga >= 5 and wins_uniform >= 5, (wins_giga, wins_uniform)


@pytest.mark.slow
def test_paper_data_m100_beats_giga_subsample_and_uniform():
    # the claim at the paper's size: M = 100, S = 100, T = 100, gamma_t = 0.5 / t
    # (learning_rate="auto"), median over 3 seeds; GIGA (laplace-subsample) and uniform
    # measured in the same run
    results = {name: _median_kls(name, 100, [0, 1, 2], n_draws=100, n_iter_opt=100)
               for name in LOGISTIC_SETS + POISSON_SETS}
    wins_giga = sum(kl["sparsevi"] <= kl["giga-subsample"] for kl in results.values())
    well_below_uniform = sum(kl["sparsevi"] < 0.1 * kl["uniform"] for kl in results.values())
    assert wins_giga >= 5 and well_below_uniform >= 5, results


# ---------------------------------------------------------------------------------------
# Samplers, subsampling, incoming weights
# ---------------------------------------------------------------------------------------
def test_mcmc_sampler_builds_a_good_coreset():
    X, y = _logistic_data(n=400)
    kwargs = dict(M=15, n_draws=40, n_iter_opt=15, random_state=0)
    mcmc = SparseVICoreset(sampler="mcmc", **kwargs).fit(X, y)
    assert mcmc.sampler_ == "mcmc" and len(mcmc.sample_indices_) <= 15
    assert mcmc.history_[-1, 1] < 0.05 * mcmc.history_[0, 1]
    # same quality as the Laplace sampler's coreset, on the Laplace KL to the full posterior
    family = make_family("logistic")
    prior = prior_precision(3, prior_scale=1.0, intercept_prior_scale=10.0, fit_intercept=True)
    y_enc = np.where(y == 1, 1.0, -1.0)
    full = laplace(X, y_enc, family, sample_weight=np.ones(400), prior_prec=prior,
                   fit_intercept=True).posterior
    kls = {}
    for sampler in ("mcmc", "laplace"):
        cs = SparseVICoreset(sampler=sampler, **kwargs).fit(X, y)
        w = np.zeros(400)
        w[cs.sample_indices_] = cs.sample_weight_
        kls[sampler] = laplace(X, y_enc, family, sample_weight=w, prior_prec=prior,
                               fit_intercept=True).posterior.kl(full)
    assert kls["mcmc"] < 3 * kls["laplace"] + 0.05, kls


def test_n_subsample_restricts_the_work_and_still_approximates():
    X, y = _logistic_data(n=20_000, seed=5)
    cs = SparseVICoreset(M=20, n_draws=30, n_iter_opt=20, n_subsample=200,
                         random_state=0).fit(X, y)
    assert 0 < len(cs.sample_indices_) <= 20
    # the coreset's weight stands for the whole data set
    assert 0.1 * len(y) < cs.sample_weight_.sum() < 3 * len(y)
    assert cs.history_[-1, 1] < 0.01 * cs.history_[0, 1]


@pytest.mark.parametrize("weights", ["uniform", "integer", "skewed"])
def test_subsampled_residual_is_unbiased(weights):
    # mean over many subsamples of the residual estimate sum_rows coef_r f_r(theta) equals
    # the full residual f^T (s - w) at fixed draws theta, within standard errors, also when
    # the incoming weights vary (zero-weight rows stand for nothing)
    n, n_draws, U = 3000, 4, 200
    X, y = _logistic_data(n=n, seed=8)
    y_enc = np.where(y == 1, 1.0, -1.0)
    rng = np.random.default_rng(0)
    s = {"uniform": np.ones(n), "integer": rng.integers(0, 4, size=n).astype(float),
         "skewed": rng.lognormal(sigma=1.5, size=n)}[weights]
    family = make_family("logistic")
    prior = prior_precision(3, prior_scale=1.0, intercept_prior_scale=1.0, fit_intercept=True)
    sampler = LaplaceSampler(X, y_enc, family, prior, True)
    mc = _MonteCarloMoments(X, y_enc, s, family, True, prior, sampler, n_draws, U, 10,
                            np.random.RandomState(0))
    assert mc.n_subsample == U
    active = np.flatnonzero(s > 0)[[3, 50, 400]]
    w = np.array([30.0, 200.0, 5.0])
    thetas = rng.normal(size=(n_draws, 4))
    f = family.loglik(y_enc[:, None], X @ thetas[:, :-1].T + thetas[:, -1])
    r = s.copy()
    r[active] -= w
    full = r @ f
    estimates = []
    for _ in range(4000):
        rows, coef, position = mc.residual_rows(active, w)
        assert np.all(s[rows] > 0) and len(rows) == len(active) + U
        np.testing.assert_array_equal(rows[position], active)
        estimates.append(coef @ f[rows])
    estimates = np.array(estimates)
    standard_error = estimates.std(axis=0) / np.sqrt(len(estimates))
    assert np.all(np.abs(estimates.mean(axis=0) - full) < 4 * standard_error), (
        (estimates.mean(axis=0) - full) / standard_error)
    # and the test has power: the estimate is noisy, its errors far above the tolerance
    assert np.all(estimates.std(axis=0) > 10 * standard_error)


def test_auto_subsample_keeps_small_data_exact_and_bounds_the_work(monkeypatch):
    assert resolve_subsample("auto", AUTO_SUBSAMPLE) is None
    assert resolve_subsample("auto", AUTO_SUBSAMPLE + 1) == AUTO_SUBSAMPLE
    assert resolve_subsample(None, 10**6) is None and resolve_subsample(50, 50) is None
    assert resolve_subsample(50, 51) == 50
    # at the paper's N = 500 "auto" is the full-data algorithm, draw for draw
    X, y = _logistic_data(n=500)
    auto = SparseVICoreset(random_state=0, **FAST).fit(X, y)
    every = SparseVICoreset(n_subsample=None, random_state=0, **FAST).fit(X, y)
    assert auto.n_subsample_ is None
    np.testing.assert_array_equal(auto.sample_indices_, every.sample_indices_)
    np.testing.assert_array_equal(auto.sample_weight_, every.sample_weight_)
    # beyond it, every selection and gradient step evaluates the potentials of the coreset
    # rows plus the subsample only
    seen = []

    class Recording(PotentialEvaluator):
        def __call__(self, X, y, thetas, offset=None):
            seen.append(X.shape[0])
            return super().__call__(X, y, thetas, offset)

    monkeypatch.setattr(_sparsevi_moments, "PotentialEvaluator", Recording)
    X, y = _logistic_data(n=AUTO_SUBSAMPLE + 3000, seed=9)
    cs = SparseVICoreset(M=4, n_draws=10, n_iter_opt=3, random_state=0).fit(X, y)
    assert cs.n_subsample_ == AUTO_SUBSAMPLE
    assert len(seen) == cs.n_iter_ * 3  # one call per selection and per fresh gradient
    # (the active rows: one per greedy step at most, some may have fallen to weight 0)
    assert max(seen) <= AUTO_SUBSAMPLE + cs.n_iter_


def test_huge_m_stops_and_says_why():
    # M = 10**10 acts as the number of rows of positive weight; the loop ends
    X, y = _logistic_data(n=60, seed=10)
    s = np.ones(60)
    s[:20] = 0.0
    cs = SparseVICoreset(M=10**10, n_draws=20, n_iter_opt=5, random_state=0).fit(
        X, y, sample_weight=s)
    assert cs.n_iter_ <= 40 and cs.stop_reason_ in ("max_steps", "no_improvement")
    assert np.all(cs.sample_indices_ >= 20)
    assert cs.history_.shape == (cs.n_iter_, 3)
    # the exact sampler matches the Gaussian posterior with a few points, then re-selects
    # them without improving: it stops on its own, long before min(M, N) = 200 steps
    Xg, yg = _regression_data(200, 2, seed=11)
    gauss = SparseVICoreset(M=10**10, model="gaussian", random_state=0).fit(Xg, yg)
    assert gauss.stop_reason_ == "no_improvement" and gauss.n_iter_ < 200
    history = gauss.history_[:, 1]
    # the last 5 steps did not beat the best KL reached before them
    assert np.all(history[-5:] >= history[:-5].min())
    # a budget that runs out is reported as such
    assert SparseVICoreset(random_state=0, **FAST).fit(X, y).stop_reason_ == "max_steps"


def _vague_prior_counts_over_exposures_kl(**coreset_params):
    """Exact KL (:func:`skcoreset.metrics.exact_kl`) of a SparseVI coreset of Poisson counts
    over exposures under a prior of sd 1000, and the fitted coreset."""
    from skcoreset import BayesianPoissonRegression
    from skcoreset.metrics import exact_kl

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    exposure = 10 ** rng.uniform(-2, 2, 300)
    y = rng.poisson(exposure * np.exp(0.5 + X @ [0.4, -0.3])).astype(float)
    wide = dict(prior_scale=1e3, intercept_prior_scale=1e3)
    pipe = Pipeline([("coreset", SparseVICoreset(M=10, **coreset_params)),
                     ("clf", BayesianPoissonRegression(**wide))], exact_correction=False)
    pipe.fit(X, y, coreset__exposure=exposure)
    return exact_kl(pipe, X, y, exposure=exposure, random_state=0), pipe.named_steps["coreset"]


@pytest.mark.parametrize("seed", [0, 1])
def test_vague_prior_counts_over_exposures_start_from_finite_draws(seed):
    # Under a vague prior (sd 1000) the draws of pi_0 put exp(eta) of the log link beyond
    # float64: the paper's start at w = 0 gave no usable estimate and the old code fell
    # back to a uniform coreset (6 to 103 nats for these seeds); started from a uniform
    # subsample, SparseVI builds on finite draws. Measured against the exact posterior.
    result, coreset = _vague_prior_counts_over_exposures_kl(random_state=seed)
    assert coreset.stop_reason_ != "constant_potentials"
    assert result.reliable
    assert result.kl < 1.0 and result.max_mean_error_sd < 0.5


@pytest.mark.parametrize("seed", [0, 1])
def test_vague_prior_mcmc_walkers_start_at_the_uniform_start(seed):
    # The emcee walkers began as draws of the prior (sd 1000), where every potential
    # overflows and no stretch move is accepted: they never reached the coreset posterior
    # of the uniform start (Gaussian-proxy KL 1e161 to 1e212 nats, exact KL 12 to 87 nats
    # for seeds 0-2). Started at the start's Laplace fit: 0.02 to 0.07 nats.
    result, coreset = _vague_prior_counts_over_exposures_kl(sampler="mcmc", random_state=seed)
    assert coreset.sampler_ == "mcmc"
    assert result.reliable
    assert result.kl < 1.0 and result.max_mean_error_sd < 0.5


def test_overflowing_potentials_give_no_estimate_and_products_stay_finite():
    # draws of a vague prior: the moments say so instead of returning NaN correlations
    X, y = _logistic_data(n=50, seed=3)
    counts = np.random.default_rng(3).poisson(2.0, size=50).astype(float)
    family = make_family("poisson")
    for scale, overflow in ((1.0, False), (1e3, True)):
        prior_prec = np.full(X.shape[1] + 1, scale**-2.0)
        sampler = LaplaceSampler(X, counts, family, prior_prec, True)
        oracle = _MonteCarloMoments(X, counts, np.ones(50), family, True, prior_prec, sampler,
                                    30, None, 10, np.random.RandomState(0))
        index = oracle.select(np.empty(0, dtype=np.intp), np.empty(0))
        assert oracle.overflowed is overflow
        if index is not None:
            assert 0 <= index < 50
        grad = oracle.gradient(np.array([0, 1]), np.array([1.0, 1.0]))
        assert np.all(np.isfinite(grad))


def test_incoming_sample_weight_defines_the_target():
    X, y = _regression_data(300, 3, seed=6)
    s = np.random.default_rng(0).integers(0, 4, size=300).astype(float)
    cs = SparseVICoreset(M=25, model="gaussian", prior_scale=1.0, intercept_prior_scale=1.0,
                         random_state=0).fit(X, y, sample_weight=s)
    assert np.all(s[cs.sample_indices_] > 0)  # zero-weight rows stand for nothing
    w = np.zeros(300)
    w[cs.sample_indices_] = cs.sample_weight_
    forward = _exact_kl(_exact(X, y, sample_weight=s), w)[0]
    np.testing.assert_allclose(cs.history_[-1, 1], forward, rtol=1e-6, atol=1e-10)
    # the weighted target, not the unweighted one
    assert forward < 0.1 * _exact_kl(_exact(X, y), w)[0]
    assert 0.5 * s.sum() < w.sum() < 2 * s.sum()


def test_sparse_vi_function_and_exact_sampler_ignore_subsampling():
    X, y = _regression_data(200, 2, seed=7)
    prior = prior_precision(2, prior_scale=1.0, intercept_prior_scale=1.0, fit_intercept=True)
    kwargs = dict(sample_weight=np.ones(200), prior_prec=prior, fit_intercept=True, M=10,
                  n_iter_opt=10, sampler="exact")
    a = sparse_vi(X, y, make_family("gaussian"), n_subsample=20,
                  random_state=np.random.RandomState(0), **kwargs)
    b = sparse_vi(X, y, make_family("gaussian"), random_state=np.random.RandomState(1),
                  **kwargs)
    np.testing.assert_array_equal(a.weights, b.weights)  # deterministic: no Monte Carlo
    assert a.history.shape == (10, 3) and a.n_iter == 10


# ---------------------------------------------------------------------------------------
# scikit-learn contract
# ---------------------------------------------------------------------------------------
FAST = dict(M=10, n_draws=30, n_iter_opt=10)


def test_fit_is_deterministic_and_exposes_its_attributes():
    X, y = _logistic_data()
    cs = SparseVICoreset(random_state=0, **FAST).fit(X, y)
    again = SparseVICoreset(random_state=0, **FAST).fit(X, y)
    np.testing.assert_array_equal(cs.sample_indices_, again.sample_indices_)
    np.testing.assert_array_equal(cs.sample_weight_, again.sample_weight_)
    assert cs.sampler_ == "laplace" and cs.n_iter_ == 10 and cs.history_.shape == (10, 3)
    assert np.all(cs.history_[:, 0] >= 1) and cs.history_[-1, 0] == len(cs.sample_indices_)
    assert np.all(cs.history_[:, 2] >= cs.history_[:, 1])
    assert np.all(cs.sample_weight_ > 0) and np.all(np.diff(cs.sample_indices_) > 0)


@pytest.mark.parametrize("params, match", [
    ({"n_draws": 1}, "n_draws"), ({"n_iter_opt": 0}, "n_iter_opt"),
    ({"learning_rate": 0.0}, "learning_rate"), ({"learning_rate": -1.0}, "learning_rate"),
    ({"n_subsample": 0}, "n_subsample"), ({"n_subsample": "all"}, "n_subsample"),
    ({"sampler": "nuts"}, "sampler"),
    ({"sampler": "exact"}, "gaussian model"), ({"M": 0}, "M")])
def test_bad_parameters_get_clear_errors(params, match):
    X, y = _logistic_data(n=50)
    with pytest.raises(ValueError, match=match):
        SparseVICoreset(**FAST).set_params(**params).fit(X, y)


@pytest.mark.parametrize("pipeline_class", [Pipeline, SkPipeline])
def test_pipelines_and_grid_search_over_m(pipeline_class):
    X, y = _logistic_data(n=400)
    pipe = pipeline_class([("coreset", SparseVICoreset(random_state=0, **FAST)),
                           ("clf", BayesianLogisticRegression())])
    search = GridSearchCV(pipe, {"coreset__M": [2, 20]}, scoring="neg_log_loss", cv=3)
    search.fit(X, y)
    assert search.best_params_["coreset__M"] == 20
    fitted = search.best_estimator_
    coreset = fitted.named_steps["coreset"]
    ref = BayesianLogisticRegression().fit(X[coreset.sample_indices_],
                                           y[coreset.sample_indices_],
                                           sample_weight=coreset.sample_weight_)
    np.testing.assert_allclose(fitted[-1].coef_, ref.coef_)
    assert fitted.predict_proba(X[:5] + 0.01).shape == (5, 2)


def test_clone_and_verbose(capsys):
    X, y = _logistic_data(n=100)
    cs = clone(SparseVICoreset(verbose=1, **FAST)).fit(X, y)
    out = capsys.readouterr().out.splitlines()
    assert cs.get_params()["n_draws"] == 30
    # set-up, one line per greedy step with elapsed time and ETA, stop reason
    assert "100 rows" in out[0] and "every row" in out[0]
    steps = [line for line in out if line.startswith("[SparseVI] step")]
    assert len(steps) == cs.n_iter_
    assert steps[0].startswith("[SparseVI] step  1/10  size  1  KL ")
    assert all("elapsed" in line and "ETA" in line for line in steps)
    assert steps[-1].endswith("ETA 0.0s")
    assert "max_steps" in out[-1]
