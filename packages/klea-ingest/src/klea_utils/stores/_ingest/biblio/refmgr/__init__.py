"""Reference-manager libraries: BibTeX/BibLaTeX, CSL-JSON and Zotero, matched to source files.

The readers turn a library into :class:`.entries.ReferenceEntry` values (``bibtex``,
``csl_json``, ``zotero``), :mod:`.matching` finds each source file's entry, :mod:`.library`
puts the two together, and :mod:`.records` turns the entry into the file's metadata-map
``DEFAULT``. :mod:`klea_utils.stores.references` offers the entries and the library under
their public names; nothing here imports it.
"""
