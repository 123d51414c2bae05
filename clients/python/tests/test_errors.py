"""Typed errors and the retries of requests safe to repeat, against a stub
HTTP server that answers what each test scripts (and a real server for a
BadRequest naming its field)."""
import json
import os
import unittest
from typing import Any, Tuple

import harness

import jobd

CASES = os.path.join(harness.SRC, "clients", "cases.json")


class ErrorCases(unittest.TestCase):
    def test_errors_typed(self) -> None:
        with open(CASES) as f:
            codes = json.load(f)["error_codes"]
        by_id = {i + 1: e for i, e in enumerate(codes)}

        def answer(method: str, path: str) -> Tuple[int, Any]:
            e = by_id[int(path.rsplit("/", 1)[1])]
            field = "queue" if e["status"] == 400 else None
            return e["status"], {"error": {"code": e["code"], "message": "m " + e["code"],
                                           "field": field}}
        stub = harness.Stub(answer=answer)
        self.addCleanup(stub.close)
        c = jobd.Client(stub.url, token="", retries=0)
        for i, e in by_id.items():
            with self.subTest(code=e["code"]):
                with self.assertRaises(jobd.JobdError) as got:
                    c.get(i)
                err = got.exception
                self.assertIs(type(err), getattr(jobd, e["kind"]))
                self.assertEqual((err.status, err.code, err.message),
                                 (e["status"], e["code"], "m " + e["code"]))
                self.assertEqual(err.field, "queue" if e["status"] == 400 else None)
        self.assertTrue(issubclass(jobd.StaleAttempt, jobd.Conflict))
        # A real server's BadRequest names the field.
        real = harness.client()
        with self.assertRaises(jobd.BadRequest) as bad:
            real.enqueue("ok.type", queue="Not A Queue")
        self.assertEqual((bad.exception.code, bad.exception.field), ("invalid_field", "queue"))
        with self.assertRaises(jobd.BadRequest) as unk:
            real.enqueue("ok.type", extra={"nonsense": 1})
        self.assertEqual((unk.exception.code, unk.exception.field), ("unknown_field", "nonsense"))

    def test_retry_safe_requests(self) -> None:
        job = {"id": 5, "type": "t", "status": "pending", "attempt": 0}
        busy = (503, {"error": {"code": "store_unavailable", "message": "down", "field": None}})
        stub = harness.Stub(["drop", busy, (200, job)])
        self.addCleanup(stub.close)
        c = jobd.Client(stub.url, token="", retries=4, backoff=0.01)
        self.assertEqual(c.get(5).id, 5)
        self.assertEqual(len(stub.requests), 3)
        # an enqueue without a key is not sent again
        stub.requests.clear()
        stub.script = [busy, (201, job)]
        with self.assertRaises(jobd.Unavailable) as e:
            c.enqueue("t")
        self.assertEqual(e.exception.code, "store_unavailable")
        self.assertEqual(stub.requests, [("POST", "/v1/jobs")])
        stub.requests.clear()
        stub.script = ["drop"]
        with self.assertRaises(jobd.NetworkError):
            c.enqueue("t")
        self.assertEqual(len(stub.requests), 1)
        # with a key it is
        stub.requests.clear()
        stub.script = [busy, "drop", (201, job)]
        self.assertEqual(c.enqueue("t", idempotency_key="k1").id, 5)
        self.assertEqual(len(stub.requests), 3)
        # retries run out: the last error
        stub.requests.clear()
        stub.script = [busy] * 3
        with self.assertRaises(jobd.Unavailable):
            jobd.Client(stub.url, token="", retries=2, backoff=0.01).get(5)
        self.assertEqual(len(stub.requests), 3)
        # a server that cannot be reached at all
        stub.close()
        with self.assertRaises(jobd.NetworkError):
            jobd.Client(stub.url, token="", retries=1, backoff=0.01).get(5)


if __name__ == "__main__":
    unittest.main()
