"""Text code every layer shares, pure: normalising (NFKC, soft hyphens), the searchable forms of
numbers, and English words (SymSpell's dictionary)."""
