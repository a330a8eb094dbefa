"""Calibration over the API, for people with their own login session (not API keys):
participants send entries, QA leads close sessions, both read them."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from access import NO_KEY, SIGNED_IN
from core.api.schema import BAD_REQUEST, NOT_FOUND, ErrorSerializer
from calibration.selectors import (
    CriterionSummary,
    session_get,
    session_own_progress,
    session_summary,
    sessions_for,
    sees_own_progress_only,
)
from calibration.services import CalibrationAnswer, SessionStateError, calibration_close, calibration_entry_save
from reviews.models import CalibrationEntry, CalibrationSession
from reviews.figures.api import RubricSerializer

CONFLICT = OpenApiResponse(ErrorSerializer, description=_("The session is closed (entries) or already closed (close)."))
FORBIDDEN = OpenApiResponse(ErrorSerializer, description=_("Not a participant (entries) or not a QA lead (close)."))


class PersonsOnly:
    """A calibration entry is a person's own judgment: a login session, never a system's key. What the
    person then sees is decided per session (they lead it or take part in it)."""

    session_permissions = {"GET": SIGNED_IN, "POST": SIGNED_IN}
    key_permissions = {"GET": NO_KEY, "POST": NO_KEY}


def _summary_field(name: str) -> serializers.Field:
    if name in ("n_recordings", "n_raters"):
        return serializers.IntegerField()
    if name == "criterion_key":
        return serializers.CharField()
    return serializers.FloatField(allow_null=True)


CriterionSummarySerializer = type(
    "CriterionSummarySerializer",
    (serializers.Serializer,),
    {
        "__doc__": CriterionSummary.__doc__,
        **{field.name: _summary_field(field.name) for field in fields(CriterionSummary)},
    },
)


class SessionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=CalibrationSession.Status.choices)
    rubric = RubricSerializer()
    participants = serializers.ListField(child=serializers.CharField(), help_text=_("Usernames."))


class OwnProgressSerializer(serializers.Serializer):
    scored = serializers.IntegerField(help_text=_("Calls of the session you have scored."))
    calls = serializers.IntegerField(help_text=_("Calls in the session."))


class SessionDetailSerializer(SessionSerializer):
    criteria = CriterionSummarySerializer(
        many=True,
        help_text=_("Empty for a participant while the session is open: they see their own progress only."),
    )
    own_progress = OwnProgressSerializer(allow_null=True, help_text=_("A participant's own progress while open."))


class AnswerSerializer(serializers.Serializer):
    criterion_key = serializers.CharField(max_length=100)
    value = serializers.IntegerField(required=False, allow_null=True, default=None)
    not_applicable = serializers.BooleanField(required=False, default=False)


class EntryInputSerializer(serializers.Serializer):
    recording = serializers.IntegerField(help_text=_("Id of a recording in the session."))
    criteria = AnswerSerializer(
        many=True, help_text=_("Every criterion of the rubric once: a value or not_applicable.")
    )
    comment = serializers.CharField(required=False, allow_blank=True, default="")


class EntrySerializer(serializers.Serializer):
    recording = serializers.IntegerField(source="call.recording_id")
    participant = serializers.CharField(source="participant.username")
    criteria = AnswerSerializer(source="answers", many=True)
    comment = serializers.CharField()
    updated_at = serializers.DateTimeField()


def _conflict(error: SessionStateError) -> Response:
    return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)


@extend_schema(tags=["calibrations"])
class SessionListView(PersonsOnly, APIView):

    @extend_schema(
        responses={200: SessionSerializer(many=True)}, summary=_("Calibration sessions you lead or take part in")
    )
    def get(self, request: Request) -> Response:
        return Response(SessionSerializer([_record(session) for session in sessions_for(request.user)], many=True).data)


@extend_schema(tags=["calibrations"])
class SessionDetailView(PersonsOnly, APIView):

    @extend_schema(
        responses={200: SessionDetailSerializer, 404: NOT_FOUND},
        summary=_("A session with its agreement figures per criterion (counts only until it closes)"),
    )
    def get(self, request: Request, pk: int) -> Response:
        session = session_get(pk=pk, user=request.user)
        return Response(SessionDetailSerializer(_detail(session, user=request.user)).data)


def _record(session: CalibrationSession) -> dict[str, Any]:
    return {
        "id": session.pk,
        "name": session.name,
        "status": session.status,
        "rubric": session.rubric,
        # Sorted here, so the prefetched participants of a list are used as they are.
        "participants": sorted(user.get_username() for user in session.participants.all()),
    }


def _detail(session: CalibrationSession, *, user: AbstractBaseUser | None = None) -> dict[str, Any]:
    """With `user` a participant of the open session: no per-criterion counts (they tell who marked N/A),
    only their own progress."""
    own_only = user is not None and sees_own_progress_only(session=session, user=user)
    return {
        **_record(session),
        "criteria": [] if own_only else session_summary(session=session),
        "own_progress": session_own_progress(session=session, user=user) if own_only else None,
    }


@extend_schema(tags=["calibrations"])
class EntryView(PersonsOnly, APIView):

    @extend_schema(
        request=EntryInputSerializer,
        responses={201: EntrySerializer, 400: BAD_REQUEST, 403: FORBIDDEN, 404: NOT_FOUND, 409: CONFLICT},
        summary=_("Send (or replace) your own values for a call of the session"),
    )
    def post(self, request: Request, pk: int) -> Response:
        session = session_get(pk=pk, user=request.user)
        body = EntryInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        values = body.validated_data
        try:
            entry = calibration_entry_save(
                session=session,
                recording_id=values["recording"],
                participant=request.user,
                answers=[CalibrationAnswer(**answer) for answer in values["criteria"]],
                comment=values["comment"],
            )
        except SessionStateError as error:
            return _conflict(error)
        return Response(EntrySerializer(_entry_record(entry)).data, status=status.HTTP_201_CREATED)


def _entry_record(entry: CalibrationEntry) -> CalibrationEntry:
    entry.answers = [
        {"criterion_key": value.criterion.key, "value": value.value, "not_applicable": value.not_applicable}
        for value in entry.values.select_related("criterion")
    ]
    return entry


@extend_schema(tags=["calibrations"])
class CloseView(PersonsOnly, APIView):

    @extend_schema(
        request=None,
        responses={200: SessionDetailSerializer, 403: FORBIDDEN, 404: NOT_FOUND, 409: CONFLICT},
        summary=_("Close the session (QA leads): entries freeze and the results open"),
    )
    def post(self, request: Request, pk: int) -> Response:
        session = session_get(pk=pk, user=request.user)
        try:
            session = calibration_close(session=session, user=request.user)
        except SessionStateError as error:
            return _conflict(error)
        return Response(SessionDetailSerializer(_detail(session)).data)
