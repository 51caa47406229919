"""English words and their frequencies, from SymSpell's dictionary (in the symspellpy wheel).

Two uses: splitting words that OCR ran together (ingestion/word_splitting.py), and telling a
misspelt name in a question from an ordinary word (search/named_documents.py). Loaded once, on first use
(about a second and 30 MB).
"""

from __future__ import annotations

import importlib.resources
import threading
from typing import Any

_segmenter: Any = None
_known: frozenset[str] = frozenset()
_lock = threading.Lock()


def segmenter() -> Any:
    """symspellpy's SymSpell with the English dictionary, for `word_segmentation` (edit distance 0)."""
    global _segmenter, _known
    with _lock:
        if _segmenter is None:
            from symspellpy import SymSpell

            loaded = SymSpell(max_dictionary_edit_distance=0, prefix_length=7)
            dictionary = importlib.resources.files("symspellpy") / "frequency_dictionary_en_82_765.txt"
            loaded.load_dictionary(str(dictionary), term_index=0, count_index=1)
            _known = frozenset(loaded.words)
            _segmenter = loaded
    return _segmenter


def is_word(word: str) -> bool:
    """Whether `word` (any case) is an English word of the dictionary."""
    if _segmenter is None:
        segmenter()
    return word.lower() in _known
