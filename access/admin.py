from django.contrib import admin

from access.models import Membership, SsoIdentity, Team, Workspace
from access.services import user_groups_sync


class TeamInline(admin.TabularInline):
    model = Team
    extra = 0


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]
    filter_horizontal = ["teams"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [TeamInline, MembershipInline]

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        # A role's capabilities are its groups' permissions: keep every member's groups in step.
        for membership_form in (f for formset in formsets for f in formset.forms):
            if getattr(membership_form.instance, "user_id", None):
                user_groups_sync(user=membership_form.instance.user)


@admin.register(SsoIdentity)
class SsoIdentityAdmin(admin.ModelAdmin):
    """Who signs in through the identity provider, as which (issuer, subject). Deleting a row unlinks the
    person: their next single sign-on creates a new user. A provider that reissued someone's subject is
    followed by editing it here."""

    list_display = ["user", "issuer", "subject", "created_at"]
    search_fields = ["user__username", "user__email", "subject"]
    autocomplete_fields = ["user"]
