"""Which confidence to threshold on? Coverage at the same guarantee, on a simulated judge.

Each value has a latent chance q of being right (q ~ Beta(8, 1.5), mean 0.84). The judge reports three signals: its stated
confidence (overconfident and noisy: q + 0.1 + N(0, 0.1), in steps of 0.05), the agreement of its repeated samples
(the share of 5 samples equal to its answer, each equal with probability 0.5 + 0.5 q), and, implicitly, a verified
quote (the values compared here are all verified: an unverified one always goes to review, whatever its score).
Three scores are certified with the same fixed-sequence test at the same α and δ (routing.certification):

- `stated`: the stated confidence, certified on all N audited pairs;
- `samples`: the samples' agreement (ties broken by the stated confidence), on all N;
- `logistic`: a logistic regression of agreement on both, fitted per repetition on half the audit and certified on the
  other half (a score fitted on the pairs it is certified on would spend the guarantee twice), cross-fitted: the
  halves swap and the two certificates' coverage is averaged over fresh calls scored by each half's model.

    python -m bench.routing.confidence --repetitions 300
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from routing.certification import certify


def draw(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = rng.beta(8, 1.5, size)
    stated = np.clip(np.round((q + 0.1 + rng.normal(0, 0.1, size)) * 20) / 20, 0, 1)
    samples = rng.binomial(5, 0.5 + 0.5 * q) / 5
    agrees = rng.uniform(0, 1, size) < q
    return np.column_stack([stated, samples]), agrees, q


def logistic_fit(features: np.ndarray, agrees: np.ndarray, *, iterations: int = 25, ridge: float = 1e-3) -> np.ndarray:
    """Newton's method on the log-likelihood (a small ridge keeps a separable half finite)."""
    x = np.column_stack([np.ones(len(features)), features])
    weights = np.zeros(x.shape[1])
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-x @ weights))
        gradient = x.T @ (agrees - p) - ridge * weights
        hessian = (x * (p * (1 - p))[:, None]).T @ x + ridge * np.eye(x.shape[1])
        weights += np.linalg.solve(hessian, gradient)
    return weights


def logistic_score(weights: np.ndarray, features: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(weights[0] + features @ weights[1:])))


def kept_agreement(scores: np.ndarray, agrees: np.ndarray, threshold: float | None) -> tuple[float, float | None]:
    if threshold is None:
        return 0.0, None
    kept = scores >= threshold
    return kept.mean(), (agrees[kept].mean() if kept.any() else None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=300)
    parser.add_argument("--audited", type=int, default=500)
    parser.add_argument("--fresh", type=int, default=20_000)
    parser.add_argument("--target", type=float, default=0.9)
    parser.add_argument("--risk", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=40)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    names = ("stated", "samples", "logistic")
    coverage = {name: [] for name in names}
    held = {name: 0 for name in names}
    fixed_coverage, fixed_held = [], 0
    for _ in range(args.repetitions):
        features, agrees, _ = draw(rng, args.audited)
        fresh, fresh_agrees, _ = draw(rng, args.fresh)
        results = {}
        for name, column in (("stated", features[:, 0]), ("samples", features[:, 1] + features[:, 0] * 1e-3)):
            certificate = certify(column, agrees, target=args.target, risk=args.risk)
            fresh_column = fresh[:, 0] if name == "stated" else fresh[:, 1] + fresh[:, 0] * 1e-3
            results[name] = [kept_agreement(fresh_column, fresh_agrees, certificate.threshold)]
        halves = np.arange(args.audited) < args.audited // 2
        results["logistic"] = []
        for fit, check in ((halves, ~halves), (~halves, halves)):
            weights = logistic_fit(features[fit], agrees[fit])
            certificate = certify(logistic_score(weights, features[check]), agrees[check], target=args.target, risk=args.risk)
            results["logistic"].append(kept_agreement(logistic_score(weights, fresh), fresh_agrees, certificate.threshold))
        for name, outcomes in results.items():
            for share, agreement in outcomes:
                coverage[name].append(share)
                held[name] += agreement is None or agreement >= args.target
        fixed = fresh[:, 0] >= 0.75
        fixed_coverage.append(fixed.mean())
        fixed_held += fresh_agrees[fixed].mean() >= args.target
    print(f"α {args.target}  δ {args.risk}  {args.audited} audited values, {args.fresh} fresh, {args.repetitions} repetitions, seed {args.seed}")
    print(f"{'score':<10}{'coverage':>9}{'held':>7}")
    failed = False
    for name in names:
        share_held = held[name] / len(coverage[name])
        failed |= share_held < 1 - args.risk - 3 * np.sqrt(args.risk * (1 - args.risk) / len(coverage[name]))
        print(f"{name:<10}{np.mean(coverage[name]):>9.3f}{share_held:>7.3f}")
    print(f"{'fixed 0.75':<10}{np.mean(fixed_coverage):>9.3f}{fixed_held / args.repetitions:>7.3f}")
    best = max(names, key=lambda name: np.mean(coverage[name]))
    print(f"most coverage at the same guarantee: {best}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
