"""A formula pipeline against the equivalent hand-built ColumnTransformer pipeline.

A pandas DataFrame of N rows (default 500,000) with 3 categorical and 5 numeric columns and a
log-transformed income; Poisson counts. Both pipelines, with and without a QuasiNewtonCoreset
step, fit BayesianPoissonRegression (Laplace); the table gives the time of the design step
(fit_transform), of the whole fit, the largest difference of the posterior means, and that
predictions on rows with a level unseen in fit run. Run: ``python benchmarks/bench_formula.py
[N]`` (OMP_NUM_THREADS=1 for a quiet machine).
"""

import sys
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from skcoreset import BayesianPoissonRegression, QuasiNewtonCoreset
from skcoreset.formula import FormulaTransformer, formula_Xy
from skcoreset.pipeline import Pipeline

FORMULA = ("visits ~ C(plan) + C(region) + C(smoker) + x0 + x1 + x2 + x3 + x4"
           " + np.log(income)")


def frame(n, seed=0):
    rng = np.random.default_rng(seed)
    data = pd.DataFrame({"plan": rng.choice(["basic", "plus", "premium"], n),
                         "region": rng.choice(["n", "s", "e", "w"], n),
                         "smoker": rng.choice(["no", "yes"], n)})
    for j in range(5):
        data[f"x{j}"] = rng.normal(size=n)
    data["income"] = rng.lognormal(10, 0.5, n)
    eta = (0.3 * (data.plan == "plus") - 0.2 * (data.region == "w")
           + 0.1 * data.x0 - 0.1 * data.x3 + 0.05 * np.log(data.income) - 0.5)
    data["visits"] = rng.poisson(np.exp(eta))
    return data


def by_hand():
    return ColumnTransformer([
        ("cat", OneHotEncoder(drop="first", sparse_output=False, handle_unknown="ignore"),
         ["plan", "region", "smoker"]),
        ("num", "passthrough", [f"x{j}" for j in range(5)]),
        ("log", FunctionTransformer(np.log), ["income"])])


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main(n):
    data = frame(n)
    X, y = formula_Xy(FORMULA, data)
    new = X.iloc[:1000].copy()
    new.loc[new.index[:10], "plan"] = "gold"  # a level unseen in fit
    print(f"N = {n:,} rows, 3 categorical + 5 numeric columns + log(income)\n")
    print("| route | design (s) | fit (s) | max |mean - ColumnTransformer's| | "
          "predicts unseen level |")
    print("|---|---|---|---|---|")
    for coreset in (None, QuasiNewtonCoreset(M=500, random_state=0)):
        fits = {}
        for label, design in (("ColumnTransformer", by_hand()),
                              ("FormulaTransformer", FormulaTransformer(FORMULA))):
            _, t_design = timed(lambda: design.fit_transform(X))
            steps = [("design", design)]
            if coreset is not None:
                steps.append(("coreset", coreset))
            pipe = Pipeline([*steps, ("clf", BayesianPoissonRegression())])
            _, t_fit = timed(lambda: pipe.fit(X, y))
            fits[label] = pipe
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # formulaic warns about "gold"
                ok = np.isfinite(pipe.predict(new)).all()
            diff = np.abs(pipe[-1].posterior_.mean
                          - fits["ColumnTransformer"][-1].posterior_.mean).max()
            route = label + (" + QuasiNewtonCoreset(M=500)" if coreset is not None else "")
            print(f"| {route} | {t_design:.2f} | {t_fit:.2f} | {diff:.1e} | {ok} |")
    print("\nsummary() rows of the formula pipeline:",
          list(fits["FormulaTransformer"][-1].summary().index))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500_000)
