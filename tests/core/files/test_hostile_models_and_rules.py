"""Model files and rule files an attacker (or an unlucky disk) made: a tiny .keras whose config.json unpacks to
hundreds of MB, a config nested 100,000 deep, a rule read from /dev/zero, a fifo or a file nested too deep. Each is
a sentence, with the memory it takes bounded by Crossover's limits, never by what the file declares."""
from __future__ import annotations

import json
import os
import tracemalloc
import zipfile

import pytest

from crossover_lab.core.config import ConfigError
from crossover_lab.core.files.saved_model import MAX_CONFIG_BYTES, check_saved_model
from crossover_lab.core.json_data import JsonError, nesting_depth, parse_json
from crossover_lab.core.report.rule import load_rule


def keras_file(path, config: bytes) -> str:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("config.json", config)
        archive.writestr("metadata.json", b"{}")
    return str(path)


def test_a_tiny_model_file_whose_config_unpacks_past_the_bound_is_refused_reading_no_more_than_the_bound(tmp_path):
    # 100 MB of spaces around an object: a file of a hundred KB.
    path = keras_file(tmp_path / "bomb.keras", b"{" + b" " * (100 << 20) + b"}")
    assert os.path.getsize(path) < 1 << 20
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match=r"config.json is longer than 16 MB"):
            check_saved_model(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * MAX_CONFIG_BYTES, peak  # what was read is bounded by the limit, not the file's 100 MB


@pytest.mark.parametrize("config, words", [
    (b"[" * 100_000 + b"]" * 100_000, "nests 100000 levels deep"),
    (json.dumps({"a": [{"b": [{"c": []}]}]}).replace("[]", "[" * 950 + "]" * 950).encode(), "levels deep"),
    (b"not json", "is not JSON"),
])
def test_a_config_nested_too_deep_or_not_json_is_a_sentence(tmp_path, config, words):
    with pytest.raises(ConfigError, match=words):
        check_saved_model(keras_file(tmp_path / "deep.keras", config))


def test_the_depth_of_a_json_text_is_counted_without_parsing_it_and_strings_do_not_count():
    assert nesting_depth(b'{"a": [1, {"b": "[[[{{{"}], "c": "\\"[["}') == 3
    assert nesting_depth("") == 0 and nesting_depth('"x"') == 0
    assert parse_json('{"a": [1, 2]}', "x") == {"a": [1, 2]}
    with pytest.raises(JsonError, match="x nests 65 levels deep, more than the 64"):
        parse_json("[" * 65 + "]" * 65, "x")


@pytest.mark.parametrize("make, words", [
    (lambda d: "/dev/zero", "not a regular file"),
    (lambda d: (os.mkfifo(d / "fifo"), str(d / "fifo"))[1], "not a regular file"),
    (lambda d: ((d / "deep.json").write_text("[" * 5000 + "]" * 5000), str(d / "deep.json"))[1], "levels deep"),
    (lambda d: ((d / "big.json").write_text('{"a": "' + "x" * (17 << 20) + '"}'), str(d / "big.json"))[1],
     "longer than 16 MB"),
], ids=["/dev/zero", "fifo", "deep", "too long"])
def test_a_rule_file_that_is_no_rule_is_refused_with_a_sentence_and_read_within_a_bound(tmp_path, make, words):
    with pytest.raises(ConfigError, match=words):
        load_rule(make(tmp_path))
