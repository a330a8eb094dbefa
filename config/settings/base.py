"""Settings shared by every environment, read from environment variables.

With nothing set, Veredicto runs on the embedded default: a SQLite file and
Celery tasks executed in-process, so a fresh clone works without servers.
Setting DATABASE_URL and CELERY_BROKER_URL (or REDIS_URL) switches to
PostgreSQL and real Celery workers on Redis.
"""

from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()  # the environment only; `local` and `test` read a .env file first (config.settings.dotenv)

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY", default="")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "nested_admin",
    "axes",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "access",
    "outbox",
    "core",
    "rubrics",
    "qa",
    "reviews",
    "calibration",
    "routing",
    "calls",
    "disputes",
    "experiments",
    "insights",
    "coaching",
    "exports",
    "webhooks",
    "intake",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    # Before anything reads the admin's query (its changelists' filters reach the database).
    "config.middleware.NulInAdminQueryRefused",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Before any view middleware (the CSRF check reads the body in its process_view): a body over its
    # view's limit is answered 413 unread, whoever sends it.
    "config.body_limit.BodyLimitMiddleware",
    "config.middleware.NoStoreWhenPrivate",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes requires: it turns a locked-out login into its lockout answer.
    "axes.middleware.AxesMiddleware",
]

# Content-Security-Policy on every page: the UI loads scripts, styles and images from its own
# origin only and has no inline script (the charts' SVG carries inline style attributes, allowed
# alone). The API docs use drf-spectacular's split Swagger view for the same reason.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "style-src-attr": ["'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# Login throttling (django-axes): after QA_LOGIN_FAILURE_LIMIT wrong passwords for one username
# from one address, that pair is locked out for QA_LOGIN_LOCKOUT_MINUTES; a right password does
# not open it early. The admin and the site share the one login.
# The last answers permissions from a person's memberships (their roles), so the global groups need not be in step.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend", "access.backends.MembershipBackend",
]
AXES_FAILURE_LIMIT = env.int("QA_LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("QA_LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_COOLOFF_MESSAGE = ""  # the template says it, translated
AXES_ENABLE_ACCESS_FAILURE_LOG = True  # each failed login kept for the audit, beside the attempts
# Behind a proxy, the client address comes from X-Forwarded-For (set AXES_IPWARE_PROXY_COUNT there).
AXES_IPWARE_PROXY_COUNT = env.int("AXES_IPWARE_PROXY_COUNT", default=0) or None
# Not verbose: no "AXES: BEGIN ..." banner from every manage.py command. Failed logins and lockouts
# are still logged as warnings naming the username, address and path; only the user agent drops out.
AXES_VERBOSE = False

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # The top bar's count of what waits for the reader (reviews to acknowledge, disputes).
                "disputes.notifications.top_bar",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=0)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "es"
LANGUAGES = [("es", _("Spanish")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env("TIME_ZONE", default="UTC")
# English times on the 24-hour clock (config/formats/en): Django's "2:51 p.m." ends a sentence in "p.m..".
FORMAT_MODULE_PATH = ["config.formats"]
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env("STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# How long opening a call in the review queue keeps it for one supervisor.
QA_REVIEW_CLAIM_MINUTES = env.int("QA_REVIEW_CLAIM_MINUTES", default=15)

# Agents and their reviews (disputes): how many days after a final review its agent may dispute
# it; how many days a QA lead has to resolve a dispute; after how many days an unacknowledged review is
# overdue; and who a dispute goes to: "qa_leads" (any QA lead) or "reviewer_lead" (a QA lead sharing a
# team with the reviewer; any QA lead where none does).
QA_DISPUTE_DAYS = env.int("QA_DISPUTE_DAYS", default=7)
QA_DISPUTE_RESOLVE_DAYS = env.int("QA_DISPUTE_RESOLVE_DAYS", default=5)
QA_ACKNOWLEDGE_DAYS = env.int("QA_ACKNOWLEDGE_DAYS", default=3)
QA_DISPUTE_ROUTING = env("QA_DISPUTE_ROUTING", default="qa_leads")

# E-mail, for password resets: EMAIL_URL (django-environ's form: smtp://user:password@host:25,
# smtp+tls://...:587, smtp+ssl://...:465), or EMAIL_HOST with EMAIL_PORT, EMAIL_HOST_USER,
# EMAIL_HOST_PASSWORD, EMAIL_USE_TLS, EMAIL_USE_SSL. With neither, no password reset is offered
# (config/accounts.py): nothing could send its message.
EMAIL_URL = env("EMAIL_URL", default="")
if EMAIL_URL:
    globals().update(env.email_url("EMAIL_URL"))
else:
    EMAIL_HOST = env("EMAIL_HOST", default="")
    EMAIL_PORT = env.int("EMAIL_PORT", default=25)
    EMAIL_HOST_USER = env("EMAIL_HOST_USER", default="")
    EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", default="")
    EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
    EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", default=False)
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)  # a dead mail server must not hold a web worker
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="veredicto@localhost")
# Whether Django can send mail at all; password resets and a paused webhook's notice need it.
QA_MAIL = bool(EMAIL_URL or EMAIL_HOST)
QA_PASSWORD_RESET = QA_MAIL

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"  # reviews.views.home: each role to its first page
LOGOUT_REDIRECT_URL = "login"

# --- Single sign-on (section owned by SSO; README "Single sign-on") ---
# OpenID Connect, Authorization Code flow with PKCE (mozilla-django-oidc), beside the password login.
# Off unless the client and the provider's endpoints are all set; some but not all is an error.
OIDC_RP_CLIENT_ID = env("OIDC_RP_CLIENT_ID", default="")
OIDC_RP_CLIENT_SECRET = env("OIDC_RP_CLIENT_SECRET", default="")
OIDC_OP_ISSUER = env("OIDC_OP_ISSUER", default="")  # ID tokens from any other issuer are refused
OIDC_OP_AUTHORIZATION_ENDPOINT = env("OIDC_OP_AUTHORIZATION_ENDPOINT", default="")
OIDC_OP_TOKEN_ENDPOINT = env("OIDC_OP_TOKEN_ENDPOINT", default="")
OIDC_OP_USER_ENDPOINT = env("OIDC_OP_USER_ENDPOINT", default="")
OIDC_OP_JWKS_ENDPOINT = env("OIDC_OP_JWKS_ENDPOINT", default="")
_SSO_SETTINGS = {
    name: globals()[name]
    for name in ("OIDC_RP_CLIENT_ID", "OIDC_RP_CLIENT_SECRET", "OIDC_OP_ISSUER", "OIDC_OP_AUTHORIZATION_ENDPOINT",
                 "OIDC_OP_TOKEN_ENDPOINT", "OIDC_OP_USER_ENDPOINT", "OIDC_OP_JWKS_ENDPOINT")
}  # fmt: skip
QA_SSO = all(_SSO_SETTINGS.values())
if any(_SSO_SETTINGS.values()) and not QA_SSO:
    raise ImproperlyConfigured(
        "Single sign-on needs all of "
        + ", ".join(_SSO_SETTINGS)
        + "; missing: "
        + ", ".join(name for name, value in _SSO_SETTINGS.items() if not value)
    )
# ID tokens signed with the provider's key (checked against its JWKS), not with the shared client secret.
OIDC_RP_SIGN_ALGO = env("OIDC_RP_SIGN_ALGO", default="RS256")
OIDC_RP_SCOPES = env("OIDC_RP_SCOPES", default="openid email profile")
OIDC_USE_PKCE = True
OIDC_TIMEOUT = env.float("OIDC_TIMEOUT", default=10.0)  # a slow provider must not hold a web worker
# The login page's button: "Sign in with <QA_OIDC_PROVIDER_NAME>" (empty: "Sign in with single sign-on").
QA_OIDC_PROVIDER_NAME = env("QA_OIDC_PROVIDER_NAME", default="")
# The claims (in the ID token or the userinfo answer) that say a person's workspace (its slug), role
# (admin, qa_lead, rubric_owner, supervisor, agent), an agent's agent id and, when named, teams (a list
# of team names). Read at every login (access.sso).
QA_OIDC_WORKSPACE_CLAIM = env("QA_OIDC_WORKSPACE_CLAIM", default="veredicto_workspace")
QA_OIDC_ROLE_CLAIM = env("QA_OIDC_ROLE_CLAIM", default="veredicto_role")
QA_OIDC_AGENT_ID_CLAIM = env("QA_OIDC_AGENT_ID_CLAIM", default="veredicto_agent_id")
QA_OIDC_TEAMS_CLAIM = env("QA_OIDC_TEAMS_CLAIM", default="")
if QA_SSO:
    AUTHENTICATION_BACKENDS = [*AUTHENTICATION_BACKENDS, "access.sso.SsoBackend"]
    # Passwords are typed and throttled at the provider: a refused callback is no guess to lock out on.
    AXES_WHITELIST_CALLABLE = "access.sso.sso_callback"
# --- end single sign-on ---

# A request body above this size is refused with 413 before it is read (config.body_limit; the views
# taking an audio file allow QA_AUDIO_MAX_BYTES instead). A batch of 500 recordings of 6 KB is about
# 3.5 MB of JSON (POST /api/recordings/batch/).
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("QA_MAX_BODY_BYTES", default=8 * 1024 * 1024)

# Celery: a broker URL means real workers; none means tasks run in-process.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=env("REDIS_URL", default=""))
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
# Without a broker, work a page starts that takes minutes (an experiment's judgments) runs in a thread
# of the web process, so the page answers at once and shows its progress.
QA_BACKGROUND_THREADS = env.bool("QA_BACKGROUND_THREADS", default=not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ACKS_LATE = False  # opted into per task, only where the task is idempotent
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600)}
CELERY_TIMEZONE = TIME_ZONE

# Redis for what every process must share: the LLM quota and the cache (so
# the API's per-key throttle). Without it, each process keeps its own cache.
QA_REDIS_URL = env("REDIS_URL", default=CELERY_BROKER_URL)
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": QA_REDIS_URL}
        if QA_REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# The judge. OPENAI_API_KEY and OPENAI_BASE_URL are read by the openai client
# itself; with neither set, Veredicto judges with the bundled local model.
QA_JUDGE_MODEL = env("QA_JUDGE_MODEL", default="")
QA_LOCAL_MODEL_PATH = env("QA_LOCAL_MODEL_PATH", default="")
# The local model by name, when QA_LOCAL_MODEL_PATH is blank: "" (the bundled SmolLM2-135M) or one of
# qa.local_model.NAMED_MODELS ("qwen2.5-coder-1.5b": its packages from scripts/qwen-model.txt).
QA_LOCAL_MODEL = env("QA_LOCAL_MODEL", default="")
# Where a local model shipped in parts is assembled at first use (beside the assembled Whisper model).
QA_LOCAL_MODEL_CACHE_DIR = env(
    "QA_LOCAL_MODEL_CACHE_DIR", default=str(Path(env("XDG_CACHE_HOME", default=str(Path.home() / ".cache"))) / "veredicto")
)
# How the environment's judge gives evidence (qa.answer): "quote", "reference" (turn numbers, an enum in
# the schema), or "auto": reference where the server is known to hold answers to the schema's enums
# (the local llama.cpp server, OpenAI's own API), quote for any other OpenAI-compatible server.
QA_EVIDENCE_MODE = env("QA_EVIDENCE_MODE", default="auto")
# What a named judge (a row rubric owners edit in the admin) may use: the environment variables
# that may hold its key, and the hosts its base URL may name (qa.models.Judge.leak_problems), written as
# QA_WEBHOOK_ALLOWED_HOSTS but matched by name, and an entry without a port allows any (core.hosts.host_listed).
# By default only the key and the server the operator configured for the environment's judge.
QA_JUDGE_KEY_VARIABLES = env.list("QA_JUDGE_KEY_VARIABLES", default=["OPENAI_API_KEY"])
_JUDGE_SERVER_HOST = urlsplit(env("OPENAI_BASE_URL", default="")).hostname or (
    "api.openai.com" if env("OPENAI_API_KEY", default="") else ""
)
QA_JUDGE_ALLOWED_HOSTS = env.list(
    "QA_JUDGE_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "::1", *filter(None, [_JUDGE_SERVER_HOST])]
)

# --- REST API (section owned by the API) ---
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # The key first: its WWW-Authenticate header makes a request without
    # credentials a 401 (the session alone would answer 403). A key request
    # skips the session, and so CSRF; a session request keeps DRF's CSRF check.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.api.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["access.ApiAccess"],
    "DEFAULT_PAGINATION_CLASS": "core.api.pagination.ApiPagination",
    "PAGE_SIZE": env.int("QA_API_PAGE_SIZE", default=50),
    "DEFAULT_THROTTLE_CLASSES": ["core.api.throttling.ApiKeyRateThrottle"],
    # Per key (or per staff user); DRF's "N/s|min|hour|day" notation. Answers 429 with Retry-After.
    "DEFAULT_THROTTLE_RATES": {"api_key": env("QA_API_THROTTLE_RATE", default="600/min")},
    "EXCEPTION_HANDLER": "core.api.exceptions.api_exception_handler",
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
# The OpenAPI schema and its docs are for users and keys (they map every endpoint); True opens them
# to anyone. Development and the test suite open them (config/settings/local.py, test.py).
QA_API_DOCS_PUBLIC = env.bool("QA_API_DOCS_PUBLIC", default=False)
SPECTACULAR_SETTINGS = {
    "TITLE": "Veredicto API",
    "DESCRIPTION": (
        "Post recordings, read verified scores, post supervisors' reviews. "
        "Authenticate with `Authorization: Api-Key <key>`. "
        "A 400 body maps each bad field to one message (a list or object field maps each bad position "
        "or sub-field to its own error); every other error is `{\"detail\": message}`."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "RecordingStatusEnum": "qa.models.Recording.Status",
        "JudgeRunStatusEnum": "qa.models.JudgeRun.Status",
        "RubricStatusEnum": "rubrics.models.Rubric.Status",
        "CalibrationStatusEnum": "reviews.models.CalibrationSession.Status",
        "ExperimentStatusEnum": "experiments.models.Experiment.Status",
        "WebhookStatusEnum": "webhooks.models.Subscription.Status",
        "WebhookDeliveryStatusEnum": "webhooks.models.Delivery.Status",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.schema.add_common_errors",
        "core.api.schema.allow_empty_optional_query_parameters",
    ],
}
# --- end REST API ---

# --- Judge pipeline (section owned by the judge) ---
# One LLM call's timeout; the task's time limits leave room around it.
QA_LLM_TIMEOUT = env.float("QA_LLM_TIMEOUT", default=300.0)
QA_JUDGE_SOFT_TIME_LIMIT = env.int("QA_JUDGE_SOFT_TIME_LIMIT", default=int(QA_LLM_TIMEOUT) + 60)
QA_JUDGE_TIME_LIMIT = env.int("QA_JUDGE_TIME_LIMIT", default=QA_JUDGE_SOFT_TIME_LIMIT + 30)
# Where the API's per-key budgets live in Redis.
QA_API_THROTTLE_PREFIX = env("QA_API_THROTTLE_PREFIX", default="veredicto:api-throttle")

# Transient failures (429, 5xx, timeouts) are retried with exponential backoff
# and jitter, never sooner than the server's Retry-After, up to this many attempts.
QA_JUDGE_MAX_ATTEMPTS = env.int("QA_JUDGE_MAX_ATTEMPTS", default=5)
QA_JUDGE_RETRY_BASE = env.float("QA_JUDGE_RETRY_BASE", default=2.0)
QA_JUDGE_RETRY_MAX_DELAY = env.float("QA_JUDGE_RETRY_MAX_DELAY", default=600.0)
# One quota for every worker, kept in Redis (0 = no limit).
QA_LLM_REQUESTS_PER_MINUTE = env.int("QA_LLM_REQUESTS_PER_MINUTE", default=500)
QA_LLM_TOKENS_PER_MINUTE = env.int("QA_LLM_TOKENS_PER_MINUTE", default=0)
# Waits for the shared quota up to this long in the worker, longer ones are rescheduled.
QA_LLM_RATE_LIMIT_MAX_WAIT = env.float("QA_LLM_RATE_LIMIT_MAX_WAIT", default=10.0)
# The sweep re-enqueues runs left pending (broker down at ingest) or stuck running.
QA_JUDGE_SWEEP_INTERVAL = env.int("QA_JUDGE_SWEEP_INTERVAL", default=60)
# How often Celery beat brings the figures' rollups up to date (s). Pages read them as of its last pass, saying
# so, as long as that pass started within three intervals; else they bring them up to date themselves.
QA_ROLLUP_REFRESH_INTERVAL = env.int("QA_ROLLUP_REFRESH_INTERVAL", default=60)
# The bundled local model's loopback server.
QA_LOCAL_MODEL_PORT = env.int("QA_LOCAL_MODEL_PORT", default=8737)
QA_LOCAL_MODEL_CONTEXT = env.int("QA_LOCAL_MODEL_CONTEXT", default=8192)
# A remote judge's context in tokens, when known (0: unknown; the server's own refusal is then read).
QA_JUDGE_CONTEXT_TOKENS = env.int("QA_JUDGE_CONTEXT_TOKENS", default=0)
QA_LOCAL_MODEL_THREADS = env.int("QA_LOCAL_MODEL_THREADS", default=0)
# llama.cpp's attention kernel (auto, on, off) and KV cache type (f16, q8_0: half the memory to read per token).
QA_LOCAL_MODEL_FLASH_ATTENTION = env("QA_LOCAL_MODEL_FLASH_ATTENTION", default="auto")
QA_LOCAL_MODEL_KV_CACHE = env("QA_LOCAL_MODEL_KV_CACHE", default="f16")
# The answer's shape for the local backend (bundled model or GGUF judge): "compact"
# (short plain-text quote and rationale, a budget that covers them) or "standard" (a remote judge's).
QA_LOCAL_ANSWER_SHAPE = env("QA_LOCAL_ANSWER_SHAPE", default="compact")
# The batch path (qa.batching, issue 45): a judge in batch mode has its pending runs collected every
# QA_BATCH_COLLECT_INTERVAL seconds into batches of at most QA_BATCH_MAX_REQUESTS lines, submitted through
# the Files and Batches APIs with QA_BATCH_COMPLETION_WINDOW, and polled every QA_BATCH_POLL_INTERVAL
# seconds. A batch's worker holds it for QA_BATCH_LEASE seconds, renewed while it works.
QA_BATCH_COLLECT_INTERVAL = env.int("QA_BATCH_COLLECT_INTERVAL", default=60)
# OpenAI takes 50,000 lines a batch, but one batch is ingested by one worker thread (12 ms of CPU a line,
# bench/batch: 10 minutes for 50,000), and its limit is on the tokens queued, not on the batches. So a
# backlog (a provider or a beat that was down) is cut into batches of 5,000 that the workers ingest side by side.
QA_BATCH_MAX_REQUESTS = env.int("QA_BATCH_MAX_REQUESTS", default=5_000)
QA_BATCH_COMPLETION_WINDOW = env("QA_BATCH_COMPLETION_WINDOW", default="24h")
QA_BATCH_POLL_INTERVAL = env.int("QA_BATCH_POLL_INTERVAL", default=60)
QA_BATCH_LEASE = env.int("QA_BATCH_LEASE", default=300)
CELERY_BEAT_SCHEDULE = {
    "judge-sweep": {"task": "qa.judge_sweep", "schedule": float(QA_JUDGE_SWEEP_INTERVAL)},
    "judge-batches": {"task": "qa.judge_batches", "schedule": float(QA_BATCH_COLLECT_INTERVAL)},
    "experiments-sweep": {"task": "experiments.sweep", "schedule": float(QA_JUDGE_SWEEP_INTERVAL)},
    # The job executor's one sweep, for every kind registered with it (core.jobs.jobs_sweep): webhook deliveries.
    "jobs-sweep": {"task": "core.jobs_sweep", "schedule": float(QA_JUDGE_SWEEP_INTERVAL)},
    # The rollups the scorecards, reports and dashboard read, brought up to date; while this runs, pages read
    # them as of its last pass (insights.scorecards.services.rollups_readable).
    "scorecards-refresh": {"task": "scorecards.refresh", "schedule": float(QA_ROLLUP_REFRESH_INTERVAL)},
    # The routing thresholds the random audit certifies (routing.services): computed once a day and frozen, so
    # an hourly beat only fills a day the first pass missed (the workers were down at midnight).
    "routing-certify": {"task": "routing.certify", "schedule": 3600.0},
}
# Without it Celery's Django fixup closes every database connection around
# every task; config.celery closes only the broken or expired ones instead
# (CONN_MAX_AGE), and this forces a fresh connection every 1000 tasks.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=1000)
# A down broker must not hold an ingest request for long: the sweep enqueues later.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
# --- end judge pipeline ---

# --- Audio and transcription (section owned by transcription) ---
# Uploaded audio goes to the default storage: files under MEDIA_ROOT, or an
# object store through django-storages (README). It is never served from
# MEDIA_URL: the review page streams it after checking the user's permission.
MEDIA_ROOT = Path(env("MEDIA_ROOT", default=str(BASE_DIR / "media")))
MEDIA_URL = "media/"
QA_AUDIO_MAX_BYTES = env.int("QA_AUDIO_MAX_BYTES", default=200 * 1024 * 1024)
QA_AUDIO_MAX_SECONDS = env.int("QA_AUDIO_MAX_SECONDS", default=2 * 60 * 60)
# More channels are refused at ingest and by the worker, before anything is decoded.
QA_AUDIO_MAX_CHANNELS = env.int("QA_AUDIO_MAX_CHANNELS", default=8)
# A transcript, however it comes, is bounded by the longest call the audio limit admits: 30 characters
# and one turn a second of it (the Harper Valley calls in tests/data render to 11-15 characters and
# 0.35-0.40 turns a second; 30 leaves room for two speakers who never pause). 2 h: 216,000 and 7,200.
QA_MAX_TRANSCRIPT_CHARS = env.int("QA_MAX_TRANSCRIPT_CHARS", default=QA_AUDIO_MAX_SECONDS * 30)
QA_MAX_TRANSCRIPT_TURNS = env.int("QA_MAX_TRANSCRIPT_TURNS", default=QA_AUDIO_MAX_SECONDS)
# In two-channel audio, the agent's channel unless a recording says otherwise.
QA_AGENT_CHANNEL = env("QA_AGENT_CHANNEL", default="left")
# A remote OpenAI-compatible /v1/audio/transcriptions model (OPENAI_BASE_URL and
# OPENAI_API_KEY as for the judge); empty: the local faster-whisper recognizer.
QA_TRANSCRIBE_MODEL = env("QA_TRANSCRIBE_MODEL", default="")
# Any CTranslate2 Whisper model directory; empty: the bundled Whisper base,
# assembled once into the cache directory.
QA_TRANSCRIBE_MODEL_PATH = env("QA_TRANSCRIBE_MODEL_PATH", default="")
_CACHE_HOME = Path(env("XDG_CACHE_HOME", default=str(Path.home() / ".cache")))
QA_TRANSCRIBE_CACHE_DIR = env("QA_TRANSCRIBE_CACHE_DIR", default=str(_CACHE_HOME / "veredicto"))
QA_TRANSCRIBE_BEAM_SIZE = env.int("QA_TRANSCRIBE_BEAM_SIZE", default=1)
QA_TRANSCRIBE_THREADS = env.int("QA_TRANSCRIBE_THREADS", default=0)
QA_TRANSCRIBE_TIMEOUT = env.float("QA_TRANSCRIBE_TIMEOUT", default=600.0)
QA_TRANSCRIBE_SOFT_TIME_LIMIT = env.int("QA_TRANSCRIBE_SOFT_TIME_LIMIT", default=3 * 60 * 60)
QA_TRANSCRIBE_TIME_LIMIT = env.int("QA_TRANSCRIBE_TIME_LIMIT", default=QA_TRANSCRIBE_SOFT_TIME_LIMIT + 60)
QA_TRANSCRIBE_MAX_ATTEMPTS = env.int("QA_TRANSCRIBE_MAX_ATTEMPTS", default=3)
# A transcription's claim is a lease renewed every third of it while the recognizer runs: a
# worker that dies mid-call has the call taken back by the sweep within this (plus one sweep
# interval), not after the time limit.
QA_TRANSCRIBE_LEASE_SECONDS = env.int("QA_TRANSCRIBE_LEASE_SECONDS", default=120)
if QA_TRANSCRIBE_LEASE_SECONDS < 3:
    raise ImproperlyConfigured(
        f"QA_TRANSCRIBE_LEASE_SECONDS is {QA_TRANSCRIBE_LEASE_SECONDS}: it must be at least 3 (seconds), "
        "as the lease is renewed every third of it."
    )
# Transcriptions have their own queue, so a long call never holds up judging:
# run `celery -A config worker -Q transcription` for it (README).
CELERY_TASK_ROUTES = {"qa.transcribe": {"queue": "transcription"}}
CELERY_BEAT_SCHEDULE["transcription-sweep"] = {
    "task": "qa.transcription_sweep",
    "schedule": float(QA_JUDGE_SWEEP_INTERVAL),
}
# Audio files left by an ingest whose transaction rolled back (qa.services.audio_orphans_delete).
CELERY_BEAT_SCHEDULE["audio-orphans-sweep"] = {"task": "qa.audio_orphans_sweep", "schedule": 3600.0}
# --- end audio and transcription ---

# --- Storage: tables by month (section owned by core.partitions; docs/operations/storage.md) ---
# Scores and events are kept by month (partitions on PostgreSQL). With QA_RETENTION_MONTHS set, every month
# older than that many whole months is written to a Parquet file under QA_ARCHIVE_DIR (an absolute folder
# the operator makes; required then), read back, and dropped. 0: kept for ever.
QA_RETENTION_MONTHS = env.int("QA_RETENTION_MONTHS", default=0)
QA_ARCHIVE_DIR = env("QA_ARCHIVE_DIR", default="")
if QA_RETENTION_MONTHS < 0:
    raise ImproperlyConfigured("QA_RETENTION_MONTHS must be 0 (off) or a number of months.")
# Hourly: next months' partitions made ahead (cheap when they exist), and a month archived once it is due.
CELERY_BEAT_SCHEDULE["storage-maintain"] = {"task": "core.storage_maintain", "schedule": 3600.0}
# --- end storage ---

# --- Webhooks (section owned by webhooks) ---
# The hosts a webhook may reach (host names, `.domain` for its subdomains, `*`, addresses or networks),
# each with an optional port (`127.0.0.1:8443`, `[::1]:9000`, `hooks.internal:*`); without one, only the
# scheme's own port (443, 80). A loopback, private or other non-public address must be listed as an
# address or network (with its port). Empty: none. The rule of every outbound host list: core/hosts.py.
QA_WEBHOOK_ALLOWED_HOSTS = env.list("QA_WEBHOOK_ALLOWED_HOSTS", default=[])
QA_WEBHOOK_TIMEOUT = env.float("QA_WEBHOOK_TIMEOUT", default=10.0)
# A failed attempt waits RETRY_BASE, then twice as long each time, until RETRY_WINDOW after the first send.
QA_WEBHOOK_RETRY_BASE = env.float("QA_WEBHOOK_RETRY_BASE", default=60.0)
QA_WEBHOOK_RETRY_WINDOW = env.float("QA_WEBHOOK_RETRY_WINDOW", default=24 * 3600.0)
# A subscription whose every attempt has failed this long is paused, and its owner told.
QA_WEBHOOK_PAUSE_AFTER = env.float("QA_WEBHOOK_PAUSE_AFTER", default=24 * 3600.0)
# How long a process keeps the list of subscribed events it asks before each emit (s).
QA_WEBHOOK_SUBSCRIPTIONS_TTL = env.float("QA_WEBHOOK_SUBSCRIPTIONS_TTL", default=1.0)
# How often Celery beat's drain fans out the events committed since the last (s): the judging only
# writes its events and publishes nothing (webhooks.services.events_dispatch). A drain not started
# within a few periods (workers down) expires rather than piling up behind the next ones.
QA_WEBHOOK_DRAIN_EVERY = env.float("QA_WEBHOOK_DRAIN_EVERY", default=1.0)
# Where the app is reached from outside, for the links in a webhook's body; empty: links are paths.
QA_PUBLIC_URL = env("QA_PUBLIC_URL", default="")
CELERY_BEAT_SCHEDULE["webhooks-drain"] = {
    "task": "webhooks.events_drain",
    "schedule": QA_WEBHOOK_DRAIN_EVERY,
    "options": {"expires": max(5 * QA_WEBHOOK_DRAIN_EVERY, 5.0)},
}
# --- end webhooks ---

# --- Intake (section owned by intake): Twilio's recording callback and drop folders ---
# The environment variables a Twilio account's auth token or an S3 folder's keys may be read from
# (intake.models): a workspace's admin names one, the operator decides which exist to name.
INTAKE_SECRET_VARIABLES = env.list("INTAKE_SECRET_VARIABLES", default=[])
# Where a Twilio recording may be fetched from, and an S3 folder's endpoint, written as
# QA_WEBHOOK_ALLOWED_HOSTS (core/hosts.py: a non-public address must be listed as one, with its port).
INTAKE_TWILIO_ALLOWED_HOSTS = env.list("INTAKE_TWILIO_ALLOWED_HOSTS", default=["api.twilio.com"])
INTAKE_S3_ALLOWED_HOSTS = env.list("INTAKE_S3_ALLOWED_HOSTS", default=[".amazonaws.com"])
# The folders under which a local drop folder may lie; empty: none.
INTAKE_FOLDER_ROOTS = env.list("INTAKE_FOLDER_ROOTS", default=[])
# The SFTP servers a drop folder may log in to, each as host:port (intake/hosts.py's entries, checked as
# an https URL's: an entry without its port allows only 443); empty: none.
INTAKE_SFTP_ALLOWED_HOSTS = env.list("INTAKE_SFTP_ALLOWED_HOSTS", default=[])
# The files an SFTP folder may name: private keys to log in with, known_hosts files with the servers'
# host keys (a workspace's admin names one; without the list they could name any file a worker reads).
INTAKE_SFTP_FILES = env.list("INTAKE_SFTP_FILES", default=[])
# A file's claim lasts this long unless renewed (every third of it while the file downloads): a worker
# that dies mid-file has it taken back by the sweep within a lease.
INTAKE_LEASE_SECONDS = env.float("INTAKE_LEASE_SECONDS", default=120.0)
INTAKE_MAX_ATTEMPTS = env.int("INTAKE_MAX_ATTEMPTS", default=5)
INTAKE_TIME_LIMIT = env.int("INTAKE_TIME_LIMIT", default=1800)
# How often Celery beat scans the drop folders and takes back the intake jobs whose worker died (s).
INTAKE_SCAN_INTERVAL = env.float("INTAKE_SCAN_INTERVAL", default=60.0)
CELERY_BEAT_SCHEDULE["intake-scan"] = {
    "task": "intake.scan",
    "schedule": INTAKE_SCAN_INTERVAL,
    "options": {"expires": INTAKE_SCAN_INTERVAL},
}
# --- end intake ---

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"expected_refusal": {"()": "core.log.ExpectedRefusal"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    # The openai client's HTTP library (httpx2 since openai 3, httpx before)
    # logs every request at INFO: one line per judgment, which breaks the judge
    # command's progress bar and repeats what the run already stores.
    "loggers": {
        # Django's logger prints through a console handler of its own when DEBUG and then passes the record
        # on to the root's: every warning and error twice (a 403's traceback twice). The root's prints it.
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        # A 403 is one line, without PermissionDenied's traceback (core.log).
        "django.request": {"filters": ["expected_refusal"]},
        "httpx2": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        # faster-whisper logs each channel's duration and VAD cut at INFO; the transcription stores both.
        "faster_whisper": {"level": "WARNING"},
        # Presidio logs every recognizer it loads and the device it found at INFO, a few dozen lines each
        # time a process first redacts: they break the judge command's progress bar and tell an operator nothing.
        "presidio-analyzer": {"level": "WARNING"},
        # asyncssh (an SFTP drop folder) logs every connection's and channel's steps at INFO, a dozen lines
        # a scan; a failure comes back as the job's error.
        "asyncssh": {"level": "WARNING"},
    },
}
if CELERY_TASK_ALWAYS_EAGER:
    # Tasks run in the process (the embedded first run): Celery logs each one's success at INFO, and kombu
    # warns that no broker host was given though none is used; both fell between the demo's own lines.
    LOGGING["loggers"]["celery.app.trace"] = {"level": "WARNING"}
    LOGGING["loggers"]["kombu.connection"] = {"level": "ERROR"}

# Redaction of personal data (qa/redaction, README "Personal data"): per entity type, TYPE=action
# pairs over the defaults (cards and bank accounts mask_at_rest, the rest mask_for_llm); the admin's
# redaction policies override both. The agent's own name is kept unless QA_REDACTION_MASK_AGENT_NAME.
QA_REDACTION_POLICY = env("QA_REDACTION_POLICY", default="")
QA_REDACTION_MASK_AGENT_NAME = env.bool("QA_REDACTION_MASK_AGENT_NAME", default=False)
# The spaCy package that finds names and places, per language, over qa.redaction.engine.MODELS
# ("es=es_core_news_md"). A policy that masks names refuses to redact (and `check --deploy` fails)
# while its language's model is not installed.
QA_REDACTION_NAME_MODELS = env("QA_REDACTION_NAME_MODELS", default="")
