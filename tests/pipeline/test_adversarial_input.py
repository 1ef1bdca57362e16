"""Adversarial input: unsplittable names, invisible characters, compression bombs, slow records and broken models are handled, never a crash or a leak."""
from __future__ import annotations

import re
import time
import unicodedata

import pytest
from hypothesis import given, settings, strategies as st

from larvatus.transforms import segment as segment_lib
from larvatus import beam_stages
from larvatus.transforms import stages
from larvatus.transforms.budget import RecordTimeout, TimeBudget, check_record_timeout
from larvatus.transforms.chars import normalize_surface, visible
from larvatus.transforms.records import DEAD_LETTER_REASONS, Document, EntitySpan
from larvatus.transforms.redact import (
    RedactionPolicy, may_seed, propagate_mentions, pseudonym, redact, redact_text, resolve_overlaps)
from larvatus.transforms.segment import segment, segment_words

REDACTED = frozenset({"PER", "LOC", "ORG"})
KEY = b"k" * 32


def seg(text):
    return segment(Document("d", text, "src"))


def words_of(text):
    starts, ends = segment_words(text)
    return [text[s:e] for s, e in zip(starts, ends)]


def span_of(text, surface, label, score=0.9, occurrence=0):
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(surface, start + 1)
    return EntitySpan(start, start + len(surface), label, score)


# --- propagation reaches inside spans that are not redacted ----------------------

def test_a_redacted_name_is_redacted_inside_a_misc_span():
    text = "Angela Merkel met reporters. The Merkel era is over. Merkel smiled."
    detected = [span_of(text, "Angela Merkel", "PER"), span_of(text, "The Merkel era", "MISC"),
                span_of(text, "Merkel", "PER", occurrence=2)]
    entities, redacted, _ = redact(seg(text), detected, RedactionPolicy(REDACTED))
    assert redacted == "[PER] met reporters. The [PER] era is over. [PER] smiled."
    assert "Merkel" not in redacted
    assert [(text[e.start:e.end], e.label, e.propagated) for e in entities] == [
        ("Angela Merkel", "PER", False), ("Merkel", "PER", True), ("Merkel", "PER", False)]


def test_a_name_inside_an_unredacted_title_is_redacted():
    text = "Smith won the final. The Smith Cup went to him."
    detected = [span_of(text, "Smith", "PER"), span_of(text, "The Smith Cup", "MISC")]
    _, redacted, _ = redact(seg(text), detected, RedactionPolicy(REDACTED))
    assert redacted == "[PER] won the final. The [PER] Cup went to him."


def test_a_redacted_span_beats_a_longer_span_that_is_not_redacted():
    misc = EntitySpan(0, 14, "MISC", 0.99)
    person = EntitySpan(4, 10, "PER", 0.5)
    assert resolve_overlaps([misc, person], REDACTED) == (person,)
    assert resolve_overlaps([misc, person]) == (misc,)          # no labels: longer wins


def test_misc_spans_do_not_hide_mentions_from_propagation():
    text = "Merkel spoke. The Merkel era ended."
    detected = [span_of(text, "Merkel", "PER"), span_of(text, "The Merkel era", "MISC")]
    found = propagate_mentions(seg(text), detected, REDACTED)
    assert [(text[s.start:s.end], s.propagated) for s in found] == [("Merkel", True)]


NAMES = ["Merkel", "Smith", "Zoë", "Cup", "Era"]


@st.composite
def word_documents(draw):
    words = draw(st.lists(st.sampled_from(NAMES + ["the", "met", "and"]), min_size=1,
                          max_size=25))
    text = " ".join(words)
    starts, ends = segment_words(text)
    spans = []
    for _ in range(draw(st.integers(0, 6))):
        first = draw(st.integers(0, len(starts) - 1))
        last = draw(st.integers(first, min(first + 3, len(starts) - 1)))
        spans.append(EntitySpan(starts[first], ends[last],
                                draw(st.sampled_from(["PER", "MISC", "LOC"])),
                                draw(st.floats(0.1, 1.0))))
    return text, spans


@settings(max_examples=200, deadline=None)
@given(word_documents())
def test_property_every_occurrence_of_a_redacted_name_is_redacted(case):
    """After redaction, every other occurrence of a name redacted on its own evidence (as
    words) meets a redacted entity, whatever non-redacted spans lie over it; a seed that
    is only a function word ("the") spreads nowhere."""
    text, spans = case
    segmented = seg(text)
    policy = RedactionPolicy(frozenset({"PER", "LOC"}))
    entities, redacted, replacements = redact(segmented, spans, policy)
    assert all(a.end <= b.start for a, b in zip(entities, entities[1:]))  # no overlaps
    words = [normalize_surface(segmented.word_text(i)) for i in range(segmented.num_words)]
    kept = [e for e in entities if e.label in policy.labels]
    for source in (e for e in kept if may_seed(text, e, policy.labels)):
        key = normalize_surface(text[source.start:source.end]).split()
        for i in range(len(words) - len(key) + 1):
            if words[i:i + len(key)] != key:
                continue
            start = segmented.word_starts[i]
            end = segmented.word_ends[i + len(key) - 1]
            assert any(e.start < end and start < e.end for e in kept), (text, key, i)
    assert len(replacements) == len(kept)


# --- invisible and control characters do not split or glue words -----------------

def test_joiners_inside_a_name_keep_it_one_word():
    assert words_of("Pe\u200dter Mwa\u200dngi") == ["Pe\u200dter", "Mwa\u200dngi"]
    assert words_of("Zbig\u200dniew") == ["Zbig\u200dniew"]
    assert words_of("Zo\ufe0fe\u00ad Kowal\u2060czyk") == ["Zo\ufe0fe\u00ad", "Kowal\u2060czyk"]


def test_control_characters_separate_words():
    assert words_of("Quartermaine\x00visited") == ["Quartermaine", "visited"]
    assert words_of("a\x01b\x7fc\x9fd\x1be") == ["a", "b", "c", "d", "e"]


def test_emoji_are_still_split_from_names():
    assert words_of("👍🏽Zoë") == ["👍🏽", "Zoë"]
    assert words_of("👩\u200d👩\u200d👧 met ❤\ufe0f") == ["👩\u200d👩\u200d👧", "met", "❤\ufe0f"]


def test_an_invisible_character_at_a_word_edge_joins_that_word():
    assert words_of("Angela\u200d Merkel") == ["Angela\u200d", "Merkel"]
    assert words_of("\u200dAngela \u200d.") == ["\u200dAngela", "\u200d."]
    assert words_of("Angela \u200b Merkel") == ["Angela", "\u200b", "Merkel"]   # a lone one stays a word


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["Peter", "Mwangi", "Zoë", "met", "at", "NASA", ".", ",", "👍🏽",
                                 "(", ")", "'s"]), min_size=1, max_size=20),
       st.data())
def test_property_invisible_characters_inside_words_change_no_boundary(tokens, data):
    """Putting joiners, soft hyphens or variation selectors inside words changes neither
    the words nor their boundaries: only the offsets move to make room for them."""
    text = " ".join(tokens)
    plain = words_of(text)
    hidden_text = "".join(
        c + (data.draw(st.sampled_from(["", "\u200d", "\u00ad", "\ufe0f", "\u2060"]))
             if i + 1 < len(text) and not text[i + 1].isspace() and not c.isspace() else "")
        for i, c in enumerate(text))
    assert [visible(w) for w in words_of(hidden_text)] == plain


def test_joiners_and_controls_through_the_pipeline(rigged_model_dir):
    from apache_beam.testing.test_pipeline import TestPipeline
    from apache_beam.testing.util import assert_that, equal_to
    import apache_beam as beam

    from larvatus.graph import AnnotateDocuments
    from tests.pipeline.test_graph import job_config

    text = "Pe\u200dter Mwa\u200dngi met Zbig\u200dniew; Quartermaine\x00visited."
    with TestPipeline() as p:
        outputs = p | beam.Create([Document("a", text, "f:1")]) | AnnotateDocuments(
            job_config(rigged_model_dir))
        assert_that(outputs["annotated"] | beam.Map(
            lambda d: (d.redacted_text, [d.document.text[e.start:e.end] for e in d.entities])),
            equal_to([("[PER] met [PER]; [PER]\x00visited.",
                       ["Pe\u200dter Mwa\u200dngi", "Zbig\u200dniew", "Quartermaine"])]))


# --- pseudonyms and numbering see through Unicode forms ----------------------------

ZOE_FORMS = ["Zoë Kowalczyk", unicodedata.normalize("NFD", "Zoë Kowalczyk"),
             "Zo\u00adë Kowalczyk", "ZOË  KOWALCZYK", "Zoë\u200d Kowalczyk"]


def test_one_pseudonym_for_every_form_of_a_name():
    assert len({pseudonym("PER", form, KEY) for form in ZOE_FORMS}) == 1
    assert len({normalize_surface(form) for form in ZOE_FORMS}) == 1


def test_indexed_numbering_sees_through_forms():
    text = " and ".join(ZOE_FORMS[:3])
    spans = [span_of(text, form, "PER") for form in ZOE_FORMS[:3]]
    redacted, _ = redact_text(text, spans, RedactionPolicy(REDACTED, style="indexed"))
    assert redacted == "[PER_1] and [PER_1] and [PER_1]"


def test_propagation_matches_other_forms():
    nfd = unicodedata.normalize("NFD", "Zoë Kowalczyk")
    text = f"Zoë Kowalczyk spoke. Later {nfd} and Zo\u00adë Kowalczyk left."
    found = propagate_mentions(seg(text), [span_of(text, "Zoë Kowalczyk", "PER")], REDACTED)
    assert [text[s.start:s.end] for s in found] == [nfd, "Zo\u00adë Kowalczyk"]


# --- segmentation is linear in the record's length --------------------------------

@pytest.mark.parametrize("text", [
    "!" * 20_000, "=" * 20_000, "(" * 20_000, "'s" * 10_000, "😀!" * 10_000, ":)" * 10_000,
    "$" * 20_000, "…" * 20_000,
], ids=["bang", "equals", "paren", "apostrophe-s", "emoji-bang", "smiley", "dollar", "ellipsis"])
def test_punctuation_runs_segment_in_linear_time(text):
    segment_lib.english_tokenizer()
    started = time.perf_counter()
    starts, ends = segment_words(text)
    elapsed = time.perf_counter() - started
    assert elapsed < 3.0, f"{elapsed:.1f} s"     # quadratic before: 20,000 "!" took 26 s
    assert ends[-1] == len(text) and all(a < b for a, b in zip(starts, ends))


def test_spacy_never_sees_a_long_chunk(monkeypatch):
    seen = []
    real = segment_lib.english_tokenizer()
    monkeypatch.setattr(segment_lib, "english_tokenizer", lambda: lambda text: (
        seen.append(max((len(c) for c in re.findall(r"\S+", text)), default=0)) or real(text)))
    text = "Ada " + "!" * 5000 + " met " + "'s" * 3000 + " Bob " + "x" * 70 + "." + " end"
    words = words_of(text)
    assert max(seen) <= segment_lib.LONG_CHUNK
    assert words[:1] == ["Ada"] and words[-1] == "end" and "x" * 70 in words


# --- a per-record time budget dead-letters what still runs too long ----------------

class _SlowOnSecrets(stages.Segment):
    def step(self, document):
        if "slow" in document.doc_id:
            time.sleep(3)
        return super().step(document)


def test_a_record_over_its_budget_is_dead_lettered_and_the_next_goes_on():
    stage = beam_stages.BeamStageChain([_SlowOnSecrets()], 0.3)
    started = time.perf_counter()
    [slow] = list(stage.process(Document("slow-1", "Angela Merkel spoke.", "f:1")))
    assert time.perf_counter() - started < 2.5
    assert slow.tag == beam_stages.DEAD
    letter = slow.value
    assert (letter.source, letter.reason, letter.doc_id) == ("f:1", "timeout", "slow-1")
    assert letter.detail == "segment took more than 0.3 s" and "Merkel" not in letter.detail
    [fast] = list(stage.process(Document("ok", "Hello there", "f:2")))
    assert fast.num_words == 2
    stage.teardown()


def test_time_budget_passes_results_and_errors_through():
    budget = TimeBudget(5)
    assert budget.run(lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(KeyError):
        budget.run({}.__getitem__, "missing")
    with pytest.raises(RecordTimeout):
        TimeBudget(0.05).run(time.sleep, 1)
    with pytest.raises(ValueError):
        check_record_timeout(-3)
    assert check_record_timeout(0) is None


def test_stages_with_a_budget_still_pickle():
    import pickle

    stage = beam_stages.BeamStageChain([stages.Segment()], 1)
    list(stage.process(Document("d", "Hello there", "f:1")))   # starts its worker
    copy = pickle.loads(pickle.dumps(stage))
    assert [w.num_words for w in copy.process(Document("d", "Hello there", "f:1"))] == [2]


@pytest.mark.slow
def test_record_timeout_through_the_command_line(rigged_model_dir, tmp_path):
    import json

    from larvatus.run import run

    source = tmp_path / "in.jsonl"
    huge = "Ada met Bob. " * 150_000     # 1.95 M characters: seconds in segment and encode
    source.write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "text": "Ada met Bob."}, {"id": "huge", "text": huge},
        {"id": "b", "text": "Carol left."}]) + "\n")
    summary = run(["--input", str(source), "--output", str(tmp_path / "out"),
                   "--model", str(rigged_model_dir), "--device", "cpu",
                   "--record-timeout", "0.5"])
    assert summary["counts_add_up"] and summary["records_out"] == 2
    assert summary["dead_lettered_by_reason"] == {"timeout": 1}
    assert summary["options"]["record_timeout"] == 0.5


# --- compressed input, truncated streams, bounded reads --------------------

def _compress(data: bytes, suffix: str) -> bytes:
    import bz2, gzip, lzma, zlib

    import zstandard

    return {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress,
            ".lzma": lambda d: lzma.compress(d, format=lzma.FORMAT_ALONE),
            ".deflate": zlib.compress, ".zst": zstandard.ZstdCompressor().compress}[suffix](data)


def _read_file(path, fmt="auto", max_chars=1_000_000):
    from apache_beam.io.filesystem import FileMetadata
    from apache_beam.io.fileio import ReadableFile

    stage = beam_stages.ReadRecords(fmt, "id", "text", max_chars)
    return [getattr(out, "value", out) for out in stage.process(
        ReadableFile(FileMetadata(str(path), path.stat().st_size)))]


JSONL = b'{"id": "a", "text": "Ada met Bob."}\n\n{"id": "b", "text": "Carol left."}\n'


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".lzma", ".deflate", ".zst"])
def test_compressed_jsonl_and_text_are_read_for_every_compression(tmp_path, suffix):
    jsonl = tmp_path / f"in.jsonl{suffix}"
    jsonl.write_bytes(_compress(JSONL, suffix))
    assert [(d.doc_id, d.text) for d in _read_file(jsonl)] == [
        ("a", "Ada met Bob."), ("b", "Carol left.")]
    text = tmp_path / f"in.txt{suffix}"
    text.write_bytes(_compress("Zoë Ødegård wrote this.\n".encode(), suffix))
    [document] = _read_file(text)
    assert document.text == "Zoë Ødegård wrote this.\n"


def test_concatenated_gzip_members_are_one_stream(tmp_path):
    import gzip

    path = tmp_path / "in.jsonl.gz"
    path.write_bytes(gzip.compress(JSONL) + gzip.compress(JSONL))
    assert [d.doc_id for d in _read_file(path)] == ["a", "b", "a", "b"]


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst", ".deflate"])
def test_a_truncated_compressed_file_is_unreadable_not_shorter(tmp_path, suffix):
    import json

    records = b"".join(json.dumps({"id": str(i), "text": f"word {i} " * 40}).encode() + b"\n"
                       for i in range(400))
    data = _compress(records, suffix)
    path = tmp_path / f"in.jsonl{suffix}"
    path.write_bytes(data[:len(data) * 2 // 3])
    results = _read_file(path)
    *documents, letter = results
    assert all(isinstance(d, Document) for d in documents) and len(documents) < 400
    assert [d.doc_id for d in documents] == [str(i) for i in range(len(documents))]
    assert letter.reason == "unreadable_file"
    assert letter.detail == f"truncated: the compressed stream ends early after {len(documents)} records"
    assert letter.source == f"{path}:after-record-{len(documents)}"

    text = tmp_path / f"in.txt{suffix}"
    content = _compress(("Xanthippe Moreau " * 5000).encode(), suffix)
    text.write_bytes(content[:len(content) // 2])
    [letter] = _read_file(text)
    assert letter.reason == "unreadable_file" and letter.detail.startswith("truncated")


@pytest.mark.parametrize("suffix", [".gz", ".xz", ".zst"])
def test_corrupt_compressed_data_is_unreadable_after_the_records_before_it(tmp_path, suffix):
    import json

    records = b"".join(json.dumps({"id": str(i), "text": f"w{i} " * 200}).encode() + b"\n"
                       for i in range(300))
    data = bytearray(_compress(records, suffix))
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i] ^= 0x5A
    path = tmp_path / f"in.jsonl{suffix}"
    path.write_bytes(bytes(data))
    *documents, letter = _read_file(path)
    assert letter.reason == "unreadable_file" and len(documents) < 300
    assert letter.detail.startswith("corrupt: the compressed data cannot be decoded"), letter.detail


def test_a_compressed_text_bomb_is_too_large_without_being_expanded(tmp_path):
    import gzip
    import tracemalloc

    path = tmp_path / "bomb.txt.gz"
    with gzip.open(path, "wb", compresslevel=9) as handle:
        for _ in range(200):
            handle.write(b"a" * 1_000_000)          # 200 MB of text in about 200 KB
    tracemalloc.start()
    try:
        [letter] = _read_file(path, max_chars=1000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert letter.reason == "too_large"
    assert peak < 5_000_000, f"{peak / 1e6:.0f} MB"   # Beam's CompressedFile held 200 MB


def test_a_jsonl_line_too_long_for_max_chars_is_skipped_unread(tmp_path):
    from larvatus.transforms import read as read_lib

    limit = read_lib.jsonl_line_limit(10)
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"id": "huge", "text": "' + b"x" * (limit + 10) + b'"}\n'
                     + b'{"id": "next", "text": "Ada"}\n')
    letter, document = _read_file(path, max_chars=10)
    assert letter.reason == "too_large" and letter.source == f"{path}:1"
    assert document.doc_id == "next" and document.source == f"{path}:2"


# --- an empty document is a document ---------------------------------------------

def test_empty_and_whitespace_documents_come_out_unchanged(rigged_model_dir):
    from apache_beam.testing.test_pipeline import TestPipeline
    from apache_beam.testing.util import assert_that, equal_to
    import apache_beam as beam

    from larvatus.graph import AnnotateDocuments
    from tests.pipeline.test_graph import job_config

    documents = [Document("e", "", "f:1"), Document("w", " \n\t\u3000", "f:2"),
                 Document("c", "\x00\x01", "f:3"), Document("a", "Ada spoke.", "f:4")]
    with TestPipeline() as p:
        outputs = p | beam.Create(documents) | AnnotateDocuments(job_config(rigged_model_dir))
        assert_that(outputs["annotated"] | beam.Map(
            lambda d: (d.document.doc_id, d.redacted_text,
                       [(e.start, e.end, e.label) for e in d.entities])), equal_to([
                ("e", "", []), ("w", " \n\t\u3000", []), ("c", "\x00\x01", []),
                ("a", "[PER] spoke.", [(0, 3, "PER")])]))
        assert_that(outputs["dead_letter"], equal_to([]), label="NoDeadLetters")


def test_an_empty_document_realigns_to_no_spans_with_the_recall_first_decision():
    from larvatus.transforms.labels import read_scheme
    from larvatus.transforms.realign import RedactionDecision, realign
    from larvatus.transforms.records import EncodedDocument

    scheme = read_scheme(("O", "B-PER", "I-PER"))
    for text in ("", "  ", "\u200b"):
        encoded = EncodedDocument(seg(text), (), 0)
        assert realign(encoded, [], scheme, "first", RedactionDecision(frozenset({"PER"}))) == ()
        assert realign(encoded, [], scheme, "first") == ()


def test_empty_documents_are_counted_not_dead_lettered(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"id": "e", "text": ""}\n{"id": "w", "text": "  "}\n{"id": "a", "text": "x"}\n')
    assert [d.doc_id for d in _read_file(path)] == ["e", "w", "a"]
    assert "empty_text" not in DEAD_LETTER_REASONS


# --- model faults are caught by load_model_spec, with what to fix -------------------

def _broken_model(rigged_model_dir, tmp_path, **config_changes):
    import json
    import shutil

    model = tmp_path / "model"
    shutil.copytree(rigged_model_dir, model)
    config = json.loads((model / "larvatus_model.json").read_text())
    config.update(config_changes)
    (model / "larvatus_model.json").write_text(json.dumps(config))
    return model


@pytest.mark.parametrize("changes, message", [
    ({"labels": None}, r"labels must be a list of label names .* not null"),
    ({"labels": "B-PER"}, r"labels must be a list of label names .* not 'B-PER'"),
    ({"labels": ["O", "B-PER", 3]}, r"labels\[2\] is 3"),
    ({"max_length": "abc"}, r"max_length must be a whole number of wordpieces .* not 'abc'"),
    ({"max_length": 64.5}, r"max_length must be a whole number"),
    ({"max_length": 4096}, r"max_length 4096 is larger than the 64 positions .* at most 64"),
    ({"special_tokens": {"cls": "<s>", "sep": "</s>"}},
     r"tokenizer has no '<s>' token \(special_tokens.cls\).*\[CLS\]"),
    ({"special_tokens": ["[CLS]"]}, r"special_tokens must be an object"),
    ({"onnx": "model.onnx"}, r"onnx must map devices to file names"),
], ids=["labels-null", "labels-string", "label-number", "max-length-abc", "max-length-float",
        "max-length-past-positions", "special-tokens-missing", "special-tokens-list", "onnx-string"])
def test_broken_model_configs_fail_in_load_model_spec(rigged_model_dir, tmp_path, changes,
                                                             message):
    from larvatus.models.model_dir import ModelError, load_model_spec

    with pytest.raises(ModelError, match=message):
        load_model_spec(_broken_model(rigged_model_dir, tmp_path, **changes))


def test_a_truncated_tokenizer_fails_in_load_model_spec(rigged_model_dir, tmp_path):
    from larvatus.models.model_dir import ModelError, load_model_spec

    model = _broken_model(rigged_model_dir, tmp_path)
    content = (model / "tokenizer.json").read_bytes()
    (model / "tokenizer.json").write_bytes(content[:len(content) // 2])
    with pytest.raises(ModelError, match=r"tokenizer.json cannot be read .* truncated.*save_pretrained"):
        load_model_spec(model)


def test_position_embeddings_read_without_onnx_agree_with_onnx(rigged_model_dir):
    import onnx  # train extra, installed for tests
    from larvatus.models.model_dir import DEFAULT_MODEL_DIR
    from larvatus.models.onnx_shapes import initializer_shapes, position_embedding_rows

    for path in [*rigged_model_dir.glob("*.onnx"), *DEFAULT_MODEL_DIR.glob("*.onnx")]:
        expected = {i.name: tuple(i.dims)
                    for i in onnx.load(str(path), load_external_data=False).graph.initializer}
        assert initializer_shapes(path) == expected
    assert position_embedding_rows(next(rigged_model_dir.glob("*.onnx"))) == 64
    assert position_embedding_rows(next(DEFAULT_MODEL_DIR.glob("*.onnx"))) == 512


def test_a_broken_model_is_a_message_at_the_command_line(rigged_model_dir, tmp_path, capsys):
    from larvatus.run import main

    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "Ada"}\n')
    model = _broken_model(rigged_model_dir, tmp_path, labels=None)
    code = main(["--input", str(source), "--output", str(tmp_path / "out"), "--model", str(model)])
    assert code == 2
    err = capsys.readouterr().err
    assert "larvatus run: error:" in err and "labels must be a list" in err and "Traceback" not in err


# --- bad numeric options stop the job at the command line ---------------------------

@pytest.mark.parametrize("option, value, message", [
    ("--window-length", "0", "--window-length/--window-overlap: max_length must be at least 4"),
    ("--intra-op-threads", "-3", "intra_op_threads must be 0"),
    ("--record-timeout", "-1", "--record-timeout: must be a positive number of seconds"),
])
def test_bad_numbers_are_option_errors(rigged_model_dir, tmp_path, capsys, option, value,
                                              message):
    from larvatus.run import main

    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "Ada"}\n')
    code = main(["--input", str(source), "--output", str(tmp_path / "out"),
                 "--model", str(rigged_model_dir), option, value])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# --- wording -------------------------------------------------------------------------

def test_dead_letter_wording():
    from larvatus.transforms.read import parse_json_line

    def detail(line):
        return parse_json_line(line, "f:1", "id", "text").detail

    assert detail(b'{"id": "a", "text": "Angela Mer') == \
        "Unterminated string starting at: line 1 column 21"
    assert detail(b"null") == "line holds null, not an object"
    assert detail(b"[1]") == "line holds an array, not an object"
    assert detail(b'{"id": "a", "text": {"x": 1}}') == "text is an object"


# --- the sweep (bench/hostile.py): its quick subset runs in CI ---------------------------

@pytest.mark.slow
def test_hostile_sweep_quick_subset(tmp_path):
    """The command line on the quick hostile cases, each in its own process: every outcome
    as expected, and a 60 MB text file peaks no higher than a two-line JSONL file."""
    from bench import hostile

    rows = hostile.sweep([c for c in hostile.CASES if c.quick], keep=tmp_path,
                         echo=lambda *args: None)
    assert [r["case"] for r in rows if not r["ok"]] == [], rows
    peaks = {r["case"]: r["peak_mib"] for r in rows}
    assert peaks["big-text-file-60MB"] < peaks["merkel-in-misc"] + 50, peaks
