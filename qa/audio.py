"""What an uploaded audio file is, and whether Veredicto takes it.

Read with PyAV (FFmpeg's libraries, a dependency of faster-whisper), so the
check at ingest uses the same decoder as the transcription: a file accepted
here can be transcribed. Nothing here touches the database or the storage.

This runs inside a web request, so it reads the headers and decodes a bounded
prefix only (INGEST_DECODE_SECONDS of audio, INGEST_DECODE_BUDGET of time): a
header can under-report the length (a variable-bitrate MP3 without its length
header) and a long silent file would hold the request while it is decoded. The
transcription worker measures the length and the silence by decoding the whole
file (qa.transcription.audio_decode).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

import time

import av
from django.conf import settings
from django.utils.translation import gettext as _

from core.errors import InvalidInputError, TooLargeError

# FFmpeg's demuxer names for WAV, FLAC, MP3, OGG (Vorbis, Opus), M4A/MP4 (AAC, ALAC) and WebM/Matroska (Opus).
ACCEPTED_CONTAINERS = frozenset({"wav", "flac", "mp3", "ogg", "mov", "mp4", "m4a", "matroska", "webm"})
# Below -50 dBFS everywhere there is nothing for a recognizer: an empty line, a muted recorder.
SILENCE_PEAK = 10 ** (-50 / 20)
# What a request decodes, at most, to look for sound: enough for any real call's first words, and
# at most about 0.2 s of CPU at 8 channels of 48 kHz; the wall-clock budget covers a slow decoder.
INGEST_DECODE_SECONDS = 30.0
INGEST_DECODE_BUDGET = 1.0
# Room for a multipart body's other fields and boundaries around the audio file.
UPLOAD_OVERHEAD_BYTES = 64 * 1024


# How a channel is named: by its place in the file, from 1; `left` and `right` are the first two.
CHANNEL_NAMES = {"left": 1, "right": 2}


class AudioTooLargeError(TooLargeError):
    """The file is over QA_AUDIO_MAX_BYTES (an HTTP 413, not a 400)."""


@dataclass(frozen=True)
class AudioInfo:
    container: str
    codec: str
    channels: int
    sample_rate: int
    duration_seconds: float | None  # the header's (None when it has none); the worker measures it


def audio_upload_limit() -> int:
    """The largest request body that carries an audio file: the file and its form's other fields."""
    return settings.QA_AUDIO_MAX_BYTES + UPLOAD_OVERHEAD_BYTES


def _refuse(message: str) -> InvalidInputError:
    return InvalidInputError({"audio": message})


def audio_check_size(size: int) -> None:
    if size > settings.QA_AUDIO_MAX_BYTES:
        raise AudioTooLargeError(
            _("The audio file is %(size)s bytes; the limit is %(limit)s bytes.")
            % {"size": size, "limit": settings.QA_AUDIO_MAX_BYTES}
        )


def audio_inspect(file: IO[bytes], *, size: int) -> AudioInfo:
    """Probe and check an audio file; raise InvalidInputError (or AudioTooLargeError) naming the problem.

    Refused: empty, not audio or unreadable, an unsupported container, more
    channels than QA_AUDIO_MAX_CHANNELS, a header saying it is longer than
    QA_AUDIO_MAX_SECONDS, or silent throughout (when the bounded prefix is the
    whole file; a longer silent file is failed by the worker). Whether its
    channels can be told apart is `channel_map_check`'s question.
    """
    audio_check_size(size)
    if size == 0:
        raise _refuse(_("The audio file is empty."))
    file.seek(0)
    try:
        with av.open(file, mode="r") as container:
            info = _info(container)
            _check(info)
            if (info.duration_seconds is not None and info.duration_seconds <= 0) or _silent(container):
                raise _refuse(_("The audio is silent: there is nothing to transcribe."))
    except av.FFmpegError as error:
        # FFmpeg's own words, without its error number and the file's name.
        reason = getattr(error, "strerror", None) or str(error)
        raise _refuse(_("The file is not readable audio (%(error)s).") % {"error": reason}) from error
    finally:
        file.seek(0)
    return info


def _info(container: av.container.InputContainer) -> AudioInfo:
    formats = set(container.format.name.split(","))
    if not container.streams.audio:
        raise _refuse(_("The file has no audio stream."))
    if not formats & ACCEPTED_CONTAINERS:
        raise _refuse(
            _("Audio in %(format)s files is not accepted; send WAV, FLAC, MP3, OGG/Opus or M4A.")
            % {"format": container.format.long_name or container.format.name}
        )
    stream = container.streams.audio[0]
    if not stream.codec_context.channels:
        raise _refuse(_("The file's audio has no channels FFmpeg can read."))
    duration = None
    if container.duration is not None:
        duration = container.duration / av.time_base
    elif stream.duration is not None and stream.time_base is not None:
        duration = float(stream.duration * stream.time_base)
    return AudioInfo(
        container=container.format.name,
        codec=stream.codec_context.name,
        channels=stream.codec_context.channels,
        sample_rate=stream.codec_context.sample_rate,
        duration_seconds=duration,
    )


def _check(info: AudioInfo) -> None:
    # Before anything is decoded: PyAV's planar frames of 8 channels or more are read past their end
    # (a crash), and the cost of decoding grows with the channels.
    if info.channels > settings.QA_AUDIO_MAX_CHANNELS:
        raise _refuse(
            _("The audio has %(channels)s channels; the limit is %(limit)s channels.")
            % {"channels": info.channels, "limit": settings.QA_AUDIO_MAX_CHANNELS}
        )
    if info.duration_seconds is not None and info.duration_seconds > settings.QA_AUDIO_MAX_SECONDS:
        raise _refuse(
            _("The audio lasts %(seconds)d s; the limit is %(limit)d s.")
            % {"seconds": info.duration_seconds, "limit": settings.QA_AUDIO_MAX_SECONDS}
        )


def _silent(container: av.container.InputContainer) -> bool:
    """Whether the file is silent throughout, as far as a request may look: True only when the whole
    file was decoded within INGEST_DECODE_SECONDS and INGEST_DECODE_BUDGET and no sample reached
    SILENCE_PEAK. Stops at the first sound, so a real call costs a few frames; a silent prefix of a
    longer file is left to the worker, which decodes it all."""
    # Packed samples, every channel as it is (sound on any one is sound): PyAV reads planar frames of
    # 8 channels or more past their end, so no planar frame is turned into an array here.
    resampler = av.AudioResampler(format="flt")
    deadline = time.monotonic() + INGEST_DECODE_BUDGET
    decoded = 0.0
    for frame in container.decode(audio=0):
        for converted in resampler.resample(frame):
            if abs(converted.to_ndarray()).max(initial=0.0) >= SILENCE_PEAK:
                return False
        decoded += frame.samples / (frame.sample_rate or 1)
        if decoded >= INGEST_DECODE_SECONDS or time.monotonic() >= deadline:
            return False  # undecided: the worker decides
    return True


def channel_number(value: str) -> int | None:
    """A channel's number (from 1) from how a caller names it, `left`, `right` or its number; None if it names none."""
    value = value.strip().lower()
    if value in CHANNEL_NAMES:
        return CHANNEL_NAMES[value]
    return int(value) if value.isascii() and value.isdigit() and int(value) >= 1 else None


def channel_name_check(field: str, value: str) -> None:
    """Refuse a channel name that names no channel in any file (before the file is read)."""
    if value and channel_number(value) is None:
        raise InvalidInputError(
            {field: _("%(field)s is 'left', 'right' or a channel's number, from 1.") % {"field": field}}
        )


def channel_map_check(*, channels: int, agent_channel: str, customer_channel: str) -> tuple[str, str]:
    """The agent's and the customer's channels as a recording keeps them, or InvalidInputError.

    Mono: no channels ("", ""); the speakers are unknown unless a server diarizes.
    Two channels: the agent's is `agent_channel` (default QA_AGENT_CHANNEL, or the
    one that is not `customer_channel`), kept as `left`/`right`; the customer is on
    the other, kept as "". More: both must be named (the channel map), kept as
    numbers; the other channels are not transcribed.
    """
    if channels == 1:
        return "", ""
    if channels > 2 and not (agent_channel and customer_channel):
        raise _refuse(
            _(
                "The audio has %(channels)s channels: say which is the agent's and which the customer's "
                "with agent_channel and customer_channel (channel numbers, 1 to %(channels)s)."
            )
            % {"channels": channels}
        )
    numbers = {}
    for field, value in (("agent_channel", agent_channel), ("customer_channel", customer_channel)):
        number = channel_number(value) if value else None
        if number is not None and number > channels:
            raise InvalidInputError(
                {
                    field: _("%(field)s is channel %(number)s, but the audio has %(channels)s channels.")
                    % {"field": field, "number": number, "channels": channels}
                }
            )
        numbers[field] = number
    agent, customer = numbers["agent_channel"], numbers["customer_channel"]
    if channels == 2:
        agent = agent or (3 - customer if customer else CHANNEL_NAMES[settings.QA_AGENT_CHANNEL])
        customer = customer or 3 - agent
    if agent == customer:
        raise InvalidInputError(
            {"customer_channel": _("The agent and the customer are both on channel %(number)s.") % {"number": agent}}
        )
    if channels == 2:
        return ("left", "right")[agent - 1], ""
    return str(agent), str(customer)
