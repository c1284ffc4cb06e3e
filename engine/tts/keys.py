"""Word keys: the ``(sentence, index)`` the synthesizer gives each word it is fed, derived the same way outside it.

The pipeline and ``speak`` need the key of every word they feed (to match the audio pieces' words back to when
the word arrived); ``SentenceKeys`` follows the synthesizer's rule, and a test checks the two agree.
"""

from __future__ import annotations

from engine.tts.frontend import ends_sentence, split_words, with_pause


class SentenceKeys:
    def __init__(self) -> None:
        self.sentence = 0
        self.index = 0

    def tokens(self, word: str) -> list[tuple[str, tuple[int, int]]]:
        """The tokens the synthesizer makes of ``word``, each with its key; a sentence-ending token closes it."""
        keyed = []
        for token in split_words(word):
            keyed.append((token, (self.sentence, self.index)))
            self.index += 1
            if ends_sentence(token):
                self.end_sentence()
        return keyed

    def end_sentence(self) -> int | None:
        """Close the current sentence (as ``end_sentence``/``flush`` do); returns its number, None when empty."""
        if self.index == 0:
            return None
        closed = self.sentence
        self.sentence, self.index = self.sentence + 1, 0
        return closed

    def cancel(self) -> None:
        """As the synthesizer's ``cancel``: the next word starts a new sentence."""
        self.sentence, self.index = self.sentence + 1, 0


def fed_tokens(keyed: list[tuple[str, tuple[int, int]]], pause_after: bool) -> list[str]:
    """The tokens of one word (``SentenceKeys.tokens``) as the voice is fed them: when the speaker paused after the
    word, its last token carries a comma (the keys are unchanged: a comma never ends a sentence)."""
    tokens = [token for token, _ in keyed]
    if pause_after and tokens:
        tokens[-1] = with_pause(tokens[-1])
    return tokens
