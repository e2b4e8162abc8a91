"""A built wheel carries the builtin models and installs no generic top-level modules: install it
into a fresh virtual environment and fill a gap offline, away from the source tree."""
from __future__ import annotations

import os
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps",
                        "--no-build-isolation", "-q", "-w", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    (whl,) = out.glob("infill_mlm-*.whl")     # the distribution's name: `infill` on PyPI is not ours
    return whl


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("infill_mlm-")}
    assert tops == {"infill", "infill_cli"}                 # no generic `cli` package
    models = Path(__file__).resolve().parents[1] / "data" / "models"
    shipped = sorted(f.relative_to(models).as_posix() for f in models.rglob("*") if f.is_file())
    assert "greek/lexicon.tsv" in shipped and "english/memory.safetensors" in shipped
    for model in shipped:                       # every file of every builtin, memories included
        assert f"infill/assets/models/{model}" in names, model
    assert "infill/serve/static/index.html" in names
    assert "infill/models/bigbird_blocks_768.npy" in names     # Ithaca's attention pattern
    assert "infill/assets/antibody/hiv_bnab_heavy.fa" in names
    (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    assert "\nName: infill-mlm\n" in zipfile.ZipFile(wheel).read(meta).decode()


def see_running_interpreters_packages(py: Path) -> None:
    """Let the venv of ``py`` import the heavy dependencies (torch, transformers, ...) from the
    interpreter running the tests -- itself often a venv, whose packages ``system_site_packages``
    would not show (it shows the *base* interpreter's) -- after its own site-packages, so the
    wheel's ``infill`` is the one imported. Plain path lines: the running interpreter's .pth hooks
    (e.g. an editable install of this checkout) are not run."""
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    parents = [p for p in site.getsitepackages() + [site.getusersitepackages()] if Path(p).is_dir()]
    (Path(purelib) / "_running_interpreter.pth").write_text("\n".join(parents) + "\n")


@pytest.mark.slow
def test_installed_wheel_fills_offline_outside_the_checkout(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    see_running_interpreters_packages(py)
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps",
                        "-q", str(wheel)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("INFILL_", "PYTHON"))} | {"HF_HUB_OFFLINE": "1",
                                                          "OMP_NUM_THREADS": "1"}
    where = subprocess.run([str(py), "-c", "import infill, infill_cli; "
                            "print(infill.__file__); print(infill_cli.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert where.returncode == 0, where.stderr
    assert all(str(env_dir) in line for line in where.stdout.splitlines()), where.stdout
    run = subprocess.run([str(env_dir / "bin" / "infill"), "run", "--json", "-k", "2",
                          "To be, or not to ___, that is the question."],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert '"error": null' in run.stdout and '"completions": [{"rank": 1' in run.stdout
    greek = subprocess.run([str(env_dir / "bin" / "infill"), "run", "-m", "builtin:greek", "-k", "1",
                            "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ?ος"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert greek.returncode == 0 and "Ἀχιλ" in greek.stdout, greek.stderr
