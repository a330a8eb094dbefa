from django.db import migrations


def human_values_refill(apps, schema_editor):
    """Approves stored before milestone 3 carried unverified judge values into `human_values`; the
    rule now leaves them out (the judge's value does not exist), so every review's values are read
    again, and its call's scorecard weeks are marked to be read again too. As in 0007, the live
    service is called: the rule is the one in reviews.selectors.review_values."""
    from qa.models import Recording
    from reviews.models import Review
    from reviews.services import reviews_human_values_store

    reviews_human_values_store(reviews=Review.log.all())  # log: every review, and no join to a later table
    Recording.objects.filter(reviews__isnull=False).update(rollup_stale=True)


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0008_scorecardweek"),
        # The live models are used (as in 0007): after every migration they read.
        ("qa", "0013_apikey_source"),
        ("rubrics", "0003_criterion_subject"),
    ]

    operations = [migrations.RunPython(human_values_refill, migrations.RunPython.noop)]
