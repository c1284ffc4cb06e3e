"""Where the voice's pieces go: a device player (live), or a computed timeline when there is no device (a file
run). Each piece comes back as a ``PlayedVoice`` with the times its first and last sample played; the samples
that played go into the voice's track (what the echo guard, or a simulated room, hears of the voice)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.audio.played_track import PlayedTrack
from engine.audio.ports import VoicePlayer
from engine.audio.resample import StreamResampler
from engine.clock import Clock
from engine.pipeline.recorder import SessionRecorder
from engine.tts.pieces import AudioPiece
from engine.tts.timeline import PlaybackTimeline

log = logging.getLogger(__name__)

MONITOR_INTERVAL_S = 0.05
OUTPUT_JUMP_S = 0.005  # a played block this far from where the last one ended starts the voice's track anew


@dataclass(frozen=True, slots=True)
class PlayedVoice:
    """A piece that played: when it was ready, when its words had all arrived, and when it played."""

    piece: AudioPiece
    ready_s: float
    inputs_at_s: float
    start_s: float
    end_s: float


@dataclass
class _OutputStream:
    """The device's output as it goes into the voice's track: one resampler and where its output started."""

    resampler: StreamResampler
    anchor_s: float
    written: int = 0
    next_s: float = 0.0


class VoiceOutput:
    """Plays pieces and reports them played to ``on_played`` (a file run: at once, in the voice's thread; live: from
    the monitor thread, as the device reports them)."""

    def __init__(
        self,
        on_played: Callable[[PlayedVoice], None],
        voice_track: PlayedTrack | None = None,
        recorder: SessionRecorder | None = None,
    ) -> None:
        self._on_played = on_played
        self.voice_track = voice_track
        self.recorder = recorder
        self.player: VoicePlayer | None = None
        self._timeline = PlaybackTimeline(keep=False)
        self._pending: dict[int, tuple[AudioPiece, float, float]] = {}  # id → piece, ready, inputs
        self._ids = 0
        self._lock = threading.Lock()
        self._out: _OutputStream | None = None
        self._done = threading.Event()
        self._monitor: threading.Thread | None = None

    @property
    def computed(self) -> bool:
        """No device: the play times are computed (``PlaybackTimeline``)."""
        return self.player is None

    def open_device(self, sample_rate: int, device: object, timer: Callable[[], float]) -> None:
        """Play on the output ``device`` (None: the default), its times on ``timer``; the device is started here,
        so one that cannot open raises before anything is written."""
        from engine.audio.player import Player

        on_output = self.device_output if self.voice_track is not None else None
        chosen = device if isinstance(device, int | str) else None
        player = Player(sample_rate, device=chosen, timer=timer, on_output=on_output)
        player.start()
        self.player = player

    def send(self, piece: AudioPiece, ready_s: float, inputs_at_s: float) -> None:
        """Play ``piece``, ready at ``ready_s``, its words all there at ``inputs_at_s``."""
        player = self.player
        if player is None:
            start, end = self._timeline.add(ready_s, piece.audio_s, inputs_at_s)
            self._played(PlayedVoice(piece, ready_s, inputs_at_s, start, end))
            return
        with self._lock:
            self._ids += 1
            piece_id = self._ids
            self._pending[piece_id] = (piece, ready_s, inputs_at_s)
        player.enqueue(piece.samples, key=piece_id)

    def audio_in_hand(self, now_s: float) -> float:
        """Seconds of voice still to play at ``now_s`` (the worker hurries when this runs low)."""
        if self.player is not None:
            return float(self.player.buffered_s)
        end = self._timeline.end_s
        return max(end - now_s, 0.0) if end is not None else 0.0

    def active(self, now_s: float) -> bool:
        """The voice is playing (or queued to) at ``now_s``."""
        return self.audio_in_hand(now_s) > 0

    def poll(self) -> None:
        """Live: what the device played so far into the voice's track (the echo guard reads it)."""
        if self.player is not None:
            self.player.poll()

    def device_output(self, samples: np.ndarray, start_s: float) -> None:
        """Live: every block the device played (silence too) goes into the voice's track at its time, resampled as
        one continuous stream: the canceller's reference must not jump between blocks."""
        player, track = self.player, self.voice_track
        if player is None or track is None:
            return
        out = self._out
        if out is None or abs(start_s - out.next_s) > OUTPUT_JUMP_S:  # the device played silence meanwhile
            if out is not None:
                track.write(out.resampler.flush(), track.rate, out.anchor_s + out.written / track.rate)
            out = self._out = _OutputStream(StreamResampler(player.device_rate, track.rate), start_s)
        resampled = out.resampler.process(samples)
        track.write(resampled, track.rate, out.anchor_s + out.written / track.rate)
        out.written += resampled.size
        out.next_s = start_s + samples.size / player.device_rate

    def start_monitor(
        self,
        clock: Clock,
        on_tick: Callable[[float], None],
        on_error: Callable[[Exception], None],
        cancelled: Callable[[], bool],
    ) -> None:
        """Live: a thread turns the player's report of what finished playing into played pieces and watches the
        device; ``on_tick(now)`` at each look, ``on_error`` once if the device fails."""
        player = self.player
        assert player is not None

        def watch() -> None:
            while not self._done.is_set() and not cancelled():
                try:
                    player.check()
                    self._collect()
                    on_tick(clock.now())
                except Exception as exc:
                    log.exception("playback stopped")
                    on_error(exc)
                    return
                time.sleep(MONITOR_INTERVAL_S)

        self._monitor = threading.Thread(target=watch, name="shadow-playback", daemon=True)
        self._monitor.start()

    def drain(self, cancelled: Callable[[], bool]) -> None:
        """Wait until the device has played everything written (or a cancel)."""
        player = self.player
        if player is None or cancelled():
            return
        while not player.drain(timeout=0.2):
            if cancelled():
                return

    def finish(self) -> None:
        """Stop the monitor, report what played last, close the device."""
        self._done.set()
        monitor = self._monitor
        if monitor is not None and monitor is not threading.current_thread():
            monitor.join(timeout=5)
        if self.player is not None:
            self._collect()
            self.player.close()

    def close(self) -> None:
        """Stop playing at once (a cancel)."""
        if self.player is not None:
            self.player.close()

    def _collect(self) -> None:
        player = self.player
        if player is None:
            return
        player.poll()
        for played in player.take_finished():
            with self._lock:
                entry = self._pending.pop(played.key, None) if isinstance(played.key, int) else None
            if entry is not None and played.start_s is not None and played.end_s is not None:
                piece, ready, inputs_at = entry
                self._played(PlayedVoice(piece, ready, inputs_at, played.start_s, played.end_s))

    def _played(self, played: PlayedVoice) -> None:
        piece = played.piece
        if self.recorder is not None:
            self.recorder.output_audio(piece.samples, played.start_s)
        if self.voice_track is not None and self.player is None:  # live, the device output wrote it as it played
            self.voice_track.write(piece.samples, piece.sample_rate, played.start_s)
        self._on_played(played)
