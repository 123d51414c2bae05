"""Every case of clients/cases.json has a test of its own here: a method
named test_<id> in one of this suite's test classes."""
import json
import os
import unittest

import harness
import test_client
import test_errors
import test_worker

CASES = os.path.join(harness.SRC, "clients", "cases.json")


class EveryCase(unittest.TestCase):
    def test_every_case_has_a_test(self) -> None:
        with open(CASES) as f:
            ids = [c["id"] for c in json.load(f)["cases"]]
        have = set()
        for mod in (test_client, test_errors, test_worker):
            for obj in vars(mod).values():
                if isinstance(obj, type) and issubclass(obj, unittest.TestCase):
                    have |= {n for n in dir(obj) if n.startswith("test_")}
        missing = [i for i in ids if "test_" + i not in have]
        self.assertEqual(missing, [], "cases of clients/cases.json without a test")
        self.assertEqual(len(ids), len(set(ids)), "a case id twice in clients/cases.json")


if __name__ == "__main__":
    unittest.main()
