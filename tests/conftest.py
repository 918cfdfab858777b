"""Shared fixtures: the papers' N = 500 data sets, read from ../shared/data when present."""

import os
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

DATA_DIR = Path(os.environ.get("SKCORESET_DATA",
                               Path(__file__).resolve().parents[2] / "shared" / "data"))
LOGISTIC_SETS = ["synth_lr", "phishing", "ds1"]
POISSON_SETS = ["synth_poiss", "biketrips", "airportdelays"]


def load_paper_dataset(name):
    """Whitened covariates (intercept column dropped), targets and the model name.

    As in the papers' experiments (paper 000, Appendix C): covariates whitened with the
    training mean and covariance, labels mapped from {-1, 1} to {0, 1}; the intercept is
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
