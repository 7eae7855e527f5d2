"""Documents in, passages out: the readers (Markdown, text, HTML, PDF, bad input) and the splitter.

No Neo4j: these tests request none of conftest's server fixtures.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from hippo_neo4j.documents import (
    SUPPORTED_SUFFIXES,
    Document,
    Section,
    UnreadableDocument,
    document_passages,
    heading_of,
    passage_id,
    passage_ids,
    passages_of,
    read_document,
    read_folder,
    section_title,
    token_counter,
)
from hippo_neo4j.errors import HippoError

MODELS = Path.home() / ".cache" / "hippo-neo4j" / "models"


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def make_pdf(path: Path, pages: list[str], title: str | None = None, user_password: str | None = None,
             owner_password: str | None = None) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    if title is not None:
        pdf.set_title(title)
    if owner_password is not None:
        pdf.set_encryption(owner_password=owner_password, user_password=user_password)
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 8, text)
        else:  # a page with a drawing and no text layer, as a scan is to a reader
            pdf.rect(20, 20, 100, 60, style="F")
    pdf.output(str(path))
    return path


def unreadable(path: Path, root: Path) -> str:
    with pytest.raises(UnreadableDocument) as caught:
        read_document(path, root)
    assert isinstance(caught.value, HippoError)
    assert "\n" not in caught.value.reason
    return caught.value.reason


# ---------------------------------------------------------------------------------------------------------------
# readers

HANDBOOK = """\
# Harbor Handbook

Welcome to the harbor.

## Safety

General safety rules.

### Fire

Call the fire brigade.

```bash
# not a heading: a comment in a code fence
echo ok
```

## Boats
The boats are *blue*.

Moorings
--------

Setext heading body.

# Appendix

## Glossary

Tide: the rise and fall of the sea.
"""


def test_markdown_headings_become_paths_and_the_first_h1_the_title(tmp_path: Path) -> None:
    path = write(tmp_path / "guides" / "handbook.md", HANDBOOK)
    doc = read_document(path, tmp_path)
    assert doc.id == "guides/handbook.md"
    assert doc.format == "markdown"
    assert doc.title == "Harbor Handbook"
    assert [(s.heading_path, s.page) for s in doc.sections] == [
        ([], None),
        (["Safety"], None),
        (["Safety", "Fire"], None),
        (["Boats"], None),
        (["Moorings"], None),  # a setext '---' underline is a level-2 heading
        (["Appendix", "Glossary"], None),
    ]
    assert doc.sections[0].text == "Welcome to the harbor."
    assert doc.sections[3].text == "The boats are blue."  # the text a reader sees: no emphasis marks
    fire = doc.sections[2].text
    assert fire.startswith("Call the fire brigade.")
    assert "# not a heading: a comment in a code fence" in fire  # a '#' line in a fence is code, not a heading
    for section in doc.sections:  # no heading line is left in any section
        lines = [ln for ln in section.text.split("\n") if not ln.startswith("# not a heading")]
        assert not any(re.match(r"#{1,6}\s", ln) for ln in lines), section
        assert "--------" not in section.text
    # the title is not repeated in the text; the other headings are, as plain text
    assert "Harbor Handbook" not in doc.text
    assert "## " not in doc.text and "\nSafety\n" in doc.text and "\nMoorings\n" in doc.text
    assert doc.content_hash == hashlib.sha256(path.read_bytes()).hexdigest()
    assert doc.size == path.stat().st_size
    assert doc.modified.endswith("+00:00")


def test_markdown_title_falls_back_to_front_matter_first_heading_then_file_name(tmp_path: Path) -> None:
    front = read_document(write(tmp_path / "a.md", "---\ntitle: 'Ops guide'\ntags: [x]\n---\n## Intro\n\nHi.\n"),
                          tmp_path)
    assert front.title == "Ops guide"
    assert front.sections == [Section(["Intro"], "Hi.", None)]
    assert "tags" not in front.text

    first = read_document(write(tmp_path / "b.markdown", "## Intro\n\nHi.\n\n### Deeper\n\nMore.\n"), tmp_path)
    assert first.title == "Intro"
    assert [s.heading_path for s in first.sections] == [[], ["Deeper"]]

    plain = read_document(write(tmp_path / "03_notes.md", "Just text,\nno headings.\n"), tmp_path)
    assert plain.title == "03_notes"
    assert plain.sections == [Section([], "Just text, no headings.", None)]  # one paragraph: its lines joined


def test_text_file_is_one_section_titled_by_its_stem(tmp_path: Path) -> None:
    path = write(tmp_path / "01_silent_harbor.txt", "First paragraph.\r\n\r\nSecond paragraph.\r\n")
    doc = read_document(path, tmp_path)
    assert doc.title == "01_silent_harbor"
    assert doc.format == "text"
    assert doc.sections == [Section([], "First paragraph.\n\nSecond paragraph.", None)]
    assert doc.text == "First paragraph.\n\nSecond paragraph."


def test_text_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    utf16 = write(tmp_path / "wide.txt", "Grüße aus Köln.".encode("utf-16"))
    assert read_document(utf16, tmp_path).text == "Grüße aus Köln."
    sig = write(tmp_path / "sig.md", "\ufeff# Título\n\nCafé.".encode("utf-8"))
    doc = read_document(sig, tmp_path)
    assert (doc.title, doc.text) == ("Título", "Café.")


PAGE = """<!DOCTYPE html>
<html><head><title>Fire Safety – Harbor Wiki</title>
<style>body { color: red }</style><script>var tracking = "script text";</script></head>
<body>
<header><a href="/">Harbor Wiki home</a></header>
<nav><ul><li>Navigation link one</li><li>Navigation link two</li></ul></nav>
<main>
  <h1>Fire Safety</h1>
  <p>Keep extinguishers   charged.
     Check them monthly.</p>
  <h2>Drills</h2>
  <ul><li>Drill on Mondays.</li><li>Drill at noon.</li></ul>
  <h3>Records</h3>
  <table><tr><th>Day</th><th>Time</th></tr><tr><td>Monday</td><td>12:00</td></tr></table>
  <noscript>Enable JavaScript</noscript>
  <form><label>Search the wiki</label><input name="q"></form>
  <h2>Contacts</h2>
  <p>Harbor master: <b>Ann</b> Lee<br>Phone 555</p>
</main>
<aside>Related pages sidebar</aside>
<footer>Copyright footer</footer>
<script>console.log("late script")</script>
</body></html>
"""


def test_html_keeps_the_main_content_by_headings(tmp_path: Path) -> None:
    doc = read_document(write(tmp_path / "wiki" / "fire.html", PAGE), tmp_path)
    assert doc.id == "wiki/fire.html"
    assert doc.format == "html"
    assert doc.title == "Fire Safety – Harbor Wiki"
    for junk in ("Harbor Wiki home", "Navigation link", "script text", "late script", "color: red",
                 "Enable JavaScript", "Search the wiki", "sidebar", "Copyright"):
        assert junk not in doc.text, junk
    assert [s.heading_path for s in doc.sections] == [[], ["Drills"], ["Drills", "Records"], ["Contacts"]]
    assert doc.sections[0].text == "Keep extinguishers charged. Check them monthly."
    assert doc.sections[1].text == "Drill on Mondays.\n\nDrill at noon."
    assert doc.sections[2].text == "Day | Time\n\nMonday | 12:00"
    assert doc.sections[3].text == "Harbor master: Ann Lee\n\nPhone 555"
    assert "Fire Safety" not in doc.text  # the h1 is the page's own title


def test_html_without_title_or_main(tmp_path: Path) -> None:
    page = "<html><body><nav>Menu</nav><div><h1>Tides</h1><p>High at six.</p><h1>Winds</h1>West.</div></body></html>"
    doc = read_document(write(tmp_path / "tides.htm", page), tmp_path)
    assert doc.title == "Tides"
    assert doc.sections == [Section([], "High at six.", None), Section(["Winds"], "West.", None)]
    bare = read_document(write(tmp_path / "bare.html", "<p>Only a paragraph.</p>"), tmp_path)
    assert (bare.title, bare.text) == ("bare", "Only a paragraph.")
    assert "navigation" in unreadable(write(tmp_path / "nav.html", "<nav>Menu only</nav><script>x()</script>"),
                                      tmp_path)


def test_pdf_has_a_section_per_page_and_its_metadata_title(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "report.pdf", ["The lighthouse was built in 1874.", "Its lamp burns whale oil."],
                    title="Lighthouse Report")
    doc = read_document(path, tmp_path)
    assert doc.format == "pdf"
    assert doc.title == "Lighthouse Report"
    assert [(s.heading_path, s.page) for s in doc.sections] == [([], 1), ([], 2)]
    assert "1874" in doc.sections[0].text and "whale oil" in doc.sections[1].text
    untitled = read_document(make_pdf(tmp_path / "scan_02.pdf", ["Some text."]), tmp_path)
    assert untitled.title == "scan_02"


def test_pdf_with_an_owner_password_only_is_read(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "locked.pdf", ["Readable without a password."], owner_password="owner")
    assert "Readable" in read_document(path, tmp_path).text


def test_bad_pdfs_are_refused_with_their_reason(tmp_path: Path) -> None:
    encrypted = make_pdf(tmp_path / "secret.pdf", ["Hidden."], owner_password="owner", user_password="user")
    assert unreadable(encrypted, tmp_path) == "the PDF is encrypted: decrypt it first"
    images = make_pdf(tmp_path / "scan.pdf", ["", ""])
    assert unreadable(images, tmp_path) == "the PDF holds no text (scanned images?): run OCR first"
    broken = write(tmp_path / "broken.pdf", b"%PDF-1.4\nthis is not really a PDF\n")
    assert unreadable(broken, tmp_path).startswith("not a readable PDF: ")


def test_bad_text_files_are_refused_with_their_reason(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4
    assert unreadable(write(tmp_path / "image.md", png), tmp_path) == "binary content in a .md file"
    controls = bytes([1, 2, 3, 4, 5, 6, 7, 0x0e, 0x0f, 0x10]) * 50 + b"text"
    assert "binary" in unreadable(write(tmp_path / "bom_like.md", b"\xff\xfe" + bytes(16) + bytes(range(256)) * 4), tmp_path)
    assert "binary" in unreadable(write(tmp_path / "controls.txt", controls), tmp_path)
    latin1 = "Caf\u00e9 cr\u00e8me".encode("latin-1")
    assert unreadable(write(tmp_path / "latin.txt", latin1), tmp_path) == "not UTF-8 text (first bad byte at offset 3)"
    assert unreadable(write(tmp_path / "empty.txt", b""), tmp_path) == "empty"
    assert unreadable(write(tmp_path / "blank.md", " \n\t\n"), tmp_path) == "empty"
    assert unreadable(write(tmp_path / "blank16.txt", " \n".encode("utf-16")), tmp_path) == "empty"
    assert "empty" in unreadable(write(tmp_path / "heading.md", "# Only a title\n"), tmp_path)


def test_html_in_a_declared_charset_is_read(tmp_path: Path) -> None:
    page = '<html><head><meta charset="iso-8859-1"><title>Caf\u00e9</title></head><body><p>Cr\u00e8me.</p></body>'
    doc = read_document(write(tmp_path / "old.html", page.encode("latin-1")), tmp_path)
    assert (doc.title, doc.text) == ("Caf\u00e9", "Cr\u00e8me.")


def test_read_folder_reads_the_rest_and_names_the_skipped(tmp_path: Path) -> None:
    write(tmp_path / "b.md", "# B\n\nBee.\n")
    write(tmp_path / "a.txt", "Ay.\n")
    write(tmp_path / "sub" / "c.HTML", "<title>C</title><p>Sea.</p>")
    make_pdf(tmp_path / "sub" / "d.pdf", ["Dee."])
    write(tmp_path / "sub" / "bad.txt", "d\u00e9j\u00e0 vu".encode("cp1252"))
    write(tmp_path / "empty.md", "")
    make_pdf(tmp_path / "scan.pdf", [""])
    write(tmp_path / ".hidden.md", "# Hidden\n\nNo.\n")
    write(tmp_path / ".git" / "notes.md", "# Hidden dir\n\nNo.\n")
    write(tmp_path / "image.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    write(tmp_path / "data.json", "{}")
    documents, skipped = read_folder(tmp_path)
    assert [d.id for d in documents] == ["a.txt", "b.md", "sub/c.HTML", "sub/d.pdf"]
    assert [d.format for d in documents] == ["text", "markdown", "html", "pdf"]
    assert skipped == [
        ("empty.md", "empty"),
        ("scan.pdf", "the PDF holds no text (scanned images?): run OCR first"),
        ("sub/bad.txt", "not UTF-8 text (first bad byte at offset 1)"),
    ]
    assert SUPPORTED_SUFFIXES == {".md", ".markdown", ".txt", ".html", ".htm", ".pdf"}


def test_read_folder_of_one_file_an_empty_folder_and_a_missing_path(tmp_path: Path) -> None:
    one = write(tmp_path / "notes" / "one.md", "One.")
    documents, skipped = read_folder(one)
    assert [d.id for d in documents] == ["one.md"] and skipped == []
    (tmp_path / "empty").mkdir()
    assert read_folder(tmp_path / "empty") == ([], [])
    with pytest.raises(HippoError, match="no such file or folder"):
        read_folder(tmp_path / "no such folder")


def test_read_folder_names_a_file_it_may_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "locked.md", "# L\n\nSecret.\n")
    write(tmp_path / "open.md", "# O\n\nOpen.\n")
    read_bytes = Path.read_bytes

    def refuse(self: Path) -> bytes:
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    documents, skipped = read_folder(tmp_path)
    assert [d.id for d in documents] == ["open.md"]
    assert skipped == [("locked.md", "cannot read the file: Permission denied")]


# ---------------------------------------------------------------------------------------------------------------
# splitter


def word_tokenizer(words: list[str]) -> object:
    """A real `tokenizers` tokenizer: whitespace and punctuation pre-tokenizer, a word-level vocabulary."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}
    for word in words:
        vocab.setdefault(word, len(vocab))
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()  # type: ignore[assignment]
    tokenizer.enable_truncation(16)  # a truncating tokenizer must still count long texts in full
    return tokenizer


def doc_of(sections: list[Section], title: str = "Handbook", doc_id: str = "handbook.md") -> Document:
    return Document(id=doc_id, title=title, format="markdown", text="\n\n".join(s.text for s in sections),
                    sections=sections)


def long_text(words: int, seed: int = 7) -> str:
    import random

    rng = random.Random(seed)
    vocabulary = "harbor ship tide lamp keeper dawn rope anchor gull storm pier net".split()
    paragraphs: list[str] = []
    total = 0
    while total < words:
        sentences = []
        for _ in range(rng.randint(2, 6)):
            n = rng.randint(6, 20)
            sentences.append(" ".join(rng.choice(vocabulary) for _ in range(n)).capitalize() + ".")
            total += n
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs)


def test_token_counter_counts_without_special_tokens_or_truncation() -> None:
    tokenizer = word_tokenizer(["harbor", "ship"])
    count = token_counter(tokenizer)  # type: ignore[arg-type]
    assert count("harbor ship harbor.") == 4
    assert count(" ".join(["harbor"] * 100)) == 100
    assert tokenizer.truncation is not None  # type: ignore[attr-defined]  # the caller's object is untouched


def test_sections_stay_separate_and_carry_their_titles() -> None:
    sections = [Section([], "Welcome."), Section(["Safety"], "Rule one."), Section(["Safety", "Fire"], "Call."),
                Section(["Empty"], "  \n "), Section(["Boats"], "Blue boats.")]
    passages = passages_of(doc_of(sections), lambda s: len(s.split()), 100)
    assert [(p.text, p.heading_path, p.ordinal) for p in passages] == [
        ("Welcome.", [], 0), ("Rule one.", ["Safety"], 1), ("Call.", ["Safety", "Fire"], 2),
        ("Blue boats.", ["Boats"], 3)]
    doc = doc_of(sections)
    assert section_title(doc, ["Safety", "Fire"]) == "Fire"  # a passage is titled by its own heading
    assert section_title(doc, []) == "Handbook"
    assert heading_of(["Safety", "Fire"]) == "Safety › Fire"  # the whole path, on its FROM_DOCUMENT link


def test_a_long_section_is_cut_within_the_budget_at_paragraphs() -> None:
    text = long_text(5000)
    count = token_counter(word_tokenizer(text.replace(".", " ").split() + ["."]))  # type: ignore[arg-type]
    budget = 200
    doc = doc_of([Section(["Intro"], "Short intro."), Section(["Log"], text), Section(["End"], "Bye.")])
    passages = passages_of(doc, count, budget)
    log = [p for p in passages if p.heading_path == ["Log"]]
    assert len(log) >= count(text) // budget
    assert all(count(p.text) <= budget for p in log)
    assert all(p.text == p.text.strip() and p.text.endswith(".") for p in log)  # cut between sentences at least
    assert sum(p.text.count(".") for p in log) == text.count(".")  # nothing lost
    assert [p.ordinal for p in passages] == list(range(len(passages)))
    assert passages[0].text == "Short intro." and passages[-1].text == "Bye."
    # paragraphs are kept whole where they fit: every paragraph boundary in the text is a passage boundary or
    # inside a passage, never mid-paragraph unless that paragraph alone exceeds the budget
    paragraphs = text.split("\n\n")
    small = [p for p in paragraphs if count(p) <= budget]
    joined = "\n\n".join(p.text for p in log)
    assert sum(1 for p in small if p in joined) == len(small)


def test_pdf_pages_are_units(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "r.pdf", ["Page one text.", "Page two text."], title="R")
    passages = passages_of(read_document(path, tmp_path), lambda s: len(s.split()), 50)
    assert [(p.page, p.heading_path) for p in passages] == [(1, []), (2, [])]


def test_passage_ids_are_stable_and_local_to_the_changed_section() -> None:
    count: Callable[[str], int] = lambda s: len(s.split())  # noqa: E731
    before = doc_of([Section(["A"], "Alpha text."), Section(["B"], long_text(600, seed=1)),
                     Section(["C"], "Gamma text.")])
    after = doc_of([Section(["A"], "Alpha text."), Section(["B"], long_text(600, seed=2)),
                    Section(["C"], "Gamma text.")])
    ids_before = passage_ids(before.id, passages_of(before, count, 120))
    ids_again = passage_ids(before.id, passages_of(before, count, 120))
    ids_after = passage_ids(after.id, passages_of(after, count, 120))
    assert ids_before == ids_again
    assert ids_before[0] == ids_after[0] and ids_before[-1] == ids_after[-1]
    assert not set(ids_before[1:-1]) & set(ids_after[1:-1])
    digest = hashlib.sha256(b"Alpha text.").hexdigest()[:12]
    assert ids_before[0] == passage_id("handbook.md", "Alpha text.") == f"handbook.md#{digest}"


def test_duplicate_texts_get_distinct_ids() -> None:
    doc = doc_of([Section(["A"], "Same."), Section(["B"], "Same."), Section(["C"], "Other."),
                  Section(["D"], "Same.")])
    ids = passage_ids(doc.id, passages_of(doc, lambda s: len(s.split()), 10))
    first = passage_id(doc.id, "Same.")
    assert ids == [first, f"{first}-1", passage_id(doc.id, "Other."), f"{first}-2"]
    assert len(set(ids)) == 4


def local_tokenizer_json() -> Path | None:
    for name in ("bge-small-en-v1.5", "bge-small-en-v1.5-q"):
        path = MODELS / name / "tokenizer.json"
        if path.is_file():
            return path
    found = sorted(MODELS.glob("*/*tokenizer.json")) if MODELS.is_dir() else []
    return found[0] if found else None


@pytest.mark.skipif(local_tokenizer_json() is None, reason="no cached encoder tokenizer under ~/.cache/hippo-neo4j")
def test_the_encoders_tokenizer_bounds_every_passage(tmp_path: Path) -> None:
    tokenizer_json = local_tokenizer_json()
    assert tokenizer_json is not None
    count = token_counter(tokenizer_json.parent)
    assert count("hello world") == 2  # no [CLS]/[SEP]
    sections = "\n\n".join(f"## Part {i}\n\n{long_text(30 + 20 * (i % 5), seed=i)}" for i in range(30))
    handbook = write(tmp_path / "handbook.md", f"# Handbook\n\n{sections}\n\n## Long\n\n{long_text(5000)}\n")
    doc = read_document(handbook, tmp_path)
    budget = 256
    passages = passages_of(doc, count, budget)
    assert all(count(p.text) <= budget for p in passages)
    parts = [p for p in passages if p.heading_path[0].startswith("Part")]
    assert len(parts) == 30  # each fitting section is exactly one passage
    assert len([p for p in passages if p.heading_path == ["Long"]]) >= count(long_text(5000)) // budget
    assert parts[3].heading_path == ["Part 3"] and section_title(doc, parts[3].heading_path) == "Part 3"
    # as indexed: title, newline and text within the budget; ids, metadata and headings in reading order
    indexed = document_passages(doc, count, budget)
    assert all(count(p.title) + 1 + count(p.text) <= budget for p, _ in indexed)
    assert [p.passage_id for p, _ in indexed] == passage_ids(doc.id, passages_of(doc, count, budget - 1 - max(
        count(section_title(doc, s.heading_path)) for s in doc.sections)))
    assert indexed[3][0].title == "Part 3" and indexed[3][1] == "Part 3"
    assert indexed[3][0].metadata == {"document": doc.id, "format": "markdown", "modified": doc.modified}


def test_markdown_sections_hold_the_text_a_reader_sees(tmp_path: Path) -> None:
    """Links keep their words and lose their addresses, marks go, list items keep their markers, code keeps its
    lines, an HTML block keeps its text without tags; blocks stay apart by a blank line (where the splitter cuts)."""
    source = (
        "# Guide\n\nSee the [ops manual](https://example.com/ops) and **always** `ping` first, ![the map](m.png).\n"
        "Same paragraph.\n\n- first\n- second [item](http://x.y)\n  - nested\n\n1. one\n2. two\n\n> quoted\n\n"
        "<div>raw <b>html</b></div>\n\n```sh\n# comment\nrun --now\n```\n\n## Next\n\nA <https://auto.link> here.\n"
    )
    doc = read_document(write(tmp_path / "guide.md", source), tmp_path)
    assert [s.text for s in doc.sections] == [
        "See the ops manual and always ping first, the map. Same paragraph.\n\n- first\n- second item\n  - nested"
        "\n\n1. one\n2. two\n\nquoted\n\nraw html\n\n# comment\nrun --now",
        "A https://auto.link here.",
    ]
    assert "example.com" not in doc.text and "**" not in doc.text
