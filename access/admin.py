from django.contrib import admin

from access.models import Membership, Team, Workspace
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
