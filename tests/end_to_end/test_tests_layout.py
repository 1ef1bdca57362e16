"""The tests mirror the tree: every test file lives in a layer folder of tests/, in a package of its own."""
from __future__ import annotations

from tests.paths import ROOT

TESTS = ROOT / "tests"
LAYERS = ("transforms", "pipeline", "models", "bench", "end_to_end")


def _test_files() -> list:
    return sorted({*TESTS.rglob("test_*.py"), *TESTS.rglob("*_test.py")})


def test_every_test_file_lives_in_a_layer_folder():
    outside = [path.relative_to(ROOT).as_posix() for path in _test_files()
               if path.relative_to(TESTS).parts[0] not in LAYERS]
    assert not outside, f"test files outside tests/{{{','.join(LAYERS)}}}/: {outside}"


def test_every_folder_of_test_files_is_a_package():
    folders = {path.parent for path in _test_files()}
    assert {layer for layer in LAYERS if TESTS / layer in folders} == set(LAYERS)
    missing = [folder.relative_to(ROOT).as_posix() for folder in sorted(folders)
               if not (folder / "__init__.py").is_file()]
    assert not missing, f"folders of test files without __init__.py: {missing}"
