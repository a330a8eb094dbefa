from django.contrib import admin
from django.contrib.admin.utils import NotRelationField, get_fields_from_path
from django.core.exceptions import FieldDoesNotExist

from access.models import Membership, SsoIdentity, Team, Workspace
from access.scope import scope_for
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
    # Not ScopedAdminMixin: the workspace is the row itself (get_queryset below).
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [TeamInline, MembershipInline]

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        return queryset.filter(scope_for(request.user).workspaces_q("pk"))

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


class ScopedAdminMixin:
    """A model admin that shows a staff member who is not a superuser only the rows of their scope
    (access.scope.scope_for): set `scope_recording` to the path of the row's recording ("" for a
    recording itself, "recording__", "run__recording__") or `scope_workspace` to the path of its
    workspace ("workspace", "rubric__workspace"). Its related list filters list only the rows shown,
    and a workspace to choose is one of theirs. Superusers see everything."""

    scope_recording: str | None = None
    scope_workspace: str | None = None

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        scope = scope_for(request.user)
        if self.scope_recording is not None:
            path = self.scope_recording
            return queryset.filter(
                scope.recordings_q(workspace=f"{path}workspace", team=f"{path}team", agent=f"{path}agent_id")
            )
        return queryset.filter(scope.workspaces_q(self.scope_workspace or "workspace"))

    def get_list_filter(self, request):
        filters = super().get_list_filter(request)
        if request.user.is_superuser:
            return filters
        return [self._related_only(entry) for entry in filters]

    def _related_only(self, entry):
        # Another workspace's rubric or criterion must not be offered as a filter either.
        if isinstance(entry, str):
            try:
                field = get_fields_from_path(self.model, entry)[-1]
            except (FieldDoesNotExist, NotRelationField):
                return entry
            if field.is_relation:
                return (entry, admin.RelatedOnlyFieldListFilter)
        return entry

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.related_model is Workspace and not request.user.is_superuser:
            kwargs["queryset"] = Workspace.objects.filter(pk__in=scope_for(request.user).workspace_ids)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)
