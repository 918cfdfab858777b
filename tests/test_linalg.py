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


def test_cholesky_in_place_is_stable_cholesky_bit_for_bit_in_the_matrix_itself():
    """Exactly symmetric, slightly asymmetric, Fortran-ordered and singular (jitter) inputs:
    the factor of stable_cholesky, bit for bit; computed in the matrix's memory unless the
    jitter's copy is needed, and that matrix restored before the copy is made."""
    from skcoreset._linalg import cholesky_in_place

    rng = np.random.default_rng(0)
    a = rng.normal(size=(700, 300))
    definite = a.T @ a / 700 + np.eye(300)
    b = rng.normal(size=(300, 3))
    cases = {"symmetric": (definite, True),
             "asymmetric": (definite + 1e-9 * rng.normal(size=definite.shape), True),
             "fortran": (np.asfortranarray(definite), True),
             "singular": (b @ b.T, False)}
    for name, (matrix, in_place) in cases.items():
        work = matrix.copy(order="K")
        got = cholesky_in_place(work)
        np.testing.assert_array_equal(got, stable_cholesky(matrix), err_msg=name)
        assert np.shares_memory(got, work) == in_place, name
    with pytest.raises(ValueError, match="not finite"):
        cholesky_in_place(np.full((3, 3), np.inf))
