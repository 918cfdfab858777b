"""Likelihood families checked against finite differences, quadrature and closed forms."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats
from scipy.special import gammaln

from skcoreset._inference import resolve_family
from skcoreset.families import (
    FAMILIES as REGISTRY, LINKS, BinaryFamily, CLogLogLink, Family, GaussianFamily, LogitLink,
    LogLink, LogisticFamily, NegativeBinomialFamily, PoissonFamily, ProbitFamily, ProbitLink,
    binary_family, gauss_hermite, make_family)

FAMILIES = {
    "logistic": (LogisticFamily(), np.array([-1.0, 1.0, 1.0, -1.0, 1.0])),
    "probit": (ProbitFamily(), np.array([1.0, -1.0, 1.0, -1.0, -1.0])),
    "poisson-log": (PoissonFamily("log"), np.array([0.0, 1.0, 3.0, 7.0, 0.0])),
    "poisson-softplus": (PoissonFamily("softplus"), np.array([0.0, 1.0, 3.0, 7.0, 2.0])),
    "gaussian": (GaussianFamily(noise_scale=0.7), np.array([-1.3, 0.2, 2.5, 0.0, 4.0])),
    "negative-binomial": (NegativeBinomialFamily(alpha=0.6),
                          np.array([0.0, 1.0, 3.0, 7.0, 40.0])),
    "cloglog": (binary_family("cloglog"), np.array([1.0, -1.0, -1.0, 1.0, 1.0])),
}


def test_the_cases_cover_every_registered_family_and_binary_link():
    # a family or binary link added to the registries fails here until it has a case above
    classes = {type(family) for family, _ in FAMILIES.values()}
    assert set(REGISTRY.values()) <= classes, set(REGISTRY.values()) - classes
    links = {family.link.name for family, _ in FAMILIES.values() if family.binary}
    binary_links = {name for name, link in LINKS.items() if link.cdf}
    assert binary_links <= links, binary_links - links


ETA = np.array([-3.0, -0.4, 0.3, 1.1, 2.0])


@pytest.fixture(params=sorted(FAMILIES))
def family_and_y(request):
    return FAMILIES[request.param]


def test_derivatives_match_finite_differences(family_and_y):
    family, y = family_and_y
    h = 1e-5
    fd1 = (family.loglik(y, ETA + h) - family.loglik(y, ETA - h)) / (2 * h)
    fd2 = (family.d1(y, ETA + h) - family.d1(y, ETA - h)) / (2 * h)
    np.testing.assert_allclose(family.d1(y, ETA), fd1, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(family.d2(y, ETA), fd2, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("scale", [1.0, 30.0, 1e3])
def test_one_evaluation_of_the_terms_matches_the_separate_ones(family_and_y, scale):
    # what Newton's passes over the data use: the log-likelihood without its eta-free
    # terms (added back once per data set) and both derivatives
    family, y = family_and_y
    eta = ETA * scale
    constant = family.loglik_constant(y)
    assert constant.shape == y.shape
    loglik, d1 = family.loglik_and_derivatives(y, eta)
    again, d1_again, d2 = family.loglik_and_derivatives(y, eta, second=True)
    np.testing.assert_allclose(loglik + constant, family.loglik(y, eta), rtol=1e-13,
                               atol=1e-13)
    np.testing.assert_array_equal(again, loglik)
    np.testing.assert_array_equal(d1_again, d1)
    np.testing.assert_allclose(d1, family.d1(y, eta), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(d2, family.d2(y, eta), rtol=1e-13, atol=1e-300)


def test_loglik_is_a_normalised_density():
    # logistic: p(+1) + p(-1) = 1; Poisson: sum over counts = 1; Gaussian integrates to 1
    eta = np.array([-2.0, 0.5, 3.0])
    logit = LogisticFamily()
    total = np.exp(logit.loglik(np.ones(3), eta)) + np.exp(logit.loglik(-np.ones(3), eta))
    np.testing.assert_allclose(total, 1.0)
    for link in ("log", "softplus"):
        fam = PoissonFamily(link)
        counts = np.arange(200.0)
        mass = [np.exp(fam.loglik(counts, np.full(200, e))).sum() for e in eta]
        np.testing.assert_allclose(mass, 1.0)
        np.testing.assert_allclose(fam.loglik(np.array([4.0]), np.array([0.3])),
                                   stats.poisson.logpmf(4, fam.mean(np.array([0.3]))))
    gauss = GaussianFamily(noise_scale=2.0)
    np.testing.assert_allclose(gauss.loglik(np.array([1.0]), np.array([0.2])),
                               stats.norm.logpdf(1.0, 0.2, 2.0))


@pytest.mark.parametrize("link", [name for name, link in LINKS.items() if link.cdf])
def test_binary_likelihoods_are_bernoulli(link):
    family = binary_family(link)
    eta = np.array([-30.0, -2.0, 0.5, 3.0])
    p = family.link.inverse(eta)
    # (log p of the reference loses accuracy as p nears 1: 3e-8 relative at cloglog's 3)
    np.testing.assert_allclose(family.loglik(np.ones(4), eta), stats.bernoulli.logpmf(1, p),
                               rtol=1e-7)
    np.testing.assert_allclose(family.loglik(-np.ones(4), eta)[:3],
                               stats.bernoulli.logpmf(0, p[:3]), rtol=1e-9)
    total = np.exp(family.loglik(np.ones(4), eta)) + np.exp(family.loglik(-np.ones(4), eta))
    np.testing.assert_allclose(total, 1.0, rtol=1e-14)


@pytest.mark.parametrize("link", [LogitLink, ProbitLink])
def test_general_binary_form_equals_the_symmetric_fast_path(link):
    # the same link declared asymmetric takes the general form: log F for y = +1 and
    # log(1 - F) for y = -1 (here the reflection log F(-eta), written out), each with its
    # derivatives, and the generic wide-Gaussian rule
    def log_complement(self, eta):
        return link.log_inverse(self, -eta)

    def log_complement_derivatives(self, eta):
        d1, d2 = link.log_inverse_derivatives(self, -eta)
        return -d1, d2

    general = BinaryFamily(type("Asymmetric", (link,), {
        "symmetric": False, "log_complement": log_complement,
        "log_complement_derivatives": log_complement_derivatives})())
    fast = binary_family(link.name)
    assert fast.link.symmetric and not general.link.symmetric
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    eta = np.column_stack([ETA * 7, ETA, -ETA])
    for a, b in zip(general.loglik_and_derivatives(y, eta, second=True),
                    BinaryFamily.loglik_and_derivatives(fast, y, eta, second=True)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-300)
    m, v = ETA, np.array([0.3, 2.0, 30.0, 1e3, 0.01])
    for a, b in zip(general.expected_loglik(y, m, v), BinaryFamily.expected_loglik(fast, y, m, v)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_binary_family_of_a_link():
    assert type(binary_family("logit")) is LogisticFamily
    assert type(binary_family(ProbitLink())) is ProbitFamily
    cloglog = binary_family(CLogLogLink(), n_quadrature=16)
    assert type(cloglog) is BinaryFamily and cloglog.n_quadrature == 16
    assert cloglog.name == "cloglog" and cloglog.binary and cloglog.pass_glm_mapping is None
    assert repr(binary_family("cloglog")) == "BinaryFamily(link=CLogLogLink())"
    assert make_family(cloglog) is cloglog  # a model= of the coreset constructors
    with pytest.raises(ValueError, match="link must be 'logit' or 'probit' or 'cloglog'"):
        binary_family("log")
    with pytest.raises(ValueError, match="distribution function onto \\(0, 1\\)"):
        binary_family(LogLink())
    # initial predictor: the link of the share of positives, as for the registered ones
    np.testing.assert_allclose(cloglog.initial_predictor(-0.5), np.log(-np.log(0.75)))


def test_logistic_float32_loglik_is_float64_rounded():
    # the float32 path (the Hilbert projection) computes log(1 + u) instead of log1p(u)
    # in place: within float32 rounding of the float64 values, from tiny to huge |eta|
    eta = np.concatenate([np.linspace(-30, 30, 601), [-1e30, -1e4, -1e-30, 0, 1e-30, 1e4]])
    y = np.where(np.arange(len(eta)) % 3, 1.0, -1.0)
    family = LogisticFamily()
    assert family.float32_loglik and not PoissonFamily().float32_loglik
    exact = family.loglik(y, eta[:, None].repeat(2, axis=1))
    single = family.loglik(y, eta[:, None].repeat(2, axis=1).astype(np.float32))
    assert single.dtype == np.float32
    np.testing.assert_allclose(single, exact, rtol=3e-7, atol=2e-7)


@pytest.mark.parametrize("eta_value", [-1e4, -800.0, -40.0, 40.0, 800.0, 1e4])
def test_finite_for_huge_predictors(family_and_y, eta_value):
    family, y = family_and_y
    eta = np.full(len(y), eta_value)
    for out in (family.loglik(y, eta), family.d1(y, eta), family.d2(y, eta), family.mean(eta)):
        assert np.all(np.isfinite(out))


def test_extreme_values_are_the_right_limits():
    logit = LogisticFamily()
    np.testing.assert_allclose(logit.loglik(np.array([1.0, -1.0]), np.array([-1e4, 1e4])),
                               [-1e4, -1e4])
    soft = PoissonFamily("softplus")
    # rate ~ exp(eta) for very negative eta: log p(y | eta) ~ y * eta - log y!
    np.testing.assert_allclose(soft.loglik(np.array([2.0]), np.array([-1e4])),
                               2.0 * -1e4 - gammaln(3.0))
    np.testing.assert_allclose(soft.d1(np.array([2.0]), np.array([-1e4])), 2.0)


def test_two_dimensional_predictors_broadcast_per_row(family_and_y):
    family, y = family_and_y
    eta = np.column_stack([ETA, ETA + 0.5, ETA - 1.0])
    for name in ("loglik", "d1", "d2"):
        out = getattr(family, name)(y, eta)
        assert out.shape == eta.shape
        np.testing.assert_allclose(out[:, 1], getattr(family, name)(y, ETA + 0.5))


def test_gauss_hermite_is_exact_for_polynomials():
    z, w = gauss_hermite(10)
    np.testing.assert_allclose(w.sum(), 1.0)
    np.testing.assert_allclose(w @ z**2, 1.0)
    np.testing.assert_allclose(w @ z**4, 3.0)
    np.testing.assert_allclose(w @ z**18, 17 * 15 * 13 * 11 * 9 * 7 * 5 * 3, rtol=1e-10)


def _expectation_by_integration(family, y, m, v):
    def integrand(eta):
        return family.loglik(np.array([y]), np.array([eta]))[0] * stats.norm.pdf(eta, m, np.sqrt(v))
    sd = np.sqrt(v)
    return integrate.quad(integrand, m - 12 * sd, m + 12 * sd, epsabs=1e-12, limit=200)[0]


def test_expected_loglik_matches_numerical_integration(family_and_y):
    family, y = family_and_y
    m = np.array([-1.0, 0.2, 0.5, 1.5, -0.3])
    v = np.array([0.3, 2.0, 0.01, 1.0, 4.0])
    value, _, _ = family.expected_loglik(y, m, v)
    expected = [_expectation_by_integration(family, *args) for args in zip(y, m, v)]
    np.testing.assert_allclose(value, expected, rtol=1e-7, atol=1e-9)


def test_expected_loglik_gradients_match_finite_differences(family_and_y):
    family, y = family_and_y
    m = np.array([-1.0, 0.2, 0.5, 1.5, -0.3])
    v = np.array([0.3, 2.0, 0.01, 1.0, 4.0])
    _, grad_m, grad_v = family.expected_loglik(y, m, v)
    h = 1e-5
    value = lambda m, v: family.expected_loglik(y, m, v)[0]  # noqa: E731
    fd_m = (value(m + h, v) - value(m - h, v)) / (2 * h)
    fd_v = (value(m, v + h) - value(m, v - h)) / (2 * h)
    np.testing.assert_allclose(grad_m, fd_m, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad_v, fd_v, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("family", [PoissonFamily("log"), GaussianFamily(noise_scale=1.3)])
def test_closed_forms_equal_quadrature(family):
    y = np.array([0.0, 2.0, 5.0])
    m = np.array([-0.5, 0.7, 1.4])
    v = np.array([0.2, 0.9, 0.05])
    closed = family.expected_loglik(y, m, v)
    quadrature = super(type(family), family).expected_loglik(y, m, v)
    for a, b in zip(closed, quadrature):
        np.testing.assert_allclose(a, b, rtol=1e-9)
    for a, b in zip(family.expected_mean(m, v), super(type(family), family).expected_mean(m, v)):
        np.testing.assert_allclose(a, b, rtol=1e-8)


def test_expected_mean_matches_monte_carlo():
    rng = np.random.default_rng(0)
    m, v = np.array([0.4]), np.array([1.7])
    draws = m + np.sqrt(v) * rng.standard_normal(400_000)
    for family in (LogisticFamily(), PoissonFamily("softplus"), PoissonFamily("log")):
        mean, var = family.expected_mean(m, v)
        mu = family.mean(draws)
        np.testing.assert_allclose(mean, mu.mean(), rtol=5e-3)
        np.testing.assert_allclose(var, mu.var(), rtol=3e-2)


def test_link_inverts_mean():
    for family, mean in [(PoissonFamily("log"), 3.0), (PoissonFamily("softplus"), 0.2),
                         (GaussianFamily(), -1.5), (LogisticFamily(), 0.75),
                         (ProbitFamily(), 0.1), (NegativeBinomialFamily(0.5), 4.0)]:
        np.testing.assert_allclose(family.mean(np.array(family.link(mean))), mean)
    # Newton's start: a mean of +-1 labels 0.5 means P(y=1) = 0.75
    for family in (LogisticFamily(), ProbitFamily()):
        np.testing.assert_allclose(family.mean(family.initial_predictor(0.5)), 0.75)
    assert np.isfinite(PoissonFamily().initial_predictor(0.0))


def test_make_family_rejects_unknown_names():
    assert make_family("poisson", link="softplus").link_name == "softplus"
    with pytest.raises(ValueError, match="Unknown model"):
        make_family("cauchit")
    with pytest.raises(ValueError, match="link"):
        PoissonFamily("identity")
    with pytest.raises(ValueError, match="noise_scale"):
        GaussianFamily(noise_scale=0.0)


@pytest.mark.parametrize("v", [0.5, 1.0, 1.5, 10.0, 100.0, 1e4])
@pytest.mark.parametrize("m", [-30.0, -2.0, 0.7, 5.0])
def test_logistic_expectations_stay_accurate_for_wide_gaussians(m, v):
    from scipy.special import expit as sig, log_expit

    def integrate_against_normal(f):
        sd = np.sqrt(v)
        return integrate.quad(lambda e: f(e) * stats.norm.pdf(e, m, sd), m - 14 * sd,
                              m + 14 * sd, points=[0.0], limit=800, epsabs=1e-14)[0]

    family = LogisticFamily()
    for y in (1.0, -1.0):
        value, grad_m, grad_v = family.expected_loglik(np.array([y]), np.array([m]),
                                                       np.array([v]))
        np.testing.assert_allclose(value, integrate_against_normal(lambda e: log_expit(y * e)),
                                   rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(grad_m, integrate_against_normal(lambda e: y * sig(-y * e)),
                                   rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(
            grad_v, integrate_against_normal(lambda e: -0.5 * sig(e) * sig(-e)),
            rtol=1e-8, atol=1e-11)
    mean, var = family.expected_mean(np.array([m]), np.array([v]))
    expected_mean = integrate_against_normal(sig)
    np.testing.assert_allclose(mean, expected_mean, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(var, integrate_against_normal(lambda e: sig(e) ** 2)
                               - expected_mean**2, rtol=1e-7, atol=1e-11)


@pytest.mark.parametrize("v", [0.5, 1.5, 10.0, 100.0, 1e4])
@pytest.mark.parametrize("m", [-3.0, 0.5, 4.0])
def test_softplus_rate_moments_stay_accurate_for_wide_gaussians(m, v):
    sd = np.sqrt(v)

    def integrate_against_normal(f):
        return integrate.quad(lambda e: f(e) * stats.norm.pdf(e, m, sd), m - 14 * sd,
                              m + 14 * sd, points=[0.0], limit=800, epsabs=1e-14)[0]

    mean, var = PoissonFamily("softplus").expected_mean(np.array([m]), np.array([v]))
    expected_mean = integrate_against_normal(lambda e: np.logaddexp(0.0, e))
    expected_var = integrate_against_normal(lambda e: np.logaddexp(0.0, e) ** 2) - expected_mean**2
    np.testing.assert_allclose(mean, expected_mean, rtol=1e-9)
    np.testing.assert_allclose(var, expected_var, rtol=1e-8)


# Property-based: every family is finite and concave in eta over the whole admissible range.
_ETAS = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(eta=_ETAS, label=st.sampled_from([-1.0, 1.0]), count=st.integers(0, 10_000),
       target=st.floats(-1e3, 1e3))
def test_families_are_finite_and_concave_everywhere(eta, label, count, target):
    cases = [(LogisticFamily(), label), (ProbitFamily(), label),
             (binary_family("cloglog"), label),
             (PoissonFamily("log"), float(count)),
             (PoissonFamily("softplus"), float(count)), (GaussianFamily(2.0), target),
             (NegativeBinomialFamily(alpha=0.3), float(count))]
    for family, y in cases:
        y_arr, eta_arr = np.array([y]), np.array([eta])
        values = [family.loglik(y_arr, eta_arr), family.d1(y_arr, eta_arr),
                  family.d2(y_arr, eta_arr)]
        assert all(np.all(np.isfinite(v)) for v in values), (family, y, eta)
        assert values[2][0] <= 0.0  # concave: the Laplace precision is positive semi-definite


# --- negative binomial ----------------------------------------------------------------------

@pytest.mark.parametrize("alpha", [1e-3, 0.3, 2.0, 50.0])
def test_negative_binomial_loglik_is_scipy_nbinom(alpha):
    family = NegativeBinomialFamily(alpha=alpha)
    y = np.array([0.0, 1.0, 4.0, 17.0, 250.0])
    eta = np.array([-2.0, 0.1, 1.3, 2.9, 5.0])
    r, mu = 1.0 / alpha, np.exp(eta)
    np.testing.assert_allclose(family.loglik(y, eta), stats.nbinom.logpmf(y, r, r / (r + mu)),
                               rtol=1e-10)
    # the (n, S) layout of posterior draws
    np.testing.assert_allclose(family.loglik(y, np.column_stack([eta, eta]))[:, 1],
                               family.loglik(y, eta))


def test_negative_binomial_variance_and_draws():
    family = NegativeBinomialFamily(alpha=0.5)
    eta = np.full(200_000, np.log(3.0))
    draws = family.sample(eta, random_state=0)
    np.testing.assert_allclose(draws.mean(), 3.0, rtol=1e-2)
    np.testing.assert_allclose(draws.var(), 3.0 + 0.5 * 9.0, rtol=2e-2)  # mu + alpha mu^2
    # a known mean (posterior variance 0): the NB2 variance itself
    np.testing.assert_allclose(family.predictive_variance(np.array([3.0]), np.array([0.0])),
                               [7.5])


def test_negative_binomial_tends_to_poisson():
    y = np.array([0.0, 2.0, 5.0, 11.0])
    eta = np.array([-1.0, 0.5, 1.7, 2.4])
    poisson = PoissonFamily("log")
    nb = NegativeBinomialFamily(alpha=1e-7)
    for method in ("loglik", "d1", "d2"):
        np.testing.assert_allclose(getattr(nb, method)(y, eta), getattr(poisson, method)(y, eta),
                                   rtol=1e-5, atol=1e-6)


def test_resolve_family_recovers_the_overdispersion():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 2))
    mu = np.exp(X @ [0.4, -0.3] + 1.0)
    alpha = 0.5
    y = rng.negative_binomial(1 / alpha, 1 / (1 + alpha * mu)).astype(float)
    kwargs = dict(prior_prec=np.array([1.0, 1.0, 0.01]), fit_intercept=True)
    resolved = resolve_family(NegativeBinomialFamily(), X, y, np.ones(len(y)), **kwargs)
    assert isinstance(resolved.alpha, float) and not resolved.unresolved
    assert abs(resolved.alpha - alpha) < 0.05
    # Poisson data are not overdispersed: the Poisson limit
    y = rng.poisson(mu).astype(float)
    assert resolve_family(NegativeBinomialFamily(), X, y, np.ones(len(y)), **kwargs).alpha < 0.02
    # families with nothing to estimate pass through
    family = NegativeBinomialFamily(alpha=0.3)
    assert resolve_family(family, X, y, np.ones(len(y)), **kwargs) is family


def test_negative_binomial_moment_estimate_from_means():
    # the family's own part: alpha from the means of a pilot fit, no fitting inside
    mu = np.array([1.0, 2.0, 4.0, 8.0])
    y = mu + np.sqrt(mu + 0.5 * mu**2) * np.array([1.0, -1.0, 1.0, -1.0])
    family = NegativeBinomialFamily()
    assert family.pilot_family().name == "poisson"
    np.testing.assert_allclose(family.resolve(y, mu, np.ones(4)).alpha, 0.5)
    assert family.resolve(mu, mu, np.ones(4)).alpha == 1e-8  # not overdispersed
    assert NegativeBinomialFamily(alpha=2.0).resolve(y, mu, np.ones(4)).alpha == 2.0


def test_negative_binomial_needs_alpha_before_evaluating():
    family = NegativeBinomialFamily()
    assert family.unresolved
    with pytest.raises(ValueError, match="alpha='auto'.*estimated from data"):
        family.loglik(np.ones(2), np.zeros(2))
    for alpha in (0.0, -1.0, np.inf, "big"):
        with pytest.raises(ValueError, match="alpha must be"):
            NegativeBinomialFamily(alpha=alpha)


# --- registry and targets -------------------------------------------------------------------

def test_registry_builds_every_family_by_name():
    assert set(REGISTRY) == {"logistic", "probit", "poisson", "gaussian", "negative_binomial"}
    for name, cls in REGISTRY.items():
        family = make_family(name, link="softplus", noise_scale=2.0, alpha=0.4)
        assert type(family) is cls and family.name == name
    assert make_family("gaussian", noise_scale=2.0).noise_scale == 2.0
    assert make_family("negative_binomial", alpha=0.4).alpha == 0.4
    instance = PoissonFamily("softplus")
    assert make_family(instance, link="log") is instance
    assert repr(instance) == "PoissonFamily(link='softplus')"
    assert all(issubclass(cls, Family) for cls in REGISTRY.values())


@pytest.mark.parametrize("family, y, match", [
    (PoissonFamily(), [0, 2, -1], "Poisson targets are non-negative: y contains negative"),
    (PoissonFamily(), [0, np.nan], "NaN"),
    (NegativeBinomialFamily(0.5), [3, -2],
     "Negative binomial targets are non-negative: y contains neg"),
    (GaussianFamily(), [0.3, np.inf], "NaN or infinity"),
    (LogisticFamily(), [0, 1, 2], "Only binary classification.*3 classes"),
    (LogisticFamily(), [1, 1], "only one class \\(1\\).*two classes"),
    (LogisticFamily(), [0.0, np.nan], "NaN"),
])
def test_targets_are_validated_by_their_family(family, y, match):
    with pytest.raises(ValueError, match=match):
        family.fit_target(np.array(y))


def test_logistic_encoding():
    family = LogisticFamily()
    y_encoded, classes = family.fit_target(np.array(["b", "a", "b"]))
    np.testing.assert_array_equal(classes, ["a", "b"])
    np.testing.assert_array_equal(y_encoded, [1.0, -1.0, 1.0])
    # declared classes: a block with one class encodes against both
    y_encoded, classes = family.fit_target(np.array([2, 2]), classes=[7, 2])
    np.testing.assert_array_equal(classes, [2, 7])
    np.testing.assert_array_equal(y_encoded, [-1.0, -1.0])
    with pytest.raises(ValueError, match="not in classes_"):
        family.encode_target(np.array([2, 3]), classes)
    # evaluating a likelihood on one class: its label tells the side
    for label, sign in [(1, 1.0), (True, 1.0), (0, -1.0), (-1, -1.0)]:
        classes = family.check_classes([label, label], one_class_ok=True)
        np.testing.assert_array_equal(family.encode_target(np.array([label]), classes), [sign])
    with pytest.raises(ValueError, match="ambiguous"):
        family.check_classes(["yes"], one_class_ok=True)


@pytest.mark.parametrize("y", [
    [0, 1, 1, 0], [3, 7, 7], [-1, 1, 1], [True, False, True], [1.0, 0.0, 0.0], [-2.0, 5.0],
    np.array([3, 7, 3], dtype=np.uint8), np.array([0, 1], dtype=np.float32),
    [2**60, 2**61, 2**60],
])
def test_two_numeric_labels_match_the_full_checks(y):
    # the one-pass path for two numeric labels finds the classes and codes np.unique and
    # scikit-learn's checks would
    from skcoreset.families.binary import _two_numeric_labels
    y = np.asarray(y)
    fast = _two_numeric_labels(y)
    assert fast is not None
    classes = LogisticFamily.check_classes(y)
    assert fast[1].dtype == classes.dtype
    np.testing.assert_array_equal(fast[1], classes)
    np.testing.assert_array_equal(fast[0], LogisticFamily.encode_target(y, classes))
    encoded, fitted = LogisticFamily().fit_target(y)
    np.testing.assert_array_equal(fitted, classes)
    assert encoded.dtype == np.float64


@pytest.mark.parametrize("y, match", [
    ([0.5, 1.5], "Unknown label type"), ([0, 1, 2], "3 classes"), ([4, 4], "only one class"),
    ([0.0, np.nan, 1.0], "NaN"), ([0.0, np.inf], "infinity"),
    ([2.0**60, 2.0**70], "Unknown label type"),
])
def test_labels_the_one_pass_path_leaves_to_the_full_checks(y, match):
    from skcoreset.families.binary import _two_numeric_labels
    assert _two_numeric_labels(np.asarray(y)) is None
    with pytest.raises(ValueError, match=match):
        LogisticFamily().fit_target(np.asarray(y))


@pytest.mark.parametrize("v", [0.05, 0.3, 1.0, 4.0, 30.0, 400.0])
@pytest.mark.parametrize("m", [-3.0, -0.3, 0.5, 2.5])
def test_cloglog_expectations_are_accurate_at_every_width(m, v):
    family = binary_family("cloglog")
    y, mm, vv = np.array([1.0, -1.0]), np.array([m, m]), np.array([v, v])
    value, grad_m, grad_v = family.expected_loglik(y, mm, vv)
    # y = -1: log(1 - F) = -exp(eta), whose Gaussian expectation is log-normal; the panels
    # reach 9 sd, short of where exp(eta) N(m, v) peaks (v / sd = sqrt(v) sd) for wider ones
    if v <= 4.0:
        rate = np.exp(m + v / 2)
        np.testing.assert_allclose([value[1], grad_m[1], grad_v[1]],
                                   [-rate, -rate, -rate / 2], rtol=1e-10)
    # y = +1: log F against adaptive integration, with breaks where F turns
    sd = np.sqrt(v)
    expected = integrate.quad(
        lambda e: family.loglik(np.ones(1), np.array([e]))[0] * stats.norm.pdf(e, m, sd),
        m - 14 * sd, m + 14 * sd, points=sorted({-8.0, -2.0, 0.0, 2.0, 4.0} & set(
            np.clip([-8.0, -2.0, 0.0, 2.0, 4.0], m - 14 * sd, m + 14 * sd))),
        limit=2000, epsabs=1e-13, epsrel=1e-13)[0]
    np.testing.assert_allclose(value[0], expected, rtol=1e-10, atol=1e-13)
