"""The build backend of zot's Python packages, zot_client (clients/python)
and zot_ext (clients/python-ext): PEP 517, and PEP 660 for editable
installs. Each package holds the same copy of this file (a test checks
that they agree). It is written with the standard library only so that
the packages install with no package index:
``pip install --no-index ./clients/python``.

It reads the ``[project]`` table of pyproject.toml, which keeps to a small
part of TOML (strings and arrays of strings; the tests check it against a
full TOML parser), and builds, for the project named ``zot-client``:

- a wheel ``zot_client-<version>-py3-none-any.whl`` holding the package
  ``zot_client`` (its ``.py`` files and ``py.typed``) and its ``.dist-info``
  (METADATA, WHEEL, the licence, RECORD with the SHA-256 of every file);
- an sdist ``zot_client-<version>.tar.gz`` holding what the wheel is built
  from: pyproject.toml, README.md, LICENSE, this backend and the package;
- for ``pip install -e``, a wheel whose ``.pth`` file puts this directory
  on ``sys.path``.

The package is the folder named as the project, with ``-`` as ``_``.
Archives are reproducible: entries are sorted and dated SOURCE_DATE_EPOCH
(default 2000-01-01).
"""

from __future__ import annotations

import ast
import base64
import gzip
import hashlib
import io
import os
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple, Union

__all__ = [
    "build_wheel",
    "build_sdist",
    "build_editable",
    "get_requires_for_build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_editable",
    "prepare_metadata_for_build_wheel",
    "prepare_metadata_for_build_editable",
]

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = "zot_build"

Value = Union[str, List[str]]


# ---- pyproject.toml ---------------------------------------------------------


def read_project(path: Optional[Path] = None) -> Dict[str, Value]:
    """Returns the ``[project]`` table of pyproject.toml.

    Only the TOML this file uses is understood: ``[table]`` headers,
    comments, and ``key = value`` where value is a basic string or an
    array of them, possibly over several lines. Anything else is an error,
    never a guess.
    """
    text = (path or ROOT / "pyproject.toml").read_text(encoding="utf-8")
    tables: Dict[str, Dict[str, Value]] = {}
    table: Optional[Dict[str, Value]] = None
    pending = ""  # a value whose brackets are not closed yet
    key = ""
    for n, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw).strip()
        if pending:
            pending += " " + line
            if pending.count("[") > pending.count("]"):
                continue
            assert table is not None
            table[key] = _value(pending, n)
            pending = ""
            continue
        if not line:
            continue
        if line.startswith("["):
            if not line.endswith("]") or line.startswith("[["):
                raise ValueError(f"pyproject.toml:{n}: unsupported table header {line!r}")
            table = tables.setdefault(line[1:-1].strip(), {})
            continue
        if "=" not in line or table is None:
            raise ValueError(f"pyproject.toml:{n}: expected key = value, got {line!r}")
        key, _, value = (part.strip() for part in line.partition("="))
        if value.startswith("[") and value.count("[") > value.count("]"):
            pending = value
            continue
        table[key] = _value(value, n)
    if pending:
        raise ValueError("pyproject.toml: unterminated array")
    return tables.get("project", {})


def _strip_comment(line: str) -> str:
    """Drops a # comment that is not inside a string."""
    quoted = False
    for i, c in enumerate(line):
        if c == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif c == "#" and not quoted:
            return line[:i]
    return line


def _value(text: str, n: int) -> Value:
    """A TOML basic string or array of them; Python reads both the same."""
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ValueError(f"pyproject.toml:{n}: unsupported value {text!r}") from None
    if isinstance(v, str) and text.startswith('"'):
        return v
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return v
    raise ValueError(f"pyproject.toml:{n}: unsupported value {text!r}")


# ---- metadata -----------------------------------------------------------------


def _project() -> Tuple[str, str, Dict[str, Value]]:
    """The distribution's file-name form of its name, its version, and the
    project table."""
    p = read_project()
    name, version = p.get("name"), p.get("version")
    if not isinstance(name, str) or not isinstance(version, str):
        raise ValueError("pyproject.toml: [project] needs a name and a version")
    return name.replace("-", "_").lower(), version, p


def metadata(project: Dict[str, Value]) -> str:
    """The core metadata (METADATA and PKG-INFO) of the project."""
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
    ]
    for field, key in (("Summary", "description"), ("Requires-Python", "requires-python"), ("License", "license")):
        v = project.get(key)
        if isinstance(v, str):
            lines.append(f"{field}: {v}")
    kw = project.get("keywords")
    if isinstance(kw, list) and kw:
        lines.append("Keywords: " + ",".join(kw))
    for c in project.get("classifiers") or []:
        lines.append(f"Classifier: {c}")
    body = ""
    readme = project.get("readme")
    if isinstance(readme, str):
        lines.append("Description-Content-Type: text/markdown" if readme.endswith(".md") else "Description-Content-Type: text/plain")
        body = (ROOT / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + body


def _wheel_file() -> str:
    return f"Wheel-Version: 1.0\nGenerator: {GENERATOR}\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def license_file() -> Optional[Path]:
    """The licence text: LICENSE here (in an sdist), else the repository's."""
    for p in (ROOT / "LICENSE", ROOT.parent.parent / "LICENSE"):
        if p.is_file():
            return p
    return None


def package_name() -> str:
    """The import name of the package: the project's name, ``-`` as ``_``."""
    return _project()[0]


def _package_files() -> List[Tuple[str, bytes]]:
    """The package's files, as (path in the wheel, content), sorted."""
    package = package_name()
    out = []
    for f in sorted((ROOT / package).iterdir()):
        if f.is_file() and (f.suffix == ".py" or f.name == "py.typed"):
            out.append((f"{package}/{f.name}", f.read_bytes()))
    return out


# ---- archives -----------------------------------------------------------------


def _epoch() -> int:
    return int(os.environ.get("SOURCE_DATE_EPOCH", "946684800"))


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _write_wheel(directory: str, files: List[Tuple[str, bytes]]) -> str:
    """Writes the wheel of files plus its dist-info; returns its name."""
    dist, version, project = _project()
    info = f"{dist}-{version}.dist-info"
    files = files + [
        (f"{info}/METADATA", metadata(project).encode("utf-8")),
        (f"{info}/WHEEL", _wheel_file().encode("utf-8")),
    ]
    lic = license_file()
    if lic is not None:
        files.append((f"{info}/LICENSE", lic.read_bytes()))
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in files)
    record += f"{info}/RECORD,,\n"
    files.append((f"{info}/RECORD", record.encode("utf-8")))
    name = f"{dist}-{version}-py3-none-any.whl"
    stamp = time.gmtime(max(_epoch(), 315532800))[:6]  # zip dates start in 1980
    with zipfile.ZipFile(os.path.join(directory, name), "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files:
            zi = zipfile.ZipInfo(path, date_time=stamp)
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, data)
    return name


def _write_metadata_dir(directory: str) -> str:
    dist, version, project = _project()
    info = f"{dist}-{version}.dist-info"
    os.makedirs(os.path.join(directory, info), exist_ok=True)
    Path(directory, info, "METADATA").write_text(metadata(project), encoding="utf-8")
    Path(directory, info, "WHEEL").write_text(_wheel_file(), encoding="utf-8")
    return info


# ---- PEP 517 hooks ------------------------------------------------------------


def get_requires_for_build_wheel(config_settings=None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings=None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings=None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None) -> str:
    return _write_metadata_dir(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None) -> str:
    return _write_metadata_dir(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    pth = (str(ROOT) + "\n").encode("utf-8")
    return _write_wheel(wheel_directory, [(f"__editable__.{package_name()}.pth", pth)])


def build_sdist(sdist_directory, config_settings=None) -> str:
    dist, version, project = _project()
    base = f"{dist}-{version}"
    files: List[Tuple[str, bytes]] = [
        ("PKG-INFO", metadata(project).encode("utf-8")),
        ("README.md", (ROOT / "README.md").read_bytes()),
        ("_build/zot_build.py", Path(__file__).read_bytes()),
        ("pyproject.toml", (ROOT / "pyproject.toml").read_bytes()),
    ] + _package_files()
    lic = license_file()
    if lic is not None:
        files.append(("LICENSE", lic.read_bytes()))
    name = f"{base}.tar.gz"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for path, data in sorted(files):
            ti = tarfile.TarInfo(f"{base}/{path}")
            ti.size = len(data)
            ti.mtime = _epoch()
            ti.mode = 0o644
            ti.uname = ti.gname = ""
            tf.addfile(ti, io.BytesIO(data))
    with open(os.path.join(sdist_directory, name), "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=_epoch()) as gz:
            gz.write(buf.getvalue())
    return name
