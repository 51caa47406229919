"""A deterministic stand-in for the embedding model, for the tests that need vectors to exist but do
not judge their quality: no torch, no model load, microseconds per text.

Tokens are counted by the bundled model's own tokenizer (tokenizer.json, read by `tokenizers`, as
the remote embedder counts them), so text is chunked exactly as with the model. A text's vector is
its words hashed into the model's dimension (feature hashing), L2-normalised: texts sharing words
are near, which keeps a vector leg meaningful enough for the tests that use it.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from functools import cache

from tokenizers import Tokenizer

from mnemosyne.embedding.sentence_transformer import bundled_model_dir

MODEL_ID = "stand-in-hashed-words"
DIMENSIONS = 384
MAX_TOKENS = 256

_WORD = re.compile(r"\w+")


@cache
def _tokenizer() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(bundled_model_dir() / "tokenizer.json"))
    # The file truncates at the model's window: a count must see the whole text, as the embedders'
    # own counters do (word_pieces.py, remote.py).
    tokenizer.no_truncation()
    return tokenizer


@cache
def _slot(word: str) -> tuple[int, float]:
    digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little") % DIMENSIONS, 1.0 if digest[4] & 1 else -1.0


class StandInEmbedder:
    model_id = MODEL_ID
    max_tokens = MAX_TOKENS
    dim = DIMENSIONS

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        vector = [0.0] * DIMENSIONS
        for word in _WORD.findall(text.lower()):
            index, sign = _slot(word)
            vector[index] += sign
        norm = math.sqrt(sum(value * value for value in vector))
        if norm == 0:
            vector[0], norm = 1.0, 1.0
        return [value / norm for value in vector]

    def count_tokens(self, text: str) -> int:
        return len(_tokenizer().encode(text, add_special_tokens=False).ids)

    def token_starts(self, text: str) -> list[int]:
        return [start for start, _ in _tokenizer().encode(text, add_special_tokens=False).offsets]
