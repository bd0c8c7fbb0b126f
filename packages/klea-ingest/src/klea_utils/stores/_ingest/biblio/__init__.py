"""Bibliographic extraction: regular expressions, DOI services and their cache, and the
reference-manager libraries that replace the guesses (``refmgr/``)."""
