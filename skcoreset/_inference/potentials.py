"""Potentials ``f_n(theta) = log p(y_n | x_n, theta)`` of many rows at many parameter draws.

The N x S potentials behind every Monte Carlo coreset construction, and the log posterior of
a batch of draws over all rows (:mod:`.importance`), are one matrix product of the rows with
the draws followed by one elementwise kernel, written into reused buffers and processed in
row blocks so the scratch memory stays bounded whatever N.
"""

import threading

import numpy as np
from scipy import sparse

from .._backend import float_rows, row_chunks

# Rows x draws per block of the potential kernel: bounds the scratch memory for large N.
_BLOCK_ELEMENTS = 65536
# Rows x draws per chunk of a sum over rows (32 MB of float64).
_CHUNK_ELEMENTS = 2**22


class PotentialEvaluator:
    """``f_n(theta_s)`` for a block of rows and S draws, into reused buffers.

    The linear predictors of a block are one BLAS product written straight into the output,
    and the kernel works in place with two preallocated scratch blocks, so a call allocates
    nothing large (fresh multi-megabyte temporaries cost page faults on every call). The
    buffers are per thread: dask's threaded scheduler calls one evaluator from several
    threads at once, one chunk of rows each.

    Parameters
    ----------
    family : Family
    fit_intercept : bool
    n_draws : int
        Number S of draws per call.
    block_elements : int, default=65536
        Rows x draws per block; bounds the scratch memory for large N.
    kernel : callable, default=None
        ``kernel(y, eta, scratch)`` overwriting the ``(n, S)`` linear predictors ``eta``
        with the potentials. ``None``: ``family.loglik_in_place``, exact up to a per-row
        constant (only centred potentials enter the constructions).
    """

    def __init__(self, family, fit_intercept, n_draws, block_elements=_BLOCK_ELEMENTS,
                 kernel=None):
        # the family's kernel of vectorised ufuncs in two scratch buffers, or its loglik
        self.kernel = family.loglik_in_place if kernel is None else kernel
        self.fit_intercept = fit_intercept
        self.block = max(1, block_elements // n_draws)
        self._local = threading.local()

    def __getstate__(self):
        # sent to dask workers without the buffers (a thread-local cannot be pickled)
        state = self.__dict__.copy()
        del state["_local"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._local = threading.local()

    def _buffers(self, n, n_draws):
        """This thread's output (``n`` rows of ``n_draws``) and scratch buffers."""
        local = self._local
        out = getattr(local, "out", None)
        if out is None or out.shape[0] < n or out.shape[1] != n_draws:
            local.out = np.empty((n, n_draws))
        scratch = getattr(local, "scratch", None)
        if scratch is None or scratch.shape[2] != n_draws:
            local.scratch = np.empty((2, self.block, n_draws))
        return local.out[:n], local.scratch

    def __call__(self, X, y, thetas, offset=None):
        """Potentials of shape ``(n, S)``; a view of this thread's buffer, valid until its
        next call. ``offset`` (shape ``(n,)``) adds to every linear predictor of its row."""
        n = X.shape[0]
        out, scratch = self._buffers(n, thetas.shape[0])
        if self.fit_intercept:
            coef, intercept = thetas[:, :-1], thetas[:, -1]
        else:
            coef, intercept = thetas, None
        for rows in row_chunks(n, max_elements=self.block):  # blocks of self.block rows
            eta = out[rows]
            if sparse.issparse(X):  # sparse BLAS: nonzeros x draws flops
                eta[:] = X[rows] @ coef.T
            else:
                np.matmul(X[rows], coef.T, out=eta)
            if intercept is not None:
                eta += intercept
            if offset is not None:
                eta += offset[rows, None]
            self.kernel(y[rows], eta, scratch[:, :rows.stop - rows.start])
        return out


def potential_sums(potentials, thetas, X, y, w, offset=None):
    """``sum_n w_n f_n(theta_s)`` of some rows for every draw, as a 1-tuple (a sum over the
    chunks of a row storage), in row chunks (a chunk of rows x draws at a time: a
    ``np.memmap`` is read chunk by chunk, never all at once)."""
    sums = np.zeros(len(thetas))
    for rows in row_chunks(X.shape[0], len(thetas), max_elements=_CHUNK_ELEMENTS):
        chunk_offset = None if offset is None else offset[rows]
        sums += w[rows] @ potentials(float_rows(X[rows]), y[rows], thetas, chunk_offset)
    return (sums,)
