"""Registers (or updates) a confidential Authorization Code client that signs its ID tokens with RS256,
as an operator registers Veredicto at their identity provider (docs/operations/sso.md)."""

from django.core.management.base import BaseCommand
from oidc_provider.models import Client, ResponseType


class Command(BaseCommand):
    def add_arguments(self, parser):
        parser.add_argument("--client-id", required=True)
        parser.add_argument("--client-secret", required=True)
        parser.add_argument("--redirect-uri", required=True)
        parser.add_argument("--jwt-alg", default="RS256", choices=["RS256", "HS256"])

    def handle(self, *args, client_id, client_secret, redirect_uri, jwt_alg, **options):
        client, _ = Client.objects.update_or_create(
            client_id=client_id,
            defaults={
                "name": "Veredicto",
                "client_type": "confidential",
                "client_secret": client_secret,
                "jwt_alg": jwt_alg,
                "require_consent": False,
                "_redirect_uris": redirect_uri,
            },
        )
        client.response_types.set([ResponseType.objects.get(value="code")])
