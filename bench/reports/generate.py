"""Fill a PostgreSQL database with judged and reviewed calls for the report benchmark.

Run from the repository root, on an empty, migrated database:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/veredicto_bench \
        python -m bench.reports.generate [--scores 1000000] [--criteria 10] [--seed 0.42]

Everything is made by INSERT ... SELECT over generate_series inside PostgreSQL
(a million scores take well under a minute), with setseed so a run is
reproducible. The shape follows production: 10% of calls re-judged with a
newer prompt, about 40% sent to review (random audit, low confidence,
unverified evidence, a few both), supervisors adjusting some criteria,
approving, rejecting or asking for another review, sometimes reviewing twice.
"""

from __future__ import annotations

import argparse
import os
import time

import django

BENCH_SLUG = "bench"


def build_rubric(criteria: int):
    from rubrics.models import Criterion, Rubric
    from rubrics.services import rubric_publish

    rubric = Rubric.objects.create(name="Benchmark", slug=BENCH_SLUG)
    for order in range(1, criteria + 1):
        Criterion.objects.create(
            rubric=rubric,
            key=f"c{order}",
            title=f"Criterion {order}",
            description="The agent does one thing.",
            order=order,
        )
    return rubric_publish(rubric=rubric)


# Each statement sees the previous ones' rows; %(name)s are filled from the parameters.
STATEMENTS = [
    # Calls over 26 weeks; reasons drawn once per call.
    """
    INSERT INTO qa_recording (external_id, source, agent_id, agent_name, team, channel, language, occurred_at,
        transcript, transcript_source, content_hash, rubric_id, status, failure_reason, needs_review,
        review_reasons, created_at, updated_at, workspace_id)
    SELECT 'bench-' || g, 'bench', 'agent-' || (g %% 200), 'Agent ' || (g %% 200), 'team-' || (g %% 8), 'voice',
        'es', at, 'AGENTE: hola', 'import', md5(g::text) || md5(g::text), %(rubric)s, 'reviewed', '', false,
        CASE WHEN u < 0.20 THEN '["random_audit"]' WHEN u < 0.30 THEN '["low_confidence"]'
             WHEN u < 0.40 THEN '["unverified_evidence"]' WHEN u < 0.42 THEN '["random_audit", "low_confidence"]'
             ELSE '[]' END::jsonb,
        at, at, (SELECT workspace_id FROM rubrics_rubric WHERE id = %(rubric)s)
    FROM (SELECT g, random() AS u, timestamptz '2026-01-05' + random() * interval '182 days' AS at
          FROM generate_series(1, %(recordings)s) AS g) AS calls
    """,
    # One run per call; the prompt changed half-way.
    """
    INSERT INTO qa_judgerun (recording_id, rubric_id, backend, model, prompt_version, status, attempts, created_at,
        raw_output, error)
    SELECT id, rubric_id, 'openai', CASE WHEN occurred_at < timestamptz '2026-04-06' THEN 'gpt-a' ELSE 'gpt-b' END,
        CASE WHEN occurred_at < timestamptz '2026-04-06' THEN 'p1' ELSE 'p2' END, 'succeeded', 1,
        occurred_at + interval '5 minutes', '', ''
    FROM qa_recording WHERE rubric_id = %(rubric)s
    """,
    # Re-judgements of some calls with a newer prompt, a month later.
    """
    INSERT INTO qa_judgerun (recording_id, rubric_id, backend, model, prompt_version, status, attempts, created_at,
        raw_output, error)
    SELECT id, rubric_id, 'openai', 'gpt-b', 'p3', 'succeeded', 1, occurred_at + interval '30 days', '', ''
    FROM qa_recording WHERE rubric_id = %(rubric)s ORDER BY random() LIMIT %(rejudged)s
    """,
    """
    UPDATE qa_recording AS recording SET current_run_id = latest.id
    FROM (SELECT DISTINCT ON (recording_id) recording_id, id FROM qa_judgerun
          WHERE rubric_id = %(rubric)s ORDER BY recording_id, created_at DESC, id DESC) AS latest
    WHERE latest.recording_id = recording.id
    """,
    # Every criterion of every run; 8% of quotes fail verification, more on the last criterion.
    """
    INSERT INTO qa_score (run_id, run_created_at, criterion_id, value, confidence, model_confidence, evidence, evidence_verified,
        verification_status, verification_spans, verifier_version, rationale)
    SELECT run_id, run_created_at, criterion_id, 1 + floor(v * 5)::int, CASE WHEN verified THEN 0.9 ELSE 0 END, 0.9,
        'te lo mando hoy', verified,
        CASE WHEN verified THEN 'verified' ELSE (ARRAY['not_found', 'paraphrase', 'empty'])[1 + floor(v * 3)::int] END,
        '[]', 'bench', 'because'
    FROM (SELECT run.id AS run_id, run.created_at AS run_created_at, criterion.id AS criterion_id, random() AS v,
                 random() >= CASE WHEN criterion."order" = %(criteria)s THEN 0.30 ELSE 0.06 END AS verified
          FROM qa_judgerun AS run CROSS JOIN rubrics_criterion AS criterion
          WHERE run.rubric_id = %(rubric)s AND criterion.rubric_id = %(rubric)s) AS draws
    """,
    # Reviews of the current run: 85% of the calls sent to review, 3% of the others.
    """
    INSERT INTO reviews_review (recording_id, run_id, reviewer, decision, adjusted_mean, comment, blind, created_at)
    SELECT id, current_run_id, 'supervisor-' || (id %% 20),
        CASE WHEN u < 0.80 THEN 'approve' WHEN u < 0.92 THEN 'reject' ELSE 'needs_review' END,
        CASE WHEN u < 0.5 THEN 1 + floor(random() * 5) END, '', false, occurred_at + interval '2 days'
    FROM (SELECT id, current_run_id, occurred_at, random() AS u, random() AS pick,
                 review_reasons <> '[]'::jsonb AS sent FROM qa_recording WHERE rubric_id = %(rubric)s) AS calls
    WHERE (sent AND pick < 0.85) OR (NOT sent AND pick < 0.03)
    """,
    # A tenth of those got an earlier review that the one above supersedes.
    """
    INSERT INTO reviews_review (recording_id, run_id, reviewer, decision, comment, blind, created_at)
    SELECT recording_id, run_id, 'supervisor-0', 'approve', '', false, created_at - interval '1 day'
    FROM reviews_review AS review
    WHERE random() < 0.10 AND run_id IN (SELECT id FROM qa_judgerun WHERE rubric_id = %(rubric)s)
    """,
    # Supervisors adjust 30% of the criteria by one point and mark 3% rejected.
    """
    INSERT INTO reviews_criterionreview (review_id, criterion_id, adjusted_value, not_applicable, rejected, comment)
    SELECT review.id, score.criterion_id,
        CASE WHEN u < 0.30 THEN least(greatest(score.value + CASE WHEN u < 0.15 THEN -1 ELSE 1 END, 1), 5) END,
        false, u > 0.97, 'changed'
    FROM (SELECT review.id, review.run_id, random() AS u FROM reviews_review AS review) AS review
    JOIN qa_score AS score ON score.run_id = review.run_id
    JOIN qa_judgerun AS run ON run.id = review.run_id AND run.rubric_id = %(rubric)s
    WHERE u < 0.30 OR u > 0.97
    """,
    # Marked for the rollups, as the judging and the reviews mark a call: the first read (or the run) builds them.
    "UPDATE qa_recording SET rollup_stale = true WHERE rubric_id = %(rubric)s AND current_run_id IS NOT NULL",
]

COUNTS = {
    "recordings": "SELECT count(*) FROM qa_recording WHERE rubric_id = %(rubric)s",
    "runs": "SELECT count(*) FROM qa_judgerun WHERE rubric_id = %(rubric)s",
    "scores": "SELECT count(*) FROM qa_score JOIN qa_judgerun ON run_id = qa_judgerun.id WHERE rubric_id = %(rubric)s",
    "reviews": "SELECT count(*) FROM reviews_review",
    "criterion reviews": "SELECT count(*) FROM reviews_criterionreview",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scores", type=int, default=1_000_000)
    parser.add_argument("--criteria", type=int, default=10)
    parser.add_argument("--seed", type=float, default=0.42)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    django.setup()
    from django.db import connection, transaction

    from rubrics.models import Rubric

    if connection.vendor != "postgresql":
        raise SystemExit("The benchmark runs on PostgreSQL: set DATABASE_URL.")
    if Rubric.objects.filter(slug=BENCH_SLUG).exists():
        raise SystemExit(f"Rubric '{BENCH_SLUG}' exists already: drop and re-create the database first.")

    runs = args.scores // args.criteria
    recordings = runs * 10 // 11  # a tenth of them judged twice
    started = time.perf_counter()
    with transaction.atomic():
        rubric = build_rubric(args.criteria)
        params = {
            "rubric": rubric.pk,
            "recordings": recordings,
            "rejudged": runs - recordings,
            "criteria": args.criteria,
        }
        with connection.cursor() as cursor:
            cursor.execute("SELECT setseed(%s)", [args.seed])
            for statement in STATEMENTS:
                cursor.execute(statement, params)
    with connection.cursor() as cursor:
        # As autovacuum leaves a table in production: statistics and the visibility map.
        cursor.execute("VACUUM ANALYZE")
        for name, query in COUNTS.items():
            cursor.execute(query, params)
            print(f"{name:>18}: {cursor.fetchone()[0]:>9,}")
    print(f"generated in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
