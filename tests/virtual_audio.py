"""A private PulseAudio server with a virtual microphone and a virtual speaker, for real end-to-end audio tests.

Layout (see shared/docs/FINDINGS.md):
    mic_feed (null sink)  ──monitor──► virtmic (remap source, the default source = "the microphone")
    app_out  (null sink, the default sink = "the speaker")  ──► app_out.monitor (what tests record)
``play_into_mic`` feeds a WAV to mic_feed; ``record_speaker`` records app_out.monitor. A listener at 10 ms on
mic_feed.monitor (``VirtualAudio.start_clock``) makes the microphone deliver at once to a new stream, as a device does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import soundfile as sf

MIC_SINK = "mic_feed"
MIC_SOURCE = "virtmic"
SPEAKER_SINK = "app_out"
SPEAKER_MONITOR = f"{SPEAKER_SINK}.monitor"
LOG_NAME = "pulseaudio.log"
# the server's settings (``start``): rlimit-rttime -1 leaves the real-time threads without a CPU-time limit
DAEMON_CONF = "realtime-scheduling = yes\nhigh-priority = yes\nrlimit-rttime = -1\n"

REQUIRED_TOOLS = ("pulseaudio", "pactl", "paplay", "parec")
DEVICE_MODULES = (  # the virtual devices, in the order they are loaded (the microphone remaps the feed's monitor)
    ("module-null-sink", f"sink_name={MIC_SINK} sink_properties=device.description=VirtualMicFeed"),
    ("module-null-sink", f"sink_name={SPEAKER_SINK} sink_properties=device.description=VirtualSpeaker"),
    (
        "module-remap-source",
        f"master={MIC_SINK}.monitor source_name={MIC_SOURCE} source_properties=device.description=VirtualMicrophone",
    ),
)


def missing_tools() -> list[str]:
    return [tool for tool in REQUIRED_TOOLS if shutil.which(tool) is None]


@dataclass
class VirtualAudio:
    runtime_dir: Path
    server: str  # PULSE_SERVER value
    process: subprocess.Popen
    clock: subprocess.Popen | None = None  # keeps the microphone running like a device (``start_clock``)

    def start_clock(self) -> None:
        """A null sink with nobody listening at a low latency runs in blocks of up to 2 s: a stream that starts
        recording the virtual microphone then gets nothing for 1.6-2 s, and loses it, where a real microphone
        delivers at once. A listener at 10 ms keeps it running in short blocks, as a device's clock would."""
        self.stop_clock()
        self.clock = self._listen(f"{MIC_SINK}.monitor")

    @contextmanager
    def listening(self, device: str) -> Iterator[subprocess.Popen]:
        """A listener at 10 ms on ``device`` (a monitor) while the block runs: it delivers in short blocks, as a
        device does, not in late bursts (``start_clock``)."""
        listener = self._listen(device)
        try:
            yield listener
        finally:
            listener.kill()
            listener.wait()

    def _listen(self, device: str) -> subprocess.Popen:
        return subprocess.Popen(
            ["parec", f"--device={device}", "--latency-msec=10", "--format=s16le", "--channels=1", "--rate=8000"],
            env=self.env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop_clock(self) -> None:
        clock, self.clock = self.clock, None
        if clock is not None:
            clock.kill()
            clock.wait()

    def wait_for_recording_stream(self, process: subprocess.Popen, timeout_s: float = 10.0) -> None:
        """Wait until ``process`` (a ``parec``) has its recording stream on the server: until then a monitor with no
        listener at a low latency still runs in its long blocks."""
        deadline = time.monotonic() + timeout_s
        while str(process.pid) not in self._recording_pids():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the listener {process.args!r} did not start recording within {timeout_s} s")
            time.sleep(0.05)

    def _recording_pids(self) -> set[str]:
        """The process ids of the clients with a recording stream on the server."""
        import json

        streams = json.loads(self.pactl("--format=json", "list", "source-outputs") or "[]")
        return {s.get("properties", {}).get("application.process.id", "") for s in streams}

    def env(self) -> dict[str, str]:
        return {**os.environ, "PULSE_SERVER": self.server, "XDG_RUNTIME_DIR": str(self.runtime_dir)}

    def pactl(self, *args: str) -> str:
        result = subprocess.run(
            ["pactl", *args], env=self.env(), capture_output=True, text=True, timeout=10, check=False
        )
        if result.returncode != 0:
            raise RuntimeError(f"pactl {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout

    def remove_devices(self) -> None:
        """Unload every device, as when the only headset is unplugged; the server stays up (no device is left for
        PulseAudio to move a stream to, so the streams end)."""
        self.stop_clock()
        modules = [line.split("\t")[:2] for line in self.pactl("list", "short", "modules").splitlines()]
        for index, name in sorted(modules, key=lambda m: -int(m[0])):  # the remapped microphone before its sink
            if name != "module-native-protocol-unix":
                self.pactl("unload-module", index)

    def add_devices(self) -> None:
        """Load the virtual devices again (the headset plugged back in) and make them the defaults."""
        for module, arguments in DEVICE_MODULES:
            self.pactl("load-module", module, *arguments.split())
        self.pactl("set-default-sink", SPEAKER_SINK)
        self.pactl("set-default-source", MIC_SOURCE)
        self.start_clock()

    def play_into_mic(self, wav: Path | str) -> subprocess.Popen:
        """Start playing a WAV into the virtual microphone; returns the paplay process (wait() for its end)."""
        return subprocess.Popen(
            ["paplay", f"--device={MIC_SINK}", str(wav)],
            env=self.env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    @contextmanager
    def record_speaker(
        self, out_wav: Path | str, rate: int = 16000, channels: int = 1, tail_s: float = 1.0
    ) -> Iterator[Path]:
        """Record what is played to the virtual speaker while the block runs; written to ``out_wav`` at its end.

        Raw samples are read from ``parec`` in a thread, and the block starts only once samples flow, so the
        start of what the block plays is never lost (parecord writes its header before the stream carries audio);
        recording goes on for ``tail_s`` after the block.
        """
        out = Path(out_wav)
        proc = self._read_speaker(rate, channels)
        chunks: list[bytes] = []
        flowing = threading.Event()

        def reader() -> None:
            assert proc.stdout is not None
            while data := proc.stdout.read1(4096):
                chunks.append(data)
                flowing.set()

        thread = threading.Thread(target=reader, daemon=True)
        thread.start()
        try:
            if not flowing.wait(10):
                raise RuntimeError(f"no audio from {SPEAKER_MONITOR} within 10 s")
            yield out
            # A player's call returns while its last audio is still in the server's buffers (up to ~1 s at
            # PortAudio's "high" latency); keep recording so that tail is not cut off.
            time.sleep(tail_s)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            thread.join(timeout=5)
            raw = b"".join(chunks)
            frames = np.frombuffer(raw[: len(raw) // (2 * channels) * 2 * channels], dtype="<i2")
            sf.write(str(out), frames.reshape(-1, channels), rate, subtype="PCM_16")

    @contextmanager
    def speaker_level(self) -> Iterator[SpeakerLevel]:
        """How long the virtual speaker has carried sound while the block runs, counted live (``SpeakerLevel``)."""
        level = SpeakerLevel(self._read_speaker(SpeakerLevel.RATE, 1))
        thread = threading.Thread(target=level.read, daemon=True)
        thread.start()
        try:
            yield level
        finally:
            level.process.kill()
            level.process.wait()
            thread.join(timeout=5)

    def _read_speaker(self, rate: int, channels: int) -> subprocess.Popen:
        """``parec`` of the speaker's monitor: raw 16-bit samples on its stdout."""
        return subprocess.Popen(
            [
                "parec",
                f"--device={SPEAKER_MONITOR}",
                f"--rate={rate}",
                f"--channels={channels}",
                "--format=s16le",
                "--raw",
                "--latency-msec=20",
            ],
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )


@dataclass
class SpeakerLevel:
    """Seconds of sound the speaker's monitor carried (20 ms frames above -40 dBFS), from a ``parec`` process."""

    RATE: ClassVar[int] = 16000
    process: subprocess.Popen
    voiced_s: float = 0.0

    def read(self) -> None:
        assert self.process.stdout is not None
        frame_bytes = self.RATE // 50 * 2
        while data := self.process.stdout.read(frame_bytes):
            frame = np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2").astype(np.float32) / 32768
            if frame.size and float(np.sqrt(np.mean(frame**2))) > 0.01:
                self.voiced_s += frame.size / self.RATE


def start(runtime_dir: Path | None = None) -> VirtualAudio:
    """Start a private PulseAudio server (no system or user config, its own socket) with the virtual devices; in
    ``runtime_dir`` (its socket, so clients pointed at it find it again) when one is given, else a new folder.

    Real-time device threads (as a desktop's server has them: the audio keeps its timing while the models load both
    cores) but with no RLIMIT_RTTIME and no CPU limiter: run as root, PulseAudio gives its SCHED_RR threads a 200 ms
    RLIMIT_RTTIME, which a loaded VM whose vCPU the host preempts can spend while a thread waits, and the kernel then
    kills the server mid-suite (every later audio test failed at once)."""
    runtime_dir = runtime_dir or Path(tempfile.mkdtemp(prefix="liveshadow-pulse-"))
    socket = runtime_dir / "native"
    config = runtime_dir / ".config" / "pulse"
    config.mkdir(parents=True, exist_ok=True)
    (config / "daemon.conf").write_text(DAEMON_CONF)
    log_file = open(runtime_dir / LOG_NAME, "ab")
    cmd = [
        "pulseaudio",
        "-n",
        "--daemonize=no",
        "--exit-idle-time=-1",
        "--disallow-exit",
        "--disable-shm=true",
        "--use-pid-file=false",
        "--log-target=stderr",
        "--no-cpu-limit=true",
        "-L",
        f"module-native-protocol-unix socket={socket} auth-anonymous=1",
        *(part for module, arguments in DEVICE_MODULES for part in ("-L", f"{module} {arguments}")),
    ]
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime_dir), "HOME": str(runtime_dir)}
    process = subprocess.Popen(cmd, env=env, stdout=log_file, stderr=log_file)
    audio = VirtualAudio(runtime_dir, f"unix:{socket}", process)
    deadline = time.monotonic() + 15
    while True:
        if process.poll() is not None:
            log_file.flush()
            text = Path(log_file.name).read_text(errors="replace")[-2000:]
            raise RuntimeError(f"pulseaudio exited with {process.returncode}:\n{text}")
        try:
            audio.pactl("info")
            break
        except (RuntimeError, subprocess.TimeoutExpired):
            if time.monotonic() > deadline:
                stop(audio)
                raise RuntimeError("pulseaudio did not answer within 15 s") from None
            time.sleep(0.1)
    audio.pactl("set-default-sink", SPEAKER_SINK)
    audio.pactl("set-default-source", MIC_SOURCE)
    audio.start_clock()
    return audio


def log_tail(audio: VirtualAudio, chars: int = 2000) -> str:
    """The end of the server's log (what it said before it exited)."""
    try:
        return (audio.runtime_dir / LOG_NAME).read_text(errors="replace")[-chars:]
    except OSError as exc:
        return f"(no log: {exc})"


def restart(audio: VirtualAudio) -> None:
    """Start the server again in the same folder (same socket), after it exited; ``audio`` then points at it."""
    audio.stop_clock()
    fresh = start(audio.runtime_dir)
    audio.process, audio.clock = fresh.process, fresh.clock


def stop(audio: VirtualAudio) -> None:
    audio.stop_clock()
    audio.process.terminate()
    try:
        audio.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        audio.process.kill()
        audio.process.wait()
    shutil.rmtree(audio.runtime_dir, ignore_errors=True)


def read_mono(path: Path | str) -> tuple[np.ndarray, int]:
    data, rate = sf.read(str(path), dtype="float32", always_2d=True)
    return data.mean(axis=1), rate


def aligned_correlation(recording: np.ndarray, source: np.ndarray) -> tuple[float, int]:
    """Best normalized correlation of ``source`` inside ``recording`` and the lag (samples) where it is found."""
    if recording.size < source.size:
        recording = np.concatenate([recording, np.zeros(source.size - recording.size, np.float32)])
    n = recording.size + source.size
    size = 1 << (n - 1).bit_length()
    cross = np.fft.irfft(np.fft.rfft(recording, size) * np.conj(np.fft.rfft(source, size)), size)
    lag = int(np.argmax(cross[: recording.size - source.size + 1]))
    segment = recording[lag : lag + source.size]
    if np.std(segment) == 0 or np.std(source) == 0:
        return 0.0, lag
    return float(np.corrcoef(segment, source)[0, 1]), lag


def practise_with(session, audio: VirtualAudio, person: Path | str, timeout_s: float = 120.0) -> None:
    """Start a prepared live practice session and play ``person`` into the virtual microphone once the source is
    heard; return when the session has ended (DONE), the player too."""
    session.start()
    deadline, speaking = time.monotonic() + timeout_s, None
    try:
        while not session.wait(0.05):
            if speaking is None and session.snapshot().position_s > 0:
                speaking = audio.play_into_mic(person)
            assert time.monotonic() < deadline, "the session did not end"
    finally:
        if speaking is not None:
            speaking.wait(timeout=30)
    assert session.state.value == "done", session.error
