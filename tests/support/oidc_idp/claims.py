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


class VeredictoScopeClaims(ScopeClaims):
    """The `veredicto` scope: workspace, role and teams, under the claim names Veredicto reads by default."""

    info_veredicto = ("Veredicto", "Your workspace and role in Veredicto.")

    def scope_veredicto(self):
        found = {}
        for claim, prefix in (("veredicto_workspace", "workspace:"), ("veredicto_role", "role:")):
            values = _grouped(self.user, prefix)
            if values:
                found[claim] = values[0]
        teams = _grouped(self.user, "team:")
        if teams:
            found["veredicto_teams"] = teams
        return found
