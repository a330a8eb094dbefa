"""Does the certified threshold keep its promise? A simulation of judges whose agreement with the supervisors is
known for every stated confidence.

Each repetition draws N audited calls, certifies each criterion's threshold from them
(routing.certification.certify, as the beat does from the random audit), then draws fresh calls from the same
judge and measures, per criterion, the realised agreement of the values the threshold keeps (the values that skip
review) and their share (the coverage). The guarantee holds in a repetition when the kept values agree at α or
more, or when nothing is kept. Beside it, the fixed rule: keep every value of confidence 0.75 or more.

    python -m bench.routing.run                                  # the defaults: 1,000 repetitions of 500 audited calls
    python -m bench.routing.run --repetitions 20 --audited 300 --fresh 2000    # a smoke run

Exits 1 when the guarantee held in fewer than 1 − δ of the repetitions for some criterion (beyond the binomial
noise of the repetitions themselves: three standard errors).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from routing.certification import certify

FIXED = 0.75


@dataclass(frozen=True)
class Criterion:
    """A criterion as a judge sees it: how its stated confidence is spread (a beta distribution, stated in steps
    of 0.05 as models state it), and the chance the supervisor agrees given that stated confidence."""

    name: str
    spread: tuple[float, float]
    agreement: Callable[[np.ndarray], np.ndarray]

    def draw(self, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
        stated = np.round(rng.beta(*self.spread, size) * 20) / 20
        return stated, rng.uniform(0, 1, size) < self.agreement(stated)


# Three judges. Well calibrated: a stated 0.8 agrees 80% of the time. Overconfident: agreement is the square of
# the stated confidence (a stated 0.9 agrees 81%), and it states high confidences most of the time. Uneven: one
# calibrated criterion, one very overconfident (the cube), one underconfident (the square root).
JUDGES: dict[str, tuple[Criterion, ...]] = {
    "calibrated": (Criterion("greets", (5, 1.5), lambda c: c), Criterion("verifies", (5, 1.5), lambda c: c)),
    "overconfident": (
        Criterion("greets", (8, 1), lambda c: c**2), Criterion("verifies", (8, 1), lambda c: c**2),
    ),
    "uneven": (
        Criterion("greets", (5, 1.5), lambda c: c),
        Criterion("states-debt", (8, 1), lambda c: c**3),
        Criterion("closes", (3, 2), np.sqrt),
    ),
}  # fmt: skip


@dataclass
class Tally:
    held: int = 0
    fixed_held: int = 0
    certified: int = 0
    coverage: float = 0.0
    fixed_coverage: float = 0.0
    agreement: float = 0.0  # mean realised agreement of the kept values, over repetitions that kept any
    kept_any: int = 0
    fixed_agreement: float = 0.0
    thresholds: list[float] | None = None


def simulate(
    criteria: tuple[Criterion, ...], *, audited: int, fresh: int, repetitions: int, target: float, risk: float,
    rng: np.random.Generator,
) -> tuple[dict[str, Tally], float, float]:  # fmt: skip
    """Per criterion, the tally over the repetitions; and the mean share of fresh calls none of whose values
    needed review, certified and fixed."""
    tallies = {criterion.name: Tally(thresholds=[]) for criterion in criteria}
    calls_free = fixed_calls_free = 0.0
    for _ in range(repetitions):
        all_kept = np.ones(fresh, dtype=bool)
        all_fixed = np.ones(fresh, dtype=bool)
        for criterion in criteria:
            tally = tallies[criterion.name]
            stated, agrees = criterion.draw(rng, audited)
            certificate = certify(stated, agrees, target=target, risk=risk)
            new_stated, new_agrees = criterion.draw(rng, fresh)
            kept = new_stated >= certificate.threshold if certificate.certified else np.zeros(fresh, dtype=bool)
            fixed = new_stated >= FIXED
            all_kept &= kept
            all_fixed &= fixed
            if certificate.certified:
                tally.certified += 1
                tally.thresholds.append(certificate.threshold)
            if kept.any():
                realised = new_agrees[kept].mean()
                tally.held += realised >= target
                tally.agreement += realised
                tally.kept_any += 1
            else:
                tally.held += 1  # nothing kept: every value reviewed, none unreviewed can disagree
            tally.coverage += kept.mean()
            fixed_realised = new_agrees[fixed].mean() if fixed.any() else 1.0
            tally.fixed_held += fixed_realised >= target
            tally.fixed_agreement += fixed_realised
            tally.fixed_coverage += fixed.mean()
        calls_free += all_kept.mean()
        fixed_calls_free += all_fixed.mean()
    return tallies, calls_free / repetitions, fixed_calls_free / repetitions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=1000)
    parser.add_argument("--audited", type=int, default=500, help="audited calls each certification sees")
    parser.add_argument("--fresh", type=int, default=20_000, help="fresh calls each certificate is measured on")
    parser.add_argument("--target", type=float, default=0.9, help="α, the agreement promised")
    parser.add_argument("--risk", type=float, default=0.1, help="δ, the chance the promise fails")
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument("--judge", choices=sorted(JUDGES), action="append", help="only these judges")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    reps = args.repetitions
    # The share of repetitions that held is itself an estimate: allow three of its standard errors below 1 − δ.
    allowance = 3 * math.sqrt(args.risk * (1 - args.risk) / reps)
    print(
        f"α {args.target}  δ {args.risk}  {args.audited} audited calls, {args.fresh} fresh calls, {reps} repetitions,"
        f" seed {args.seed}"
    )
    print(
        f"{'judge':<14}{'criterion':<13}{'held':>7}{'certified':>10}{'threshold':>10}{'coverage':>9}{'agreement':>10}"
        f" | {'fixed held':>10}{'coverage':>9}{'agreement':>10}"
    )
    failed = []
    for judge in args.judge or list(JUDGES):
        tallies, free, fixed_free = simulate(
            JUDGES[judge], audited=args.audited, fresh=args.fresh, repetitions=reps, target=args.target,
            risk=args.risk, rng=rng,
        )  # fmt: skip
        for name, tally in tallies.items():
            held = tally.held / reps
            median = f"{np.median(tally.thresholds):.2f}" if tally.thresholds else "-"
            agreement = f"{tally.agreement / tally.kept_any:.3f}" if tally.kept_any else "-"
            print(
                f"{judge:<14}{name:<13}{held:>7.3f}{tally.certified / reps:>10.3f}{median:>10}"
                f"{tally.coverage / reps:>9.3f}{agreement:>10} | {tally.fixed_held / reps:>10.3f}"
                f"{tally.fixed_coverage / reps:>9.3f}{tally.fixed_agreement / reps:>10.3f}"
            )
            if held < 1 - args.risk - allowance:
                failed.append(f"{judge}/{name}")
        print(f"{judge:<14}{'calls with no review needed':<40} certified {free:.3f} | fixed {fixed_free:.3f}")
    if failed:
        print("guarantee failed:", ", ".join(failed))
        return 1
    print(f"guarantee held: agreement ≥ {args.target} in ≥ {1 - args.risk:.2f} of repetitions for every criterion")
    return 0


if __name__ == "__main__":
    sys.exit(main())
