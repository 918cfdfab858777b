"""Damped Newton's method with a backtracking Armijo line search, for concave objectives.

The one Newton solver of the package: the Laplace mode (:func:`._inference.laplace.newton_map`,
also behind the streaming and dask paths and the coreset samplers' warm-started refits),
the dual-space mode of KL-proximal inference and the mode of the PASS-GLM polynomial
surrogate all run :func:`newton_maximise` on a :class:`NewtonObjective`.

Each iteration solves ``H s = g`` for the negative Hessian ``H`` and the gradient ``g`` and
stops when half the Newton decrement ``g^T H^-1 g / 2``, the gain a quadratic model predicts
for the full step, falls below ``tol`` (in the objective's units, e.g. nats). Otherwise it
halves the step until the Armijo condition ``F(x + t s) - F(x) >= c t g^T s`` holds, with
slack for the rounding error of a large sum. When no step fraction above ``MIN_STEP`` passes,
nothing can be gained at working precision and the point is accepted as the maximum (Nocedal
& Wright 2006, chapters 3 and 9; the same conventions as scikit-learn's ``NewtonSolver``).

Two optional economies, both off by default:

* chord steps (``reuse_below``): once the decrement is small on the scale the Hessian varies
  on, the following steps reuse its factorisation; they converge linearly, a chord step that
  does not shrink the decrement by ``CHORD_RATE`` refreshes it, and convergence is always
  confirmed with a fresh Hessian, so the returned one is exact at the returned point;
* full steps (``full_steps``): from a warm start, the first steps are taken whole whenever
  they increase the objective at all, without the Armijo test, and with a fresh Hessian each.

And two for large problems, also off by default:

* approximate Hessians (``approx_steps``): the Hessians that only steer steps come from
  :meth:`NewtonObjective.approx_neg_hessian` (e.g. Grams in single precision); convergence is
  confirmed, and the returned Hessian computed, with the exact :meth:`~NewtonObjective.neg_hessian`
  at the returned point. A refreshed Hessian is bought only when the chord steps' observed rate
  predicts it saves more than ``REFRESH_COST`` steps;
* a starting Hessian (``initial_neg_hessian``, e.g. that of a subsample's mode): the first
  steps are chord steps with it.

An objective whose Hessian costs far more than a product with it (``refines_steps``, e.g. a
log posterior over sparse one-hot rows, whose Hessian sums every pair of nonzeros of every row
while a product is two passes over the nonzeros) has its steps away from a fresh Hessian
refined by preconditioned conjugate gradients on ``H s = g`` (:func:`refined_step`): the
factored stale or approximate Hessian preconditions products with the current one
(:meth:`NewtonObjective.neg_hessian_product`), so each step is an inexact Newton step
(Dembo, Eisenstat & Steihaug 1982; Nocedal & Wright 2006, chapter 7) and the exact Hessian is
formed once, to confirm convergence. The preconditioner is refreshed only when the conjugate
gradients stall.

An objective whose :meth:`NewtonObjective.value_and_derivatives` evaluates the value, the
gradient and a Hessian in one pass over its data (``fuses_derivatives``) gets that call where a
fresh Hessian is expected at the trial point: the exact one when the chord steps' rate
predicts convergence there, an approximate one after the first chord step from an initial
Hessian. ``confirm=False`` (the warm start of a larger problem) stops at ``tol`` with whichever
Hessian steered the steps, without the exact confirmation.
"""

import abc
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from sklearn.exceptions import ConvergenceWarning

from .._warnings import warn
from .._linalg import cholesky_in_place, stable_cholesky

# Armijo's sufficient-increase fraction of the gain predicted for the step (Nocedal & Wright
# 2006, section 3.1, suggest 1e-4).
ARMIJO = 1e-4
# The line search gives up below this fraction of the Newton step: nothing is gained at
# working precision, so the current point is the maximum.
MIN_STEP = 1e-10
# Chord steps go on to a decrement well below tol before the fresh Hessian confirms
# convergence, so the confirmation rarely asks for another step.
CHORD_MARGIN = 1e-4
# A chord step must shrink the decrement at least this much, or the Hessian is refreshed.
CHORD_RATE = 0.1
# With approximate Hessians the chord steps' decrement is that of a Hessian nearly exact at a
# nearby point, so a smaller margin suffices (it also keeps the target above the rounding
# floor of the decrement of a sum over 1e6 rows).
APPROX_MARGIN = 1e-2
# With approximate Hessians, a stale one is refreshed when that is predicted to save more
# than this many chord steps (an approximate Hessian costs about one step).
REFRESH_COST = 1.0
# Refined steps: the conjugate gradients stop once the residual's preconditioned norm is
# this fraction of the gradient's, so each step shrinks the decrement by about its square
# (1e-4) besides Newton's quadratic rate; they give up (and refresh the preconditioner) after
# CG_MAX_ITER products.
CG_FORCING = 1e-2
CG_MAX_ITER = 50


def _refresh_pays(decrement, last_decrement, hessian_decrement, target):
    """Whether a fresh Hessian at the current point beats chord steps with the stale one.

    A chord step's rate (decrement ratio) grows with the squared distance from the point the
    Hessian was computed at, i.e. with the decrement there (``hessian_decrement``): a fresh
    Hessian here would give about ``rate * decrement / hessian_decrement``. Compare the steps
    each needs to bring ``decrement`` down to ``target``.
    """
    rate = decrement / last_decrement
    if not 0.0 < rate < 1.0 or decrement <= target or hessian_decrement <= decrement:
        return False
    fresh_rate = rate * decrement / hessian_decrement
    span = np.log(decrement / target)
    return span / np.log(1 / rate) - span / np.log(1 / fresh_rate) > REFRESH_COST


def rounding_slack(value):
    """Rounding error allowed when comparing objective values of magnitude ``|value|``.

    A sum of many terms carries a relative error of a few ``eps``: an increase smaller than
    this cannot be told from none.
    """
    return 16 * np.finfo(float).eps * abs(value)


class NewtonObjective(abc.ABC):
    """A smooth concave function ``F(x)`` to maximise, as :func:`newton_maximise` sees it.

    Subclasses implement :meth:`value`, :meth:`gradient` and :meth:`neg_hessian`. The other
    methods have defaults for a dense negative Hessian that is positive definite (up to
    rounding); an objective overrides them to compute the two derivatives together, to
    factor an indefinite Hessian or to solve in another parametrisation.
    """

    @abc.abstractmethod
    def value(self, x):
        """``(F(x), state)``, with ``state`` whatever the derivatives at ``x`` reuse (e.g.
        the linear predictors); it is passed back to the other methods with ``x``."""

    @abc.abstractmethod
    def gradient(self, x, state):
        """Gradient of ``F`` at ``x``, in the form :meth:`direction` takes."""

    @abc.abstractmethod
    def neg_hessian(self, x, state):
        """``-d^2 F / dx^2`` at ``x``, in the form :meth:`factor` takes."""

    def approx_neg_hessian(self, x, state):
        """A cheaper approximation of :meth:`neg_hessian`, in the same form, for the steps
        of ``newton_maximise(..., approx_steps=True)``; by default the exact one."""
        return self.neg_hessian(x, state)

    #: Whether :meth:`value_and_derivatives` is cheaper than :meth:`value` followed by the
    #: derivatives; :func:`newton_maximise` then calls it where it expects to need a fresh
    #: Hessian at the trial point (see its ``approx_steps``).
    fuses_derivatives = False

    def value_and_derivatives(self, x, exact=True):
        """``(F(x), state, gradient, neg_hessian)`` together, with the exact negative Hessian
        or (``exact=False``) :meth:`approx_neg_hessian`."""
        value, state = self.value(x)
        if exact:
            return (value, state) + tuple(self.gradient_and_neg_hessian(x, state))
        return value, state, self.gradient(x, state), self.approx_neg_hessian(x, state)

    def gradient_and_neg_hessian(self, x, state):
        """Both derivatives at ``x`` (override when computing them together is cheaper)."""
        return self.gradient(x, state), self.neg_hessian(x, state)

    def factor(self, neg_hessian):
        """Factorisation of the negative Hessian that :meth:`direction` solves with; by
        default its Cholesky factor, with the least diagonal jitter that lets it succeed
        (see :func:`shift_to_definite` for a Hessian that may be indefinite)."""
        return stable_cholesky(neg_hessian)

    def factor_in_place(self, neg_hessian):
        """:meth:`factor` computed in the negative Hessian's own memory, which it overwrites
        (for ``newton_maximise(..., keep_neg_hessian=False)``); by default
        :func:`cholesky_in_place`, the same factor as :meth:`factor`'s."""
        return cholesky_in_place(neg_hessian)

    def direction(self, factor, grad):
        """The Newton step ``s = H^-1 g`` and the decrement ``g^T H^-1 g``."""
        step = linalg.cho_solve((factor, True), grad, check_finite=False)
        return step, grad @ step

    #: Whether steps away from a fresh Hessian are refined by conjugate gradients with
    #: :meth:`neg_hessian_product` (:func:`refined_step`): for objectives whose Hessian costs
    #: far more than a product with it.
    refines_steps = False

    def neg_hessian_product(self, x, state):
        """A function ``v -> H v`` for the negative Hessian ``H`` at ``x`` (needed only with
        ``refines_steps``)."""
        raise NotImplementedError


@dataclass
class NewtonResult:
    """Output of :func:`newton_maximise`.

    Attributes
    ----------
    x : ndarray
        The maximiser found.
    state : object
        The objective's state at ``x`` (from :meth:`NewtonObjective.value`).
    value : float
        ``F(x)``.
    neg_hessian : object
        The negative Hessian at ``x`` (never a stale one, unless ``confirm=False``).
    n_iter : int
        Steps taken.
    converged : bool
        Whether half the decrement fell below ``tol`` (or the line search found nothing left
        to gain) before ``max_iter`` steps.
    gradient : object
        The gradient at ``x`` (from :meth:`NewtonObjective.gradient`).
    neg_hessian_factor : object
        With ``keep_neg_hessian=False``: :meth:`NewtonObjective.factor_in_place` of the exact
        negative Hessian at ``x``, which is then not kept (``neg_hessian`` is None).
    """

    x: np.ndarray
    state: object
    value: float
    neg_hessian: object
    n_iter: int
    converged: bool
    gradient: object = None
    neg_hessian_factor: object = None


def refined_step(objective, x, state, factor, grad, chord_step, chord_decrement):
    """The step ``s ~ H^-1 g`` for the negative Hessian ``H`` at ``x``, by conjugate gradients
    preconditioned with ``factor`` (a stale or approximate Hessian's, applied by
    :meth:`NewtonObjective.direction`), from ``s = 0``; ``chord_step`` and
    ``chord_decrement`` are that preconditioner applied to ``g`` (the first direction).

    Stops when the residual ``r = g - H s`` has ``r^T M^-1 r <= CG_FORCING^2 g^T M^-1 g``.
    From ``s = 0`` every iterate satisfies ``g^T s = s^T H s > 0`` (Galerkin), so ``g^T s``
    is an ascent estimate of the decrement ``g^T H^-1 g`` from below, the gain a quadratic
    model predicts for the step.

    Returns
    -------
    step : ndarray
    decrement : float
        ``g^T s``.
    solved : bool
        Whether the residual met the forcing term within ``CG_MAX_ITER`` products (otherwise
        the last iterate, still an ascent direction).
    """
    product = objective.neg_hessian_product(x, state)
    target = CG_FORCING**2 * chord_decrement
    step = np.zeros_like(chord_step)
    residual = np.array(grad, dtype=float)
    preconditioned, rz = chord_step, chord_decrement
    direction = preconditioned
    for _ in range(CG_MAX_ITER):
        curvature = direction @ (h_direction := product(direction))
        if not curvature > 0:  # no curvature left along it (rounding): keep what we have
            break
        alpha = rz / curvature
        step = step + alpha * direction
        residual = residual - alpha * h_direction
        preconditioned, rz_new = objective.direction(factor, residual)
        if rz_new <= target:
            return step, float(grad @ step), True
        direction = preconditioned + (rz_new / rz) * direction
        rz = rz_new
    if not np.any(step):
        return chord_step, chord_decrement, False
    return step, float(grad @ step), False


def newton_maximise(objective, x0, *, tol, max_iter, reuse_below=None, full_steps=0,
                    approx_steps=False, initial_neg_hessian=None, confirm=True, verbose=0,
                    label="newton", value_name="objective", keep_neg_hessian=True):
    """Maximise a concave :class:`NewtonObjective` by damped Newton steps.

    Parameters
    ----------
    objective : NewtonObjective
    x0 : array-like
        Starting point.
    tol : float
        Stop when half the Newton decrement is at most ``tol``.
    max_iter : int
        Step cap; ``converged`` is False when it is hit (see :func:`warn_not_converged`).
    reuse_below : float, default=None
        Reuse the factored Hessian (chord steps) after a step whose decrement was below
        this; None never reuses it.
    full_steps : int, default=0
        Take up to this many leading steps whole, accepted when they increase ``F`` at all;
        the first that does not is line-searched instead, as are all later steps.
    approx_steps : bool, default=False
        Steer the steps with :meth:`NewtonObjective.approx_neg_hessian`, refreshed only when
        that is predicted to pay; the exact Hessian confirms convergence and is returned.
    initial_neg_hessian : object, default=None
        A negative Hessian near ``x0`` (in the form :meth:`NewtonObjective.factor` takes) for
        the first steps, which are then chord steps.
    confirm : bool, default=True
        Whether convergence is confirmed with the exact Hessian. False (e.g. the warm start
        of a larger problem): stop at the first point whose decrement, with whichever Hessian
        steers the steps, is at most ``2 tol``, and return that Hessian (approximate, and
        from a nearby point after chord steps).
    verbose : int, default=0
        Print one line per iteration when positive.
    keep_neg_hessian : bool, default=True
        False: every negative Hessian computed here is factored in its own memory
        (:meth:`NewtonObjective.factor_in_place`), and the result holds the factor of the
        exact one at ``x`` (``neg_hessian_factor``) instead of the Hessian: one ``p x p``
        array instead of two. Only with ``confirm=True``.
    label, value_name : str
        How the printed lines name the caller and ``F``.

    Returns
    -------
    NewtonResult
    """
    def factored(hessian):
        """``(neg_hessian, factor)`` to go on with: a Hessian not to be kept is factored in
        its own memory (only the exact one is ever returned, and its factor does)."""
        if not keep_neg_hessian:
            return None, objective.factor_in_place(hessian)
        return hessian, objective.factor(hessian)

    def result(x, state, value, neg_hessian, n_iter, converged, grad):
        return NewtonResult(x, state, value, neg_hessian, n_iter, converged, grad,
                            None if keep_neg_hessian else factor)

    x = np.array(x0, dtype=float)
    value, state = objective.value(x)
    neg_hessian = factor = grad = None
    fused_hessian = None  # (Hessian at x, whether exact) from a fused evaluation
    exact = False  # whether neg_hessian is the exact one (at the point it was computed)
    need_exact = not approx_steps  # whether the next fresh Hessian must be exact
    reuse = initial_neg_hessian is not None
    if reuse:
        neg_hessian = initial_neg_hessian
        factor = objective.factor(neg_hessian)
    margin = APPROX_MARGIN if approx_steps else CHORD_MARGIN
    refine = objective.refines_steps
    last_decrement = hessian_decrement = np.inf
    n_iter = 0
    while True:
        fresh = not reuse or factor is None or fused_hessian is not None
        if fused_hessian is not None:
            (neg_hessian, exact), fused_hessian = fused_hessian, None
            need_exact = not approx_steps
            factor = None  # the stale factor's memory is free for the new one
            neg_hessian, factor = factored(neg_hessian)
        elif fresh:
            exact = need_exact
            need_exact = not approx_steps
            neg_hessian = factor = None  # free the stale ones' memory for the new ones
            if grad is not None:  # known at x: only the Hessian is new
                neg_hessian = (objective.neg_hessian if exact
                               else objective.approx_neg_hessian)(x, state)
            elif exact:
                grad, neg_hessian = objective.gradient_and_neg_hessian(x, state)
            else:
                grad = objective.gradient(x, state)
                neg_hessian = objective.approx_neg_hessian(x, state)
            neg_hessian, factor = factored(neg_hessian)
        elif grad is None:
            grad = objective.gradient(x, state)
        step, decrement = objective.direction(factor, grad)
        if refine and not fresh:
            step, decrement, solved = refined_step(objective, x, state, factor, grad, step,
                                                   decrement)
            if not (solved or fresh):  # the preconditioner no longer serves: refresh it
                reuse = False
                need_exact = need_exact or decrement / 2 <= tol
                continue
        if fresh or hessian_decrement == np.inf:
            hessian_decrement = decrement
        if not fresh and not refine and (decrement > CHORD_RATE * last_decrement or (
                approx_steps and _refresh_pays(decrement, last_decrement, hessian_decrement,
                                               2 * tol * margin))):
            reuse = False  # the stale Hessian no longer pays: refresh it, with the exact
            # one when that may confirm convergence here
            need_exact = need_exact or decrement / 2 <= tol
            continue
        if verbose:
            kind = "" if fresh and exact else " (approx)" if fresh else " (chord)"
            print(f"[{label}] iter {n_iter:3d}  {value_name} {value:.10g}  "
                  f"decrement/2 {decrement / 2:.3e}{kind}")
        if decrement / 2 <= tol * (1.0 if (fresh and exact) or not confirm else margin):
            if (fresh and exact) or not confirm:
                return result(x, state, value, neg_hessian, n_iter, True, grad)
            reuse = False  # confirm with the exact Hessian at this point
            need_exact = True
            continue
        if n_iter == max_iter:
            break
        if full_steps > 0:
            new_x = x + step
            new_value, new_state = objective.value(new_x)
            if new_value > value:
                x, value, state, grad = new_x, new_value, new_state, None
                full_steps -= 1
                n_iter += 1
                continue
            full_steps = 0  # line-search this step and all later ones
        reuse = refine or (reuse_below is not None and decrement < reuse_below)
        # Where a fresh Hessian will be wanted at the new point, evaluate it with the value
        # (one pass over the data instead of two): the exact one when a chord step, which
        # shrinks the decrement by about the previous one's rate, predicts convergence
        # there; an approximate one after the first step with an initial (subsample's)
        # Hessian, whose rate its sampling error limits.
        fuse = None
        if objective.fuses_derivatives and not fresh:
            if last_decrement < np.inf and decrement**2 / last_decrement / 2 <= tol * margin:
                fuse = "exact"
            elif (approx_steps and not refine and last_decrement == np.inf
                  and decrement / 2 > tol * margin):
                fuse = "approx"
        last_decrement = decrement
        if confirm and not (fresh and exact):
            # a stale or approximate Hessian is never returned (its factor steers): its
            # memory is free for the fresh one the trial point may compute
            neg_hessian = None
        if fuse:
            # so is the factor's: the full step is nearly always taken, and when it is not,
            # the next step computes a fresh Hessian
            factor = None
        # and the state's (e.g. linear predictors of every row): the trials need none of
        # it, and a failed line search, which does, evaluates it again
        state = new_state = None
        t = 1.0
        while True:
            new_x = x + t * step
            new_grad = new_hessian = new_state = None  # a failed trial's memory too
            if fuse and t == 1.0:
                new_value, new_state, new_grad, new_hessian = objective.value_and_derivatives(
                    new_x, exact=fuse == "exact")
                new_hessian = (new_hessian, fuse == "exact")
            else:
                new_value, new_state = objective.value(new_x)
            if new_value - value >= ARMIJO * t * decrement - rounding_slack(value):
                break
            t *= 0.5
            if t < MIN_STEP:
                break
        if t < MIN_STEP:
            new_state = None
            _, state = objective.value(x)  # the value as before: only the state is wanted
            if fresh and exact:  # no progress possible at working precision: at the maximum
                return result(x, state, value, neg_hessian, n_iter, True, grad)
            # a stale or approximate Hessian may be to blame: refresh it and retry, exact
            # when it was fresh already
            reuse = False
            need_exact = fresh
            continue
        x, value, state, grad = new_x, new_value, new_state, new_grad
        fused_hessian = new_hessian
        n_iter += 1
    if not (fresh and exact):
        neg_hessian = factor = None
        neg_hessian = objective.neg_hessian(x, state)
        if not keep_neg_hessian:
            neg_hessian, factor = factored(neg_hessian)
    if grad is None:
        grad = objective.gradient(x, state)
    return result(x, state, value, neg_hessian, max_iter, False, grad)


def warn_not_converged(what, max_iter):
    """Issue the :class:`~sklearn.exceptions.ConvergenceWarning` of a Newton solve that hit
    ``max_iter``; ``what`` names the solve (e.g. ``"Newton's method"``)."""
    warn(f"{what} did not converge in max_iter={max_iter} iterations; increase "
         "max_iter or check the data scaling.", ConvergenceWarning)
