"""A library's language (an ISO 639 code) picks the PostgreSQL text-search configuration its chunks
are indexed and its queries parsed with — stemming and stop words; a language PostgreSQL does not
stem (Japanese, Chinese, Polish, …) gets `simple`: words lower-cased, nothing removed."""

from __future__ import annotations

import re

from mnemosyne.library.errors import InvalidArgument

DEFAULT_LANGUAGE = "en"
SIMPLE = "simple"
# ISO 639-1 (and the 639-2 codes people also use) → the text-search configuration PostgreSQL ships.
TEXT_SEARCH_CONFIGS = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "da": "danish", "nl": "dutch",
    "en": "english", "et": "estonian", "fi": "finnish", "fr": "french", "de": "german", "el": "greek",
    "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian",
    "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian", "nn": "norwegian",
    "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian", "es": "spanish",
    "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
    "eng": "english", "deu": "german", "ger": "german", "fra": "french", "fre": "french",
    "spa": "spanish", "ita": "italian", "por": "portuguese", "rus": "russian", "nld": "dutch",
}  # fmt: skip
_CODE = re.compile(r"[a-z]{2,3}")


def validate_language(language: str) -> str:
    """An ISO 639 code, lower-cased; any two- or three-letter code is taken (unknown ones: simple)."""
    code = language.strip().lower()
    if not _CODE.fullmatch(code):
        raise InvalidArgument(
            f"language must be an ISO 639 code such as 'en', 'de' or 'ja', got {language!r}"
        )
    return code


def text_search_config(language: str) -> str:
    return TEXT_SEARCH_CONFIGS.get(language, SIMPLE)
