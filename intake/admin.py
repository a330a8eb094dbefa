from django.contrib import admin

from access.admin import ScopedAdminMixin
from intake.models import DropFolder, DroppedFile, TwilioAccount, TwilioRecording


@admin.register(TwilioAccount)
class TwilioAccountAdmin(ScopedAdminMixin, admin.ModelAdmin):
    scope_workspace = "workspace"
    list_display = ["slug", "workspace", "account_sid", "rubric_slug", "source", "active"]


@admin.register(DropFolder)
class DropFolderAdmin(ScopedAdminMixin, admin.ModelAdmin):
    scope_workspace = "workspace"
    list_display = ["slug", "workspace", "kind", "path", "bucket", "prefix", "host", "rubric_slug", "active"]


@admin.register(TwilioRecording)
class TwilioRecordingAdmin(ScopedAdminMixin, admin.ModelAdmin):
    scope_workspace = "account__workspace"
    list_display = ["recording_sid", "account", "status", "attempts", "error", "recording"]
    list_filter = ["status"]
    readonly_fields = [field.name for field in TwilioRecording._meta.fields]


@admin.register(DroppedFile)
class DroppedFileAdmin(ScopedAdminMixin, admin.ModelAdmin):
    scope_workspace = "folder__workspace"
    list_display = ["name", "folder", "status", "attempts", "error", "moved", "recording"]
    list_filter = ["status"]
    readonly_fields = [field.name for field in DroppedFile._meta.fields]
