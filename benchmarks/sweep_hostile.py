"""Hostile-input, fault and interrupt sweep over every public estimator and constructor.

Run by hand: ``python benchmarks/sweep_hostile.py [--quick]``. Prints, per sweep, the number
of cases and of

* silent wrong answers: a fit that accepted a bad input (NaN, a boolean or a string for a
  number) or returned non-finite output, an empty coreset, or a coreset whose total weight
  is off by more than 10x without a warning saying so;
* unclear errors: a ValueError/TypeError whose message describes the implementation
  (numpy's or scikit-learn's internals) instead of the problem, or one that does not name
  the bad input;
* hangs: a case still running after ``--timeout`` seconds;
* crashes: any other exception (MemoryError, IndexError, LinAlgError, ...);
* half-updated objects (interrupt sweep): a refit or ``partial_fit`` interrupted by a
  ``KeyboardInterrupt`` at one of several points that left the object different from
  before.

The targets are 0 everywhere. Cases that miss them are listed after the table.
"""

import argparse
import copy
import itertools
import re
import signal
import time
import warnings

import joblib
import numpy as np
from sklearn.base import clone

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, BayesianProbitRegression,
                       FrankWolfeCoreset, GIGACoreset, QuasiNewtonCoreset,
                       SensitivityCoreset, SparseVICoreset, StreamingCoreset, UniformCoreset)
from skcoreset.multiclass import BayesianOneVsRestClassifier
from skcoreset.pipeline import Pipeline

from skcoreset._testing import INTERNAL_MESSAGE as INTERNAL, Interrupt

_MCMC = dict(n_draws=40, n_burnin=10, thin=1, random_state=0)
ESTIMATORS = {
    "Uniform": UniformCoreset(M=8, random_state=0),
    "Sensitivity": SensitivityCoreset(M=8, n_clusters=2, random_state=0),
    "GIGA": GIGACoreset(M=8, projection_dim=20, random_state=0),
    "FrankWolfe": FrankWolfeCoreset(M=8, projection_dim=20, random_state=0),
    "SparseVI": SparseVICoreset(M=3, n_draws=10, n_iter_opt=3, random_state=0),
    "QuasiNewton": QuasiNewtonCoreset(M=8, n_draws=20, max_iter=3, random_state=0),
    "Streaming(Uniform)": StreamingCoreset(UniformCoreset(M=8), block_size=15, random_state=0),
    "Streaming(GIGA)": StreamingCoreset(GIGACoreset(M=8, projection_dim=20), block_size=15,
                                        random_state=0),
    "Logistic(laplace)": BayesianLogisticRegression(),
    "Logistic(kl_proximal)": BayesianLogisticRegression(method="kl_proximal"),
    "Logistic(pass_glm)": BayesianLogisticRegression(method="pass_glm"),
    "Logistic(mcmc)": BayesianLogisticRegression(method="mcmc", **_MCMC),
    "Probit(laplace)": BayesianProbitRegression(),
    "Probit(mcmc)": BayesianProbitRegression(method="mcmc", **_MCMC),
    "Poisson(laplace)": BayesianPoissonRegression(),
    "Poisson(pass_glm)": BayesianPoissonRegression(method="pass_glm"),
    "Poisson(mcmc)": BayesianPoissonRegression(method="mcmc", **_MCMC),
    "NegativeBinomial": BayesianNegativeBinomialRegression(),
    "OneVsRest": BayesianOneVsRestClassifier(),
}
COUNTS = {"Poisson(laplace)", "Poisson(pass_glm)", "Poisson(mcmc)", "NegativeBinomial"}


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def _data(name, n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    eta = X @ np.linspace(1.0, -0.5, d)
    y = rng.poisson(np.exp(0.5 * eta)) if name in COUNTS else (eta + rng.logistic(size=n) > 0)
    return X, y.astype(int)


def _set(array, index, value):
    array = np.array(array, dtype=float)
    array[index] = value
    return array


# name -> (change of (X, y, w), regex a refusal must match, whether a fit is a silent error)
DATA_CASES = {
    "nan_X": (lambda X, y, w: (_set(X, (2, 1), np.nan), y, w), "NaN|finite", True),
    "inf_X": (lambda X, y, w: (_set(X, (5, 0), np.inf), y, w), "infinit|finite", True),
    "nan_y": (lambda X, y, w: (X, _set(y, 3, np.nan), w), "NaN|finite", True),
    "inf_y": (lambda X, y, w: (X, _set(y, 3, np.inf), w), "NaN|infinit|finite", True),
    "nan_w": (lambda X, y, w: (X, y, _set(np.ones(len(y)), 4, np.nan)), "sample_weight", True),
    "inf_w": (lambda X, y, w: (X, y, _set(np.ones(len(y)), 4, np.inf)), "sample_weight", True),
    "negative_w": (lambda X, y, w: (X, y, _set(np.ones(len(y)), 4, -1)), "negative", True),
    "zero_w": (lambda X, y, w: (X, y, np.zeros(len(y))), "zero everywhere", True),
    "overflowing_w": (lambda X, y, w: (X, y, np.full(len(y), 1e307)), "infinity", True),
    "tiny_w": (lambda X, y, w: (X, y, np.full(len(y), 1e-200)), ".", False),
    "subnormal_w": (lambda X, y, w: (X, y, np.full(len(y), 1e-320)), ".", False),
    "huge_w": (lambda X, y, w: (X, y, np.full(len(y), 1e250)), "overflow|weight", False),
    "half_zero_w": (lambda X, y, w: (X, y, (np.arange(len(y)) % 2) * 3.0), ".", False),
    "huge_X": (lambda X, y, w: (X * 1e8, y, w), "scale|Standardise|overflow", False),
    "giant_X": (lambda X, y, w: (X * 1e200, y, w), "scale|Standardise|overflow", False),
    "tiny_X": (lambda X, y, w: (X * 1e-200, y, w), ".", False),
    "constant_X": (lambda X, y, w: (np.ones_like(X), y, w), ".", False),
    "duplicated_rows": (lambda X, y, w: (np.repeat(X[:20], 2, 0), np.repeat(y[:20], 2), w),
                        ".", False),
    "one_class": (lambda X, y, w: (X, np.zeros_like(y), w), "class", False),
    "single_row": (lambda X, y, w: (X[:1], y[:1], w), "class|sample", False),
    "empty": (lambda X, y, w: (X[:0], y[:0], w), "0 sample|empty", True),
    "no_feature": (lambda X, y, w: (X[:, :0], y, w), "0 feature", True),
    "wrong_length_y": (lambda X, y, w: (X, y[:-2], w), "inconsistent|samples", True),
    "X_1d": (lambda X, y, w: (X[:, 0], y, w), "2D|2-D", True),
    "string_y": (lambda X, y, w: (X, np.array(["a", "b", "c", "d"] * 10), w),
                 "label|class|cannot infer|numeric|counts|could not convert", False),
    "scaled_counts": (lambda X, y, w: (X, y * 1e6, w), ".", False),
}
PARAM_VALUES = {"bool_true": True, "bool_false": False, "string": "1", "nan": np.nan,
                "negative": -1}


def _classify(run, regex, must_refuse):
    """One case: 'ok', or the kind of failure and a short description."""
    signal.alarm(TIMEOUT)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fitted, X, y, w = run()
    except Hang:
        return "hang", "timeout"
    except (ValueError, TypeError) as error:
        message = str(error)
        if not message or INTERNAL.search(message) or not re.search(regex, message,
                                                                    re.IGNORECASE):
            return "unclear", message[:160]
        return "ok", ""
    except BaseException as error:  # noqa: B902 - a crash of any kind is what is counted
        return "crash", f"{type(error).__name__}: {str(error)[:120]}"
    finally:
        signal.alarm(0)
    if must_refuse:
        return "silent", "accepted"
    return _check_output(fitted, X, y, w, caught)


def _check_output(fitted, X, y, w, caught):
    told = any("of the data's total weight" in str(c.message) or "uniform coreset" in str(
        c.message) for c in caught)
    if hasattr(fitted, "sample_weight_"):
        weights = fitted.sample_weight_
        if len(weights) == 0:
            return "silent", "empty coreset"
        if not (np.all(np.isfinite(weights)) and np.all(weights > 0)):
            return "silent", "non-finite or non-positive weights"
        total = len(y) if w is None else float(np.sum(w))
        ratio = weights.sum() / total
        if not (0.1 <= ratio <= 10.0 or (ratio < 0.5 and told)):
            return "silent", f"total weight ratio {ratio:.3g} without a warning"
        return "ok", ""
    rows = np.asarray(X, dtype=float)[:5]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = (fitted.predict_proba(rows, return_std=True) if hasattr(fitted, "predict_proba")
               else fitted.predict(rows, return_std=True))
    if not all(np.all(np.isfinite(part)) for part in out):
        return "silent", "non-finite predictions"
    return "ok", ""


def hostile_sweep(names):
    results = []
    for name in names:
        for case, (change, regex, must_refuse) in DATA_CASES.items():
            def run(name=name, change=change):
                X, y, w = change(*_data(name), None)
                return clone(ESTIMATORS[name]).fit(X, y, sample_weight=w), X, y, w
            results.append((name, case, *_classify(run, regex, must_refuse)))
        est = ESTIMATORS[name]
        numeric = [key for key, value in est.get_params(deep=False).items()
                   if isinstance(value, (int, float)) and not isinstance(value, bool)
                   and key not in ("verbose", "random_state", "n_jobs")]
        for param, (label, value) in itertools.product(numeric, PARAM_VALUES.items()):
            def run(name=name, param=param, value=value):
                X, y = _data(name)
                return clone(ESTIMATORS[name]).set_params(**{param: value}).fit(X, y), X, y, None
            results.append((name, f"{param}={label}", *_classify(run, param, True)))
    return results


def dask_sweep(names):
    import dask.array as da

    results = []
    for name in names:
        if "(" in name and not name.startswith("Streaming") or name in COUNTS or \
                name == "OneVsRest" or name.startswith("Logistic"):
            continue  # estimators take dask arrays with pass_glm only (covered in tests)
        for case, value, regex in (("nan_w", np.nan, "chunk"), ("inf_w", np.inf, "chunk"),
                                   ("negative_w", -1.0, "chunk"), ("zero_w", 0.0, "zero")):
            def run(name=name, value=value, case=case):
                X, y = _data(name, n=80)
                w = np.zeros(80) if case == "zero_w" else _set(np.ones(80), 45, value)
                fitted = clone(ESTIMATORS[name]).fit(
                    da.from_array(X, chunks=(20, 3)), da.from_array(y, chunks=20),
                    sample_weight=da.from_array(w, chunks=20))
                return fitted, X, y, w
            results.append((name, f"dask_{case}", *_classify(run, regex, True)))
    return results


def _points(obj, method, *args, n_points):
    """Call numbers spread over ``obj.method(*args)``, counted on a warm copy."""
    getattr(copy.deepcopy(obj), method)(*args)  # first calls fill caches
    run = getattr(copy.deepcopy(obj), method)
    with Interrupt() as counter:
        run(*args)
    return np.unique(np.linspace(1, counter.calls, n_points).astype(int)).tolist()


def interrupt_sweep(names, n_points):
    """Interrupted refits (new data, another number of features) and partial_fit calls."""
    results = []
    targets = {name: ESTIMATORS[name] for name in names}
    targets["Pipeline"] = Pipeline([("coreset", UniformCoreset(M=10, random_state=0)),
                                    ("clf", BayesianLogisticRegression())])
    for name, template in targets.items():
        X_old, y_old = _data(name, n=60)
        X_new, y_new = _data(name, n=90, d=4, seed=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for fitted in (clone(template), clone(template).fit(X_old, y_old)):
                kind = "refit" if hasattr(fitted, "n_features_in_") else "first fit"
                before = joblib.hash(fitted)
                for at in _points(fitted, "fit", X_new, y_new, n_points=n_points):
                    obj = copy.deepcopy(fitted)
                    try:
                        with Interrupt(at):
                            obj.fit(X_new, y_new)
                        outcome = "not interrupted"
                    except KeyboardInterrupt:
                        outcome = "ok" if joblib.hash(obj) == before else "half-updated"
                    results.append((name, f"{kind} at call {at}", outcome, ""))
    streams = {"Streaming(Uniform)": ESTIMATORS["Streaming(Uniform)"],
               "Streaming(GIGA)": ESTIMATORS["Streaming(GIGA)"],
               "Logistic(pass_glm)": ESTIMATORS["Logistic(pass_glm)"]}
    for name, template in streams.items():
        X, y = _data(name, n=90)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            started = clone(template).partial_fit(X[:30], y[:30], classes=[0, 1])
            reference = copy.deepcopy(started).partial_fit(X[30:60], y[30:60])
            for at in _points(started, "partial_fit", X[30:60], y[30:60],
                              n_points=n_points):
                stream = copy.deepcopy(started)
                try:
                    with Interrupt(at):
                        stream.partial_fit(X[30:60], y[30:60])
                except KeyboardInterrupt:
                    pass
                ok = joblib.hash(stream) == joblib.hash(started)
                stream.partial_fit(X[30:60], y[30:60])  # re-send the block
                ok = ok and joblib.hash(stream) == joblib.hash(reference)
                results.append((name, f"partial_fit at call {at}",
                                "ok" if ok else "half-updated", ""))
    return results


def _table(title, results):
    kinds = ["silent", "unclear", "hang", "crash", "half-updated", "not interrupted"]
    counts = {kind: sum(r[2] == kind for r in results) for kind in kinds}
    print(f"{title:<24}{len(results):>7}" + "".join(f"{counts[k]:>9}" for k in kinds[:5]))
    return [r for r in results if r[2] != "ok"]


def main():
    global TIMEOUT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer estimators and points")
    parser.add_argument("--timeout", type=int, default=60, help="seconds before a hang")
    args = parser.parse_args()
    TIMEOUT = args.timeout
    signal.signal(signal.SIGALRM, _alarm)
    names = list(ESTIMATORS)
    if args.quick:
        names = ["Uniform", "GIGA", "SparseVI", "Streaming(GIGA)", "Logistic(laplace)",
                 "Poisson(laplace)"]
    start = time.perf_counter()
    print(f"{'sweep':<24}{'cases':>7}{'silent':>9}{'unclear':>9}{'hangs':>9}{'crashes':>9}"
          f"{'half-upd':>9}")
    failures = _table("hostile inputs", hostile_sweep(names))
    failures += _table("dask chunks", dask_sweep(names))
    failures += _table("interrupts", interrupt_sweep(names, 3 if args.quick else 6))
    print(f"\n{time.perf_counter() - start:.0f} s")
    for name, case, kind, detail in failures:
        print(f"  {kind:<14} {name:<22} {case:<28} {detail}")


TIMEOUT = 60

if __name__ == "__main__":
    main()
