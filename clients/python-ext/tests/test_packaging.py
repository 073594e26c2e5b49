"""zot_ext builds and installs as the client does, with no package index:
the same in-tree backend (_build/zot_build.py, one file shared with
clients/python) makes its wheel, and ``pip install --no-index
./clients/python-ext`` into a fresh venv gives a zot_ext that an extension
run by the real zot imports.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

from harness import PACKAGE_DIR, REPO, ZOT, requires_zot

sys.path.insert(0, str(PACKAGE_DIR / "_build"))
import zot_build  # noqa: E402

try:
    import tomllib  # Python 3.11+
except ImportError:  # pragma: no cover - older Pythons check less
    tomllib = None


class BackendTest(unittest.TestCase):
    def test_the_backend_is_the_clients(self):
        ours = (PACKAGE_DIR / "_build" / "zot_build.py").read_bytes()
        theirs = (REPO / "clients" / "python" / "_build" / "zot_build.py").read_bytes()
        self.assertEqual(ours, theirs, "clients/python-ext/_build/zot_build.py must be a copy of clients/python's")

    def test_pyproject_is_read_as_toml_reads_it(self):
        if tomllib is None:
            self.skipTest("tomllib needs Python 3.11")
        with open(PACKAGE_DIR / "pyproject.toml", "rb") as f:
            doc = tomllib.load(f)
        self.assertEqual(zot_build.read_project(), doc["project"])
        self.assertEqual(doc["build-system"]["requires"], [], "building must need nothing from an index")

    def test_wheel_holds_the_typed_package(self):
        with tempfile.TemporaryDirectory(prefix="zot-ext-build-") as out:
            name = zot_build.build_wheel(out)
            version = zot_build.read_project()["version"]
            self.assertEqual(name, f"zot_ext-{version}-py3-none-any.whl")
            with zipfile.ZipFile(os.path.join(out, name)) as zf:
                names = set(zf.namelist())
                meta = zf.read(f"zot_ext-{version}.dist-info/METADATA").decode()
        want = {f"zot_ext/{p.name}" for p in (PACKAGE_DIR / "zot_ext").iterdir() if p.suffix == ".py" or p.name == "py.typed"}
        self.assertEqual({n for n in names if n.startswith("zot_ext/")}, want)
        self.assertIn("zot_ext/types.py", names)
        self.assertIn("zot_ext/py.typed", names)
        self.assertIn("Name: zot-ext\n", meta)


# An extension that uses the installed zot_ext, driven by zot: a tool
# call answered through the package.
EXTENSION = """
from zot_ext import Extension
import zot_ext

ext = Extension("installed", "1.0.0")

@ext.tool
def where(args):
    "Where zot_ext comes from."
    return zot_ext.__file__

ext.run()
"""

PROBE = r"""
import json, sys
sys.path.insert(0, sys.argv[3])
from zot_client import Client
script = sys.argv[4]
with Client(["--provider", "scripted", "--script", script, "--ext", sys.argv[2], "--cwd", sys.argv[5]], binary=sys.argv[1],
            env={"ZOTCORE_RPC_TOKEN": None, "PYTHONPATH": None, "ZOT_HOME": sys.argv[6]}) as zot:
    events = zot.prompt("where?").collect()
results = [e for e in events if e.TYPE == "tool_result"]
print(json.dumps({"text": "".join(b.text for b in results[0].content), "error": results[0].is_error}))
"""


class PipInstallTest(unittest.TestCase):
    @requires_zot
    def test_pip_install_no_index_then_an_extension_uses_it(self):
        tmp = tempfile.TemporaryDirectory(prefix="zot-ext-pip-")
        self.addCleanup(tmp.cleanup)
        venv = Path(tmp.name, "venv")
        py = venv / "bin" / "python"
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONPATH"}
        env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
        install = ["install", "--no-index", "--no-cache-dir", str(PACKAGE_DIR)]
        if _pip_takes_python():
            run([sys.executable, "-m", "venv", "--without-pip", str(venv)], env)
            run([sys.executable, "-m", "pip", "--python", str(py)] + install, env)
        else:
            run([sys.executable, "-m", "venv", str(venv)], env)
            run([str(py), "-m", "pip"] + install, env)

        folder = Path(tmp.name, "installed")
        folder.mkdir()
        (folder / "extension.json").write_text(json.dumps({"name": "installed", "exec": "./main.py"}))
        main = folder / "main.py"
        main.write_text(f"#!{py}\n" + EXTENSION)
        main.chmod(0o755)
        script = Path(tmp.name, "script.json")
        script.write_text(json.dumps({"turns": [{"steps": [{"tool_calls": [{"name": "where", "args": {}}]}, {"text": "ok"}]}]}))
        work, home = Path(tmp.name, "work"), Path(tmp.name, "home")
        work.mkdir()
        home.mkdir()
        out = run([sys.executable, "-c", PROBE, ZOT, str(folder), str(REPO / "clients" / "python"), str(script), str(work), str(home)], env)
        got = json.loads(out.splitlines()[-1])
        self.assertFalse(got["error"], got["text"])
        self.assertTrue(Path(got["text"]).resolve().is_relative_to(venv.resolve()), got["text"])


def _pip_takes_python() -> bool:
    """Whether this Python's pip installs into another (--python, pip 22.3
    and later)."""
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, text=True, timeout=60)
        major, minor = (int(x) for x in out.stdout.split()[1].split(".")[:2])
    except (OSError, subprocess.TimeoutExpired, IndexError, ValueError):
        return False
    return out.returncode == 0 and (major, minor) >= (22, 3)


def run(argv, env) -> str:
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p.stdout


if __name__ == "__main__":
    unittest.main()
