"""A user's model file for a lane on another machine (issue 22): sent as bytes over the lane's channel, kept
there under its SHA-256, and each job given that copy's path, never the app's."""
from __future__ import annotations

import hashlib

import pytest

from crossover_lab.core.config import (ConfigError, FactoryModel, FactoryWidth, LaneSpec, ModelSpec, RunConfig,
                                       SavedModel, TrainSpec)
from crossover_lab.core.engine.remote import model_files
from crossover_lab.core.engine.remote.model_files import ModelStore, chunks, model_file
from crossover_lab.core.engine.remote.wire import decode, encode
from crossover_lab.core.messages import InspectJob, ModelChunk, RunJob, SwitchModel
from crossover_lab.core.study.saved import sending_problems


def _file(tmp_path, size: int) -> tuple[str, str]:
    path = tmp_path / "mine.keras"
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path.write_bytes(data)
    return str(path), hashlib.sha256(data).hexdigest()


def test_a_model_file_goes_in_chunks_over_the_wire_and_is_kept_whole_under_its_hash(tmp_path, monkeypatch):
    monkeypatch.setattr(model_files, "CHUNK_BYTES", 1000)
    path, sha = _file(tmp_path, 2500)
    saved = SavedModel(path, sha, 2500, "mine", (50, 50), 3, 10, 100, "", 2)
    job = RunJob("r1", RunConfig(ModelSpec(widths=(), family="saved", saved=saved), TrainSpec(data="synthetic")))
    found = model_file(job)
    assert found is not None and found.suffix == ".keras" and found.sha256 == sha
    sent = [decode(encode(c)) for c in chunks(found)]  # through the codec, as the channel sends them
    assert [(c.index, c.total) for c in sent] == [(0, 3), (1, 3), (2, 3)]
    store = ModelStore(tmp_path / "there")
    assert store.localized(job) == job  # nothing kept yet: the lane's own sentence will say the file is missing
    for chunk in sent:
        store.take(chunk)
    kept = store.path_of(sha, ".keras")
    assert not store.error and kept.read_bytes() == open(path, "rb").read()
    here = store.localized(job)
    assert here.config.model.saved.path == str(kept) and here.config.model.saved.sha256 == sha
    assert store.localized(SwitchModel(job.config)).config.model.saved.path == str(kept)
    inspect = store.localized(InspectJob(path, sha, 2500))
    assert inspect.path == str(kept)


def test_a_broken_transfer_leaves_no_file_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(model_files, "CHUNK_BYTES", 1000)
    path, sha = _file(tmp_path, 2500)
    found = model_file(InspectJob(path, sha, 2500))
    assert found is not None
    sent = list(chunks(found))
    store = ModelStore(tmp_path / "there")
    store.take(sent[0])
    store.take(sent[2])  # one lost on the way
    assert "out of order" in store.error and not store.path_of(sha, ".keras").exists()
    store.error = ""
    wrong = [ModelChunk(sha, ".keras", i, 3, c.data) for i, c in enumerate(reversed(sent))]  # other bytes
    for chunk in wrong:
        store.take(chunk)
    assert "SHA-256 differs" in store.error and not list((tmp_path / "there").iterdir())
    store.take(ModelChunk("../../etc/passwd", ".keras", 0, 1, ""))
    assert "malformed" in store.error


def test_a_factory_and_its_widths_are_named_by_the_copy_there(tmp_path):
    path = tmp_path / "f.py"
    path.write_text("def build(width):\n    return None\n")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    built = (FactoryWidth(8, SavedModel(str(path), sha, 30, "d8", (4,), 2, 10, 10, "", 1)),)
    factory = FactoryModel(str(path), sha, path.stat().st_size, "build", built)
    job = RunJob("r2", RunConfig(ModelSpec((8,), family="factory", factory=factory), TrainSpec(data="synthetic")))
    store = ModelStore(tmp_path / "there")
    found = model_file(job)
    assert found is not None and found.suffix == ".py"
    for chunk in chunks(found):
        store.take(chunk)
    here = store.localized(job).config.model.factory
    kept = str(store.path_of(sha, ".py"))
    assert here.path == kept and here.built[0].model.path == kept
    assert store.localized(InspectJob(str(path), sha, 30, factory, 8)).factory.path == kept


def test_a_file_too_big_to_send_or_changed_since_it_was_checked_is_a_sentence(tmp_path, monkeypatch):
    path, sha = _file(tmp_path, 3000)
    lanes = [LaneSpec.parse("cpu1"), LaneSpec.parse("ssh://lab-gpu/gpu0")]
    assert sending_problems(lanes, path, 3000) == []
    monkeypatch.setattr(model_files, "MAX_SENT_BYTES", 2000)
    (problem,) = sending_problems(lanes, path, 3000)
    assert "mine.keras" in problem and "lab-gpu" in problem
    assert sending_problems(lanes[:1], path, 3000) == []  # no remote lane: nothing is sent
    monkeypatch.setattr(model_files, "MAX_SENT_BYTES", 1 << 20)
    found = model_file(InspectJob(path, "0" * 64, 3000))
    assert found is not None
    with pytest.raises(ConfigError, match="changed since it was checked"):
        list(chunks(found))


def test_a_model_file_of_hundreds_of_kilobytes_passes_the_remote_guard_chunk_by_chunk(tmp_path):
    """Issue 35 #2: a 4 MiB chunk was a 5.6 MB text, and the remote's guard (64 Ki characters a text) ended the
    conversation for every saved model over about 48 KB. Each chunk now fits the guard; the file arrives whole."""
    from crossover_lab.core.engine.remote.guard import MAX_TEXT, checked

    path, sha = _file(tmp_path, 300_000)
    found = model_file(InspectJob(path, sha, 300_000))
    assert found is not None
    store = ModelStore(tmp_path / "there")
    sent = list(chunks(found))
    assert len(sent) == -(-300_000 // model_files.CHUNK_BYTES) > 1
    for chunk in sent:
        got = checked(decode(encode(chunk)))  # what the remote worker does with every line it reads
        assert isinstance(got, ModelChunk) and len(got.data) <= MAX_TEXT
        store.take(got)
    assert not store.error and store.path_of(sha, ".keras").read_bytes() == open(path, "rb").read()


def test_the_store_never_writes_through_a_link_planted_mid_transfer_nor_past_its_bound(tmp_path, monkeypatch):
    """Issue 35 #15: a `.part` replaced by a symlink between chunks is refused (the link's target untouched), and a
    transfer that declares more chunks than 256 MiB holds is refused before a byte is written."""
    monkeypatch.setattr(model_files, "CHUNK_BYTES", 1000)
    path, sha = _file(tmp_path, 2500)
    sent = list(chunks(model_file(InspectJob(path, sha, 2500))))
    store = ModelStore(tmp_path / "there")
    store.take(sent[0])
    target = tmp_path / "victim"
    target.write_bytes(b"keep")
    part = tmp_path / "there" / f"{sha}.part"
    part.unlink()
    part.symlink_to(target)
    store.take(sent[1])
    assert store.error and target.read_bytes() == b"keep"
    store.error = ""
    huge = ModelChunk(sha, ".keras", 0, 10**9, sent[0].data)
    store.take(huge)
    assert "at most 256 MiB" in store.error


@pytest.mark.parametrize("version, refused", [("3.10.0", True), ("3.11.2", True), ("3.11.3", False),
                                              ("3.15.0", False), ("3.16.0.dev2026", False)])
def test_a_lane_whose_keras_safe_mode_can_be_bypassed_refuses_to_load_a_model_file(version, refused):
    from crossover_lab.core.lane.saved import keras_too_old

    said = keras_too_old(version)
    assert bool(said) is refused
    if refused:
        assert version in said and "CVE-2025-9906" in said and "3.11.3 or later" in said
