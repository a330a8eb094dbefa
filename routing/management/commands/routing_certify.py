from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from access.scope import EVERYTHING
from routing.selectors import RoutingTable, routing_table
from routing.services import thresholds_certify
from rubrics.selectors import rubric_version_of


class Command(BaseCommand):
    help = (
        "Certify today's routing thresholds of a rubric (the latest published version, or --rubric-version N) from "
        "its random audit, as the beat does (a day already certified stays as it is), and print them per criterion."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rubric", required=True, help="The rubric's slug.")
        parser.add_argument("--rubric-version", type=int, help="This version instead of the latest published.")

    def handle(self, *args, rubric: str, rubric_version: int | None, **options) -> None:
        found = rubric_version_of(slug=rubric, version=rubric_version, scope=EVERYTHING)
        if found is None:
            raise CommandError(f"No rubric {rubric!r}" + (f" version {rubric_version}" if rubric_version else "") + ".")
        thresholds_certify(rubric_ids=[found.pk])
        self.stdout.write(table_text(routing_table(rubric=found)))


def table_text(table: RoutingTable) -> str:
    """The routing table as the command prints it: one line per criterion and judgments."""
    tolerance = "within one point" if table.tolerance == "within_one" else "exact"
    lines = [
        f"{table.rubric.slug} v{table.rubric.version}: unreviewed values agree with a supervisor ({tolerance}) at least "
        f"{table.target:.0%} of the time, with probability {1 - table.risk:.0%}; uncertified criteria keep the fixed "
        f"threshold {table.fixed_threshold:.2f}.",
        f"{'criterion':<20} {'judge/model/prompt':<34} {'day':<10} {'threshold':>9} {'guaranteed':>10} "
        f"{'coverage':>8} {'pairs':>6} {'kept':>5} {'agree':>5}  status",
    ]
    for row in table.rows:
        judgments = f"{row.judge_name or '-'}/{row.model or '-'}/{row.prompt_version or '-'}"
        status = "certified" if row.certified else (
            f"uncertified: needs {row.more_pairs_needed} more audited pairs" if row.more_pairs_needed
            else "uncertified: agreement too low"
        )  # fmt: skip
        guaranteed = f"{row.guaranteed_agreement:.3f}" if row.guaranteed_agreement is not None else "-"
        coverage = f"{row.coverage:.3f}" if row.coverage is not None else "-"
        lines.append(
            f"{row.key:<20} {judgments[:34]:<34} {str(row.day or '-'):<10} {row.threshold:>9.2f} {guaranteed:>10} "
            f"{coverage:>8} {row.pairs:>6} {row.kept:>5} {row.agreeing:>5}  {status}"
        )
    return "\n".join(lines)
