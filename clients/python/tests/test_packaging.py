"""The package builds and installs with no package index: the in-tree
backend (_build/zot_build.py) makes a wheel and an sdist with the standard
library, and ``pip install --no-index ./clients/python`` into a fresh venv
gives a zot_client that runs a prompt against the real zot.
"""

import base64
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile
from pathlib import Path

from harness import CLIENT_DIR, ZOT, requires_zot

sys.path.insert(0, str(CLIENT_DIR / "_build"))
import zot_build  # noqa: E402

try:
    import tomllib  # Python 3.11+
except ImportError:  # pragma: no cover - older Pythons check less
    tomllib = None

PACKAGE_FILES = sorted(
    f"zot_client/{p.name}" for p in (CLIENT_DIR / "zot_client").iterdir() if p.suffix == ".py" or p.name == "py.typed"
)


class BackendTest(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory(prefix="zot-build-test-")
        self.addCleanup(tmp.cleanup)
        self.out = tmp.name
        project = zot_build.read_project()
        self.dist = f"zot_client-{project['version']}"
        self.project = project

    def test_pyproject_is_read_as_toml_reads_it(self):
        if tomllib is None:
            self.skipTest("tomllib needs Python 3.11")
        with open(CLIENT_DIR / "pyproject.toml", "rb") as f:
            doc = tomllib.load(f)
        self.assertEqual(zot_build.read_project(), doc["project"])
        self.assertEqual(doc["build-system"]["requires"], [], "building must need nothing from an index")

    def test_wheel_holds_the_package_and_a_true_record(self):
        name = zot_build.build_wheel(self.out)
        self.assertEqual(name, f"{self.dist}-py3-none-any.whl")
        info = f"{self.dist}.dist-info"
        with zipfile.ZipFile(os.path.join(self.out, name)) as zf:
            want = PACKAGE_FILES + [f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD"]
            if zot_build.license_file() is not None:
                want.append(f"{info}/LICENSE")
            self.assertEqual(sorted(zf.namelist()), sorted(want))
            self.assertIn("zot_client/py.typed", zf.namelist())
            rows = [r.split(",") for r in zf.read(f"{info}/RECORD").decode().splitlines()]
            self.assertEqual(sorted(r[0] for r in rows), sorted(zf.namelist()))
            for path, digest, size in rows:
                if path.endswith("RECORD"):
                    self.assertEqual((digest, size), ("", ""))
                    continue
                data = zf.read(path)
                want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((digest, size), (f"sha256={want}", str(len(data))), path)
            meta = zf.read(f"{info}/METADATA").decode()
            wheel = zf.read(f"{info}/WHEEL").decode()
        self.assertIn("Name: zot-client\n", meta)
        self.assertIn(f"Version: {self.project['version']}\n", meta)
        self.assertIn("Requires-Python: >=3.9\n", meta)
        self.assertIn("# zot-client (Python)", meta, "the README is the long description")
        self.assertIn("Tag: py3-none-any\n", wheel)

    def test_sdist_holds_what_the_wheel_is_built_from(self):
        name = zot_build.build_sdist(self.out)
        self.assertEqual(name, f"{self.dist}.tar.gz")
        with tarfile.open(os.path.join(self.out, name)) as tf:
            names = sorted(tf.getnames())
            pkg_info = tf.extractfile(f"{self.dist}/PKG-INFO").read().decode()
        want = ["PKG-INFO", "README.md", "_build/zot_build.py", "pyproject.toml"] + PACKAGE_FILES
        if zot_build.license_file() is not None:
            want.append("LICENSE")
        self.assertEqual(names, sorted(f"{self.dist}/{p}" for p in want))
        self.assertIn("Name: zot-client\n", pkg_info)

    def test_archives_are_reproducible(self):
        first, second = os.path.join(self.out, "a"), os.path.join(self.out, "b")
        os.mkdir(first)
        os.mkdir(second)
        for build in (zot_build.build_wheel, zot_build.build_sdist):
            a, b = build(first), build(second)
            self.assertEqual(
                Path(first, a).read_bytes(), Path(second, b).read_bytes(), f"{build.__name__} differs between runs"
            )


# Run by the installed package's Python, from a directory without the
# source tree: one prompt against zot on the scripted provider.
INSTALLED_PROBE = r"""
import json, os, sys
import zot_client
from zot_client import Client, TextDeltaEvent
here = os.path.dirname(zot_client.__file__)
with Client(["--provider", "scripted", "--cwd", sys.argv[2]], binary=sys.argv[1], env={"ZOTCORE_RPC_TOKEN": None}) as zot:
    zot.prompt("list the files").collect()
    text = "".join(ev.delta for ev in zot.prompt("hello").collect() if isinstance(ev, TextDeltaEvent))
print(json.dumps({"file": zot_client.__file__, "typed": os.path.exists(os.path.join(here, "py.typed")), "text": text}))
"""


class PipInstallTest(unittest.TestCase):
    @requires_zot
    def test_pip_install_no_index_then_prompt(self):
        tmp = tempfile.TemporaryDirectory(prefix="zot-pip-test-")
        self.addCleanup(tmp.cleanup)
        venv = Path(tmp.name, "venv")
        py = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONPATH"}
        env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
        install = ["install", "--no-index", "--no-cache-dir", str(CLIENT_DIR)]
        if _pip_takes_python():
            # This Python's pip installs into the venv: no pip of its own
            # to set up there, which takes longer than the rest.
            run([sys.executable, "-m", "venv", "--without-pip", str(venv)], env)
            run([sys.executable, "-m", "pip", "--python", str(py)] + install, env)
        else:
            run([sys.executable, "-m", "venv", str(venv)], env)
            run([str(py), "-m", "pip"] + install, env)

        work = Path(tmp.name, "work")
        work.mkdir()
        out = run([str(py), "-c", INSTALLED_PROBE, ZOT, str(work)], env, cwd=str(work))
        got = json.loads(out.splitlines()[-1])
        self.assertTrue(Path(got["file"]).resolve().is_relative_to(venv.resolve()), got["file"])
        self.assertTrue(got["typed"], "py.typed is installed")
        self.assertEqual(got["text"], "You said: hello")


def _pip_takes_python() -> bool:
    """Whether this Python has a pip that installs into another (--python,
    pip 22.3 and later)."""
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if out.returncode != 0:
        return False
    try:
        major, minor = (int(x) for x in out.stdout.split()[1].split(".")[:2])
    except (IndexError, ValueError):
        return False
    return (major, minor) >= (22, 3)


def run(argv, env, cwd=None) -> str:
    p = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p.stdout


if __name__ == "__main__":
    unittest.main()
