"""QuasiNewtonCoreset: the KL gradient and the step against exact Gaussian-model math, the
full-data sums against direct computation, and the coreset posterior against the full one in
nats at N = 1e5."""

import warnings

import numpy as np
import pytest
from scipy import linalg
from scipy.special import expit
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline as SklearnPipeline

from skcoreset import (BayesianLogisticRegression, BayesianPoissonRegression,
                       QuasiNewtonCoreset, StreamingCoreset, UniformCoreset)
from skcoreset.families import make_family
from skcoreset._inference import laplace, potentials, prior_precision
from skcoreset._posterior import GaussianPosterior
from skcoreset.coreset import _quasi_newton
from skcoreset._backend import InMemoryRows
from skcoreset.coreset._calibration import SecondOrderFit, _BlockFactor
from skcoreset.coreset._candidates import draw_candidates
from skcoreset.coreset._quasi_newton import _next_budget, auto_n_draws
from skcoreset.coreset._quasi_newton_weights import (ExactPotentialSums, SubsampledPotentialSums,
                                                     _regression_step)
from skcoreset.coreset._samplers import LaplaceSampler
from skcoreset.datasets import (make_heavy_tailed, make_logistic_regression,
                                make_poisson_regression, make_rare_events)
from skcoreset.pipeline import Pipeline

from ..conftest import conjugate_linear_regression

NOISE = 0.7


def _gaussian_data(n=300, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + 0.5 + NOISE * rng.normal(size=n)
    return X, y


def _exact_kl(X, y, rows, weights, prior_prec):
    """Exact KL(pi_w || pi) of the Gaussian linear model (conjugate posteriors)."""
    w = np.zeros(len(y))
    np.add.at(w, rows, weights)
    mean_w, cov_w, _ = conjugate_linear_regression(X, y, w, NOISE, prior_prec)
    mean, cov, _ = conjugate_linear_regression(X, y, np.ones(len(y)), NOISE, prior_prec)
    return GaussianPosterior(mean_w, cov_w).kl(GaussianPosterior(mean, cov))


def _laplace_quality(X, y, model, coreset, **family_kw):
    """KL(coreset Laplace || full Laplace) in nats and the largest mean error in full sd."""
    family = make_family(model, **family_kw)
    y_enc = np.where(y == 1, 1.0, -1.0) if model == "logistic" else y.astype(float)
    prior = prior_precision(X.shape[1], prior_scale=1.0, intercept_prior_scale=10.0,
                            fit_intercept=True)
    w = np.zeros(len(y))
    w[coreset.sample_indices_] = coreset.sample_weight_
    fit = dict(prior_prec=prior, fit_intercept=True)
    full = laplace(X, y_enc, family, sample_weight=np.ones(len(y)), **fit).posterior
    core = laplace(X, y_enc, family, sample_weight=w, **fit).posterior
    return core.kl(full), np.max(np.abs(core.mean - full.mean) / full.std)


def test_kl_gradient_is_minus_covariance_with_residual():
    """grad_w KL(pi_w || pi) = -Cov_w[f_I, (s - w)^T f] (exponential-family identity), checked
    against central finite differences of the exact Gaussian-model KL."""
    X, y = _gaussian_data()
    family = make_family("gaussian", noise_scale=NOISE)
    prior = prior_precision(2, prior_scale=1.0, intercept_prior_scale=10.0, fit_intercept=True)
    rows = np.array([3, 50, 100, 150, 200, 250])
    w = np.array([40.0, 60.0, 50.0, 45.0, 55.0, 50.0])
    sampler = LaplaceSampler(X, y, family, prior, True)  # exact for the Gaussian model
    sampler.update(rows, w)
    thetas = sampler.draw(200_000, np.random.RandomState(0))
    sums = ExactPotentialSums(InMemoryRows(X, y, np.ones(len(y))), family, True,
                              len(thetas))
    F = sums(thetas, None)
    G = family.loglik(y[rows], X[rows] @ thetas[:, :-1].T + thetas[:, -1])
    G -= G.mean(axis=1, keepdims=True)
    r = F - F.mean() - w @ G
    grad_mc = -(G @ r) / (len(thetas) - 1)
    eps = 1e-3
    grad_fd = np.array([(_exact_kl(X, y, rows, w + eps * e, prior)
                         - _exact_kl(X, y, rows, w - eps * e, prior)) / (2 * eps)
                        for e in np.eye(len(rows))])
    np.testing.assert_allclose(grad_mc, grad_fd, rtol=0.03, atol=0.03 * np.abs(grad_fd).max())


def test_regression_step_is_damped_least_squares():
    rng = np.random.default_rng(0)
    for M, S in [(5, 40), (40, 5)]:  # both Gram forms
        G, r = rng.normal(size=(M, S)), rng.normal(size=S)
        lam = 0.1 * np.trace(G @ G.T) / M
        expected = np.linalg.solve(G @ G.T + lam * np.eye(M), G @ r)
        np.testing.assert_allclose(_regression_step(G, r, 0.1), expected, rtol=1e-10)
    assert not np.any(_regression_step(np.zeros((3, 10)), rng.normal(size=10), 0.1))


@pytest.mark.parametrize("model", ["logistic", "poisson", "gaussian"])
def test_exact_sums_in_chunks_equal_direct_sum(model, monkeypatch):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1000, 3))
    y = {"logistic": np.where(rng.random(1000) < 0.3, 1.0, -1.0),
         "poisson": rng.poisson(2.0, size=1000).astype(float),
         "gaussian": rng.normal(size=1000)}[model]
    family = make_family(model)
    s = rng.random(1000)
    thetas = 0.3 * rng.normal(size=(7, 4))
    monkeypatch.setattr(potentials, "_CHUNK_ELEMENTS", 7 * 64)  # 16 chunks
    direct = s @ family.loglik(y, X @ thetas[:, :-1].T + thetas[:, -1])
    sums = ExactPotentialSums(InMemoryRows(X, y, s), family, True, 7)(thetas, None)
    # potentials drop per-row constants (log y!): compare the differences between draws
    np.testing.assert_allclose(sums - sums[0], direct - direct[0], rtol=1e-10, atol=1e-8)


def test_control_variate_sums_are_exact_for_gaussian_and_unbiased_for_logistic():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(5000, 3))
    thetas = np.array([0.5, -0.3, 0.2, 0.1]) + 0.05 * rng.normal(size=(20, 4))
    s = np.ones(5000)
    # Gaussian: the potentials are quadratic, the Taylor part is everything
    y = X @ [0.5, -0.3, 0.2] + 0.1 + rng.normal(size=5000)
    family = make_family("gaussian")
    exact = ExactPotentialSums(InMemoryRows(X, y, s), family, True, 20)(thetas, None)
    estimate = SubsampledPotentialSums(InMemoryRows(X, y, s), family, True, 20, 50)
    estimate.prepare(thetas.mean(axis=0))
    got = estimate(thetas, np.random.RandomState(0))
    np.testing.assert_allclose(got - got.mean(), exact - exact.mean(), atol=1e-7)
    # logistic: the remainder is estimated; the mean over subsamples is the exact sum
    y = np.where(rng.random(5000) < expit(X @ [0.5, -0.3, 0.2] + 0.1), 1.0, -1.0)
    family = make_family("logistic")
    exact = ExactPotentialSums(InMemoryRows(X, y, s), family, True, 20)(thetas, None)
    estimate = SubsampledPotentialSums(InMemoryRows(X, y, s), family, True, 20, 100)
    estimate.prepare(thetas.mean(axis=0) + 0.2)  # an off-centre reference
    state = np.random.RandomState(1)
    draws = np.array([estimate(thetas, state) for _ in range(400)])
    draws -= draws.mean(axis=1, keepdims=True)
    err = draws.mean(axis=0) - (exact - exact.mean())
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(err) < 4.5 * se + 1e-9)


def test_gaussian_model_reaches_the_full_posterior():
    """p = 3 parameters: 9 moment conditions, so 40 rows can match the full posterior."""
    X, y = _gaussian_data(n=2000)
    prior = prior_precision(2, prior_scale=1.0, intercept_prior_scale=10.0, fit_intercept=True)
    kw = dict(M=40, model=make_family("gaussian", noise_scale=NOISE), random_state=0)
    uniform = UniformCoreset(**kw).fit(X, y)
    coreset = QuasiNewtonCoreset(n_draws=200, **kw).fit(X, y)
    kl_uniform = _exact_kl(X, y, uniform.sample_indices_, uniform.sample_weight_, prior)
    kl = _exact_kl(X, y, coreset.sample_indices_, coreset.sample_weight_, prior)
    assert kl_uniform > 1.0
    assert kl < 1e-3 * kl_uniform and kl < 5e-3
    # the second-order estimate tracks the exact KL
    assert coreset.kl_estimate_ == pytest.approx(kl, rel=1.0, abs=1e-3)


@pytest.fixture(scope="module")
def logistic_1e5():
    X, y = make_logistic_regression(100_000, coef=np.linspace(-1.5, 1.5, 10), intercept=0.3,
                                    random_state=0)
    return X, y


def test_logistic_at_1e5_rows_in_nats(logistic_1e5):
    X, y = logistic_1e5
    coreset = QuasiNewtonCoreset(M=500, random_state=0).fit(X, y)
    kl, mean_err = _laplace_quality(X, y, "logistic", coreset)
    kl_uniform, _ = _laplace_quality(X, y, "logistic",
                                     UniformCoreset(M=500, random_state=0).fit(X, y))
    assert kl_uniform > 50  # about d N / (2 M) nats
    assert kl < 0.05, kl
    assert mean_err < 0.1, mean_err
    assert 480 <= len(coreset.sample_indices_) <= 500
    assert coreset.kl_estimate_ < 0.05


def test_poisson_log_link_with_control_variates():
    X, y = make_poisson_regression(60_000, coef=0.3 * np.linspace(-1, 1, 5), intercept=0.5,
                                   random_state=1)
    for n_subsample in [None, 5_000]:
        coreset = QuasiNewtonCoreset(M=300, n_subsample=n_subsample, random_state=0).fit(X, y)
        kl, mean_err = _laplace_quality(X, y, "poisson", coreset, link="log")
        assert kl < 0.1 and mean_err < 0.2, (n_subsample, kl, mean_err)


def test_rare_class_is_kept_by_stratification_and_a_poor_coreset_warns():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20_000, 3))
    y = (rng.random(20_000) < expit(X @ [1.0, -1.0, 0.5] - 6.5)).astype(int)  # 0.4 %
    full = BayesianLogisticRegression().fit(X, y)
    for seed, candidates in [(0, "auto"), (1, "auto"), (0, "uniform"), (1, "uniform")]:
        with pytest.warns(UserWarning) as record:
            coreset = QuasiNewtonCoreset(M=20, candidates=candidates,
                                         random_state=seed).fit(X, y)
            warnings.warn("sentinel")  # pytest.warns needs one warning
        assert np.any(y[coreset.sample_indices_] == 1)
        rows = coreset.sample_indices_
        core = BayesianLogisticRegression().fit(X[rows], y[rows],
                                                sample_weight=coreset.sample_weight_)
        kl = core.posterior_.kl(full.posterior_)
        warned = any("Increase M" in str(w.message) for w in record)
        # the estimate is the KL between the Laplace approximations: it warns exactly when
        # the coreset is poor
        assert coreset.kl_estimate_ == pytest.approx(kl, rel=1e-3, abs=1e-5)
        assert warned == (kl > 1.0)
    # without strata a uniform draw of 20 rows misses the 0.4 % of positives; the importance
    # of the positives (their score) puts them among the candidates all the same
    kw = dict(M=20, stratify=False, max_iter=0)
    uniform = [QuasiNewtonCoreset(candidates="uniform", random_state=seed, **kw)
               for seed in range(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert not any(np.any(y[c.fit(X, y).sample_indices_] == 1) for c in uniform)
    auto = [QuasiNewtonCoreset(random_state=seed, **kw).fit(X, y) for seed in range(3)]
    assert all(np.mean(y[c.sample_indices_] == 1) > 0.2 for c in auto)


def test_incoming_weights_define_the_target():
    """Integer weights: the coreset of the weighted data approximates the posterior of the
    data with repeated rows."""
    X, y = make_logistic_regression(20_000, coef=[1.0, -1.0, 0.5], random_state=4)
    w = np.random.default_rng(4).integers(0, 4, size=len(y)).astype(float)
    coreset = QuasiNewtonCoreset(M=200, random_state=0).fit(X, y, sample_weight=w)
    assert np.all(w[coreset.sample_indices_] > 0)
    rows = np.repeat(np.arange(len(y)), w.astype(int))
    repeated = BayesianLogisticRegression().fit(X[rows], y[rows])
    core = BayesianLogisticRegression().fit(X[coreset.sample_indices_],
                                            y[coreset.sample_indices_],
                                            sample_weight=coreset.sample_weight_)
    assert core.posterior_.kl(repeated.posterior_) < 0.1


def test_whole_data_and_stop_rules():
    X, y = make_logistic_regression(300, coef=[1.0, -1.0], random_state=5)
    for M in (1000, "auto"):
        whole = QuasiNewtonCoreset(M=M).fit(X, y)
        assert whole.stop_reason_ == "whole data" and whole.n_iter_ == 0
        np.testing.assert_array_equal(whole.sample_indices_, np.arange(300))
        np.testing.assert_allclose(whole.sample_weight_, 1.0)
    # the Monte Carlo iterations, from uniform weights
    X, y = make_logistic_regression(5000, coef=[1.0, -1.0], random_state=5)
    family = make_family("logistic")
    y_enc = np.where(y == 1, 1.0, -1.0)
    prior = prior_precision(2, prior_scale=1.0, intercept_prior_scale=10.0, fit_intercept=True)
    rows = np.random.RandomState(0).choice(5000, 50, replace=False)
    data = InMemoryRows(X, y_enc, np.ones(5000))
    kw = dict(weights=np.full(50, 100.0), prior_prec=prior, fit_intercept=True)

    def run(**params):
        return _quasi_newton.quasi_newton_weights(data, data.take(rows, kw["weights"]),
                                                  family, **kw, **params,
                                                  random_state=np.random.RandomState(0))

    assert run(max_iter=0).stop_reason == "max_iter"
    one = run(max_iter=1)
    assert len(one.history) == 1 and one.stop_reason == "max_iter"
    loose = run(tol=1e6)
    assert len(loose.history) == 1 and loose.stop_reason == "tol"
    fitted = run(tol=0.0, max_iter=200)
    assert fitted.stop_reason == "n_iter_no_change" and len(fitted.history) < 200
    assert fitted.history.shape[1] == 3
    assert fitted.history[0, 0] > fitted.kl_estimate > 0
    assert np.all(fitted.history[-4:, 2] == 0)  # the last 4 proposals were rejected
    coreset = QuasiNewtonCoreset(M=50, max_iter=0, random_state=0).fit(X, y)
    assert coreset.n_iter_ == 0 and coreset.history_.shape == (0, 3)


def test_mcmc_sampler():
    X, y = make_logistic_regression(20_000, coef=[1.0, -1.0, 0.5], random_state=6)
    coreset = QuasiNewtonCoreset(M=200, sampler="mcmc", max_iter=5, tol=0.0,
                                 random_state=0).fit(X, y)
    assert coreset.n_iter_ >= 1
    kl, mean_err = _laplace_quality(X, y, "logistic", coreset)
    assert kl < 0.2 and mean_err < 0.3, (kl, mean_err)


def test_memmap_dask_streaming_and_verbose(tmp_path, capsys):
    X, y = make_logistic_regression(4000, coef=[1.0, -1.0, 0.5], random_state=7)
    path = tmp_path / "X.dat"
    mm = np.memmap(path, dtype=np.float32, mode="w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    X_mm = np.memmap(path, dtype=np.float32, mode="r", shape=X.shape)
    coreset = QuasiNewtonCoreset(M=100, random_state=0, verbose=1).fit(X_mm, y)
    assert "KL estimate" in capsys.readouterr().out
    kl, _ = _laplace_quality(X.astype(np.float32).astype(float), y, "logistic", coreset)
    assert kl < 0.1
    streamed = StreamingCoreset(QuasiNewtonCoreset(M=100, random_state=0),
                                block_size=1000).fit(X, y)
    assert 0 < len(streamed.sample_indices_) <= 100
    da = pytest.importorskip("dask.array")
    on_dask = QuasiNewtonCoreset(M=100, random_state=0).fit(da.from_array(X, chunks=1000),
                                                            da.from_array(y, chunks=1000))
    in_memory = QuasiNewtonCoreset(M=100, random_state=0).fit(X, y)
    np.testing.assert_array_equal(on_dask.sample_indices_, in_memory.sample_indices_)
    np.testing.assert_allclose(on_dask.sample_weight_, in_memory.sample_weight_, rtol=1e-6)


def test_streaming_over_the_default_auto_budget():
    # M="auto" sizes each block's coreset itself: no fixed budget to compare a part with
    X, y = make_logistic_regression(3000, coef=[1.0, -1.0, 0.5], random_state=7)
    streamed = StreamingCoreset(QuasiNewtonCoreset(random_state=0), block_size=1000,
                                random_state=0).fit(X, y)
    assert 0 < len(streamed.sample_indices_) < 3000
    kl, _ = _laplace_quality(X, y, "logistic", streamed)
    assert kl < 0.1


def test_pipelines_and_grid_search():
    X, y = make_logistic_regression(3000, coef=[1.0, -1.0, 0.5], random_state=8)
    pipe = Pipeline([("coreset", QuasiNewtonCoreset(M=50, random_state=0)),
                     ("clf", BayesianLogisticRegression())])
    search = GridSearchCV(pipe, {"coreset__M": [30, 60]}, cv=3, scoring="neg_log_loss")
    search.fit(X, y)
    proba, std = search.best_estimator_.predict_proba(X[:5], return_std=True)
    assert proba.shape == (5, 2) and np.all(std >= 0)
    plain = SklearnPipeline([("coreset", QuasiNewtonCoreset(M=50, model="poisson",
                                                            random_state=0)),
                             ("reg", BayesianPoissonRegression())])
    X, y = make_poisson_regression(3000, coef=[0.3, -0.2], random_state=8)
    plain.fit(X, y)
    assert plain[-1].coef_.shape == (2,)


@pytest.mark.parametrize("params, match", [
    (dict(n_draws=1), "n_draws"),
    (dict(sampler="exact"), "sampler"),
    (dict(n_subsample=0), "n_subsample"),
    (dict(M=0), "M"),
    (dict(n_iter_no_change=0), "n_iter_no_change"),
])
def test_bad_parameters(params, match):
    X, y = make_logistic_regression(100, coef=[1.0], random_state=0)
    with pytest.raises(ValueError, match=match):
        clone(QuasiNewtonCoreset(**params)).fit(X, y)


def _gaussian_fit(X, y, rows, prior):
    """The exact step's problem for the Gaussian model on ``rows``, at the exact full
    posterior (the model is quadratic: its Laplace approximation is the posterior)."""
    family = make_family("gaussian", noise_scale=NOISE)
    mean, cov, _ = conjugate_linear_regression(X, y, np.ones(len(y)), NOISE, prior)
    precision = np.linalg.inv(cov)
    A = np.column_stack([X, np.ones(len(y))])
    grad = A.T @ family.d1(y, A @ mean)
    return SecondOrderFit(X[rows], y[rows], family, True, mean, precision, grad,
                          precision - np.diag(prior))


def test_second_order_kl_is_the_gaussian_kl_to_second_order():
    """KL_2(w) of the exact step against the exact KL between conjugate posteriors: equal to
    second order (the ratio tends to 1 as the weights approach a perfect coreset), and its
    gradient (the exact step's regression) is the KL_2 gradient by finite differences."""
    X, y = _gaussian_data(n=400, d=3)
    prior = prior_precision(3, prior_scale=1.0, intercept_prior_scale=10.0, fit_intercept=True)
    rows = np.arange(0, 400, 4)
    fit = _gaussian_fit(X, y, rows, prior)
    perfect = fit.solve(np.full(100, 4.0), penalty=1e-12)
    assert fit.kl(perfect) < 1e-10 and _exact_kl(X, y, rows, perfect, prior) < 1e-8
    direction = np.random.default_rng(0).normal(size=100)
    ratios = []
    for eps in (0.3, 0.1, 0.03):
        w = perfect * (1.0 + eps * direction / np.abs(direction).max())
        ratios.append(fit.kl(w) / _exact_kl(X, y, rows, w, prior))
    assert abs(ratios[-1] - 1.0) < 0.05 and abs(ratios[-1] - 1) < abs(ratios[0] - 1)
    w = np.full(100, 4.0)
    R_g, R_H = fit.residual(w)
    grad = fit.d1 * (fit.B @ R_g) + 0.5 * fit.c * np.einsum("ij,jk,ik->i", fit.B, R_H, fit.B)
    h = 1e-4
    numeric = [(fit.kl(w + h * e) - fit.kl(w - h * e)) / (2 * h) for e in np.eye(100)[:5]]
    np.testing.assert_allclose(grad[:5], numeric, rtol=1e-5)


def test_exact_step_solution_is_a_constrained_minimum():
    """The solver's weights: non-negative, and the penalised objective's gradient on the
    positive weights a thousandth of its size at the start (first-order optimality on the
    free set), over several blocks."""
    X, y = _gaussian_data(n=3000, d=4)
    prior = prior_precision(4, prior_scale=1.0, intercept_prior_scale=10.0, fit_intercept=True)
    rows = np.arange(0, 3000, 10)
    fit = _gaussian_fit(X, y, rows, prior)
    w0 = 10.0 * np.random.default_rng(0).uniform(0.5, 1.5, 300)
    norms = np.sum(fit.B**2, 1)
    lam = 1e-3 * np.mean(w0**2 * (fit.d1**2 * norms + 0.5 * fit.c**2 * norms**2))

    def gradient(w):
        R_g, R_H = fit.residual(w)
        quadratic = np.einsum("ij,jk,ik->i", fit.B, R_H, fit.B)
        grad_kl = fit.d1 * (fit.B @ R_g) + 0.5 * fit.c * quadratic
        return w0 * grad_kl + lam * (w / w0 - 1.0)

    w = fit.solve(w0, penalty=1e-3, block_rows=70)
    assert np.all(w >= 0) and fit.kl(w) < 1e-3 * fit.kl(w0)
    assert np.max(np.abs(gradient(w)[w > 0])) < 1e-3 * np.max(np.abs(gradient(w0)))


def test_block_factor_solves_the_systems_of_its_subsets():
    """A block's factor, reused as rows leave it (a Schur complement in them), solves each
    subset's system as scipy's solve of that principal submatrix does, and declines a
    subset that is not one of its rows or has lost more than a sixth of them."""
    rng = np.random.default_rng(3)
    half = rng.normal(size=(40, 60))
    system = half @ half.T + 0.1 * np.eye(40)
    rows = np.arange(100, 140)
    factor = _BlockFactor(rows, system.copy())
    kept = np.ones(40, dtype=bool)
    for removed in ([3], [3, 17, 29], [0, 3, 17, 29, 39]):  # rows leave in turn
        kept[removed] = False
        rhs = rng.normal(size=kept.sum())
        assert factor.restrict(rows[kept])
        np.testing.assert_allclose(factor.solve(rhs),
                                   linalg.solve(system[np.ix_(kept, kept)], rhs), rtol=1e-9)
    assert not factor.restrict(rows[:20])  # half the rows gone: a new factor is cheaper
    assert not factor.restrict(np.append(rows[kept], 140))  # a row it does not hold
    assert not factor.restrict(rows[1:])  # row 3 back from zero


def test_auto_size_stops_at_the_target_on_a_gaussian_model():
    """M="auto" on the Gaussian model, where the Laplace approximation is the posterior and
    kl_estimate_ is the exact KL: it grows until the exact KL meets the target and stops at
    the first size that does; a row or time budget that stops it short warns, naming it."""
    rng = np.random.default_rng(9)
    d = 30
    X = rng.standard_t(3, size=(20_000, d))
    y = X @ rng.normal(size=d) / np.sqrt(d) + 0.5 + NOISE * rng.normal(size=20_000)
    prior = prior_precision(d, prior_scale=1.0, intercept_prior_scale=10.0, fit_intercept=True)
    family = make_family("gaussian", noise_scale=NOISE)
    for target in (0.1, 1e-3):
        coreset = QuasiNewtonCoreset(target_kl=target, model=family, random_state=0).fit(X, y)
        exact = _exact_kl(X, y, coreset.sample_indices_, coreset.sample_weight_, prior)
        # exact up to the full mode's Newton tolerance (1e-6 nats)
        assert coreset.kl_estimate_ == pytest.approx(exact, rel=1e-3, abs=1e-5)
        assert exact <= target
        path = coreset.kl_path_
        assert np.all(path[:-1, 1] > target) and path[-1, 1] == coreset.kl_estimate_
        assert np.all(np.diff(path[:, 0]) > 0)
    assert len(path) >= 2  # the stricter target needed a larger coreset
    with pytest.warns(UserWarning, match="max_rows=600"):
        short = QuasiNewtonCoreset(target_kl=1e-9, max_rows=600, model=family,
                                   random_state=0).fit(X, y)
    assert short.kl_path_[-1, 0] <= 600 and short.kl_estimate_ > 1e-9
    with pytest.warns(UserWarning, match="max_time=1e-06"):
        QuasiNewtonCoreset(target_kl=1e-9, max_time=1e-6, model=family,
                           random_state=0).fit(X, y)


def test_importance_candidates_catch_extreme_rows_and_rare_positives():
    """Rows with extreme linear predictors (a heavy-tailed covariate under the log link)
    are candidates with certainty, with their own weight, where a uniform draw misses
    them; the positives of rare events are drawn far above their share."""
    X, y, coef = make_heavy_tailed(50_000, n_features=3, return_coef=True, random_state=0)
    extreme = np.argsort(-(X @ coef))[:3]  # rates 80-400 times the median
    family = make_family("poisson")
    prior = prior_precision(3, prior_scale=1.0, intercept_prior_scale=10.0, fit_intercept=True)
    data = InMemoryRows(X, y.astype(float), np.ones(len(y)))
    for uniform in (False, True):
        found = draw_candidates(data, family, prior, True, 300, np.random.RandomState(0),
                                stratify=False, uniform=uniform)
        part = found.rows.draw(300)
        caught = np.isin(part.indices, extreme)
        if uniform:
            assert caught.sum() <= 1
        else:
            assert caught.sum() == 3 and np.all(part.weights[caught] == 1.0)
    auto = QuasiNewtonCoreset(M=300, model="poisson", random_state=0).fit(X, y)
    uniform = QuasiNewtonCoreset(M=300, model="poisson", candidates="uniform",
                                 random_state=0).fit(X, y)
    assert auto.kl_estimate_ < 1e-2 * uniform.kl_estimate_
    X, y = make_rare_events(50_000, n_features=5, positive_rate=0.002, random_state=0)
    auto = QuasiNewtonCoreset(M=300, random_state=0).fit(X, y)
    assert np.mean(y[auto.sample_indices_]) > 20 * np.mean(y)


def test_n_draws_auto_grows_with_the_parameters():
    assert [auto_n_draws(p) for p in (3, 31, 101, 1000)] == [100, 124, 404, 1000]
    X, y = make_logistic_regression(3000, coef=np.ones(30) / 6, random_state=0)
    coreset = QuasiNewtonCoreset(M=100, max_iter=1, random_state=0).fit(X, y)
    assert coreset.n_draws_ == 124 and coreset.n_iter_ == 1


def test_growth_follows_the_power_law_of_the_path():
    """The next size: 1.5 times the first; then where the power law through the last two
    (size, KL) points meets the target (times 1.1), within [1.25, 2] times the last size."""
    assert _next_budget([(1000, 1.0)], 0.1) == 1500
    slope = np.log(4.0) / np.log(1.5)
    expected = int(np.ceil(1500 * 1.1 * (0.25 / 0.1) ** (1 / slope)))
    assert _next_budget([(1000, 1.0), (1500, 0.25)], 0.1) == expected
    assert _next_budget([(1000, 1.0), (1500, 0.9)], 0.1) == 3000  # slow decay: doubles
    assert _next_budget([(1000, 1.0), (1500, 0.11)], 0.1) == 1875  # nearly there: 1.25


# -- wide designs: M="auto" returns every row when p (p + 3) / 2 >= n_positive / 2 -------

# 3 categorical features of 7 levels one-hot encoded and an intercept: p = 22 parameters,
# whose coreset needs p (p + 3) / 2 = 275 rows, half of 550
_WIDE_P, _WIDE_NEEDED = 22, 275


def _one_hot_design(n, seed=0):
    """One-hot codes of 3 categorical features of 7 levels (skewed level frequencies, so
    some levels are rare) with logistic labels from random level effects, as CSR."""
    from scipy import sparse

    rng = np.random.default_rng(seed)
    codes = np.column_stack([7 * j + rng.choice(7, size=n, p=rng.dirichlet(np.ones(7)))
                             for j in range(3)])
    X = sparse.csr_matrix((np.ones(3 * n), codes.ravel(), np.arange(0, 3 * n + 1, 3)),
                          shape=(n, 21))
    y = (rng.random(n) < expit(X @ rng.normal(0.0, 0.7, size=21) - 0.5)).astype(int)
    return X, y


def _wide_fit(X, y, **fit_params):
    """Fit QuasiNewtonCoreset() whose pilot fit would raise; its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        coreset = QuasiNewtonCoreset(random_state=0).fit(X, y, **fit_params)
    return coreset, [str(w.message) for w in caught if "QuasiNewtonCoreset" in str(w.message)]


@pytest.mark.parametrize("dense", [False, True])
def test_wide_design_is_fitted_on_every_row(monkeypatch, dense):
    def no_candidates(*args, **kwargs):
        raise AssertionError("the candidates were drawn")

    monkeypatch.setattr(_quasi_newton, "draw_candidates", no_candidates)
    X, y = _one_hot_design(600)
    X = X.toarray() if dense else X
    # 550 rows of positive weight: p (p + 3) / 2 = 275 is half of them
    weights = np.random.default_rng(1).uniform(0.5, 2.0, size=600)
    weights[::12] = 0.0
    assert np.count_nonzero(weights) == 2 * _WIDE_NEEDED
    coreset, messages = _wide_fit(X, y, sample_weight=weights)
    assert coreset.stop_reason_ == "whole data" and coreset.kl_estimate_ == 0.0
    assert coreset.n_iter_ == 0 and coreset.kl_path_.shape == (0, 2)
    np.testing.assert_array_equal(coreset.sample_indices_, np.flatnonzero(weights))
    np.testing.assert_array_equal(coreset.sample_weight_, weights[weights > 0])
    assert len(messages) == 1, messages
    assert (f"{_WIDE_P} parameters needs about {_WIDE_NEEDED} coreset rows" in messages[0]
            and "half of the 550 rows of positive weight" in messages[0]
            and "an integer M forces" in messages[0])
    # one row more: below the threshold, the candidates are drawn
    weights[12] = 1.0
    with pytest.raises(AssertionError, match="candidates were drawn"):
        _wide_fit(X, y, sample_weight=weights)


def test_a_budget_far_below_the_rows_needed_gives_every_row(monkeypatch):
    """p (p + 3) / 2 below half the rows but above twice max_rows: no coreset within the
    budget comes close, so every row, at once; at twice max_rows the coreset is built."""
    def no_candidates(*args, **kwargs):
        raise AssertionError("the candidates were drawn")

    monkeypatch.setattr(_quasi_newton, "draw_candidates", no_candidates)
    X, y = _one_hot_design(2000)
    assert 2 * _WIDE_NEEDED < 2000
    budget = (_WIDE_NEEDED - 1) // 2  # 137: needed = 275 > 274
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        coreset = QuasiNewtonCoreset(max_rows=budget, random_state=0).fit(X, y)
    messages = [str(w.message) for w in caught if "QuasiNewtonCoreset" in str(w.message)]
    assert coreset.stop_reason_ == "whole data" and len(coreset.sample_indices_) == 2000
    assert len(messages) == 1 and f"more than twice max_rows={budget}" in messages[0]
    assert "raise max_rows" in messages[0]
    with pytest.raises(AssertionError, match="candidates were drawn"):
        QuasiNewtonCoreset(max_rows=budget + 1, random_state=0).fit(X, y)


@pytest.mark.parametrize("dense", [False, True])
def test_wide_design_hands_on_the_data_itself(dense):
    X, y = _one_hot_design(500)
    X = X.toarray() if dense else X
    with pytest.warns(UserWarning, match="coreset is every row") as record:
        pipe = Pipeline([("coreset", QuasiNewtonCoreset(random_state=0)),
                         ("clf", BayesianLogisticRegression())]).fit(X, y)
    assert sum("QuasiNewtonCoreset" in str(w.message) for w in record) == 1
    full = BayesianLogisticRegression().fit(X, y)
    np.testing.assert_allclose(pipe[-1].posterior_.mean, full.posterior_.mean, rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(pipe[-1].posterior_.cov, full.posterior_.cov, rtol=1e-9,
                               atol=1e-12)
    # every row of positive weight: the rows handed on are X's, in their order, not a copy
    with pytest.warns(UserWarning, match="coreset is every row"):
        X_core, y_core, w_core = QuasiNewtonCoreset(random_state=0).fit_coreset(X, y)
    np.testing.assert_array_equal(y_core, y)
    np.testing.assert_array_equal(w_core, 1.0)
    # so does a budget M of every row
    with pytest.warns(UserWarning, match="M=1000 is at least"):
        X_budget, _, _ = QuasiNewtonCoreset(M=1000).fit_coreset(X, y)
    for rows in (X_core, X_budget):
        if dense:
            assert np.shares_memory(rows, X) and rows.shape == X.shape
        else:
            assert np.shares_memory(rows.data, X.data)
            assert np.shares_memory(rows.indices, X.indices)
            assert (rows != X).nnz == 0
    # a plain Pipeline's weighted subset splits one row (N + 1 rows): the same posterior
    with pytest.warns(UserWarning, match="coreset is every row"):
        subset = QuasiNewtonCoreset(random_state=0).fit_transform(X, y)
    np.testing.assert_array_equal(subset.sample_indices, np.r_[0, np.arange(500)])
    plain = BayesianLogisticRegression().fit(subset, y)
    np.testing.assert_allclose(plain.posterior_.mean, full.posterior_.mean, rtol=1e-9,
                               atol=1e-12)


def test_wide_design_out_of_memory_keeps_the_budget(tmp_path):
    """Rows in a np.memmap or on a cluster are not gathered whole: the coreset stays within
    max_rows and the budget's warning says why no coreset meets the target."""
    X, y = _one_hot_design(550)
    X = X.toarray()
    path = tmp_path / "X.dat"
    mm = np.memmap(path, dtype=np.float64, mode="w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    inputs = [(np.memmap(path, dtype=np.float64, mode="r", shape=X.shape), y)]
    try:
        import dask.array as da
        inputs.append((da.from_array(X, chunks=200), da.from_array(y, chunks=200)))
    except ImportError:  # pragma: no cover - the test extra installs dask
        pass
    for X_rows, y_rows in inputs:
        with pytest.warns(UserWarning, match="out of reach of any coreset") as record:
            coreset = QuasiNewtonCoreset(max_rows=60, random_state=0).fit(X_rows, y_rows)
        message = next(str(w.message) for w in record if "out of reach" in str(w.message))
        assert f"about {_WIDE_NEEDED} coreset rows" in message and "max_rows=60" in message
        assert coreset.stop_reason_ != "whole data"
        assert 0 < len(coreset.sample_indices_) <= 60
