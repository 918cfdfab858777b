"""Hostile inputs (issue 11, "no silent wrong answers").

Every public coreset constructor meets every hostile input and must either raise a
``ValueError``/``TypeError`` whose message names the problem, or return a non-empty coreset
with finite positive weights whose total matches the data's total weight within the
constructor's stated tolerance (``TOTAL_RTOL``).
"""

import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skcoreset import (BayesianLogisticRegression, FrankWolfeCoreset, GIGACoreset,
                       SensitivityCoreset, SparseVICoreset, StreamingCoreset, UniformCoreset)
from skcoreset.coreset._model import resolve_model
from skcoreset.coreset._subset import unpack_weighted_subset

CONSTRUCTORS = [
    UniformCoreset(M=8, random_state=0),
    SensitivityCoreset(M=8, n_clusters=2, random_state=0),
    GIGACoreset(M=8, projection_dim=20, random_state=0),
    FrankWolfeCoreset(M=8, projection_dim=20, random_state=0),
    SparseVICoreset(M=3, n_draws=10, n_iter_opt=3, random_state=0),
    StreamingCoreset(UniformCoreset(M=8), block_size=20, random_state=0),
]
IDS = [type(c).__name__ for c in CONSTRUCTORS]

# Tolerance on sum(coreset weights) / sum(data weights), as |log(ratio)|. Uniform subsets
# rescale to the exact total (also through merge-reduce); sensitivity sampling is unbiased
# but random (M = 8 draws); the Hilbert and sparse-VI constructors fit the log-likelihood,
# not the count, so their total is only of the right order of magnitude.
TOTAL_LOG_TOL = {"UniformCoreset": 1e-9, "StreamingCoreset": 1e-9,
                 "SensitivityCoreset": np.log(3.0), "GIGACoreset": np.log(10.0),
                 "FrankWolfeCoreset": np.log(10.0), "SparseVICoreset": np.log(10.0)}


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y, None


def _with(X=None, y=None, w=None, **changes):
    def build():
        X0, y0, w0 = _data()
        X1 = X0.copy() if X is None else X(X0.copy())
        y1 = y0.copy() if y is None else y(y0.copy())
        w1 = w0 if w is None else w(len(y0))
        return X1, y1, w1, changes
    return build


def _set(array, position, value):
    array = np.asarray(array, dtype=float)
    array[position] = value
    return array


# name -> (inputs, regex the message must match when the constructor refuses them)
CASES = {
    "nan_in_X": (_with(X=lambda X: _set(X, (0, 0), np.nan)), "NaN"),
    "inf_in_X": (_with(X=lambda X: _set(X, (3, 1), np.inf)), "infinity"),
    "nan_in_y": (_with(y=lambda y: _set(y, 0, np.nan)), "NaN"),
    "inf_in_y": (_with(y=lambda y: _set(y, 0, np.inf)), "infinity|NaN"),
    "nan_in_weights": (_with(w=lambda n: _set(np.ones(n), 2, np.nan)), "sample_weight.*NaN"),
    "inf_in_weights": (_with(w=lambda n: _set(np.ones(n), 2, np.inf)),
                       "sample_weight.*infinity"),
    "negative_weights": (_with(w=lambda n: _set(np.ones(n), 2, -1.0)), "negative"),
    "zero_sum_weights": (_with(w=np.zeros), "zero everywhere"),
    "overflowing_weights": (_with(w=lambda n: np.full(n, 1e307)), "sums to infinity"),
    "one_class": (_with(y=np.zeros_like), "two classes"),
    "three_string_labels": (_with(y=lambda y: np.array(["a", "b", "c", "d"] * 10)),
                            "cannot infer"),
    "three_classes_logistic": (_with(y=lambda y: np.arange(40) % 3, model="logistic"),
                               "two classes"),
    "three_classes_auto": (_with(y=lambda y: np.arange(40) % 3),
                           "logistic model|class labels"),
    "empty": (_with(X=lambda X: X[:0], y=lambda y: y[:0]), "0 sample"),
    "single_row": (_with(X=lambda X: X[:1], y=lambda y: y[:1]), "two classes|1 sample"),
    "M_zero": (_with(M=0), "'M' parameter|size M must be"),
    "wrong_length_y": (_with(y=lambda y: y[:-3]), "inconsistent numbers of samples"),
    "X_1d": (_with(X=lambda X: X[:, 0]), "2D array"),
    "duplicated_rows": (_with(X=lambda X: np.repeat(X[:20], 2, axis=0)), None),
    "huge_X": (_with(X=lambda X: X * 1e8), "Standardise"),
    "constant_columns": (_with(X=lambda X: _set(X, (slice(None), slice(1, 3)), 5.0)), None),
    "rare_class": (_with(y=lambda y: (np.arange(40) == 7).astype(int)), None),
    "weights_with_zeros": (_with(w=lambda n: (np.arange(n) % 2).astype(float) * 3.0), None),
    "tiny_weights": (_with(w=lambda n: np.full(n, 1e-200)), None),
    "subnormal_weights": (_with(w=lambda n: np.full(n, 1e-320)), None),
    "huge_weights": (_with(w=lambda n: np.full(n, 1e296)), "overflow"),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("coreset", CONSTRUCTORS, ids=IDS)
def test_every_constructor_refuses_clearly_or_returns_a_valid_coreset(coreset, case):
    build, message = CASES[case]
    X, y, w, changes = build()
    if isinstance(coreset, StreamingCoreset):  # its likelihood is its base constructor's
        changes = {f"base_coreset__{key}": value for key, value in changes.items()}
    estimator = clone(coreset).set_params(**changes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # model="auto" notes (tested below)
        try:
            fitted = estimator.fit(X, y, sample_weight=w)
        except (ValueError, TypeError) as error:
            assert message is not None and error.args, (case, repr(error))
            assert re.search(message, str(error), re.IGNORECASE), (case, str(error))
            return
    weights = fitted.sample_weight_
    assert len(fitted.sample_indices_) > 0 and len(weights) == len(fitted.sample_indices_)
    assert np.all(np.isfinite(weights)) and np.all(weights > 0), case
    total = len(y) if w is None else np.sum(w)
    log_ratio = abs(np.log(weights.sum() / total))
    tolerance = TOTAL_LOG_TOL[type(coreset).__name__]
    if case == "subnormal_weights":  # 1e-320 carries about 10 significant bits
        tolerance = max(tolerance, 1e-3)
    assert log_ratio <= tolerance, (case, weights.sum(), total)
    if getattr(fitted, "model_", None) == "logistic" and type(coreset) in (
            UniformCoreset, SensitivityCoreset):
        assert len(np.unique(np.asarray(y)[fitted.sample_indices_])) == 2  # both classes kept


@pytest.mark.parametrize("coreset", CONSTRUCTORS, ids=IDS)
def test_dataframes_reordered_or_filtered_after_transform_keep_their_weights(coreset):
    pd = pytest.importorskip("pandas")
    X, y, _ = _data(n=60)
    frame = pd.DataFrame(X, columns=["a", "b", "c"], index=np.arange(60) * 10 + 5)
    fitted = clone(coreset)
    out = fitted.fit_transform(frame, y)
    by_label = dict(zip(frame.index[fitted.sample_indices_], fitted.sample_weight_))
    for changed in [out.sample(frac=1.0, random_state=0), out.sort_values("b"), out.head(3),
                    out.iloc[::-2], pd.concat([out.tail(2), out.head(2)]),
                    pd.concat([out, out.head(1)])]:
        X_fit, y_fit, w_fit = unpack_weighted_subset(changed, y, None)
        np.testing.assert_array_equal(w_fit, [by_label[label] for label in changed.index])
        np.testing.assert_array_equal(y_fit, y[changed.index // 10])
    shuffled = out.sample(frac=1.0, random_state=1)
    clf = BayesianLogisticRegression().fit(shuffled, pd.Series(y, index=frame.index))
    ref = BayesianLogisticRegression().fit(
        shuffled.to_numpy(), y[shuffled.index // 10],
        sample_weight=[by_label[label] for label in shuffled.index])
    np.testing.assert_allclose(clf.coef_, ref.coef_)
    with pytest.raises(ValueError, match="not rows of the coreset"):
        BayesianLogisticRegression().fit(out.reset_index(drop=True).iloc[::-1], y)


def test_model_auto_warns_where_the_target_is_ambiguous():
    with pytest.warns(UserWarning, match="may be class labels"):
        assert resolve_model("auto", np.arange(30) % 3) == "poisson"
    with pytest.warns(UserWarning, match="non-negative, non-integer"):
        assert resolve_model("auto", np.linspace(0.5, 3.0, 30)) == "gaussian"
    with pytest.warns(UserWarning, match="first block"):
        assert resolve_model("auto", np.arange(30) % 2, first_block=True) == "logistic"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve_model("auto", np.arange(30) % 2) == "logistic"
        assert resolve_model("auto", np.arange(30)) == "poisson"  # many counts
        assert resolve_model("auto", np.linspace(-1.0, 3.0, 30)) == "gaussian"
        assert resolve_model("auto", np.array(["a", "b"] * 5), first_block=True) == "logistic"
        assert resolve_model("poisson", np.arange(30) % 3) == "poisson"
    X, y, _ = _data()
    with pytest.warns(UserWarning, match="may be class labels"):
        assert UniformCoreset(M=5).fit(X, np.arange(40) % 3).model_ == "poisson"


@pytest.mark.parametrize("constructor", [UniformCoreset, SensitivityCoreset])
def test_rare_class_is_kept_or_the_error_names_the_fix(constructor):
    X, _, _ = _data(n=200)
    y = (np.arange(200) == 17).astype(int)  # one positive row
    for seed in range(10):
        fitted = constructor(M=5, random_state=seed).fit(X, y)
        assert 17 in fitted.sample_indices_
        clf = BayesianLogisticRegression().fit(X[fitted.sample_indices_],
                                               y[fitted.sample_indices_],
                                               sample_weight=fitted.sample_weight_)
        assert list(clf.classes_) == [0, 1]
    with pytest.raises(ValueError, match="only one class.*stratify=True"):
        for seed in range(10):  # an unstratified draw of 5 rows misses the positive
            constructor(M=5, stratify=False, random_state=seed).fit(X, y)
    with pytest.raises(ValueError, match="M >= 2"):
        constructor(M=1, random_state=0).fit(X, y)


def test_stratified_sensitivity_coreset_is_unbiased():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] + rng.normal(size=300) > 1.5).astype(int)
    values = X[:, 1] ** 2 + y  # any per-row quantity: the weighted sum must be unbiased
    estimates = []
    for seed in range(200):
        fitted = SensitivityCoreset(M=20, random_state=seed).fit(X, y)
        estimates.append(fitted.sample_weight_ @ values[fitted.sample_indices_])
    standard_error = np.std(estimates) / np.sqrt(len(estimates))
    assert abs(np.mean(estimates) - values.sum()) < 4 * standard_error


def test_sensitivity_coreset_names_overflowing_inputs():
    X, y, _ = _data()
    with pytest.raises(ValueError, match="Standardise X"):
        SensitivityCoreset(M=5).fit(X * 1e200, y)
    with pytest.raises(ValueError, match="sums to infinity"):
        SensitivityCoreset(M=5).fit(X, y, sample_weight=np.full(len(y), 1e307))


_BAD_WEIGHTS = {"nan": (np.nan, "NaN or infinity in chunk 2 \\(rows 40 to 59\\)"),
                "inf": (np.inf, "NaN or infinity in chunk 2 \\(rows 40 to 59\\)"),
                "negative": (-1.0, "negative values in chunk 2 \\(rows 40 to 59\\)")}


@pytest.mark.parametrize("bad", _BAD_WEIGHTS)
@pytest.mark.parametrize("coreset", CONSTRUCTORS, ids=IDS)
def test_dask_weights_are_checked_per_chunk_like_in_memory(coreset, bad):
    da = pytest.importorskip("dask.array")
    X, y, _ = _data(n=80)
    value, message = _BAD_WEIGHTS[bad]
    w = np.ones(80)
    w[45] = value
    dask_input = (da.from_array(X, chunks=(20, 3)), da.from_array(y, chunks=20))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(ValueError, match=message):
            clone(coreset).fit(*dask_input, sample_weight=da.from_array(w, chunks=20))
        with pytest.raises(ValueError, match=message.split(" in chunk")[0]):
            clone(coreset).fit(X, y, sample_weight=w)  # the same check in memory
        for total, message in ((np.zeros(80), "zero everywhere"),
                               (np.full(80, 1e307), "sums to infinity")):
            with pytest.raises(ValueError, match=message):
                clone(coreset).fit(*dask_input, sample_weight=da.from_array(total, chunks=20))


@pytest.mark.parametrize("change", [{"base_coreset__M": 5}, {"base_coreset": GIGACoreset(M=8)},
                                    {"base_coreset__model": "poisson"}, {"block_size": 7}])
def test_stream_refuses_changed_settings_between_partial_fit_calls(change):
    X, y, _ = _data(n=80)
    stream = StreamingCoreset(UniformCoreset(M=20), block_size=20, random_state=0)
    stream.partial_fit(X[:40], y[:40], classes=[0, 1])
    before = (stream.sample_indices_.copy(), stream.n_samples_seen_)
    stream.set_params(**change)
    with pytest.raises(ValueError, match=f"{next(iter(change))} from .*restore them"):
        stream.partial_fit(X[40:], y[40:])
    np.testing.assert_array_equal(stream.sample_indices_, before[0])
    assert stream.n_samples_seen_ == before[1]
    # a new fit starts a new stream with the new settings; partial_fit then continues it
    stream.fit(X[:40], y[:40]).partial_fit(X[40:], y[40:])
    assert stream.n_samples_seen_ == 80
    # unchanged settings (set to equal values) continue the stream
    stream.set_params(verbose=0, n_jobs=1).partial_fit(X[:20], y[:20])
    assert stream.n_samples_seen_ == 100


@pytest.mark.parametrize("coreset", [
    GIGACoreset(M=20, projection_dim=50, model="poisson", random_state=0),
    StreamingCoreset(GIGACoreset(M=20, projection_dim=50, model="poisson"), block_size=100,
                     random_state=0),
], ids=["giga", "streaming_giga"])
def test_a_coreset_keeping_little_of_the_total_weight_warns(coreset):
    # Counts scaled by 1e6 are no Poisson counts: the posterior is ~1e-5 sd wide and the
    # rows' projected log-likelihoods, dominated by their linear terms, cancel in the sum to
    # 1 part in ~1e4; no 20 rows align with it, and the optimal scaling (Campbell &
    # Broderick 2018, eq. 27) shrinks the weights (float64 vectors give the same result).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    counts = rng.poisson(np.exp(X @ [0.3, -0.2, 0.1] + 0.5))
    with pytest.warns(UserWarning, match="sum to .*% of the data's total weight.*model"):
        fitted = clone(coreset).fit(X, counts * 1e6)
    assert fitted.sample_weight_.sum() < 0.5 * len(counts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fitted = clone(coreset).fit(X, counts)
    assert abs(np.log(fitted.sample_weight_.sum() / len(counts))) < 0.1
    if isinstance(coreset, StreamingCoreset):  # also at the end of a partial_fit
        stream = clone(coreset).partial_fit(X[:200], counts[:200] * 1e6)
        with pytest.warns(UserWarning, match="of the data's total weight"):
            stream.partial_fit(X[200:], counts[200:] * 1e6)


def test_a_budget_of_draws_beyond_memory_is_refused_clearly():
    X, y, _ = _data(n=50)
    with pytest.raises(ValueError, match="M=10000000000 multinomial draws would need at least"):
        SensitivityCoreset(M=10**10).fit(X, y)
    for coreset in (UniformCoreset(M=10**10), GIGACoreset(M=10**10, projection_dim=20)):
        fitted = coreset.fit(X, y)  # budgets beyond N keep at most every row
        assert len(fitted.sample_indices_) <= 50
