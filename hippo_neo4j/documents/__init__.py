"""Documents in, passages out: read Markdown, text, HTML and PDF files and cut them into passages.

`read_folder` / `read_document` turn files into `Document`s with a title and sections (headings or pages);
`passages_of` cuts a document into `DocumentPassage`s within a token budget. The format libraries (pypdf,
BeautifulSoup, semantic-text-splitter) are imported only when a file of their kind is read or a section needs
cutting, so importing this package stays cheap.
"""

from hippo_neo4j.documents.readers import (
    FORMATS,
    SUPPORTED_SUFFIXES,
    Document,
    Format,
    Section,
    UnreadableDocument,
    document_id,
    document_paths,
    read_document,
    read_folder,
)
from hippo_neo4j.documents.splitter import (
    CUT_VERSION,
    TITLE_SEPARATOR,
    DocumentPassage,
    TokenCounter,
    document_passages,
    heading_of,
    passage_id,
    passage_ids,
    passages_of,
    section_title,
    token_counter,
)

__all__ = [
    "CUT_VERSION",
    "FORMATS",
    "SUPPORTED_SUFFIXES",
    "TITLE_SEPARATOR",
    "Document",
    "DocumentPassage",
    "Format",
    "Section",
    "TokenCounter",
    "UnreadableDocument",
    "document_id",
    "document_paths",
    "document_passages",
    "heading_of",
    "passage_id",
    "passage_ids",
    "passages_of",
    "section_title",
    "read_document",
    "read_folder",
    "token_counter",
]
