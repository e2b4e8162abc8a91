"""Shared set-up of the model tests."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from infill.data.builtins import builtin_path


@pytest.fixture(scope="module")
def recommending(tmp_path_factory):
    """``recommending(name, defaults)``: a copy of builtin ``name``'s folder whose
    ``defaults.json`` is ``defaults`` (the folder keeps the builtin's name)."""
    def copy(name: str, defaults: dict) -> Path:
        d = tmp_path_factory.mktemp("m") / name
        shutil.copytree(builtin_path(f"builtin:{name}"), d)
        (d / "defaults.json").write_text(json.dumps(defaults))
        return d
    return copy
