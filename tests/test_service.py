"""The REST API through the real HTTP stack (uvicorn on a free loopback port), scripted LLM."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from conftest import ANSWER_PROMPT
from t2rag.embed.hashing import HashingEmbedder
from t2rag.index.builder import TripleIndex
from t2rag.index.corpus import Document
from t2rag.index.importer import Extraction
from t2rag.llm.scripted import ScriptedLLM
from t2rag.service.app import Settings, create_app
from t2rag.service.served import Service
from t2rag.types import Message, Triple

DOCS = [("Alpha", "Alpha is a town in Borduria.", [("Alpha", "is a town in", "Borduria")]),
        ("Beta", "Beta is a river in Syldavia.", [("Beta", "is a river in", "Syldavia")])]


def replies(delay: float = 0.0) -> ScriptedLLM:
    def resolve(messages: list[Message]) -> str:
        time.sleep(delay)
        text = messages[-1]["content"]
        value = "Gamma" if "Gamma" in text.split("Retrieved facts:")[1] else "Alpha"
        return json.dumps({"bindings": [{"placeholder": "?answer", "value": value, "evidence": [1]}]})

    def answer(messages: list[Message]) -> str:
        time.sleep(delay)
        facts = messages[-1]["content"].split("Notes from the search:")[1].split("Question:")[0]
        return json.dumps({"reasoning": "", "answer": "Gamma" if "Gamma" in facts else "Alpha"})

    return ScriptedLLM(rules=[
        ("Placeholders to fill", resolve),
        (ANSWER_PROMPT, answer),
        ("Question:", {"triples": [["?answer", "is a town in", "Borduria"]]}),
        ("(?i)entities", {"entities": ["Gamma", "Borduria"]}),
        ("(?i)triples", {"triples": [["Gamma", "is a town in", "Borduria"]]}),
    ])


@pytest.fixture
def index(tmp_path: Path) -> Path:
    imported = {f"{t}\n{x}": Extraction([], [Triple(*tr) for tr in trs]) for t, x, trs in DOCS}
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add([Document(t, x) for t, x, _ in DOCS], imported=imported)
    return tmp_path / "ix"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(service: Service, settings: Settings | None = None) -> Iterator[str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(service, settings), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 10
    while not server.started and time.time() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        service.close()


def test_ask_stream_index_and_viewer(index: Path) -> None:
    with serving(Service(index, replies())) as url:
        assert httpx.get(f"{url}/health").json()["status"] == "ok"
        # the one-triple plan would be a last-hop read; this test shows a resolve call's output
        q = {"question": "Which town is in Borduria?", "config": {"answer.read_last_hop": False}}
        a = httpx.post(f"{url}/v1/ask", json=q, timeout=30).json()
        assert a["answer"] == "Alpha" and a["termination"] == "complete" and a["resolved"]
        with httpx.stream("POST", f"{url}/v1/ask/stream", json=q) as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            kinds = [line.split(": ", 1)[1] for line in r.iter_lines() if line.startswith("event: ")]
        assert kinds == ["decomposition", "round", "evidence", "bindings", "answer", "done"]
        info = httpx.get(f"{url}/v1/index").json()
        assert info["counts"]["chunks"] == 2 and info["model"] == "scripted"
        facts = httpx.get(f"{url}/v1/search", params={"q": "town in Borduria", "k": 1}).json()["facts"]
        assert facts[0]["sources"][0]["title"] == "Alpha"
        assert "T2RAG" in httpx.get(url).text and httpx.get(f"{url}/openapi.json").json()["paths"]["/v1/ask"]


def test_bad_requests_get_one_line_and_no_stack_trace(index: Path) -> None:
    with serving(Service(index, replies()), Settings(max_body=20_000, max_question=100)) as url:
        as_json = {"content-type": "application/json"}
        cases = [
            (httpx.post(f"{url}/v1/ask", content=b"{not json", headers=as_json), (400, 422)),
            (httpx.post(f"{url}/v1/ask", json={"question": "   "}), (422,)),
            (httpx.post(f"{url}/v1/ask", json={"question": "x" * 101}), (422,)),
            (httpx.post(f"{url}/v1/ask", json={"question": "x" * 25_000}), (413,)),
            (httpx.post(f"{url}/v1/ask", json={"question": "q?", "config": {"roundz": 2}}), (422,)),
            (httpx.post(f"{url}/v1/ask", json={"question": "q?", "config": {"decompose.examples": 2.5}}), (422,)),
            (httpx.post(f"{url}/v1/ask/stream", content=b'{"question": "q?", "config": {"rounds": 1e400}}',
                        headers=as_json), (422,)),
            (httpx.post(f"{url}/v1/ask", json={"question": "q?",
                                               "config": {"retrieve.top_m": 2.5, "decompose.grounded": True}}), (422,)),
            (httpx.post(f"{url}/v1/ask", json={"question": "q?", "config": {"retrieve": {"hybrid": "yes"}}}), (422,)),
            (httpx.get(f"{url}/v1/jobs/job-99"), (404,)),
            (httpx.post(f"{url}/v1/ask", content=b"[" * 5_000, headers=as_json), (400, 422)),
        ]
        for r, status in cases:
            body = r.json()
            assert r.status_code in status and set(body) == {"error"}, (status, r.text)
            assert "Traceback" not in r.text and "\n" not in body["error"]


def test_bearer_token_is_required_when_set(index: Path) -> None:
    with serving(Service(index, replies()), Settings(token="s3cret")) as url:
        q = {"question": "Which town is in Borduria?"}
        assert httpx.post(f"{url}/v1/ask", json=q).status_code == 401
        assert httpx.post(f"{url}/v1/ask", json=q, headers={"Authorization": "Bearer nope"}).status_code == 401
        ok = httpx.post(f"{url}/v1/ask", json=q, headers={"Authorization": "Bearer s3cret"}, timeout=30)
        assert ok.status_code == 200 and httpx.get(f"{url}/health").status_code == 200
        for path in ("/docs", "/openapi.json"):  # the schema is not public when a token guards the API
            assert httpx.get(f"{url}{path}").status_code == 404
        spaces = {"documents": [{"title": "   ", "text": "x"}]}
        auth = {"Authorization": "Bearer s3cret"}
        assert httpx.post(f"{url}/v1/documents", json=spaces, headers=auth).status_code == 422


def test_a_blank_token_is_refused(index: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    from t2rag.cli import main

    monkeypatch.setenv("T2RAG_API_TOKEN", "  ")
    assert main(["serve", str(index), "--llm", "scripted"]) == 1
    assert "blank" in capsys.readouterr().err


def test_full_queue_answers_429_and_slow_questions_504(index: Path) -> None:
    service = Service(index, replies(delay=1.0), slots=1, max_waiting=0)
    with serving(service, Settings(timeout_s=0.3)) as url:
        results: list[int] = []

        def one() -> None:
            results.append(httpx.post(f"{url}/v1/ask", json={"question": "Which town?"}, timeout=30).status_code)

        threads = [threading.Thread(target=one) for _ in range(3)]
        for t in threads:
            t.start()
            time.sleep(0.05)
        for t in threads:
            t.join()
        assert sorted(results) == [429, 429, 504]
        # the timed-out question stops at its next step (the answer call's 1 s delay, not more
        # rounds) and frees its slot; no answer of it is logged
        deadline = time.time() + 5
        while service._admitted and time.time() < deadline:
            time.sleep(0.05)
        assert service._admitted == 0 and service.log is not None and service.log.entries() == []


def test_added_document_is_answered_from_and_deleted(index: Path) -> None:
    with serving(Service(index, replies())) as url:
        job = httpx.post(f"{url}/v1/documents", json={"documents": [{"title": "Gamma", "text": "Gamma is a town in "
                                                                     "Borduria, on the coast."}]})
        assert job.status_code == 202
        status = job.json()
        for _ in range(200):
            status = httpx.get(f"{url}/v1/jobs/{status['id']}").json()
            if status["status"] in ("done", "failed"):
                break
            time.sleep(0.05)
        assert status["status"] == "done" and status["result"]["new_chunks"] == 1, status
        a = httpx.post(f"{url}/v1/ask", json={"question": "Which coastal town is in Borduria?"}, timeout=30).json()
        assert "Gamma" in [c["title"] for c in a["answer_chunks"]]
        gone = httpx.request("DELETE", f"{url}/v1/documents", json={"titles": ["Gamma"]}).json()
        for _ in range(200):
            gone = httpx.get(f"{url}/v1/jobs/{gone['id']}").json()
            if gone["status"] in ("done", "failed"):
                break
            time.sleep(0.05)
        assert gone["status"] == "done" and httpx.get(f"{url}/v1/index").json()["counts"]["chunks"] == 2


def test_non_loopback_bind_needs_a_token(index: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    from t2rag.cli import main

    monkeypatch.delenv("T2RAG_API_TOKEN", raising=False)
    code = main(["serve", str(index), "--host", "0.0.0.0", "--llm", "scripted"])
    assert code == 1 and "needs a bearer token" in capsys.readouterr().err


def test_admission_bounds_the_wait_beyond_the_thread_pool(index: Path) -> None:
    service = Service(index, replies(delay=1.0), slots=1, max_waiting=2)
    with serving(service, Settings(timeout_s=30)) as url:
        results: list[int] = []
        lock = threading.Lock()

        def one(i: int) -> None:
            path = "/v1/ask/stream" if i % 2 else "/v1/ask"
            status = httpx.post(f"{url}{path}", json={"question": "Which town?"}, timeout=60).status_code
            with lock:
                results.append(status)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results) == [200] * 3 + [429] * 7
        assert httpx.post(f"{url}/v1/ask", json={"question": "Which town?"}, timeout=30).status_code == 200


def test_document_jobs_do_not_leak_engines_or_files(index: Path) -> None:
    import os

    def open_files() -> int:
        return len(os.listdir("/proc/self/fd"))

    def wait(url: str, job: dict[str, Any]) -> dict[str, Any]:
        for _ in range(400):
            job = httpx.get(f"{url}/v1/jobs/{job['id']}").json()
            if job["status"] in ("done", "failed"):
                return job
            time.sleep(0.02)
        raise AssertionError(job)

    with serving(Service(index, replies())) as url:
        counts = []
        for i in range(30):
            job = httpx.post(f"{url}/v1/documents",
                             json={"documents": [{"title": f"T{i}", "text": f"T{i} is a town in Borduria."}]}).json()
            assert wait(url, job)["status"] == "done"
            assert httpx.get(f"{url}/v1/search", params={"q": f"T{i} town"}).status_code == 200
            counts.append(open_files())
        assert counts[-1] <= counts[4] + 2, counts  # flat after warm-up: no engine kept per job
        titles = {s["title"] for h in httpx.get(f"{url}/v1/search", params={"q": "T29 town"}).json()["facts"]
                  for s in h["sources"]}
        assert "T29" in titles  # the reading engine sees the last job's document


KILLED_SERVER = """
import sys, time
sys.path.insert(0, {tests!r})
from conftest import fake_openie_reply
from t2rag.index.corpus import Document
from t2rag.llm.scripted import ScriptedLLM
from t2rag.service.served import Service

def slow(messages):
    time.sleep(0.05)
    return fake_openie_reply(messages)

service = Service({index!r}, ScriptedLLM(default=slow))
docs = [Document(f"Town{{i}}", f"Town{{i}} lies in Region{{i}}. Founded in {{1800 + i}} by Person{{i}}.")
        for i in range(60)]
print(service.submit("add", docs).id, flush=True)
time.sleep(600)
"""


def test_a_killed_servers_jobs_are_resumed_with_their_ids(index: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    from conftest import openie_llm

    script = KILLED_SERVER.format(tests=str(Path(__file__).parent), index=str(index))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    job_id = proc.stdout.readline().strip() if proc.stdout else ""
    time.sleep(1.5)  # part of the job is done
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert job_id.startswith("job-")
    service = Service(index, openie_llm())  # the restarted server
    try:
        for _ in range(400):
            job = service.job(job_id)
            if job is not None and job.status in ("done", "failed"):
                break
            time.sleep(0.05)
        assert job is not None and job.status == "done", job
        with TripleIndex.open(index) as ix:
            c = ix.store.counts()
            assert c["documents"] == 62 and c["chunks_extracted"] == c["chunks"]
            assert ix.store.counts()["propositions_embedded"] == c["propositions"]
            assert not ix.store.chunks_without_vectors()
        later = service.submit("delete", ["Town1"])
        assert int(later.id.split("-")[1]) > int(job_id.split("-")[1])  # ids are never reused
    finally:
        service.close()


def test_a_foreign_host_header_is_refused(index: Path) -> None:
    from t2rag.cli.serve import allowed_hosts

    with serving(Service(index, replies())) as url:
        assert httpx.get(f"{url}/v1/index").status_code == 200
        assert httpx.get(f"{url}/v1/index", headers={"Host": "localhost"}).status_code == 200
        r = httpx.get(f"{url}/v1/index", headers={"Host": "attacker.example"})
        assert r.status_code == 400
    assert allowed_hosts("127.0.0.1", []) == ("127.0.0.1", "localhost", "::1", "[::1]")
    assert allowed_hosts("0.0.0.0", []) == ("*",) and allowed_hosts("0.0.0.0", ["rag.lan"]) == ("rag.lan",)
    assert allowed_hosts("10.1.2.3", ["rag.lan"]) == ("10.1.2.3", "rag.lan")


def test_connections_that_never_finish_a_request_are_closed(index: Path) -> None:
    from t2rag.service.deadline import with_read_timeout

    port = free_port()
    service = Service(index, replies())
    server = uvicorn.Server(uvicorn.Config(create_app(service, Settings()), host="127.0.0.1", port=port,
                                           log_level="warning", http=with_read_timeout(1.0)))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        slow = []
        for i in range(20):  # half a header, or a body that never comes
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /v1/index HTTP/1.1\r\nHost: 127.0.0.1\r\n" if i % 2 else
                      b"POST /v1/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
            s.settimeout(5)
            slow.append(s)
        t0 = time.time()
        assert all(s.recv(100) == b"" for s in slow)  # closed by the server
        assert time.time() - t0 < 4
        assert httpx.get(f"http://127.0.0.1:{port}/v1/index").status_code == 200  # whole requests still served
    finally:
        for s in slow:
            s.close()
        server.should_exit = True
        thread.join(10)
        service.close()


def test_the_openai_sdk_chats_with_t2rag_streaming_and_not(index: Path) -> None:
    import openai

    with serving(Service(index, replies()), Settings(token="s3cret")) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="s3cret", max_retries=0)
        assert [m.id for m in client.models.list()] == ["t2rag"]
        msgs: Any = [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "Which town is in Borduria?"}]
        r = client.chat.completions.create(model="t2rag", messages=msgs)
        assert r.choices[0].message.content.startswith("Alpha\n\nSources: Alpha")  # type: ignore[union-attr]
        assert r.usage is not None and r.usage.total_tokens > 0
        assert (r.model_extra or {})["t2rag"]["termination"]
        text, events = "", []
        for chunk in client.chat.completions.create(model="t2rag", messages=msgs, stream=True):
            text += (chunk.choices[0].delta.content or "") if chunk.choices else ""
            events += [chunk.model_extra["t2rag_event"]["kind"]] if (chunk.model_extra or {}).get("t2rag_event") else []
        assert text.startswith("Alpha") and "decomposition" in events and "answer" in events
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=f"{url}/v1", api_key="wrong", max_retries=0).models.list()
        with pytest.raises(openai.UnprocessableEntityError):
            client.chat.completions.create(model="t2rag", messages=[{"role": "user", "content": "  "}])


def test_an_ollama_client_chats_with_t2rag(index: Path) -> None:
    with serving(Service(index, replies())) as url:
        assert httpx.get(f"{url}/api/version").json()["version"]
        assert httpx.get(f"{url}/api/tags").json()["models"][0]["name"] == "t2rag:latest"
        q = {"model": "t2rag:latest", "messages": [{"role": "user", "content": "Which town is in Borduria?"}]}
        lines = [json.loads(x) for x in httpx.post(f"{url}/api/chat", json=q, timeout=30).text.splitlines()]
        assert lines[-1]["done"] and lines[-1]["message"]["content"].startswith("Alpha")
        assert all(not x["done"] for x in lines[:-1]) and lines[0]["t2rag_event"]["kind"] == "decomposition"
        one = httpx.post(f"{url}/api/chat", json={**q, "stream": False}, timeout=30).json()
        assert one["done"] and one["message"]["content"].startswith("Alpha") and one["eval_count"] > 0


def test_a_job_waits_for_another_writer_instead_of_failing(index: Path) -> None:
    service = Service(index, replies())
    try:
        with TripleIndex.create(index):  # `t2rag index` writing from another process
            job = service.submit("delete", ["Beta"])
            time.sleep(0.6)
            assert service.job(job.id).status == "running"  # type: ignore[union-attr]
        for _ in range(200):
            if service.job(job.id).status in ("done", "failed"):  # type: ignore[union-attr]
                break
            time.sleep(0.05)
        assert service.job(job.id).status == "done"  # type: ignore[union-attr]
    finally:
        service.close()


def test_the_job_queue_is_bounded(index: Path) -> None:
    def slow(messages: list[Message]) -> str:
        time.sleep(0.3)
        return json.dumps({"entities": []} if "ntities" in messages[-1]["content"] else {"triples": []})

    with serving(Service(index, ScriptedLLM(default=slow), max_jobs=2)) as url:
        docs = [{"title": f"T{i}", "text": f"T{i} is a town."} for i in range(3)]
        codes = [httpx.post(f"{url}/v1/documents", json={"documents": [d]}).status_code for d in docs]
        assert codes == [202, 202, 429]


def test_a_file_upload_is_read_like_the_index_command_reads_it(index: Path, tmp_path: Path) -> None:
    from test_documents import _pdf

    _pdf(tmp_path / "report.pdf", ["Delta is a lake.", "Epsilon is a bridge over the Delta."])
    with serving(Service(index, replies()), Settings(max_upload=5_000)) as url:
        job = httpx.post(f"{url}/v1/documents/file", params={"name": "report.pdf"},
                         content=(tmp_path / "report.pdf").read_bytes()).json()
        for _ in range(200):
            job = httpx.get(f"{url}/v1/jobs/{job['id']}").json()
            if job["status"] in ("done", "failed"):
                break
            time.sleep(0.05)
        assert job["status"] == "done" and job["result"]["new_chunks"] == 2  # page by page
        docs = {d["title"]: d for d in httpx.get(f"{url}/v1/documents").json()["documents"]}
        assert docs["report"]["pages"] == 2 and docs["report"]["source"] == "report.pdf"
        bad = httpx.post(f"{url}/v1/documents/file", params={"name": "data.csv"}, content=b"a,b")
        assert bad.status_code == 422 and "T2RAG reads" in bad.json()["error"]
        empty = httpx.post(f"{url}/v1/documents/file", params={"name": "blank.txt"}, content=b"  ")
        assert empty.status_code == 422 and "no text" in empty.json()["error"]
        big = httpx.post(f"{url}/v1/documents/file", params={"name": "big.txt"}, content=b"x" * 6_000)
        assert big.status_code == 413
