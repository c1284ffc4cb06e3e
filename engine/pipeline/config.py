"""The settings of a shadowing session (one dataclass, shared by the CLI, the app and the evaluation)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from engine.audio.echo_canceller import METHODS as ECHO_CANCELLERS
from engine.audio.kalman_echo import PATHS as ECHO_PATHS

ECHO_GUARDS = ("off", "gate", "cancel")
BASE_MODEL = "base"  # the recognizer model setting for multilingual Whisper base (joined from its packages)
AUTO_LANGUAGE = "auto"  # translate_from: detect the spoken language from the first seconds of speech


@dataclass(frozen=True)
class ShadowConfig:
    backend: str = "whisper"  # or "vosk"
    model: str | None = None  # a model folder (vosk; whisper: the bundled tiny.en when None, "base": Whisper base)
    # interpret: the spoken language ("es", ..., or "auto") translated into English as it is recognized (None: shadow)
    translate_from: str | None = None
    commit: str = "la2"
    tts_policy: str = "lookahead"
    k: int = 1
    first_chunk: int = 12
    chunk: int = 12
    phrase_chunk: int = 24  # after a comma (; :) the voice resumes with this many phonemes of final words; 0: off
    delta: int = 12
    tentative_lookahead: bool = True  # the recognizer's tentative words may serve as the voice's lookahead
    hurry_below_s: float = 1.0  # with less voice than this left mid-sentence, speak without waiting for lookahead
    voice: str | None = None  # a Piper .onnx; the bundled voice when None
    voice_rate: float = 1.0  # speaking rate of the voice (1.1 = 10 % faster than the voice's own)
    seed: int = 0
    tts_threads: int = 1
    asr_threads: int = 1  # with 2 cores, a core each for recognition and synthesis
    min_step_s: float = 0.3  # shadowing favours latency: more recognizer steps than the ASR's own default
    # interpreting: at least this much new audio between recognizer steps, and la2 agrees with the hypothesis made
    # on ``interpret_agreement_gap_s`` less audio (docs/interpreting.md: two translation hypotheses 0.3 s apart agree
    # on words the next second of speech changes; steps of 0.75 s agreeing across 1.5 s held them)
    interpret_step_s: float = 0.75
    interpret_agreement_gap_s: float = 1.5
    # a file's first recognizer step comes this much later than one step period (simulated and paced runs): the
    # phase at which the steps meet the speech. It moves a translation by several BLEU points, so ``bench interpret
    # --repeat`` takes another phase in each run
    step_phase_s: float = 0.0
    # interpreting: the speaker quiet this long ends an utterance, whose held words are committed at once and whose
    # silence is never decoded (0.6-1.0 s alike; shadowing gains nothing)
    interpret_endpoint_s: float = 0.8
    # interpreting: the recognizer's beam (1: greedy). Whisper base translating with 2 beams: +3 BLEU and +3 chrF
    # streamed, for about the compute of greedy decoding.
    # Transcribing (shadowing) stays greedy: tiny.en's WER did not change, its compute rose by a quarter
    interpret_beam_size: int = 2
    # interpreting: words the hold bound commits are taken as the previous hypothesis had them (the tentative words
    # the voice made ahead), not as the newest has them (0-1 underruns a run
    # against 1-4, BLEU -0.4). Shadowing keeps the newest: none of its underruns held a forced word
    interpret_force_previous: bool = True
    # "gate": ignore the microphone while the voice plays; "cancel": remove the voice's echo from it (speakers)
    echo_guard: str = "off"
    # the canceller's reference taken this much earlier than the voice played (a known delay from speaker to
    # microphone); 0 leaves the whole delay to the canceller's own estimate
    echo_hint_ms: float = 0.0
    # with echo_guard "cancel": "kalman" (a linear filter that keeps the speaker) or "webrtc" (AEC3, whose suppressor
    # also takes the speaker's words in double talk: bench echo, docs/RESULTS.md)
    echo_canceller: str = "kalman"
    # what the canceller hears the voice through: "room" (speakers and a microphone) or "digital" (the monitor of the
    # output the voice plays on, when capturing this computer's sound: ``pipeline.sources`` sets it)
    echo_path: str = "room"
    noise_suppression: bool = False  # WebRTC's noise suppression after the canceller, with echo_guard "cancel"
    # live: while the voice speaks, the other applications' streams are lowered this much (0: never); on by default
    # when capturing this computer's sound (``pipeline.sources``)
    duck_db: float = 0.0
    input_device: str | int | None = None
    output_device: str | int | None = None
    catch_up: float = 1.4  # the voice speaks up to this much faster when far behind or with a faster speaker (1: never)
    adapt: bool = True  # measure the machine's pace and set the hurry threshold and degradations from it
    # a file run on the simulated clock charges every stage's compute × this: how a machine F times slower fares
    cpu_slowdown: float = 1.0
    # the voice's stage alone charged × this instead (None: ``cpu_slowdown``): CPUs differ in which stage they slow
    voice_slowdown: float | None = None

    def __post_init__(self) -> None:
        if self.echo_guard not in ECHO_GUARDS:
            raise ValueError(f"echo guard must be one of {', '.join(ECHO_GUARDS)}, not {self.echo_guard!r}")
        if self.echo_canceller not in ECHO_CANCELLERS:
            raise ValueError(
                f"the echo canceller must be one of {', '.join(ECHO_CANCELLERS)}, not {self.echo_canceller!r}"
            )
        if self.echo_path not in ECHO_PATHS:
            raise ValueError(f"the echo path must be one of {', '.join(ECHO_PATHS)}, not {self.echo_path!r}")
        if not 0 <= self.duck_db <= 60:
            raise ValueError(f"ducking lowers by 0 to 60 dB, not {self.duck_db}")
        if not 0 <= self.echo_hint_ms <= 1000:
            raise ValueError(f"the echo delay hint must be between 0 and 1000 ms, not {self.echo_hint_ms}")
        if self.k < 0 or self.first_chunk < 1 or self.chunk < 1 or self.delta < 0 or self.phrase_chunk < 0:
            raise ValueError("k, delta and the phrase chunk must be >= 0 and chunk sizes >= 1")
        if not 0.5 <= self.voice_rate <= 2.0:
            raise ValueError(f"voice rate must be between 0.5 and 2, not {self.voice_rate}")
        if self.hurry_below_s < 0:
            raise ValueError(f"hurry_below_s must be >= 0, not {self.hurry_below_s}")
        if self.min_step_s <= 0 or self.interpret_step_s <= 0:
            raise ValueError(f"recognizer steps must be positive, not {self.min_step_s} / {self.interpret_step_s}")
        if self.interpret_agreement_gap_s < 0:
            raise ValueError(f"the agreement gap must be >= 0, not {self.interpret_agreement_gap_s}")
        if self.interpret_endpoint_s <= 0:
            raise ValueError(f"the pause that ends an utterance must be positive, not {self.interpret_endpoint_s}")
        if not 1 <= self.interpret_beam_size <= 10:
            raise ValueError(f"the beam size must be between 1 and 10, not {self.interpret_beam_size}")
        if not 1.0 <= self.catch_up <= 2.0:
            raise ValueError(f"catch-up rate must be between 1 and 2, not {self.catch_up}")
        source = self.translate_from
        if source is not None and not (source == AUTO_LANGUAGE or (source.isalpha() and 2 <= len(source) <= 3)):
            raise ValueError(f"the spoken language must be a code such as es, fr, de, or auto, not {source!r}")
        if source is not None and self.backend != "whisper":
            raise ValueError("interpreting needs the whisper recognizer (it translates as it recognizes)")
        for slowdown in (self.cpu_slowdown, self.voice_cpu_slowdown):
            if not 0.1 <= slowdown <= 20:
                raise ValueError(f"the CPU slowdown must be between 0.1 and 20, not {slowdown}")

    @property
    def voice_cpu_slowdown(self) -> float:
        """What the voice's compute is charged × on the simulated clock."""
        return self.cpu_slowdown if self.voice_slowdown is None else self.voice_slowdown

    @property
    def step_s(self) -> float:
        """The least time between two recognizer steps in this mode."""
        return self.min_step_s if self.translate_from is None else max(self.min_step_s, self.interpret_step_s)

    @property
    def agreement_gap_s(self) -> float:
        """How much less audio the hypothesis la2 agrees with was made on (0: the previous one; shadowing)."""
        return 0.0 if self.translate_from is None else self.interpret_agreement_gap_s

    @property
    def endpoint_s(self) -> float | None:
        """The pause that ends an utterance for the recognizer in this mode (None: shadowing does not end them)."""
        return None if self.translate_from is None else self.interpret_endpoint_s

    @property
    def force_previous(self) -> bool:
        """The recognizer's hold bound commits held words as the previous hypothesis had them (interpreting)."""
        return self.translate_from is not None and self.interpret_force_previous

    @classmethod
    def from_dict(cls, data: dict) -> ShadowConfig:
        """Known keys only (a settings file from another version may hold others)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def models_key(self) -> tuple:
        """What the loaded models depend on: a change here means loading them again."""
        return (
            self.backend,
            self.model,
            self.translate_from,
            self.voice,
            self.seed,
            self.tts_threads,
            self.asr_threads,
            self.interpret_beam_size,
        )
