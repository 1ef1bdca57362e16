"""The HTML report as a review tool: audit findings marked inline, every document reachable, one label per chip."""
from __future__ import annotations

import json
import re

from larvatus.report import build_report, provenance_titles, render_marked
from larvatus.run import run


def test_a_placeholder_chip_shows_its_label_once_and_findings_are_outlined():
    text = "[PER] lives at M20 6RT."
    page = render_marked(text, [(0, 5, "PER")], [(15, 22, "digits")])
    assert page.count("PER") == 2      # the placeholder text and its tooltip, no second chip
    assert '<mark class="entity" style="background:#f6b26b" title="PER">[PER]</mark>' in page
    assert '<mark class="finding" title="audit: digits">M20 6RT</mark>' in page


def test_a_chip_tooltip_says_where_its_entity_came_from():
    entities = [{"label": "PER", "source": "model", "recognizer": "PER"},
                {"label": "ORG", "source": "rule", "recognizer": "legal_form"}]
    assert provenance_titles(["PER", "ORG"], entities) == [
        "PER (model: PER)", "ORG (rule: legal_form)"]
    assert provenance_titles(["PER"], entities) == ["PER"]   # not one for one: labels alone
    assert provenance_titles(["PER"], [{"label": "PER"}]) == ["PER"]   # rows without a source
    page = render_marked("[ORG] paid.", [(0, 5, "ORG", "ORG (rule: legal_form)")])
    assert 'title="ORG (rule: legal_form)">[ORG]</mark>' in page


def test_text_is_escaped_around_marks():
    page = render_marked("<b>[ORG]</b>", [(3, 8, "ORG")])
    assert "&lt;b&gt;" in page and "<b>" not in page


def test_every_document_is_listed_under_a_search_box(tmp_path, rigged_model_dir):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": f"doc-{i}", "text": f"Jane met ACME {i}."}) + "\n"
                              for i in range(8)))
    out = tmp_path / "out"
    run(["--input", str(source), "--output", str(out), "--model", str(rigged_model_dir),
         "--device", "cpu"])
    page = build_report(str(out), samples=2)
    assert set(re.findall(r'<details data-id="(doc-\d)"', page)) == {f"doc-{i}" for i in range(8)}
    assert "larvatusFilter" in page and "All documents (8)" in page
    assert "Jane" not in page and "ACME" not in page
    assert 'title="PER (model: PER)">[PER]</mark>' in page   # each chip says what found it
    few = build_report(str(out), samples=2, max_documents=3)
    assert len(re.findall(r"<details data-id=", few)) == 3 and "3 of 8 documents listed" in few
