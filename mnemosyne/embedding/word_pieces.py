"""The model's tokenizer on the `tokenizers` library alone: what the ONNX encoders feed the graph,
and the word pieces the chunker counts.

sentence-transformers' tokenizer is a `transformers` wrapper around a `tokenizers.Tokenizer`; the
wrapper's import (transformers, then torch) costs seconds in every process that embeds. The
wrapped tokenizer, configured as the wrapper configures it for a call with padding=True,
truncation=True, max_length=the model's window, gives the same ids, masks and offsets
(tests/embedding/test_word_pieces.py compares them), and is kept beside the exported graph
(ready.py) so later processes need neither.
"""

from __future__ import annotations

import queue
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Tokenizer


class WordPieces:
    """Batches padded to their longest text and cut at the model's window, as the model reads them;
    single texts' word pieces uncut, without the [CLS]/[SEP] markers, for counting."""

    def __init__(self, tokenizer_json: str, *, max_length: int, pad_id: int, pad_token: str) -> None:
        from tokenizers import Tokenizer

        self.max_length = max_length
        self._json = tokenizer_json
        self._pad_id = pad_id
        self._pad_token = pad_token
        self._counting = Tokenizer.from_str(tokenizer_json)
        self._counting.no_truncation()
        self._counting.no_padding()
        # A fast tokenizer refuses concurrent use ("Already borrowed"): each batch takes one of its
        # own from these and puts it back. Kept per call, not per thread: the server's worker
        # threads come and go with the load (anyio ends one idle for 10 s), and building a
        # tokenizer from its JSON costs about 17 ms of CPU, as much as a whole search.
        self._idle: queue.SimpleQueue[Tokenizer] = queue.SimpleQueue()

    @classmethod
    def of(cls, hf_tokenizer: Any, *, max_length: int) -> WordPieces:
        """From a `transformers` fast tokenizer (the loaded model's)."""
        return cls(
            hf_tokenizer.backend_tokenizer.to_str(),
            max_length=max_length,
            pad_id=int(hf_tokenizer.pad_token_id),
            pad_token=str(hf_tokenizer.pad_token),
        )

    def settings(self) -> dict[str, Any]:
        """What `WordPieces(**settings)` needs to make this again."""
        return {
            "tokenizer_json": self._json,
            "max_length": self.max_length,
            "pad_id": self._pad_id,
            "pad_token": self._pad_token,
        }

    def batch(self, texts: Sequence[str], input_names: Sequence[str]) -> dict[str, np.ndarray]:
        """The graph's inputs for `texts` (input_ids, attention_mask, token_type_ids)."""
        tokenizer = self._take()
        try:
            encodings = tokenizer.encode_batch(list(texts))
        finally:
            self._idle.put(tokenizer)
        columns = {
            "input_ids": [encoding.ids for encoding in encodings],
            "attention_mask": [encoding.attention_mask for encoding in encodings],
            "token_type_ids": [encoding.type_ids for encoding in encodings],
        }
        return {name: np.asarray(columns[name], dtype=np.int64) for name in input_names}

    def count(self, text: str) -> int:
        return len(self._counting.encode(text, add_special_tokens=False).ids)

    def starts(self, text: str) -> list[int]:
        return [start for start, _ in self._counting.encode(text, add_special_tokens=False).offsets]

    def _take(self) -> Tokenizer:
        """An idle batching tokenizer, or a new one when every one built is in use."""
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_str(self._json)
        tokenizer.enable_truncation(max_length=self.max_length)
        tokenizer.enable_padding(pad_id=self._pad_id, pad_token=self._pad_token)
        return tokenizer
