"""docs/example.ipynb runs: its code cells in order, with plain exec (no Jupyter), so it cannot
rot; and `explain(...)` displays itself as well-formed HTML with the occupancy table and an SVG."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "docs" / "example.ipynb"
VOID = {"br", "hr", "img", "input", "meta", "link", "col", "area", "base", "wbr", "source"}


class Balanced(HTMLParser):
    """Every tag closed, in order (SVG's self-closing elements count as closed)."""

    def __init__(self):
        super().__init__()
        self.stack, self.tags, self.problems = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def parsed(text: str) -> Balanced:
    """`text` parsed; fails the test if a tag is left open or closed out of order."""
    p = Balanced()
    p.feed(text)
    p.close()
    assert not p.problems and not p.stack, (p.problems, p.stack)
    return p


def test_the_notebook_is_stored_without_outputs():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert nb["nbformat"] == 4
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)


def test_every_code_cell_runs_in_order(monkeypatch):
    monkeypatch.chdir(NOTEBOOK.parent)  # as Jupyter starts it, beside the notebook
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    scope: dict = {"__name__": "__main__"}
    for i, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
        source = "".join(cell["source"])
        exec(compile(source, f"{NOTEBOOK.name} code cell {i + 1}", "exec"), scope)  # noqa: S102 (the notebook is ours)
    # what the cells displayed last is a result that displays itself
    assert "launch" in scope and "blocks" in scope
    parsed(scope["blocks"]._repr_html_())


def test_explain_displays_the_occupancy_table_and_a_timeline():
    import sim.notebook as ws

    page = ws.explain("L40S", 1_000_000, 256)._repr_html_()
    tags = parsed(page).tags
    assert "svg" in tags and "class='occupancy'" in page and "<caption" in page
    for limiter in ("warps", "blocks", "registers", "shared memory"):
        assert f"<td style='padding:2px 8px'>{limiter}</td>" in page
