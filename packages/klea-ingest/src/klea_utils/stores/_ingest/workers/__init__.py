"""Conversion workers: spawned processes, dispatch, batches and the Ray paths."""
