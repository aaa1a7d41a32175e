#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of tests/bench/tracebreak over a trace text of known timings.

Run by tests/unit/run.sh; prints TAP ("ok N - test_x") as the cmocka
suites do, so that run.sh turns it into PASS/FAIL lines the same way.
"""
import contextlib
import importlib.machinery
import importlib.util
import io
import json
import os
import re
import sys
import tempfile
import traceback
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def _load_tool():
    path = os.path.join(TOP, "tests", "bench", "tracebreak")
    loader = importlib.machinery.SourceFileLoader("tracebreak", path)
    spec = importlib.util.spec_from_loader("tracebreak", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


tb = _load_tool()

# What /sys/kernel/tracing/trace shows (default options), timings chosen
# so that every phase below is a whole number of microseconds:
#   read  2/5: post +10, complete +500, end +40, ns 550000
#   read  3/1: post +20, flushed +300, failover, retry post +10,
#              complete +200, end +70, ns 600000
#   read  2/6: never-written pages, no network: end +5, ns 5000
#   read  3/2: back to blk-mq once, then post +10, complete +300, end +20
#   write 0/0: two copies, posts +5 and +6, completions +400 and +900,
#              end +950, ns 950000
#   discard 0/1, ns 2000; an end whose queue_rq the buffer lost (1/9)
SAMPLE = """\
# tracer: nop
#
# entries-in-buffer/entries-written: 29/36   #P:2
#
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
CPU:1 [LOST 7 EVENTS]
   kworker/u5:1-88      [000] d..1.    99.999000: farswap_donor_state: dev=farswap0 donor=1 addr=10.0.0.3:7471 gen=2 old=connecting new=live
      pageverify-312     [001] .....   100.000100: farswap_queue_rq: dev=farswap0 hwq=2 tag=5 op=read sector=8 bytes=4096
      pageverify-312     [001] .....   100.000110: farswap_post: dev=farswap0 hwq=2 tag=5 op=read leg=0 donor=0 nwr=1 retry=0
          <idle>-0       [000] ..s1.   100.000610: farswap_complete: dev=farswap0 hwq=2 tag=5 donor=0 status=ok
          <idle>-0       [000] ..s1.   100.000650: farswap_end: dev=farswap0 hwq=2 tag=5 op=read error=0 ns=550000
      pageverify-313     [000] .....   100.001000: farswap_queue_rq: dev=farswap0 hwq=3 tag=1 op=read sector=4104 bytes=4096
      pageverify-313     [000] .....   100.001020: farswap_post: dev=farswap0 hwq=3 tag=1 op=read leg=0 donor=0 nwr=1 retry=0
   kworker/u5:1-88      [001] d..1.   100.001100: farswap_donor_state: dev=farswap0 donor=0 addr=10.0.0.2:7471 gen=1 old=live new=failed
   kworker/u5:1-88      [001] ..s1.   100.001320: farswap_complete: dev=farswap0 hwq=3 tag=1 donor=0 status=flushed
   kworker/u5:1-88      [001] d.s2.   100.001325: farswap_failover: dev=farswap0 hwq=3 tag=1 sector=4104 from=0 to=1 reason=timeout
   kworker/u5:1-88      [001] ..s1.   100.001330: farswap_post: dev=farswap0 hwq=3 tag=1 op=read leg=0 donor=1 nwr=1 retry=1
          <idle>-0       [001] ..s1.   100.001530: farswap_complete: dev=farswap0 hwq=3 tag=1 donor=1 status=ok
          <idle>-0       [001] ..s1.   100.001600: farswap_end: dev=farswap0 hwq=3 tag=1 op=read error=0 ns=600000
      pageverify-312     [001] .....   100.002000: farswap_queue_rq: dev=farswap0 hwq=2 tag=6 op=read sector=16 bytes=4096
      pageverify-312     [001] d.h1.   100.002005: farswap_end: dev=farswap0 hwq=2 tag=6 op=read error=0 ns=5000
      pageverify-313     [000] .....   100.003000: farswap_queue_rq: dev=farswap0 hwq=3 tag=2 op=read sector=24 bytes=4096
    kworker/0:1H-40      [000] .....   100.003500: farswap_queue_rq: dev=farswap0 hwq=3 tag=2 op=read sector=24 bytes=4096
    kworker/0:1H-40      [000] .....   100.003510: farswap_post: dev=farswap0 hwq=3 tag=2 op=read leg=0 donor=1 nwr=1 retry=0
          <idle>-0       [000] ..s1.   100.003810: farswap_complete: dev=farswap0 hwq=3 tag=2 donor=1 status=ok
          <idle>-0       [000] ..s1.   100.003830: farswap_end: dev=farswap0 hwq=3 tag=2 op=read error=0 ns=330000
     kswapd0-45      [000] .....   100.004000: farswap_queue_rq: dev=farswap0 hwq=0 tag=0 op=write sector=512 bytes=4096
     kswapd0-45      [000] .....   100.004005: farswap_post: dev=farswap0 hwq=0 tag=0 op=write leg=0 donor=0 nwr=1 retry=0
     kswapd0-45      [000] .....   100.004006: farswap_post: dev=farswap0 hwq=0 tag=0 op=write leg=1 donor=1 nwr=1 retry=0
          <idle>-0       [000] ..s1.   100.004400: farswap_complete: dev=farswap0 hwq=0 tag=0 donor=0 status=ok
          <idle>-0       [001] ..s1.   100.004900: farswap_complete: dev=farswap0 hwq=0 tag=0 donor=1 status=ok
          <idle>-0       [001] ..s1.   100.004950: farswap_end: dev=farswap0 hwq=0 tag=0 op=write error=0 ns=950000
       swapon-500     [001] .....   100.005000: farswap_queue_rq: dev=farswap0 hwq=0 tag=1 op=discard sector=0 bytes=1048576
       swapon-500     [001] .....   100.005002: farswap_end: dev=farswap0 hwq=0 tag=1 op=discard error=0 ns=2000
          <idle>-0       [000] ..s1.   100.005100: farswap_end: dev=farswap0 hwq=1 tag=9 op=write error=0 ns=70000
"""


class TraceBreakTest(unittest.TestCase):
    def setUp(self):
        self.b = tb.breakdown(SAMPLE.splitlines(True))
        self.t = self.b.table()

    def assertRow(self, op, phase, count, p50, p90, p99):
        row = self.t[op][phase]
        self.assertEqual(row["count"], count, (op, phase))
        for key, want in (("p50", p50), ("p90", p90), ("p99", p99)):
            self.assertAlmostEqual(row[key], want, places=3,
                                   msg="%s %s %s" % (op, phase, key))

    def test_percentile_nearest_rank(self):
        vals = list(range(100, 0, -1))
        self.assertEqual(tb.percentile(vals, 50), 50)
        self.assertEqual(tb.percentile(vals, 90), 90)
        self.assertEqual(tb.percentile(vals, 99), 99)
        self.assertEqual(tb.percentile([7], 99), 7)
        self.assertEqual(tb.percentile([1, 2], 50), 1)

    def test_parse_line_formats(self):
        want = (100.5, "farswap_end", {"dev": "farswap0", "hwq": "2", "tag": "5",
                                       "op": "read", "error": "-5", "ns": "10"})
        rest = "100.500000: farswap_end: dev=farswap0 hwq=2 tag=5 op=read error=-5 ns=10"
        for head in ("  fio-12     [001] d.s2. ",             # irq-info (default)
                     "  fio-12     [001] ",                   # irq-info off
                     "  fio-12     (   12) [001] ..... ",     # tgid
                     "  kworker/u5:0 x-y-12 [000] ..... "):   # odd task name
            self.assertEqual(tb.parse_line(head + rest), want, head)
        self.assertIsNone(tb.parse_line("# tracer: nop"))
        self.assertIsNone(tb.parse_line(
            "  fio-12 [001] ..... 1.000000: block_rq_issue: 8,0 R 4096 () 8 + 8 [fio]"))

    def test_ops_in_order(self):
        self.assertEqual(list(self.t), ["read", "write", "discard"])

    def test_read_phases(self):
        self.assertRow("read", "queue->post", 3, 10, 20, 20)
        self.assertRow("read", "post->complete", 3, 300, 500, 500)
        self.assertRow("read", "complete->end", 3, 40, 70, 70)
        # total is farswap_end's ns, the zero read's 5 us included
        self.assertRow("read", "total", 4, 330, 600, 600)

    def test_write_two_copies(self):
        self.assertRow("write", "queue->post", 1, 5, 5, 5)
        self.assertRow("write", "post->complete", 1, 395, 395, 395)
        self.assertRow("write", "complete->end", 1, 50, 50, 50)
        self.assertRow("write", "total", 1, 950, 950, 950)

    def test_no_network_counts_in_total_only(self):
        self.assertEqual(self.t["discard"]["queue->post"]["count"], 0)
        self.assertIsNone(self.t["discard"]["queue->post"]["p50"])
        self.assertRow("discard", "total", 1, 2, 2, 2)

    def test_summary(self):
        s = self.b.summary()
        self.assertEqual(s["lost_events"], 7)
        self.assertEqual(s["unmatched_ends"], 1)
        self.assertEqual(s["restarted"], 1)
        self.assertEqual(s["unfinished"], 0)
        self.assertEqual(s["failovers"], {"timeout": 1})
        self.assertEqual(s["events"], 29)

    def test_staged_write(self):
        # A write request ended once staged (tag 7), and the staged write
        # (slot 0: tag -1) on the wire: post, complete +300, end +20.
        lines = [
            "   kworker/0:1H-44   [000] .....   200.000000: farswap_queue_rq: dev=farswap0 hwq=0 tag=7 op=write sector=0 bytes=4096",
            "   kworker/0:1H-44   [000] .....   200.000010: farswap_end: dev=farswap0 hwq=0 tag=7 op=write error=0 ns=10000",
            "   kworker/0:1H-44   [000] .....   200.000020: farswap_post: dev=farswap0 hwq=0 tag=-1 op=write leg=0 donor=0 nwr=1 retry=0",
            "          <idle>-0   [001] ..s1.   200.000320: farswap_complete: dev=farswap0 hwq=0 tag=-1 donor=0 status=success",
            "          <idle>-0   [001] ..s1.   200.000340: farswap_end: dev=farswap0 hwq=0 tag=-1 op=write error=0 ns=320000",
        ]
        b = tb.breakdown(lines)
        t = b.table()
        self.assertEqual(b.ops(), ["write", "staged"])
        self.assertEqual(t["write"]["total"]["p50"], 10.0)
        self.assertEqual(t["write"]["post->complete"]["count"], 0)
        self.assertEqual(t["staged"]["queue->post"]["p50"], 0.0)
        self.assertAlmostEqual(t["staged"]["post->complete"]["p50"], 300.0, places=3)
        self.assertAlmostEqual(t["staged"]["complete->end"]["p50"], 20.0, places=3)
        self.assertEqual(t["staged"]["total"]["p50"], 320.0)
        self.assertEqual(b.summary()["unmatched_ends"], 0)

    def test_unfinished_request(self):
        b = tb.breakdown(SAMPLE.splitlines()[:20])
        self.assertEqual(b.summary()["unfinished"], 1)
        self.assertEqual(b.table()["read"]["total"]["count"], 1)

    def test_text_table(self):
        text = self.b.format()
        lines = text.splitlines()
        self.assertTrue(re.match(r"op\s+phase\s+count\s+p50_us\s+p90_us\s+p99_us$", lines[0]))
        self.assertIn("read     queue->post            3       10.0       20.0       20.0", lines)
        self.assertIn("write    total                  1      950.0      950.0      950.0", lines)
        self.assertIn("discard  queue->post            0          -          -          -", lines)
        self.assertIn("# failovers: timeout 1", lines)
        self.assertTrue(any("lost 7" in l for l in lines))

    def test_empty_trace(self):
        text = tb.breakdown(["# tracer: nop\n"]).format()
        self.assertIn("no farswap request ended", text)

    def test_cli_file_and_json(self):
        with tempfile.NamedTemporaryFile("w", suffix=".trace") as f:
            f.write(SAMPLE)
            f.flush()
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(tb.main(["--json", f.name]), 0)
            doc = json.loads(out.getvalue())
            self.assertEqual(doc["breakdown"]["read"]["total"]["count"], 4)
            self.assertEqual(doc["lost_events"], 7)
            out = io.StringIO()
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "b.json")
                with contextlib.redirect_stdout(out):
                    self.assertEqual(tb.main(["--json-out", path, f.name]), 0)
                with open(path) as j:
                    self.assertEqual(json.load(j), doc)
            self.assertEqual(out.getvalue(), self.b.format())

    def test_module_formats_match(self):
        """The fields the tool reads are the ones kmod/trace.h prints."""
        with open(os.path.join(TOP, "kmod", "trace.h")) as f:
            src = f.read()
        fmts = dict(re.findall(r'TRACE_EVENT\((farswap_\w+),.*?TP_printk\("([^"]*)"',
                               src, re.S))
        rq = "dev=%s hwq=%u tag=%d"
        for ev in ("farswap_queue_rq", "farswap_post", "farswap_complete",
                   "farswap_end", "farswap_failover"):
            self.assertTrue(fmts[ev].startswith(rq + " "), ev)
        self.assertIn("op=%s", fmts["farswap_queue_rq"])
        self.assertIn("ns=%llu", fmts["farswap_end"])
        self.assertIn("reason=%s", fmts["farswap_failover"])
        self.assertIn("farswap_donor_state", fmts)


def main():
    """Run the cases, printing TAP the way cmocka's TAP output looks."""
    cases = unittest.TestLoader().loadTestsFromTestCase(TraceBreakTest)
    tests = list(cases)
    print("1..%d" % len(tests))
    failed = 0
    for i, test in enumerate(tests, 1):
        result = unittest.TestResult()
        test.run(result)
        name = test.id().rsplit(".", 1)[-1]
        problems = result.failures + result.errors
        if problems:
            failed += 1
            print("not ok %d - %s" % (i, name))
            for _, tb_text in problems:
                last = [l for l in tb_text.strip().splitlines() if l.strip()][-2:]
                for line in last:
                    print("# " + line.strip())
        else:
            print("ok %d - %s" % (i, name))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
