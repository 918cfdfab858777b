"""Dense factorisations shared by the posteriors, the solvers and the coreset constructors.

Everything here works on small ``(p, p)`` matrices (``p`` parameters): Cholesky factors that
survive rounding, log-determinants from them, the damping of an indefinite Hessian, and the
Gaussian KL divergence from Cholesky factors. Solves go through the factors, never through
explicit inverses.
"""

import numpy as np
from scipy import linalg


def stable_cholesky(matrix):
    """Lower Cholesky factor of a symmetric positive (semi-)definite matrix.

    Adds the smallest diagonal jitter that makes the factorisation succeed, so covariances
    that are singular to rounding error (e.g. from a nearly flat direction) still factor.
    """
    symmetric = _symmetric_part(matrix)
    if not np.all(np.isfinite(symmetric)):
        # a curvature or covariance built from data whose squares overflow float64
        raise ValueError(
            "The curvature of the log posterior is not finite in float64: the data's scale "
            "overflows (values of |x| near 1e154 or beyond, whose squares exceed the largest "
            "float, or sample_weight so large that their weighted sum does). Standardise X, "
            "e.g. with sklearn.preprocessing.StandardScaler, and keep sample_weight of a "
            "representable size (divide it by a constant).")
    scale = max(np.max(np.abs(np.diag(symmetric))), np.finfo(float).tiny)
    jitter = 0.0
    for _ in range(10):
        # factored in place, no second p x p array (32 MB at p = 2000): the transpose of the
        # exactly symmetric copy is the Fortran-ordered array LAPACK works on; a failed
        # attempt spoils the copy, so a retry makes it again
        if symmetric is None:
            symmetric = _symmetric_part(matrix)
            symmetric[np.diag_indices_from(symmetric)] += jitter
        try:
            return linalg.cholesky(symmetric.T, lower=True, overwrite_a=True,
                                   check_finite=False)
        except linalg.LinAlgError:
            symmetric = None
            jitter = max(10.0 * jitter, 1e-12 * scale)
    raise linalg.LinAlgError("Matrix is not positive definite, even with diagonal jitter.")


def cholesky_in_place(matrix, symmetric=False):
    """:func:`stable_cholesky` of a symmetric matrix computed in its place: the same factor,
    bit for bit (Fortran-ordered, a view of ``matrix``'s memory, which it overwrites), and
    no second ``p x p`` array (30.5 MiB at p = 2,001). ``matrix`` is made exactly symmetric
    in place first, as :func:`stable_cholesky` makes its copy; when it is singular to
    rounding, it is restored (LAPACK overwrites one triangle only) and factored with
    :func:`stable_cholesky`'s jitter from a copy. ``symmetric=True``: ``matrix`` is exactly
    symmetric already (e.g. from :func:`inverse_from_cholesky`), which then is not
    symmetrised again (the same factor, a quarter of the time less)."""
    p = len(matrix)
    if not symmetric:
        _symmetrise_in_place(matrix)
    if not all(np.all(np.isfinite(matrix[start:start + 256])) for start in range(0, p, 256)):
        return stable_cholesky(matrix)  # its error names the cause
    diagonal = np.diag(matrix).copy()
    fortran = matrix if matrix.flags.f_contiguous else matrix.T  # LAPACK's own order
    # LAPACK potrf itself: scipy's cholesky also clears the other triangle when it fails
    factor, info = linalg.lapack.dpotrf(fortran, lower=1, clean=0, overwrite_a=1)
    if info == 0:
        for start in range(0, p, 256):  # the upper triangle zeroed, as scipy's cholesky does
            stop = min(start + 256, p)
            factor[start:stop, start:stop] = np.tril(factor[start:stop, start:stop])
            factor[start:stop, stop:] = 0.0
        return factor
    # the lower triangle is spoilt: the upper one mirrored, and the diagonal
    mirror_lower(fortran.T)
    fortran[np.diag_indices(p)] = diagonal
    return stable_cholesky(matrix)


def _symmetrise_in_place(matrix):
    """``(M + M^T) / 2`` in M's place, by blocks, as :func:`_symmetric_part`'s copy."""
    p = len(matrix)
    for start in range(0, p, 256):
        stop = min(start + 256, p)
        block = matrix[start:stop, start:stop]
        block[...] = 0.5 * (block + block.T)
        upper, lower = matrix[start:stop, stop:], matrix[stop:, start:stop]
        mean = upper + lower.T
        mean *= 0.5
        upper[...] = mean
        lower[...] = mean.T


def _symmetric_part(matrix):
    """``(matrix + matrix.T) / 2``, a new array, exactly symmetric."""
    symmetric = matrix + matrix.T
    symmetric *= 0.5
    return symmetric


def mirror_lower(matrix):
    """Copy the lower triangle of a square array onto its upper one, by column blocks (no
    index arrays of the size of the matrix); returns it."""
    p = len(matrix)
    for start in range(0, p, 256):
        stop = min(start + 256, p)
        block = matrix[start:stop, start:stop]
        block[...] = np.tril(block) + np.tril(block, -1).T
        matrix[start:stop, stop:] = matrix[stop:, start:stop].T
    return matrix


def inverse_from_cholesky(chol):
    """``(L L^T)^-1`` from a lower Cholesky factor ``L`` (Fortran-ordered, as
    :func:`stable_cholesky` gives it), computed in place of the factor (LAPACK potri: no
    second ``p x p`` array) and exactly symmetric."""
    inverse, info = linalg.lapack.dpotri(chol, lower=1, overwrite_c=1)
    if info != 0:
        raise linalg.LinAlgError(f"LAPACK dpotri failed (info={info}).")
    return mirror_lower(inverse)


def cholesky_logdet(chol):
    """``log det(L L^T)`` from a triangular Cholesky factor ``L``."""
    return 2.0 * np.sum(np.log(np.diag(chol)))


def shift_to_definite(matrix):
    """``matrix`` plus the smallest multiple of the identity making it positive definite.

    The damping of a negative Hessian that is indefinite away from the maximum (a
    non-concave region): the step then turns towards the gradient, and it is the plain
    Newton step wherever the matrix is safely positive definite.
    """
    eigmin = linalg.eigvalsh(matrix, subset_by_index=[0, 0])[0]
    scale = max(np.max(np.abs(np.diag(matrix))), np.finfo(float).tiny)
    if eigmin > 1e-10 * scale:
        return matrix
    return matrix + (1e-6 * scale - eigmin) * np.eye(len(matrix))


def gaussian_kl_cholesky(mean0, chol0, mean1, chol1):
    """KL(N(mean0, L0 L0^T) || N(mean1, L1 L1^T)) from lower Cholesky factors."""
    p = len(mean0)
    a = linalg.solve_triangular(chol1, chol0, lower=True)  # L1^-1 L0
    b = linalg.solve_triangular(chol1, mean1 - mean0, lower=True)
    logdet = cholesky_logdet(chol1) - cholesky_logdet(chol0)
    return 0.5 * (np.sum(a**2) + b @ b - p + logdet)
