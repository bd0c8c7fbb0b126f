"""The chunk phase: one source file converted and chunked, and why files fail."""
