"""Documents in, passages out, on the real server: a folder of a 150,000-character Markdown handbook, a PDF and an
HTML page indexed with `hippo index FOLDER`, questions answered from each, exact updates by document, --prune,
delete --document, and bad input named and counted."""

import json
import uuid

import pytest
from click.testing import CliRunner

from hippo_neo4j import HippoRAG
from hippo_neo4j.cli import cli
from hippo_neo4j.documents import read_folder

from .conftest import DATASETS

fpdf = pytest.importorskip("fpdf")

# questions of musique_train's decompositions, each answered by one paragraph: (question, paragraph title)
HANDBOOK_Q = ("What company published Journal of Psychotherapy Integration?", "Journal of Psychotherapy Integration")
PDF_Q = ("Where did Hayek acquire his doctorates?", "Friedrich Hayek")
HTML_Q = ("What river does Tekezé River turn into?", "Tekezé River")


def _paragraphs() -> list[dict]:
    seen, out = set(), []
    for question in json.loads((DATASETS / "musique_train" / "questions.json").read_text()):
        for p in question["paragraphs"]:
            if (p["title"], p["paragraph_text"]) not in seen:
                seen.add((p["title"], p["paragraph_text"]))
                out.append({"title": p["title"], "text": p["paragraph_text"]})
    return out


def _pdf(path, title, paragraphs) -> None:
    pdf = fpdf.FPDF()
    pdf.set_title(title)
    pdf.set_font("Helvetica", size=11)
    for p in paragraphs:
        pdf.add_page()
        pdf.multi_cell(0, 6, p["title"] + "\n" + p["text"])
    pdf.output(str(path))


def _write_folder(folder, paragraphs, *, drop_section: str | None = None, pdf: bool = True) -> dict:
    """The handbook (Markdown, at least 200 sections and 150,000 characters, the handbook question's paragraph
    fifth from the end), the PDF (one paragraph a page) and the HTML page (navigation, a script, a footer around
    its paragraphs); ``drop_section`` leaves that section out of the handbook, ``pdf`` False leaves the PDF out."""
    by_title = {p["title"]: p for p in paragraphs}
    special = [by_title[t] for _, t in (HANDBOOK_Q, PDF_Q, HTML_Q)]
    latin = [p for p in paragraphs if p not in special and p["text"].isascii() and p["title"].isascii()]
    fill = [p for p in paragraphs if p not in special and p not in latin[:4]]
    hand, chars = [], 0
    for p in fill:
        if len(hand) >= 200 and chars >= 150_000:
            break
        hand.append(p)
        chars += len(p["title"]) + len(p["text"]) + 6
    hand.insert(len(hand) - 4, special[0])
    lines = ["# Field handbook", ""]
    for p in hand:
        if p["title"] != drop_section:
            lines += [f"## {p['title']}", "", p["text"], ""]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "handbook.md").write_text("\n".join(lines), encoding="utf-8")
    if pdf:
        _pdf(folder / "report.pdf", "Field report", [latin[0], special[1], latin[1]])
    html = ("<html><head><title>Station notes</title><script>var menu = 'Home';</script><style>p {}</style></head>"
            "<body><nav>Home | About | Contact</nav><main>"
            + "".join(f"<h2>{p['title']}</h2><p>{p['text']}</p>" for p in (latin[2], special[2], latin[3]))
            + "</main><footer>Station footer, all rights reserved</footer></body></html>")
    (folder / "notes.html").write_text(html, encoding="utf-8")
    return {"handbook_sections": len(hand), "handbook_chars": len("\n".join(lines)), "dropped": hand[10]["title"]}


@pytest.fixture
def env(connection):
    ns = f"t-docs-{uuid.uuid4().hex[:8]}"
    values = {"HIPPO_NEO4J_URI": connection.uri, "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value(),
              "HIPPO_NAMESPACE": ns}
    made = [ns]
    yield values, made
    for name in made:
        with HippoRAG(connection, namespace=name) as memory:
            memory.drop_namespace()


def _index(env_values, folder, *more) -> dict:
    out = CliRunner().invoke(cli, ["index", str(folder), "--extractor", "offline", "--json", *more], env=env_values)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def _stats(env_values) -> dict:
    out = CliRunner().invoke(cli, ["stats", "--json"], env=env_values)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_a_folder_of_documents_is_indexed_answered_and_pruned_exactly(env, connection, tmp_path):
    values, made = env
    paragraphs = _paragraphs()
    folder = tmp_path / "docs"
    shape = _write_folder(folder, paragraphs)
    assert shape["handbook_sections"] >= 200 and shape["handbook_chars"] >= 150_000
    report = _index(values, folder)
    assert report["documents"] == 3 and report["not_indexed"] == 0 and report["passages"] >= 40
    stats = _stats(values)
    assert stats["documents"] == 3 and stats["passages"] == report["passages"]

    with HippoRAG(connection, namespace=values["HIPPO_NAMESPACE"]) as memory:
        for question, title in (HANDBOOK_Q, PDF_Q, HTML_Q):
            top = memory.query(question, top_k=3).passages
            holding = [p for p in top if p.title == title or p.text.startswith(title)]
            assert holding, (question, [p.title for p in top])
        # each passage names its document and heading, and the documents read back in order
        found = memory.query(HANDBOOK_Q[0], top_k=1).passages[0]
        assert found.metadata["document"] == "handbook.md" and found.metadata["format"] == "markdown"
        assert found.title == HANDBOOK_Q[1]
        records = memory.driver.execute_query(
            "MATCH (d:Document {ns: $ns, id: 'handbook.md'})<-[r:FROM_DOCUMENT]-(p:Passage) "
            "OPTIONAL MATCH (p)-[:NEXT_PASSAGE]->(n:Passage) RETURN r.index AS i, r.heading AS heading, "
            "n IS NOT NULL AS next ORDER BY i",
            ns=memory.namespace, database_=memory.database).records
        assert [r["i"] for r in records] == list(range(len(records))) and len(records) >= 200
        assert [r["next"] for r in records] == [True] * (len(records) - 1) + [False]
        assert HANDBOOK_Q[1] in [r["heading"] for r in records]

    # the same folder again: nothing to do
    again = _index(values, folder)
    assert again["documents_unchanged"] == 3 and again["indexed"] == 0 and again["passages_removed"] == 0

    # a section removed from the handbook, the PDF deleted: --prune leaves what a fresh index of the folder holds
    _write_folder(folder, paragraphs, drop_section=shape["dropped"], pdf=False)
    (folder / "report.pdf").unlink()
    pruned = _index(values, folder, "--prune")
    assert pruned["documents_removed"] == 1 and pruned["passages_removed"] == 1 + 3
    assert pruned["indexed"] == 0  # every other section kept its passage
    after = _stats(values)
    fresh_values = dict(values, HIPPO_NAMESPACE=f"t-docs-fresh-{uuid.uuid4().hex[:8]}")
    made.append(fresh_values["HIPPO_NAMESPACE"])
    _index(fresh_values, folder)
    fresh = _stats(fresh_values)
    keys = ("documents", "passages", "phrases", "mention_edges", "relation_edges", "facts")
    assert after["documents"] == 2 and {k: after[k] for k in keys} == {k: fresh[k] for k in keys}


def test_delete_document_removes_exactly_its_contribution(env, connection, tmp_path):
    values, made = env
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# Alpha\n\n## One\n\nAda Lovelace wrote notes on the Analytical Engine.\n\n"
                                 "## Two\n\nCharles Babbage designed the Analytical Engine.\n", encoding="utf-8")
    (folder / "sub" / "b.txt").write_text("Grace Hopper wrote the first compiler.\n", encoding="utf-8")
    _index(values, folder)
    before = _stats(values)
    out = CliRunner().invoke(cli, ["delete", "--document", "a.md", "--json"], env=values)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout) == {"requested": 2, "deleted": 2, "missing": []}
    only_b = dict(values, HIPPO_NAMESPACE=f"t-docs-b-{uuid.uuid4().hex[:8]}")
    made.append(only_b["HIPPO_NAMESPACE"])
    (folder / "a.md").unlink()
    _index(only_b, folder)
    after, fresh = _stats(values), _stats(only_b)
    assert before["documents"] == 2 and after["documents"] == 1
    keys = ("passages", "phrases", "mention_edges", "relation_edges", "facts", "documents")
    assert {k: after[k] for k in keys} == {k: fresh[k] for k in keys}
    out = CliRunner().invoke(cli, ["delete", "--document", "a.md", "--json"], env=values)  # idempotent
    assert out.exit_code == 0 and json.loads(out.stdout)["missing"] == ["a.md"]
    with HippoRAG(connection, namespace=values["HIPPO_NAMESPACE"]) as memory:
        assert [d["id"] for d in memory.documents()] == ["sub/b.txt"]


def test_bad_documents_are_named_counted_and_the_rest_indexed(env, tmp_path):
    values, _ = env
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nAda Lovelace wrote notes.\n", encoding="utf-8")
    (folder / "binary.md").write_bytes(b"\x00\x01\x02PK\x03\x04" * 200)
    (folder / "latin.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (folder / "empty.txt").write_text("  \n", encoding="utf-8")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    out = CliRunner().invoke(cli, ["index", str(folder), "--extractor", "offline", "--json"], env=values)
    assert out.exit_code == 1, out.output
    report = json.loads(out.stdout)
    reasons = {s["item"]: s["reason"] for s in report["skipped"]}
    assert set(reasons) == {"binary.md", "latin.txt", "empty.txt", "broken.pdf"}
    assert "binary" in reasons["binary.md"] and "UTF-8" in reasons["latin.txt"] and "empty" in reasons["empty.txt"]
    assert report["documents"] == 1 and report["indexed"] == 1 and report["not_indexed"] == 4
    empty = tmp_path / "nothing"
    empty.mkdir()
    out = CliRunner().invoke(cli, ["index", str(empty), "--extractor", "offline"], env=values)
    assert out.exit_code == 1 and "no document under" in out.output
    docs, skipped = read_folder(folder)
    assert [d.id for d in docs] == ["good.md"] and len(skipped) == 4


class _RefusingExtractor:
    """The offline extractor, except that it gives no extraction for a passage holding ``refuse`` (as an LLM
    extractor does for a passage it could not read), until ``refuse`` is cleared."""

    def __init__(self, refuse: str) -> None:
        from hippo_neo4j.extract import make_extractor

        self.real = make_extractor("offline", cache=False)
        self.refuse = refuse

    def extract(self, passages):
        got = self.real.extract(passages)
        return [None if self.refuse and self.refuse in p.text else e for p, e in zip(passages, got)]

    def query_entities(self, text):
        return self.real.query_entities(text)


def test_a_document_with_a_failed_passage_is_cut_again_next_run(memory_factory, tmp_path):
    """A passage whose extraction failed is not indexed; its document is linked to the passages that were and is
    not marked as indexed, so the next run indexes the missing passage and links the whole document in order."""
    folder = tmp_path / "docs"
    folder.mkdir()
    sections = [("Alpha", "Alpha Harbour lies on the Nerin coast of Estland."),
                ("Beta", "Beta Tower was built by Ida Marsh in 1911, in Alpha Harbour."),
                ("Gamma", "Gamma Bridge crosses the Nerin River near Beta Tower.")]
    (folder / "coast.md").write_text("# Coast\n\n" + "".join(f"## {t}\n\n{x}\n\n" for t, x in sections))
    (folder / "other.md").write_text("# Other\n\n## Delta\n\nDelta Farm keeps goats on the Ober plain.\n")
    extractor = _RefusingExtractor("Ida Marsh")
    memory = memory_factory(extractor=extractor)
    documents = read_folder(folder)[0]

    first = memory.index_documents(documents, passage_tokens=24)
    assert len(first.extraction_failures) == 1
    held = {d["id"]: d for d in memory.documents()}
    assert held["coast.md"]["hash"] is None and held["other.md"]["hash"] is not None
    assert held["coast.md"]["passages"] == len(sections) - 1

    extractor.refuse = ""
    second = memory.index_documents(documents, passage_tokens=24)
    assert second.documents_unchanged == 1 and second.indexed == 1 and not second.extraction_failures
    held = {d["id"]: d for d in memory.documents()}
    assert held["coast.md"]["hash"] is not None and held["coast.md"]["passages"] == len(sections)
    chain = memory.driver.execute_query(
        "MATCH (d:Document {ns: $ns, id: 'coast.md'})<-[f:FROM_DOCUMENT]-(p:Passage) "
        "RETURN f.index AS i, p.text AS text, COUNT { (p)-[:NEXT_PASSAGE]->() } AS next ORDER BY i",
        ns=memory.namespace).records
    assert [r["text"] for r in chain] == [x for _, x in sections]
    assert [r["next"] for r in chain] == [1, 1, 0]
    assert memory.index_documents(documents, passage_tokens=24).documents_unchanged == 2


def test_a_document_cut_by_another_version_is_cut_again(memory_factory, tmp_path):
    """A document whose node records another cut version (or none: indexed before it was recorded) is cut again
    though its bytes are the same; its passages whose text the new cut keeps keep their ids, the others are
    replaced exactly."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "plain.md").write_text("# Plain\n\n## One\n\nHarbour Bay lies in Estland.\n")
    (folder / "marked.md").write_text("# Marked\n\n## Two\n\nThe [Nerin River](https://example.com/nerin) is *long*.\n")
    memory = memory_factory(extractor=None)
    documents = read_folder(folder)[0]
    memory.index_documents(documents)
    before = {r["id"] for r in memory.driver.execute_query(
        "MATCH (p:Passage {ns: $ns}) RETURN p.id AS id", ns=memory.namespace).records}
    # as an older version left them: marks in the text, no cut version on the node
    memory.driver.execute_query(
        "MATCH (d:Document {ns: $ns}) REMOVE d.cut WITH d MATCH (p:Passage)-[:FROM_DOCUMENT]->(d {id: 'marked.md'}) "
        "SET p.text = 'The [Nerin River](https://example.com/nerin) is *long*.', p.id = 'marked.md#old'",
        ns=memory.namespace)
    report = memory.index_documents(documents)
    assert report.documents_unchanged == 0
    assert report.unchanged == 1 and report.indexed == 1 and report.passages_removed == 1
    after = {r["id"]: r["text"] for r in memory.driver.execute_query(
        "MATCH (p:Passage {ns: $ns}) RETURN p.id AS id, p.text AS text", ns=memory.namespace).records}
    assert set(after) == before and after[next(i for i in before if i.startswith("marked.md"))] == \
        "The Nerin River is long."
    assert memory.index_documents(documents).documents_unchanged == 2
