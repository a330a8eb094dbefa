"""Coaching over the API: a person's session (a supervisor or QA lead opens and reads their agents' sessions,
an agent reads, acknowledges and comments on their own). Systems' keys have no part in it: a session is
between people. Thin: coaching.selectors reads, coaching.services writes."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from access import NO_KEY, SIGNED_IN, Capability
from coaching.effect import Difference
from coaching.models import CoachingSession
from coaching.selectors import rubric_for_coaching, session_effect, session_get, sessions_as_agent, sessions_list
from coaching.services import coaching_acknowledge, coaching_comment_add, coaching_session_create
from core.api.parsers import parse_with
from core.api.schema import BAD_REQUEST, NOT_FOUND, ErrorSerializer
from core.errors import InvalidInputError
from qa.api.serializers import StringField
from reviews.figures.stats import Estimate
from rubrics.models import Rubric

NO_KEYS = {"GET": NO_KEY, "POST": NO_KEY}
STATES = ("open", "due", "closed")


class CoachingCallSerializer(serializers.Serializer):
    recording = serializers.IntegerField(source="recording_id")
    external_id = serializers.CharField(source="recording.external_id")
    criterion = serializers.CharField(source="score.criterion.key")
    value = serializers.IntegerField(source="score.value")
    evidence = serializers.CharField(source="score.evidence", help_text=_("The verified quote."))
    proposed = serializers.BooleanField(help_text=_("Proposed (the agent's worst verified values), else picked."))


class CommentSerializer(serializers.Serializer):
    author = serializers.CharField(source="author.username")
    body = serializers.CharField()
    created_at = serializers.DateTimeField()


class CoachingSessionSerializer(serializers.ModelSerializer):
    rubric = serializers.IntegerField(source="rubric_id")
    coach = serializers.CharField(source="coach.username")
    criteria = serializers.SerializerMethodField()
    calls = CoachingCallSerializer(many=True)
    comments = CommentSerializer(many=True)
    acknowledged_by = serializers.CharField(source="acknowledged_by.username", allow_null=True, default=None)

    class Meta:
        model = CoachingSession
        fields = [
            "id", "rubric", "agent_id", "agent_name", "team", "coach", "criteria", "goal", "note", "follow_up_on",
            "status", "created_at", "acknowledged_at", "acknowledged_by", "closed_at", "calls", "comments",
        ]  # fmt: skip

    def get_criteria(self, session: CoachingSession) -> list[str]:
        return [entry.criterion.key for entry in session.criteria.all()]


def _estimate(item: Estimate | Difference) -> dict[str, Any]:
    return {"estimate": item.estimate, "ci": list(item.ci) if item.ci else None}


def effect_json(session: CoachingSession, *, show_team: bool) -> dict[str, Any]:
    periods, rows = session_effect(session=session)
    criteria = []
    for row in rows:
        e = row.effect
        entry = {
            "criterion": row.criterion.key, "before": _estimate(e.before), "after": _estimate(e.after),
            "change": _estimate(e.change), "audited_share": e.audited_share, "too_thin": e.too_thin,
            "more_audited": e.more_audited,
        }  # fmt: skip
        if show_team:
            entry |= {"team_change": _estimate(e.team_change), "effect": _estimate(e.effect)}
        criteria.append(entry)
    return {
        "before": [d.isoformat() for d in periods.before],
        "after": [d.isoformat() for d in periods.after] if periods.after else None,
        "live": periods.live,
        "criteria": criteria,
    }


class SessionInputSerializer(serializers.Serializer):
    rubric = StringField(max_length=100, help_text=_("The rubric's slug (its latest published version) or id."))
    agent_id = StringField(max_length=100)
    criteria = serializers.ListField(child=StringField(max_length=64), min_length=1, max_length=3)
    goal = StringField(max_length=500)
    note = StringField(required=False, allow_blank=True, default="", max_length=5000)
    follow_up_on = serializers.DateField()
    calls = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**31 - 1), required=False, default=None, allow_null=True,
        max_length=15,
        help_text=_("Recording ids the coach picks; omitted: the agent's worst verified values are proposed."),
    )  # fmt: skip


class CommentInputSerializer(serializers.Serializer):
    body = StringField(max_length=5000)


def _session(request: Request, pk: int) -> CoachingSession:
    try:
        return session_get(user=request.user, pk=pk)
    except CoachingSession.DoesNotExist:
        raise NotFound(_("No coaching session %(id)s that you may see.") % {"id": pk}) from None


def _as_agent(request: Request, session: CoachingSession) -> bool:
    return sessions_as_agent(user=request.user).filter(pk=session.pk).exists()


@extend_schema(tags=["coaching"])
class SessionListView(GenericAPIView):
    """A supervisor's teams' sessions, a QA lead's workspace's, an agent's own."""

    serializer_class = CoachingSessionSerializer
    pagination_class = None  # a plain list, the latest 500: a reader's sessions are few
    session_permissions = {"GET": SIGNED_IN, "POST": Capability.COACH}
    key_permissions = NO_KEYS

    @extend_schema(
        parameters=[OpenApiParameter("state", enum=STATES, required=False)],
        responses={200: CoachingSessionSerializer(many=True), 400: BAD_REQUEST},
        summary=_("Coaching sessions the reader may see"),
    )
    def get(self, request: Request) -> Response:
        state = request.query_params.get("state", "")
        if state and state not in STATES:
            raise InvalidInputError({"state": _("Use one of: %(choices)s.") % {"choices": ", ".join(STATES)}})
        sessions = sessions_list(user=request.user, state=state).prefetch_related("calls__score__criterion", "calls__recording", "comments__author")
        return Response(CoachingSessionSerializer(sessions[:500], many=True).data)

    @extend_schema(
        request=SessionInputSerializer,
        responses={201: CoachingSessionSerializer, 400: BAD_REQUEST, 403: ErrorSerializer},
        summary=_("Open a coaching session for an agent"),
    )
    def post(self, request: Request) -> Response:
        values = parse_with(SessionInputSerializer, request.data)
        try:
            rubric = rubric_for_coaching(user=request.user, key=values["rubric"])
        except Rubric.DoesNotExist:
            raise InvalidInputError({"rubric": _("No rubric %(id)s where you may coach.") % {"id": values["rubric"]}}) from None
        session = coaching_session_create(
            user=request.user, rubric=rubric, agent_id=values["agent_id"], criterion_keys=values["criteria"],
            goal=values["goal"], note=values["note"], follow_up_on=values["follow_up_on"], recording_ids=values["calls"],
        )  # fmt: skip
        return Response(CoachingSessionSerializer(_session(request, session.pk)).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["coaching"])
class SessionDetailView(GenericAPIView):
    serializer_class = CoachingSessionSerializer
    session_permissions = {"GET": SIGNED_IN}
    key_permissions = NO_KEYS

    @extend_schema(
        responses={200: OpenApiResponse(CoachingSessionSerializer, description=_("With `effect`: did it work.")), 404: NOT_FOUND},
        summary=_("A coaching session, with its effect so far"),
    )
    def get(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        answer = dict(CoachingSessionSerializer(session).data)
        # The rest of the team's figures are not the agent's to read, as on their scorecard.
        answer["effect"] = effect_json(session, show_team=not _as_agent(request, session))
        return Response(answer)


@extend_schema(tags=["coaching"])
class SessionAcknowledgeView(GenericAPIView):
    serializer_class = CoachingSessionSerializer
    session_permissions = {"POST": Capability.DISPUTE}
    key_permissions = NO_KEYS

    @extend_schema(request=None, responses={200: CoachingSessionSerializer, 404: NOT_FOUND}, summary=_("The agent acknowledges"))
    def post(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        coaching_acknowledge(session=session, user=request.user)
        return Response(CoachingSessionSerializer(_session(request, pk)).data)


@extend_schema(tags=["coaching"])
class SessionCommentView(GenericAPIView):
    serializer_class = CommentInputSerializer
    session_permissions = {"POST": SIGNED_IN}
    key_permissions = NO_KEYS

    @extend_schema(
        request=CommentInputSerializer,
        responses={201: CommentSerializer, 400: BAD_REQUEST, 404: NOT_FOUND},
        summary=_("A comment by the agent or a coach"),
    )
    def post(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        values = parse_with(CommentInputSerializer, request.data)
        comment = coaching_comment_add(session=session, user=request.user, body=values["body"])
        return Response(CommentSerializer(comment).data, status=status.HTTP_201_CREATED)
