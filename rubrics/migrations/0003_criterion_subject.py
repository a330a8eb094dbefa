from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("rubrics", "0002_warm_up_and_replaces"),
    ]

    operations = [
        migrations.AddField(
            model_name="criterion",
            name="subject",
            # Existing criteria get `any`: they keep the meaning they were judged under.
            field=models.CharField(
                choices=[("agent", "Agent"), ("customer", "Customer"), ("any", "Anyone in the call")],
                db_default="any",
                default="any",
                help_text="Whose words the evidence must include: a quote of only the other speaker's words is not verified.",
                max_length=10,
                verbose_name="whose behaviour",
            ),
        ),
    ]
