"""A queryset as SQL, for the few reads the ORM cannot say (a union joined to raw sums, a fenced
subquery): written once so every such read takes the parameters the same way."""

from __future__ import annotations

from django.db.models import QuerySet


def queryset_sql(queryset: QuerySet) -> tuple[str, tuple]:
    """The SQL and parameters of `queryset`, compiled for the database it reads, to use inside a statement written out."""
    return queryset.query.get_compiler(using=queryset.db).as_sql()
