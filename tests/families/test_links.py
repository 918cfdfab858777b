"""Link objects checked against finite differences, scipy.stats and numerical integration."""

import numpy as np
import pytest
from scipy import integrate, stats

from skcoreset.families import (LINKS, CLogLogLink, IdentityLink, Link, LogitLink, LogLink,
                                ProbitLink, SoftplusLink, make_link)
from skcoreset.families._base import wide_gaussian_nodes

ETA = np.array([-6.0, -2.5, -0.3, 0.0, 0.4, 1.7, 5.0])
# every registered link: a new one is checked here without editing a list
ALL = [link() for link in LINKS.values()]
POSITIVE = [link for link in ALL if np.all(link.inverse(ETA) > 0)]  # log_inverse defined
CDF = [link for link in ALL if link.cdf]  # binary links: log_complement defined


def test_the_link_lists_follow_the_registry():
    assert {type(link) for link in POSITIVE} == set(LINKS.values()) - {IdentityLink}
    assert {link.name for link in CDF} == {"logit", "probit", "cloglog"}
    for link in CDF:  # a distribution function onto (0, 1), increasing
        mean = link.inverse(np.linspace(-3.0, 3.0, 61))
        assert np.all((mean > 0) & (mean < 1)) and np.all(np.diff(mean) > 0), link


@pytest.mark.parametrize("link", ALL, ids=repr)
def test_link_and_inverse_are_inverses(link):
    mean = link.inverse(ETA)
    # where a probability rounds to 1 (cloglog: 1 - exp(-e^5) = 1 - 1e-65) no link inverts it
    invertible = ~(link.cdf & (mean > 1 - 1e-12))
    np.testing.assert_allclose(link(mean[invertible]), ETA[invertible], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("link", ALL, ids=repr)
def test_inverse_derivatives_match_finite_differences(link):
    h = 1e-5
    d1, d2 = np.broadcast_arrays(*link.inverse_derivatives(ETA), ETA)[:2]
    fd1 = (link.inverse(ETA + h) - link.inverse(ETA - h)) / (2 * h)
    first = lambda e: np.broadcast_to(link.inverse_derivatives(e)[0], e.shape)  # noqa: E731
    fd2 = (first(ETA + h) - first(ETA - h)) / (2 * h)
    np.testing.assert_allclose(d1, fd1, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(d2, fd2, rtol=1e-6, atol=1e-9)
    # the mean passed in saves its evaluation and changes nothing
    for a, b in zip(link.inverse_derivatives(ETA, link.inverse(ETA)),
                    link.inverse_derivatives(ETA)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("link", POSITIVE, ids=repr)
def test_log_inverse_and_its_derivatives(link):
    # (log of the mean is the less accurate one near 1: 1e-10 relative at Phi(5))
    np.testing.assert_allclose(link.log_inverse(ETA), np.log(link.inverse(ETA)), rtol=1e-12,
                               atol=1e-15)
    h = 1e-5
    d1, d2 = (np.broadcast_to(d, ETA.shape) for d in link.log_inverse_derivatives(ETA))
    fd1 = (link.log_inverse(ETA + h) - link.log_inverse(ETA - h)) / (2 * h)
    first = lambda e: np.broadcast_to(link.log_inverse_derivatives(e)[0], e.shape)  # noqa: E731
    fd2 = (first(ETA + h) - first(ETA - h)) / (2 * h)
    np.testing.assert_allclose(d1, fd1, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(d2, fd2, rtol=1e-6, atol=1e-9)
    # the stable forms agree with the defaults of the base class, derived from the inverse
    d1_default, d2_default = Link.log_inverse_derivatives(link, ETA)
    np.testing.assert_allclose(d1, d1_default, rtol=1e-9)
    np.testing.assert_allclose(d2, d2_default, rtol=1e-7, atol=1e-12)


def test_probit_link_is_the_normal_distribution_function():
    link = ProbitLink()
    eta = np.array([-1e4, -300.0, -38.5, -8.0, -1.0, 0.0, 2.0, 9.0, 40.0, 1e4])
    np.testing.assert_allclose(link.inverse(eta), stats.norm.cdf(eta))
    # log Phi is stable in both tails, where log(Phi) underflows: scipy.stats' logcdf
    np.testing.assert_allclose(link.log_inverse(eta), stats.norm.logcdf(eta), rtol=1e-13)
    np.testing.assert_allclose(link(np.array([0.025, 0.5, 0.9])), stats.norm.ppf([0.025, 0.5, 0.9]))
    d1, d2 = link.log_inverse_derivatives(eta)
    assert np.all(np.isfinite(d1)) and np.all(np.isfinite(d2))
    # the inverse Mills ratio phi / Phi, from the log densities where both underflow
    moderate = np.abs(eta) < 300
    mills = np.exp(stats.norm.logpdf(eta) - stats.norm.logcdf(eta))
    np.testing.assert_allclose(d1[moderate], mills[moderate], rtol=1e-11)
    # far left: r = -eta + 1 / -eta - ... and d2 -> -1 (log Phi ~ -eta^2 / 2); far right: 0
    u = 1e4
    np.testing.assert_allclose(d1[0], u + 1 / u - 2 / u**3, rtol=1e-15)
    np.testing.assert_allclose(d2[0], -(u + 1 / u) * (1 / u - 2 / u**3), rtol=1e-12)
    assert d2[-1] == 0.0 and -1.0 < d2[0] < -0.999999
    # the series below -40 joins the direct form continuously
    left, right = link.log_inverse_derivatives(np.array([-40.0 - 1e-9, -40.0 + 1e-9]))[1]
    np.testing.assert_allclose(left, right, rtol=1e-12)


@pytest.mark.parametrize("m", [-4.0, -0.5, 0.0, 1.3, 6.0])
@pytest.mark.parametrize("v", [0.0, 0.2, 1.0, 9.0, 400.0])
def test_probit_gaussian_moments_are_exact(m, v):
    mean, var = ProbitLink().gaussian_moments(np.array([m]), np.array([v]))
    if v == 0.0:
        np.testing.assert_allclose([mean[0], var[0]], [stats.norm.cdf(m), 0.0], atol=1e-15)
        return
    sd = np.sqrt(v)

    def against_normal(f):
        return integrate.quad(lambda e: f(e) * stats.norm.pdf(e, m, sd), m - 14 * sd,
                              m + 14 * sd, points=[0.0], limit=800, epsabs=1e-14)[0]

    expected_mean = against_normal(stats.norm.cdf)
    np.testing.assert_allclose(mean, expected_mean, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(
        var, against_normal(lambda e: stats.norm.cdf(e) ** 2) - expected_mean**2,
        rtol=1e-7, atol=1e-13)


def test_log_link_gaussian_moments_are_log_normal():
    mean, var = LogLink().gaussian_moments(np.array([0.3]), np.array([0.5]))
    dist = stats.lognorm(s=np.sqrt(0.5), scale=np.exp(0.3))
    np.testing.assert_allclose([mean[0], var[0]], [dist.mean(), dist.var()])
    assert LogitLink().gaussian_moments(np.zeros(1), np.ones(1)) is None


@pytest.mark.parametrize("m", [-300.0, -30.0, -2.0, 0.7, 5.0])
@pytest.mark.parametrize("v", [1.5, 10.0, 100.0, 1e4])
def test_wide_gaussian_nodes_integrate_log_phi(m, v):
    # the rule behind the binary families' expectations over wide Gaussians
    link = ProbitLink()
    nodes, weights = wide_gaussian_nodes(np.array([m]), np.array([v]))
    sd = np.sqrt(v)
    for f in (link.log_inverse, lambda e: link.log_inverse_derivatives(e)[0],
              lambda e: link.log_inverse_derivatives(e)[1]):
        expected = integrate.quad(lambda e: f(np.array([e]))[0] * stats.norm.pdf(e, m, sd),
                                  m - 12 * sd, m + 12 * sd, points=sorted({0.0, -8.0, 8.0}),
                                  limit=2000, epsabs=1e-13, epsrel=1e-12)[0]
        scale = 1.0 + abs(m) ** 2 + v  # the values grow like eta^2
        assert abs((f(nodes) * weights).sum() - expected) <= 1e-9 * scale


def test_links_are_stateless_and_named():
    assert ProbitLink() == ProbitLink() and ProbitLink() != LogitLink()
    assert len({LogLink(), LogLink()}) == 1
    assert sorted(LINKS) == ["cloglog", "identity", "log", "logit", "probit", "softplus"]
    assert {link.name for link in ALL if link.symmetric} == {"logit", "probit"}
    assert isinstance(make_link("probit"), ProbitLink)
    link = SoftplusLink()
    assert make_link(link, allowed=("log", "softplus")) is link
    with pytest.raises(ValueError, match="link must be 'log' or 'softplus'"):
        make_link("probit", allowed=("log", "softplus"))
    with pytest.raises(ValueError, match="link must be"):
        make_link(3)


def test_softplus_log_curvature_keeps_its_sign_far_below_zero():
    """``(log softplus)''`` is ``-exp(eta) / 2`` to leading order as ``eta -> -inf``; the
    form ``r (1 - sigmoid) - r^2`` cancels to rounding there (it gave +2.3e-16 at -33, a
    Poisson Hessian of the wrong sign)."""
    eta = np.array([-700.0, -100.0, -33.0, -20.0])
    second = make_link("softplus").log_inverse_derivatives(eta)[1]
    u = np.exp(eta)
    # log log(1 + u) = eta - u / 2 + 5 u^2 / 24 + O(u^3); d/deta u^k = k u^k
    expected = -u / 2 + 5 * u**2 / 6
    np.testing.assert_allclose(second, expected, rtol=1e-13)
    eta = np.linspace(-60.0, 60.0, 2001)
    assert np.all(make_link("softplus").log_inverse_derivatives(eta)[1] < 0.0)


@pytest.mark.parametrize("link", CDF, ids=repr)
def test_log_complement_and_its_derivatives(link):
    # log(1 - F): the log-probability of the negative class of a binary model (1 - F is
    # the less accurate one where F is near 1: 1e-11 relative at Phi(5), 0 at cloglog's)
    mean = link.inverse(ETA)
    below_one = mean < 1.0
    np.testing.assert_allclose(link.log_complement(ETA)[below_one],
                               np.log1p(-mean[below_one]), rtol=1e-10, atol=1e-15)
    h = 1e-5
    d1, d2 = link.log_complement_derivatives(ETA)
    fd1 = (link.log_complement(ETA + h) - link.log_complement(ETA - h)) / (2 * h)
    fd2 = (link.log_complement_derivatives(ETA + h)[0]
           - link.log_complement_derivatives(ETA - h)[0]) / (2 * h)
    np.testing.assert_allclose(d1, fd1, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(d2, fd2, rtol=1e-6, atol=1e-9)
    # the stable forms agree with the defaults of the base class, derived from the inverse
    base = type("Plain", (Link,), {"__call__": link.__call__, "inverse": link.inverse,
                                   "inverse_derivatives": link.inverse_derivatives})()
    eta = ETA[below_one]
    np.testing.assert_allclose(link.log_complement(eta), base.log_complement(eta),
                               rtol=1e-9, atol=1e-15)
    for stable, default in zip((d1[below_one], d2[below_one]),
                               base.log_complement_derivatives(eta)):
        np.testing.assert_allclose(stable, default, rtol=1e-7, atol=1e-12)


def test_cloglog_link_is_the_minimum_gumbel_distribution_function():
    link = CLogLogLink()
    eta = np.array([-700.0, -40.0, -8.0, -1.0, -0.37, 0.0, 0.8, 3.0, 5.0, 30.0, 400.0])
    gumbel = stats.gumbel_l
    np.testing.assert_allclose(link.inverse(eta), gumbel.cdf(eta), rtol=1e-14)
    # scipy's log cdf underflows to -inf below about -745; here it tends to eta
    finite = eta > -700
    np.testing.assert_allclose(link.log_inverse(eta)[finite], gumbel.logcdf(eta[finite]),
                               rtol=1e-13)
    assert link.log_inverse(np.array([-700.0, -1e4]))[1] == -1e4
    np.testing.assert_allclose(link.log_complement(eta), gumbel.logsf(eta), rtol=1e-14)
    d1 = link.log_inverse_derivatives(eta)[0]
    moderate = eta < 30  # the density underflows beyond
    np.testing.assert_allclose(
        d1[moderate], np.exp(gumbel.logpdf(eta) - gumbel.logcdf(eta))[moderate], rtol=1e-12)
    np.testing.assert_allclose(link(np.array([0.01, 0.5, 0.99])),
                               gumbel.ppf([0.01, 0.5, 0.99]), rtol=1e-12)


def test_cloglog_log_curvature_keeps_its_sign_and_joins_its_series():
    """``(log F)'' = r (1 - u / (1 - e^-u))``, ``u = exp(eta)``, is ``-u / 2`` to leading
    order as ``eta -> -inf``, where the direct form cancels: its sign is what keeps the
    Laplace precision positive (the softplus link lost it at -33)."""
    link = CLogLogLink()
    eta = np.array([-700.0, -100.0, -33.0, -20.0])
    u = np.exp(eta)
    # log(1 - e^-u) = eta - u / 2 + u^2 / 24 + O(u^4); d^2/deta^2 u^k = k^2 u^k
    np.testing.assert_allclose(link.log_inverse_derivatives(eta)[1], -u / 2 + u**2 / 6,
                               rtol=1e-13)
    grid = np.linspace(-800.0, 3.0, 4001)
    curvature = link.log_inverse_derivatives(grid)[1]
    # strictly negative until exp(eta) underflows (below -745), then -0.0
    assert np.all(curvature <= 0.0) and np.all(curvature[grid > -700] < 0.0)
    # the series below u = 0.1 and the direct form above agree at the switch (to the
    # change of the curvature itself over 2e-12, about 2e-12 of it)
    switch = np.log(0.1)
    left, right = link.log_inverse_derivatives(np.array([switch - 1e-12, switch + 1e-12]))[1]
    np.testing.assert_allclose(left, right, rtol=1e-11)
