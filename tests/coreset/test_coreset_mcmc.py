"""The experimental Coreset MCMC constructor (Chen & Campbell, 2024) and its Hot DoG step rule
(Chen, Huggins & Campbell, 2024): the step rule's formulas, the hot-start test, and the
constructor's training against its starting weights in nats."""

import numpy as np
import pytest

from skcoreset.coreset._coreset_mcmc import CoresetMCMC, HotDoG, trend_statistic
from skcoreset.datasets import make_rare_events
from skcoreset.metrics import coreset_quality


def test_hot_dog_steps_follow_distance_over_gradients():
    """First step: r / sqrt(v_hat) * m_hat = r * sign(g) (Adam's bias corrections cancel);
    later steps scale with the running maximum distance travelled, not with the gradient's
    size; weights never go negative."""
    w0 = np.array([10.0, 20.0, 1e-6])
    rule = HotDoG(w0, first_move=1e-3)
    g = np.array([2.0, -5.0, 1.0])
    w1 = rule.step(w0, g)
    np.testing.assert_allclose(w1, w0 - 1e-3 * w0 * np.sign(g), rtol=1e-6)
    # the same gradients scaled by 1000: the same steps (the rule is scale free)
    a, b = HotDoG(w0), HotDoG(w0)
    wa, wb = w0.copy(), w0.copy()
    for _ in range(20):
        wa, wb = a.step(wa, g), b.step(wb, 1000 * g)
    np.testing.assert_allclose(wa, wb, rtol=1e-6)
    assert np.all(wa[:2] != w0[:2])
    # a weight pushed down steadily reaches zero and stays there
    for _ in range(300):
        wa = a.step(wa, g)
    assert wa[2] == 0.0 and np.all(wa >= 0)


def test_trend_statistic_separates_trends_from_noise():
    rng = np.random.default_rng(0)
    assert trend_statistic(rng.normal(size=300)) < 0.5
    assert trend_statistic(np.linspace(0, 30, 300) + rng.normal(size=300)) > 5


def test_coreset_mcmc_trains_its_weights_and_keeps_draws():
    X, y = make_rare_events(10_000, n_features=4, positive_rate=0.05, random_state=0)
    start = CoresetMCMC(M=100, n_iter=1, max_hot_start=0, random_state=0).fit(X, y)
    trained = CoresetMCMC(M=100, n_iter=400, n_draws_kept=400, random_state=0).fit(X, y)
    before = coreset_quality(start, X, y).kl
    after = coreset_quality(trained, X, y)
    assert after.kl < 0.2 * before, (before, after.kl)
    assert trained.kl_estimate_ == pytest.approx(after.kl, rel=1e-3)
    assert trained.draws_.shape == (400, 5) and 0.3 < trained.acceptance_rate_ < 0.9
    assert trained.hot_start_iter_ >= 15
    # the draws sit where the coreset posterior is
    assert np.all(np.abs(trained.draws_.mean(axis=0) - after.full_posterior.mean)
                  < 5 * after.full_posterior.std)
