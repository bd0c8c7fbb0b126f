"""Reference lists: the section found in a converted paper, split into entries, each
entry's fields (title, authors, year, venue, DOI, arXiv id) read from its text."""
