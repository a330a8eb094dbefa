"""Fill a PostgreSQL database with 100,000 judged calls in Spanish and English for the search benchmark.

Run from the repository root, against a database of its own (it truncates the recordings, runs,
scores, reviews, assignments and rubrics tables):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/veredicto_search_bench \\
        python -m bench.search.generate --recordings 100000

Half the calls are Spanish, half English; each transcript is 30 turns drawn from a pool of lines
per language by a hash of (call, turn), so words are common (in most calls), middling or rare, and
every call names one of 5,000 ticket codes (T0 ... T4999: each in 20 calls). One published rubric
with 3 criteria; every call has one succeeded run with a score per criterion, one in ten with an
unverified quote. A third of the calls wait for review. Made by INSERT ... SELECT over
generate_series; the database computes each transcript's full-text column as it inserts it.
"""

from __future__ import annotations

import argparse
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from access.models import Role  # noqa: E402
from access.services import member_add  # noqa: E402
from bench.database import JUDGE_RUN_STEPS, SCORES_INSERT, run_steps  # noqa: E402
from qa.evidence import VERIFIER_VERSION  # noqa: E402
from rubrics.models import Criterion, Rubric  # noqa: E402
from rubrics.services import rubric_publish  # noqa: E402

BENCH_USER = "bench-lead"
TEAMS = ["billing", "support", "sales", "retention", "tech"]
AGENTS = 400
TICKETS = 5000

SPANISH = [
    "Buenas tardes, le atiende Marta de Telco Sur, ¿en qué puedo ayudarle?",
    "Me cobraron dos veces la factura de octubre.",
    "Para confirmar, ¿el cobro duplicado es de la factura de octubre?",
    "Le pido disculpas por las molestias, entiendo que es muy frustrante.",
    "¿Me confirma su número de documento, por favor?",
    "Gracias, veo el doble cobro en su cuenta.",
    "Voy a abrir un reclamo para que le devuelvan el importe completo.",
    "El reintegro se acredita en cinco días hábiles en su resumen.",
    "Quiero dar de baja el servicio, ya no lo uso.",
    "Le puedo ofrecer un descuento del veinte por ciento durante seis meses.",
    "El router se reinicia solo cada media hora.",
    "Vamos a actualizar el firmware del módem a distancia.",
    "La señal de fibra óptica llega bien hasta su domicilio.",
    "¿Puede desenchufar el equipo y volver a enchufarlo?",
    "El técnico lo visita el jueves entre las nueve y las trece.",
    "Quiero cambiar de plan a uno con más datos móviles.",
    "El plan ilimitado cuesta cuatro mil quinientos pesos por mes.",
    "No me llegó la tarjeta SIM que pedí la semana pasada.",
    "Le envío el código de seguimiento del envío por mensaje.",
    "¿Hay algo más en lo que pueda ayudarle hoy?",
    "Gracias a usted por llamar, que tenga muy buena tarde.",
    "Esto es una vergüenza, llevo tres semanas esperando.",
    "Voy a pedir hablar con un supervisor.",
    "Le transfiero con el área de retención de clientes.",
    "La portabilidad numérica demora dos días hábiles.",
    "Necesito la factura a nombre de mi empresa.",
    "Se lo mando hoy antes de las dieciocho por correo.",
    "Bueno, está bien, espero que esta vez se resuelva.",
]
ENGLISH = [
    "Good afternoon, this is John from Northwind, how can I help you today?",
    "I was charged twice for my October invoice.",
    "Just to confirm, the duplicate charge is on the October invoice?",
    "I apologize for the inconvenience, I understand this is frustrating.",
    "Could you confirm your account number, please?",
    "Thank you, I can see the double charge on your account.",
    "I will open a claim so the full amount is refunded.",
    "The refund reaches your statement within five business days.",
    "I want to cancel my subscription, I no longer use it.",
    "I can offer you a twenty percent discount for six months.",
    "The router keeps restarting every half hour.",
    "We are going to update the modem firmware remotely.",
    "The fiber signal reaches your home just fine.",
    "Could you unplug the device and plug it back in?",
    "The technician will visit on Thursday between nine and one.",
    "I would like to upgrade to a plan with more mobile data.",
    "The unlimited plan costs forty five dollars a month.",
    "I never received the SIM card I ordered last week.",
    "I am sending you the shipment tracking code by text message.",
    "Is there anything else I can help you with today?",
    "Thank you for calling, have a great afternoon.",
    "This is outrageous, I have been waiting for three weeks.",
    "I want to speak to a supervisor.",
    "Let me transfer you to our customer retention team.",
    "Number porting takes two business days.",
    "I need the invoice in my company's name.",
    "I will email it to you before six today.",
    "Fine, I hope this time it gets sorted out.",
]
TURNS = 30


def build_rubric() -> tuple[Rubric, list[Criterion]]:
    draft = Rubric.objects.create(name="Customer care (bench)", slug="bench-care", language="es")
    for order in range(1, 4):
        Criterion.objects.create(
            rubric=draft, key=f"c{order}", title=f"Criterion {order}", description="The agent does it.",
            evidence_guidance="Quote the agent.", order=order,
        )  # fmt: skip
    rubric = rubric_publish(rubric=draft)
    return rubric, list(rubric.criteria.order_by("order"))


def generate(*, recordings: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE reviews_assignment, reviews_reviewclaim, reviews_criterionreview, reviews_review, qa_score, "
            "qa_judgerun, qa_recording, rubrics_criterionexception, rubrics_criterion, rubrics_rubric "
            "RESTART IDENTITY CASCADE"
        )
    rubric, criteria = build_rubric()
    user, _ = User.objects.get_or_create(username=BENCH_USER)
    # A QA lead of the rubric's workspace (who also reviews: blindness is asked); the scope is theirs.
    member_add(user=user, workspace=rubric.workspace, role=Role.QA_LEAD)

    steps = [
        (
            "recordings",
            """
            INSERT INTO qa_recording (external_id, source, agent_id, agent_name, team, channel, language,
                occurred_at, duration_seconds, transcript, turns, transcript_source, content_hash, rubric_id,
                workspace_id, status, failure_reason, current_run_id, needs_review, review_reasons, created_at, updated_at)
            SELECT 'bench-' || i, 'bench', 'agent-' || (i %% %(agents)s), 'Agent ' || (i %% %(agents)s),
                (%(teams)s::text[])[1 + i %% 5], 'voice', CASE WHEN i %% 2 = 0 THEN 'es' ELSE 'en' END,
                now() - (i %% 180) * interval '1 day' - (i %% 86400) * interval '1 second', 300 + i %% 900,
                (SELECT string_agg(
                    CASE WHEN k %% 2 = 0 THEN CASE WHEN i %% 2 = 0 THEN 'AGENTE: ' ELSE 'AGENT: ' END
                         ELSE CASE WHEN i %% 2 = 0 THEN 'CLIENTE: ' ELSE 'CUSTOMER: ' END END
                    || CASE WHEN i %% 2 = 0
                            THEN (%(spanish)s::text[])[1 + abs(hashtext(i || ':' || k)) %% %(n_spanish)s]
                            ELSE (%(english)s::text[])[1 + abs(hashtext(i || ':' || k)) %% %(n_english)s] END
                    || CASE WHEN k = 3 THEN ' Ticket T' || (i %% %(tickets)s) || '.' ELSE '' END,
                    E'\\n' ORDER BY k) || E'\\n'
                 FROM generate_series(1, %(turns)s) AS k), NULL,
                'asr', md5(i::text) || md5((-i)::text), %(rubric)s, %(workspace)s,
                CASE WHEN i %% 3 = 0 THEN 'in_review' ELSE 'judged' END, '', NULL, i %% 3 = 0,
                CASE WHEN i %% 3 <> 0 THEN '[]'::jsonb WHEN i %% 7 = 0 THEN '["random_audit"]'::jsonb
                     ELSE '["low_confidence"]'::jsonb END,
                now() - (i %% 180) * interval '1 day', now()
            FROM generate_series(1, %(n)s) AS i
            """,
        ),
        *JUDGE_RUN_STEPS,
        (
            "scores",
            SCORES_INSERT
            + """
            SELECT j.id, j.created_at, c.id, 1 + (j.id * 7 + c.id) %% 5, 0.8, 0.8, 'quote', (j.id + c.id) %% 10 <> 0,
                CASE WHEN (j.id + c.id) %% 10 <> 0 THEN 'verified' ELSE 'not_found' END, '[]'::jsonb, NULL,
                %(verifier)s, ''
            FROM qa_judgerun j CROSS JOIN unnest(%(criteria)s::bigint[]) AS c(id)
            """,
        ),
        (
            "current values",
            """
            UPDATE qa_recording r SET current_values = v.values, lowest_confidence = 0.8
            FROM (SELECT s.run_id, jsonb_object_agg(c.key, s.value) AS values FROM qa_score s
                  JOIN rubrics_criterion c ON c.id = s.criterion_id GROUP BY s.run_id) AS v
            WHERE v.run_id = r.current_run_id
            """,
        ),
        ("vacuum", "VACUUM ANALYZE"),
    ]
    parameters = {
        "n": recordings,
        "agents": AGENTS,
        "teams": TEAMS,
        "tickets": TICKETS,
        "turns": TURNS,
        "spanish": SPANISH,
        "english": ENGLISH,
        "n_spanish": len(SPANISH),
        "n_english": len(ENGLISH),
        "rubric": rubric.pk,
        "workspace": rubric.workspace_id,
        "criteria": [criterion.pk for criterion in criteria],
        "verifier": VERIFIER_VERSION,
    }
    run_steps(steps, parameters, width=16)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recordings", type=int, default=100_000)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        parser.error("the benchmark needs PostgreSQL: set DATABASE_URL")
    call_command("migrate", verbosity=0)
    generate(recordings=args.recordings)


if __name__ == "__main__":
    main()
