from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class SavedSearch(models.Model):
    """A person's search of the calls list kept under a name: the filters and words (the list's query
    string), never the calls found, so opening it searches again in whatever that person may see then."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_searches")
    name = models.CharField(_("name"), max_length=100)
    query = models.TextField(_("query"), blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        verbose_name = _("saved search")
        verbose_name_plural = _("saved searches")
        constraints = [models.UniqueConstraint(fields=["user", "name"], name="saved_search_name_per_user")]

    def __str__(self) -> str:
        return self.name
