#!/usr/bin/python3
"""Clock check: modules/ reads simulated time only through the event calendar.

The calendar runs ahead of the kernel (modules/core/event_calendar.h): a module that reads
the kernel's clock, or waits or notifies on a time it built itself, sees the kernel's
instant rather than the calendar's and breaks exact temporal decoupling without any test
noticing until a schedule happens to run ahead. Outside the calendar's own files:
- no read of the kernel's clock (sc_time_stamp, sc_time_to_pending_activity, ...): the
  time is EventCalendar::now();
- no wait / next_trigger / notify on a literal time (SC_NS, sc_time(...)): durations come
  from the configuration (ps_time, units in the names), instants from EventCalendar::now(),
  kernel notifications through EventCalendar::kernel_delay or notify_now;
- a timed wait on an instant measures it from EventCalendar::now().

    check_clock.py MODULES_DIR

Prints one line per violation (file, line, what, why) and exits 1.
"""
import os
import re
import sys

from source_files import numbered_lines, source_files

CALENDAR = {os.path.join("core", "event_calendar.h"), os.path.join("core", "event_calendar.cpp")}
KERNEL_CLOCK = re.compile(
    r"\b(sc_time_stamp|sc_time_to_pending_activity|sc_simulation_time|sc_delta_count|"
    r"sc_pending_activity_at_future_time)\b")
TIMED_CALL = re.compile(r"\b(wait|next_trigger|notify)\s*\((.*)")
LITERAL_TIME = re.compile(r"\bSC_(FS|PS|NS|US|MS|SEC)\b|\bsc_time\s*\(")
# `wait(<instant> - <reference>)`: the reference must be the calendar's now().
INSTANT_WAIT = re.compile(r"\bwait\s*\(([^,()]|\([^()]*\))*-\s*([A-Za-z_:]+(\(\))?)")


def code_of(line):
    return line.split("//", 1)[0]


def line_violations(rel, no, code):
    m = KERNEL_CLOCK.search(code)
    if m:
        yield (f"{rel}:{no}: reads the kernel's clock ({m.group(1)}); use "
               f"EventCalendar::now()")
    call = TIMED_CALL.search(code)
    if call and LITERAL_TIME.search(call.group(2)):
        yield (f"{rel}:{no}: {call.group(1)} on a literal time; durations from the "
               f"configuration (ps_time), kernel delays through EventCalendar::kernel_delay")
    wait = INSTANT_WAIT.search(code)
    if wait and wait.group(2) != "EventCalendar::now()":
        yield (f"{rel}:{no}: waits until an instant measured from {wait.group(2)}, not "
               f"EventCalendar::now()")


def violations(modules_dir):
    folder = os.path.basename(os.path.normpath(modules_dir))
    for path, inner in source_files(modules_dir):
        if inner in CALENDAR:
            continue
        for no, line in numbered_lines(path):
            yield from line_violations(os.path.join(folder, inner), no, code_of(line))


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    found = list(violations(sys.argv[1]))
    for v in found:
        print(v)
    print(f"clock: {len(found)} violation(s) in {sys.argv[1]}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
