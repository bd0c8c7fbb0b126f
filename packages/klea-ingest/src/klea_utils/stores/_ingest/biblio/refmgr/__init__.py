"""Reference-manager libraries: BibTeX/BibLaTeX, CSL-JSON and Zotero, matched to source files.

The readers turn a library into :class:`~klea_utils.stores.references.ReferenceEntry`
values (``bibtex``, ``csl_json``, ``zotero``), :mod:`.matching` finds each source file's
entry, and :mod:`.records` turns the entry into the file's metadata-map ``DEFAULT``.
"""
