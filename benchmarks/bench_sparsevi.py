"""SparseVI (Campbell & Beronov 2019, Algorithm 1): construction time and posterior quality next to
GIGA.

Run by hand: ``python benchmarks/bench_sparsevi.py [--quick] [--seeds K]``.

Part 1: the six N = 500 data sets of Campbell & Beronov 2019, section 5.3 (``../shared/data``,
whitened, prior N(0, I), softplus Poisson link). SparseVI with M = 100, S = 100, T = 100 and the
Laplace sampler; time per greedy step, total time, and the Laplace KL to the full posterior in
nats (``skcoreset.metrics.coreset_quality``), next to GIGA (J = 500, subsample-Laplace and
full-Laplace weighting) and uniform subsampling measured in the same run; the KL relative to the
prior's (the paper's Fig. 4 scale) is printed for SparseVI. Target: M = 100 in under 10 s.

Part 2: synthetic logistic data, N = 1e5, d = 10, with ``n_subsample`` U = 1000, next to GIGA on
the same data: KL in nats, largest |mean error| in full-posterior sd, and the relative KL, which
at this N is divided by a KL(prior || full) of about 1e5 nats and looks small even for uniform
subsampling.

Part 3: the Gaussian linear model (exact sampler, no Monte Carlo), d = 50 random features,
N = 2000, M = 200: exact KL(pi_w || pi) next to GIGA's (Campbell & Beronov 2019, sections 5.1-5.2
style).

The paper's claim (section 5.3, Fig. 5): SparseVI reaches a KL as low as or lower than GIGA
without a user-chosen weighting distribution, but is much slower than GIGA, mostly from the
weight updates.
"""

import argparse
import sys
import time

import numpy as np

from skcoreset import GIGACoreset, SparseVICoreset, UniformCoreset
from skcoreset._inference import prior_precision
from skcoreset.coreset._sparsevi_moments import _ExactGaussianMoments
from skcoreset.datasets import make_logistic_regression
from skcoreset.families import make_family

from _common import DATA_DIR, LOGISTIC_SETS, POISSON_SETS, CoresetKL, load_dataset

PAPER = dict(prior_scale=1.0, intercept_prior_scale=1.0)


def load(name):
    """Whitened covariates and targets, as in the tests (Campbell & Beronov 2019, Appendix C)."""
    X, y, model, _ = load_dataset(name)
    return X, y, model


def timed_fit(make, X, y):
    start = time.perf_counter()
    coreset = make().fit(X, y)
    return coreset, time.perf_counter() - start


def part1(seeds, M=100):
    print(f"Part 1: Campbell & Beronov 2019 data sets, N = 500, M = {M}, S = 100, T = 100 "
          f"(median over {len(seeds)} seed{'s' if len(seeds) > 1 else ''})")
    print(f"{'data set':>14} {'SVI ms/step':>11} {'SVI [s]':>8} {'GIGA-sub [s]':>12} "
          f"{'GIGA [s]':>9} | KL [nats]: {'SVI':>9} {'GIGA-sub':>9} {'GIGA':>9} "
          f"{'uniform':>9} | {'SVI rel.':>9}")

    def paper(model):  # the papers' likelihood: Poisson with the softplus link
        return dict(model=make_family(model, link="softplus"), **PAPER)

    makers = {
        "svi": lambda model, s: lambda: SparseVICoreset(M, n_draws=100, n_iter_opt=100,
                                                        random_state=s, **paper(model)),
        "giga-sub": lambda model, s: lambda: GIGACoreset(M, weighting="laplace-subsample",
                                                         random_state=s, **paper(model)),
        "giga": lambda model, s: lambda: GIGACoreset(M, random_state=s, **paper(model)),
        "uniform": lambda model, s: lambda: UniformCoreset(M, random_state=s, **paper(model)),
    }
    for name in LOGISTIC_SETS + POISSON_SETS:
        X, y, model = load(name)
        quality = CoresetKL(X, y)
        times = {key: [] for key in makers}
        kls = {key: [] for key in makers}
        rel = []
        steps = []
        for seed in seeds:
            for key, make in makers.items():
                coreset, elapsed = timed_fit(make(model, seed), X, y)
                times[key].append(elapsed)
                q = quality(coreset)
                kls[key].append(q.kl)
                if key == "svi":
                    steps.append(coreset.n_iter_)
                    rel.append(q.relative_kl)
        t = {key: np.median(v) for key, v in times.items()}
        k = {key: np.median(v) for key, v in kls.items()}
        print(f"{name:>14} {1e3 * t['svi'] / np.median(steps):11.1f} {t['svi']:8.2f} "
              f"{t['giga-sub']:12.2f} {t['giga']:9.2f} |            {k['svi']:9.2e} "
              f"{k['giga-sub']:9.2e} {k['giga']:9.2e} {k['uniform']:9.2e} | "
              f"{np.median(rel):9.2e}", flush=True)


def part2(n=100_000, M=100, n_subsample=1000):
    print(f"\nPart 2: synthetic logistic data, N = {n}, d = 10, M = {M}, S = 100, T = 100, "
          f"n_subsample = {n_subsample}")
    X, y = make_logistic_regression(n, n_features=10, random_state=0)
    quality = CoresetKL(X, y)
    rows = [
        ("SparseVI", lambda: SparseVICoreset(M, n_subsample=n_subsample, model="logistic",
                                             random_state=0, **PAPER)),
        ("GIGA-sub", lambda: GIGACoreset(M, weighting="laplace-subsample", model="logistic",
                                         random_state=0, **PAPER)),
        ("GIGA", lambda: GIGACoreset(M, model="logistic", random_state=0, **PAPER)),
        ("uniform", lambda: UniformCoreset(M, model="logistic", random_state=0, **PAPER)),
    ]
    print(f"{'constructor':>12} {'ms/step':>8} {'time [s]':>9} {'size':>5} {'KL [nats]':>10} "
          f"{'mean err [sd]':>13} {'relative KL':>11}")
    for label, make in rows:
        coreset, elapsed = timed_fit(make, X, y)
        per_step = 1e3 * elapsed / coreset.n_iter_ if hasattr(coreset, "n_iter_") else np.nan
        q = quality(coreset)
        print(f"{label:>12} {per_step:8.1f} {elapsed:9.2f} {q.size:5d} {q.kl:10.3g} "
              f"{q.max_mean_error_sd:13.2f} {q.relative_kl:11.2e}", flush=True)


def part3(seeds, n=2000, d=50, M=200):
    print(f"\nPart 3: Gaussian linear model, N = {n}, d = {d}, M = {M}, exact sampler, "
          "T = 100: exact KL(pi_w || pi) in nats")
    print(f"{'seed':>4} {'SVI [s]':>8} {'KL SVI':>9} {'KL GIGA-sub':>11} {'KL GIGA':>9} "
          f"{'GIGA-sub / SVI':>14}")
    for seed in seeds:
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, d))
        y = X @ rng.normal(size=d) + 0.5 + rng.normal(size=n)
        kwargs = dict(model="gaussian", prior_scale=1.0, intercept_prior_scale=1.0,
                      random_state=seed)
        prior = prior_precision(d, prior_scale=1.0, intercept_prior_scale=1.0,
                                fit_intercept=True)
        exact = _ExactGaussianMoments(X, y, np.ones(n), 1.0, prior, True)

        def exact_kl(coreset):
            exact.refresh(coreset.sample_indices_, coreset.sample_weight_)
            return exact.kl()[0]

        svi, elapsed = timed_fit(lambda: SparseVICoreset(M, **kwargs), X, y)
        sub = GIGACoreset(M, weighting="laplace-subsample", **kwargs).fit(X, y)
        full = GIGACoreset(M, **kwargs).fit(X, y)
        k = [exact_kl(c) for c in (svi, sub, full)]
        print(f"{seed:4d} {elapsed:8.2f} {k[0]:9.3g} {k[1]:11.3g} {k[2]:9.3g} "
              f"{k[1] / k[0]:14.0f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one seed, skip part 3")
    parser.add_argument("--seeds", type=int, default=1, help="seeds per data set (part 1)")
    args = parser.parse_args()
    if not DATA_DIR.exists():
        sys.exit(f"paper data not found in {DATA_DIR}")
    part1(list(range(args.seeds)))
    part2()
    if not args.quick:
        part3([0, 1])


if __name__ == "__main__":
    main()
