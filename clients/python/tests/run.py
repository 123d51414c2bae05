#!/usr/bin/env python3
"""Runs the Python client's suite against a real `jobd server`:

    run.py --store sqlite|pg [unittest args...]
    run.py --mypy            (mypy --strict on the package, the tests and the bench)

With --store pg and no $JOBD_TEST_PG_URL it is skipped (exit 77) unless
$JOBD_TEST_REQUIRE_PG is 1 (clients/python/tests.cmake registers both)."""
import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)


def mypy() -> int:
    cache = os.path.join(os.environ.get("JOBD_BUILD") or "/tmp", "clients-python-mypy")
    cmd = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", cache,
           os.path.join(PKG, "jobd"), os.path.join(PKG, "bench", "bench.py")]
    print("+", " ".join(cmd), flush=True)
    rc = subprocess.call(cmd, cwd=PKG)
    cmd = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", cache,
           "--allow-untyped-calls", "--allow-any-generics", HERE]
    env = dict(os.environ, MYPYPATH=HERE + os.pathsep + PKG)
    print("+", " ".join(cmd), flush=True)
    return rc or subprocess.call(cmd, cwd=PKG, env=env)


class TimedResult(unittest.TextTestResult):
    """Says how long each test took (the suite must stay fast)."""

    def startTest(self, test: unittest.TestCase) -> None:
        self._t0 = time.monotonic()
        super().startTest(test)

    def stopTest(self, test: unittest.TestCase) -> None:
        super().stopTest(test)
        self.stream.write(f"  ({time.monotonic() - self._t0:.1f}s)\n")


def main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["--mypy"]:
        return mypy()
    if args[:1] != ["--store"] or len(args) < 2 or args[1] not in ("sqlite", "pg"):
        print(__doc__, file=sys.stderr)
        return 2
    store, rest = args[1], args[2:]
    if store == "pg" and not os.environ.get("JOBD_TEST_PG_URL"):
        if os.environ.get("JOBD_TEST_REQUIRE_PG") == "1":
            print("FAIL: JOBD_TEST_REQUIRE_PG=1 but JOBD_TEST_PG_URL is not set")
            return 1
        print("SKIPPED: no JOBD_TEST_PG_URL (run under scripts/with-pg.sh)")
        return 77
    os.environ["JOBD_CLIENT_STORE"] = store
    sys.path.insert(0, HERE)
    import harness
    try:
        harness.server()
        loader = unittest.TestLoader()
        suite = (loader.loadTestsFromNames(rest) if rest
                 else loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE))
        result = unittest.TextTestRunner(verbosity=2, resultclass=TimedResult).run(suite)
        if not result.wasSuccessful() and "server" in harness._state:
            print("--- server log\n" + harness.server().tail())
        return 0 if result.wasSuccessful() else 1
    finally:
        harness.shutdown()


if __name__ == "__main__":
    sys.exit(main())
