"""A real OpenID Connect provider for the single sign-on tests: django-oidc-provider in a Django site of
its own (its own settings, URLconf and SQLite database), run in a second process on loopback by
tests/support/oidc_provider.py, the way an operator's identity provider stands beside Veredicto.

A person's Veredicto claims come from their groups here, as many identity providers derive them
(Keycloak's group mappers, Entra ID's app roles): `workspace:<slug>`, `role:<role>`, `team:<name>`.
"""
