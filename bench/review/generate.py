"""Fill a PostgreSQL database with judged calls for the review benchmark.

Run from the repository root, against a database of its own (it truncates the
recordings, runs, scores, reviews and rubrics tables):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/veredicto_review_bench \\
        python -m bench.review.generate --recordings 100000

One published rubric with 12 criteria; every recording has one succeeded run
with a score per criterion (100,000 recordings -> 1.2 million scores), and a
share of them is in the review queue with the three reasons mixed. The rows
are made by INSERT ... SELECT over generate_series, so the whole set takes
about a minute; values are derived from the row number, so reruns are identical.
"""

from __future__ import annotations

import argparse
import json
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
django.setup()

from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from access.models import DEFAULT_WORKSPACE, Role, Workspace  # noqa: E402
from access.services import member_add  # noqa: E402
from bench.database import JUDGE_RUN_STEPS, SCORES_INSERT, run_steps  # noqa: E402
from qa.evidence import VERIFIER_VERSION, verify_evidence  # noqa: E402
from rubrics.models import Criterion, CriterionException, Rubric  # noqa: E402
from rubrics.services import rubric_publish  # noqa: E402

BENCH_USER = "bench-supervisor"
BENCH_PASSWORD = "bench-pass-word"
TEAMS = ["billing", "support", "sales", "retention", "tech"]
AGENTS = 400

# A 40-turn call; each criterion quotes one agent line, verified like the judge pipeline does.
AGENT_LINES = [
    "Buenas tardes, le atiende Marta de Telco Sur, ¿en qué puedo ayudarle?",
    "Para confirmar, ¿el cobro duplicado es de la factura de octubre?",
    "Le pido disculpas por las molestias, entiendo que es muy frustrante.",
    "¿Me confirma su número de documento, por favor?",
    "Gracias, veo el doble cobro de 4.500 pesos en su cuenta.",
    "Voy a abrir un reclamo para que le devuelvan el importe completo.",
    "El número de reclamo es el 88123, se lo envío también por correo.",
    "El reintegro se acredita en cinco días hábiles en su resumen.",
    "Sí, te lo mando hoy antes de las 18 por correo, con el número de reclamo.",
    "Además le dejo activada la alerta de cobros duplicados sin costo.",
    "¿Hay algo más en lo que pueda ayudarle hoy?",
    "Gracias a usted por llamar, que tenga muy buena tarde.",
]
CUSTOMER_LINES = [
    "Hola, me cobraron dos veces la factura de octubre.",
    "Sí, exactamente, y encima me lo cobraron con recargo.",
    "Ya hice el reclamo la semana pasada y nadie me respondió.",
    "Es el 30.456.789.",
    "¿Y cuándo me devuelven la plata?",
    "¿Me mandan el comprobante hoy?",
    "Bueno, está bien, espero que esta vez se resuelva.",
    "No quiero que vuelva a pasar el mes que viene.",
]


def transcript_text() -> str:
    lines = []
    for turn in range(40):
        if turn % 2 == 0:
            lines.append(f"AGENTE: {AGENT_LINES[(turn // 2) % len(AGENT_LINES)]}")
        else:
            lines.append(f"CLIENTE: {CUSTOMER_LINES[(turn // 2) % len(CUSTOMER_LINES)]}")
    return "\n".join(lines) + "\n"


def build_rubric() -> tuple[Rubric, list[Criterion]]:
    draft = Rubric.objects.create(name="Atención al cliente (bench)", slug="bench-atencion", language="es")
    for order, line in enumerate(AGENT_LINES, start=1):
        criterion = Criterion.objects.create(
            rubric=draft,
            key=f"c{order:02d}",
            title=f"Criterio {order}",
            description=f"El agente hace lo que muestra: «{line[:40]}…».",
            evidence_guidance="Citar las palabras del agente.",
            order=order,
        )
        CriterionException.objects.create(
            criterion=criterion, text="El cliente pide ser transferido.", outcome=CriterionException.Outcome.NOT_APPLICABLE
        )
    rubric = rubric_publish(rubric=draft)
    return rubric, list(rubric.criteria.order_by("order"))


def evidence_by_criterion(transcript: str, criteria: list[Criterion]) -> list[dict]:
    """Per criterion: the quote, its verified spans, and an unverified variant with its closest passage."""
    rows = []
    for criterion, line in zip(criteria, AGENT_LINES):
        quote = line.split(",")[0] if len(line.split(",")[0].split()) >= 4 else line
        verified = verify_evidence(quote, transcript).to_dict()
        unverified = verify_evidence(f"el agente dijo que {quote.lower()} mañana", transcript).to_dict()
        assert verified["verified"] and not unverified["verified"], quote
        rows.append(
            {
                "criterion_id": criterion.pk,
                "quote": quote,
                "spans": json.dumps(verified["spans"]),
                "bad_quote": f"el agente dijo que {quote.lower()} mañana",
                "bad_status": unverified["status"],
                "bad_closest": json.dumps(unverified["closest"]),
            }
        )
    return rows


def generate(*, recordings: int, review_percent: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE reviews_reviewclaim, reviews_criterionreview, reviews_review, qa_score, qa_judgerun, "
            "qa_recording, rubrics_criterionexception, rubrics_criterion, rubrics_rubric RESTART IDENTITY CASCADE"
        )
    rubric, criteria = build_rubric()
    transcript = transcript_text()
    evidence = evidence_by_criterion(transcript, criteria)
    supervisors = Group.objects.get(name="Supervisors")
    user, _ = User.objects.get_or_create(username=BENCH_USER)
    user.set_password(BENCH_PASSWORD)
    user.save()
    user.groups.add(supervisors)
    # A supervisor of the default workspace (every team): the scope the pages read with (access.scope).
    member_add(user=user, workspace=Workspace.objects.get(slug=DEFAULT_WORKSPACE), role=Role.SUPERVISOR)
    earlier, _ = User.objects.get_or_create(username="bench-earlier-reviewer")

    steps = [
        # Recordings. i % 100 < review_percent are in the queue; reasons mixed as the judge would:
        # a seventh of them random audits alone, a third with unverified evidence, the rest low confidence.
        (
            "recordings",
            """
            INSERT INTO qa_recording (external_id, source, agent_id, agent_name, team, channel, language,
                occurred_at, duration_seconds, transcript, turns, transcript_source, content_hash, rubric_id,
                status, failure_reason, current_run_id, needs_review, review_reasons, created_at, updated_at,
                workspace_id)
            SELECT 'bench-' || i, 'bench', 'agent-' || (i %% %(agents)s), 'Agente ' || (i %% %(agents)s),
                (%(teams)s::text[])[1 + i %% 5], 'voice', 'es',
                now() - (i %% 180) * interval '1 day' - (i %% 86400) * interval '1 second', 300 + i %% 900,
                %(transcript)s, NULL, 'asr', md5(i::text) || md5((-i)::text), %(rubric)s,
                CASE WHEN i %% 100 < %(review)s THEN 'in_review' ELSE 'reviewed' END, '', NULL,
                i %% 100 < %(review)s OR i %% 5 = 0,
                CASE WHEN i %% 100 >= %(review)s THEN '[]'::jsonb
                     WHEN i %% 7 = 0 THEN '["random_audit"]'::jsonb
                     WHEN i %% 3 = 0 THEN '["unverified_evidence", "low_confidence"]'::jsonb
                     ELSE '["low_confidence"]'::jsonb END,
                now() - (i %% 180) * interval '1 day', now(),
                (SELECT workspace_id FROM rubrics_rubric WHERE id = %(rubric)s)
            FROM generate_series(1, %(n)s) AS i
            """,
        ),
        *JUDGE_RUN_STEPS,
        # Scores: the confidence is spread over [0.05, 1) from a hash of (run, criterion); one score in
        # ten has an unverified quote (confidence 0), as the verifier leaves it.
        (
            "scores",
            SCORES_INSERT
            + """
            SELECT j.id, j.created_at, e.criterion_id, 1 + (j.id * 7 + e.criterion_id) %% 5,
                CASE WHEN bad THEN 0 ELSE 0.05 + 0.95 * h END, 0.5 + 0.5 * h,
                CASE WHEN bad THEN e.bad_quote ELSE e.quote END, NOT bad,
                CASE WHEN bad THEN e.bad_status ELSE 'verified' END,
                CASE WHEN bad THEN '[]'::jsonb ELSE e.spans::jsonb END,
                CASE WHEN bad THEN e.bad_closest::jsonb END,
                %(verifier)s, 'El agente lo hace de forma explícita en la llamada.'
            FROM qa_judgerun j
            CROSS JOIN jsonb_to_recordset(%(evidence)s::jsonb) AS e(criterion_id bigint, quote text, spans text,
                bad_quote text, bad_status text, bad_closest text)
            CROSS JOIN LATERAL (SELECT (hashtext(j.id || ':' || e.criterion_id) & 65535) / 65536.0 AS h) AS hashed
            CROSS JOIN LATERAL (SELECT (hashtext(e.criterion_id || '/' || j.id) & 1023) < 102 AS bad) AS verified
            """,
        ),
        # What routing stores with each judgment: the lowest confidence of the current run.
        (
            "lowest confidence",
            """
            UPDATE qa_recording r SET lowest_confidence = s.lowest
            FROM (SELECT run_id, min(confidence) AS lowest FROM qa_score GROUP BY run_id) AS s
            WHERE s.run_id = r.current_run_id
            """,
        ),
        # One earlier "needs review" per tenth of the queue, so review pages show a history.
        (
            "earlier reviews",
            """
            INSERT INTO reviews_review (recording_id, run_id, reviewer, user_id, api_key_id, decision,
                adjusted_mean, comment, blind, created_at)
            SELECT r.id, r.current_run_id, %(user_name)s, %(user)s, NULL, 'needs_review', NULL,
                'Que lo vea otra persona.', false, now() - interval '1 hour'
            FROM qa_recording r WHERE r.status = 'in_review' AND r.id %% 10 = 0
            """,
        ),
        (
            "earlier review entries",
            """
            INSERT INTO reviews_criterionreview (review_id, criterion_id, adjusted_value, not_applicable, rejected, comment)
            SELECT v.id, c.id, 2, false, false, 'No se escucha el compromiso.'
            FROM reviews_review v CROSS JOIN rubrics_criterion c WHERE c.rubric_id = %(rubric)s AND c."order" <= 3
            """,
        ),
        # What autovacuum would have done by now: statistics, and a visibility map for index-only scans.
        ("vacuum", "VACUUM ANALYZE"),
    ]
    parameters = {
        "n": recordings,
        "review": review_percent,
        "agents": AGENTS,
        "teams": TEAMS,
        "transcript": transcript,
        "rubric": rubric.pk,
        "verifier": VERIFIER_VERSION,
        "evidence": json.dumps(evidence),
        "user": earlier.pk,
        "user_name": earlier.username,
    }
    run_steps(steps, parameters, width=24)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recordings", type=int, default=100_000)
    parser.add_argument("--review-percent", type=int, default=30, help="share of recordings in the review queue")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        parser.error("the benchmark needs PostgreSQL: set DATABASE_URL")
    call_command("migrate", verbosity=0)
    generate(recordings=args.recordings, review_percent=args.review_percent)


if __name__ == "__main__":
    main()
