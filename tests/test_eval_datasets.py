"""Dataset loaders: every HippoRAG2-layout format normalizes to one Sample type."""

from __future__ import annotations

from pathlib import Path

import pytest

from t2rag.errors import InputError
from t2rag.eval.datasets import GoldPassage, load_dataset_corpus, load_samples, pick_loader
from t2rag.eval.metrics import passage_matches

FIXTURES = Path(__file__).parent / "fixtures"


def test_musique_format() -> None:
    s = load_samples("musique_tiny", FIXTURES)
    assert [x.id for x in s] == ["2hop__1", "2hop__2", "2hop__3"]
    assert s[0].answers == ["Oslo", "Oslo, Norway"]
    assert s[0].supporting_titles == ["Blue Door", "Ann Lee"]
    assert s[0].supporting[1].text is not None and "Oslo" in s[0].supporting[1].text
    assert len(load_dataset_corpus("musique_tiny", FIXTURES)) == 7


def test_2wiki_format() -> None:
    s = load_samples("2wikimultihopqa", FIXTURES)
    assert s[0].id == "w1" and s[0].answers == ["Marta Viel"]
    assert s[0].supporting_titles == ["Old Bridge", "Marta Viel"]
    # 2Wiki joins sentences with a space, as its corpus does.
    assert s[0].supporting[1].text == "Marta Viel( born 3 May 1950) is a composer. She is the mother of Ivo Viel."
    assert s[1].answers == ["yes"]


def test_popqa_format_accepts_json_string_and_list() -> None:
    s = load_samples("popqa", FIXTURES)
    assert s[0].id == "101"
    assert s[0].answers == ["Ardmore", "County Ardmore"]
    assert s[1].answers == ["musician", "drummer"]
    assert s[0].supporting == []


@pytest.mark.parametrize("name", ["story", "medical"])
def test_graphrag_bench_format(name: str) -> None:
    s = load_samples(name, FIXTURES)
    assert all(x.answers for x in s)
    assert all(p.text is None for x in s for p in x.supporting)
    if name == "story":
        assert s[0].answers == ["her father's compass", "a compass"]
        assert s[0].supporting_titles == ["The Salt Road"]
        assert s[1].answers == ["seven days"] and s[1].supporting_titles == ["Winter Bells"]


def test_limit_and_unknown_name_detects_format(tmp_path: Path) -> None:
    assert len(load_samples("musique_tiny", FIXTURES, limit=2)) == 2
    assert pick_loader("mystery", {"possible_answers": "[]"}).__name__ == "from_popqa"
    assert pick_loader("mystery", {"supporting_facts": []}).__name__ == "from_context"
    with pytest.raises(InputError):
        pick_loader("mystery", {"question": "?"})
    with pytest.raises(InputError):
        load_samples("absent", tmp_path)


def test_duplicate_ids_made_unique(tmp_path: Path) -> None:
    (tmp_path / "popqa.json").write_text(
        '[{"id": 1, "question": "a?", "possible_answers": "[\\"x\\"]"},'
        ' {"id": 1, "question": "b?", "possible_answers": "[\\"y\\"]"}]'
    )
    assert [s.id for s in load_samples("popqa", tmp_path)] == ["1", "1#1"]


@pytest.mark.parametrize("name", ["musique", "hotpotqa", "sample"])
def test_real_dev_files_load_and_gold_passages_are_in_corpus(shared_data: Path, name: str) -> None:
    samples = load_samples(name, shared_data)
    corpus = load_dataset_corpus(name, shared_data)
    assert samples and all(s.question and s.answers for s in samples)
    by_title: dict[str, list[str]] = {}
    for d in corpus:
        by_title.setdefault(d.title, []).append(d.text)
    for s in samples:
        assert s.supporting, s.id
        for g in s.supporting:
            # Every gold passage matches exactly one corpus passage, also where titles repeat.
            hits = [t for t in by_title.get(g.title, []) if passage_matches(g, g.title, t)]
            assert len(hits) == 1, (s.id, g.title)


def test_gold_passage_is_hashable() -> None:
    assert len({GoldPassage("a", "b"), GoldPassage("a", "b")}) == 1
