"""The README's first job and first worker (examples/), run as a user runs
them: separate Python processes against a real `jobd server`, and the
READMEs show exactly those files."""
import ast
import os
import re
import subprocess
import sys
import unittest

import harness

EX = os.path.join(harness.PKG, "examples")


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


class Examples(unittest.TestCase):
    def test_readmes_show_the_examples(self) -> None:
        readme = read(os.path.join(harness.PKG, "README.md"))
        for f in ("first_job.py", "first_worker.py"):
            self.assertIn(read(os.path.join(EX, f)).strip(), readme, f"README.md shows examples/{f}")

    def test_first_job_and_first_worker(self) -> None:
        env = dict(os.environ, JOBD_SERVER=harness.server().url, PYTHONPATH=harness.PKG)
        env.pop("JOBD_TOKEN", None)
        w = subprocess.Popen([sys.executable, os.path.join(EX, "first_worker.py")], env=env)
        try:
            out = subprocess.run([sys.executable, os.path.join(EX, "first_job.py")], env=env,
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            status, _, result = out.stdout.partition(" ")
            self.assertEqual((status, ast.literal_eval(result)["greeting"]), ("succeeded", "hello, world"))
            # the top README's two lines, as they are there
            top = read(os.path.join(harness.SRC, "README.md"))
            m = re.search(r"```python\n(import jobd.*?)```", top, re.S)
            assert m is not None, "README.md has no Python block"
            out = subprocess.run([sys.executable, "-c", m.group(1)], env=env,
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            job = harness.client().wait(int(out.stdout), timeout=30)
            self.assertEqual((job.status, job.result["greeting"]), ("succeeded", "hello, world"))
        finally:
            w.terminate()
            self.assertEqual(w.wait(30), 0)


if __name__ == "__main__":
    unittest.main()
