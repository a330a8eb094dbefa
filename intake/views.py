"""Twilio's recording status callback. Public to the access module (Twilio has no login and no key)
because the request's X-Twilio-Signature, made with the account's auth token, is what authenticates it:
a request without a valid one is refused 403 before anything is read or written."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

import access
from core.errors import InvalidInputError
from intake.jobs import refusal_text
from intake.twilio import SignatureRefused, twilio_callback_accept


def _signed_url(request: HttpRequest) -> str:
    """The URL Twilio signed: the one configured in Twilio, which is the app's public address (QA_PUBLIC_URL)
    when a proxy stands in front, not the address the proxy forwarded to."""
    if settings.QA_PUBLIC_URL:
        return settings.QA_PUBLIC_URL.rstrip("/") + request.get_full_path()
    return request.build_absolute_uri()


@access.public
@csrf_exempt  # Twilio sends no CSRF token; the signature stands in for it
@require_POST
def twilio_recording_status(request: HttpRequest, account: str) -> HttpResponse:
    try:
        job = twilio_callback_accept(
            slug=account, url=_signed_url(request), params=request.POST.dict(), query=request.GET.dict(),
            signature=request.headers.get("X-Twilio-Signature", ""),
        )  # fmt: skip
    except SignatureRefused:
        return JsonResponse({"detail": "Invalid or missing X-Twilio-Signature."}, status=403)
    except InvalidInputError as error:
        return JsonResponse({"detail": refusal_text(error)}, status=400)
    return JsonResponse({"job": job.pk if job else None, "status": job.status if job else "ignored"}, status=202 if job else 200)
