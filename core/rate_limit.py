"""One LLM quota shared by every worker, kept in Redis.

Requests per minute always (when configured), tokens per minute where
configured. Each limit is a GCRA bucket holding one minute of quota: a call
may go when both buckets have room, and then takes its share from both in the
same atomic script, so adding workers never exceeds the provider's quota.

Tokens are reserved before the call from an estimate (prompt plus the whole
completion budget) and settled with the real usage afterwards.

The API's per-key throttle takes from buckets of the same kind (`rate_try_take`).

Without Redis (the embedded default: tasks run in-process, one at a time)
there is nothing to share and no limit is applied; a 429 is still honoured
through the task's retries.
"""

from __future__ import annotations

import functools
import time

import redis
from django.conf import settings

KEY_PREFIX = "veredicto:llm-quota"
WINDOW_MS = 60_000

# KEYS: one bucket per limit. ARGV: now (ms), window (ms), then for each bucket
# its limit per window and the amount to take. Returns 0 when every bucket has
# room (and takes from each), else the ms to wait; checked and taken in one
# script, so concurrent callers can never both take the last unit.
_ACQUIRE = """
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local next_tats = {}
local wait = 0
for i = 1, #KEYS do
  local limit = tonumber(ARGV[1 + 2 * i])
  local amount = tonumber(ARGV[2 + 2 * i])
  if limit > 0 then
    local tat = tonumber(redis.call('GET', KEYS[i]) or now)
    if tat < now then tat = now end
    next_tats[i] = tat + math.min(amount, limit) * window / limit
    wait = math.max(wait, next_tats[i] - now - window)
  end
end
if wait > 0 then return math.ceil(wait) end
for i = 1, #KEYS do
  if next_tats[i] then redis.call('SET', KEYS[i], next_tats[i], 'PX', 2 * window) end
end
return 0
"""

# KEYS: tokens bucket. ARGV: tokens/min, tokens to give back (negative: to take).
_SETTLE = """
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat then
  redis.call('SET', KEYS[1], tat - tonumber(ARGV[2]) * 60000 / tonumber(ARGV[1]), 'PX', 120000)
end
return 0
"""


@functools.cache
def _redis(url: str) -> redis.Redis:
    # Bounded waits: with Redis unreachable, a caller that fails open (the API's
    # throttle) must learn it in seconds, not hang on the socket.
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)


def _keys(scope: str) -> list[str]:
    return [f"{KEY_PREFIX}:{scope}:requests", f"{KEY_PREFIX}:{scope}:tokens"]


def quota_try_acquire(*, tokens: int, scope: str = "default") -> float:
    """Take one request and `tokens` tokens from the shared quota if there is
    room now; return 0.0 then, else the seconds to wait (nothing taken)."""
    rpm, tpm = settings.QA_LLM_REQUESTS_PER_MINUTE, settings.QA_LLM_TOKENS_PER_MINUTE
    if not settings.QA_REDIS_URL or (rpm <= 0 and tpm <= 0):
        return 0.0
    client = _redis(settings.QA_REDIS_URL)
    wait_ms = client.eval(_ACQUIRE, 2, *_keys(scope), int(time.time() * 1000), WINDOW_MS, rpm, 1, tpm, tokens)
    return int(wait_ms) / 1000


def rate_try_take(*, key: str, limit: int, window_seconds: float) -> float:
    """Take one from the bucket `key` (`limit` per `window_seconds`, shared through
    Redis) if it has room now: 0.0 then, else the seconds to wait (nothing taken).

    Raises redis.RedisError when Redis cannot be reached; the caller decides.
    """
    client = _redis(settings.QA_REDIS_URL)
    wait_ms = client.eval(_ACQUIRE, 1, key, int(time.time() * 1000), int(window_seconds * 1000), limit, 1)
    return int(wait_ms) / 1000


def quota_acquire(*, tokens: int, scope: str = "default") -> float:
    """Wait in this process for room up to QA_LLM_RATE_LIMIT_MAX_WAIT seconds.

    Returns 0.0 once the quota is taken, or the remaining wait when it is
    longer than that bound, so the caller can reschedule instead of blocking.
    """
    deadline = time.monotonic() + settings.QA_LLM_RATE_LIMIT_MAX_WAIT
    while wait := quota_try_acquire(tokens=tokens, scope=scope):
        if time.monotonic() + wait > deadline:
            return wait
        time.sleep(wait)
    return 0.0


def quota_settle(*, reserved: int, used: int, scope: str = "default") -> None:
    """Give back the reserved tokens the call did not use (or take the excess)."""
    tpm = settings.QA_LLM_TOKENS_PER_MINUTE
    if not settings.QA_REDIS_URL or tpm <= 0 or reserved == used:
        return
    _redis(settings.QA_REDIS_URL).eval(_SETTLE, 1, _keys(scope)[1], tpm, reserved - used)
