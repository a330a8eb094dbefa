"""Speech to a verbatim, timed transcript: the recognizer backends and the speaker turns.

Two backends, chosen like the judge's (read at call time):

- `local` (the default, offline): faster-whisper, CTranslate2 int8 on the CPU,
  with the bundled Whisper base model (qa.whisper_model) or the CTranslate2
  model at QA_TRANSCRIBE_MODEL_PATH.
- `openai-compatible` / `openai`: QA_TRANSCRIBE_MODEL set, sent through the
  `openai` client to `/v1/audio/transcriptions` at OPENAI_BASE_URL (or
  OpenAI), asking for word and segment timestamps.

Speakers: a two-channel recording is transcribed one channel at a time (the
agent on QA_AGENT_CHANNEL or the recording's own setting) and the segments are
merged by time into agent and customer turns; with more channels, the two its
channel map names (qa.audio.channel_map_check), the others not at all. A mono recording keeps the
speakers a diarizing server names; otherwise every turn has the unknown
speaker, and the recording says so. Nothing is guessed.

The words are the recognizer's own, untouched: a turn's text is its words
joined by single spaces, so every word's characters in the rendered
transcript can be found again (Recording.quote_time_span).

Audio is decoded here, in the worker, never trusting the header: a first pass
keeps nothing and measures the length sample by sample, stopping and failing
the transcription once it passes QA_AUDIO_MAX_SECONDS (a variable-bitrate MP3
without its length header says a fraction of its real length) or finding it
silent throughout; the second keeps only the channels to transcribe, at 16 kHz,
in arrays sized from that count. Memory is then bounded by the limit, not the
file: the channels kept (4 bytes a sample), plus a frame at a time.
"""

from __future__ import annotations

import functools
import gc
import io
import itertools
import math
import os
import wave
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import av
import numpy as np
import openai
from django.conf import settings

from qa.audio import SILENCE_PEAK, channel_number
from qa.llm import TRANSIENT_STATUSES, retry_after_seconds

SAMPLE_RATE = 16_000
# How far past QA_AUDIO_MAX_SECONDS a decoded file may run: an encoder pads its last frame, and the
# header's length, which ingest checked, leaves that padding out.
DURATION_SLACK_SECONDS = 1.0
# Decoded samples resampled at a time (per channel; at most 8 x 4 bytes each: 16 MB).
GROUP_SAMPLES = 500_000
# Samples converted at a time when a channel is written as WAV for a remote recognizer.
WAV_CHUNK = 1 << 20
# A pause this long inside one channel's segment splits it (see _utterances).
TURN_GAP_MS = 1000
# The labels follow the rubric's language, as the sample rubrics' transcripts do.
SPEAKER_LABELS = {
    "es": {"agent": "AGENTE", "customer": "CLIENTE", "unknown": "DESCONOCIDO"},
    "en": {"agent": "AGENT", "customer": "CUSTOMER", "unknown": "UNKNOWN"},
}


class TranscriptionError(Exception):
    """A failed transcription; `transient` ones are retried, the others fail it at once."""

    def __init__(self, message: str, *, transient: bool, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.transient = transient
        self.retry_after = retry_after


@dataclass(frozen=True)
class Word:
    text: str
    start_ms: int
    end_ms: int


@dataclass(frozen=True)
class Segment:
    """What the recognizer heard as one stretch of speech on one channel."""

    role: str  # "agent", "customer", "unknown", or a diarizing server's own speaker name
    start_ms: int
    end_ms: int
    text: str
    words: tuple[Word, ...] = ()


@dataclass
class SpeakerTurn:
    speaker: str
    start_ms: int
    end_ms: int
    words: list[Word] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        if self.words:
            return " ".join(word.text for word in self.words)
        return " ".join(self.texts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "speaker": self.speaker,
            "text": self.text,
            "start_ms": self.start_ms,
            "end_ms": self.end_ms,
            "words": [{"word": word.text, "start_ms": word.start_ms, "end_ms": word.end_ms} for word in self.words],
        }


@dataclass(frozen=True)
class Transcript:
    turns: list[SpeakerTurn]
    speakers_known: bool
    audio_seconds: float


def speaker_labels(language: str) -> dict[str, str]:
    return SPEAKER_LABELS.get((language or "").split("-")[0].lower(), SPEAKER_LABELS["en"])


def _clean(text: str) -> str:
    # One line per turn: the recognizer's own characters, with its whitespace collapsed.
    return " ".join(text.split())


def _utterances(segment: Segment) -> list[Segment]:
    """A segment cut where its words pause for TURN_GAP_MS or more. Whisper can make one segment of
    two stretches of speech with the other channel's turn in between; left whole, it would swallow
    that turn's place in the merge."""
    if not segment.words:
        return [segment]
    pieces, current = [], [segment.words[0]]
    for word in segment.words[1:]:
        if word.start_ms - current[-1].end_ms >= TURN_GAP_MS:
            pieces.append(current)
            current = []
        current.append(word)
    pieces.append(current)
    if len(pieces) == 1:
        return [segment]
    return [
        Segment(segment.role, words[0].start_ms, words[-1].end_ms, " ".join(word.text for word in words), tuple(words))
        for words in pieces
    ]


def turns_merge(segments: list[Segment], *, language: str) -> list[SpeakerTurn]:
    """Segments of all channels, in time order, with consecutive ones of one speaker joined into a turn."""
    labels = speaker_labels(language)
    turns: list[SpeakerTurn] = []
    pieces = [piece for segment in segments for piece in _utterances(segment)]
    for segment in sorted(pieces, key=lambda segment: (segment.start_ms, segment.end_ms)):
        words = [Word(_clean(word.text), word.start_ms, word.end_ms) for word in segment.words if _clean(word.text)]
        text = _clean(segment.text)
        if not words and not text:
            continue
        speaker = labels.get(segment.role, _clean(segment.role).replace(":", " "))
        if turns and turns[-1].speaker == speaker:
            turn = turns[-1]
            turn.end_ms = max(turn.end_ms, segment.end_ms)
        else:
            turn = SpeakerTurn(speaker=speaker, start_ms=segment.start_ms, end_ms=segment.end_ms)
            turns.append(turn)
        turn.words.extend(words)
        turn.texts.append(text)
    return turns


# --- Audio --------------------------------------------------------------------


@dataclass(frozen=True)
class DecodedAudio:
    channels: dict[int, np.ndarray]  # float32 at SAMPLE_RATE, by the channel's index in the file (from 0)
    seconds: float


def _failed(message: str) -> TranscriptionError:
    return TranscriptionError(message, transient=False)


@contextmanager
def _opened(file: IO[bytes]) -> Iterator[av.container.InputContainer]:
    file.seek(0)
    try:
        with av.open(file, mode="r", metadata_errors="ignore") as container:
            if not container.streams.audio:
                raise _failed("The file has no audio stream.")
            yield container
    except av.FFmpegError as error:
        raise _failed(f"The audio cannot be decoded: {getattr(error, 'strerror', None) or error}") from error
    except ValueError as error:  # PyAV's resampler, given a frame whose format changed mid-stream
        raise _failed(f"The audio cannot be decoded: {error}") from error
    finally:
        file.seek(0)


def _frames(container: av.container.InputContainer) -> Iterator[av.AudioFrame]:
    """The audio frames, skipping the ones FFmpeg cannot decode, as faster-whisper's decoder does."""
    frames = container.decode(audio=0)
    while True:
        try:
            yield next(frames)
        except StopIteration:
            return
        except av.InvalidDataError:
            continue


def _grouped(frames: Iterator[av.AudioFrame]) -> Iterator[av.AudioFrame]:
    """The frames joined GROUP_SAMPLES at a time, as faster-whisper does: a Python step per decoded
    frame (576 samples of a 16 kHz MP3) costs more than the resampling."""
    fifo = av.AudioFifo()
    for frame in frames:
        frame.pts = None  # resampled in order; gaps in the timestamps don't matter here
        fifo.write(frame)
        if fifo.samples >= GROUP_SAMPLES:
            yield fifo.read()
    if fifo.samples:
        yield fifo.read()


def _channels_check(container: av.container.InputContainer) -> int:
    channels = container.streams.audio[0].codec_context.channels
    if channels > settings.QA_AUDIO_MAX_CHANNELS:
        raise _failed(
            f"The audio has {channels} channels; the limit is {settings.QA_AUDIO_MAX_CHANNELS} channels "
            "(QA_AUDIO_MAX_CHANNELS)."
        )
    if not channels:
        raise _failed("The file's audio has no channels FFmpeg can read.")
    return channels


def audio_measure(file: IO[bytes]) -> float:
    """The audio's length in seconds, counted from its decoded samples, keeping none of them.

    TranscriptionError (not transient) before decoding if it has more channels than
    QA_AUDIO_MAX_CHANNELS; as soon as the count passes QA_AUDIO_MAX_SECONDS, whatever its
    header said; or at the end if no sample on any channel reaches qa.audio.SILENCE_PEAK.
    """
    limit = settings.QA_AUDIO_MAX_SECONDS
    with _opened(file) as container:
        _channels_check(container)
        header = f" (its header says {container.duration / av.time_base:.0f} s)" if container.duration else ""
        # Packed samples: PyAV reads planar frames of 8 channels or more past their end (a crash), so no
        # planar frame is ever turned into an array. Only until the first sound.
        resampler: av.AudioResampler | None = av.AudioResampler(format="flt")
        seconds = 0.0
        for frame in _frames(container):
            if resampler is not None:
                for converted in resampler.resample(frame):
                    if abs(converted.to_ndarray()).max(initial=0.0) >= SILENCE_PEAK:
                        resampler = None
                        break
            seconds += frame.samples / frame.sample_rate
            if seconds > limit + DURATION_SLACK_SECONDS:
                raise _failed(
                    f"The audio lasts more than {limit} s, counted by decoding it{header}; "
                    f"the limit is {limit} s (QA_AUDIO_MAX_SECONDS). Decoding stopped there."
                )
    if resampler is not None:
        raise _failed("The audio is silent throughout: there is nothing to transcribe.")
    return seconds


def audio_decode(file: IO[bytes], *, keep: Iterable[int]) -> DecodedAudio:
    """The channels `keep` names (indices in the file, from 0), each float32 at SAMPLE_RATE, after
    `audio_measure` accepted the file. The others are dropped a frame at a time, never held."""
    seconds = audio_measure(file)
    keep = sorted(set(keep))
    with _opened(file) as container:
        channels = _channels_check(container)
        if keep[-1] >= channels:
            raise _failed(f"The recording's channel map names channel {keep[-1] + 1}; the audio has {channels}.")
        # s16, packed, each channel as it is: the samples faster-whisper's own decoder gives for mono and
        # stereo (and never a planar frame as an array: see audio_measure).
        resampler = av.AudioResampler(format="s16", rate=SAMPLE_RATE)
        capacity = math.ceil(seconds * SAMPLE_RATE) + SAMPLE_RATE  # a second's room for the resampler
        kept = {index: np.empty(capacity, dtype=np.float32) for index in keep}
        filled = 0
        for frame in itertools.chain(_grouped(_frames(container)), [None]):  # None flushes the resampler
            for converted in resampler.resample(frame):
                samples = converted.to_ndarray().reshape(-1, converted.layout.nb_channels)
                end = filled + len(samples)
                if end > capacity:  # a decoder that gives more than it counted: grow rather than lose audio
                    capacity = max(end, capacity + capacity // 8)
                    kept = {index: np.resize(array, capacity) for index, array in kept.items()}
                for index, array in kept.items():
                    np.divide(samples[:, index], 32768.0, out=array[filled:end])
                filled = end
        del resampler
        gc.collect()  # PyAV's resampler keeps buffers until collected (faster-whisper's issue 390)
    return DecodedAudio(channels={index: array[:filled] for index, array in kept.items()}, seconds=filled / SAMPLE_RATE)


def _wav_bytes(samples: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(SAMPLE_RATE)
        # A chunk at a time: converting a 2-hour channel at once would take three copies of it.
        for start in range(0, len(samples), WAV_CHUNK):
            chunk = samples[start : start + WAV_CHUNK]
            out.writeframes((np.clip(chunk, -1.0, 1.0) * 32767).astype("<i2").tobytes())
    return buffer.getvalue()


# --- Backends -----------------------------------------------------------------


@dataclass(frozen=True)
class Recognizer:
    name: str
    model: str

    def segments(self, samples: np.ndarray, *, role: str, language: str) -> list[Segment]:
        raise NotImplementedError


LOCAL_OPTIONS: dict[str, Any] = {
    "word_timestamps": True,  # every word's time: a verified quote plays its span
    # The VAD skips the channel's silences (half of every two-channel call):
    # no time spent on them, and no words hallucinated into them.
    "vad_filter": True,
    "condition_on_previous_text": False,
    # Greedy at temperature 0 only: no re-decoding at higher temperatures when a window's text
    # looks repetitive or unlikely. Those fallbacks sample at random (two runs, two transcripts),
    # cost four times the CPU on the benchmark's call and did not lower its word error rate.
    "temperature": 0.0,
}


@dataclass(frozen=True)
class LocalRecognizer(Recognizer):
    model_path: str
    # faster-whisper's transcribe() options beside the beam size (bench/transcribe measures each).
    options: dict[str, Any] = field(default_factory=lambda: dict(LOCAL_OPTIONS), hash=False)

    def segments(self, samples: np.ndarray, *, role: str, language: str) -> list[Segment]:
        whisper = _whisper(self.model_path)
        found, _info = whisper.transcribe(
            samples, language=language or None, beam_size=settings.QA_TRANSCRIBE_BEAM_SIZE, **self.options
        )
        return [
            Segment(
                role=role,
                start_ms=_ms(segment.start),
                end_ms=_ms(segment.end),
                text=segment.text,
                words=tuple(Word(word.word, _ms(word.start), _ms(word.end)) for word in segment.words or ()),
            )
            for segment in found
        ]


@functools.cache
def _whisper(model_path: str):
    from faster_whisper import WhisperModel

    return WhisperModel(model_path, device="cpu", compute_type="int8", cpu_threads=settings.QA_TRANSCRIBE_THREADS)


@dataclass(frozen=True)
class RemoteRecognizer(Recognizer):
    client: openai.OpenAI

    def segments(self, samples: np.ndarray, *, role: str, language: str) -> list[Segment]:
        extra = {"language": language} if language else {}
        try:
            response = self.client.audio.transcriptions.create(
                model=self.model,
                file=("channel.wav", _wav_bytes(samples), "audio/wav"),
                response_format="verbose_json",
                timestamp_granularities=["word", "segment"],
                **extra,
            )
        except openai.OpenAIError as error:
            raise _remote_error(error) from error
        data = response.model_dump() if hasattr(response, "model_dump") else dict(response)
        return _remote_segments(data, role=role)


def _remote_segments(data: dict[str, Any], *, role: str) -> list[Segment]:
    """Segments from a verbose_json answer; its word list (top level, as OpenAI sends it) goes
    to the segment it falls in. A segment's `speaker`, where a diarizing server gives one, wins."""
    words = [Word(word["word"], _ms(word["start"]), _ms(word["end"])) for word in data.get("words") or []]
    raw = data.get("segments") or []
    if not raw:
        if not words and not data.get("text", "").strip():
            return []
        end = words[-1].end_ms if words else _ms(data.get("duration") or 0)
        raw = [{"start": words[0].start_ms / 1000 if words else 0, "end": end / 1000, "text": data.get("text", "")}]
    segments = []
    for index, segment in enumerate(raw):
        start, end = _ms(segment["start"]), _ms(segment["end"])
        last = index == len(raw) - 1
        inside = tuple(
            word
            for word in words
            if start <= (word.start_ms + word.end_ms) // 2 < end or (last and word.start_ms >= start)
        )
        speaker = segment.get("speaker")
        segments.append(
            Segment(
                role=str(speaker) if speaker else role,
                start_ms=start,
                end_ms=end,
                text=segment.get("text", ""),
                words=inside,
            )
        )
    return segments


def _remote_error(error: openai.OpenAIError) -> TranscriptionError:
    if isinstance(error, (openai.APITimeoutError, openai.APIConnectionError)):
        return TranscriptionError(f"Cannot reach the transcription server: {error}", transient=True)
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        transient = status in TRANSIENT_STATUSES or status >= 500
        return TranscriptionError(
            f"The transcription server answered HTTP {status}: {error.message}",
            transient=transient,
            retry_after=retry_after_seconds(error.response.headers) if transient else None,
        )
    return TranscriptionError(f"The transcription failed: {error}", transient=False)


def _ms(seconds: float | None) -> int:
    return round((seconds or 0.0) * 1000)


def recognizer_get() -> Recognizer:
    """The recognizer the environment selects."""
    if settings.QA_TRANSCRIBE_MODEL:
        base_url, api_key = os.environ.get("OPENAI_BASE_URL", ""), os.environ.get("OPENAI_API_KEY", "")
        return _remote(api_key, base_url, settings.QA_TRANSCRIBE_MODEL)
    from qa.whisper_model import ModelAssemblyError, bundled_model_ensure

    path = settings.QA_TRANSCRIBE_MODEL_PATH
    if not path:
        try:
            path = str(bundled_model_ensure(Path(settings.QA_TRANSCRIBE_CACHE_DIR)))
        except (ModelAssemblyError, OSError) as error:
            raise TranscriptionError(str(error), transient=False) from error
    return LocalRecognizer(name="local", model=Path(path).name, model_path=path)


@functools.cache
def _remote(api_key: str, base_url: str, model: str) -> RemoteRecognizer:
    client = openai.OpenAI(
        api_key=api_key or "not-needed",
        base_url=base_url or None,
        max_retries=0,
        timeout=settings.QA_TRANSCRIBE_TIMEOUT,
    )
    return RemoteRecognizer(name="openai-compatible" if base_url else "openai", model=model, client=client)


def channel_roles(*, channels: int, agent_channel: str, customer_channel: str = "") -> dict[int, str]:
    """Whose speech each channel to transcribe holds, by its index in the file (from 0): the
    recording's channel map as qa.audio.channel_map_check keeps it (in stereo the customer's is
    the one that is not the agent's). Channels it does not name are not transcribed."""
    if channels == 1:
        return {0: "unknown"}
    agent = channel_number(agent_channel)
    customer = channel_number(customer_channel) if customer_channel else 3 - agent
    return {agent - 1: "agent", customer - 1: "customer"}


def transcribe(
    file: IO[bytes],
    *,
    channels: int,
    agent_channel: str,
    customer_channel: str = "",
    language: str,
    recognizer: Recognizer,
) -> Transcript:
    """Transcribe an audio file into speaker turns (see the module's docstring for the speakers).
    TranscriptionError, not transient, for audio that cannot be transcribed (audio_measure)."""
    roles = channel_roles(channels=channels, agent_channel=agent_channel, customer_channel=customer_channel)
    decoded = audio_decode(file, keep=roles)
    segments = []
    for index, role in sorted(roles.items()):
        segments += recognizer.segments(decoded.channels[index], role=role, language=language)
    turns = turns_merge(segments, language=language)
    labels = speaker_labels(language)
    speakers_known = channels > 1 or all(turn.speaker != labels["unknown"] for turn in turns)
    return Transcript(turns=turns, speakers_known=speakers_known, audio_seconds=decoded.seconds)
