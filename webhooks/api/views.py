"""Thin views for webhook subscriptions over the API.

A key manages the subscriptions it created (a key already reads every recording and review through
the API, so a webhook gives it nothing new); a person needs the subscriptions' model permissions and
sees those of the workspaces in their scope (access.scope)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from access import Capability
from access.models import DEFAULT_WORKSPACE
from core.api.parsers import parse_with
from core.api.schema import BAD_REQUEST, NO_PAGE, NOT_FOUND
from core.errors import InvalidInputError
from access.models import ApiKey
from webhooks.api.serializers import (
    DeliverySerializer,
    SubscriptionCreatedSerializer,
    SubscriptionInputSerializer,
    SubscriptionSerializer,
    SubscriptionUpdateSerializer,
)
from webhooks.models import Subscription
from webhooks.selectors import deliveries_of, subscriptions_visible, workspace_to_subscribe
from webhooks.services import delivery_redeliver, subscription_create, subscription_delete, subscription_update


def _key(request: Request) -> ApiKey | None:
    return request.auth if isinstance(request.auth, ApiKey) else None


def _visible(request: Request) -> QuerySet[Subscription]:
    return subscriptions_visible(api_key=_key(request), user=request.user)


def _subscription(request: Request, pk: int) -> Subscription:
    return get_object_or_404(_visible(request), pk=pk)


@extend_schema(tags=["webhooks"])
class SubscriptionsView(GenericAPIView):
    serializer_class = SubscriptionSerializer
    session_permissions = {"GET": Capability.READ_WEBHOOKS, "POST": Capability.ADD_WEBHOOKS}

    def get_queryset(self) -> QuerySet[Subscription]:
        return _visible(self.request)

    @extend_schema(
        responses={200: SubscriptionSerializer(many=True), 400: BAD_REQUEST, 404: NO_PAGE},
        summary=_("List webhook subscriptions"),
    )
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    @extend_schema(
        request=SubscriptionInputSerializer,
        responses={201: SubscriptionCreatedSerializer, 400: BAD_REQUEST},
        summary=_("Subscribe a URL to events; the answer carries the signing secret, shown this once"),
    )
    def post(self, request: Request) -> Response:
        values = parse_with(SubscriptionInputSerializer, request.data)
        key = _key(request)
        # A key subscribes its own workspace; a person one of theirs (the default one unless named).
        workspace = key.workspace if key else workspace_to_subscribe(user=request.user, slug=values.get("workspace"))
        if not key and workspace is None:
            raise InvalidInputError({"workspace": _("None of your workspaces is '%(slug)s'.") % {
                "slug": values.get("workspace") or DEFAULT_WORKSPACE
            }})  # fmt: skip
        subscription, secret = subscription_create(
            url=values["url"], events=values["events"], secret=values.get("secret"),
            description=values["description"], contact_email=values["contact_email"],
            api_key=key, owner=None if key else request.user, workspace=workspace,
        )  # fmt: skip
        subscription.secret = secret
        response = Response(SubscriptionCreatedSerializer(subscription).data, status=status.HTTP_201_CREATED)
        response["Cache-Control"] = "no-store"
        return response


@extend_schema(tags=["webhooks"])
class SubscriptionDetailView(GenericAPIView):
    serializer_class = SubscriptionSerializer
    session_permissions = {
        "GET": Capability.READ_WEBHOOKS,
        "PATCH": Capability.CHANGE_WEBHOOKS,
        "DELETE": Capability.DELETE_WEBHOOKS,
    }

    @extend_schema(responses={200: SubscriptionSerializer, 404: NOT_FOUND}, summary=_("A webhook subscription"))
    def get(self, request: Request, pk: int) -> Response:
        return Response(SubscriptionSerializer(_subscription(request, pk)).data)

    @extend_schema(
        request=SubscriptionUpdateSerializer,
        responses={200: SubscriptionSerializer, 400: BAD_REQUEST, 404: NOT_FOUND},
        summary=_("Change a subscription; status active resumes a paused one"),
    )
    def patch(self, request: Request, pk: int) -> Response:
        subscription = _subscription(request, pk)
        values = parse_with(SubscriptionUpdateSerializer, request.data)
        subscription = subscription_update(subscription=subscription, **values)
        return Response(SubscriptionSerializer(subscription).data)

    @extend_schema(responses={204: None, 404: NOT_FOUND}, summary=_("Delete a subscription and its delivery log"))
    def delete(self, request: Request, pk: int) -> Response:
        subscription_delete(subscription=_subscription(request, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["webhooks"])
class DeliveriesView(GenericAPIView):
    serializer_class = DeliverySerializer
    session_permissions = {"GET": Capability.READ_DELIVERIES}

    @extend_schema(
        responses={200: DeliverySerializer(many=True), 400: BAD_REQUEST, 404: NOT_FOUND},
        summary=_("A subscription's deliveries, newest first, each with its attempts"),
    )
    def get(self, request: Request, pk: int) -> Response:
        page = self.paginate_queryset(deliveries_of(subscription=_subscription(request, pk)))
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


@extend_schema(tags=["webhooks"])
class RedeliverView(GenericAPIView):
    serializer_class = DeliverySerializer
    session_permissions = {"POST": Capability.REDELIVER}

    @extend_schema(
        request=None,
        responses={202: OpenApiResponse(DeliverySerializer, description=_("Queued again")), 404: NOT_FOUND},
        summary=_("Send a delivery again, with the same id and body"),
    )
    def post(self, request: Request, pk: int, delivery_id: str) -> Response:
        delivery = get_object_or_404(deliveries_of(subscription=_subscription(request, pk)), pk=delivery_id)
        delivery_redeliver(delivery=delivery)
        delivery.refresh_from_db()
        return Response(DeliverySerializer(delivery).data, status=status.HTTP_202_ACCEPTED)
