"""Tools of the test suite and the hand-run sweeps and benchmarks (not public API).

* :data:`INTERNAL_MESSAGE`: words of numpy's and scikit-learn's internals that an error
  message for a user must not contain (it should name the problem instead);
* :class:`Interrupt`: raises ``KeyboardInterrupt`` at a chosen Python call, to check that
  an interrupted fit leaves the object as it was;
* :func:`direct_vi`: Gaussian VI by plain L-BFGS on the ELBO, the reference that
  KL-proximal VI is checked and timed against.
"""

import contextlib
import io
import re
import sys

import numpy as np
import sklearn
from scipy import optimize

INTERNAL_MESSAGE = re.compile(
    r"could not broadcast|matmul|shapes? .* not aligned|out of bounds|need at least one array"
    r"|must not contain infs or NaNs|expected a sequence of integers|not supported between"
    r"|has no attribute|object is not|unhashable|division by zero|math domain"
    r"|singular matrix|Leading minor|Input should have at least 1 dimension", re.IGNORECASE)


class Interrupt:
    """Count Python function calls made while active; raise ``KeyboardInterrupt`` at call
    number ``at`` (never when ``at`` is None)."""

    def __init__(self, at=None):
        self.at, self.calls = at, 0

    def _trace(self, frame, event, arg):
        if event == "call" and frame.f_code is not Interrupt.__exit__.__code__:
            self.calls += 1
            if self.calls == self.at:
                raise KeyboardInterrupt(f"interrupted at call {self.at}")
        return None

    def __enter__(self):
        # emcee prints the traceback of an exception raised in the log-probability
        self._quiet = contextlib.redirect_stdout(io.StringIO())
        self._quiet.__enter__()
        self._config = sklearn.get_config()
        sys.settrace(self._trace)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)
        # an interrupt inside scikit-learn's config_context can leave its global settings
        # (e.g. skip_parameter_validation) changed: they are not the estimator's state
        sklearn.set_config(**self._config)
        self._quiet.__exit__(*exc)
        return False


def direct_vi(X, y, family, w, prior, mean_field=False):
    """Gaussian VI without the proximal method: the baseline of Khan et al. (2015, §6).

    Maximises the weighted ELBO by L-BFGS over the mean and a Cholesky factor of V
    (``mean_field``: a diagonal one), with the family's own quadrature
    (``family.expected_loglik``) and analytic gradients:
    ``d v~_n / d L = 2 a_n a_n^T L`` and ``d KL / d L = P L - diag(1 / L_ii)``.

    Uses ``family.expected_loglik`` (the same quadrature) and analytic gradients:
    ``d v~_n / d L = 2 a_n a_n^T L`` and ``d KL / d L = P L - diag(1 / L_ii)``.
    """
    A = np.column_stack([X, np.ones(len(X))])
    p = A.shape[1]
    idx = np.diag_indices(p) if mean_field else np.tril_indices(p)

    def unpack(z):
        L = np.zeros((p, p))
        L[idx] = z[p:]
        return z[:p], L

    def neg_elbo(z):
        m, L = unpack(z)
        B = A @ L
        f, grad_m, grad_v = family.expected_loglik(y, A @ m, np.sum(B**2, axis=1))
        diag = np.diag(L)
        kl = 0.5 * (np.sum(prior * np.sum(L**2, axis=1)) + prior @ m**2 - p
                    - np.sum(np.log(prior)) - 2 * np.sum(np.log(np.abs(diag))))
        g_m = A.T @ (w * grad_m) - prior * m
        g_L = 2 * A.T @ ((w * grad_v)[:, None] * B) - prior[:, None] * L + np.diag(1 / diag)
        return kl - w @ f, -np.concatenate([g_m, g_L[idx]])

    z0 = np.concatenate([np.zeros(p), np.diag(prior**-0.5)[idx]])
    res = optimize.minimize(neg_elbo, z0, jac=True, method="L-BFGS-B",
                            options=dict(maxiter=10_000, maxcor=50, ftol=1e-16, gtol=1e-12))
    m, L = unpack(res.x)
    return m, L @ L.T, -res.fun
