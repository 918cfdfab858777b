"""A coreset is built under the model that is fitted on it: in a Pipeline with
``model="auto"`` the final estimator's family, link and prior; an explicit model that
disagrees warns, naming both."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, QuasiNewtonCoreset, StreamingCoreset,
                       UniformCoreset)
from skcoreset.exceptions import ModelMismatchWarning
from skcoreset.metrics import coreset_quality, mean_error_sd, posterior_kl
from skcoreset.pipeline import Pipeline


def _overdispersed_counts(n=10_000, alpha=1.3, seed=0):
    """Counts with ``Var = mu + alpha mu^2``, like the RAND HIE doctor visits (mean 3,
    alpha about 1.3)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    mu = np.exp(0.9 + X @ np.array([0.3, -0.2, 0.1, 0.25, 0.0, -0.15]))
    return X, rng.negative_binomial(1 / alpha, 1 / (1 + alpha * mu)).astype(float)


@pytest.fixture(scope="module")
def counts():
    return _overdispersed_counts()


def test_auto_takes_the_final_negative_binomial_model(counts):
    X, y = counts
    coreset = QuasiNewtonCoreset(random_state=0)
    params = coreset.get_params()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelMismatchWarning)
        pipe = Pipeline([("coreset", coreset),
                         ("reg", BayesianNegativeBinomialRegression())]).fit(X, y)
    assert coreset.get_params() == params  # the user's parameters are left alone
    assert coreset.model_ == "negative_binomial"
    full = BayesianNegativeBinomialRegression().fit(X, y)
    reg = pipe.named_steps["reg"]
    # under the Poisson model the same pipeline is several nats off (its weights match
    # the Poisson gradient and curvature, not the negative binomial's); calibrated in the
    # coefficients and log alpha jointly, alpha and every sd match the full data's
    assert posterior_kl(reg, full) < 0.01
    assert mean_error_sd(reg, full) < 0.05
    assert abs(reg.alpha_ - full.alpha_) < 0.5 * full.alpha_std_
    assert reg.log_alpha_std_ == pytest.approx(full.log_alpha_std_, rel=0.05)
    sd = np.sqrt(np.diag(reg.posterior_.cov) / np.diag(full.posterior_.cov))
    np.testing.assert_allclose(sd, 1.0, atol=0.05)
    # a plain fit still reads counts as Poisson, and is far off
    poisson = clone(coreset).fit(X, y)
    assert poisson.model_ == "poisson"
    wrong = BayesianNegativeBinomialRegression().fit(
        X[poisson.sample_indices_], y[poisson.sample_indices_],
        sample_weight=poisson.sample_weight_)
    assert posterior_kl(wrong, full) > 0.5


def test_a_second_fit_takes_the_final_model_again():
    """The likelihood of the previous fit is not the constructor's own: a refitted
    Pipeline built its coreset under the model inferred from y (Poisson for counts)."""
    X, y = _overdispersed_counts(n=600)
    pipe = Pipeline([("coreset", UniformCoreset(M=100, random_state=0)),
                     ("reg", BayesianNegativeBinomialRegression())])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a small coreset far from the posterior
        for _ in range(2):
            pipe.fit(X, y)
            assert pipe[0].model_ == "negative_binomial"


def test_auto_takes_link_and_prior_of_the_final_estimator():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 3))
    y = rng.poisson(np.log1p(np.exp(1.0 + X @ [0.5, -0.5, 0.2]))).astype(float)
    coreset = UniformCoreset(M=300, random_state=0)
    final = BayesianPoissonRegression(link="softplus", prior_scale=0.3,
                                      intercept_prior_scale=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelMismatchWarning)
        Pipeline([("coreset", coreset), ("reg", final)]).fit(X, y)
    assert coreset.family_.link.name == "softplus"
    assert (coreset.prior_scale_, coreset.intercept_prior_scale_) == (0.3, 2.0)
    assert (coreset.prior_scale, coreset.intercept_prior_scale) == (1.0, 10.0)
    # coreset_quality judges it under the prior it was built for: the same KL as the
    # estimators' Laplace fits under that prior
    quality = coreset_quality(coreset, X, y)
    core = clone(final).fit(X[coreset.sample_indices_], y[coreset.sample_indices_],
                            sample_weight=coreset.sample_weight_)
    assert quality.kl == pytest.approx(posterior_kl(core, clone(final).fit(X, y)), rel=1e-5)


def test_explicit_model_that_disagrees_warns_naming_both(counts):
    X, y = counts
    coreset = QuasiNewtonCoreset(M=300, model="poisson", random_state=0)
    with pytest.warns(ModelMismatchWarning,
                      match=r"QuasiNewtonCoreset is built under the poisson model, but "
                            r"BayesianNegativeBinomialRegression fits the negative_binomial"):
        Pipeline([("coreset", coreset), ("reg", BayesianNegativeBinomialRegression())]).fit(
            X, y)
    assert coreset.model_ == "poisson"  # an explicit model is kept


def test_explicit_prior_that_disagrees_warns(counts):
    X, y = counts
    y = (y > 2).astype(int)
    with pytest.warns(ModelMismatchWarning, match=r"UniformCoreset\(prior_scale=5.0\) is ignored"):
        Pipeline([("coreset", UniformCoreset(M=500, prior_scale=5.0, random_state=0)),
                  ("clf", BayesianLogisticRegression())]).fit(X, y)
    with pytest.warns(ModelMismatchWarning, match=r"fit_intercept=True, but "
                                                  r"BayesianLogisticRegression fits with "
                                                  r"fit_intercept=False"):
        Pipeline([("coreset", UniformCoreset(M=500, random_state=0)),
                  ("clf", BayesianLogisticRegression(fit_intercept=False))]).fit(X, y)


def test_agreeing_explicit_model_is_silent(counts):
    X, y = counts
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelMismatchWarning)
        Pipeline([("coreset", UniformCoreset(M=500, model="negative_binomial",
                                             random_state=0)),
                  ("reg", BayesianNegativeBinomialRegression())]).fit(X, y)


def _finite_difference_terms(family, X, y, theta, rho, h=1e-4):
    """Per-row gradient and negative Hessian of the negative binomial log-likelihood in
    ``(theta, rho = log alpha)`` by central differences of ``family.loglik``."""
    design = np.hstack([X, np.ones((len(X), 1))])
    phi0 = np.append(theta, rho)

    def loglik(phi):
        return family.with_alpha(np.exp(phi[-1])).loglik(y, design @ phi[:-1])

    k = len(phi0)
    basis = np.eye(k) * h
    grad = np.stack([(loglik(phi0 + e) - loglik(phi0 - e)) / (2 * h) for e in basis], 1)
    hess = np.empty((len(y), k, k))
    for i in range(k):
        for j in range(k):
            hess[:, i, j] = (loglik(phi0 + basis[i] + basis[j]) - loglik(phi0 + basis[i] - basis[j])
                             - loglik(phi0 - basis[i] + basis[j])
                             + loglik(phi0 - basis[i] - basis[j])) / (4 * h * h)
    return grad, -hess


def test_joint_calibration_matches_the_derivatives_in_log_alpha():
    """The joint second-order objective is that of the explicit per-row gradients and
    Hessians in (theta, log alpha), and its solver drives it to zero."""
    from skcoreset.coreset._calibration import DispersionSums, SecondOrderFit
    from skcoreset.families import NegativeBinomialFamily

    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 2))
    alpha = 0.8
    mu = np.exp(0.5 + X @ [0.4, -0.3])
    y = rng.negative_binomial(1 / alpha, 1 / (1 + alpha * mu)).astype(float)
    family = NegativeBinomialFamily(alpha=alpha)
    theta, rho = np.array([0.35, -0.25, 0.55]), np.log(alpha)
    grad, neg_hess = _finite_difference_terms(family, X, y, theta, rho)
    G, H = grad.sum(0), neg_hess.sum(0)  # the "full data": all 400 rows, unit weights
    prior = np.diag([1.0, 1.0, 0.01, 0.0])
    joint = H + prior
    sums = DispersionSums(G[-1], -H[:3, 3], -H[3, 3])
    rows = rng.choice(400, 60, replace=False)
    fit = SecondOrderFit(X[rows], y[rows], family, True, theta, joint[:3, :3], G[:3],
                         H[:3, :3], dispersion=sums)
    assert fit.joint
    w = rng.uniform(4.0, 9.0, size=60)
    C = np.linalg.cholesky(joint)
    R_g = np.linalg.solve(C, w @ grad[rows] - G)
    R_H = np.linalg.solve(C, np.linalg.solve(C, np.tensordot(w, neg_hess[rows], 1) - H).T)
    expected = 0.5 * R_g @ R_g + 0.25 * np.sum(R_H * R_H)
    assert fit.kl(w) == pytest.approx(expected, rel=1e-5)
    # 60 rows can match the 4 + 10 moments in (theta, rho): the solver finds weights that do
    solved = fit.solve(w, penalty=1e-10)
    assert fit.kl(solved) < 1e-6 * fit.kl(w)


def test_joint_calibration_on_a_dask_array(counts):
    """On a dask array alpha is first estimated on one chunk; the joint calibration (its
    sums one reduction over the chunks) still gives the full data's alpha."""
    da = pytest.importorskip("dask.array")
    X, y = counts
    full = BayesianNegativeBinomialRegression().fit(X, y)
    coreset = QuasiNewtonCoreset(model="negative_binomial", random_state=0).fit(
        da.from_array(X, chunks=(2500, X.shape[1])), da.from_array(y, chunks=2500))
    idx = coreset.sample_indices_
    reg = BayesianNegativeBinomialRegression().fit(X[idx], y[idx],
                                                   sample_weight=coreset.sample_weight_)
    assert abs(reg.alpha_ - full.alpha_) < 0.5 * full.alpha_std_
    assert posterior_kl(reg, full) < 0.01


def test_joint_calibration_in_a_stream(counts):
    """StreamingCoreset over QuasiNewtonCoreset blocks calibrates alpha in every block and
    merge, as the constructor does on the whole data."""
    X, y = counts
    full = BayesianNegativeBinomialRegression().fit(X, y)
    # calibrated at a fixed alpha, these blocks and merges left alpha 15 sds off
    pipe = Pipeline([("coreset", StreamingCoreset(QuasiNewtonCoreset(M=200),
                                                  block_size=2000, random_state=0)),
                     ("reg", BayesianNegativeBinomialRegression())])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        pipe.fit(X, y)
    reg = pipe.named_steps["reg"]
    assert abs(reg.alpha_ - full.alpha_) < 0.5 * full.alpha_std_
    assert posterior_kl(reg, full) < 0.01


@pytest.mark.filterwarnings("ignore::skcoreset.exceptions.CoresetAccuracyWarning")
def test_a_family_added_to_the_registry_is_a_model_name():
    """One registry line makes a family nameable as ``model=`` (with its default
    parameters); before it, the name is refused with the registered ones."""
    from skcoreset.families import FAMILIES, PoissonFamily

    class CappedPoissonFamily(PoissonFamily):
        name = "capped_poisson"

    X, y = _overdispersed_counts(n=500)
    with pytest.raises(ValueError, match="'negative_binomial'"):
        UniformCoreset(M=50, model="capped_poisson").fit(X, y)
    FAMILIES[CappedPoissonFamily.name] = CappedPoissonFamily
    try:
        coreset = UniformCoreset(M=50, model="capped_poisson", random_state=0).fit(X, y)
        assert type(coreset.family_) is CappedPoissonFamily
        assert coreset.model_ == "capped_poisson"
    finally:
        FAMILIES.pop(CappedPoissonFamily.name)
    with pytest.raises(ValueError, match="model"):
        UniformCoreset(M=50, model="capped_poisson").fit(X, y)
