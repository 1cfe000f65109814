"""The sans-I/O core both clients share, by itself: no server, no socket. What a request is built to be
(``iqstream._requests``), what an answer comes to (``iqstream._results``), and how a publisher's answers and each
step's I/O outcome turn into the repair's next step (``Repair.answered`` and ``Repair.after``; the decisions
behind them are ``test_repair``'s)."""

from __future__ import annotations

import json
import unittest

from iqstream import AsyncClient, IqStreamClient, IqStreamError, IqStreamHttpError, PublishResult, RunStatus
from iqstream import RunStoppedError
from iqstream._repair import AskStatus, Broken, Done, Fail, Probe, Repair, Resend, Resumed, Wait
from iqstream._requests import Api, event_line, is_terminal
from iqstream._results import Answer, check_deleted, http_error, published, status_of, stop_in

RUN = "r-1"


def line(i: int) -> bytes:
    return b'{"type":"CUSTOM","name":"e","value":%d}\n' % i


def refusal_body(code: str, message: str = "no", **extra: object) -> bytes:
    return json.dumps({"error": code, "message": message, **extra}).encode()


class RequestsTest(unittest.TestCase):
    def test_the_url_gives_scheme_host_default_port_and_prefix(self) -> None:
        api = Api("https://relay.example/base/", None)
        self.assertEqual((api.scheme, api.host, api.port, api.prefix), ("https", "relay.example", 443, "/base"))
        self.assertEqual(Api("http://127.0.0.1", None).port, 80)
        self.assertEqual(Api("http://127.0.0.1:9000", None).port, 9000)
        self.assertEqual(Api("https://relay.example/base/", None).status(RUN).path, "/base/v1/runs/r-1")

    def test_a_bad_url_is_refused_naming_each_clients_argument(self) -> None:
        with self.assertRaisesRegex(ValueError, r"^base_url must be http\(s\)://host\[:port\], got: 'ftp://x'$"):
            IqStreamClient("ftp://x")
        with self.assertRaisesRegex(ValueError, r"^url must be http\(s\)://host\[:port\], got: 'relay:8080'$"):
            AsyncClient("relay:8080")

    def test_a_token_callable_is_asked_for_each_request_built(self) -> None:
        tokens = iter(["t1", "t2"])
        api = Api("http://127.0.0.1:9", lambda: next(tokens))
        self.assertEqual(api.status(RUN).headers["Authorization"], "Bearer t1")
        self.assertEqual(api.delete(RUN).headers["Authorization"], "Bearer t2")
        self.assertNotIn("Authorization", Api("http://127.0.0.1:9", None).status(RUN).headers)
        self.assertNotIn("Authorization", Api("http://127.0.0.1:9", "").status(RUN).headers)

    def test_a_streamed_publish_carries_last_event_id_and_a_restore_only_when_asked(self) -> None:
        api = Api("http://127.0.0.1:9/p", "tok")
        request = api.stream(RUN, 7)
        self.assertEqual((request.method, request.path, request.body), ("POST", "/p/v1/runs/r-1/events", None))
        self.assertEqual(request.headers["Content-Type"], "application/x-ndjson")
        self.assertEqual(request.headers["Last-Event-ID"], "7")
        self.assertNotIn("X-IQStream-Restore", request.headers)
        restore = api.stream(RUN, 0, restore_to=3)
        self.assertEqual((restore.headers["Last-Event-ID"], restore.headers["X-IQStream-Restore"]), ("0", "3"))

    def test_a_batch_is_one_ndjson_body_and_a_bad_run_id_is_refused_before_any_request(self) -> None:
        request = Api("http://127.0.0.1:9", None).publish(RUN, [{"type": "A"}, '{"type": "B"}'])
        self.assertEqual(request.body, b'{"type":"A"}\n{"type": "B"}\n')
        self.assertEqual(request.headers["Content-Type"], "application/x-ndjson")
        for build in (lambda api: api.publish("bad id", []), lambda api: api.status("x/y"),
                      lambda api: api.delete(""), lambda api: api.pipe("a" * 129, "text/event-stream")):
            with self.assertRaisesRegex(ValueError, "a run id is 1-128 characters"):
                build(Api("http://127.0.0.1:9", None))

    def test_a_read_asks_for_sse_and_resumes_only_after_a_given_id(self) -> None:
        api = Api("http://127.0.0.1:9", None)
        self.assertEqual(api.subscribe(RUN, None).headers, {"Accept": "text/event-stream"})
        self.assertEqual(api.subscribe(RUN, 0).headers["Last-Event-ID"], "0")
        self.assertEqual(api.pipe(RUN, "text/plain").headers["Content-Type"], "text/plain")

    def test_event_lines_are_compact_json_objects(self) -> None:
        class Model:  # an ag_ui.core event: dumped by alias, without nulls
            def model_dump_json(self, by_alias: bool, exclude_none: bool) -> str:
                return '{"type":"RUN_STARTED","threadId":"t"}' if by_alias and exclude_none else "{}"

        self.assertEqual(event_line(Model()), b'{"type":"RUN_STARTED","threadId":"t"}\n')
        self.assertEqual(event_line('{\n "type": "A"\n}'), b'{"type":"A"}\n')
        self.assertEqual(event_line({"delta": "é"}), '{"delta":"é"}\n'.encode())
        with self.assertRaisesRegex(ValueError, "must be a JSON object"):
            event_line("[1]")
        with self.assertRaisesRegex(ValueError, "not a JSON event"):
            event_line("{\"a\":\n1")

    def test_only_a_terminal_type_ends_a_run_not_the_word_in_a_value(self) -> None:
        self.assertTrue(is_terminal(b'{"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n'))
        self.assertTrue(is_terminal(b'{"type":"RUN_ERROR","message":"m"}\n'))
        self.assertFalse(is_terminal(b'{"type":"CUSTOM","name":"n","value":"RUN_ERROR"}\n'))
        self.assertFalse(is_terminal(b'{"type":"TEXT_MESSAGE_CONTENT","delta":"RUN_FINISHED"}\n'))


class ResultsTest(unittest.TestCase):
    def test_a_refusal_carries_the_servers_code_message_position_last_event_id_and_retry_after(self) -> None:
        error = http_error(RUN, 503, refusal_body("over_budget", "full", position=2, lastEventId=9), " 3 ")
        self.assertEqual((error.status, error.code, error.server_message, error.position, error.last_event_id,
                          error.retry_after), (503, "over_budget", "full", 2, 9, 3.0))
        self.assertEqual(str(error), "IQ-Stream answered 503 over_budget for run 'r-1' at event 2 of the request: full")
        self.assertIsNone(http_error(RUN, 503, b"{}", "Wed, 21 Oct 2015 07:28:00 GMT").retry_after)

    def test_a_stop_is_its_own_error_and_other_409s_are_not(self) -> None:
        self.assertIsInstance(http_error(RUN, 409, refusal_body("run_stopped"), None), RunStoppedError)
        self.assertNotIsInstance(http_error(RUN, 409, refusal_body("run_lost"), None), RunStoppedError)
        self.assertNotIsInstance(http_error(RUN, 400, refusal_body("run_stopped"), None), RunStoppedError)
        stop = stop_in(RUN, Answer(409, None, refusal_body("run_stopped", lastEventId=4)))
        self.assertIsInstance(stop, RunStoppedError)
        assert stop is not None
        self.assertEqual(stop.last_event_id, 4)
        self.assertIsNone(stop_in(RUN, Answer(409, None, refusal_body("run_lost"))))
        self.assertIsNone(stop_in(RUN, Answer(200, None, b'{"runId":"r-1","lastEventId":1,"ended":false}')))

    def test_a_refusal_that_is_not_json_keeps_its_text_as_the_message(self) -> None:
        error = http_error(RUN, 502, b"<html>Bad Gateway</html>", None)
        self.assertEqual((error.code, error.server_message), (None, "<html>Bad Gateway</html>"))
        self.assertIsNone(http_error(RUN, 502, b"", None).server_message)

    def test_a_status_is_none_for_404_a_run_status_for_200_and_raised_otherwise(self) -> None:
        self.assertIsNone(status_of(RUN, 404, None, b""))
        body = b'{"runId":"r-1","events":5,"bytes":200,"ended":true,"subscribers":2,"ageMs":30,"publishing":true}'
        self.assertEqual(status_of(RUN, 200, None, body), RunStatus(RUN, 5, 200, True, 2, 30, True))
        with self.assertRaises(IqStreamHttpError) as refused:
            status_of(RUN, 503, "1", refusal_body("draining"))
        self.assertEqual((refused.exception.code, refused.exception.retry_after), ("draining", 1.0))
        with self.assertRaisesRegex(IqStreamError, "unreadable run status"):
            status_of(RUN, 200, None, b"[]")

    def test_a_publish_is_its_result_for_200_and_raised_otherwise(self) -> None:
        self.assertEqual(published(RUN, 200, None, b'{"runId":"r-1","lastEventId":3,"ended":true}'),
                         PublishResult(RUN, 3, True))
        with self.assertRaisesRegex(IqStreamError, "unreadable publish reply"):
            published(RUN, 200, None, b'{"runId":"r-1"}')
        with self.assertRaises(IqStreamHttpError) as refused:
            published(RUN, 400, None, refusal_body("bad_json", position=1))
        self.assertEqual((refused.exception.code, refused.exception.position), ("bad_json", 1))

    def test_a_delete_is_200_or_204(self) -> None:
        check_deleted(RUN, 200, None, b"")
        check_deleted(RUN, 204, None, b"")
        with self.assertRaises(IqStreamHttpError) as refused:
            check_deleted(RUN, 404, None, refusal_body("not_found"))
        self.assertEqual(refused.exception.status, 404)


class PublisherDrivesRepairTest(unittest.TestCase):
    def repair(self, restore_buffer_bytes: int = 1 << 20, base: int = 0, sent: int = 2) -> Repair:
        client = IqStreamClient("http://127.0.0.1:9", max_retries=3, retry_delay=0.1, max_retry_delay=0.3,
                                restore_buffer_bytes=restore_buffer_bytes)
        repair = Repair(RUN, base, restore_buffer_bytes, client)
        repair.started()
        for i in range(base + 1, base + sent + 1):
            repair.sent(line(i))
        return repair

    def test_a_200_at_the_body_end_is_the_result_and_confirms_every_event(self) -> None:
        repair = self.repair()
        step = repair.answered(Answer(200, None, b'{"runId":"r-1","lastEventId":2,"ended":true}'), finishing=True)
        self.assertEqual(step, Done(PublishResult(RUN, 2, True)))
        self.assertEqual(repair.unconfirmed, [])

    def test_an_unreadable_200_at_the_body_end_is_raised_and_confirms_nothing(self) -> None:
        repair = self.repair()
        with self.assertRaisesRegex(IqStreamError, "unreadable publish reply"):
            repair.answered(Answer(200, None, b"ok"), finishing=True)
        self.assertEqual(len(repair.unconfirmed), 2)

    def test_a_200_before_the_body_end_is_a_break_that_may_have_left_events(self) -> None:
        repair = self.repair()
        self.assertEqual(repair.answered(Answer(200, None, b"{}")), Wait(0.1))
        self.assertTrue(repair.may_have_events)
        self.assertEqual(repair.unconfirmed, [line(1), line(2)], "kept until the server's count says")

    def test_a_refusal_answer_fails_as_itself_or_waits_its_retry_after(self) -> None:
        stopped = self.repair().answered(Answer(409, None, refusal_body("run_stopped", lastEventId=3)))
        self.assertIsInstance(stopped, Fail)
        assert isinstance(stopped, Fail)
        self.assertIsInstance(stopped.error, RunStoppedError)
        self.assertEqual(self.repair().answered(Answer(503, "2", refusal_body("draining")), finishing=True), Wait(2.0))

    def test_publisher_active_is_retried_only_once_the_publisher_started_a_second_request(self) -> None:
        repair = self.repair()
        answer = Answer(409, None, refusal_body("publisher_active"))
        first = repair.answered(answer)
        self.assertIsInstance(first, Fail, "its first request: another publisher holds the run")
        repair = self.repair()
        repair.started()
        self.assertEqual(repair.requests_started, 2)
        self.assertEqual(repair.answered(answer), Wait(0.1), "its own broken request, not yet ended at the server")

    def test_each_steps_outcome_names_the_next_step(self) -> None:
        repair = self.repair(base=4, sent=2)
        step = repair.broke(ConnectionResetError())
        self.assertEqual(step, Wait(0.1))
        step = repair.after(step, None)
        self.assertEqual(step, AskStatus())
        step = repair.after(step, Broken(IqStreamError("refused connection", RUN)))
        self.assertEqual(step, Wait(0.2), "a status that could not be had is retried")
        step = repair.after(repair.after(step, None), RunStatus(RUN, 5, 200, False, 0, 1, False))
        self.assertEqual(step, Resend(5, [line(6)]))
        self.assertEqual(repair.after(step, Broken(BrokenPipeError())), Wait(0.1),
                         "the server took an event: the attempts start again")
        self.assertEqual(repair.after(Resend(5, [line(6)]), None), Resumed())

    def test_a_status_refused_below_500_fails_and_no_step_follows_a_final_one(self) -> None:
        repair = self.repair()
        repair.broke(ConnectionResetError())
        unauthorized = IqStreamHttpError(RUN, 401, "unauthorized", "no")
        self.assertEqual(repair.after(AskStatus(), Broken(unauthorized)), Fail(unauthorized))
        with self.assertRaises(ValueError):
            repair.after(Done(PublishResult(RUN, 1, False)), None)

    def test_a_probes_answer_fails_with_run_lost_or_as_a_restarted_run(self) -> None:
        repair = self.repair(restore_buffer_bytes=0, base=3, sent=1)
        repair.broke(ConnectionResetError())
        probe = repair.after(AskStatus(), None)
        self.assertEqual(probe, Probe(3))
        lost = repair.after(probe, Answer(409, None, refusal_body("run_lost")))
        assert isinstance(lost, Fail) and isinstance(lost.error, IqStreamHttpError)
        self.assertEqual(lost.error.code, "run_lost")
        restarted = repair.after(probe, Answer(200, None, b'{"runId":"r-1","lastEventId":0,"ended":false}'))
        assert isinstance(restarted, Fail)
        self.assertIn("was lost and restarted by the server", str(restarted.error))


if __name__ == "__main__":
    unittest.main()
