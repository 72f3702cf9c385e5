#!/usr/bin/env python3
"""Writes the hostile corpus: one JSON file per case in tests/hostile/cases/, each an input
built to break aggnet (run options, fault specs, platform files, sweep specs) with the
outcome it must have: a one-line error with exit status 2 naming what was wrong, or a run
that succeeds. run_case.py runs one case; CMake adds one ctest per file (label hostile).

Usage: make_corpus.py [--check]   (--check: exit 1 if the files differ from this script's)
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")

RUN = ["run", "-q", "--gradient", "4MiB", "--steps", "1", "--no-colocated"]
# The issue's R (aggnet run -q --gradient 64MiB --json out.json), without the reference.
ISSUE = ["run", "-q", "--gradient", "64MiB", "--no-colocated", "--json", "{dir}/out.json"]

NY_PLATFORM = """name: ny_nyx2
defaults:
  link: {bandwidth: 10Gbps}
sites:
  - {code: a}
  - {code: ny}
  - {code: nyx2}
links:
  - {a: a, b: ny, delay: 10ms}
  - {a: ny, b: nyx2, delay: 30ms}
"""

LINE3 = """name: line3
defaults:
  link: {bandwidth: 10Gbps}
sites:
  - {code: a}
  - {code: b}
  - {code: c}
links:
  - {a: a, b: b, delay: 10ms%s}
  - {a: b, b: c, delay: 30ms}
"""

SWEEP = """name: hostile
base: {gradient: 256KiB, chunk: 64KiB, steps: 1}
axes:
%s
"""


def refused(stderr):
    return {"exit": 2, "stderr": stderr}


OK = {"exit": 0}

cases = {}


def case(name, about, argv, expect, files=None, env=None):
    assert name not in cases, name
    c = {"about": about, "argv": argv, "expect": expect}
    if files:
        c["files"] = files
    if env:
        c["env"] = env
    cases[name] = c


def text(t):
    return {"text": t}


# --- Issue 35's second hostile pass ---------------------------------------------------
case("issue_watchdog_1ps", "a watchdog window whose check interval (window / 8) is 0 ps",
     ISSUE + ["--loss", "0.01", "--watchdog", "1ps"],
     refused("--watchdog: expected a time of at least 1.000 ms"))
case("issue_overlapping_down", "overlapping down windows of one link",
     ISSUE + ["--fault", "down:nyc-lon@1000ms-1200ms", "--fault", "down:nyc-lon@1100ms-3000ms"], OK)
case("issue_down_beyond_run", "a down window that starts after the run and ends past the horizon",
     ISSUE + ["--fault", "down:nyc-lon@100s-10000001s"], OK)
case("issue_p2p_many_messages", "999999 point-to-point messages queued at once",
     ISSUE + ["--schedule", "p2p:lon-nycx999999"],
     refused("--schedule: expected transfers that fit in memory"),
     env={"AGGNET_MEMORY_LIMIT": "8GiB"})
case("issue_p2p_ambiguous", "p2p:a-nyx2 with sites ny and nyx2",
     RUN + ["--platform", "{dir}/ny.yaml", "--schedule", "p2p:a-nyx2"],
     refused("an unambiguous p2p list"), files={"ny.yaml": text(NY_PLATFORM)})
case("issue_p2p_disambiguated", "p2p:a-nyx2x1: site nyx2, one message",
     RUN + ["--platform", "{dir}/ny.yaml", "--schedule", "p2p:a-nyx2x1"], OK,
     files={"ny.yaml": text(NY_PLATFORM)})
for schedule, gradient in [("ring", "1B"), ("ring:sendrecv", "2B"), ("reduce-scatter", "3B"),
                           ("all-gather", "1B"), ("ring", "5B")]:
    case(f"issue_{schedule.replace(':', '_').replace('-', '_')}_{gradient}",
         f"{schedule} with a {gradient} gradient (less than whole floats)",
         ["run", "-q", "--schedule", schedule, "--gradient", gradient, "--no-colocated"],
         refused("--gradient: expected a whole number of 4-byte floats, at least 4B"))
case("issue_stall_exponents", "a stall window written with negative exponents",
     RUN + ["--fault", "stall:lon@1e-1s-2e-1s"], OK)
case("issue_slow_1e300", "a slowdown that overflows the compute time",
     RUN + ["--fault", "slow:lon=1e300"], refused("--fault: slow:lon: compute time x 1e+300"))
case("issue_memory_limit_malformed", "AGGNET_MEMORY_LIMIT that is not a size", RUN,
     refused("AGGNET_MEMORY_LIMIT: expected a size"), env={"AGGNET_MEMORY_LIMIT": "lots"})
case("issue_platform_dev_zero", "a platform file without end", RUN + ["--platform", "/dev/zero"],
     refused("/dev/zero: expected a file of at most 64 MiB"))
case("issue_stats_full_device", "--stats to a link to a full device with --json and --vcd",
     RUN + ["--json", "{dir}/r.json", "--vcd", "{dir}/w.vcd", "--stats", "{dir}/s.csv"],
     refused("--stats: expected a regular file or a new one, not a symbolic link"),
     files={"s.csv": {"link": "/dev/full"}})
case("gradient_past_64_bits", "a gradient of more bytes than 64 bits count",
     RUN[:2] + ["--gradient", "1000000000TiB"],
     refused("--gradient: expected a size below 2^64 bytes (16 EiB)"))
case("triads_on_three_sites", "the default schedule (triads) on a platform of 3 sites",
     ["run", "-q", "--platform", "{dir}/ny.yaml"],
     refused("aggnet run: --schedule: 'triads' needs a platform of 9 sites, got 3 in"),
     files={"ny.yaml": text(NY_PLATFORM)})
case("platform_missing", "a platform file that does not exist",
     RUN + ["--platform", "{dir}/none.yaml"], refused("none.yaml: cannot read file: No such file"))
case("platform_tab_indent", "a platform indented with a tab",
     RUN + ["--platform", "{dir}/tab.yaml"],
     refused("tab.yaml:9: malformed YAML: illegal block entry (line 9 is indented with a tab"),
     files={"tab.yaml": text(NY_PLATFORM.replace("  - {a: a, b: ny", "\t- {a: a, b: ny"))})
case("fifo_json", "--json to a FIFO (a writer would block until a reader came)",
     RUN + ["--json", "{dir}/p.json"], refused("--json: expected a regular file or a new one"),
     files={"p.json": {"fifo": True}})
case("issue_sweep_invalid_utf8", "a sweep spec with a Latin-1 byte",
     ["sweep", "{dir}/s.yaml", "--out", "{dir}/out"],
     refused("s.yaml:5: expected UTF-8 text, got the byte 0xe9"),
     files={"s.yaml": {"hex": (SWEEP % "  - {option: schedule, values: [triads]}\n# caf\xe9")
                       .encode("latin-1").hex()}})
case("issue_sweep_sequence_key", "a sweep spec with a list where a key belongs",
     ["sweep", "{dir}/s.yaml", "--out", "{dir}/out"],
     refused("s.yaml:2: base.<key>: expected a plain key, got a list"),
     files={"s.yaml": text("name: x\nbase: {[gradient, chunk]: 1MiB}\n")})
case("issue_sweep_equal_numbers", "axis values 0.01 and 1e-2",
     ["sweep", "{dir}/s.yaml", "--out", "{dir}/out"],
     refused("axes[0].values[1]: duplicate value: equals '0.01'"),
     files={"s.yaml": text(SWEEP % "  - {option: loss, values: [0.01, 1e-2]}")})
case("sweep_grid_of_a_million", "two axes of 1,000 values: a million points",
     ["sweep", "{dir}/s.yaml", "--out", "{dir}/out", "--dry-run"],
     refused("s.yaml:4: axes: expected a grid of at most 100000 points"),
     files={"s.yaml": text(SWEEP % (
         "  - {option: buffer, logrange: {from: 1MiB, to: 8GiB, points: 1000}}\n"
         "  - {option: set:defaults.link.bandwidth, name: rate,"
         " logrange: {from: 1Gbps, to: 100Gbps, points: 1000}}"))})
case("sweep_out_is_a_file", "--out naming a regular file",
     ["sweep", "{dir}/s.yaml", "--out", "{dir}/f"],
     refused("aggnet sweep: --out: expected a directory or a new one, got"),
     files={"s.yaml": text(SWEEP % "  - {option: schedule, values: [triads, ring]}"),
            "f": text("a file\n")})
case("sweep_out_is_a_link", "--out naming a symbolic link (dangling)",
     ["sweep", "{dir}/s.yaml", "--out", "{dir}/l"],
     refused("aggnet sweep: --out: expected a directory or a new one, not a symbolic link"),
     files={"s.yaml": text(SWEEP % "  - {option: schedule, values: [triads, ring]}"),
            "l": {"link": "/nonexistent-aggnet-out"}})
# What a sweep writes inside an existing --out, as a link, FIFO or device, would be written
# through: refused before any point runs, the link's target untouched.
OUT_SPEC = {"s.yaml": text(SWEEP % "  - {option: schedule, values: [triads, ring]}")}
for name, about, files, want in [
        ("sweep_out_logs_is_a_link", "--out/logs a link to another directory",
         {"elsewhere/keep": text("x\n"), "out/logs": {"link": "../elsewhere"}},
         "expected logs in it to be a directory or absent, not a symbolic link"),
        ("sweep_out_csv_is_a_link", "--out/results.csv a link to another file",
         {"victim.csv": text("keep\n"), "out/results.csv": {"link": "../victim.csv"}},
         "expected results.csv in it to be a regular file or absent, not a symbolic link"),
        ("sweep_out_db_is_a_link", "--out/results.db a dangling link",
         {"out/results.db": {"link": "../nowhere.db"}},
         "expected results.db in it to be a regular file or absent, not a symbolic link"),
        ("sweep_out_log_is_a_fifo", "a FIFO in --out/logs, where a point's log goes",
         {"out/logs/0123456789abcdef.log": {"fifo": True}},
         "expected logs/0123456789abcdef.log in it to be a regular file or absent, not a FIFO")]:
    case(name, about, ["sweep", "{dir}/s.yaml", "--out", "{dir}/out", "--no-plot", "--no-progress"],
         refused(want), files=dict(OUT_SPEC, **files))
case("issue_sweep_equal_sizes", "axis values 64MiB and 67108864B",
     ["sweep", "{dir}/s.yaml", "--out", "{dir}/out"],
     refused("duplicate value: equals '64MiB'"),
     files={"s.yaml": text(SWEEP % "  - {option: buffer, values: [64MiB, 67108864B]}")})

# --- Fault specs -------------------------------------------------------------------------
# A spec that does not parse reads as every option error: "--fault: <expected>, got '<spec>'".
SYNTAX = ("expected loss:A-B=RATE, down:A-B@T1[-T2], stall:SITE@T1-T2 or slow:SITE=FACTOR "
          "(e.g. down:lon-nyc@150ms-400ms)")
for name, spec, want in [
    ("negative_time", "down:nyc-lon@-1s", "expected a time with its unit, e.g. 150ms"),
    ("empty_window", "down:nyc-lon@1s-1s", "expected the end of the window after its start"),
    ("reversed_stall", "stall:lon@2s-1s", "expected the end of the window after its start"),
    ("stall_no_end", "stall:lon@1s", "expected a stall window T1-T2"),
    ("loss_nan", "loss:nyc-lon=nan", "expected a plain number, e.g. 0.01"),
    ("loss_negative", "loss:nyc-lon=-0.1", "expected a plain number, e.g. 0.01"),
    ("loss_one", "loss:nyc-lon=1", "expected a loss rate in [0, 1)"),
    ("loss_no_rate", "loss:nyc-lon", SYNTAX),
    ("slow_below_one", "slow:lon=0.5", "expected a slowdown factor >= 1"),
    ("slow_inf", "slow:lon=inf", "expected a plain number, e.g. 0.01"),
    ("no_link_name", "down:@1s", SYNTAX),
    ("no_time", "down:nyc-lon@", SYNTAX),
    ("time_overflow", "down:nyc-lon@1e400s", "expected a time with its unit, e.g. 150ms"),
    ("ps_overflow", "down:nyc-lon@18446744073709551616ps",
     "expected a time with its unit, e.g. 150ms"),
    ("unknown_kind", "flood:nyc-lon", SYNTAX),
]:
    case(f"fault_{name}", f"--fault '{spec}'", RUN + ["--fault", spec],
         refused(f"aggnet run: --fault: {want}, got '{spec}'\n"))
case("fault_empty", "--fault ''", RUN + ["--fault", ""], refused("--fault"))
# A site the platform lacks: the closest link of the platform, else the closest site.
for name, spec, want in [
    ("self_link", "down:nyc-nyc@1s", "down: no WAN link between nyc and nyc in the platform"),
    ("three_sites", "down:lon-nyc-ams@1s",
     "down: unknown site 'nyc-ams' in lon-nyc-ams (did you mean 'lon-nyc'?)"),
    ("non_ascii_site", "down:nyc-l\u00f6n@1s",
     "down: unknown site 'l\u00f6n' in nyc-l\u00f6n (did you mean 'nyc-lon'?)"),
    ("unknown_site", "stall:zzz@1s-2s", "stall: unknown site 'zzz'"),
    ("misspelt_link_site", "down:lon-nyk@1s",
     "down: unknown site 'nyk' in lon-nyk (did you mean 'lon-nyc'?)"),
    ("misspelt_link_sites", "loss:Londn-amss=0.01",
     "loss: unknown site 'Londn' in Londn-amss (did you mean 'lon-ams'?)"),
    ("unknown_link_site_near_a_site", "down:lon-chicago@1s",
     "down: unknown site 'chicago' in lon-chicago (did you mean 'chi'?)"),
    ("misspelt_stall_site", "stall:london@1s-2s",
     "stall: unknown site 'london' (did you mean 'lon'?)"),
    ("misspelt_slow_site", "slow:NYC=2", "slow: unknown site 'NYC' (did you mean 'nyc'?)"),
]:
    case(f"fault_{name}", f"--fault '{spec}'", RUN + ["--fault", spec],
         refused(f"aggnet run: --fault: {want}\n"))
case("fault_touching_windows", "two down windows that touch (one outage)",
     RUN + ["--fault", "down:nyc-lon@10ms-20ms", "--fault", "down:nyc-lon@20ms-30ms"], OK)
case("fault_slow_tiny_excess", "a slowdown barely above 1",
     RUN + ["--fault", "slow:lon=1.0000000001"], OK)
case("fault_loss_on_host_ring", "loss with the host ring (no loss recovery there)",
     RUN + ["--schedule", "ring", "--loss", "0.01"], refused("expected a group-average schedule"))

# --- Run options -------------------------------------------------------------------------
for name, args, want in [
    ("loss_one", ["--loss", "1"], "--loss: expected a number in [0, 1)"),
    ("loss_hex", ["--loss", "0x1p-4"], "--loss"),
    ("retransmit_zero", ["--retransmit-timeout", "0s"], "--retransmit-timeout"),
    ("watchdog_huge", ["--watchdog", "1e400s"], "--watchdog"),
    ("seed_2_64", ["--seed", "18446744073709551616"], "--seed: expected an integer <= "),
    ("steps_negative", ["--steps", "-1"], "--steps"),
    ("gradient_zero", ["--gradient", "0B"], "--gradient"),
    ("burst_zero", ["--burst", "0"], "--burst"),
    ("eps_one", ["--eps", "1"], "--eps"),
    ("buffer_one_byte", ["--buffer", "1B"], "buffer"),
    ("set_no_path", ["--set", "=x"], "--set"),
    ("set_no_value", ["--set", "defaults.link.bandwidth="], "defaults.link.bandwidth"),
    ("p2p_self", ["--schedule", "p2p:lon-lon"], "schedule"),
    ("p2p_empty", ["--schedule", "p2p:"], "schedule"),
    ("p2p_count_zero", ["--schedule", "p2p:lon-nycx0"], "message count"),
    ("random_seed_huge", ["--schedule", "random-3:99999999999999999999999"], "schedule"),
    ("trace_reversed", ["--vcd", "{dir}/w.vcd", "--trace-from", "2s", "--trace-to", "1s"],
     "--trace-to"),
    ("stats_interval_zero", ["--stats", "{dir}/s.csv", "--stats-interval", "0s"],
     "--stats-interval"),
    ("schedule_dev_zero", ["--schedule", "/dev/zero"], "schedule"),
    ("platform_directory", ["--platform", "/"], "expected a YAML file, got a directory"),
]:
    case(f"option_{name}", f"aggnet run {' '.join(args)}", RUN + args, refused(want))

# --- Platform files ----------------------------------------------------------------------
def platform_case(name, about, body, want):
    if want is None:
        expect = OK
    else:
        expect = refused(want)
    case(f"platform_{name}", about, RUN + ["--platform", "{dir}/p.yaml", "--schedule", "all-to-all"],
         expect, files={"p.yaml": body if isinstance(body, dict) else text(body)})


platform_case("sequence_name", "a list where the name belongs",
              LINE3.replace("name: line3", "name: [a, b]") % "", "p.yaml:1: name")
platform_case("negative_delay", "a negative link delay",
              LINE3.replace("delay: 10ms%s", "delay: -10ms"), "links.a-b.delay: expected a time")
platform_case("duplicate_key", "a key given twice",
              LINE3.replace("delay: 10ms%s", "delay: 10ms, delay: 20ms"), "duplicate")
platform_case("deep_nesting", "10,000 nested flow lists",
              "name: x\nsites: " + "[" * 10000 + "]" * 10000 + "\n", "p.yaml")
platform_case("alias_bomb", "aliases that expand a billion times",
              "name: x\na: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
              "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
              "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
              "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
              "i: [*h,*h,*h,*h,*h,*h,*h,*h,*h,*h]\n" + LINE3.replace("name: line3\n", "") % "",
              "p.yaml")
platform_case("nul_byte", "a NUL byte inside the file",
              {"hex": (LINE3 % "").replace("name: line3", "name: li\0ne3").encode().hex()},
              "p.yaml:1: expected text, got the control byte 0x00")
platform_case("utf8_bom", "a UTF-8 byte order mark", {"hex": "efbbbf" + (LINE3 % "").encode().hex()},
              None)
platform_case("overlong_utf8", "an overlong UTF-8 encoding of '/'",
              {"hex": ("# \xc0\xaf\n".encode("latin-1") + (LINE3 % "").encode()).hex()},
              "p.yaml:1: expected UTF-8 text, got the byte 0xc0")
platform_case("surrogate_utf8", "an encoded UTF-16 surrogate",
              {"hex": ("# x\n# \xed\xa0\x80\n".encode("latin-1") + (LINE3 % "").encode()).hex()},
              "p.yaml:2: expected UTF-8 text, got the byte 0xed")

for name, value, want in [
    ("loss_above_one", "loss: 1.5", "links.a-b.loss: expected a loss rate in [0, 1), got '1.5'"),
    ("loss_list", "loss: [0.1]", "links.a-b.loss: expected a single value"),
    ("loss_percent", "loss: 1%", "links.a-b.loss: expected a plain number"),
    ("down_reversed", "down: 2s-1s", "links.a-b.down: expected the end of the window after"),
    ("down_empty_list", "down: []", "links.a-b.down: expected a window T1[-T2] or a list"),
    ("down_mapping", "down: [1s, {at: 2s}]", "links.a-b.down: expected a window T1[-T2]"),
    ("down_no_unit", "down: 5", "links.a-b.down: expected a time with its unit"),
]:
    platform_case(f"link_{name}", f"a link fault '{value}' in the platform",
                  LINE3 % (", " + value), want)
platform_case("link_faults_ok", "a link's loss and overlapping down windows in the platform",
              LINE3 % ", loss: 0.01, down: [5ms-20ms, 10ms-40ms, 1e-1s-2e-1s]", None)
case("platform_link_loss_with_ring", "a lossy link in the platform with the host ring",
     RUN + ["--platform", "{dir}/p.yaml", "--schedule", "ring"],
     refused("--platform: expected a group-average schedule with losses"),
     files={"p.yaml": text(LINE3 % ", loss: 0.01")})
case("set_link_loss", "a link's loss set by --set",
     RUN + ["--set", "links.lon-nyc.loss=2"], refused("links.nyc-lon.loss: expected a loss rate"))

# --- Sweep specs -------------------------------------------------------------------------
def sweep_case(name, about, axes, want, base=None, stdout=None):
    body = SWEEP % axes
    if base is not None:
        body = body.replace("base: {gradient: 256KiB, chunk: 64KiB, steps: 1}", base)
    expect = refused(want) if want else dict(OK, stdout=stdout)
    case(f"sweep_{name}", about, ["sweep", "{dir}/s.yaml", "--out", "{dir}/out", "--dry-run"],
         expect, files={"s.yaml": text(body)})


sweep_case("equal_times", "axis values 1ms and 1000us",
           "  - {option: retransmit-timeout, values: [1ms, 1000us]}", "duplicate value: equals '1ms'")
sweep_case("value_list", "a list where an axis value belongs",
           "  - {option: gradient, values: [[1MiB, 2MiB]]}", "axes[0].values[0]")
sweep_case("fault_list_base", "a base with two faults and an axis of a third",
           "  - {option: fault, values: ['stall:lon@1ms-2ms', 'stall:nyc@1ms-2ms']}", None,
           base="base: {gradient: 256KiB, chunk: 64KiB, steps: 1, "
                "fault: ['slow:lon=2', 'slow:nyc=2']}",
           stdout="'--fault' 'slow:lon=2' '--fault' 'slow:nyc=2' '--fault' 'stall:nyc@1ms-2ms'")
sweep_case("fault_empty_list", "an empty list of faults in the base",
           "  - {option: schedule, values: [triads]}", "base.fault: expected a non-empty list",
           base="base: {gradient: 256KiB, chunk: 64KiB, steps: 1, fault: []}")
sweep_case("nested_key", "a mapping where a key belongs",
           "  - {option: schedule, values: [triads]}", "expected a plain key, got a mapping",
           base="base: {{gradient: 1}: 2}")

# --- Refused up front, not failing later (or not at all) ------------------------------
# One site: its run failed in SystemC's binding (exit 1, two lines), `aggnet platform` in the
# bound, `aggnet schedule` with an unprefixed message; averaging needs two sites.
ONE_SITE = """name: one
defaults:
  link: {bandwidth: 10Gbps}
sites:
  - {code: lon, name: London, continent: europe}
"""
for name, argv in [("run", ["run", "-q", "--schedule", "ring", "--gradient", "1MiB", "--steps",
                            "1"]),
                   ("platform", ["platform"]),
                   ("schedule", ["schedule", "--gradient", "1MiB"])]:
    case(f"platform_one_site_{name}", f"aggnet {name} on a platform of one site",
         argv + ["--platform", "{dir}/one.yaml"],
         refused("/one.yaml:4: sites: expected at least two sites (averaging needs two), got 1\n"),
         files={"one.yaml": text(ONE_SITE)})
case("schedule_group_average_only_no_group", "--group-average-only with --schedules ring",
     ["schedule", "--gradient", "16MiB", "--schedules", "ring", "--group-average-only", "--out",
      "{dir}/ga.yaml"],
     refused("aggnet schedule: --group-average-only: expected a group-average schedule in "
             "--schedules (none of them is one, so no group-average schedule is left to rank), "
             "got 'ring'\n"))
# An explicit --gtkw is the view too: it replaced a hand-made file (run_case.py checks the
# case's files are unchanged).
case("gtkw_replaces_own_view", "--gtkw naming a hand-made view",
     RUN + ["--vcd", "{dir}/a.vcd", "--gtkw", "{dir}/view.gtkw"],
     refused("aggnet run: --gtkw: expected a new file or aggnet's view of this waveform (the "
             "GTKWave view would replace one that is not), got '"),
     files={"view.gtkw": text("my view")})
case("gtkw_with_vcd_stdout", "--gtkw with the waveform on the standard output",
     RUN + ["--vcd", "-", "--gtkw", "{dir}/v.gtkw"],
     refused("aggnet run: --gtkw: expected --vcd FILE, not --vcd - (the view names its "
             "waveform's file, and the standard output is none), got '"))
# A fault spec in a sweep is run's --fault: checked by run's parser before any point runs
# (it passed --dry-run, then every point failed as bad_input).
sweep_case("fault_axis_unknown_kind", "an axis of fault specs with an unknown kind",
           "  - {option: fault, values: ['slowx:lon=2']}",
           "/s.yaml:4: axes[0].values[0]: expected loss:A-B=RATE")
sweep_case("fault_base_bad_factor", "a base fault list with a slowdown below 1",
           "  - {option: schedule, values: [triads, ring]}",
           "/s.yaml:2: base.fault[1]: expected a slowdown factor >= 1",
           base="base: {gradient: 256KiB, chunk: 64KiB, steps: 1, "
                "fault: ['slow:lon=2', 'slow:nyc=0.5']}")

# --- aggnet compare: reports it must refuse, one line naming the file and the key ---------
REPORT = {"platform": "line3", "schedule": "triads", "options": {"given": {}, "resolved": {}},
          "summary": {"step_time_s_mean": 1.5, "events": 10},
          "sites": [{"site": "a", "high_water_bytes": 64}],
          "links": [{"from": "a", "to": "b", "kind": "wan", "chunks": 3}]}


def report(change=None):
    r = json.loads(json.dumps(REPORT))
    if change:
        change(r)
    return text(json.dumps(r))


def compare_case(name, about, b, want, flags=()):
    expect = refused(want) if want else dict(OK, stdout="summary.step_time_s_mean")
    case(f"compare_{name}", about, ["compare", "{dir}/a.json", "{dir}/b.json", *flags], expect,
         files={"a.json": report(), "b.json": b})


compare_case("ok", "two well-formed reports that differ in one number",
             report(lambda r: r["summary"].update(step_time_s_mean=2.5)), None)
compare_case("string_for_number", "a string where the summary has a number",
             report(lambda r: r["summary"].update(step_time_s_mean="abc")),
             'b.json: summary.step_time_s_mean: expected a number, got "abc"')
compare_case("missing_summary", "a report without its summary",
             report(lambda r: r.pop("summary")),
             "b.json: summary: expected an object, but the key is missing")
compare_case("schedule_number", "a number where the schedule's name belongs",
             report(lambda r: r.update(schedule=5)), "b.json: schedule: expected a string, got 5")
compare_case("link_from_number", "a number where a link's site belongs",
             report(lambda r: r["links"][0].update({"from": 5})),
             "b.json: links[0].from: expected a string, got 5", flags=["--all"])
compare_case("site_string_for_number", "text in one run where the other has a site's number",
             report(lambda r: r["sites"][0].update(high_water_bytes="lots")),
             'sites[a].high_water_bytes: expected a number (as in ', flags=["--all"])
compare_case("malformed", "a report cut short",
             text(json.dumps(REPORT)[:30]),
             "b.json:1: expected a run JSON written by aggnet run --json, got malformed JSON")
case("compare_directory", "a directory given as a report",
     ["compare", "{dir}/a.json", "{src}/platforms"],
     refused("/platforms: expected a run JSON file (aggnet run --json), got a directory"),
     files={"a.json": report()})

# --- Unknown units: named, with the units known ---------------------------------------
for name, args, want in [
    ("buffer_exbibytes", ["--buffer", "20EiB"],
     "aggnet run: --buffer: expected a size like '64MiB' or '2048B' (unknown unit 'EiB'; known: "
     "B, kB, KB, MB, GB, TB, KiB, MiB, GiB, TiB, bit,"),
    ("chunk_unit_case", ["--chunk", "1Mib"], "Tibit; did you mean 'MiB'?), got '1Mib'"),
    ("watchdog_hours", ["--watchdog", "5hours"],
     "aggnet run: --watchdog: expected a time like '33.3ms' or '2us' (unknown unit 'hours'; "
     "known: ps, ns, us,"),
    ("set_bandwidth_unit", ["--set", "defaults.link.bandwidth=10Xbps"],
     "aggnet run: --set defaults.link.bandwidth: expected a rate like '100Gbps' or '12.5GB/s' "
     "(unknown unit 'Xbps'; known: bps,"),
]:
    case(f"unit_{name}", f"aggnet run {' '.join(args)}", RUN + args, refused(want))

# --- --shard: an option error like any other ------------------------------------------
for name, shard in [("out_of_range", "3/3"), ("past_64_bits", "99999999999999999999999/3")]:
    case(f"sweep_shard_{name}", f"--shard {shard}",
         ["sweep", "{dir}/s.yaml", "--out", "{dir}/out", "--dry-run", "--shard", shard],
         refused(f"aggnet sweep: --shard: expected K/N with 0 <= K < N, got '{shard}'"),
         files={"s.yaml": text(SWEEP % "  - {option: schedule, values: [triads, ring]}")})

case("sweep_shard_with_slurm_dry_run", "--shard with --slurm, refused in a dry run too",
     ["sweep", "{dir}/s.yaml", "--out", "{dir}/out", "--dry-run", "--slurm", "--shard", "0/2"],
     refused("aggnet sweep: --shard: cannot be combined with --slurm"),
     files={"s.yaml": text(SWEEP % "  - {option: schedule, values: [triads, ring]}")})

# --- --set of a link: a misspelt end gets the link it most likely meant ---------------
case("set_link_misspelt_end", "--set of a link with one end misspelt",
     RUN + ["--set", "links.nyc-lno.delay=5ms"],
     refused("aggnet run: --set links.nyc-lno.delay: no link between 'nyc' and 'lno' "
             "(did you mean 'nyc-lon'?)"))
case("set_link_between_unlinked_sites", "--set of a link two real sites do not have",
     RUN + ["--set", "links.nyc-sin.delay=5ms"],
     refused("aggnet run: --set links.nyc-sin.delay: no link between 'nyc' and 'sin'"))

# --- A trace window after the run's end: a warning, the run's outputs as asked --------
case("trace_window_after_the_end", "--trace-from after the run ended",
     RUN + ["--vcd", "{dir}/w.vcd", "--trace-from", "100s"],
     {"exit": 0, "stderr": "aggnet run: warning: --trace-from 100.000 s is after the run's end"})

# --- aggnet sweep's usage errors: one line each, not the usage text after it ----------
case("sweep_unknown_option", "a misspelt sweep option: its did-you-mean alone",
     ["sweep", "{dir}/s.yaml", "--wrkers", "2", "--out", "{dir}/out"],
     refused("aggnet sweep: --wrkers: unknown option (did you mean '--workers'?)"),
     files={"s.yaml": text(SWEEP % "  - {option: schedule, values: [triads, ring]}")})
case("sweep_no_out", "a sweep without --out", ["sweep", "{dir}/s.yaml"],
     refused("aggnet sweep: --out: expected the results' directory"),
     files={"s.yaml": text(SWEEP % "  - {option: schedule, values: [triads, ring]}")})
case("sweep_no_spec", "aggnet sweep alone", ["sweep"],
     refused("aggnet sweep: expected a spec, SPEC.yaml"))
case("sweep_merge_no_inputs", "sweep merge with no database to merge",
     ["sweep", "merge", "{dir}/out.db"],
     refused("aggnet sweep merge: expected OUT.db and at least one IN.db"))
case("sweep_export_no_csv", "sweep export without --csv", ["sweep", "export", "{dir}/x.db"],
     refused("aggnet sweep export: expected DB --csv FILE"))

# --- A missing platform: the file it most likely meant --------------------------------
case("platform_misspelt", "a --platform name one letter off a file of its directory",
     RUN + ["--platform", "platforms/nine_cty.yaml"],
     refused("platforms/nine_cty.yaml: cannot read file: No such file or directory "
             "(did you mean 'platforms/nine_city.yaml'?)"))
case("platform_shipped_name", "a shipped platform's name, not its path",
     RUN + ["--platform", "nine_city_full_mesh.yaml"],
     refused("/platforms/nine_city_full_mesh.yaml'?)"), env={"AGGNET_DATA_DIR": "{src}"})


def main():
    check = "--check" in sys.argv[1:]
    wanted = {f"{name}.json": json.dumps(c, indent=2, ensure_ascii=True) + "\n"
              for name, c in sorted(cases.items())}
    existing = set(os.listdir(CASES)) if os.path.isdir(CASES) else set()
    if check:
        stale = [n for n in wanted if not os.path.exists(os.path.join(CASES, n)) or
                 open(os.path.join(CASES, n), encoding="utf-8").read() != wanted[n]]
        extra = sorted(existing - set(wanted))
        if stale or extra:
            sys.exit(f"hostile corpus out of date (run {sys.argv[0]}): {stale + extra}")
        print(f"hostile corpus: {len(wanted)} cases, up to date")
        return
    os.makedirs(CASES, exist_ok=True)
    for n in existing - set(wanted):
        os.remove(os.path.join(CASES, n))
    for n, content in wanted.items():
        with open(os.path.join(CASES, n), "w", encoding="utf-8") as f:
            f.write(content)
    print(f"wrote {len(wanted)} cases to {CASES}")


if __name__ == "__main__":
    main()
