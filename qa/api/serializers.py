"""Parse requests into service arguments and shape responses; no decisions here.

Validation that needs the database or the domain (a rubric's status, a
transcript's speaker turns, a score's scale) happens in the services, which
raise InvalidInputError with the same per-field shape.
"""

from __future__ import annotations

import copy
from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.reverse import reverse

from qa.api.recording_input import AGENT_INVALID, BATCH_MAX, INT32_MAX, rubric_published
from core.api.schema import ErrorSerializer
from qa.evidence import Status as EvidenceStatus
from qa.evidence import references_parse
from qa.models import JudgeRun, Recording, Score
from qa.quality import judge_quality
from qa.selectors import RecordingFilters, recording_turns, score_fragments
from qa.services import Turn
from rubrics.models import Rubric


# --- Input -------------------------------------------------------------------


class StringField(serializers.CharField):
    """A string and only a string, as the schema's `type: string` says: DRF's CharField would
    store a JSON number such as 0 or 1.5 as the text "0" or "1.5"."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class AgentInputSerializer(serializers.Serializer):
    id = StringField(max_length=100)
    name = StringField(max_length=200, required=False, allow_blank=True, default="")


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "minLength": 1, "maxLength": 100, "description": "The agent's id."},
            {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "minLength": 1, "maxLength": 100},
                    "name": {"type": "string", "maxLength": 200},
                },
                "required": ["id"],
            },
        ]
    }
)
class AgentField(serializers.Field):
    """`{"id": ..., "name": ...}` or just the id as a string; parsed to (id, name)."""

    default_error_messages = {"invalid": AGENT_INVALID}

    def to_internal_value(self, data: Any) -> tuple[str, str]:
        if isinstance(data, str):
            data = {"id": data}
        elif not isinstance(data, dict):
            self.fail("invalid")
        agent = AgentInputSerializer(data=data)
        agent.is_valid(raise_exception=True)
        return agent.validated_data["id"], agent.validated_data["name"]

    def to_representation(self, value: tuple[str, str]) -> dict[str, str]:
        return {"id": value[0], "name": value[1]}


class TurnSerializer(serializers.Serializer):
    speaker = StringField(max_length=100)
    text = StringField(trim_whitespace=False)
    start_ms = serializers.IntegerField(min_value=0, required=False, allow_null=True)
    end_ms = serializers.IntegerField(min_value=0, required=False, allow_null=True)

    def to_internal_value(self, data: Any) -> Turn:
        return Turn(**super().to_internal_value(data))


class RecordingIngestSerializer(serializers.Serializer):
    """The single post's body in the schema, and its parser for multipart bodies (audio); JSON bodies
    and batch items go through `qa.api.recording_input`, held to the same answers by its tests."""

    external_id = StringField(max_length=200, help_text=_("Your id for the call; unique per source."))
    source = StringField(
        max_length=100,
        required=False,
        help_text=_("The sending system. Defaults to the API key's name ('web' for a browser session)."),
    )
    rubric = serializers.SlugField(max_length=100, help_text=_("Rubric slug; its latest published version is used."))
    agent = AgentField(required=False)
    team = StringField(max_length=100, required=False, allow_blank=True)
    channel = serializers.ChoiceField(choices=Recording.Channel.choices, required=False)
    language = StringField(max_length=10, required=False, allow_blank=True)
    occurred_at = serializers.DateTimeField(required=False, allow_null=True)
    duration_seconds = serializers.IntegerField(min_value=0, max_value=INT32_MAX, required=False, allow_null=True)
    transcript = StringField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,  # verbatim: evidence offsets point into this exact text
        help_text=_("Verbatim text, one 'SPEAKER: text' line per turn. Send this or `turns`."),
    )
    turns = TurnSerializer(many=True, required=False, allow_empty=True, help_text=_("Send this or `transcript`."))
    audio = serializers.FileField(
        required=False,
        allow_empty_file=True,  # an empty file is refused by the audio check, with its own message
        help_text=_(
            "The call's audio instead of a transcript (multipart/form-data): WAV, FLAC, MP3, OGG/Opus or M4A, mono, "
            "two channels, or more with a channel map (`agent_channel` and `customer_channel`). It is transcribed, "
            "then judged."
        ),
    )
    agent_channel = serializers.CharField(
        max_length=5,
        required=False,
        allow_blank=True,
        help_text=_(
            "The channel the agent is on: `left`, `right` or its number from 1 (`left` is 1). In two-channel audio "
            "the default is the QA_AGENT_CHANNEL setting; with more channels it is required."
        ),
    )
    customer_channel = serializers.CharField(
        max_length=5,
        required=False,
        allow_blank=True,
        help_text=_(
            "The channel the customer is on, named as `agent_channel`: required with more than two channels (the "
            "others are not transcribed); in two-channel audio it is the one that is not the agent's."
        ),
    )
    transcript_source = serializers.ChoiceField(choices=Recording.TranscriptSource.choices, required=False)

    def validate_rubric(self, slug: str) -> Rubric:
        return rubric_published(slug, self.context["scope"])

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        """The keyword arguments of `recording_ingest`, except `source` when not sent."""
        values = super().to_internal_value(data)
        if "agent" in values:
            values["agent_id"], values["agent_name"] = values.pop("agent")
        return values


class RecordingFilterSerializer(serializers.Serializer):
    """Query parameters; an empty value filters nothing, as in `?team=`."""

    status = serializers.ChoiceField(choices=Recording.Status.choices, required=False, allow_blank=True)
    rubric = serializers.SlugField(required=False, allow_blank=True, help_text=_("Rubric slug (any version)."))
    agent = serializers.CharField(required=False, allow_blank=True, help_text=_("Agent id."))
    team = serializers.CharField(required=False, allow_blank=True)
    needs_review = serializers.BooleanField(required=False, allow_null=True, default=None)
    source = serializers.CharField(required=False, allow_blank=True)
    external_id = serializers.CharField(required=False, allow_blank=True)
    occurred_after = serializers.DateTimeField(required=False, help_text=_("occurred_at on or after."))
    occurred_before = serializers.DateTimeField(required=False, help_text=_("occurred_at before."))

    def to_internal_value(self, data: Any) -> RecordingFilters:
        return RecordingFilters(**super().to_internal_value(data))


# --- Output ------------------------------------------------------------------


class AgentSerializer(serializers.Serializer):
    id = serializers.CharField(source="agent_id")
    name = serializers.CharField(source="agent_name")


class RecordingLinksSerializer(serializers.Serializer):
    self = serializers.URLField()
    rejudge = serializers.URLField()
    review = serializers.URLField()


class RecordingSerializer(serializers.ModelSerializer):
    """A recording as listed and as returned by ingest."""

    rubric = serializers.CharField(source="rubric.slug")
    rubric_version = serializers.IntegerField(source="rubric.version")
    agent = AgentSerializer(source="*")
    links = serializers.SerializerMethodField()

    class Meta:
        model = Recording
        fields = [
            "id",
            "external_id",
            "source",
            "status",
            "rubric",
            "rubric_version",
            "agent",
            "team",
            "channel",
            "language",
            "occurred_at",
            "occurred_at_received",
            "duration_seconds",
            "audio_channels",
            "agent_channel",
            "customer_channel",
            "speakers_known",
            "needs_review",
            "created_at",
            "updated_at",
            "links",
        ]

    def get_fields(self) -> dict[str, serializers.Field]:
        # ModelSerializer derives its fields from the model for every instance, and DRF deep-copies
        # them (together about 1.5 ms, a tenth of a post's CPU). They depend on the class alone and
        # only ever serialize output, so derive them once; binding one to this instance only sets
        # attributes of its own, which a shallow copy keeps apart.
        cls = type(self)
        if "prototype_fields" not in cls.__dict__:
            cls.prototype_fields = super().get_fields()
        return {name: copy.copy(field) for name, field in cls.prototype_fields.items()}

    @extend_schema_field(RecordingLinksSerializer)
    def get_links(self, recording: Recording) -> dict[str, str]:
        request: Request = self.context["request"]
        kwargs = {"pk": recording.pk}
        return {
            "self": reverse("api:recording-detail", kwargs=kwargs, request=request),
            "rejudge": reverse("api:recording-rejudge", kwargs=kwargs, request=request),
            "review": reverse("api:recording-review", kwargs=kwargs, request=request),
        }


class JudgeRunSerializer(serializers.ModelSerializer):
    cost = serializers.DecimalField(
        max_digits=18,
        decimal_places=8,
        read_only=True,
        allow_null=True,
        coerce_to_string=True,
        help_text=_(
            "What the run's calls cost at its judge's prices (per million tokens, in the currency they were "
            "entered in); null when the judge has no prices."
        ),
    )

    class Meta:
        model = JudgeRun
        fields = [
            "id",
            "status",
            "backend",
            "model",
            "prompt_version",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "prompt_tokens",
            "cached_tokens",
            "completion_tokens",
            "batched",
            "cost",
        ]


class FragmentSerializer(serializers.Serializer):
    """A qa.selectors.FragmentTimes."""

    start = serializers.IntegerField(help_text=_("Offset into the transcript where the fragment starts."))
    end = serializers.IntegerField(help_text=_("Offset into the transcript where the fragment ends (exclusive)."))
    start_ms = serializers.IntegerField(
        allow_null=True,
        help_text=_("When the fragment starts in the audio, in ms; null unless the quote is verified and the call is timed."),
    )
    end_ms = serializers.IntegerField(allow_null=True, help_text=_("When the fragment ends in the audio, in ms."))


class VerificationSerializer(serializers.Serializer):
    status = serializers.ChoiceField(source="verification_status", choices=[status.value for status in EvidenceStatus])
    spans = serializers.ListField(
        source="verification_spans",
        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
        help_text=_("[start, end) offsets into the transcript of each quoted fragment found."),
    )
    fragments = serializers.SerializerMethodField(help_text=_("Each span, with its time in the audio."))

    @extend_schema_field(FragmentSerializer(many=True))
    def get_fragments(self, score: Score) -> list[dict]:
        fragments = self.context.get("fragments", {}).get(score.pk, [])
        return FragmentSerializer(fragments, many=True).data


class TurnSerializer(serializers.Serializer):
    """A qa.selectors.TurnTimes."""

    speaker = serializers.CharField(allow_null=True)
    text = serializers.CharField()
    start = serializers.IntegerField(help_text=_("Offset into the transcript where the turn's text starts."))
    end = serializers.IntegerField(help_text=_("Offset into the transcript where the turn's text ends (exclusive)."))
    start_ms = serializers.IntegerField(allow_null=True, help_text=_("When the turn starts in the audio, in ms, if known."))
    end_ms = serializers.IntegerField(allow_null=True, help_text=_("When the turn ends in the audio, in ms, if known."))


class EvidenceRefSerializer(serializers.Serializer):
    """A qa.evidence.Reference."""

    turn = serializers.IntegerField(help_text=_("The cited turn's number, 1-based, in the transcript's turns."))
    words = serializers.CharField(allow_blank=True, help_text=_("Words of that turn; empty: the whole turn."))


class ScoreSerializer(serializers.ModelSerializer):
    criterion_key = serializers.CharField(source="criterion.key")
    evidence_verified = serializers.BooleanField(
        help_text=_(
            "False: the quote was not found as said in the transcript; show it marked 'NO VERIFICADA / NOT VERIFIED'."
        )
    )
    verification = VerificationSerializer(source="*")
    evidence_refs = serializers.SerializerMethodField(
        help_text=_(
            "The turns the judge cited (reference mode): each turn's number (1-based, in the transcript's turns) and "
            "the words it gave (empty: the whole turn); `evidence` is the same as text. Null for a quote."
        )
    )

    class Meta:
        model = Score
        fields = [
            "criterion_key",
            "value",
            "confidence",
            "model_confidence",
            "evidence",
            "evidence_refs",
            "evidence_verified",
            "verification",
            "rationale",
        ]

    @extend_schema_field(EvidenceRefSerializer(many=True, allow_null=True))
    def get_evidence_refs(self, score: Score) -> list[dict] | None:
        references = references_parse(score.evidence)
        return None if references is None else [reference.to_dict() for reference in references]


class QualitySerializer(serializers.Serializer):
    """A rubrics.quality.Quality."""

    quality_score = serializers.FloatField(
        source="score",
        allow_null=True,
        help_text=_("0–100, over the criteria whose value exists (see missing); null when none exists and no auto-fail zeroes the call."),
    )
    missing = serializers.ListField(
        child=serializers.CharField(),
        help_text=_("The keys of the criteria the score does not cover: their value does not exist (an unverified quote)."),
    )
    auto_failed = serializers.BooleanField(help_text=_("A critical criterion is at or below its fail value."))
    auto_fail_criteria = serializers.ListField(
        child=serializers.CharField(), help_text=_("The keys of the critical criteria that failed the call.")
    )


class RecordingDetailSerializer(RecordingSerializer):
    """A recording with its judgment; the reviews layer serves it with the reviews added."""

    latest_run = serializers.SerializerMethodField(help_text=_("The most recent run, whatever its status."))
    scores = serializers.SerializerMethodField(help_text=_("The scores of the latest successful run."))
    judgment_hidden = serializers.SerializerMethodField(
        help_text=_(
            "True when the reader must not see the judgment (a blind audit or an open calibration they take "
            "part in): scores and reviews are then empty. Never true for an API key."
        )
    )
    turns = serializers.SerializerMethodField(help_text=_("The transcript's turns, with their times where known."))
    judgment = serializers.SerializerMethodField(
        help_text=_("The call's quality score by the judge's values that exist; null when not judged or hidden.")
    )

    class Meta(RecordingSerializer.Meta):
        fields = [
            *RecordingSerializer.Meta.fields,
            "transcript_source",
            "transcript",
            "turns",
            "failure_reason",
            "latest_run",
            "scores",
            "judgment",
            "judgment_hidden",
            "review_reasons",
        ]

    def get_judgment_hidden(self, recording: Recording) -> bool:
        return bool(self.context.get("judgment_hidden"))

    @extend_schema_field(JudgeRunSerializer(allow_null=True))
    def get_latest_run(self, recording: Recording) -> dict | None:
        runs = recording.latest_runs
        return JudgeRunSerializer(runs[0]).data if runs else None

    @extend_schema_field(ScoreSerializer(many=True))
    def get_scores(self, recording: Recording) -> list[dict]:
        # Only a succeeded run becomes the current one: a failed run's partial answers never show.
        if recording.current_run is None or self.context.get("judgment_hidden"):
            return []
        scores = list(recording.current_run.scores.all())
        fragments = score_fragments(recording=recording, scores=scores)
        return ScoreSerializer(scores, many=True, context={"fragments": fragments}).data

    @extend_schema_field(QualitySerializer(allow_null=True))
    def get_judgment(self, recording: Recording) -> dict | None:
        if recording.current_run is None or self.context.get("judgment_hidden"):
            return None
        run = recording.current_run
        rubric = recording.rubric if recording.rubric_id == run.rubric_id else run.rubric
        return QualitySerializer(judge_quality(rubric=rubric, scores=run.scores.all())).data

    @extend_schema_field(TurnSerializer(many=True))
    def get_turns(self, recording: Recording) -> list[dict]:
        return TurnSerializer(recording_turns(recording=recording), many=True).data


# --- Errors (for the schema) ---------------------------------------------------


class RecordingBatchItemSerializer(RecordingIngestSerializer):
    """A batch is JSON: audio comes one recording at a time, as multipart."""

    audio = None
    agent_channel = None


class RecordingBatchSerializer(serializers.Serializer):
    recordings = serializers.ListField(
        child=RecordingBatchItemSerializer(),
        min_length=1,
        max_length=BATCH_MAX,
        help_text=_("At most 500, each as the single post's body."),
    )


class RecordingStateSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.URLField()
    status = serializers.ChoiceField(choices=Recording.Status.choices, help_text=_("'received' if the broker was down."))


class RecordingBatchItemResultSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text=_("The recording's position in the request, from 0."))
    status = serializers.ChoiceField(
        choices=[201, 200, 400, 409, 503],
        help_text=_(
            "As a single post would answer: 201 stored, 200 sent before with the same content, 409 sent before "
            "with other content, 400 refused (see errors), 503 not stored because of a database error (send it "
            "again)."
        ),
    )
    recording = RecordingStateSerializer(required=False, help_text=_("With 201, 200 and 409."))
    errors = serializers.DictField(required=False, help_text=_("With 400: one message per field, as a single post's 400."))
    detail = serializers.CharField(required=False, help_text=_("With 409 and 503."))


class RecordingBatchResultSerializer(serializers.Serializer):
    results = RecordingBatchItemResultSerializer(many=True)


class RecordingRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.URLField()


class ConflictSerializer(ErrorSerializer):
    recording = RecordingRefSerializer()


class RejudgeConflictSerializer(ErrorSerializer):
    run = JudgeRunSerializer()
