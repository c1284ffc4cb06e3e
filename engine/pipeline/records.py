"""The records a shadowing session hands out and keeps: its state, each word's times, the meters' snapshot, and the
listener its callbacks go to. Apart from the session, so that what reads them (its summary, the window) need not
import the session itself."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from engine.metrics.shadowing import ear_voice_lag_s


class State(StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    STOPPING = "stopping"  # draining: what was heard is still being spoken
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclass(slots=True)
class WordRecord:
    sentence: int
    index: int
    text: str
    source_start_s: float
    source_end_s: float
    commit_s: float
    ready_s: float | None = None  # when the piece holding its end was synthesized
    speak_start_s: float | None = None
    speak_end_s: float | None = None
    heard_s: float | None = None  # source audio heard when it was committed
    forced: bool = False  # committed by the recognizer's hold bound (``CommittedWord.forced``)

    @property
    def key(self) -> tuple[int, int]:
        return (self.sentence, self.index)

    @property
    def lag_s(self) -> float | None:
        return None if self.speak_end_s is None else ear_voice_lag_s(self.speak_end_s, self.source_end_s)


class SessionListener:
    """Callbacks from the engine's threads (the GUI adapter re-emits them as Qt signals). Defaults do nothing."""

    def on_state(self, state: State) -> None: ...

    def on_tentative(self, words: list[str]) -> None: ...

    def on_committed(self, words: list[WordRecord]) -> None: ...

    def on_spoken(self, words: list[WordRecord]) -> None: ...

    def on_error(self, message: str) -> None: ...

    def on_warning(self, message: str) -> None:
        """Something the user should know that does not stop the session (e.g. a policy that fell back)."""


@dataclass
class MeterSnapshot:
    """What the live meters show; ``ShadowSession.snapshot()`` is cheap and thread-safe."""

    state: State = State.IDLE
    session_s: float = 0.0
    lag_s: float | None = None  # ear-voice lag of the last spoken word
    lag_median_s: float | None = None
    time_balance_s: float = 0.0  # synthesized audio in hand, ahead of playback
    commit_latency_s: float | None = None  # of the last committed word (commit − its source end)
    first_audio_s: float | None = None  # of the last sentence: its first piece ready − its words' arrival
    underruns: int = 0
    input_level_db: float = -120.0
    words_committed: int = 0
    words_spoken: int = 0
    echo_gated_s: float = 0.0
    step_cost_s: float | None = None  # the recognizer's recent step cost (``pipeline.pace``)
    pace_level: str = ""  # what the session gave up to keep up ("full settings" when nothing)
    pace_message: str | None = None  # set while the machine cannot keep up
    spoken_language: str | None = None  # interpreting: the language translated from (None: shadowing / not known)
    non_english_words: int = 0  # interpreting: committed words not spoken because they were not English
