"""The command line: exit codes, one-line errors, index/inspect/delete round trip."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from t2rag.cli import main
from t2rag.types import Chunk


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = [{"title": "Alpha", "text": "Alpha is a town in Borduria."}, {"title": "Beta", "text": "Beta flows."}]
    (tmp_path / "corpus.json").write_text(json.dumps(docs))
    openie = {"docs": [
        {"idx": Chunk.make("Alpha", docs[0]["text"]).id, "passage": "Alpha\n" + docs[0]["text"],
         "extracted_entities": ["Alpha", "Borduria"], "extracted_triples": [["Alpha", "is a town in", "Borduria"]]},
        {"idx": Chunk.make("Beta", "Beta flows.").id, "passage": "Beta\nBeta flows.",
         "extracted_entities": ["Beta"], "extracted_triples": [["Beta", "is", "river"]]},
    ]}
    (tmp_path / "openie.json").write_text(json.dumps(openie))
    return tmp_path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_index_inspect_delete(corpus: Path, capsys: pytest.CaptureFixture[str], location: str | Path) -> None:
    ix = str(corpus / "ix") if isinstance(location, Path) else location  # a directory, then a database
    code, out, _ = run(["index", ix, str(corpus / "corpus.json"), "--embedder", "hashing",
                        "--openie-from", str(corpus / "openie.json"), "--llm", "none", "-q"], capsys)
    assert code == 0 and "2 new chunks" in out and "2 triples" in out
    code, out, _ = run(["inspect", ix], capsys)
    assert code == 0 and "(Alpha | is a town in | Borduria)" in out and "hashing:256" in out
    code, out, _ = run(["inspect", ix, "--json"], capsys)
    assert json.loads(out)["counts"]["propositions"] == 2
    code, out, _ = run(["export-openie", ix, str(corpus / "out.json")], capsys)
    assert code == 0 and json.loads((corpus / "out.json").read_text())["docs"]
    code, out, _ = run(["delete", ix, "--doc", "Alpha"], capsys)
    assert code == 0 and "deleted 1 documents (1 chunks, 1 propositions)" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["inspect", "{tmp}/missing"], "no T2RAG index"),
        (["index", "{tmp}/ix", "{tmp}/nope.json"], "corpus not found"),
        (["index", "{tmp}/ix", "{tmp}/corpus.json", "--llm", "gpt5"], "unknown LLM 'gpt5'"),
        (["index", "{tmp}/ix", "{tmp}/corpus.json", "--embedder", "bogus"], "unknown embedder"),
        (["index", "{tmp}/ix", "{tmp}/corpus.json", "--openie-from", "{tmp}/corpus.json",
          "--llm", "none"], "'docs' list"),
        (["index", "{tmp}/ix", "{tmp}/corpus.json", "--chunk-size", "2"], "bad chunk config"),
    ],
)
def test_user_errors_exit_1_with_one_line(
    corpus: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = run([a.replace("{tmp}", str(corpus)) for a in argv], capsys)
    assert code == 1
    lines = [line for line in err.splitlines() if line.startswith("t2rag:")]
    assert len(lines) == 1 and message in lines[0], err


def test_the_old_index_spelling_still_works_with_a_note(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ix = str(corpus / "old")
    code, out, err = run(["index", str(corpus / "corpus.json"), "--index", ix, "--embedder", "hashing",
                          "--openie-from", str(corpus / "openie.json"), "--llm", "none", "-q"], capsys)
    assert code == 0 and "2 new chunks" in out and "write `t2rag index INDEX CORPUS`" in err
    code, _, err = run(["index", ix, "--embedder", "hashing", "--llm", "none"], capsys)
    assert code == 2 and "t2rag index INDEX CORPUS" in err  # the corpus is missing
    code, _, err = run(["index", ix, str(corpus / "corpus.json"), "--index", ix], capsys)
    assert code == 2 and "name the index once" in err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["index"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["frobnicate"])
    assert e.value.code == 2


def test_console_script_help() -> None:
    r = subprocess.run([sys.executable, "-m", "t2rag.cli", "--help"], capture_output=True, text=True, check=True)
    assert "index" in r.stdout and "inspect" in r.stdout


def test_demo_and_config_commands_are_wired(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``demo`` indexes the bundled corpus with the model it is given: the scripted double has no
    extraction reply, which ends in one line naming what it lacked; ``config`` lists the settings."""
    code, out, err = run(["demo", "--llm", "scripted", "--embedder", "hashing", "--index", str(tmp_path / "d"),
                          "--brief"], capsys)
    assert code == 1 and "[1/3] loaded LLM scripted" in out
    assert err.count("\n") == 1 and "scripted LLM has no reply" in err
    code, out, _ = run(["config"], capsys)
    assert code == 0 and "answer.passages" in out
