"""A search query in web-search syntax, read once and written for each store.

``disk full`` finds what holds both words, ``"disk full"`` the phrase, ``-nginx`` leaves out what
holds the word, ``disk OR volume`` either (``OR`` binds the terms beside it). Words are what
SQLite's ``unicode61`` tokenizer finds, and what the PostgreSQL index is made of (the text's runs
of letters and digits, lower-cased): a term with other characters in it, a code identifier or a
path (``tls_cert.pem``), is the phrase of its words, so it finds them where they stand together.

``parse`` reads the query; ``fts5`` writes it for SQLite's ``MATCH``, ``tsquery`` for
PostgreSQL's ``to_tsquery('simple', …)``. Every word written into a store's query is letters and
digits only, so no query can change its syntax.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from relay_api.errors import InvalidInput

Phrase = tuple[str, ...]  # a word is a phrase of one
# One term as it comes: a quoted phrase, or a run of anything but blanks and quotes.
_TERM = re.compile(r'(-?)"([^"]*)"?|(\S+)')
SNIPPET_CHARS = 300


def words(text: str) -> list[str]:
    """The words of ``text`` as the stores index them: runs of letters and digits, lower-cased,
    without diacritics (``unicode61``'s default)."""
    folded = unicodedata.normalize("NFD", text.lower())
    plain = "".join(c for c in folded if not unicodedata.combining(c))
    return re.findall(r"[^\W_]+", plain)


@dataclass(frozen=True)
class Query:
    """Every group holds one of its phrases (a group of several was written with ``OR``), and
    no excluded phrase is held."""

    groups: tuple[tuple[Phrase, ...], ...]
    excluded: tuple[Phrase, ...]


def parse(text: str) -> Query:
    """``text`` in web-search syntax; InvalidInput when it names nothing to find."""
    groups: list[list[Phrase]] = []
    excluded: list[Phrase] = []
    joined = False  # the last term was OR: the next joins the group before it
    for match in _TERM.finditer(text):
        negated, quoted, bare = match.group(1), match.group(2), match.group(3)
        if bare == "OR":
            joined = bool(groups)
            continue
        if bare is not None and bare.startswith("-") and len(bare) > 1:
            negated, bare = "-", bare[1:]
        phrase = tuple(words(quoted if quoted is not None else bare))
        if not phrase:
            continue
        if negated:
            excluded.append(phrase)
        elif joined:
            groups[-1].append(phrase)
        else:
            groups.append([phrase])
        joined = False
    if not groups:
        raise InvalidInput("q", "name at least one word to find (not only words to leave out)")
    return Query(tuple(tuple(group) for group in groups), tuple(excluded))


def fts5(query: Query) -> str:
    """The query as an FTS5 ``MATCH`` expression."""

    def phrase(words: Phrase) -> str:
        return '"' + " ".join(words) + '"'

    wanted = " AND ".join(
        "(" + " OR ".join(phrase(p) for p in group) + ")" for group in query.groups
    )
    return "".join([f"({wanted})", *(f" NOT {phrase(p)}" for p in query.excluded)])


def tsquery(query: Query) -> str:
    """The query as the text of a PostgreSQL ``tsquery`` (of the ``simple`` configuration)."""

    def phrase(words: Phrase) -> str:
        return "(" + " <-> ".join(f"'{word}'" for word in words) + ")"

    wanted = [" | ".join(phrase(p) for p in group) for group in query.groups]
    return " & ".join([*(f"({w})" for w in wanted), *(f"!{phrase(p)}" for p in query.excluded)])
