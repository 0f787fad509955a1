"""Query settings by stage: the ways to write them agree, bad ones are refused in one line, the
reference page is generated from the fields' own descriptions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from t2rag.errors import ConfigError
from t2rag.query.config import PAPER, RENAMED, STAGES, AnswerConfig, QueryConfig, RetrieveConfig, describe

ROOT = Path(__file__).resolve().parents[1]


def test_dotted_nested_and_object_settings_are_the_same_config() -> None:
    want = QueryConfig(rounds=2, answer=AnswerConfig(passages=3), retrieve=RetrieveConfig(hybrid=False))
    assert QueryConfig.from_dict({"rounds": 2, "answer.passages": 3, "retrieve.hybrid": False}) == want
    assert QueryConfig.from_dict({"rounds": 2, "answer": {"passages": 3}, "retrieve": {"hybrid": False}}) == want
    assert QueryConfig.from_dict(want.to_dict()) == want  # a stored Answer's config reads back
    # settings apply over a config: the rest of its stage is kept
    assert want.with_settings({"answer.check": True}).answer == AnswerConfig(passages=3, check=True)


@pytest.mark.parametrize("settings, message", [
    ({"roundz": 2}, "unknown query setting(s): roundz"),
    ({"answer.pasages": 2}, "unknown AnswerConfig key(s): pasages"),
    ({"answer_passages": 2}, "'answer_passages' is now 'answer.passages'"),
    ({"answer.passages": 2.5}, "passages must be a whole number"),
    ({"answer.passages": -1}, "passages must be >= 0"),
    ({"retrieve": {"hybrid": "yes"}}, "hybrid must be true or false"),
    ({"rounds": 0}, "rounds must be 1..10"),
])
def test_a_bad_setting_is_one_config_error_naming_it(settings: dict, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        QueryConfig.from_dict(settings)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_stage_must_be_its_own_config() -> None:
    with pytest.raises(ConfigError, match="answer must be given as AnswerConfig"):
        QueryConfig(answer=3)  # type: ignore[arg-type]


def test_every_setting_describes_itself_and_every_old_key_names_a_real_setting() -> None:
    keys = [k for k, _, _ in describe()]
    assert all(doc.strip() for _, _, doc in describe())
    assert len(keys) == len(set(keys)) == 4 + sum(len(dataclasses.fields(c)) for c in STAGES.values())
    assert set(RENAMED.values()) <= set(keys) and not set(RENAMED) & set(keys)


def test_the_paper_preset_turns_the_additions_off() -> None:
    paper = QueryConfig.paper()
    assert paper.question_fallback and not paper.retrieve.hybrid and paper.answer.passages == 0
    assert paper.rounds == 3 and paper.k_chunks == 5 and QueryConfig.from_dict(PAPER) == paper


def test_the_reference_page_is_generated_from_the_fields() -> None:
    from t2rag.cli.settings import config_reference

    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert page == config_reference(markdown=True), "regenerate: t2rag config --markdown > docs/configuration.md"
