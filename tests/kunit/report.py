#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a KUnit run's kernel log into make check's result lines.

    report.py --tree TREE --log BUILD_DIR/test.log --suites "a b c" \
              [--prefix kunit@7.3]

Prints one line per test, "PASS: kunit/<suite>/<case>" or
"FAIL: kunit/<suite>/<case>: why"; a parameterised case gives one line
per parameter, "kunit/<suite>/<case>/<parameter>".  --prefix replaces
"kunit" (tests/kunit/run.sh gives "kunit@<series>" for a kernel other
than 6.12, so that the two runs' lines differ).  Every suite named by
--suites that did not report counts as a failure, so a suite that never
registered (or a kernel that died before reaching it) cannot pass.

The KTAP is parsed by the tree's own kunit_parser (what kunit.py uses),
which also copes with a kernel that crashed half way through a suite.
Exit status: 0 if everything named passed, 1 otherwise.
"""

import argparse
import inspect
import os
import re
import sys

FAILED_AT = re.compile(r'(EXPECTATION|ASSERTION) FAILED at (\S+)')
# What a dying kernel says, to name the cause of a crashed test.
DEATH = re.compile(r'(Kernel panic - not syncing: .*|BUG: .*|Oops.*|'
                   r'general protection fault.*|Segfault .*)')
death = None


def reason(test, status_name):
    """A one-line reason for a failed test, from its diagnostic lines."""
    log = [line.strip() for line in test.log]
    for i, line in enumerate(log):
        m = FAILED_AT.search(line)
        if not m:
            continue
        where = os.path.basename(m.group(2))
        # The lines after "FAILED at" say what was expected and found.
        detail = []
        for extra in log[i + 1:i + 4]:
            if FAILED_AT.search(extra) or not extra or \
                    extra.startswith(('ok ', 'not ok ')):
                break
            detail.append(extra.lstrip('# '))
        return '%s: %s' % (where, ' '.join(detail) or m.group(1).lower())
    if status_name == 'TEST_CRASHED':
        return 'crashed: %s' % (death or 'the kernel or the test died')
    for line in log:
        if line.startswith('# ') and line != '#':
            return line[2:]
    return status_name.lower().replace('_', ' ')


def report(test, name):
    """Print the lines for @test and everything below it; count failures."""
    status = test.status.name
    if not test.subtests:
        if status == 'SUCCESS':
            print('PASS: %s' % name)
            return 0
        # Our suites never skip: a skip means a test lost its input.
        why = 'skipped' if status == 'SKIPPED' else reason(test, status)
        print('FAIL: %s: %s' % (name, why))
        return 1
    failed = 0
    for i, sub in enumerate(test.subtests):
        # A test the kernel never reported has no name: use its number.
        failed += report(sub, '%s/%s' % (name, sub.name or '#%d' % (i + 1)))
    # A case can fail above its parameters (the kernel died between two).
    if not failed and status not in ('SUCCESS', 'SKIPPED'):
        print('FAIL: %s: %s' % (name, reason(test, status)))
        failed = 1
    return failed


def quiet_printer(kunit_printer):
    """A kunit_printer.Printer that prints nothing, in either API.

    6.12's Printer takes the file to print to; later ones (after 6.12,
    "kunit: tool: Only print the summary") take print=False and offer
    null_printer, and there Printer(file) would print to stdout.
    """
    if hasattr(kunit_printer, 'null_printer'):
        return kunit_printer.null_printer
    return kunit_printer.Printer(open(os.devnull, 'w'))


def parse(kunit_parser, lines, quiet):
    """kunit_parser.parse_run_tests(), printing nothing, in either API.

    The parser prints a progress report of its own: 6.12's through the
    module's stdout printer, later ones (the same change) through a
    printer argument as well.
    """
    kunit_parser.stdout = quiet
    params = inspect.signature(kunit_parser.parse_run_tests).parameters
    if 'printer' in params:
        return kunit_parser.parse_run_tests(lines, quiet)
    return kunit_parser.parse_run_tests(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tree', required=True)
    ap.add_argument('--log', required=True)
    ap.add_argument('--suites', required=True,
                    help='space-separated suites that must report')
    ap.add_argument('--prefix', default='kunit',
                    help='the first part of every test name')
    args = ap.parse_args()

    sys.path.insert(0, os.path.join(args.tree, 'tools/testing/kunit'))
    import kunit_parser
    import kunit_printer

    # The parser's progress report stays off stdout.
    quiet = quiet_printer(kunit_printer)
    kunit_printer.stdout = quiet

    expected = args.suites.split()
    failed = 0
    seen = set()

    global death
    if os.path.exists(args.log):
        with open(args.log, errors='backslashreplace') as f:
            lines = f.readlines()
        for line in lines:
            m = DEATH.search(line)
            if m:
                death = m.group(1).strip()
                break
        root = parse(kunit_parser, lines, quiet)
        suites = root.subtests
    else:
        suites = []

    for suite in suites:
        if suite.name not in expected:
            continue
        seen.add(suite.name)
        if not suite.subtests:
            failed += 1
            print('FAIL: %s/%s: no test case reported (%s)' %
                  (args.prefix, suite.name, suite.status.name.lower()))
            continue
        failed += report(suite, '%s/%s' % (args.prefix, suite.name))

    for name in expected:
        if name not in seen:
            failed += 1
            print('FAIL: %s/%s: suite did not run (%s; see %s)' %
                  (args.prefix, name, death or 'not in the kernel log',
                   args.log))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
