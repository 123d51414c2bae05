#!/usr/bin/env python3
"""The wheel builds offline from the tree (Debian's python3-build and
python3-setuptools: `python3 -m build --wheel --no-isolation`, in a copy of
clients/python so the tree stays clean) and holds the whole package: every
module, py.typed, the metadata; it imports from the wheel alone."""
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    for mod in ("build", "setuptools", "wheel"):
        try:
            __import__(mod)
        except ImportError:
            print(f"FAIL: python3 module {mod!r} missing: apt-get install python3-build "
                  "python3-setuptools python3-wheel")
            return 1
    tmp = tempfile.mkdtemp(prefix="jobd-py-wheel.")
    try:
        src = os.path.join(tmp, "src")
        shutil.copytree(PKG, src, ignore=shutil.ignore_patterns(
            "build", "dist", "*.egg-info", "__pycache__", ".mypy_cache", "tests", "bench"))
        out = os.path.join(tmp, "dist")
        r = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                            "--outdir", out, src], capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout[-3000:], r.stderr[-3000:])
            print("FAIL: python3 -m build --wheel --no-isolation")
            return 1
        wheels = os.listdir(out)
        if wheels != ["jobd-0.1.0-py3-none-any.whl"]:
            print(f"FAIL: unexpected build output {wheels}")
            return 1
        whl = os.path.join(out, wheels[0])
        names = set(zipfile.ZipFile(whl).namelist())
        want = {f"jobd/{f}" for f in os.listdir(os.path.join(PKG, "jobd"))
                if f.endswith(".py") or f == "py.typed"}
        if not want <= names:
            print(f"FAIL: the wheel lacks {sorted(want - names)}")
            return 1
        r = subprocess.run([sys.executable, "-I", "-c",
                            "import sys; sys.path.insert(0, sys.argv[1]); import jobd; "
                            "assert jobd.__file__.startswith(sys.argv[1]), jobd.__file__; "
                            "print(jobd.__version__, jobd.Client, jobd.Worker, jobd.AsyncWorker)",
                            whl], capture_output=True, text=True, cwd=tmp)
        if r.returncode != 0:
            print(r.stdout, r.stderr)
            print("FAIL: jobd does not import from the wheel")
            return 1
        print(f"ok: {wheels[0]} ({len(names)} files): {r.stdout.strip()}")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
