"""Shared fixtures: the papers' N = 500 data sets (read from ../shared/data when present),
synthetic GLM data, the conjugate Gaussian posterior and one dask cluster for the session."""

import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.special import expit
from threadpoolctl import threadpool_limits

DATA_DIR = Path(os.environ.get("SKCORESET_DATA",
                               Path(__file__).resolve().parents[2] / "shared" / "data"))
LOGISTIC_SETS = ["synth_lr", "phishing", "ds1"]
POISSON_SETS = ["synth_poiss", "biketrips", "airportdelays"]


def load_paper_dataset(name):
    """Whitened covariates (intercept column dropped), targets and the model name.

    As in the papers' experiments (Campbell & Beronov 2019, Appendix C): covariates whitened
    with the training mean and covariance, labels mapped from {-1, 1} to {0, 1}; the intercept is
    fitted by the models with the same N(0, 1) prior as the coefficients.
    """
    path = DATA_DIR / f"{name}.npz"
    if not path.exists():
        pytest.skip(f"paper data {path} not available")
    data = np.load(path)
    X, y = data["X"][:, :-1], data["y"]
    chol = np.linalg.cholesky(np.atleast_2d(np.cov(X, rowvar=False)))
    X_white = np.linalg.solve(chol, (X - X.mean(axis=0)).T).T
    if name in LOGISTIC_SETS:
        return X_white, (y > 0).astype(int), "logistic"
    return X_white, y.astype(int), "poisson"


def logistic_data(n, coef, intercept=0.0, *, seed=0, scale=1.0, uniform=None,
                  labels=(0, 1)):
    """Synthetic logistic-regression rows: ``X`` standard normal times ``scale`` (or uniform
    on ``[-uniform, uniform]``), ``y`` Bernoulli(expit(X @ coef + intercept)) with the labels
    ``labels[0]`` (negative) and ``labels[1]`` (positive)."""
    rng = np.random.default_rng(seed)
    shape = (n, len(coef))
    X = rng.uniform(-uniform, uniform, shape) if uniform else scale * rng.normal(size=shape)
    positive = rng.random(n) < expit(X @ np.asarray(coef, dtype=float) + intercept)
    return X, np.where(positive, labels[1], labels[0])


def poisson_data(n, coef, intercept=0.0, *, seed=0, scale=1.0, uniform=None, dtype=int):
    """Synthetic Poisson (log link) rows: ``X`` as in :func:`logistic_data`, ``y`` Poisson
    with rate exp(X @ coef + intercept)."""
    rng = np.random.default_rng(seed)
    shape = (n, len(coef))
    X = rng.uniform(-uniform, uniform, shape) if uniform else scale * rng.normal(size=shape)
    return X, rng.poisson(np.exp(X @ np.asarray(coef, dtype=float) + intercept)).astype(dtype)


def gaussian_kl_closed_form(m0, S0, m1, S1):
    """KL(N(m0, S0) || N(m1, S1)) in nats, the closed form (independent of the package's)."""
    inv1 = np.linalg.inv(S1)
    d = m1 - m0
    return 0.5 * (np.trace(inv1 @ S0) + d @ inv1 @ d - len(m0)
                  + np.linalg.slogdet(S1)[1] - np.linalg.slogdet(S0)[1])


def conjugate_linear_regression(X, y, sample_weight, noise, prior_prec):
    """Exact posterior (mean, cov) and log evidence of weighted Bayesian linear regression
    with an intercept, known noise and the diagonal prior precision ``prior_prec``."""
    A = np.column_stack([X, np.ones(len(y))])
    w = sample_weight
    precision = A.T @ (w[:, None] * A) / noise**2 + np.diag(prior_prec)
    cov = np.linalg.inv(precision)
    mean = cov @ (A.T @ (w * y)) / noise**2
    log_norm = 0.5 * np.sum(w * np.log(1 / (2 * np.pi * noise**2)))
    quad = -0.5 * (np.sum(w * y**2) / noise**2 - mean @ precision @ mean)
    logdet = 0.5 * (np.sum(np.log(prior_prec)) - np.linalg.slogdet(precision)[1])
    return mean, cov, log_norm + quad + logdet


@pytest.fixture(autouse=True, scope="session")
def _single_threaded_blas():
    """Test problems are small: BLAS threads only add synchronisation cost (and stall badly
    when other processes hold the cores)."""
    with threadpool_limits(limits=1):
        yield


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="session")
def dask_cluster():
    """One 2-worker ``distributed.LocalCluster`` (processes) for every dask test: starting
    one takes seconds, so the session shares it. Tests that need a default client make
    their own ``distributed.Client(dask_cluster)``."""
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           host="127.0.0.1", dashboard_address=None)
    yield cluster
    cluster.close(timeout=60)  # a worker slow to stop must not hang the session's end


# ArviZ 1.x (DataTree, Python >= 3.12) renamed a few things; the tests run on either.
def elpd(loo):
    """The elpd estimate of ``az.loo``'s result."""
    return float(loo.elpd_loo if hasattr(loo, "elpd_loo") else loo.elpd)


def pointwise_elpd(loo):
    return np.asarray(loo.loo_i if hasattr(loo, "loo_i") else loo.elpd_i)


def groups(idata):
    return list(idata.children) if hasattr(idata, "children") else list(idata.groups())
