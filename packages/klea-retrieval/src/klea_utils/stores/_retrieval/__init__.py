"""Internal modules of klea-retrieval: no promises; the public API is the documented modules."""
