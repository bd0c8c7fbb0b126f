"""Internal modules of klea-ingest: no promises; the public API is the documented modules."""
