"""Chunking: the structure chunker, sentences, segments and the token counter."""
