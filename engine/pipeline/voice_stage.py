"""The voice's stage as a session builds it from its settings: the incremental synthesizer on the configured
policy, and what drives it when the policy is learned (a READ/SPEAK driver, or the learned moves' advisor)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from engine.pipeline.config import ShadowConfig
from engine.tts.chunker import ChunkSizes
from engine.tts.learned.agent import is_move_agent, voice_policy
from engine.tts.learned.driver import ReadSpeakDriver
from engine.tts.learned.moves import MoveAdvisor, MoveAgent
from engine.tts.policies import LookaheadPolicy, TtsPolicy
from engine.tts.synthesizer import IncrementalSynthesizer
from engine.tts.voice import TwoStageVoice


@dataclass(frozen=True)
class VoiceStage:
    synthesizer: IncrementalSynthesizer
    base_policy: TtsPolicy  # the configured policy, before the pace shortens its left context
    driver: ReadSpeakDriver | None  # a READ/SPEAK agent (wait-K-steps) decides every step
    advisor: MoveAdvisor | None  # the learned policy's moves advise the rule
    policy_used: str  # the policy's name as the report gives it

    def policy_with_context(self, left_context: int | None) -> TtsPolicy | None:
        """The policy with the pace's left context (None: the configured one); None for a policy without one."""
        base = self.base_policy
        if not isinstance(base, LookaheadPolicy):
            return None
        return replace(base, left_context=left_context) if left_context is not None else base


def build_voice_stage(
    config: ShadowConfig,
    voice: TwoStageVoice,
    warnings: list[str],
    move_agent: MoveAgent | None = None,
    timer: Callable[[], float] = time.perf_counter,
) -> VoiceStage:
    """``move_agent`` replaces the configured policy's moves (training's sampling agent); learned weights that could
    not load are said in ``warnings``. ``timer`` measures the voice's compute."""
    agent: Any  # a READ/SPEAK agent or a move agent (``tts.learned``), or None
    if move_agent is not None:
        base_policy, agent = LookaheadPolicy(k=1), move_agent
    else:
        base_policy, agent = voice_policy(config.tts_policy, config.k, warnings)
    synthesizer = IncrementalSynthesizer(
        voice,
        base_policy,
        ChunkSizes(config.first_chunk, config.chunk, config.phrase_chunk),
        config.delta,
        timer=timer,
    )
    moves = is_move_agent(agent)
    driver = ReadSpeakDriver(synthesizer, agent) if agent is not None and not moves else None
    advisor = MoveAdvisor(agent, keep=move_agent is not None) if moves else None
    if advisor is not None:
        advisor.reset()
    used = agent.name if moves else base_policy.name
    return VoiceStage(synthesizer, base_policy, driver, advisor, used)
