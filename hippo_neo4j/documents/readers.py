"""Read the files people keep (Markdown, plain text, HTML, PDF) into documents with a title and a structure.

A document's sections follow the file's own structure: headings for Markdown and HTML, pages for PDF, the
whole file for plain text. Headings become each section's heading path and are kept out of the section text, so
they reach passage titles instead of turning into phrases of their own. A file that cannot be read as text
(encrypted or image-only PDF, binary content, bytes that are not UTF-8, nothing but whitespace) raises
`UnreadableDocument` with a one-line reason, so a folder run can name it and go on with the rest.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hippo_neo4j.errors import HippoError
from hippo_neo4j.progress import progress_bar
from hippo_neo4j.text import CONTROL

if TYPE_CHECKING:  # imported lazily by the readers that need them
    from bs4 import Tag

Format = Literal["markdown", "text", "html", "pdf"]

FORMATS: dict[str, Format] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
}
SUPPORTED_SUFFIXES: frozenset[str] = frozenset(FORMATS)

# how much of a text file is inspected for binary content
_SNIFF_BYTES = 8192
# share of control bytes (other than tab, newlines, form feed, escape and backspace) above which a file is binary
_MAX_CONTROL_SHARE = 0.10
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\b\x1b")


class UnreadableDocument(HippoError):
    """A file that cannot be read as a document; `reason` is one line a user can act on."""

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


@dataclass(frozen=True)
class Section:
    """One unit of a document's structure, in reading order.

    `heading_path` lists the headings above the section, outermost first, without the heading that became the
    document title; `page` is the 1-based PDF page, None for other formats.
    """

    heading_path: list[str]
    text: str
    page: int | None = None


@dataclass(frozen=True)
class Document:
    """A file read as text: its id is the path relative to the indexed folder, with POSIX separators."""

    id: str
    title: str
    format: Format
    text: str
    sections: list[Section] = field(default_factory=list)
    content_hash: str = ""  # sha256 of the file's bytes, hex
    modified: str = ""  # the file's modification time, ISO-8601 in UTC
    size: int = 0  # bytes


# ---------------------------------------------------------------------------------------------------------------
# entry points


def read_document(path: Path, root: Path) -> Document:
    """The document in `path`, its id relative to `root`.

    Raises UnreadableDocument for a file that holds no readable text, and ValueError for an unsupported suffix or
    a path outside `root`.
    """
    path = Path(path)
    doc_id = document_id(path, Path(root))
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"{path}: unsupported file type {path.suffix!r} (supported: "
                         f"{', '.join(sorted(SUPPORTED_SUFFIXES))})")
    try:
        data = path.read_bytes()
        stat = path.stat()
    except OSError as exc:
        raise UnreadableDocument(path, f"cannot read the file: {exc.strerror or exc}") from exc
    if not data.strip():
        raise UnreadableDocument(path, "empty")
    stem = path.stem
    title: str
    sections: list[Section]
    if fmt == "pdf":
        title, sections, text = _read_pdf(path, data, stem)
    else:
        decoded = _decode_text(path, data, fmt)
        if not decoded.strip():
            raise UnreadableDocument(path, "empty")
        if fmt == "markdown":
            title, sections, text = _read_markdown(decoded, stem)
        elif fmt == "html":
            title, sections, text = _read_html(path, decoded, stem)
        else:
            text = decoded.strip()
            title, sections = stem, [Section([], text, None)]
    if not any(s.text.strip() for s in sections):
        raise UnreadableDocument(path, "empty (no text besides headings)" if fmt != "html"
                                 else "empty (no text besides navigation, scripts and styles)")
    return Document(
        id=doc_id,
        title=title,
        format=fmt,
        text=text,
        sections=sections,
        content_hash=hashlib.sha256(data).hexdigest(),
        modified=datetime.fromtimestamp(stat.st_mtime, tz=timezone.utc).isoformat(),
        size=len(data),
    )


def read_folder(root: Path, progress: bool = False) -> tuple[list[Document], list[tuple[str, str]]]:
    """Every supported file under `root`: the documents read (sorted by id) and the (id, reason) of those skipped;
    with `progress`, a bar over the files.

    Hidden files and folders (a name starting with '.') and files of other types are left out without a word;
    a supported file that cannot be read is skipped with its reason. `root` may also be a single file.
    """
    root = Path(root)
    if root.is_file():
        paths, base = [root], root.parent
    elif root.is_dir():
        paths, base = list(document_paths(root)), root
    else:
        raise HippoError(f"{root}: no such file or folder")
    documents: list[Document] = []
    skipped: list[tuple[str, str]] = []
    with progress_bar(progress, len(paths), f"reading {root.name or root}") as advance:
        for path in paths:
            try:
                documents.append(read_document(path, base))
            except UnreadableDocument as exc:
                skipped.append((document_id(path, base), exc.reason))
            except ValueError as exc:  # an unsupported suffix given as a single file
                skipped.append((document_id(path, base), str(exc).split(": ", 1)[-1]))
            advance(1)
    documents.sort(key=lambda d: d.id)
    skipped.sort()
    return documents, skipped


# the longest file name most file systems take, in bytes (a sent document is read from a file of its id's name)
_NAME_BYTES = 255
_ID_CONTROL = re.compile(f"[{CONTROL}]")


def read_bytes(document_id: str, data: bytes) -> Document:
    """A document sent over the wire (``hippo serve``, ``hippo mcp``): `data` read as a file named by
    `document_id`, whose suffix gives its format, exactly as `read_document` reads a file under a folder.

    `document_id` is a relative POSIX path (``handbook.md``, ``wiki/setup.html``): no absolute path, no ``.`` or
    ``..`` segment, no empty segment, no backslash or control character, each segment at most 255 bytes. An id
    that is not one, a suffix not in `SUPPORTED_SUFFIXES` and bytes that hold no readable text raise
    UnreadableDocument with a one-line reason. `modified` is the time it was read.
    """
    import tempfile
    from dataclasses import replace
    from pathlib import PurePosixPath

    _check_sent_id(document_id)
    name = PurePosixPath(document_id).name
    suffix = PurePosixPath(name).suffix
    if suffix.lower() not in SUPPORTED_SUFFIXES:
        kind = f"unsupported file type {suffix!r}" if suffix else "no file type"
        raise UnreadableDocument(document_id, f"{kind}: the id's suffix gives the format (supported: "
                                              f"{', '.join(sorted(SUPPORTED_SUFFIXES))})")
    with tempfile.TemporaryDirectory(prefix="hippo-document-") as folder:
        path = Path(folder) / name
        try:
            path.write_bytes(data)
        except OSError as exc:
            raise UnreadableDocument(document_id, f"cannot hold the document: {exc.strerror or exc}") from None
        try:
            document = read_document(path, Path(folder))
        except UnreadableDocument as exc:
            raise UnreadableDocument(document_id, exc.reason) from None
    return replace(document, id=document_id)


def _check_sent_id(document_id: object) -> None:
    """A sent document's id as `read_bytes` takes it, else UnreadableDocument naming the rule it breaks."""
    if not isinstance(document_id, str) or not document_id:
        raise UnreadableDocument(str(document_id), "a document id must be a non-empty relative path, such as "
                                                   "'handbook.md'")
    try:
        document_id.encode("utf-8")
    except UnicodeEncodeError:
        raise UnreadableDocument(repr(document_id), "a document id must be valid Unicode (it holds a lone "
                                                    "surrogate)") from None
    if _ID_CONTROL.search(document_id):
        raise UnreadableDocument(repr(document_id), "a document id may not hold control characters")
    if "\\" in document_id:
        raise UnreadableDocument(document_id, "a document id is a POSIX path: '/' separates folders, not '\\'")
    if document_id.startswith("/"):
        raise UnreadableDocument(document_id, "a document id is a relative path, not an absolute one")
    for segment in document_id.split("/"):
        if segment in ("", ".", ".."):
            raise UnreadableDocument(document_id, "a document id is a relative path without empty, '.' or '..' "
                                                  "segments")
        if len(segment.encode("utf-8")) > _NAME_BYTES:
            raise UnreadableDocument(document_id, f"each segment of a document id is a file name of at most "
                                                  f"{_NAME_BYTES} bytes")


def document_paths(root: Path) -> Iterator[Path]:
    """The supported, non-hidden files under `root`, in a stable (sorted) order."""
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith(".") or Path(name).suffix.lower() not in SUPPORTED_SUFFIXES:
                continue
            path = Path(directory, name)
            if path.is_file():
                yield path


def document_id(path: Path, root: Path) -> str:
    """`path` relative to `root`, with POSIX separators: the id that stays the same on every machine."""
    try:
        relative = Path(path).relative_to(root)
    except ValueError:
        try:
            relative = Path(path).resolve().relative_to(Path(root).resolve())
        except ValueError:
            raise ValueError(f"{path} is not under {root}") from None
    return relative.as_posix()


# ---------------------------------------------------------------------------------------------------------------
# text files: bytes to str


_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def _decode_text(path: Path, data: bytes, fmt: Format) -> str:
    """The file's text: UTF-8, or UTF-8/16/32 with a byte-order mark, or (HTML only) the charset the page declares.

    Never replaces undecodable bytes: a file that is not text, or not in a known encoding, is refused.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                break  # bytes that merely start like a byte-order mark: judged as any other bytes below
            # binary bytes after a mark decode to control characters
            if _binary([ord(c) for c in text[:_SNIFF_BYTES]]):
                raise UnreadableDocument(path, f"binary content in a {path.suffix.lower()} file")
            return _normalise_newlines(text)
    if _binary(data[:_SNIFF_BYTES]):
        raise UnreadableDocument(path, f"binary content in a {path.suffix.lower()} file")
    try:
        return _normalise_newlines(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        bad = exc.start
    if fmt == "html":
        declared = _META_CHARSET.search(data[:4096])
        if declared:
            charset = declared.group(1).decode("ascii", "replace").lower()
            if charset.replace("_", "-") not in ("utf-8", "utf8"):
                try:
                    return _normalise_newlines(data.decode(charset))
                except LookupError:
                    raise UnreadableDocument(path, f"unknown charset {charset!r} declared in the page") from None
                except UnicodeDecodeError as exc:
                    raise UnreadableDocument(path, f"not {charset} text as the page declares (first bad byte at "
                                                   f"offset {exc.start})") from None
    raise UnreadableDocument(path, f"not UTF-8 text (first bad byte at offset {bad})")


def _binary(head: bytes | list[int]) -> bool:
    """Whether the start of a file (bytes, or code points) holds a NUL or too many other control characters."""
    if 0 in head:
        return True
    controls = sum(1 for b in head if (b < 0x20 and b not in _TEXT_CONTROLS) or b == 0x7F)
    return controls > _MAX_CONTROL_SHARE * len(head)


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _squash(text: str) -> str:
    """Runs of whitespace as one space, trimmed."""
    return " ".join(text.split())


# ---------------------------------------------------------------------------------------------------------------
# Markdown


_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_FRONT_MATTER_TITLE = re.compile(r"^title\s*:\s*(.+?)\s*$", re.MULTILINE)


@dataclass
class _Heading:
    level: int
    text: str
    start: int  # first source line of the heading
    end: int  # first source line after it


def _read_markdown(source: str, stem: str) -> tuple[str, list[Section], str]:
    """Title, sections and text of a Markdown file.

    Headings are found with markdown-it-py (CommonMark), so a '#' line inside a code fence or an indented code
    block is text, and setext headings count. Only top-level headings cut sections (one inside a list item or a
    block quote stays in its text). Section text is the text between headings without its Markdown
    (:func:`_plain_text`): what a reader sees, so a link's address or an emphasis mark makes no phrase.
    """
    from markdown_it import MarkdownIt

    front_title: str | None = None
    match = _FRONT_MATTER.match(source)
    if match:  # YAML front matter: not text; its `title:` names the document when no level-1 heading does
        found = _FRONT_MATTER_TITLE.search(match.group(1))
        if found:
            front_title = found.group(1).strip().strip("'\"").strip() or None
        # keep the line count so markdown-it's line map still indexes `lines`
        source = "\n" * match.group(0).count("\n") + source[match.end():]
    lines = source.split("\n")
    tokens = MarkdownIt("commonmark").parse(source)
    headings: list[_Heading] = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.level == 0 and token.map is not None:
            inline = tokens[i + 1] if i + 1 < len(tokens) else None
            text = _inline_text(inline.children or []) if inline is not None else ""
            headings.append(_Heading(int(token.tag[1:]), text, token.map[0], token.map[1]))

    title_heading: _Heading | None = next((h for h in headings if h.level == 1 and h.text), None)
    if title_heading is not None:
        title = title_heading.text
    elif front_title:
        title = front_title
    else:
        title_heading = next((h for h in headings if h.text), None)
        title = title_heading.text if title_heading is not None else stem

    sections: list[Section] = []
    parts: list[str] = []
    stack: list[_Heading] = []

    def body(start: int, end: int) -> None:
        text = _plain_text(tokens, start, end)
        if text.strip():
            sections.append(Section([h.text for h in stack if h is not title_heading and h.text], text, None))
            parts.append(text)

    position = 0
    for heading in headings:
        body(position, heading.start)
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        if heading is not title_heading and heading.text:
            parts.append(heading.text)
        position = heading.end
    body(position, len(lines))
    return title, sections, "\n\n".join(parts)


def _plain_text(tokens: list[Any], start: int, end: int) -> str:
    """The text of the Markdown blocks that begin on source lines [start, end): each paragraph, heading inside a
    list or quote, and list item as its inline text (:func:`_inline_text`: marks and link addresses dropped), a list
    item after "- ", a code block or fence as its code, an HTML block as its text without tags; blocks apart by a
    blank line, the items of a tight list by a line break."""
    out: list[str] = []
    lists = 0  # depth of the lists around the token
    tight = False  # the paragraph being read is an item of a tight list (markdown-it hides its paragraph)
    item: str | None = None  # the marker of the list item whose first paragraph comes next
    after_item = False  # the last block written was an item of a tight list
    for token in tokens:
        if token.type in ("bullet_list_open", "ordered_list_open"):
            after_item = after_item and lists > 0  # a list of its own starts a block; a nested one does not
            lists += 1
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            lists -= 1
        elif token.type == "list_item_open":
            item = f"{token.info}{token.markup} " if token.info else "- "
        elif token.type == "paragraph_open":
            tight = token.hidden
        if token.type == "inline":
            marker, item = item, None
        if token.map is None or not start <= token.map[0] < end:
            continue
        if token.type == "inline":
            text = _inline_text(token.children or [])
            if not text:
                continue
            if marker is not None:
                text = "  " * (lists - 1) + marker + text
            out.append(("\n" if tight and marker is not None and after_item else "\n\n") + text)
            after_item = tight and marker is not None
        elif token.type in ("fence", "code_block", "html_block"):
            text = token.content.strip("\n") if token.type != "html_block" else _squash(_TAG.sub(" ", token.content))
            if text:
                out.append("\n\n" + text)
                after_item = False
    return "".join(out).strip("\n")


_TAG = re.compile(r"<[^>]*>")


def _inline_text(children: list[Any]) -> str:
    """The plain text of an inline Markdown run: emphasis, links and code marks dropped, image alt text kept."""
    out: list[str] = []
    for child in children:
        if child.type in ("text", "code_inline", "image"):
            out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append(" ")
    return _squash("".join(out))


# ---------------------------------------------------------------------------------------------------------------
# HTML


_DROPPED_TAGS = ("script", "style", "noscript", "template", "svg", "nav", "header", "footer", "aside", "form",
                 "iframe")
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
# elements that end the running paragraph: their text starts a new one
_BLOCKS = frozenset({
    "address", "article", "blockquote", "body", "caption", "center", "dd", "details", "dialog", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "hr", "html", "li", "main", "menu", "ol", "p", "section", "summary",
    "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
})


class _HtmlText:
    """Walks an HTML tree in reading order, collecting paragraphs into sections cut at h1-h6."""

    def __init__(self, title: str, title_from_h1: bool) -> None:
        self.title = title
        # the first h1 names the page; it stays out of heading paths when it is (part of) the title
        self.title_from_h1 = title_from_h1
        self.title_h1_seen = False
        self.stack: list[tuple[int, str | None]] = []  # (level, text; None for the heading that is the title)
        self.paragraphs: list[str] = []
        self.inline: list[str] = []
        self.sections: list[Section] = []
        self.parts: list[str] = []

    def flush_inline(self) -> None:
        text = _squash("".join(self.inline))
        self.inline.clear()
        if text:
            self.paragraphs.append(text)

    def flush_section(self) -> None:
        self.flush_inline()
        if self.paragraphs:
            text = "\n\n".join(self.paragraphs)
            self.sections.append(Section([t for _, t in self.stack if t], text, None))
            self.parts.append(text)
            self.paragraphs = []

    def heading(self, level: int, text: str) -> None:
        self.flush_section()
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        is_title = False
        if level == 1 and not self.title_h1_seen:
            self.title_h1_seen = True
            is_title = self.title_from_h1 and bool(text) and (
                text == self.title or text.casefold() in self.title.casefold())
        self.stack.append((level, None if is_title or not text else text))
        if text and not is_title:
            self.parts.append(text)

    def walk(self, node: Tag) -> None:
        from bs4 import NavigableString, Tag
        from bs4.element import PreformattedString

        for child in node.children:
            if isinstance(child, NavigableString):
                if isinstance(child, PreformattedString):
                    continue  # comments, doctype, CDATA, processing instructions
                self.inline.append(str(child))
            elif isinstance(child, Tag):
                name = child.name.lower()
                if name in _HEADINGS:
                    self.heading(_HEADINGS[name], _squash(child.get_text(" ")))
                elif name == "pre":
                    self.flush_inline()
                    text = child.get_text().strip("\n").rstrip()
                    if text.strip():
                        self.paragraphs.append(text)
                elif name == "br":
                    self.inline.append("\n")
                    self.flush_inline()
                elif name == "tr" and not child.find(["table", *_HEADINGS]):
                    # a table row as one line, its cells separated by " | "
                    self.flush_inline()
                    cells = [_squash(c.get_text(" ")) for c in child.find_all(["td", "th"], recursive=False)]
                    row = " | ".join(c for c in cells if c)
                    if row:
                        self.paragraphs.append(row)
                elif name in ("img",):
                    alt = child.get("alt")
                    if isinstance(alt, str) and alt.strip():
                        self.inline.append(f" {alt.strip()} ")
                elif name in _BLOCKS:
                    self.flush_inline()
                    self.walk(child)
                    self.flush_inline()
                else:
                    self.walk(child)


def _read_html(path: Path, source: str, stem: str) -> tuple[str, list[Section], str]:
    """Title, sections and text of an HTML page: its content, without navigation, scripts, styles and forms.

    The content is the page's <main> (or its <article> elements) when it has one, else its <body>. Paragraphs,
    list items and table rows are separated by blank lines, so a splitter can cut between them.
    """
    try:
        from bs4 import BeautifulSoup, Tag
    except ImportError as exc:  # a default dependency; only a broken install lacks it
        raise UnreadableDocument(path, "reading HTML needs beautifulsoup4: pip install beautifulsoup4") from exc

    soup = BeautifulSoup(source, "html.parser")
    page_title = _squash(soup.title.get_text(" ")) if soup.title is not None else ""
    for element in soup.find_all(["head", "title", *_DROPPED_TAGS]):
        if not isinstance(element, Tag) or element.decomposed:
            continue
        if element.name == "header" and element.find_parent(["article", "main"]) is not None:
            continue  # an article's own header holds its heading, not the site's banner
        element.decompose()
    roots: list[Tag] = []
    main = soup.find("main")
    if isinstance(main, Tag):
        roots = [main]
    else:
        articles = [a for a in soup.find_all("article") if isinstance(a, Tag)]
        # an <article> nested in another is read with its parent
        roots = [a for a in articles if not any(isinstance(p, Tag) and p.name == "article" for p in a.parents)]
    if not roots:
        body = soup.find("body")
        roots = [body if isinstance(body, Tag) else soup]

    first_h1 = next((_squash(h.get_text(" ")) for root in roots for h in root.find_all("h1")), "")
    title = page_title or first_h1 or stem
    reader = _HtmlText(title, title_from_h1=bool(first_h1))
    for root in roots:
        reader.walk(root)
    reader.flush_section()
    return title, reader.sections, "\n\n".join(reader.parts)


# ---------------------------------------------------------------------------------------------------------------
# PDF


def _read_pdf(path: Path, data: bytes, stem: str) -> tuple[str, list[Section], str]:
    """Title and one section per page of a PDF, from its text layer (pypdf); pages without text are left out."""
    import io

    try:
        from pypdf import PdfReader
        from pypdf.errors import DependencyError, FileNotDecryptedError
    except ImportError as exc:  # a default dependency; only a broken install lacks it
        raise UnreadableDocument(path, "reading PDF needs pypdf: pip install pypdf") from exc

    try:
        reader = PdfReader(io.BytesIO(data))  # tries the empty user password of an encrypted file itself
        if reader.is_encrypted and not _decrypted(reader):
            raise UnreadableDocument(path, "the PDF is encrypted: decrypt it first")
        pages = list(reader.pages)
    except UnreadableDocument:
        raise
    except FileNotDecryptedError:
        raise UnreadableDocument(path, "the PDF is encrypted: decrypt it first") from None
    except DependencyError as exc:
        raise UnreadableDocument(path, f"the PDF is encrypted and decrypting it needs a package: {_one_line(exc)} "
                                       "(pip install cryptography)") from None
    except Exception as exc:  # pypdf raises several types (and some plain ones) for damaged files
        raise UnreadableDocument(path, f"not a readable PDF: {_one_line(exc)}") from None

    sections: list[Section] = []
    for number, page in enumerate(pages, start=1):
        try:
            text = page.extract_text() or ""
        except Exception as exc:  # a damaged content stream or font on one page
            raise UnreadableDocument(path, f"page {number} of the PDF cannot be read: {_one_line(exc)}") from None
        text = "\n".join(line.rstrip() for line in _normalise_newlines(text).split("\n")).strip()
        if text:
            sections.append(Section([], text, number))
    if not sections:
        raise UnreadableDocument(path, "the PDF holds no text (scanned images?): run OCR first")

    title = stem
    try:
        meta = reader.metadata
        meta_title = meta.title if meta is not None else None
        if isinstance(meta_title, str) and meta_title.strip():
            title = _squash(meta_title)
    except Exception:  # a damaged info dictionary: the file name serves
        pass
    return title, sections, "\n\n".join(s.text for s in sections)


def _decrypted(reader: Any) -> bool:
    """Whether an encrypted PDF opens without a password (an owner password alone restricts, not hides)."""
    from pypdf import PasswordType

    try:
        return bool(reader.decrypt("") != PasswordType.NOT_DECRYPTED)
    except Exception:
        return False


def _one_line(exc: BaseException) -> str:
    text = _squash(str(exc)) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."
