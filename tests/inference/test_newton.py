"""The damped Newton solver (skcoreset._inference._newton) against closed forms and scipy."""

import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit, log_expit
from sklearn.exceptions import ConvergenceWarning

from skcoreset._inference import _newton
from skcoreset._inference._newton import (NewtonObjective, newton_maximise, refined_step,
                                          rounding_slack, warn_not_converged)
from skcoreset._linalg import shift_to_definite


class Quadratic(NewtonObjective):
    """``F(x) = c - (x - m)^T A (x - m) / 2``."""

    def __init__(self, A, m, c=3.0):
        self.A, self.m, self.c = A, m, c

    def value(self, x):
        d = x - self.m
        return self.c - 0.5 * d @ self.A @ d, None

    def gradient(self, x, state):
        return -self.A @ (x - self.m)

    def neg_hessian(self, x, state):
        return self.A


class LogisticPosterior(NewtonObjective):
    """Logistic log-likelihood with labels in {-1, +1} plus a N(0, I / prior) log prior."""

    def __init__(self, X, y, prior=1.0):
        self.X, self.y, self.prior = X, y, prior

    def value(self, x):
        eta = self.X @ x
        return np.sum(log_expit(self.y * eta)) - 0.5 * self.prior * x @ x, eta

    def gradient(self, x, eta):
        return self.X.T @ (self.y * expit(-self.y * eta)) - self.prior * x

    def neg_hessian(self, x, eta):
        p = expit(eta)
        return (self.X.T * (p * (1 - p))) @ self.X + self.prior * np.eye(len(x))


class Scalar(NewtonObjective):
    """A one-dimensional objective from its value and two derivatives."""

    def __init__(self, f, df, d2f):
        self.f, self.df, self.d2f = f, df, d2f
        self.n_values = 0

    def value(self, x):
        self.n_values += 1
        return self.f(x[0]), None

    def gradient(self, x, state):
        return np.array([self.df(x[0])])

    def neg_hessian(self, x, state):
        return np.array([[-self.d2f(x[0])]])


def _logistic_data(n=400, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < expit(X @ np.linspace(1.5, -1.0, d)), 1.0, -1.0)
    return X, y


def test_a_quadratic_is_maximised_by_one_full_step():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(5, 5))
    A = B @ B.T + 5 * np.eye(5)
    m = rng.normal(size=5)
    result = newton_maximise(Quadratic(A, m), np.zeros(5), tol=1e-12, max_iter=10)
    assert result.converged and result.n_iter == 1
    np.testing.assert_allclose(result.x, m, rtol=1e-12, atol=1e-12)
    assert result.value == pytest.approx(3.0, abs=1e-12)
    np.testing.assert_array_equal(result.neg_hessian, A)


def test_logistic_regression_mode_matches_scipy():
    X, y = _logistic_data()
    objective = LogisticPosterior(X, y)
    result = newton_maximise(objective, np.zeros(4), tol=1e-14, max_iter=50)
    assert result.converged
    reference = optimize.minimize(
        lambda x: -objective.value(x)[0], np.zeros(4), method="trust-exact",
        jac=lambda x: -objective.gradient(x, X @ x),
        hess=lambda x: objective.neg_hessian(x, X @ x), options={"gtol": 1e-13})
    np.testing.assert_allclose(result.x, reference.x, rtol=1e-8, atol=1e-8)
    # the stopping rule: half the decrement g^T H^-1 g at the returned point is below tol
    g = objective.gradient(result.x, X @ result.x)
    H = objective.neg_hessian(result.x, X @ result.x)
    assert g @ np.linalg.solve(H, g) / 2 <= 1e-14


def test_chord_steps_reach_the_same_mode_and_return_the_fresh_hessian():
    X, y = _logistic_data(seed=1)
    objective = LogisticPosterior(X, y)
    plain = newton_maximise(objective, np.zeros(4), tol=1e-12, max_iter=50)
    chord = newton_maximise(objective, np.zeros(4), tol=1e-12, max_iter=50,
                            reuse_below=np.inf)
    assert chord.converged
    np.testing.assert_allclose(chord.x, plain.x, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(chord.neg_hessian, objective.neg_hessian(chord.x, X @ chord.x),
                               rtol=1e-14)


class SinglePrecisionLogistic(LogisticPosterior):
    """Steps steered by a Hessian rounded to float32 and off by 1% (a stale subsample's)."""

    def approx_neg_hessian(self, x, eta):
        self.n_approx = getattr(self, "n_approx", 0) + 1
        return (1.01 * self.neg_hessian(x, eta)).astype(np.float32).astype(float)


@pytest.mark.parametrize("initial", [False, True])
def test_approximate_hessians_reach_the_exact_mode_and_return_the_exact_hessian(initial):
    X, y = _logistic_data(seed=2)
    exact = newton_maximise(LogisticPosterior(X, y), np.zeros(4), tol=1e-14, max_iter=50)
    objective = SinglePrecisionLogistic(X, y)
    start = np.full((4, 4), 0.5) + 40 * np.eye(4) if initial else None
    approx = newton_maximise(objective, np.zeros(4), tol=1e-14, max_iter=50,
                             reuse_below=np.inf, approx_steps=True, initial_neg_hessian=start)
    assert approx.converged and objective.n_approx >= 1
    np.testing.assert_allclose(approx.x, exact.x, rtol=1e-8, atol=1e-10)
    # the returned Hessian is the exact float64 one at the returned point, not the float32
    # approximation (which differs by ~1e-2 here)
    np.testing.assert_allclose(approx.neg_hessian,
                               objective.neg_hessian(approx.x, X @ approx.x), rtol=1e-14)
    g = objective.gradient(approx.x, X @ approx.x)
    assert g @ np.linalg.solve(approx.neg_hessian, g) / 2 <= 1e-14


class FusedLogistic(SinglePrecisionLogistic):
    """Counts the fused evaluations (value, gradient and a Hessian in one call)."""

    fuses_derivatives = True

    def value_and_derivatives(self, x, exact=True):
        self.fused = getattr(self, "fused", []) + [exact]
        return super().value_and_derivatives(x, exact)


@pytest.mark.parametrize("initial", [False, True])
def test_fused_evaluations_return_the_same_mode_and_the_exact_hessian(initial):
    X, y = _logistic_data(n=2000, seed=4)
    start = np.full((4, 4), 0.5) + 400 * np.eye(4) if initial else None
    kwargs = dict(tol=1e-12, max_iter=50, reuse_below=np.inf, approx_steps=True,
                  initial_neg_hessian=start)
    plain = newton_maximise(SinglePrecisionLogistic(X, y), np.zeros(4), **kwargs)
    objective = FusedLogistic(X, y)
    fused = newton_maximise(objective, np.zeros(4), **kwargs)
    assert fused.converged and True in objective.fused  # the last step fused the exact one
    # an approximate Hessian is fused into the first step only from an initial one
    assert (False in objective.fused) == initial
    np.testing.assert_allclose(fused.x, plain.x, rtol=1e-7, atol=1e-9)
    H = objective.neg_hessian(fused.x, X @ fused.x)
    np.testing.assert_allclose(fused.neg_hessian, H, rtol=1e-14)
    g = objective.gradient(fused.x, X @ fused.x)
    assert g @ np.linalg.solve(H, g) / 2 <= 1e-12


class ProductLogistic(LogisticPosterior):
    """Steps refined by conjugate gradients with Hessian products; counts the Hessians
    formed and the products taken."""

    refines_steps = True

    def __init__(self, X, y, prior=1.0):
        super().__init__(X, y, prior)
        self.n_hessians = self.n_products = 0

    def neg_hessian(self, x, eta):
        self.n_hessians += 1
        return super().neg_hessian(x, eta)

    def neg_hessian_product(self, x, eta):
        p = expit(eta)

        def product(v):
            self.n_products += 1
            return self.X.T @ (p * (1 - p) * (self.X @ v)) + self.prior * v
        return product


def test_a_refined_step_solves_the_newton_system_from_a_poor_preconditioner():
    X, y = _logistic_data(n=600, d=6, seed=5)
    objective = ProductLogistic(X, y)
    x = np.full(6, 0.3)
    eta = X @ x
    H = LogisticPosterior(X, y).neg_hessian(x, eta)
    g = objective.gradient(x, eta)
    stale = np.diag(np.diag(H)) * 2.0  # a Jacobi preconditioner, off by a factor of 2
    factor = objective.factor(stale)
    chord, chord_decrement = objective.direction(factor, g)
    step, decrement, solved = refined_step(objective, x, eta, factor, g, chord,
                                           chord_decrement)
    newton = np.linalg.solve(H, g)
    assert solved and 0 < objective.n_products <= 7  # conjugate gradients: at most p + 1
    # the forcing term: the residual's preconditioned norm below 1e-2 of the gradient's
    residual = g - H @ step
    assert residual @ np.linalg.solve(stale, residual) <= _newton.CG_FORCING**2 * (
        g @ np.linalg.solve(stale, g))
    # so the step is within a few percent of Newton's in the norm of H
    error = step - newton
    assert error @ H @ error <= 4 * _newton.CG_FORCING**2 * (g @ newton)
    # Galerkin: g^T s = s^T H s, a lower estimate of the decrement g^T H^-1 g
    assert decrement == pytest.approx(step @ H @ step, rel=1e-10)
    assert decrement <= g @ newton


@pytest.mark.parametrize("max_cg", [_newton.CG_MAX_ITER, 1])
def test_refined_steps_reach_the_exact_mode_with_two_hessians(monkeypatch, max_cg):
    """From a start without a Hessian: one at the start preconditions every step and the
    exact one confirms the mode (when the conjugate gradients stall, the preconditioner is
    refreshed instead)."""
    X, y = _logistic_data(n=3000, d=5, seed=6)
    exact = newton_maximise(LogisticPosterior(X, y), np.zeros(5), tol=1e-12, max_iter=50)
    monkeypatch.setattr(_newton, "CG_MAX_ITER", max_cg)
    objective = ProductLogistic(X, y)
    refined = newton_maximise(objective, np.zeros(5), tol=1e-12, max_iter=50,
                              reuse_below=1.0, approx_steps=True)
    assert refined.converged and objective.n_products > 0
    if max_cg > 1:
        assert objective.n_hessians == 2
    else:  # a single product cannot meet the forcing term: a fresh preconditioner instead
        assert objective.n_hessians > 2
    H = LogisticPosterior(X, y).neg_hessian(refined.x, X @ refined.x)
    # the same mode to a decrement of 1e-12 nats: 1e-6 posterior sd
    assert np.max(np.abs(refined.x - exact.x) * np.sqrt(np.diag(H))) < 1e-6
    np.testing.assert_allclose(refined.neg_hessian, H, rtol=1e-14)
    g = objective.gradient(refined.x, X @ refined.x)
    assert g @ np.linalg.solve(H, g) / 2 <= 1e-12


def test_unconfirmed_warm_start_stops_at_tol_with_the_steering_hessian():
    X, y = _logistic_data(n=2000, seed=4)
    objective = SinglePrecisionLogistic(X, y)
    mode = newton_maximise(objective, np.zeros(4), tol=1e-12, max_iter=50).x
    start = mode + 0.01
    stale = 1.01 * objective.neg_hessian(mode, X @ mode)  # e.g. a subsample's
    kwargs = dict(max_iter=50, reuse_below=np.inf, approx_steps=True,
                  initial_neg_hessian=stale)
    rough = newton_maximise(objective, start, tol=1.0, confirm=False, **kwargs)
    # half the decrement with the steering Hessian is below tol at once: no step, no new
    # Hessian, and the steering one is returned
    assert rough.converged and rough.n_iter == 0 and not hasattr(objective, "n_approx")
    np.testing.assert_array_equal(rough.x, start)
    assert rough.neg_hessian is stale
    confirmed = newton_maximise(objective, start, tol=1.0, **kwargs)
    np.testing.assert_allclose(confirmed.neg_hessian,
                               objective.neg_hessian(confirmed.x, X @ confirmed.x), rtol=1e-14)


def test_full_steps_fall_back_to_the_line_search_when_they_overshoot():
    # F = -sqrt(1 + x^2): the full Newton step maps x to -x^3, which overshoots for |x| > 1
    objective = Scalar(lambda x: -np.sqrt(1 + x * x), lambda x: -x / np.sqrt(1 + x * x),
                       lambda x: -(1 + x * x) ** -1.5)
    result = newton_maximise(objective, [2.0], tol=1e-14, max_iter=100, full_steps=4)
    assert result.converged
    assert abs(result.x[0]) < 1e-6
    # from inside |x| < 1 the full steps are taken: x -> -x^3 -> x^9
    start = newton_maximise(objective, [0.5], tol=1e-30, max_iter=2, full_steps=2)
    np.testing.assert_allclose(start.x, [0.5**9], rtol=1e-12)


def test_a_flat_maximum_is_reached_in_finitely_many_steps():
    # F = -x^4: zero curvature at the maximum, Newton converges linearly (x -> 2x/3)
    objective = Scalar(lambda x: -x**4, lambda x: -4 * x**3, lambda x: -12 * x**2)
    result = newton_maximise(objective, [1.0], tol=1e-12, max_iter=500)
    assert result.converged
    # half the decrement is 2 x^4 / 3
    assert 2 * result.x[0] ** 4 / 3 <= 1e-12
    assert result.n_iter == int(np.ceil(np.log(1.5e-12) / (4 * np.log(2 / 3))))


class ShiftedScalar(Scalar):
    def factor(self, neg_hessian):
        return shift_to_definite(neg_hessian)

    def direction(self, factor, grad):
        step = np.linalg.solve(factor, grad)
        return step, grad @ step


def test_a_non_concave_start_climbs_to_the_maximum_with_a_shifted_hessian():
    # F = x^2 - x^4 is convex near 0 (negative Hessian -2 there) and peaks at 1/sqrt(2)
    objective = ShiftedScalar(lambda x: x**2 - x**4, lambda x: 2 * x - 4 * x**3,
                              lambda x: 2 - 12 * x**2)
    result = newton_maximise(objective, [0.05], tol=1e-20, max_iter=100)
    assert result.converged
    np.testing.assert_allclose(result.x, [2**-0.5], rtol=1e-9)
    np.testing.assert_allclose(result.neg_hessian, [[4.0]], rtol=1e-10)  # unshifted


def test_shift_to_definite_moves_only_indefinite_matrices():
    A = np.diag([2.0, 1.0])
    assert shift_to_definite(A) is A
    shifted = shift_to_definite(np.array([[1.0, 2.0], [2.0, 1.0]]))  # eigenvalues 3, -1
    np.testing.assert_allclose(np.linalg.eigvalsh(shifted), [1e-6, 4.0 + 1e-6], rtol=1e-9)


def test_no_increase_at_working_precision_stops_the_search():
    # a gradient that no value change follows (as where rounding flattens the objective):
    # the line search gives up at MIN_STEP and the point is returned after one Hessian
    objective = Scalar(lambda x: 0.0, lambda x: 1.0, lambda x: -1.0)
    result = newton_maximise(objective, [0.0], tol=1e-12, max_iter=100)
    assert result.converged and result.n_iter == 0
    np.testing.assert_array_equal(result.x, [0.0])
    assert objective.n_values < 40  # one per halving, from 1 down to MIN_STEP


def test_max_iter_is_reported():
    objective = Scalar(lambda x: -x**4, lambda x: -4 * x**3, lambda x: -12 * x**2)
    result = newton_maximise(objective, [1.0], tol=1e-12, max_iter=3)
    assert not result.converged and result.n_iter == 3
    np.testing.assert_allclose(result.x, [(2 / 3) ** 3])
    np.testing.assert_allclose(result.neg_hessian, [[12 * (2 / 3) ** 6]])
    with pytest.warns(ConvergenceWarning, match="did not converge in max_iter=3"):
        warn_not_converged("Newton's method", 3)


def test_rounding_slack_scales_with_the_value():
    eps = np.finfo(float).eps
    assert rounding_slack(-1e6) == 16 * eps * 1e6
    assert rounding_slack(0.0) == 0.0
