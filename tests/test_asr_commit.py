"""Commit policies on hand-made hypothesis sequences."""

from __future__ import annotations

import pytest

from engine.asr.commit import HoldN, LocalAgreement, Offline, WaitK, common_prefix_length, make_commit_policy
from engine.asr.stream_values import StreamConfig
from engine.asr.streaming import KEEP_COMMITTED_WORDS, StreamingRecognizer
from engine.asr.words import Word


def hyp(text: str, start: float = 0.0) -> list[Word]:
    return [Word(t, start + i * 0.3, start + i * 0.3 + 0.25) for i, t in enumerate(text.split())]


def run(policy, hypotheses: list[str]) -> tuple[list[str], list[int]]:
    """Drive a policy like the streaming loop: strip what is committed, commit what it says."""
    committed: list[str] = []
    counts = []
    for text in hypotheses:
        words = hyp(text)
        tail = words[len(committed) :]
        n = policy.update(tail)
        counts.append(n)
        committed.extend(w.text for w in tail[:n])
    return committed, counts


def test_local_agreement_commits_what_two_hypotheses_share() -> None:
    committed, counts = run(
        LocalAgreement(2),
        ["the cat", "the cat sat", "the cat sat on", "the cat sat on the mat"],
    )
    assert counts == [0, 2, 1, 1]
    assert committed == ["the", "cat", "sat", "on"]


def test_local_agreement_waits_through_a_flip() -> None:
    committed, counts = run(LocalAgreement(2), ["I scream", "ice cream is", "ice cream is cold"])
    assert counts == [0, 0, 3]
    assert committed == ["ice", "cream", "is"]


def test_local_agreement_ignores_case_and_punctuation() -> None:
    committed, _ = run(LocalAgreement(2), ["Hello, world", "hello world!"])
    assert committed == ["hello", "world!"]  # the words of the newest hypothesis, which saw the most audio


def test_local_agreement_with_a_deleted_word() -> None:
    committed, counts = run(LocalAgreement(2), ["we went to the", "we went the to", "we went to the park"])
    assert counts == [0, 2, 0]  # "to the" vs "the to" disagree; then "the to" vs "to the park" disagree
    assert committed == ["we", "went"]


def test_local_agreement_handles_repeated_words() -> None:
    committed, counts = run(LocalAgreement(2), ["no no", "no no no", "no no no no"])
    assert counts == [0, 2, 1]
    assert committed == ["no", "no", "no"]


def test_la3_needs_three_agreeing_hypotheses() -> None:
    committed, counts = run(LocalAgreement(3), ["a b", "a b c", "a b c d"])
    assert counts == [0, 0, 2]
    with pytest.raises(ValueError):
        LocalAgreement(1)


def test_hold_n_withholds_the_last_words() -> None:
    committed, counts = run(HoldN(2), ["one", "one two three", "one two three four five"])
    assert counts == [0, 1, 2]
    assert committed == ["one", "two", "three"]
    assert HoldN(0).update(hyp("a b")) == 2


def test_wait_k_waits_then_commits_at_a_fixed_rate() -> None:
    committed, counts = run(WaitK(k=2, rate=1), ["a", "a b", "a b c", "a b c d", "a b c d"])
    assert counts == [0, 0, 1, 1, 1]
    assert committed == ["a", "b", "c"]


def run_timed(policy, hypotheses: list[tuple[float, str]]) -> tuple[list[str], list[int]]:
    """``run`` with the audio each hypothesis was made on."""
    committed: list[str] = []
    counts = []
    for heard_s, text in hypotheses:
        tail = hyp(text)[len(committed) :]
        n = policy.update(tail, heard_s=heard_s)
        counts.append(n)
        committed.extend(w.text for w in tail[:n])
    return committed, counts


def test_la2_across_a_gap_agrees_with_the_hypothesis_made_that_much_earlier() -> None:
    """Steps 0.75 s apart, agreement across 1.5 s: the third hypothesis is compared with the first, not the second
    (two translations a step apart agree on words more speech changes)."""
    steps = [(0.75, "we went the"), (1.5, "we go to"), (2.25, "we go to the"), (3.0, "we go to the park")]
    assert run_timed(LocalAgreement(2), steps) == (["we", "go", "to", "the"], [0, 1, 2, 1])
    committed, counts = run_timed(LocalAgreement(2, min_gap_s=1.5), steps)
    assert counts == [0, 0, 1, 2] and committed == ["we", "go", "to"]
    # a flip back: the older hypothesis agrees where the one in between did not
    flip = [(0.75, "I scream"), (1.5, "ice cream"), (2.25, "I scream now")]
    assert run_timed(LocalAgreement(2), flip)[1] == [0, 0, 0]
    assert run_timed(LocalAgreement(2, min_gap_s=1.5), flip) == (["I", "scream"], [0, 0, 2])


def test_la2_across_a_gap_forgets_hypotheses_that_disagree_with_what_was_committed() -> None:
    policy = LocalAgreement(2, min_gap_s=1.5)
    # the same audio a few samples short of the gap still counts as the gap
    assert run_timed(policy, [(0.75, "a b c"), (1.5, "x y"), (2.2499, "a b d")]) == (["a", "b"], [0, 0, 2])
    # the hypothesis of 1.5 s ("x y") did not begin with "a b" and is forgotten; at 3.0 s the newest one 1.5 s
    # older is that of 0.75 s, whose rest ("c") disagrees
    assert policy.update(hyp("d e"), heard_s=3.0) == 0
    assert policy.update(hyp("d e f"), heard_s=3.75) == 1  # against the rest of 2.25 s ("d")
    policy.advance(1)  # the recognizer committed "e" as well
    assert policy.update(hyp("f"), heard_s=4.5) == 0  # the rest of 3.0 s ("d e") is all committed: nothing to agree
    policy.reset()
    assert policy.update(hyp("a"), heard_s=6.0) == 0 and policy.update(hyp("a"), heard_s=7.5) == 1


def test_la2_across_a_gap_needs_the_audio_heard() -> None:
    with pytest.raises(ValueError, match="audio"):
        LocalAgreement(2, min_gap_s=1.5).update(hyp("a b"))
    with pytest.raises(ValueError):
        LocalAgreement(3, min_gap_s=1.5)
    with pytest.raises(ValueError):
        LocalAgreement(2, min_gap_s=-1.0)
    assert make_commit_policy("la2", 1.5).min_gap_s == 1.5  # type: ignore[attr-defined]
    assert make_commit_policy("la3", 1.5).min_gap_s == 0.0  # type: ignore[attr-defined]
    assert make_commit_policy("hold2", 1.5).update(hyp("a b c"), heard_s=1.0) == 1


def test_offline_commits_only_at_the_end() -> None:
    policy = Offline()
    assert run(policy, ["a", "a b", "a b c"])[1] == [0, 0, 0]
    assert policy.finish(hyp("a b c")) == 3


def test_finish_commits_the_rest_and_resets() -> None:
    policy = LocalAgreement(2)
    policy.update(hyp("x y"))
    assert policy.finish(hyp("x y z")) == 3
    assert policy.update(hyp("new words")) == 0  # memory was cleared


def test_empty_tails() -> None:
    for policy in (LocalAgreement(2), HoldN(2), WaitK(0, 1), Offline()):
        assert policy.update([]) == 0
    assert common_prefix_length() == 0


def test_names() -> None:
    for name in ("la2", "hold2", "waitk", "offline"):
        assert make_commit_policy(name).name == name
    with pytest.raises(ValueError):
        make_commit_policy("greedy")


def test_the_recognizer_keeps_only_recent_committed_words() -> None:
    """A session of hours commits tens of thousands of words; the recognizer needs only the last ones (prompt, trim)."""
    config = StreamConfig(use_prompt=True)
    recognizer = StreamingRecognizer(None, make_commit_policy("la2"), config=config)  # type: ignore[arg-type]
    total = 5 * KEEP_COMMITTED_WORDS
    for i in range(total):
        recognizer._commit([Word(f"w{i}", i * 0.3, i * 0.3 + 0.25)], now_s=i * 0.3 + 1.0)
    kept = recognizer.committed
    assert KEEP_COMMITTED_WORDS <= len(kept) <= 2 * KEEP_COMMITTED_WORDS
    assert [w.text for w in kept] == [f"w{i}" for i in range(total - len(kept), total)]  # the newest, in order
    recognizer._offset_s = total * 0.3  # all of them before the buffer: the prompt is their last 200 characters
    prompt = recognizer._prompt()
    assert prompt is not None and prompt.endswith(f"w{total - 1}") and len(prompt) == recognizer.config.prompt_chars
