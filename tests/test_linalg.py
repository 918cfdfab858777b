"""The shared dense factorisations (skcoreset._linalg) against numpy."""

import numpy as np
import pytest

from skcoreset._linalg import cholesky_logdet, stable_cholesky


def test_stable_cholesky_factors_a_definite_matrix_exactly_and_leaves_it_alone():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(6, 6))
    A = B @ B.T + np.eye(6)
    before = A.copy()
    L = stable_cholesky(A)
    np.testing.assert_array_equal(A, before)
    np.testing.assert_allclose(L, np.linalg.cholesky(A), rtol=1e-12)
    assert cholesky_logdet(L) == pytest.approx(np.linalg.slogdet(A)[1], rel=1e-12)


def test_stable_cholesky_adds_the_least_jitter_to_a_singular_matrix():
    v = np.arange(1.0, 5.0)
    A = np.outer(v, v)  # rank one: no plain Cholesky factor
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(A)
    L = stable_cholesky(A)
    np.testing.assert_allclose(L @ L.T, A, atol=1e-9 * np.max(A))
    np.testing.assert_array_equal(A, np.outer(v, v))


def test_stable_cholesky_refuses_non_finite_curvature():
    with pytest.raises(ValueError, match="not finite"):
        stable_cholesky(np.array([[np.inf, 0.0], [0.0, 1.0]]))
