"""How a chunk's section path is written: its headings, outermost first, joined by one separator.

Pure (no Django): the chunker writes paths, the selectors cut them to a depth (list_topics).
"""

SECTION_SEPARATOR = " \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} "
