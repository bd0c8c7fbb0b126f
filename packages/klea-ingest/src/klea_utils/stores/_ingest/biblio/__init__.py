"""Bibliographic extraction: regular expressions, DOI services and their cache."""
