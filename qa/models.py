from __future__ import annotations

import bisect
import os
import uuid
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import PurePath
from decimal import Decimal
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import F, FloatField, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from access.querysets import ScopedManager, ScopePaths
from access.models import Workspace
from core.hosts import HostNotAllowed, host_listed
from rubrics.models import Criterion, Rubric
from qa.costs import call_cost


# The review queue's sort key: the lowest confidence, and above any confidence (0..1) for a call
# without one, so those come last. Indexed as an expression (with the status and id) so a page
# after any position is one index range however deep it is (reviews.selectors.queue_page).
QUEUE_ORDER_KEY = Coalesce("lowest_confidence", Value(2.0), output_field=FloatField())
# The queue sorted by the judge's quality score, lowest first; calls without one (0..100) after the rest.
QUALITY_ORDER_KEY = Coalesce("quality_score", Value(101.0), output_field=FloatField())


def audio_folder(moment: datetime) -> str:
    """Where audio stored at `moment` goes: one folder a month."""
    return f"recordings/{moment:%Y/%m}"


def audio_upload_to(recording: Recording, filename: str) -> str:
    # A fresh name: the client's file name is theirs, and may say who called.
    return f"{audio_folder(timezone.now())}/{uuid.uuid4().hex}{PurePath(filename).suffix.lower()[:8]}"



class Recording(models.Model):
    """One call (or chat, or email thread) with its verbatim transcript."""

    class Status(models.TextChoices):
        RECEIVED = "received", _("Received")
        TRANSCRIBING = "transcribing", _("Transcribing")
        QUEUED = "queued", _("Queued")
        JUDGING = "judging", _("Judging")
        JUDGED = "judged", _("Judged")
        IN_REVIEW = "in_review", _("In review")
        REVIEWED = "reviewed", _("Reviewed")
        FAILED = "failed", _("Failed")

    class Channel(models.TextChoices):
        VOICE = "voice", _("Voice")
        CHAT = "chat", _("Chat")
        EMAIL = "email", _("Email")

    class TranscriptSource(models.TextChoices):
        ASR = "asr", _("Speech recognition")
        HUMAN = "human", _("Human transcription")
        IMPORT = "import", _("Import")

    class ReviewReason(models.TextChoices):
        # A new reason is a flag unless qa.routing.review_group says otherwise.
        UNVERIFIED_EVIDENCE = "unverified_evidence", _("Unverified evidence")
        LOW_CONFIDENCE = "low_confidence", _("Low confidence")
        WARM_UP = "warm_up", _("Warm-up")
        RANDOM_AUDIT = "random_audit", _("Random audit")
        UNKNOWN_SPEAKER = "unknown_speaker", _("Unknown speaker")
        UNSTABLE = "unstable", _("Unstable")
        # The transcript holds instruction-like text addressed to a model (qa.injection).
        POSSIBLE_INJECTION = "possible_injection", _("Possible injection")
        # A critical criterion's verified value fails the call (rubrics.quality), unless the rubric says not to route it.
        AUTO_FAIL = "auto_fail", _("Auto-fail")
        # A verified value's confidence is below its criterion's certified threshold (routing with a guarantee).
        BELOW_CERTIFIED = "below_certified", _("Below the certified threshold")

    external_id = models.CharField(_("external id"), max_length=200)
    source = models.CharField(_("source"), max_length=100, help_text=_("The system that sent it."))
    agent_id = models.CharField(_("agent id"), max_length=100, blank=True, db_index=True)
    agent_name = models.CharField(_("agent name"), max_length=200, blank=True)
    # The name of an access.Team of the recording's workspace (created on ingest): supervisors' scopes
    # name teams, and the API keeps a team a name.
    team = models.CharField(_("team"), max_length=100, blank=True, db_index=True)
    channel = models.CharField(_("channel"), max_length=10, choices=Channel.choices, default=Channel.VOICE)
    language = models.CharField(_("language"), max_length=10, blank=True)
    # Every dated view filters on this, so ingest always sets it: to the time received when the call's own
    # time was not sent (`occurred_at_received`), which the call's page shows as such.
    occurred_at = models.DateTimeField(_("occurred at"), null=True, blank=True)
    occurred_at_received = models.BooleanField(
        _("time received"),
        default=False,
        db_default=False,
        help_text=_("The call's own time was not sent: its time is when it was received."),
    )
    duration_seconds = models.PositiveIntegerField(_("duration (s)"), null=True, blank=True)
    transcript = models.TextField(_("transcript"), help_text=_("Verbatim, one 'SPEAKER: text' line per turn."))
    turns = models.JSONField(
        _("turns"), null=True, blank=True, help_text=_("Structured turns: speaker, text, start_ms, end_ms.")
    )
    transcript_source = models.CharField(
        _("transcript provenance"), max_length=10, choices=TranscriptSource.choices, default=TranscriptSource.IMPORT
    )
    content_hash = models.CharField(
        max_length=64, help_text=_("Hash of the posted content, to tell a retry from a conflicting resend.")
    )
    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="recordings")
    # The rubric's workspace, kept on the row so that every scoped read (access.scope.recordings_q)
    # filters this table alone, with the team, by one index.
    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="recordings", editable=False)
    status = models.CharField(_("status"), max_length=20, choices=Status.choices, default=Status.RECEIVED)
    # The call's audio, when it came as audio: its transcript is the recognizer's.
    # Database defaults too, for rows written outside the ORM (the benchmarks' generators).
    audio = models.FileField(_("audio"), upload_to=audio_upload_to, blank=True, db_default="")
    audio_channels = models.PositiveSmallIntegerField(_("audio channels"), null=True, blank=True)
    # The channel map (qa.audio.channel_map_check): `left`/`right` in two-channel
    # audio, where the customer is on the other; channel numbers with more.
    agent_channel = models.CharField(
        _("agent's channel"), max_length=5, blank=True,
        help_text=_("The channel the agent is on: left or right in two-channel audio, its number (from 1) with more."),
        db_default="",
    )
    customer_channel = models.CharField(
        _("customer's channel"), max_length=5, blank=True,
        help_text=_("With more than two channels, the number of the one the customer is on."),
        db_default="",
    )
    # False when a mono recording was transcribed without diarization: every
    # turn has the unknown speaker, and speaker-dependent scores can't be trusted.
    speakers_known = models.BooleanField(_("speakers known"), default=True, db_default=True)
    failure_reason = models.TextField(_("failure reason"), blank=True)
    # The run whose scores are the recording's current result (the latest
    # successful one); kept here so lists and the queue need no subquery.
    current_run = models.ForeignKey(
        "JudgeRun", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    needs_review = models.BooleanField(_("needs review"), default=False)
    # The lowest score confidence of current_run, set with the routing: the
    # review queue is ordered by it, and a stored, indexed column keeps that
    # fast with tens of thousands of calls queued (bench/review/README.md).
    lowest_confidence = models.FloatField(_("lowest confidence"), null=True, blank=True)
    review_reasons = models.JSONField(_("review reasons"), default=list, blank=True)
    # current_run's quality score over the judge's values that exist (rubrics.quality, partial), set with the
    # routing: the queue sorts by it. Null: no value exists at all (and no auto-fail zeroes the call).
    quality_score = models.FloatField(_("quality score"), null=True, blank=True)
    # How many criteria the score does not cover (their value does not exist): the pages say so beside it.
    quality_missing = models.PositiveSmallIntegerField(_("criteria without a value"), default=0, db_default=0)
    auto_failed = models.BooleanField(_("auto-failed"), default=False, db_default=False)
    # current_run's value per criterion key (null: the judge's N/A), set with it: the scorecards sum
    # these 100,000 rows rather than group 1.2 million scores (bench/scorecards/README.md).
    current_values = models.JSONField(_("current values"), null=True, blank=True)
    # Set wherever the values the scorecards sum change (the current run's, or a review's human values):
    # the scorecards' weekly rollup then reads this call's agent-week again before it is next summed
    # (insights.scorecards.services.scorecard_weeks_refresh). Default too for rows written as SQL.
    rollup_stale = models.BooleanField(default=False, db_default=False, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # What its rows show of a workspace to whom: Model.objects.visible_to(scope) (access.querysets).
    scope_paths = ScopePaths.of_calls()
    objects = ScopedManager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("recording")
        verbose_name_plural = _("recordings")
        constraints = [
            # Per workspace: one client's system cannot take, or learn of, another's external ids.
            models.UniqueConstraint(
                fields=["workspace", "source", "external_id"], name="recording_external_id_unique_in_workspace"
            ),
        ]
        indexes = [
            models.Index(fields=["workspace", "team"], name="qa_recording_workspace_team"),
            models.Index(fields=["status", "created_at"]),
            models.Index(fields=["needs_review", "status"]),
            models.Index(F("status"), QUEUE_ORDER_KEY, F("id"), name="qa_recording_queue_key"),
            models.Index(F("status"), QUALITY_ORDER_KEY, F("id"), name="qa_recording_quality_key"),
            models.Index(fields=["rubric", "occurred_at"]),
            # The few calls the rollup must read again, among a rubric's hundred thousand.
            models.Index(fields=["rubric"], condition=Q(rollup_stale=True), name="qa_recording_rollup_stale"),
        ]

    def save(self, *args, **kwargs) -> None:
        # The denormalised workspace follows the rubric on every path that saves one row (the services,
        # the admin, a shell, a test); bulk writes set it themselves (qa.services.recording_prepare).
        if self.rubric_id is not None:
            self.workspace_id = self.rubric.workspace_id
        super().save(*args, **kwargs)

    def __str__(self) -> str:
        return f"{self.source}/{self.external_id}"

    @property
    def ignored_channels(self) -> list[int]:
        """The audio's channels that its channel map does not name: they were not transcribed."""
        if (self.audio_channels or 0) <= 2:
            return []
        named = {int(self.agent_channel), int(self.customer_channel)}
        return [number for number in range(1, self.audio_channels + 1) if number not in named]

    def quote_time_span(self, spans: Sequence[Sequence[int]]) -> tuple[int, int] | None:
        """The stretch of audio (start_ms, end_ms) that a quote's character spans cover, from the
        recognizer's word times; None when the transcript has no timing to go by."""
        [times] = self.fragment_times([spans])
        covered = [time for time in times if time is not None]
        if not covered:
            return None
        return min(start for start, _ in covered), max(end for _, end in covered)

    def fragment_times(self, quotes: Sequence[Sequence[Sequence[int]]]) -> list[list[tuple[int, int] | None]]:
        """For each quote's character spans, each span's audio (start_ms, end_ms): from the words it
        covers where the turns keep word times, else from its turns' times; None where nothing it
        covers is timed, or the turns do not render to the transcript (no offset could be trusted).
        The turns are read once for all the quotes."""
        timed = self._timed_ranges()
        ends = [end for _, end, _, _ in timed]
        result = []
        for spans in quotes:
            times: list[tuple[int, int] | None] = []
            for span_start, span_end in spans:
                covered = []
                at = bisect.bisect_right(ends, span_start)  # the first timed piece ending after the span's start
                while at < len(timed) and timed[at][0] < span_end:
                    covered.append(timed[at][2:])
                    at += 1
                times.append((min(start for start, _ in covered), max(end for _, end in covered)) if covered else None)
            result.append(times)
        return result

    def _timed_ranges(self) -> list[tuple[int, int, int, int]]:
        """(start, end) in the transcript and (start_ms, end_ms) of each timed piece of the rendered
        turns, in order; empty without turns, or when they do not render to the stored transcript."""
        if not self.turns:
            return []
        timed = list(_timed_pieces(self.turns))
        if "".join(text for text, *_ in timed) != self.transcript:
            return []
        ranges = []
        offset = 0
        for text, start_ms, end_ms in timed:
            end = offset + len(text)
            if start_ms is not None and end_ms is not None:
                ranges.append((offset, end, start_ms, end_ms))
            offset = end
        return ranges


def _timed_pieces(turns: list[dict]) -> Iterator[tuple[str, int | None, int | None]]:
    """The transcript rendered from structured turns (as qa.services.turns_render does) in pieces,
    each with its time: every word with its own, a turn without words with the turn's, labels with none."""
    for turn in turns:
        yield f"{turn['speaker']}: ", None, None
        words = turn.get("words") or []
        if words:
            for index, word in enumerate(words):
                yield ("" if index == 0 else " "), None, None
                yield word["word"], word["start_ms"], word["end_ms"]
        else:
            yield turn["text"], turn.get("start_ms"), turn.get("end_ms")
        yield "\n", None, None


# Where a judge without a base URL sends its calls (the openai client's default).
OPENAI_API_HOST = "api.openai.com"


class JudgeQuerySet(models.QuerySet):
    def default(self) -> Judge | None:
        """The judge production uses; None: the environment's."""
        return self.filter(is_default=True).first()

    def default_id(self) -> Subquery:
        """The default judge's id (or NULL) as a subquery: an insert of runs takes it in the same
        statement, without a round trip of its own."""
        return Subquery(self.filter(is_default=True).values("pk")[:1])


class Judge(models.Model):
    """A named judge configuration. Production uses the one marked default, or,
    with none marked, the judge the environment configures (OPENAI_* and QA_*
    variables), so a fresh installation needs no row here."""

    class Backend(models.TextChoices):
        LOCAL = "local", _("The bundled local model")
        GGUF = "gguf", _("A local GGUF file")
        OPENAI_COMPATIBLE = "openai-compatible", _("An OpenAI-compatible server")

    MAX_SAMPLES = 9

    name = models.SlugField(_("name"), max_length=100, unique=True)
    backend = models.CharField(_("backend"), max_length=20, choices=Backend.choices, default=Backend.OPENAI_COMPATIBLE)
    model = models.CharField(_("model"), max_length=200, blank=True, help_text=_("Required for a server."))
    base_url = models.URLField(
        _("base URL"), blank=True, help_text=_("The server's OpenAI-compatible base URL; blank: OpenAI's own API.")
    )
    gguf_path = models.CharField(_("GGUF file"), max_length=500, blank=True)
    api_key_variable = models.CharField(
        _("API key variable"),
        max_length=100,
        blank=True,
        validators=[RegexValidator(r"^[A-Z_][A-Z0-9_]*$", _("An environment variable name, e.g. JUDGE_GPT_KEY."))],
        help_text=_("The NAME of the environment variable holding the key; the key itself is never stored."),
    )
    temperature = models.FloatField(
        _("temperature"), default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(2.0)]
    )
    samples = models.PositiveSmallIntegerField(
        _("samples"),
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_SAMPLES)],
        help_text=_(
            "Calls per recording; the stored value is their median. More than one needs a temperature above 0."
        ),
    )
    prompt_price = models.DecimalField(
        _("price per million prompt tokens"), max_digits=10, decimal_places=4, null=True, blank=True
    )
    completion_price = models.DecimalField(
        _("price per million completion tokens"), max_digits=10, decimal_places=4, null=True, blank=True
    )
    # Issue 45: a provider bills the prompt tokens it read from its cache at a lower price (OpenAI a
    # tenth to a half, Anthropic a tenth), and a batch at a discount (OpenAI's Batch API: 50%).
    cached_prompt_price = models.DecimalField(
        _("price per million cached prompt tokens"),
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        help_text=_("Blank: cached prompt tokens cost the prompt price."),
    )
    batch_discount = models.DecimalField(
        _("batch discount (%)"),
        max_digits=5,
        decimal_places=2,
        default=0,
        validators=[MinValueValidator(0), MaxValueValidator(100)],
        help_text=_("Taken off every price of a call sent in a batch (50 at OpenAI)."),
    )
    is_default = models.BooleanField(_("production default"), default=False)
    # Issue 45: in batch mode production's runs go to the provider's Batch API (qa.batching) at its
    # discount, answered within its completion window instead of at once.
    mode = models.CharField(
        _("mode"),
        max_length=10,
        choices=[("sync", _("One call at a time, at once")), ("batch", _("In batches, within a day, at the batch price"))],
        default="sync",
        db_default="sync",
    )
    # How the judge gives its evidence (qa.answer, qa.llm.evidence_mode_resolve).
    evidence_mode = models.CharField(
        _("evidence mode"),
        max_length=10,
        choices=[
            ("auto", _("Automatic: turn references for OpenAI's API, quotes for every other server")),
            ("quote", _("Quotes of the transcript")),
            ("reference", _("Turn references")),
        ],
        default="auto",
        help_text=_(
            "Turn references: the judge cites turns by number, and a server that follows the schema cannot cite "
            "one that does not exist. Automatic: references for OpenAI's API; quotes for the local model, which "
            "quotes better than it counts turns, and for other servers."
        ),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = JudgeQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = _("judge")
        verbose_name_plural = _("judges")
        constraints = [
            models.UniqueConstraint(fields=["is_default"], condition=Q(is_default=True), name="one_default_judge"),
            models.CheckConstraint(condition=Q(samples__gte=1), name="judge_samples_positive"),
            models.CheckConstraint(
                condition=Q(samples=1) | Q(temperature__gt=0), name="judge_samples_need_temperature"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors = {}
        if self.samples and self.samples > 1 and not self.temperature:
            errors["temperature"] = _("Several samples of the same answer at temperature 0 would all be the same.")
        if self.backend == self.Backend.OPENAI_COMPATIBLE and self.base_url and not self.model:
            errors["model"] = _("Name the model the server serves.")
        if self.backend == self.Backend.GGUF and not self.gguf_path:
            errors["gguf_path"] = _("Give the path of the GGUF file.")
        if self.mode == "batch" and self.backend != self.Backend.OPENAI_COMPATIBLE:
            errors["mode"] = _("Only a server judge can take batches: a local model answers at once.")
        for field, message in self.leak_problems().items():
            errors.setdefault(field, message)
        if errors:
            raise ValidationError(errors)

    @property
    def server_host(self) -> str:
        """The host this judge's calls (and key) go to: its base URL's, OpenAI's API without one."""
        if not self.base_url:
            return OPENAI_API_HOST
        # A backslash, a space or a control character can make two URL parsers disagree on the host
        # (the admin's validator refuses them; a row written otherwise is not trusted).
        if any(char == "\\" or char.isspace() or not char.isprintable() for char in self.base_url):
            return ""
        return (urlsplit(self.base_url).hostname or "").lower()

    @property
    def server_port(self) -> int:
        """The port of server_host: the base URL's, else its scheme's (443 for OpenAI's API); 0 if unreadable."""
        if not self.base_url:
            return 443
        try:
            parts = urlsplit(self.base_url)
            return parts.port or (80 if parts.scheme == "http" else 443)
        except ValueError:
            return 0

    def leak_problems(self) -> dict[str, str]:
        """What in this judge the operator did not allow, by field: a key variable outside
        QA_JUDGE_KEY_VARIABLES, a server outside QA_JUDGE_ALLOWED_HOSTS. A rubric owner edits judges,
        but the environment's variables (SECRET_KEY among them) and where transcripts may go are the
        operator's: without these lists a judge could send any variable to any URL."""
        problems = {}
        if self.api_key_variable and self.api_key_variable not in settings.QA_JUDGE_KEY_VARIABLES:
            problems["api_key_variable"] = _(
                "%(name)s is not a key variable the operator allowed: add it to QA_JUDGE_KEY_VARIABLES "
                "or pick one of: %(allowed)s."
            ) % {"name": self.api_key_variable, "allowed": ", ".join(settings.QA_JUDGE_KEY_VARIABLES) or "-"}
        # Only a server judge calls out; the local backends use neither field. The check is by name
        # (core.hosts.host_listed), not core.hosts.url_target's pinned address: the `openai` client
        # resolves and connects by itself through httpx, which takes no address to connect to short of
        # a network backend of our own, and the servers operators list for judges are mostly on
        # loopback or the private network, which a check of the resolved addresses would refuse unless
        # each address were listed again with its port. What this list guards is where a rubric owner
        # may send transcripts and a key; the names on it are the operator's.
        if self.backend == self.Backend.OPENAI_COMPATIBLE:
            try:
                listed = host_listed(
                    self.server_host, port=self.server_port, allowed=settings.QA_JUDGE_ALLOWED_HOSTS,
                    setting="QA_JUDGE_ALLOWED_HOSTS",
                )  # fmt: skip
            except HostNotAllowed as error:  # an entry that is not one
                problems["base_url"] = str(error)
            else:
                if not listed:
                    problems["base_url"] = _(
                        "The host %(host)s is not one the operator allowed judges to call: add it to "
                        "QA_JUDGE_ALLOWED_HOSTS or pick one of: %(allowed)s."
                    ) % {"host": self.server_host or "-", "allowed": ", ".join(settings.QA_JUDGE_ALLOWED_HOSTS) or "-"}
        return problems

    @property
    def unavailable_reason(self) -> str:
        """Why this judge cannot be used now ("" when it can): a key variable or host the operator did
        not allow (checked again here, where every use of a judge asks, so a row stored before the
        rule, or edited outside the admin, cannot leak), or its key variable is unset."""
        if problems := self.leak_problems():
            return " ".join(problems.values())
        if self.api_key_variable and not os.environ.get(self.api_key_variable):
            return _("The environment variable %(name)s that holds this judge's key is not set.") % {
                "name": self.api_key_variable
            }
        return ""

    @property
    def api_key(self) -> str:
        return os.environ.get(self.api_key_variable, "") if self.api_key_variable else ""

    def cost(
        self, *, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, batch: bool = False
    ) -> Decimal | None:
        """Estimated cost of this many tokens (qa.costs.call_cost); None without prices."""
        return call_cost(
            judge=self, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
            cached_tokens=cached_tokens, batch=batch,
        )  # fmt: skip


class JudgeRun(models.Model):
    """One LLM judgment of one recording. Re-judging adds a run; none is ever rewritten."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")

    recording = models.ForeignKey(Recording, on_delete=models.CASCADE, related_name="runs")
    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="runs")
    # None: the environment's judge (no judge row marked default when the run was created).
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, null=True, blank=True, related_name="runs")
    backend = models.CharField(_("backend"), max_length=50, blank=True)
    model = models.CharField(_("model"), max_length=200, blank=True)
    prompt_version = models.CharField(_("prompt version"), max_length=64, blank=True)
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # The claim's lease (core.jobs): once past, the sweep takes the run back from its worker.
    leased_until = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    llm_duration_ms = models.PositiveIntegerField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    # Of prompt_tokens, those the server read from its prompt cache (billed at the cached price);
    # None where the server does not report it.
    cached_tokens = models.PositiveIntegerField(_("cached prompt tokens"), null=True, blank=True)
    raw_output = models.TextField(_("raw model output"), blank=True)
    error = models.TextField(_("error"), blank=True)
    # Among the first judgments of its rubric version, prompt version and
    # model (qa.routing.run_in_warm_up), set when the run succeeds; kept so
    # re-routing after a re-verification keeps the reason.
    # Also a database default: the benchmarks' generators insert runs with SQL.
    warm_up = models.BooleanField(_("warm-up"), default=False, db_default=False)
    # Judged through a provider's batch (qa.batching), at the judge's batch discount.
    batched = models.BooleanField(_("batched"), default=False, db_default=False)
    # The batch that has or had it (its latest: a line that failed goes back to be batched again).
    batch = models.ForeignKey("JudgeBatch", on_delete=models.SET_NULL, null=True, blank=True, related_name="runs")

    # What its rows show of a workspace to whom: Model.objects.visible_to(scope) (access.querysets).
    scope_paths = ScopePaths.of_calls("recording__")
    objects = ScopedManager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("judge run")
        verbose_name_plural = _("judge runs")
        constraints = [
            # A duplicated or redelivered task can never start a second
            # concurrent judgment of the same recording.
            models.UniqueConstraint(
                fields=["recording"], condition=Q(status__in=["pending", "running"]), name="one_active_run_per_recording"
            ),
        ]
        indexes = [models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.recording_id} ({self.status})"

    @property
    def total_tokens(self) -> int:
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)

    @property
    def cost(self) -> Decimal | None:
        """What this run's calls cost at its judge's prices; None without a priced judge or any tokens."""
        if self.judge is None or self.prompt_tokens is None:
            return None
        return self.judge.cost(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens or 0,
            cached_tokens=self.cached_tokens or 0,
            batch=self.batched,
        )


class JudgeBatch(models.Model):
    """Runs of one batch-mode judge sent as one provider batch (qa.batching): a job of core.jobs whose
    steps are submit (upload the JSONL, create the batch), poll, and ingest the results."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")

    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="batches")
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    leased_until = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(_("error"), blank=True)
    requests = models.PositiveIntegerField(_("requests"), default=0)
    input_file_id = models.CharField(_("input file"), max_length=200, blank=True)
    provider_batch_id = models.CharField(_("provider's batch"), max_length=200, blank=True)
    provider_status = models.CharField(_("provider's status"), max_length=20, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("judge batch")
        verbose_name_plural = _("judge batches")
        indexes = [models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return f"batch {self.pk} of {self.judge_id} ({self.status}, {self.provider_status or 'not submitted'})"


# How a score whose quote was not verified is marked wherever it is shown or exported. Bilingual on
# purpose: the mark must survive any UI language and any copy of a page or export.
UNVERIFIED_MARK = "NO VERIFICADA / NOT VERIFIED"


class Score(models.Model):
    """The judge's answer for one criterion, after its evidence was verified."""

    # On PostgreSQL the database's key is the composite (run_id, run_created_at) -> the run's (id, created_at)
    # (qa migration 0025), which also keeps the partition key equal to the run's; Django's one-column
    # constraint would reference a key the partitioned table cannot have.
    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="scores", db_constraint=False)
    # The partition key (docs/operations/storage.md): the run's created_at, set on every insert path
    # (`save` here; bulk writes pass it, as qa.execution does).
    run_created_at = models.DateTimeField(editable=False)
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="scores")
    # None: the criterion does not apply to this call, under one of its
    # "not applicable" exceptions (the evidence quotes why).
    value = models.SmallIntegerField(_("value"), null=True, blank=True)
    confidence = models.FloatField(_("confidence"), help_text=_("After verification: 0 when the quote is not verified."))
    model_confidence = models.FloatField(_("model's confidence"))
    evidence = models.TextField(_("evidence"), blank=True, help_text=_("Exactly as the model returned it."))
    evidence_verified = models.BooleanField(_("evidence verified"), default=False)
    verification_status = models.CharField(_("verification status"), max_length=20)
    verification_spans = models.JSONField(_("matched spans"), default=list, blank=True)
    verification_closest = models.JSONField(_("closest passage"), null=True, blank=True)
    verifier_version = models.CharField(_("verifier version"), max_length=20)
    rationale = models.TextField(_("rationale"), blank=True)
    # With a judge taking several samples: every sample's value, and whether they disagree by more than a point.
    # Database defaults too, so the benchmarks' bulk SQL inserts need not name them.
    sample_values = models.JSONField(_("sample values"), null=True, blank=True)
    unstable = models.BooleanField(_("unstable"), default=False, db_default=False)

    # What its rows show of a workspace to whom: Model.objects.visible_to(scope) (access.querysets).
    scope_paths = ScopePaths.of_calls("run__recording__")
    objects = ScopedManager()

    class Meta:
        ordering = ["criterion__order", "criterion_id"]
        verbose_name = _("score")
        verbose_name_plural = _("scores")
        constraints = [
            # With the partition key, which a run has one of: still one score per criterion per run.
            models.UniqueConstraint(fields=["run", "criterion", "run_created_at"], name="score_one_per_criterion_per_run"),
            models.CheckConstraint(condition=Q(confidence__gte=0, confidence__lte=1), name="score_confidence_unit"),
        ]

    # Where its partition is: qa migration 0025, core.partitions.
    partition_key = "run_created_at"

    def save(self, *args, **kwargs) -> None:
        if self.run_created_at is None:
            # The stored run's, not a maybe older instance's: the composite key checks it against the row.
            self.run_created_at = JudgeRun._base_manager.filter(pk=self.run_id).values_list("created_at", flat=True).get()
        super().save(*args, **kwargs)

    def __str__(self) -> str:
        return f"{self.criterion.key}={self.value} ({self.confidence:.2f})"

    @property
    def value_exists(self) -> bool:
        """Does the judge's value exist: see `judge_value_exists`."""
        return judge_value_exists(evidence_verified=self.evidence_verified)


# Does the judge's value exist (docs/dev/design.md): only when its quote verified. An unverified value is
# shown, marked, but is no value: it never counts as the judge's number in a scorecard, a call's quality
# score or an approve. This is the one answer: `judge_value_exists` (or `Score.value_exists`) for a row,
# `JUDGE_VALUE_EXISTS` inside a query on scores; nothing else tests `evidence_verified` for that.
JUDGE_VALUE_EXISTS = Q(evidence_verified=True)


def judge_value_exists(*, evidence_verified: bool) -> bool:
    return bool(evidence_verified)


def values_by_key(scores: Iterable[Score]) -> dict[str, int | None]:
    """A run's values per criterion key, as Recording.current_values keeps them."""
    return {score.criterion.key: score.value for score in scores}


class Transcription(models.Model):
    """One transcription of a recording's audio. Like a judge run, it is claimed,
    retried after transient failures, and kept with its reason when it fails."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")

    recording = models.ForeignKey(Recording, on_delete=models.CASCADE, related_name="transcriptions")
    backend = models.CharField(_("backend"), max_length=50, blank=True)
    model = models.CharField(_("model"), max_length=200, blank=True)
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # The claim's lease (core.jobs), renewed while the recognizer runs: once past, the sweep takes it back.
    leased_until = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Whether the judgment is enqueued once the transcript is stored (the sample loader says no).
    judge_after = models.BooleanField(default=True)
    audio_seconds = models.FloatField(_("audio (s)"), null=True, blank=True)
    duration_ms = models.PositiveIntegerField(_("took (ms)"), null=True, blank=True)
    error = models.TextField(_("error"), blank=True)

    # What its rows show of a workspace to whom: Model.objects.visible_to(scope) (access.querysets).
    scope_paths = ScopePaths.of_calls("recording__")
    objects = ScopedManager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("transcription")
        verbose_name_plural = _("transcriptions")
        constraints = [
            models.UniqueConstraint(
                fields=["recording"],
                condition=Q(status__in=["pending", "running"]),
                name="one_active_transcription_per_recording",
            ),
        ]
        indexes = [models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return f"transcription {self.pk} of {self.recording_id} ({self.status})"


# The redactor's models (qa/redaction/models.py) belong to this app: imported here so Django registers them.
from qa.redaction.models import RecordingRedaction, RedactionPolicy  # noqa: E402,F401


class CertifiedThreshold(models.Model):
    """A criterion's routing threshold for one day, as the random audit certified it (the routing app computes it
    from the audit's pairs with the human reference; qa's routing only reads it).

    One row per (rubric version, criterion, judge, model, prompt version, day), written once and never changed, so
    a call's routing can be explained afterwards: the row of the day its run finished (or the latest before) is the
    one it was routed by. `threshold` None: nothing certified (too few audited pairs, or too much disagreement),
    so the rubric's fixed threshold applies and `more_pairs_needed` says how far the audit is from certifying."""

    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="certified_thresholds")
    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="certified_thresholds")
    # The judge row's name, "" for the environment's judge (JudgeRun.judge None); with the model and prompt version
    # it names the judgments the certificate is about: a change of any starts uncertified.
    judge_name = models.CharField(_("judge"), max_length=100, blank=True)
    model = models.CharField(_("model"), max_length=200, blank=True)
    prompt_version = models.CharField(_("prompt version"), max_length=64, blank=True)
    day = models.DateField(_("day"))
    threshold = models.FloatField(_("certified threshold"), null=True, blank=True)
    target = models.FloatField(_("agreement target"))
    risk = models.FloatField(_("agreement risk"))
    tolerance = models.CharField(_("agreement tolerance"), max_length=10)
    pairs = models.PositiveIntegerField(_("audited pairs"))
    kept = models.PositiveIntegerField(_("audited values kept"))
    agreeing = models.PositiveIntegerField(_("kept values agreeing"))
    lower_bound = models.FloatField(_("guaranteed agreement"), null=True, blank=True)
    coverage = models.FloatField(_("coverage"))
    more_pairs_needed = models.PositiveIntegerField(_("more audited pairs needed"))
    computed_at = models.DateTimeField(_("computed at"), auto_now_add=True)

    class Meta:
        ordering = ["-day", "criterion__order", "criterion_id"]
        verbose_name = _("certified threshold")
        verbose_name_plural = _("certified thresholds")
        constraints = [
            # Frozen per day: the beat's second pass of a day finds its row and writes nothing.
            models.UniqueConstraint(
                fields=["rubric", "criterion", "judge_name", "model", "prompt_version", "day"],
                name="certified_threshold_one_per_day",
            ),
            models.CheckConstraint(
                condition=Q(threshold__isnull=True) | Q(threshold__gte=0, threshold__lte=1),
                name="certified_threshold_unit",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.criterion.key} {self.day}: {self.threshold}"


def judge_name_of(run: JudgeRun) -> str:
    """The name a certificate knows a run's judge by: its row's, or "" for the environment's judge."""
    return run.judge.name if run.judge_id is not None else ""
