"""The validator the export and import use gives the whole schema's verdict (``oneOf``) on
valid records and on every single-field corruption of them, and its error text names the
field but never the value. Also the bench runs end to end at a small size."""

from __future__ import annotations

import copy
import json

import pytest

import remem
from remem.service.logfacts_io import is_valid, schema_problem

from .kit import VALIDATOR, export_bytes, populate

BAD_VALUES = [None, -1, "", "SECRET-VALUE-9", {"x": 1}, [], True, 1.5]


def corruptions(rec: dict):
    for field in list(rec):
        for bad in BAD_VALUES:
            out = copy.deepcopy(rec)
            out[field] = bad
            yield out
        out = copy.deepcopy(rec)
        del out[field]
        yield out
    yield {**rec, "extraField": 1}
    yield {**rec, "scope": {**rec["scope"], "agentId": "x"}}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    s = remem.open(tmp_path_factory.mktemp("v") / "v.db")
    mem = s.create_memory("m1")
    populate(mem)
    yield [json.loads(x) for x in export_bytes(mem).splitlines()]
    s.close()


def test_branch_validation_agrees_with_the_whole_schema(exported):
    checked = 0
    for rec in exported:
        assert is_valid(rec) and VALIDATOR.is_valid(rec)
        for bad in corruptions(rec):
            assert is_valid(bad) == VALIDATOR.is_valid(bad), bad
            checked += 1
    assert checked > 500


def test_a_schema_problem_names_the_field_and_never_the_value(exported):
    for rec in exported:
        for bad in corruptions(rec):
            problem = schema_problem(bad)
            assert (problem is None) == VALIDATOR.is_valid(bad)
            if problem is not None:
                assert "SECRET" not in problem and "field '" in problem


def test_the_bench_measures_both_directions_and_writes_json_and_png(tmp_path):
    from remem.bench.export_bench import run_export_bench

    doc = run_export_bench(items=300, sources=20, backends=("sqlite",), out_dir=tmp_path,
                           log=lambda m: None)
    row = doc["results"][0]
    # 20 log entries, 300 facts each with its remem-item-state, the claim key (deliberate)
    assert row["records"] == 621 and row["round_trip_identical"] is True
    assert row["export_records_per_s"] > 0 and row["import_records_per_s"] > 0
    assert json.loads((tmp_path / "results.json").read_text())["results"][0] == row
    assert (tmp_path / "export.png").read_bytes()[:4] == b"\x89PNG"
