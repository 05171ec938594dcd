"""A prompt about a part of the repository the record never mentions.

The realistic sets' off-topic prompts that still got entries were about other parts of the same
repository ("the exemplars API on the querier", "Solr for CKAN"): the static embeddings put them near
the record's facts of the same domain, and a few ordinary words give them coverage. The repository
itself says what exists: a prompt word that names a tracked path's folder or file (`index.repowords`),
that no fact holds, and that is no plain word of the language (not one whole token of the embedding
model's vocabulary, no digits: `exemplars`, `actionlint`, `bigquery`, `pypi`, not `start` or `dev`),
says the prompt is about something the repository has and the record does not cover. Then coverage and
cosine, which measure the domain, are not evidence enough: only a named identifier few facts hold, or a
clear lead on a long prompt, makes a seed (`seeds.precise`), or a hit that outweighs the unrecorded words
(`outweighs`): a developer's question names the component it is working in (`DeadBlog`, a folder in a
pasted log) while asking about what the record covers, and then the fact it asks about holds far more
of the prompt than the unrecorded name does, or stands out from its background as far as a seed with no
word in common must.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..index.handle import Index
    from ..index.wordpiece import WordPiece
    from .seeds import Hit
    from .settings import Settings

_WORD = re.compile(r"\w+")
MIN_CHARS = 3  # shorter words (`io`, `tf`) say little on their own


def judged(index: Index, text: str, hits: list[Hit], s: Settings, parts: list[str] | None = None) -> list[Hit]:
    """`seeds.relevant(hits, s)`, unless no hit passed precisely and the prompt names parts of the
    repository the record never mentions: then nothing (their words go to `parts`, for `stele why`)."""
    from .seeds import precise, relevant

    chosen = relevant(hits, s)
    if not chosen or any(precise(h, s) for h in chosen):
        return chosen
    found = unrecorded(index, text)
    if not found:
        return chosen
    weight = share(index, text, found)
    if any(outweighs(h, weight, s) for h in chosen):
        return chosen
    if parts is not None:
        parts.extend(found)
    return []


def share(index: Index, text: str, words: list[str]) -> float:
    """The share of the prompt's content-word weight (`seeds.Coverage`, rarity-weighted as coverage is)
    that `words` carry."""
    from .seeds import Coverage

    covered = Coverage(index.text, text)
    terms = {x for w in words for x in index.text.terms(w)}
    held = sum(v for w, v in covered.weight.items() if w[0] in terms)
    return held / covered.total if covered.total > 0 else 0.0


def outweighs(hit: Hit, unrecorded_share: float, s: Settings) -> bool:
    """Whether a hit that `passed` a floor is more what the prompt is about than the unrecorded parts it
    names: it covers `LEAD_RATIO` times the share of the prompt they carry (as a clear lead covers twice
    the runner-up), or it covers at least as much as they do and its cosine stands `vector_alone_z`
    deviations above its background (what a seed holding no word of the prompt needs: a clear standout,
    not the domain's usual nearness)."""
    from .seeds import LEAD_RATIO, passed

    if passed(hit, s) is None:
        return False
    if hit.coverage >= LEAD_RATIO * unrecorded_share:
        return True
    z = hit.z
    return (hit.coverage >= unrecorded_share and hit.cosine is not None and hit.cosine >= s.vector_floor
            and z is not None and z >= max(s.vector_z, s.vector_alone_z))


def unrecorded(index: Index, text: str) -> list[str]:
    """The prompt's words that name a part of the repository the record never mentions, in prompt order."""
    vocab = _vocabulary(index)
    if vocab is None:  # no embedding model: no notion of a plain word, the test is off
        return []
    t = index.text
    candidates: dict[str, tuple[str, ...]] = {}
    for word in dict.fromkeys(_WORD.findall(text)):
        if len(word) < MIN_CHARS or any(c.isdigit() for c in word):
            continue
        compound = "_" in word or any(a.islower() and b.isupper() for a, b in itertools.pairwise(word))
        if not compound and vocab(word.lower()):
            continue
        own = t.terms(word)
        if own:
            candidates.setdefault(word, tuple(dict.fromkeys(own)))
    if not candidates:
        return []
    rarity = t.rarity([x for terms in candidates.values() for x in terms])
    held = {x for x, (_, df) in rarity.items() if df > 0}

    def recorded(terms: tuple[str, ...]) -> bool:
        return terms[0] in held or (len(terms) > 1 and set(terms[1:]) <= held)

    left = {w: terms for w, terms in candidates.items() if not recorded(terms)}
    if not left:
        return []
    from ..index import repowords

    repo = repowords.known(index.project, t, {x for terms in left.values() for x in terms})
    return [w for w, terms in left.items()
            if terms[0] in repo or (len(terms) > 1 and set(terms[1:]) <= repo)]


_VOCABS: dict[str, WordPiece | None] = {}


def _vocabulary(index: Index) -> Callable[[str], bool] | None:
    """Whether a word is one whole token of the embedding model's vocabulary (a plain word), or None
    when the model cannot be read."""
    from ..index import vectors, wordpiece
    from ..index.encoder import EncoderUnavailable

    model = index.model_id
    if not model:
        return None
    if model not in _VOCABS:
        try:
            ref = vectors.model_ref(index.project)
            folder = ref.path
            table = vectors.store_dir(index.project.index_dir, ref.model_id) / vectors.TOKENIZER
            wp = wordpiece.load(folder / "tokenizer.json", table) if folder is not None else None
        except (EncoderUnavailable, OSError, ValueError):
            wp = None
        _VOCABS[model] = wp
    wp = _VOCABS[model]
    if wp is None:
        return None
    return lambda word: wp.token_id(word) is not None
