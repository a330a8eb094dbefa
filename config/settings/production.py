"""Production: every secret and service comes from the environment, with no default and no `.env` file."""

import os

from django.core.exceptions import ImproperlyConfigured

# Checked before the base settings fall back to their embedded defaults (SQLite, tasks run
# inside the web process, a per-process cache), none of which can run production.
_missing = [
    name
    for name, alternatives in (("DATABASE_URL", ()), ("CELERY_BROKER_URL", ("REDIS_URL",)))
    if not any(os.environ.get(variable) for variable in (name, *alternatives))
]
if _missing:
    raise ImproperlyConfigured(
        f"Production needs {' and '.join(_missing)} set in the environment "
        "(PostgreSQL and the Redis broker; production settings read no .env file)."
    )

from .base import *  # noqa: E402,F403
from .base import env  # noqa: E402

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY")
if not DEBUG and (not SECRET_KEY or SECRET_KEY.startswith("django-insecure")):
    raise ImproperlyConfigured("SECRET_KEY must be set to a long random value when DEBUG is off.")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 30)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
CONN_MAX_AGE = env.int("CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_MAX_AGE"] = CONN_MAX_AGE  # noqa: F405

# The browsable API is a development aid: in production every answer is JSON, as the schema says.
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"]}  # noqa: F405
