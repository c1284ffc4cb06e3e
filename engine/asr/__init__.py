"""Streaming speech recognition that commits stable words (Liu et al. 2020)."""
