"""Practice: a person's shadowing scored word by word against its source (ear-voice span, words lost)."""
