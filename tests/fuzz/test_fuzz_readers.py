"""The readers and `regenerate` under mutation fuzzing (see fuzz_kit.py). In the unit suite a
few hundred derandomized examples per target; `tox -e fuzz` runs the same tests with fresh
seeds and 100,000 examples each. Every crash found becomes a file under regressions/<target>/,
replayed here on every run."""
from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from profiles import examples

from fuzz_kit import TARGETS, check, mutated, write_seeds
from pnnx_reference.validate import validate

REGRESSIONS = Path(__file__).parent / "regressions"


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return write_seeds(tmp_path_factory.mktemp("seeds"))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_seed_files_are_accepted(name, seeds, workdir):
    target = TARGETS[name]
    assert check(target, seeds[target.seed].read_bytes(), workdir, seeds) == "accepted"


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_mutated_files_are_accepted_or_refused_in_one_line(name, seeds, workdir):
    target = TARGETS[name]
    data = seeds[target.seed].read_bytes()
    outcomes = Counter()

    @settings(max_examples=examples(150 if name == "regenerate" else 300))
    @given(st.data())
    def run(drawn):
        outcomes[check(target, drawn.draw(mutated(data), label="file"), workdir, seeds)] += 1

    began = time.monotonic()
    run()
    # the campaign's figures (`tox -e fuzz -- -s`): inputs tried, how each ended, time
    print(f"\nfuzz {name}: {sum(outcomes.values())} inputs, {outcomes['accepted']} accepted, "
          f"{outcomes['refused']} refused in one line, 0 crashes, {time.monotonic() - began:.0f} s")
    assert outcomes["refused"], "no mutation was refused: the mutator does not reach the reader's checks"


def _regressions():
    return sorted((p.parent.name, p) for p in REGRESSIONS.glob("*/*") if p.is_file())


@pytest.mark.parametrize("name, path", _regressions(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_regression(name, path, seeds, workdir):
    check(TARGETS[name], path.read_bytes(), workdir, seeds)


def test_every_regression_names_a_target():
    assert {name for name, _ in _regressions()} <= set(TARGETS)


def test_a_hostile_entry_name_is_reported_on_one_line(seeds, tmp_path):
    (tmp_path / "m.pnnx.param").write_bytes(seeds["pnnxparam"].read_bytes())
    (tmp_path / "m.pnnx.bin").write_bytes((REGRESSIONS / "pnnx.bin" / "newline_in_entry_name.pnnx.bin").read_bytes())
    problems = [str(p) for p in validate(tmp_path / "m.pnnx.param")]
    assert problems and all(len(p.splitlines()) == 1 for p in problems), problems
