"""What the hourly beat does to the tables kept by month, by hand: `manage.py storage_maintain`."""

from django.core.management.base import BaseCommand

from core.partitions import storage_maintain


class Command(BaseCommand):
    help = (
        "Create the partitions of this month and the next two where missing (PostgreSQL), then archive to "
        "Parquet and drop every month older than QA_RETENTION_MONTHS (when set)."
    )

    def handle(self, *args, **options) -> None:
        created, archived = storage_maintain()
        for name in created:
            self.stdout.write(f"created partition {name}")
        for month in archived:
            self.stdout.write(f"archived {month.rows} rows of {month.table} for {month.month:%Y-%m} to {month.path}")
        if not created and not archived:
            self.stdout.write("nothing to do")
