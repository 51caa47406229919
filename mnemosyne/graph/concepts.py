"""Concept extraction: keyphrases of a chunk, RAKE-style, with a built-in English stop list (pure).

Candidates are maximal runs of content words between stop words, numbers, punctuation and URLs
(as in RAKE; at most four words), scored by frequency (see `extract_concepts`) and normalised so
the best concept of a chunk is 1.0. YAKE was tried and rejected: about 30 chunks/s of 200 words,
far below the ingest budget, and it drags in networkx and numpy.

Keys are normalised (lowercase, whitespace collapsed, punctuation trimmed, the last word's plural
folded) so that queries normalised the same way (`query_concepts`) find them.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

MAX_PHRASE_WORDS = 4
MAX_QUERY_NGRAM = 3
MAX_WORD_CHARS = 40

# Stop words: function words, auxiliaries, pronouns, vague verbs and adverbs (SMART-style, trimmed).
_STOP_TEXT = """
    a about above according across actually after afterwards again against all almost alone along already
    also although always am among amongst an and another any anybody anyhow anyone anything anyway anywhere
    are around as aside ask asked asking at available away be became because become becomes becoming been
    before beforehand behind being below beside besides best better between beyond both brief but by came
    can cannot cant certain certainly clearly co com come comes consider considering contain containing
    contains could couldn d did didn different do does doesn doing don done down during e.g each edu eg
    either else elsewhere enough especially et etc even ever every everybody everyone everything everywhere
    ex exactly example examples except far few fifth first five followed following follows for former formerly
    forth four from further furthermore get gets getting given gives go goes going gone got gotten had hadn
    happens hardly has hasn have haven having he hello hence her here hereafter hereby herein hereupon hers
    herself hi him himself his hither hopefully how however i i.e ie if immediately in inc indeed instead
    into inward is isn it its itself just keep keeps kept know known knows last lately later latter least
    less lest let like liked likely little ll look looking looks ltd m made mainly make makes many may
    maybe me mean meanwhile merely might more moreover most mostly much must my myself namely near nearly
    necessary need needs neither never nevertheless new next nine no nobody non none noone nor normally not
    nothing now nowhere obviously of off often oh ok okay old on once one ones only onto or other others
    otherwise ought our ours ourselves out outside over overall own particular particularly per perhaps
    placed please plus possible presumably probably provides put quite rather re really regarding regardless
    relatively respectively right s said same saw say saying says second secondly see seeing seem seemed
    seeming seems seen self selves sensible sent serious seriously seven several shall she should shouldn
    since six so some somebody somehow someone something sometime sometimes somewhat somewhere soon sorry
    still sub such sure t take taken takes tell tends th than thank thanks thanx that thats the their
    theirs them themselves then thence there thereafter thereby therefore therein thereupon these they
    thing things think third this thorough thoroughly those though three through throughout thru thus to
    together too took toward towards tried tries truly try trying twice two un under unless unlikely until
    unto up upon us use used useful uses using usually value various ve very via viz vs want wants was
    wasn way we well went were weren what whatever when whence whenever where whereafter whereas whereby
    wherein whereupon wherever whether which while whither who whoever whole whom whose why will willing
    wish with within without won wonder would wouldn yes yet you your yours yourself yourselves zero
    http https www
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())

# Words whose final "s" is not a plural, and irregular plurals.
_NOT_PLURAL_TEXT = """
    alias analytics atlas bias canvas chaos cosmos dynamics economics electronics ethics ethos genetics
    graphics informatics kudos kubernetes lens linguistics logos macos mathematics means mechanics news
    pathos physics politics robotics semantics series species statistics thermos
"""
_NOT_PLURAL = frozenset(_NOT_PLURAL_TEXT.split())
_IRREGULAR = {
    "aliases": "alias",
    "analyses": "analysis",
    "appendices": "appendix",
    "atlases": "atlas",
    "axes": "axis",
    "biases": "bias",
    "bonuses": "bonus",
    "buses": "bus",
    "caches": "cache",
    "campuses": "campus",
    "canvases": "canvas",
    "children": "child",
    "cliches": "cliche",
    "cookies": "cookie",
    "cpus": "cpu",
    "crises": "crisis",
    "criteria": "criterion",
    "diagnoses": "diagnosis",
    "gpus": "gpu",
    "headaches": "headache",
    "hypotheses": "hypothesis",
    "indices": "index",
    "lenses": "lens",
    "matrices": "matrix",
    "menus": "menu",
    "movies": "movie",
    "niches": "niche",
    "parentheses": "parenthesis",
    "phenomena": "phenomenon",
    "statuses": "status",
    "theses": "thesis",
    "tpus": "tpu",
    "vertices": "vertex",
    "viruses": "virus",
}

# A word (letters, digits, inner - ' . joining word characters, trailing + or #), or one punctuation mark.
_TOKEN = re.compile(r"(\w(?:[\w+#]|[-'’.](?=\w))*[+#]*)|([^\w\s])")
_URL = re.compile(r"\b[a-zA-Z][\w+.-]*://\S+|\bwww\.\S+|[\w.+-]+@[\w-]+\.[\w.]+")
_NUMBER = re.compile(r"[\d.,'’-]+")
_TRIM = "\"'’‘“”`.,;:!?()[]{}<>«»/\\|*_~^-–—…"
_SENTENCE_END = frozenset(".!?")
# No phrase runs across a blank line, or into or out of a Markdown heading's line.
_BLOCK_BREAK = re.compile(r"\n\s*\n|^[ ]{0,3}#+[ \t]+(.*)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Concept:
    key: str  # normalised form: what graphs join on and queries look up
    label: str  # a readable surface form from the text
    score: float  # in (0, 1]; the chunk's best concept scores 1.0


def fold_plural(word: str) -> str:
    """The singular of a lowercase English word, by conservative suffix rules."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) < 4 or not word.isalpha() or word in _NOT_PLURAL or not word.endswith("s"):
        return word
    if word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4 and word[-4] not in "aeiou":
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return word[:-2]
    return word[:-1]


def _clean_word(word: str) -> str:
    word = word.strip(_TRIM)
    if word.endswith(("'s", "’s")):
        word = word[:-2]
    return word.replace("’", "'")


@lru_cache(maxsize=1 << 14)
def _normalise_words(words: tuple[str, ...]) -> str:
    cleaned = [w for w in (_clean_word(word.lower()) for word in words) if w]
    if cleaned:
        cleaned[-1] = fold_plural(cleaned[-1])
    return " ".join(cleaned)


def normalise_concept(text: str) -> str:
    """The lookup key of a phrase: "  Neural  Networks." → "neural network"."""
    return _normalise_words(tuple(unicodedata.normalize("NFKC", text).split()))


@lru_cache(maxsize=1 << 14)
def _is_content_word(lower: str) -> bool:
    return (
        1 < len(lower) <= MAX_WORD_CHARS
        and lower not in STOP_WORDS
        and not _NUMBER.fullmatch(lower)
        and any(ch.isalpha() for ch in lower)
    )


@dataclass(slots=True)
class _Run:
    surfaces: list[str]  # the words as written
    sentence_initial: bool

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(surface.lower() for surface in self.surfaces)


def _break(match: re.Match[str]) -> str:
    heading = match.group(1)
    return f" . {heading} . " if heading is not None else " . "


def _runs(text: str) -> list[_Run]:
    """Maximal runs of content words, split at stop words, numbers, punctuation, URLs and
    paragraph breaks."""
    runs: list[_Run] = []
    current: _Run | None = None
    sentence_start = True
    text = _BLOCK_BREAK.sub(_break, _URL.sub(" | ", unicodedata.normalize("NFKC", text)))
    for word, punct in _TOKEN.findall(text):
        if word and _is_content_word(word.lower()):
            if current is None:
                current = _Run([], sentence_start)
                runs.append(current)
            current.surfaces.append(word)
        else:
            current = None
        sentence_start = bool(punct) and (punct in _SENTENCE_END or sentence_start)
    return runs


def extract_concepts(text: str, *, max_concepts: int = 8) -> list[Concept]:
    """The chunk's best keyphrases, best first; deterministic for the same text.

    A phrase scores (1 + ln credit) * sum(sqrt(frequency of each word)), where credit counts its
    occurrences alone or as the tail of a longer phrase ("deep neural networks" credits
    "neural network"): frequent phrases win, and a two-word term beats either word alone.
    """
    candidates = [run for run in _runs(text) if len(run.surfaces) <= MAX_PHRASE_WORDS]
    if not candidates or max_concepts <= 0:
        return []
    frequency: Counter[str] = Counter()
    credit: Counter[str] = Counter()
    words_of = [candidate.words for candidate in candidates]
    for words in words_of:
        frequency.update(words)
        for start in range(len(words)):
            credit[_normalise_words(words[start:])] += 1

    phrase_score: dict[str, float] = {}
    # key → surface form → [count, times seen outside a sentence start, -first position]
    forms: dict[str, dict[str, list[int]]] = {}
    for position, (candidate, words) in enumerate(zip(candidates, words_of, strict=True)):
        key = _normalise_words(words)
        if not key:
            continue
        score = (1.0 + math.log(credit[key])) * sum(math.sqrt(frequency[word]) for word in words)
        phrase_score[key] = max(phrase_score.get(key, 0.0), score)
        stats = forms.setdefault(key, {}).setdefault(" ".join(candidate.surfaces), [0, 0, -position])
        stats[0] += 1
        stats[1] += 0 if candidate.sentence_initial else 1
    if not phrase_score:
        return []
    ranked = sorted(phrase_score.items(), key=lambda item: (-item[1], item[0]))[:max_concepts]
    best = ranked[0][1]
    return [Concept(key, _label(key, forms[key]), round(score / best, 6)) for key, score in ranked]


def _label(key: str, forms: dict[str, list[int]]) -> str:
    """The most frequent surface form, preferring one not capitalised by a sentence start."""
    surface = max(forms.items(), key=lambda item: (item[1][0], item[1][1], item[1][2]))[0]
    only_sentence_initial = forms[surface][1] == 0
    if only_sentence_initial and surface[:1].isupper() and surface[1:2].islower():
        # "Neural networks" at a sentence start reads better as "neural networks".
        surface = surface[:1].lower() + surface[1:]
    return surface or key


def query_concepts(query: str) -> list[str]:
    """Keys of every 1-3 word run of content words in a query, longest first, then by position.

    These are the only shapes `extract_concepts` produces, so each can be looked up as is.
    """
    keys: dict[str, None] = {}
    runs = [run.words for run in _runs(query)]
    for size in range(MAX_QUERY_NGRAM, 0, -1):
        for words in runs:
            for start in range(len(words) - size + 1):
                key = _normalise_words(words[start : start + size])
                if key:
                    keys.setdefault(key, None)
    return list(keys)
