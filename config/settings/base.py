"""Settings shared by every environment, read from environment variables.

With nothing set, Veredicto runs on the embedded default: a SQLite file and
Celery tasks executed in-process, so a fresh clone works without servers.
Setting DATABASE_URL and CELERY_BROKER_URL (or REDIS_URL) switches to
PostgreSQL and real Celery workers on Redis.
"""

from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONE, SELF
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
    "rubrics",
    "qa",
    "reviews",
    "reviews.experiments",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
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
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
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

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"  # reviews.views.home: each role to its first page
LOGOUT_REDIRECT_URL = "login"

# A request body above this size is refused with 413 (the API's ingest limit).
# A batch of 500 recordings of 6 KB is about 3.5 MB of JSON (POST /api/recordings/batch/).
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("QA_MAX_BODY_BYTES", default=8 * 1024 * 1024)

# Celery: a broker URL means real workers; none means tasks run in-process.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=env("REDIS_URL", default=""))
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
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

# --- REST API (section owned by the API) ---
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # The key first: its WWW-Authenticate header makes a request without
    # credentials a 401 (the session alone would answer 403). A key request
    # skips the session, and so CSRF; a session request keeps DRF's CSRF check.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "qa.api.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["qa.api.permissions.IsApiKeyOrPermitted"],
    "DEFAULT_PAGINATION_CLASS": "qa.api.pagination.ApiPagination",
    "PAGE_SIZE": env.int("QA_API_PAGE_SIZE", default=50),
    "DEFAULT_THROTTLE_CLASSES": ["qa.api.throttling.ApiKeyRateThrottle"],
    # Per key (or per staff user); DRF's "N/s|min|hour|day" notation. Answers 429 with Retry-After.
    "DEFAULT_THROTTLE_RATES": {"api_key": env("QA_API_THROTTLE_RATE", default="600/min")},
    "EXCEPTION_HANDLER": "qa.api.exceptions.api_exception_handler",
    "DEFAULT_PARSER_CLASSES": ["qa.api.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
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
        "ExperimentStatusEnum": "reviews.experiments.models.Experiment.Status",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "qa.api.schema.add_common_errors",
        "qa.api.schema.allow_empty_optional_query_parameters",
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
# The bundled local model's loopback server.
QA_LOCAL_MODEL_PORT = env.int("QA_LOCAL_MODEL_PORT", default=8737)
QA_LOCAL_MODEL_CONTEXT = env.int("QA_LOCAL_MODEL_CONTEXT", default=8192)
QA_LOCAL_MODEL_THREADS = env.int("QA_LOCAL_MODEL_THREADS", default=0)
# llama.cpp's attention kernel (auto, on, off) and KV cache type (f16, q8_0: half the memory to read per token).
QA_LOCAL_MODEL_FLASH_ATTENTION = env("QA_LOCAL_MODEL_FLASH_ATTENTION", default="auto")
QA_LOCAL_MODEL_KV_CACHE = env("QA_LOCAL_MODEL_KV_CACHE", default="f16")
# The answer's shape for the local backend (bundled model or GGUF judge): "compact"
# (short plain-text quote and rationale, a budget that covers them) or "standard" (a remote judge's).
QA_LOCAL_ANSWER_SHAPE = env("QA_LOCAL_ANSWER_SHAPE", default="compact")
CELERY_BEAT_SCHEDULE = {
    "judge-sweep": {"task": "qa.judge_sweep", "schedule": float(QA_JUDGE_SWEEP_INTERVAL)},
    "experiments-sweep": {"task": "experiments.sweep", "schedule": float(QA_JUDGE_SWEEP_INTERVAL)},
    # The scorecards' weekly rollup, brought up to date every minute (the pages also do it before reading).
    "scorecards-refresh": {"task": "scorecards.refresh", "schedule": 60.0},
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

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    # The openai client's HTTP library (httpx2 since openai 3, httpx before)
    # logs every request at INFO: one line per judgment, which breaks the judge
    # command's progress bar and repeats what the run already stores.
    "loggers": {
        "httpx2": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        # faster-whisper logs each channel's duration and VAD cut at INFO; the transcription stores both.
        "faster_whisper": {"level": "WARNING"},
    },
}

# Redaction of personal data (qa/redaction, README "Personal data"): per entity type, TYPE=action
# pairs over the defaults (cards and bank accounts mask_at_rest, the rest mask_for_llm); the admin's
# redaction policies override both. The agent's own name is kept unless QA_REDACTION_MASK_AGENT_NAME.
QA_REDACTION_POLICY = env("QA_REDACTION_POLICY", default="")
QA_REDACTION_MASK_AGENT_NAME = env.bool("QA_REDACTION_MASK_AGENT_NAME", default=False)
