"""Fuzzing every place outside data enters: model replies at each stage of a query and of an
extraction, HTTP response bodies, corpus and OpenIE files. The property is always the same:
a result or one of T2RAG's own errors (one line), never a traceback from somewhere else.
Over 1,000 generated cases per run (see the ``max_examples`` below)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ANSWER_PROMPT, fake_openie_reply
from t2rag.api import T2RAG
from t2rag.config import OpenIEConfig
from t2rag.embed.hashing import HashingEmbedder
from t2rag.errors import T2RAGError
from t2rag.index import Document, TripleIndex
from t2rag.index.openie import extract
from t2rag.jsontext import loads
from t2rag.llm.openai_compat import OpenAICompatLLM
from t2rag.llm.scripted import ScriptedLLM
from t2rag.types import Chunk

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

# JSON-shaped values, with the awkward corners: NaN, huge numbers, lone surrogates, nesting.
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=40),
                    st.sampled_from(["?answer", "?x", "", " ", "\ud800", "null", "yes", "Alpha"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=5),
                                                        st.dictionaries(st.text(max_size=12), inner, max_size=5)),
                      max_leaves=25)
# What a stage might plausibly get: its own keys with fuzzed values, any JSON, or any text.
replies = st.one_of(
    st.builds(lambda v: json.dumps({"triples": v}), values),
    st.builds(lambda v: json.dumps({"bindings": v}), values),
    st.builds(lambda v: json.dumps({"answer": v, "reasoning": v}), values),
    st.builds(lambda v: json.dumps({"entities": v}), values),
    st.builds(json.dumps, values),
    st.text(max_size=200),
    st.builds(lambda n: "[" * n, st.integers(1, 6000)),
)


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("fuzz") / "idx"
    docs = [Document("Alpha", "Alpha is a town in Borduria founded in 1820."),
            Document("Borduria", "Borduria is a country whose capital is Szohod.")]
    with TripleIndex.create(d, embedder=HashingEmbedder()) as ix:
        ix.add(docs, llm=ScriptedLLM(default=fake_openie_reply))
    return d


@SETTINGS
@given(decompose=replies, resolve=replies, answer=replies)
def test_any_model_reply_gives_an_answer(index_dir: Path, decompose: str, resolve: str, answer: str) -> None:
    llm = ScriptedLLM(rules=[("Placeholders to fill", resolve), ("could not be used", resolve),
                             (ANSWER_PROMPT, answer), ("Passages:\n", answer), ("Question:", decompose)])
    with T2RAG.open(index_dir, llm=llm) as rag:
        a = rag.ask("Which country is Alpha in, and what is its capital?")
    assert isinstance(a.answer, str) and a.termination
    json.dumps(a.to_dict())  # the record is always serializable


@SETTINGS
@given(entities=replies, triples=replies)
def test_any_extraction_reply_is_recorded_not_raised(entities: str, triples: str) -> None:
    llm = ScriptedLLM(rules=[("Entities:", triples), ("Passage:", entities)], default=triples)
    rec = extract(llm, Chunk.make("Alpha", "Alpha is a town in Borduria."), OpenIEConfig())
    assert (rec.error is None) or isinstance(rec.error, str)
    assert all(isinstance(x, str) and x for t in rec.triples for x in (t.subject, t.object))


@SETTINGS
@given(body=values)
def test_any_http_body_is_a_completion_or_a_backend_error(body: Any) -> None:
    llm = OpenAICompatLLM("m", base_url="http://127.0.0.1:9/v1", api_key="k")
    try:
        c = llm._completion(body if isinstance(body, dict) else {"choices": body}, True, 0.0)
    except T2RAGError as e:
        assert "\n" not in str(e)
        return
    assert isinstance(c.text, str) and c.prompt_tokens >= 0 and c.completion_tokens >= 0


@SETTINGS
@given(text=st.one_of(st.text(max_size=300), st.builds(json.dumps, values)))
def test_lenient_json_parsing_raises_only_value_error(text: str) -> None:
    try:
        loads(text)
    except ValueError:
        pass


@SETTINGS
@given(content=st.builds(json.dumps, values), kind=st.sampled_from(["corpus.json", "corpus.jsonl", "openie.json"]))
def test_any_corpus_or_openie_file_loads_or_says_why(tmp_path_factory: pytest.TempPathFactory, content: str,
                                                    kind: str) -> None:
    from t2rag.index import load_corpus, load_openie

    path = tmp_path_factory.mktemp("f") / kind
    path.write_text(content.replace("\ud800", "?"), encoding="utf-8")
    try:
        (load_openie if kind == "openie.json" else load_corpus)(path)
    except T2RAGError as e:
        assert "\n" not in str(e)


# --- the reliability probe's classes -----------------------------------------------------------
# What a URL's user or password can hold written raw: any printable character but a space.
printable = st.characters(whitelist_categories=("L", "N", "P", "S"))
secrets = st.text(alphabet=printable, min_size=6, max_size=20).map(lambda s: "Zq" + s)
hosts = st.sampled_from(["localhost", "db.example", "127.0.0.1", "[::1]", "[::1", "h:notaport", "h:99999", ""])


@SETTINGS
@given(secret=secrets, user=st.text(alphabet=printable, max_size=8).filter(lambda s: not set(s) & set("@/:")),
       host=hosts,
       form=st.sampled_from(["url", "param", "conninfo", "in_text"]))
def test_redaction_never_raises_and_never_shows_the_password(secret: str, user: str, host: str, form: str) -> None:
    from t2rag.redact import redact

    quoted = secret.replace("'", "")
    text = {"url": f"postgresql://{user}:{secret}@{host}/db",
            "param": f"postgresql://{user}@{host}/db?sslmode=require&password={secret}",
            "conninfo": f"host={host} password='{quoted}' dbname=db",
            "in_text": f"cannot connect to postgres://{user}:{secret}@{host}/db: refused"}[form]
    shown = redact(text)
    hidden = quoted if form == "conninfo" else secret
    assert hidden not in shown


query_fields = st.sampled_from(["rounds", "k_chunks", "retrieve.top_m", "decompose.examples", "answer.passages",
                                "retrieve.hybrid", "decompose.form", "max_tokens", "resolve.facts", "answer",
                                "decompose_examples"])


@SETTINGS
@given(config=st.dictionaries(query_fields, scalars, max_size=4))
def test_any_config_values_are_a_config_or_one_config_error(config: dict[str, Any]) -> None:
    from t2rag.api import query_config
    from t2rag.errors import ConfigError

    try:
        query_config(config)
    except ConfigError as e:
        assert "\n" not in str(e)


@SETTINGS
@given(rows=st.lists(st.dictionaries(st.text(max_size=5), scalars, max_size=3), min_size=1, max_size=6),
       cut=st.integers(min_value=0, max_value=10_000))
def test_a_torn_jsonl_tail_is_cut_to_whole_rows(rows: list[dict[str, Any]], cut: int, tmp_path_factory: Any) -> None:
    from t2rag.outfile import repair_torn_tail

    path = tmp_path_factory.mktemp("torn") / "rows.jsonl"
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8", "surrogatepass")
    path.write_bytes(data[: cut % (len(data) + 1)])
    repair_torn_tail(path)
    kept = path.read_bytes()
    assert data.startswith(kept) and (not kept or kept.endswith(b"\n"))
    assert len(kept.splitlines()) == sum(1 for line in data[: cut % (len(data) + 1)].split(b"\n")[:-1])
