"""Silencing stretches of a recording's audio: where a mask_at_rest entity was said, so that the
stored recording no longer holds it (payment-card rules forbid keeping a card number in a recording).

Decoded and encoded again with PyAV (the project's audio library, qa.audio) in the same container and
codec; every channel is silenced over each stretch, whoever spoke."""

from __future__ import annotations

import io
from collections.abc import Sequence

import av
import numpy as np

# Encoders for the decoders PyAV names differently; others encode under their decoder's name.
_ENCODERS = {"opus": "libopus", "mp3": "libmp3lame", "mp3float": "libmp3lame", "vorbis": "libvorbis"}


def audio_silence(data: bytes, spans_ms: Sequence[Sequence[int]]) -> bytes:
    """`data` (a whole audio file) with the samples of each (start_ms, end_ms) set to zero."""
    spans = [(start / 1000, end / 1000) for start, end in spans_ms]
    with av.open(io.BytesIO(data)) as source:
        stream = source.streams.audio[0]
        container = source.format.name.split(",")[0]
        output = io.BytesIO()
        with av.open(output, "w", format=container) as target:
            codec = _ENCODERS.get(stream.codec_context.name, stream.codec_context.name)
            encoded = target.add_stream(codec, rate=stream.rate, layout=stream.layout.name)
            encoded.bit_rate = stream.bit_rate or (32_000 if codec == "libopus" else None)
            resampler = av.AudioResampler(format=encoded.format.name, layout=stream.layout.name, rate=stream.rate)
            position = 0
            for frame in source.decode(stream):
                for piece in resampler.resample(frame):
                    for packet in encoded.encode(_silenced(piece, position, spans)):
                        target.mux(packet)
                    position += piece.samples
            for packet in encoded.encode(None):
                target.mux(packet)
        return output.getvalue()


def _silenced(frame: av.AudioFrame, position: int, spans: list[tuple[float, float]]) -> av.AudioFrame:
    samples = frame.to_ndarray()
    count = frame.samples
    times = (position + np.arange(count)) / frame.sample_rate
    quiet = np.zeros(count, dtype=bool)
    for start, end in spans:
        quiet |= (times >= start) & (times < end)
    if quiet.any():
        if frame.format.is_planar:
            samples[:, quiet] = 0
        else:  # interleaved: one row of count × channels values
            channels = samples.shape[1] // count
            samples = samples.reshape(count, channels)
            samples[quiet, :] = 0
            samples = samples.reshape(1, -1)
    result = av.AudioFrame.from_ndarray(samples, format=frame.format.name, layout=frame.layout.name)
    result.sample_rate = frame.sample_rate
    return result
