"""Incremental text-to-speech on a two-stage Piper voice (Ma et al. 2020, prefix-to-prefix)."""
