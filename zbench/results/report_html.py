"""The report as one self-contained HTML file: Markdown rendered by markdown-it-py (the parser Rich
and Textual already bring), every image inlined as a ``data:`` URI, inline CSS, no scripts and no
network, so the file opens from a disk or a mail attachment as it is."""

from __future__ import annotations

import base64
import html
import mimetypes
from pathlib import Path

from markdown_it import MarkdownIt

CSS = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem;
       color: #1d1d1f; line-height: 1.45; }
.scroll { overflow-x: auto; max-width: 100%; margin: 0.5rem 0 1rem; }
table { border-collapse: collapse; font-size: 0.85rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; }
th { background: #f2f2f2; }
tr:nth-child(even) td { background: #fafafa; }
img { max-width: 100%; height: auto; display: block; margin: 0.5rem 0 1rem; }
code { background: #f2f2f2; padding: 0 0.2rem; }
"""


# A wide table (the experiments' with every column) scrolls inside its own box, so the page itself
# never grows wider than the window.
def _table_open(self: object, tokens: object, idx: int, options: object, env: object) -> str:
    return '<div class="scroll"><table>\n'


def _table_close(self: object, tokens: object, idx: int, options: object, env: object) -> str:
    return "</table></div>\n"


class ReportImageError(OSError):
    """An image the Markdown names is not in the report's folder."""


def data_uri(path: Path) -> str:
    """A file as a base64 ``data:`` URI, so the HTML report needs no files beside it."""
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{kind};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def render_html(markdown: str, root: Path, title: str) -> str:
    """``markdown`` as a full HTML page; relative image paths are read from ``root`` and inlined."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.add_render_rule("table_open", _table_open)
    md.add_render_rule("table_close", _table_close)
    tokens = md.parse(markdown)
    for token in tokens:
        for child in token.children or ():
            if child.type != "image":
                continue
            src = str(child.attrGet("src") or "")
            if src.startswith("data:"):
                continue
            path = (root / src).resolve()
            if not path.is_file() or root.resolve() not in path.parents:
                raise ReportImageError(f"the report names an image it does not hold: {src}")
            child.attrSet("src", data_uri(path))
    body = md.renderer.render(tokens, md.options, {})
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n"
        f"<body>\n{body}</body>\n</html>\n"
    )
