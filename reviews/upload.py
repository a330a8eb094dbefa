"""A supervisor uploads a call's audio: the same ingest as the API's multipart post."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from access import Capability
from access.scope import Scope, scope_for
from qa.api.scope import recording_team_check
from qa.audio import AudioTooLargeError
from core.errors import InvalidInputError
from qa.services import RecordingConflictError, recording_ingest
from reviews.selectors import rubric_choices
from reviews.views import supervisor_required
from rubrics.selectors import rubric_latest_published

# What a browser upload is filed under, as a browser session's API posts are.
UPLOAD_SOURCE = "web"


class UploadForm(forms.Form):
    audio = forms.FileField(
        label=gettext_lazy("Audio file"),
        help_text=gettext_lazy(
            "WAV, FLAC, MP3, OGG/Opus or M4A; mono, two channels (agent and customer), or more with the two "
            "channels named below."
        ),
        widget=forms.ClearableFileInput(attrs={"accept": "audio/*,.opus,.m4a"}),
    )
    external_id = forms.CharField(label=gettext_lazy("Call id"), max_length=200)
    rubric = forms.ChoiceField(label=gettext_lazy("Rubric"))
    agent_channel = forms.CharField(
        label=gettext_lazy("Agent's channel"),
        max_length=5,
        required=False,
        help_text=gettext_lazy("left, right, or the channel's number from 1 (left is 1)."),
    )
    customer_channel = forms.CharField(
        label=gettext_lazy("Customer's channel"),
        max_length=5,
        required=False,
        help_text=gettext_lazy("Only for audio of more than two channels: the customer's channel's number."),
    )
    agent_id = forms.CharField(label=gettext_lazy("Agent id"), max_length=100, required=False)
    agent_name = forms.CharField(label=gettext_lazy("Agent name"), max_length=200, required=False)
    team = forms.CharField(label=gettext_lazy("Team"), max_length=100, required=False)

    def __init__(self, *args, scope: Scope, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["rubric"].choices = rubric_choices(scope=scope)
        self.fields["agent_channel"].initial = settings.QA_AGENT_CHANNEL


@supervisor_required
@require_http_methods(["GET", "POST"])
def recording_upload(request: HttpRequest) -> HttpResponse:
    # The rubrics of the workspaces where this person reviews (a call goes into its rubric's workspace).
    scope = scope_for(request.user).where(Capability.REVIEW)
    form = UploadForm(request.POST or None, request.FILES or None, scope=scope)
    status = 200
    if request.method == "POST" and form.is_valid():
        values = form.cleaned_data
        rubric = rubric_latest_published(slug=values["rubric"], scope=scope)
        try:
            if rubric is None:
                raise InvalidInputError(
                    {"rubric": _("Rubric %(slug)s has no published version.") % {"slug": values["rubric"]}}
                )
            recording_team_check(scope, {"rubric": rubric, "team": values["team"]})  # the API's rule
            recording, created = recording_ingest(
                external_id=values["external_id"],
                source=UPLOAD_SOURCE,
                rubric=rubric,
                audio=values["audio"],
                agent_channel=values["agent_channel"],
                customer_channel=values["customer_channel"],
                agent_id=values["agent_id"],
                agent_name=values["agent_name"],
                team=values["team"],
            )
        except InvalidInputError as error:
            for field, message in error.errors.items():
                form.add_error(field if field in form.fields else None, message)
            status = 400
        except AudioTooLargeError as error:
            form.add_error("audio", str(error))
            status = 413
        except RecordingConflictError as error:
            form.add_error("external_id", str(error))
            status = 409
        else:
            if created:
                messages.success(
                    request, _("Call %(call)s received: it is being transcribed, then judged.") % {"call": recording}
                )
            else:
                messages.info(request, _("Call %(call)s was already uploaded.") % {"call": recording})
            return redirect("review-upload")
    elif request.method == "POST":
        status = 400
    return render(request, "review/upload.html", {"form": form}, status=status)
