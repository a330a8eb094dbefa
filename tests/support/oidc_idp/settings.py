"""The test identity provider's settings: its own database file and port, from the environment the
starting fixture sets (IDP_DATABASE, IDP_SITE_URL)."""

import os

SECRET_KEY = "test-identity-provider-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oidc_provider",
    "tests.support.oidc_idp",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "tests.support.oidc_idp.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["IDP_DATABASE"]}}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGIN_URL = "/login/"
# Veredicto runs on the same loopback host (another port), and a browser keeps cookies per host, not per
# port: the provider's session and CSRF cookies must not overwrite Veredicto's.
SESSION_COOKIE_NAME = "idp_sessionid"
CSRF_COOKIE_NAME = "idp_csrftoken"

SITE_URL = os.environ["IDP_SITE_URL"]  # the issuer is SITE_URL + /openid
OIDC_USERINFO = "tests.support.oidc_idp.claims.userinfo"
OIDC_EXTRA_SCOPE_CLAIMS = "tests.support.oidc_idp.claims.VeredictoScopeClaims"
# The userinfo answer carries the claims; the ID token carries Veredicto's for some people alone
# (claims.IN_ID_TOKEN), so each way a provider may send them is tried.
OIDC_IDTOKEN_INCLUDE_CLAIMS = False
OIDC_IDTOKEN_PROCESSING_HOOK = "tests.support.oidc_idp.claims.id_token_claims"
