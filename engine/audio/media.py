"""Audio and video files of every common kind (MP3, M4A/AAC/M4B, Opus, the audio track of MP4/MKV/WebM/MOV),
decoded by the system's FFmpeg.

WAV and FLAC are read with libsndfile as before, without FFmpeg. Everything else goes through ``ffprobe`` (what the
file holds: is there an audio track, is it protected, how long does it say it is) and ``ffmpeg`` (the first audio
track as 32-bit float samples at the file's own rate and channels, read from its output in pieces so a long file
shows progress). The channels are averaged and the rate converted by ``audio.io`` the same way as for a WAV, so a
recording gives the same samples whatever it was stored in, up to the codec's own loss.

FFmpeg as a program rather than PyAV: PyAV's wheel carries its own FFmpeg (102 MB), more than the .deb's budget has
left; the package depends on Debian's ``ffmpeg`` instead.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

# what libsndfile reads itself (and reads right when the file is cut short: a WAV's samples are its bytes)
SOUNDFILE_SUFFIXES = frozenset({".wav", ".flac"})
AUDIO_SUFFIXES = (".wav", ".flac", ".mp3", ".m4a", ".m4b", ".aac", ".opus", ".ogg", ".oga", ".wma")
VIDEO_SUFFIXES = (".mp4", ".m4v", ".mkv", ".webm", ".mov", ".avi")
FILE_FILTER = "Audio and video (" + " ".join(f"*{s}" for s in AUDIO_SUFFIXES + VIDEO_SUFFIXES) + ")"
# codec tags of encrypted tracks (iTunes FairPlay, ISO common encryption)
PROTECTED_TAGS = frozenset({"drms", "drmi", "enca", "encv", "p608"})
# a file holding less than this share of the duration its header gives (less a quarter second) was cut short
TRUNCATED_SHARE = 0.98
READ_BYTES = 1 << 20  # ffmpeg's output read in pieces of this size (about 1.5 s of 44.1 kHz stereo)


class MediaError(ValueError):
    """The file cannot be decoded: no audio track, protected, cut short, not audio, or FFmpeg is missing."""


@dataclass(frozen=True)
class MediaInfo:
    """What ``ffprobe`` says about a file's first audio track."""

    sample_rate: int
    channels: int
    duration_s: float | None  # the track's (or else the file's) duration as its header gives it


def ffmpeg_available() -> bool:
    return shutil.which("ffmpeg") is not None and shutil.which("ffprobe") is not None


def _needs_ffmpeg(path: Path) -> MediaError:
    return MediaError(
        f"reading {path.suffix or 'this kind of'} files needs FFmpeg, which is not installed "
        f"(Debian or Ubuntu: sudo apt install ffmpeg): {path}"
    )


def _reason(stderr: str) -> str:
    """FFmpeg's last line of complaint, without the file name it starts with."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return "FFmpeg gave no reason"
    reason = lines[-1]
    return reason.split(": ", 1)[1] if reason.startswith(("/", ".")) and ": " in reason else reason


def probe(path: Path) -> MediaInfo:
    """The first audio track of ``path`` (MediaError when it has none, is protected or is not a media file)."""
    if not ffmpeg_available():
        raise _needs_ffmpeg(path)
    command = ["ffprobe", "-v", "error", "-print_format", "json", "-show_format", "-show_streams", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        if "encrypt" in done.stderr.lower() or "drm" in done.stderr.lower():
            raise MediaError(f"{path} is copy-protected (DRM): liveshadow can read only files without protection")
        raise MediaError(f"cannot read {path} as audio or video: {_reason(done.stderr)}")
    try:
        found = json.loads(done.stdout or "{}")
    except json.JSONDecodeError as exc:
        raise MediaError(f"cannot read {path} as audio or video: ffprobe's answer was not readable") from exc
    streams = found.get("streams") or []
    audio = [s for s in streams if s.get("codec_type") == "audio"]
    if not audio:
        if any(s.get("codec_type") == "video" and not s.get("disposition", {}).get("attached_pic") for s in streams):
            raise MediaError(f"{path} has a video track but no audio track: there is nothing to hear")
        raise MediaError(f"{path} holds no audio track")
    track = audio[0]
    if str(track.get("codec_tag_string", "")).lower() in PROTECTED_TAGS:
        raise MediaError(f"{path} is copy-protected (DRM): liveshadow can read only files without protection")
    rate, channels = int(track.get("sample_rate") or 0), int(track.get("channels") or 0)
    if rate <= 0 or channels <= 0:
        raise MediaError(f"{path}: its audio track ({track.get('codec_name', 'unknown codec')}) has no sample rate")
    duration = track.get("duration") or found.get("format", {}).get("duration")
    return MediaInfo(rate, channels, float(duration) if duration else None)


def decode(path: Path, progress: Callable[[float], None] | None = None) -> tuple[np.ndarray, int]:
    """The first audio track of ``path`` as float32 samples of shape (frames, channels) and its rate.

    ``progress`` hears the share decoded so far (0..1) after each piece when the duration is known."""
    info = probe(path)
    command = [
        "ffmpeg",
        "-nostdin",
        "-hide_banner",
        "-v",
        "error",
        "-i",
        str(path),
        "-map",
        "0:a:0",
        "-vn",
        "-sn",
        "-dn",
        "-f",
        "f32le",
        "-acodec",
        "pcm_f32le",
        "pipe:1",
    ]
    frame_bytes = 4 * info.channels
    expected = info.duration_s * info.sample_rate * frame_bytes if info.duration_s else None
    pieces: list[bytes] = []
    size = 0
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, stdin=subprocess.DEVNULL)
        assert process.stdout is not None
        try:
            while piece := process.stdout.read(READ_BYTES):
                pieces.append(piece)
                size += len(piece)
                if progress is not None and expected:
                    progress(min(1.0, size / expected))
        finally:
            process.stdout.close()
            code = process.wait()
        errors.seek(0)
        stderr = errors.read().decode("utf-8", "replace")
    data = b"".join(pieces)
    frames = len(data) // frame_bytes
    if code != 0 and frames == 0:
        raise MediaError(f"cannot decode {path}: {_reason(stderr)}")
    if frames == 0:
        raise MediaError(f"{path} holds no audio samples")
    held_s = frames / info.sample_rate
    if info.duration_s and held_s < TRUNCATED_SHARE * info.duration_s - 0.25:
        raise MediaError(
            f"{path} is cut short (truncated?): it says {info.duration_s:.1f} s but holds {held_s:.1f} s of audio"
        )
    if stderr.strip():
        log.info("ffmpeg on %s: %s", path, _reason(stderr))
    samples = np.frombuffer(data[: frames * frame_bytes], dtype="<f4").reshape(frames, info.channels)
    return samples, info.sample_rate
