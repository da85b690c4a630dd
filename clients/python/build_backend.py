"""The build backend of the custody package: standard library only.

pyproject.toml names it (backend-path = ["."]), so pip, uv, pipx and every
other PEP 517 frontend build and install the package with nothing to
download: `pip install ./clients/python` works offline. It makes a pure
Python wheel of custody/, an sdist, and an editable wheel (`pip install -e`).
The metadata comes from pyproject.toml's [project] table.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "custody"


def _project() -> Dict[str, object]:
    """The [project] table of pyproject.toml (tomllib on Python 3.11+, else
    the plain subset this file uses: strings, lists of strings, inline tables)."""
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
        raw = f.read()
    try:
        import tomllib  # Python 3.11+
        return tomllib.loads(raw.decode("utf-8"))["project"]
    except ImportError:
        pass
    table: Dict[str, object] = {}
    extras: Dict[str, List[str]] = {}
    inside = ""
    for line in raw.decode("utf-8").splitlines():
        line = line.strip()
        if line.startswith("["):
            inside = line
            continue
        m = re.match(r'^([A-Za-z0-9_-]+)\s*=\s*(.+)$', line)
        if inside == "[project.optional-dependencies]" and m:
            extras[m.group(1)] = re.findall(r'"([^"]*)"', m.group(2))
            table["optional-dependencies"] = extras
            continue
        if inside != "[project]" or not m:
            continue
        key, value = m.group(1), m.group(2).strip()
        if value.startswith('"'):
            table[key] = value.strip('"')
        elif value.startswith("["):
            table[key] = re.findall(r'"([^"]*)"', value)
        elif value.startswith("{"):
            table[key] = dict(re.findall(r'([A-Za-z0-9_-]+)\s*=\s*"([^"]*)"', value))
    return table


def _metadata() -> str:
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
        f"Summary: {p.get('description', '')}",
    ]
    lic = p.get("license")
    if isinstance(lic, dict) and lic.get("text"):
        lines.append(f"License: {lic['text']}")
    if p.get("requires-python"):
        lines.append(f"Requires-Python: {p['requires-python']}")
    for dep in p.get("dependencies", []) or []:
        lines.append(f"Requires-Dist: {dep}")
    optional = p.get("optional-dependencies") or {}
    for extra in sorted(optional):  # type: ignore[union-attr]
        lines.append(f"Provides-Extra: {extra}")
        for dep in optional[extra]:  # type: ignore[index]
            lines.append(f'Requires-Dist: {dep}; extra == "{extra}"')
    readme = p.get("readme")
    body = ""
    if isinstance(readme, str):
        with open(os.path.join(HERE, readme), encoding="utf-8") as f:
            body = f.read()
        lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + body


def _name_version() -> str:
    p = _project()
    return f"{p['name']}-{p['version']}"


def _dist_info() -> str:
    return _name_version() + ".dist-info"


def _sources() -> List[str]:
    out = []
    for root, dirs, files in os.walk(os.path.join(HERE, PACKAGE)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py") or name == "py.typed":
                out.append(os.path.relpath(os.path.join(root, name), HERE))
    return out


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _wheel(wheel_directory: str, files: Dict[str, bytes]) -> str:
    info = _dist_info()
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata().encode("utf-8")
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: custody build_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [_record_line(p, d) for p, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode("utf-8")
    name = _name_version() + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            zi = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return name


# PEP 517 hooks.

def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    info = _dist_info()
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    files = {}
    for rel in _sources():
        with open(os.path.join(HERE, rel), "rb") as f:
            files[rel.replace(os.sep, "/")] = f.read()
    return _wheel(wheel_directory, files)


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    # a .pth file puts this directory on sys.path: edits take effect at once
    return _wheel(wheel_directory, {"_custody_editable.pth": (HERE + "\n").encode("utf-8")})


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    base = _name_version()
    name = base + ".tar.gz"
    members = ["pyproject.toml", "build_backend.py", "README.md"] + _sources()
    for root, dirs, files in os.walk(os.path.join(HERE, "tests")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        members += sorted(os.path.relpath(os.path.join(root, f), HERE) for f in files if f.endswith(".py"))
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        def add(arcname: str, data: bytes) -> None:
            ti = tarfile.TarInfo(f"{base}/{arcname}")
            ti.size, ti.mtime, ti.mode = len(data), int(time.time()), 0o644
            tar.addfile(ti, io.BytesIO(data))
        add("PKG-INFO", _metadata().encode("utf-8"))
        for rel in members:
            with open(os.path.join(HERE, rel), "rb") as f:
                add(rel.replace(os.sep, "/"), f.read())
    return name
