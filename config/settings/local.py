"""Development and the embedded first run: DEBUG on, a throwaway secret key."""

from .dotenv import read_dotenv

read_dotenv()

from .base import *  # noqa: E402,F403
from .base import env  # noqa: E402

DEBUG = env.bool("DEBUG", default=True)
SECRET_KEY = env("SECRET_KEY", default="django-insecure-local-development-only")
QA_API_DOCS_PUBLIC = env.bool("QA_API_DOCS_PUBLIC", default=True)

if not DEBUG and SECRET_KEY.startswith("django-insecure"):
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("DEBUG is off: set SECRET_KEY to a long random value.")
