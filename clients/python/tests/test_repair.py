"""The repair step of both publishers (``iqstream._repair.Repair``), by itself: no server, no socket. Each test tells
it what happened, as a publisher would, and checks the step it names next."""

from __future__ import annotations

import unittest

from iqstream import IqStreamClient, IqStreamError, IqStreamHttpError, PublishResult, RunStatus
from iqstream._repair import AskStatus, Done, Fail, Probe, Repair, Resend, Wait

RUN = "r-1"


def line(i: int) -> bytes:
    return b'{"type":"CUSTOM","name":"e","value":%d}\n' % i


def status(events: int, ended: bool = False, publishing: bool = False) -> RunStatus:
    return RunStatus(RUN, events, events * 40, ended, 0, 1000, publishing)


def refusal(status_code: int, code: str | None, retry_after: float | None = None,
            last_event_id: int | None = None) -> IqStreamHttpError:
    return IqStreamHttpError(RUN, status_code, code, "refused", 0, retry_after, last_event_id)


class RepairTest(unittest.TestCase):
    def repair(self, base: int = 0, restore_buffer_bytes: int = 1 << 20, sent: int = 0,
               max_retries: int = 4) -> Repair:
        # the client's own settings object: what the publishers hand their Repair
        client = IqStreamClient("http://127.0.0.1:9", max_retries=max_retries, retry_delay=0.1,
                                max_retry_delay=0.3, restore_buffer_bytes=restore_buffer_bytes)
        repair = Repair(RUN, base, restore_buffer_bytes, client)
        for i in range(base + 1, base + sent + 1):
            repair.sent(line(i))
        return repair

    def test_a_break_waits_with_a_doubling_backoff_then_asks_the_status(self) -> None:
        repair = self.repair(sent=3)
        self.assertEqual(repair.broke(ConnectionResetError()), Wait(0.1))
        self.assertEqual(repair.waited(), AskStatus())
        self.assertEqual(repair.status_failed(IqStreamError("refused connection", RUN)), Wait(0.2))
        self.assertEqual(repair.request_broke(ConnectionResetError()), Wait(0.3), "capped at max_retry_delay")
        self.assertEqual(repair.failures_in_row, 3)

    def test_resends_from_the_servers_count_the_events_it_does_not_hold(self) -> None:
        repair = self.repair(base=10, sent=5)  # events 11..15 on the broken request
        repair.broke(ConnectionResetError())
        repair.waited()
        step = repair.status_is(status(12))
        self.assertEqual(step, Resend(12, [line(13), line(14), line(15)]))
        self.assertEqual(repair.base, 12)
        self.assertEqual(repair.failures_in_row, 0, "the server took events: the attempts start again")

    def test_a_break_the_server_took_nothing_of_resends_everything_and_keeps_counting(self) -> None:
        repair = self.repair(base=10, sent=2)
        repair.broke(ConnectionResetError())
        self.assertEqual(repair.status_is(status(10)), Resend(10, [line(11), line(12)]))
        self.assertEqual(repair.failures_in_row, 1)

    def test_the_body_end_is_done_once_the_server_holds_every_event(self) -> None:
        repair = self.repair(base=4, sent=2)
        repair.broke(ConnectionResetError(), finishing=True)
        self.assertEqual(repair.status_is(status(6)), Done(PublishResult(RUN, 6, False)))
        ended = self.repair(base=4, sent=2)
        ended.broke(ConnectionResetError())
        self.assertEqual(ended.status_is(status(6, ended=True)), Done(PublishResult(RUN, 6, True)))

    def test_a_run_that_ended_with_events_unsent_fails_with_run_ended(self) -> None:
        repair = self.repair(base=4, sent=3)
        repair.broke(ConnectionResetError())
        step = repair.status_is(status(5, ended=True))
        assert isinstance(step, Fail) and isinstance(step.error, IqStreamHttpError)
        self.assertEqual((step.error.status, step.error.code), (409, "run_ended"))
        self.assertIn("2 events not appended", str(step.error))

    def test_a_count_the_publisher_cannot_explain_fails(self) -> None:
        for count in (3, 9):  # below the request's start; above what it sent
            with self.subTest(count=count):
                repair = self.repair(base=4, sent=2)
                repair.broke(ConnectionResetError())
                step = repair.status_is(status(count))
                assert isinstance(step, Fail)
                self.assertIn("changed under its publisher", str(step.error))

    def test_a_run_still_publishing_at_the_server_is_asked_again_after_a_wait(self) -> None:
        repair = self.repair(base=2, sent=2)
        repair.broke(ConnectionResetError())
        self.assertEqual(repair.status_is(status(3, publishing=True)), Wait(0.2))
        self.assertEqual(repair.base, 2, "an unfinished count settles nothing")
        self.assertEqual(repair.waited(), AskStatus())

    def test_a_run_no_node_holds_is_restored_from_the_kept_lines(self) -> None:
        repair = self.repair(sent=3)
        repair.confirmed()  # the server confirmed events 1..3
        repair.sent(line(4))
        repair.broke(ConnectionResetError())
        step = repair.status_is(None)  # 404
        self.assertEqual(step, Resend(0, [line(1), line(2), line(3), line(4)], restore_to=4))
        self.assertEqual((repair.restores, repair.base), (1, 0))

    def test_run_lost_restores_without_asking_the_status(self) -> None:
        repair = self.repair(sent=2)
        self.assertEqual(repair.refused(refusal(409, "run_lost"), requests_started=2), Wait(0.1))
        self.assertEqual(repair.waited(), Resend(0, [line(1), line(2)], restore_to=2))
        self.assertEqual(repair.restores, 1)

    def test_a_restore_that_breaks_is_continued_not_restored_twice(self) -> None:
        repair = self.repair(sent=3)
        repair.broke(ConnectionResetError())
        repair.status_is(None)  # the restore
        repair.sent(line(4))
        self.assertEqual(repair.request_broke(ConnectionResetError()), Wait(0.2))
        self.assertEqual(repair.waited(), AskStatus())
        self.assertEqual(repair.status_is(status(2)), Resend(2, [line(3), line(4)]))
        self.assertEqual(repair.restores, 1)

    def test_without_kept_lines_a_lost_run_is_probed_and_fails_with_run_lost(self) -> None:
        for restore_buffer_bytes, base in ((0, 0), (1 << 20, 7)):  # off; a run joined at 7 (nothing kept)
            with self.subTest(restore_buffer_bytes=restore_buffer_bytes, base=base):
                repair = self.repair(base=base, restore_buffer_bytes=restore_buffer_bytes, sent=2)
                repair.broke(ConnectionResetError())
                self.assertEqual(repair.status_is(None), Probe(max(base, 1)))
                lost = refusal(409, "run_lost", last_event_id=base + 2)
                self.assertEqual(repair.probe_answered(lost, requests_started=2), Fail(lost))
                self.assertEqual(repair.restores, 0)

    def test_a_probe_that_the_server_accepts_fails_as_a_restarted_run(self) -> None:
        repair = self.repair(base=5, restore_buffer_bytes=0, sent=1)
        repair.broke(ConnectionResetError())
        self.assertEqual(repair.status_is(None), Probe(5))
        step = repair.probe_answered(None, requests_started=2)
        assert isinstance(step, Fail)
        self.assertIn("lost and restarted", str(step.error))

    def test_a_probe_refused_for_a_while_is_retried_and_the_body_end_still_completes(self) -> None:
        repair = self.repair(base=3, restore_buffer_bytes=0, sent=1)
        repair.broke(ConnectionResetError(), finishing=True)
        self.assertEqual(repair.status_is(None), Probe(3))
        draining = refusal(503, "draining", retry_after=1.0)
        self.assertEqual(repair.probe_answered(draining, requests_started=2), Wait(1.0))
        self.assertEqual(repair.waited(), AskStatus())
        self.assertEqual(repair.status_is(status(4)), Done(PublishResult(RUN, 4, False)))

    def test_a_refusal_before_any_event_took_none_so_a_404_starts_the_run_again(self) -> None:
        repair = self.repair(restore_buffer_bytes=0, sent=2)
        # an IQ-Stream refusal without lastEventId (over budget): the run holds nothing of this request
        self.assertEqual(repair.refused(refusal(503, "over_budget"), requests_started=1), Wait(0.1))
        self.assertEqual(repair.status_is(None), Resend(0, [line(1), line(2)]))
        # a proxy's 502 (no IQ-Stream code) may have let events through: the server is asked to say run_lost
        proxied = self.repair(restore_buffer_bytes=0, sent=2)
        proxied.refused(refusal(502, None), requests_started=1)
        self.assertEqual(proxied.status_is(None), Probe(1))

    def test_retry_after_is_the_least_wait_of_every_attempt_of_the_repair(self) -> None:
        repair = self.repair(base=3, sent=1)
        self.assertEqual(repair.refused(refusal(503, "draining", retry_after=2.0), requests_started=1), Wait(2.0))
        self.assertEqual(repair.status_failed(refusal(503, "draining")), Wait(2.0))
        self.assertEqual(repair.broke(ConnectionResetError()), Wait(0.3), "a new repair, without Retry-After")

    def test_a_refusal_that_cannot_be_retried_fails_as_itself(self) -> None:
        for error in (refusal(400, "bad_json"), refusal(409, "event_id_mismatch"), refusal(413, "event_too_large")):
            with self.subTest(code=error.code):
                repair = self.repair(sent=1)
                self.assertEqual(repair.refused(error, requests_started=3), Fail(error))
                self.assertEqual(repair.failures_in_row, 0)

    def test_publisher_active_is_retried_only_after_a_request_of_this_publisher(self) -> None:
        active = refusal(409, "publisher_active")
        self.assertEqual(self.repair(sent=1).refused(active, requests_started=1), Fail(active))
        self.assertEqual(self.repair(sent=1).refused(active, requests_started=2), Wait(0.1))

    def test_a_status_refused_below_500_fails_the_publish(self) -> None:
        repair = self.repair(sent=1)
        repair.broke(ConnectionResetError())
        forbidden = refusal(403, "forbidden")
        self.assertEqual(repair.status_failed(forbidden), Fail(forbidden))

    def test_the_repair_fails_after_max_retries_attempts_in_a_row(self) -> None:
        repair = self.repair(base=1, sent=1, max_retries=3)
        steps = [repair.broke(ConnectionResetError("first"))]
        steps += [repair.request_broke(ConnectionResetError(f"again {i}")) for i in range(3)]
        self.assertEqual(steps[:3], [Wait(0.1), Wait(0.2), Wait(0.3)])
        last = steps[3]
        assert isinstance(last, Fail)
        self.assertIsInstance(last.error, IqStreamError)
        self.assertIn("after 3 attempts", str(last.error))
        self.assertIsInstance(last.error.__cause__, ConnectionResetError)
        self.assertEqual(str(last.error.__cause__), "again 2")

    def test_lines_past_the_restore_cap_are_not_kept_so_a_lost_run_is_probed(self) -> None:
        repair = self.repair(restore_buffer_bytes=len(line(1)) * 2, sent=3)
        self.assertFalse(repair.kept.can_restore())
        repair.broke(ConnectionResetError())
        self.assertEqual(repair.status_is(None), Probe(1))


if __name__ == "__main__":
    unittest.main()
