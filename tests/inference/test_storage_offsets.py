"""Offsets (a known term of each row's linear predictor) travel with the rows of every
storage: the inference functions on a ``np.memmap`` and on dask chunks give the in-memory
result to rounding, for every family, and the in-memory result is statsmodels' GLM with
``offset=`` under a flat prior."""

import numpy as np
import pytest

from skcoreset._backend import DaskRows, InMemoryRows
from skcoreset._inference import laplace, log_joint
from skcoreset._inference.dispersion import estimate_dispersion
from skcoreset._inference.kl_proximal import kl_proximal
from skcoreset.families import (LogisticFamily, NegativeBinomialFamily, PoissonFamily,
                                ProbitFamily)

da = pytest.importorskip("dask.array")
sm = pytest.importorskip("statsmodels.api")

_N = 900
_CHUNK = 300  # three chunks


def _rows(kind, seed=0, alpha=0.4):
    """Rows with offsets and weights: counts (NB2 noise with ``alpha``) or ±1 labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(_N, 3))
    offset = rng.normal(0.0, 0.5, _N)
    eta = X @ [0.4, -0.3, 0.2] + 0.3 + offset
    if kind == "binary":
        y = np.where(rng.random(_N) < 1 / (1 + np.exp(-eta)), 1.0, -1.0)
    else:
        mu = np.exp(eta)
        y = rng.negative_binomial(1 / alpha, 1 / (1 + alpha * mu)).astype(float)
    return X, y, rng.uniform(0.5, 2.0, _N), offset


def _storages(X, y, w, offset, tmp_path):
    """The same rows in memory, in a ``np.memmap`` and in three dask chunks."""
    mapped = np.memmap(tmp_path / "X.dat", dtype=np.float64, mode="w+", shape=X.shape)
    mapped[:] = X
    mapped.flush()
    on_dask = DaskRows.from_arrays(*(da.from_array(a, chunks=_CHUNK) for a in (X, y, w)),
                                   offset=da.from_array(offset, chunks=_CHUNK))
    return {"memory": InMemoryRows(X, y, w, offset),
            "memmap": InMemoryRows(mapped, y, w, offset), "dask": on_dask}


_PRIOR = np.array([1.0, 1.0, 1.0, 0.01])
_FAMILIES = {"negative_binomial": NegativeBinomialFamily(alpha=0.4),
             "poisson": PoissonFamily(), "logistic": LogisticFamily(),
             "probit": ProbitFamily()}


@pytest.mark.parametrize("name", list(_FAMILIES))
def test_laplace_with_offsets_is_the_same_on_every_storage(name, tmp_path):
    family = _FAMILIES[name]
    rows = _storages(*_rows("binary" if family.binary else "counts"), tmp_path)
    fits = {kind: laplace(storage, None, family, sample_weight=None, prior_prec=_PRIOR,
                          fit_intercept=True) for kind, storage in rows.items()}
    reference = fits.pop("memory")
    for fit in fits.values():
        np.testing.assert_allclose(fit.posterior.mean, reference.posterior.mean, rtol=1e-10)
        np.testing.assert_allclose(fit.posterior.precision, reference.posterior.precision,
                                   rtol=1e-10)
        np.testing.assert_allclose(fit.log_evidence, reference.log_evidence, rtol=1e-12)
    # the offsets count: without them the evidence drops
    without = laplace(rows["memory"].X, rows["memory"].y, family,
                      sample_weight=rows["memory"].sample_weight, prior_prec=_PRIOR,
                      fit_intercept=True)
    assert without.log_evidence < reference.log_evidence - 5.0


@pytest.mark.parametrize("name, sm_family", [
    ("poisson", "Poisson"), ("logistic", "Binomial"), ("negative_binomial", None)])
def test_offsets_are_statsmodels_offsets(name, sm_family, tmp_path):
    """The mode on dask chunks under a flat prior is statsmodels' GLM fit with
    ``offset=`` and ``freq_weights=`` (the negative binomial with alpha fixed: GLM's
    ``NegativeBinomial(alpha)`` family), and its precision the observed information (by
    Newton's method: IRLS reports the expected one, which differs for the negative
    binomial's log link)."""
    family = _FAMILIES[name]
    X, y, w, offset = _rows("binary" if family.binary else "counts")
    glm_family = (sm.families.NegativeBinomial(alpha=0.4) if sm_family is None
                  else getattr(sm.families, sm_family)())
    target = (y > 0).astype(float) if family.binary else y
    glm = sm.GLM(target, sm.add_constant(X, prepend=False), family=glm_family,
                 offset=offset, freq_weights=w).fit(method="newton", tol=1e-12,
                                                    disp=0)
    fit = laplace(_storages(X, y, w, offset, tmp_path)["dask"], None, family,
                  sample_weight=None, prior_prec=np.full(4, 1e-10), fit_intercept=True)
    np.testing.assert_allclose(fit.posterior.mean, glm.params, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fit.posterior.std, glm.bse, rtol=1e-5)


def test_kl_proximal_dispersion_and_log_joint_take_the_offsets_of_chunks(tmp_path):
    family = _FAMILIES["negative_binomial"]
    rows = _storages(*_rows("counts"), tmp_path)
    memory, chunked = rows["memory"], rows["dask"]
    vi = kl_proximal(memory.X, memory.y, family, sample_weight=memory.sample_weight,
                     prior_prec=_PRIOR, fit_intercept=True, offset=memory.offset)
    vi_chunked = kl_proximal(chunked, None, family, sample_weight=None, prior_prec=_PRIOR,
                             fit_intercept=True)
    np.testing.assert_allclose(vi_chunked.posterior.mean, vi.posterior.mean, rtol=1e-10)
    np.testing.assert_allclose(vi_chunked.elbo, vi.elbo, rtol=1e-12)
    estimates = [estimate_dispersion(NegativeBinomialFamily(), storage, None, None,
                                     prior_prec=_PRIOR, fit_intercept=True, alpha0=1.0)
                 for storage in rows.values()]
    assert 0.2 < estimates[0].alpha < 0.8  # NB2 counts of alpha 0.4
    for estimate in estimates[1:]:
        np.testing.assert_allclose(estimate.alpha, estimates[0].alpha, rtol=1e-10)
        np.testing.assert_allclose(estimate.log_alpha_sd, estimates[0].log_alpha_sd,
                                   rtol=1e-8)
    thetas = vi.posterior.sample(5, random_state=0)
    direct = log_joint(memory, family, thetas, _PRIOR, True)
    for storage in (rows["memmap"], chunked):
        np.testing.assert_allclose(log_joint(storage, family, thetas, _PRIOR, True), direct,
                                   rtol=1e-12)


def test_offsets_travel_with_drawn_and_thinned_rows(tmp_path):
    """A subsample and every k-th row keep their rows' offsets, in memory and on dask."""
    X, y, w, offset = _rows("counts")
    for storage in _storages(X, y, w, offset, tmp_path).values():
        part = storage.subsample(50, np.random.RandomState(0))
        np.testing.assert_array_equal(part.offset, offset[part.indices])
        thinned = storage.every(7, gather_rows=_N)
        np.testing.assert_array_equal(thinned.offset, offset[::7])


def test_offsets_of_dask_rows_are_checked():
    X, y, w, offset = _rows("counts")
    X, y = da.from_array(X, chunks=_CHUNK), da.from_array(y, chunks=_CHUNK)
    with pytest.raises(ValueError, match=r"offset must have shape \(900,\), got \(899,\)"):
        DaskRows.from_arrays(X, y, offset=offset[:-1])
    offset[400] = np.nan
    rows = DaskRows.from_arrays(X, y, offset=offset)
    with pytest.raises(ValueError, match="offset"):
        laplace(rows, None, PoissonFamily(), sample_weight=None, prior_prec=_PRIOR,
                fit_intercept=True)


def test_a_function_that_ignores_offsets_is_not_handed_them():
    """Rows with offsets hand them to every function of rows: one that does not take them
    fails, rather than computing without them."""
    X, y, w, offset = _rows("counts")

    def weight_only(X, y, w):
        return (w.sum(),)

    assert InMemoryRows(X, y, w).sum(weight_only) == (w.sum(),)
    with pytest.raises(TypeError, match="offset"):
        InMemoryRows(X, y, w, offset).sum(weight_only)
