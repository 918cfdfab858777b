"""Monomial bookkeeping for PASS-GLM degrees above 2: the packed symmetric moment tensors.

A degree-``m`` monomial in ``p`` variables is a sorted index tuple; tables of tuples, their
multinomial counts and the merges ``u + {j}`` and ``u + {j, k}`` let the statistics and the
surrogate's derivatives be formed with one product per degree.
"""

import functools

import numpy as np
from scipy.special import gammaln


def n_monomials(n_params_, degree):
    """Number of monomials of degree ``<= degree`` in ``n_params_`` variables, C(p + M, M)."""
    from math import comb

    return comb(n_params_ + degree, degree)


def _tuple_keys(tuples, p):
    """Integer key of sorted index tuples: base-p digits, so lexicographic order is kept."""
    m = tuples.shape[-1]
    return tuples @ (p ** np.arange(m - 1, -1, -1, dtype=np.int64))


@functools.lru_cache(maxsize=64)
def _monomials(p, m):
    """Degree-``m`` monomials in ``p`` variables, as sorted index tuples in lexicographic order.

    Returns
    -------
    tuples : ndarray of shape (count, m)
    parent : ndarray of shape (count,)
        Index in the degree ``m - 1`` table of the tuple without its last entry, so that
        ``z^tuple = z^parent * z[last]`` builds all monomials with one product per level.
    multinomial : ndarray of shape (count,)
        ``m! / prod_j k_j!``: how many ordered index tuples give the monomial.
    """
    if m == 0:
        return np.zeros((1, 0), dtype=np.int64), np.zeros(1, dtype=np.int64), np.ones(1)
    prev, _, _ = _monomials(p, m - 1)
    start = prev[:, -1] if m > 1 else np.zeros(1, dtype=np.int64)
    sizes = p - start
    parent = np.repeat(np.arange(len(prev)), sizes)
    offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    last = np.repeat(start, sizes) + offsets
    tuples = np.column_stack([prev[parent], last])
    exponents = np.zeros((len(tuples), p), dtype=np.int64)
    np.add.at(exponents, (np.arange(len(tuples))[:, None], tuples), 1)
    multinomial = np.rint(np.exp(gammaln(m + 1) - gammaln(exponents + 1).sum(axis=1)))
    return tuples, parent, multinomial


@functools.lru_cache(maxsize=64)
def _merge_table(p, m, extra):
    """Indices in the degree-``m`` table of ``u + {j}`` (extra=1) or ``u + {j, k}`` (extra=2).

    Rows run over the degree ``m - extra`` monomials ``u``, columns over ``j`` (or the pairs
    ``j <= k`` in ``numpy.triu_indices(p)`` order).
    """
    low, _, _ = _monomials(p, m - extra)
    keys = _tuple_keys(_monomials(p, m)[0], p)
    if extra == 1:
        added = np.arange(p)[:, None]
    else:
        added = np.column_stack(np.triu_indices(p))
    merged = np.concatenate([np.repeat(low[:, None, :], len(added), axis=1),
                             np.broadcast_to(added, (len(low),) + added.shape)], axis=2)
    merged = np.sort(merged, axis=2)
    return np.searchsorted(keys, _tuple_keys(merged, p))


def _monomial_chain(z, degree):
    """Yield ``(m, z^monomials)`` for m = 1..degree; ``z`` of shape (p,) or (n, p)."""
    p = z.shape[-1]
    current = np.ones(z.shape[:-1] + (1,))
    for m in range(1, degree + 1):
        tuples, parent, _ = _monomials(p, m)
        current = current[..., parent] * z[..., tuples[:, -1]]
        yield m, current
