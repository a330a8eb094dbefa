"""The claims the provider gives: the standard ones from the user, and Veredicto's from the user's groups."""

from oidc_provider.lib.claims import ScopeClaims


def userinfo(claims, user):
    claims["name"] = user.get_full_name()
    claims["given_name"] = user.first_name
    claims["family_name"] = user.last_name
    claims["preferred_username"] = user.username
    claims["email"] = user.email
    claims["email_verified"] = True
    return claims


def _grouped(user, prefix):
    return sorted(name.removeprefix(prefix) for name in user.groups.values_list("name", flat=True) if name.startswith(prefix))


# Where a person's Veredicto claims travel: in the userinfo answer, or, for a person in this group, in
# the ID token alone (as Entra ID sends app roles): Veredicto must read both.
IN_ID_TOKEN = "claims:id_token"


# A person in this group gets their role as a list (as Keycloak's role mappers send roles).
ROLE_AS_LIST = "claims:role_list"


def veredicto_claims(user):
    found = {}
    as_list = user.groups.filter(name=ROLE_AS_LIST).exists()
    for claim, prefix in (("veredicto_workspace", "workspace:"), ("veredicto_role", "role:")):
        values = _grouped(user, prefix)
        if values:
            found[claim] = values if as_list and claim == "veredicto_role" else values[0]
    teams = _grouped(user, "team:")
    if teams:
        found["veredicto_teams"] = teams
    return found


class VeredictoScopeClaims(ScopeClaims):
    """The `veredicto` scope in the userinfo answer: workspace, role and teams, under the claim names
    Veredicto reads by default."""

    info_veredicto = ("Veredicto", "Your workspace and role in Veredicto.")

    def scope_veredicto(self):
        in_id_token = self.user.groups.filter(name=IN_ID_TOKEN).exists()
        return {} if in_id_token else veredicto_claims(self.user)


def id_token_claims(id_token, user, token, request, **kwargs):
    """OIDC_IDTOKEN_PROCESSING_HOOK: the Veredicto claims in the ID token, for those in IN_ID_TOKEN."""
    if "veredicto" in token.scope and user.groups.filter(name=IN_ID_TOKEN).exists():
        id_token.update(veredicto_claims(user))
    return id_token
