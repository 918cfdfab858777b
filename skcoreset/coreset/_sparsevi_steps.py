"""SparseVI weight updates: the step rules and the T projected gradient steps (Campbell &
Beronov 2019, Algorithm 1, lines 15-22)."""

import numpy as np
from scipy import linalg

from .._linalg import stable_cholesky

# Adam's moment decay rates and denominator guard, as in the reference implementation.
_ADAM_BETA1, _ADAM_BETA2, _ADAM_EPS = 0.9, 0.999, 1e-8
# Levenberg-Marquardt damping of the exact Fisher block, relative to its mean diagonal:
# potentials of nearby points are nearly collinear, so the block is ill-conditioned.
_FISHER_RIDGE = 1e-3


class _AdamStep:
    """Gradient normalised per coordinate by Adam's moment estimates (Monte Carlo samplers).

    The reference implementation's update (``nn_opt``). The raw gradient scales with the
    concentration of ``pi_w`` over orders of magnitude, so unnormalised steps
    ``gamma_t * grad`` are far too small early and divergent late (measured: weights reach
    1e7 on the Poisson data sets). Normalised, a step is ``gamma_t`` times ``scale``, the
    mean weight ``sum(s) / M`` of an M-point coreset, so the weights reach their scale
    whatever N (with unit steps, 20 greedy steps on N = 20,000 rows reached a total weight
    of 105).
    The Fisher-preconditioned step of :class:`_NaturalStep` is unstable here: estimated from
    S draws, the Fisher block of ~S active points is rank-deficient and noisy.
    """

    def __init__(self, n_active, scale):
        self.m1 = np.zeros(n_active)
        self.m2 = np.zeros(n_active)
        self.scale = scale

    def __call__(self, active, weights, grad, t):
        self.m1 *= _ADAM_BETA1
        self.m1 += (1.0 - _ADAM_BETA1) * grad
        self.m2 *= _ADAM_BETA2
        self.m2 += (1.0 - _ADAM_BETA2) * grad**2
        m1_hat = self.m1 / (1.0 - _ADAM_BETA1**t)
        m2_hat = self.m2 / (1.0 - _ADAM_BETA2**t)
        return self.scale * m1_hat / (np.sqrt(m2_hat) + _ADAM_EPS)


class _NaturalStep:
    """Natural gradient ``G_II^-1 grad`` with the exact Fisher block (exact sampler).

    ``G(w) = Cov_w[f]`` is the Fisher metric of the coreset manifold (Campbell & Beronov 2019,
    eq. 23), so this is steepest descent in its geometry; with ``gamma_1 = 1`` the first step is
    the Gauss-Newton step to the best weights on the tangent plane at ``pi_w``. Scale-free and,
    with exact moments, stable: on the Gaussian model it reaches a KL 6-20x lower than the
    Adam-normalised step at the same M and T (measured, d = 50, N = 2000, M = 200).

    Weights held at 0 by the projection whose gradient pushes them further down are left
    out of the Newton system (projected Newton, Bertsekas 1982): a Newton step that counts
    on them moving, then has them clipped, is no descent direction and stalls the
    algorithm.
    """

    def __init__(self, oracle):
        self.oracle = oracle

    def __call__(self, active, weights, grad, t):
        free = (weights > 0) | (grad <= 0)
        step = np.zeros_like(grad)
        if not np.any(free):
            return step
        fisher = self.oracle.fisher(active[free])
        fisher[np.diag_indices_from(fisher)] += (
            _FISHER_RIDGE * np.trace(fisher) / len(fisher) + np.finfo(float).tiny)
        step[free] = linalg.cho_solve((stable_cholesky(fisher), True), grad[free])
        return step


def _optimise_weights(oracle, active, weights, n_iter, learning_rate):
    """T projected gradient steps on the active weights (Algorithm 1, lines 15-22).

    ``w_I <- max(w_I - gamma_t d_t, 0)`` with ``gamma_t = learning_rate / t`` and ``d_t`` the
    KL gradient of eq. (22) preconditioned by the oracle's step rule: natural gradient for
    exact moments, Adam normalisation for Monte Carlo ones (restarted every greedy step).
    """
    weights = weights.copy()
    direction = oracle.step_rule(len(active))
    for t in range(1, n_iter + 1):
        grad = oracle.gradient(active, weights)
        weights -= (learning_rate / t) * direction(active, weights, grad, t)
        np.maximum(weights, 0.0, out=weights)
    return weights
