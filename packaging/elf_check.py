"""Checks on the ELF files of a built bundle (run by build-linux and CI; standard library and binutils only).

python3 elf_check.py glibc BUNDLE [--max X.Y]   highest GLIBC_ symbol version any file needs (the glibc floor)
python3 elf_check.py resolve BUNDLE [--depends "pkg, pkg (>= v), ..."]
    every library each ELF file needs is found inside the bundle or on this system; with --depends, those found
    on the system must belong to the packages named there or to what those depend on (dpkg's database)
python3 elf_check.py strip BUNDLE              strip the unstripped ELF files, except numpy's (its OpenBLAS
                                               breaks when stripped)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ELF_MAGIC = b"\x7fELF"
GLIBC_VERSION = re.compile(rb"GLIBC_(\d+)\.(\d+)(?:\.(\d+))?")
# Part of glibc itself (libc6): every Linux system has them.
GLIBC_LIBRARIES = {
    "libc.so.6",
    "libm.so.6",
    "libdl.so.2",
    "librt.so.1",
    "libpthread.so.0",
    "libutil.so.1",
    "libmvec.so.1",
    "ld-linux-x86-64.so.2",
    "libresolv.so.2",
    "libnsl.so.1",
    "libanl.so.1",
    "libcrypt.so.1",
}
NEVER_STRIPPED = ("numpy", "numpy.libs")


def elf_files(root: Path) -> list[Path]:
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                if handle.read(4) == ELF_MAGIC:
                    found.append(path)
    return found


def needed(path: Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=False).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def glibc_floor(root: Path) -> tuple[tuple[int, ...], Path | None]:
    highest: tuple[int, ...] = (0,)
    where = None
    for path in elf_files(root):
        out = subprocess.run(["objdump", "-T", str(path)], capture_output=True, check=False).stdout
        for match in GLIBC_VERSION.finditer(out):
            version = tuple(int(part) for part in match.groups() if part is not None)
            if version > highest:
                highest, where = version, path
    return highest, where


def _system_library_path(name: str) -> str | None:
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=False).stdout
    for line in out.splitlines():
        line = line.strip()
        if line.startswith(name + " ") and "x86-64" in line:
            return line.rsplit("=>", 1)[-1].strip()
    return None


def _owner(path: str) -> str | None:
    real = os.path.realpath(path)
    for candidate in (path, real, real.replace("/usr/lib/", "/lib/", 1)):
        done = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return done.stdout.split(":", 1)[0].strip()
    return None


def _package_names(field: str) -> list[str]:
    names = []
    for clause in field.split(","):
        for alternative in clause.split("|"):
            name = alternative.strip().split(" ", 1)[0].split(":", 1)[0]
            if name:
                names.append(name)
    return names


def dependency_closure(packages: list[str]) -> set[str]:
    """The packages and everything they depend on (Depends and Pre-Depends), from dpkg's database."""
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package}\t${Provides}\t${Depends}, ${Pre-Depends}\n"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    depends: dict[str, list[str]] = {}
    for line in out.splitlines():
        package, provides, field = (line.split("\t") + ["", ""])[:3]
        depends.setdefault(package, []).extend(_package_names(field))
        for virtual in _package_names(provides):
            depends.setdefault(virtual, []).append(package)
    seen: set[str] = set()
    todo = list(packages)
    while todo:
        package = todo.pop()
        if package in seen:
            continue
        seen.add(package)
        todo.extend(depends.get(package, []))
    return seen


def resolve(root: Path, depends: str | None) -> list[str]:
    """Problems: libraries found nowhere, or found on the system in a package the .deb does not depend on."""
    inside = {path.name for path in root.rglob("*.so*")}
    allowed = dependency_closure(["libc6", *_package_names(depends)]) if depends is not None else None
    problems = []
    checked: dict[str, str | None] = {}
    for path in elf_files(root):
        for name in needed(path):
            if name in inside or name in GLIBC_LIBRARIES:
                continue
            if name not in checked:
                system = _system_library_path(name)
                if system is None:
                    where = path.relative_to(root)
                    checked[name] = f"{name} (needed by {where}) is neither in the bundle nor on this system"
                elif allowed is not None:
                    owner = _owner(system)
                    ok = owner is not None and owner.split(":")[0] in allowed
                    checked[name] = (
                        None
                        if ok
                        else (
                            f"{name} (needed by {path.relative_to(root)}) comes from {system}, package {owner}, "
                            "which the .deb does not depend on"
                        )
                    )
                else:
                    checked[name] = None
            if checked[name] is not None:
                problems.append(checked[name])
                checked[name] = None  # each missing library once
    return problems


def strip(root: Path) -> int:
    saved = 0
    for path in elf_files(root):
        relative = path.relative_to(root).parts
        if any(part in NEVER_STRIPPED for part in relative):
            continue
        info = subprocess.run(["file", "-b", str(path)], capture_output=True, text=True, check=False).stdout
        if "not stripped" not in info:
            continue
        before = path.stat().st_size
        subprocess.run(["strip", "--strip-unneeded", str(path)], check=True)
        saved += before - path.stat().st_size
    return saved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("check", choices=("glibc", "resolve", "strip"))
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--max", help="glibc: fail when the floor is above this version (X.Y)")
    parser.add_argument("--depends", help="resolve: the .deb's Depends field")
    args = parser.parse_args()
    if args.check == "glibc":
        floor, where = glibc_floor(args.bundle)
        text = ".".join(map(str, floor))
        by = where.relative_to(args.bundle) if where else "-"
        print(f"glibc floor: {text} (highest GLIBC_ version needed, by {by})")
        if args.max and floor > tuple(int(p) for p in args.max.split(".")):
            print(f"the bundle needs glibc {text}, above the stated floor {args.max}", file=sys.stderr)
            return 1
        return 0
    if args.check == "strip":
        print(f"stripped {strip(args.bundle) / 1e6:.0f} MB of symbols")
        return 0
    problems = resolve(args.bundle, args.depends)
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{len(elf_files(args.bundle))} ELF files; {len(problems)} unresolved libraries")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
