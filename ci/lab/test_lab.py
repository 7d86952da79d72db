#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the congestion lab's scenario parser and report (lab.py),
run by ctest with the unit tests: scenarios good and bad, the shell file the
guest sources, and a report from synthetic recordings (a made-up capture,
counters, trace, queue and probe samples) whose numbers are known."""
import contextlib
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# pylint: disable=wrong-import-position
from rxecc_lab import analysis, capture, checks, plots, registry, report, scenario, scenarios, shared, spread  # noqa: E402,E501
from rxecc_lab import sim as lab_sim  # noqa: E402
from rxecc_lab.scenarios import collective, ecmp, incast, pathology  # noqa: E402

# two of the expectations, as the report names them (default Kmin and Kmax)
HELD = ("DCQCN + PFC: queue held in the marking band: at Kmin (5 KB) or above 25 % of the time or more, "
        "under Kmax (20 KB) 95 % of it")
PROBE = "DCQCN + PFC against PFC only: probe p99 above its floor 1/3 of PFC alone's or lower"
FRAMES = "DCQCN + PFC against PFC only: PFC frames 1/10 of PFC alone's or fewer"

def scenario_of(text, overrides=()):
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
        f.write(text)
    try:
        return scenario.read_scenario(f.name, list(overrides))
    finally:
        os.unlink(f.name)


def roce_packet(src, dst, qpn, psn, opcode=0x0a):
    """Ethernet, IPv4, UDP to 4791, BTH (RDMA WRITE middle), 1024 B payload."""
    eth = b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00"
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0x02, 20 + 8 + 12 + 1024, 0, 0, 64, 17, 0,
                     bytes(map(int, src.split("."))), bytes(map(int, dst.split("."))))
    udp = struct.pack("!HHHH", 49152, 4791, 8 + 12 + 1024, 0)
    bth = bytes([opcode, 0, 0xff, 0xff, 0]) + qpn.to_bytes(3, "big") + b"\x00" + psn.to_bytes(3, "big")
    return eth + ip + udp + bth + bytes(16)   # captured: 80 bytes of headers is enough


def quiet_report(raw, sc_path, out):
    """report.report with its terminal output dropped; its report.json."""
    with contextlib.redirect_stdout(io.StringIO()):
        report.report(raw, sc_path, out)
    with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
        return json.load(f)


def write_pcap(path, pkts):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 80, 1))
        for t, data in pkts:
            sec, usec = int(t), int(round((t - int(t)) * 1e6))
            f.write(struct.pack("<IIII", sec, usec, len(data), len(data)) + data)


class Scenario(unittest.TestCase):
    def test_defaults(self):
        sc = scenario.read_scenario(None, [])
        self.assertEqual(sc["senders"], 3)
        self.assertEqual(sc["rate"], 25)
        self.assertEqual(sc["link"], 25)     # every link at the bottleneck's rate
        self.assertEqual((sc["profile"], sc["scale"], sc["shape_hosts"]), ("paper", True, True))
        self.assertEqual(sc["speedup"], 16)
        self.assertEqual(incast.profile_text(sc, sc["modes"][2]), "paper scaled to 25 Mbit/s, clocks x16")
        self.assertEqual(incast.profile_text(scenario.read_scenario(None, ["speedup=1"]), sc["modes"][2]),
                         "paper scaled to 25 Mbit/s")
        # "rate" follows the bottleneck; a link of its own stays
        self.assertEqual(scenario.read_scenario(None, ["rate=20mbit"])["link"], 20)
        self.assertEqual(scenario.read_scenario(None, ["rate=20mbit", "link=1gbit"])["link"], 1000)
        self.assertEqual([m["name"] for m in sc["modes"]], ["baseline", "pfc", "dcqcn", "dcqcn+pfc"])
        both = sc["modes"][3]
        self.assertTrue(both["pfc"] and both["dcqcn"])
        self.assertFalse(sc["modes"][0]["pfc"] or sc["modes"][0]["dcqcn"])

    def test_the_default_file_is_the_defaults(self):
        here = os.path.dirname(os.path.abspath(__file__))
        self.assertEqual(scenario.read_scenario(os.path.join(here, "incast.conf"), []),
                         scenario.read_scenario(None, []))

    def test_units_overrides_and_mode_sections(self):
        sc = scenario_of("rate = 1gbit\nmodes = pfc mine\ndcqcn.rp_ai_rate = 5\n"
                      "[mode mine]\ndcqcn = on\nprofile = mlx5\ndcqcn.rp_time_reset = 100\n",
                      ["senders=5", "xoff=32KiB"])
        self.assertEqual((sc["rate"], sc["senders"], sc["xoff"]), (1000, 5, "32KiB"))
        pfc, mine = sc["modes"]
        self.assertTrue(pfc["pfc"] and not pfc["dcqcn"])
        self.assertEqual((mine["dcqcn"], mine["pfc"], mine["profile"]), (True, False, "mlx5"))
        self.assertEqual(mine["dcqcn_set"], [("rp_ai_rate", "5"), ("rp_time_reset", "100")])
        self.assertEqual(pfc["dcqcn_set"], [("rp_ai_rate", "5")])

    def test_bad_scenarios_name_file_line_and_problem(self):
        cases = [("senders = 9\n", ":1: '9' is not an integer in 1..8"),
                 ("\nrate = fast\n", ":2: 'fast' is not a rate"),
                 ("xoff = 10 KB\n", "not a byte count"),
                 ("colour = blue\n", "unknown key 'colour'"),
                 ("modes = baseline nope\n", "mode 'nope' is neither built in"),
                 ("[mode m]\nspeed = 3\n", ":2: unknown mode key 'speed'"),
                 ("[mode m]\npfc = maybe\n", "'maybe' is not on or off"),
                 ("xon = 30KiB\n", "xon 30KiB is above xoff 24KiB"),
                 ("profile = fast\n", "not a DCQCN profile"),
                 ("just words\n", "want KEY = VALUE"),
                 ("[section]\n", "sections are [mode NAME]")]
        for text, want in cases:
            with self.subTest(text=text), self.assertRaises(scenario.ScenarioError) as e:
                scenario_of(text)
            self.assertIn(want, str(e.exception))
        with self.assertRaises(scenario.ScenarioError) as e:
            scenario.read_scenario(None, ["duration=1"])
        self.assertIn("override: '1' is not an integer in 2..120", str(e.exception))

    def test_profiles_come_from_the_module_table(self):
        # rxecc_dcqcn_profile_names in the DCQCN core, in its order
        self.assertEqual(scenario.dcqcn_profiles()[:3], ("mlx5", "paper", "lab"))
        for name in scenario.dcqcn_profiles():
            self.assertEqual(scenario.read_scenario(None, [f"profile={name}"])["profile"], name)
        with self.assertRaisesRegex(scenario.ScenarioError, "not a DCQCN profile .mlx5, paper, lab"):
            scenario.read_scenario(None, ["profile=fast"])

    def test_the_shell_file_sources(self):
        sc = scenario_of("modes = dcqcn+pfc mine\n[mode mine]\ndcqcn = on\ndcqcn.rp_min_rate = 10\n")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.sh")
            scenario.write_shell(sc, path)
            out = subprocess.run(
                ["bash", "-c", f'source {path} && echo "${{MODES[*]}}|${{M_PFC[dcqcn+pfc]}}'
                 f'|${{M_DCQCN[mine]}}|${{M_SET[mine]}}|$LINK|$XOFF|$SHAPE_HOSTS|$SCALE|$SPEEDUP"'],
                capture_output=True, text=True, check=True).stdout.strip()
        self.assertEqual(out, "dcqcn+pfc mine|1|1|rp_min_rate 10|25mbit|24KiB|1|1|16")


class Pathology(unittest.TestCase):
    """The scenarios of PFC gone wrong: their keys, and a report from
    synthetic samples (pfc_sampler.py's format) whose figures are known."""

    def test_the_lab_scenarios_read(self):
        here = os.path.dirname(os.path.abspath(__file__))
        for name, topo in (("deadlock", "ring"), ("victim", "victim"), ("pfc-storm", "storm")):
            sc = scenario.read_scenario(os.path.join(here, f"{name}.conf"), [])
            self.assertEqual(sc["topology"], topo)
        sc = scenario.read_scenario(os.path.join(here, "pfc-storm.conf"), [])
        by = {m["name"]: m for m in sc["modes"]}
        self.assertEqual((by["prevention"]["stall_watermark"], by["prevention"]["watchdog"]), (500, 0))
        self.assertEqual((by["watchdog"]["watchdog"], by["watchdog"]["watchdog_action"]), (200, "drop"))
        self.assertEqual(by["pfc"]["watchdog"], 0)

    def test_bad_pathology_keys(self):
        cases = [("topology = mesh\n", "'mesh' is not a topology"),
                 ("topology = ring\nsenders = 2\n", "senders and stagger are the incast's"),
                 ("topology = storm\nduration = 5\nstall_at = 5\n", "stall_at 5 is not within"),
                 ("topology = storm\nstall_release = 20\n", "stall_release 20 ms is not under pfc_rx_xoff"),
                 ("modes = m\n[mode m]\nwatchdog = 5\n", "'5' is not 0 or a number of ms in 10..5000"),
                 ("modes = m\n[mode m]\nstall_watermark = 79\n", "in 80..8000"),
                 ("modes = m\n[mode m]\nwatchdog_action = shout\n", "not a watchdog action")]
        for text, want in cases:
            with self.subTest(text=text), self.assertRaises(scenario.ScenarioError) as e:
                scenario_of(text)
            self.assertIn(want, str(e.exception))

    def test_the_shell_file_has_the_mode_protections(self):
        sc = scenario_of("topology = storm\nmodes = w\n[mode w]\npfc = on\nwatchdog = 300\n"
                      "watchdog_action = forward\nstall_watermark = 100\n")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.sh")
            scenario.write_shell(sc, path)
            out = subprocess.run(
                ["bash", "-c", f'source {path} && echo "$TOPOLOGY|$STALL_AT|${{M_WD[w]}}|'
                 f'${{M_WD_ACTION[w]}}|${{M_STALL[w]}}|$PFC_RX_XOFF"'],
                capture_output=True, text=True, check=True).stdout.strip()
        self.assertEqual(out, "storm|4|300|forward|100|20")

    @staticmethod
    def samples(path, t0, n, ports, hosts):
        """n samples 0.1 s apart from t0; ports: {SW:DEV: fn(k) -> priority
        3's values}, hosts: {hI: fn(k) -> counters}."""
        with open(path, "w", encoding="utf-8") as f:
            for k in range(n):
                t = t0 + k * 0.1
                by_sw = {}
                for name, fn in ports.items():
                    sw, dev = name.split(":")
                    p3 = {key: 0 for key in ("tx_packets", "tx_bytes", "qlen", "backlog", "drops",
                                             "ecn_marked", "pause_tx", "xon_tx", "pause_rx",
                                             "wd_storms", "wd_drops")}
                    p3.update(fn(k))
                    by_sw.setdefault(sw, []).append(
                        {"netdev": dev, "handle": 1, "prio": [{} if i != 3 else p3 for i in range(8)]})
                for sw, qd in by_sw.items():
                    f.write(f"{t:.6f} {sw} {json.dumps(qd)}\n")
                for h, fn in hosts.items():
                    f.write(f"{t:.6f} hw:{h} {json.dumps(fn(k))}\n")

    def storm_run(self, raw, mode, victim_after, h1_pauses, storms=0, wd=0, victim_before=250):
        """The victim sends victim_before KB per 100 ms (250: 20 Mbit/s)
        until the stall at 3.0 s, then victim_after KB per 100 ms."""
        d = os.path.join(raw, mode)
        os.makedirs(d)
        for name, v in (("load-start", 100.0), ("load-done", 106.0), ("stall-start", 103.0)):
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.write(f"{v}\n")

        def victim(k):
            before = min(k, 30) * victim_before * 1000
            return {"tx_bytes": before + max(0, k - 30) * victim_after * 1000, "tx_packets": k}

        self.samples(os.path.join(d, "samples"), 100.0, 61,
                     {"sw2:swp1": lambda k: {"tx_bytes": min(k, 30) * 2500, "pause_rx": max(0, k - 30),
                                             "wd_storms": wd if k > 35 else 0},
                      "sw2:swp4": victim,
                      "sw:to-sw2": lambda k: {"pause_rx": max(0, k - 31)}},
                     {"h1": lambda k: {"tx_prio3_pause": h1_pauses if k > 31 else 0, "rx_prio3_pause": 0,
                                       "np_cnp_sent": 0, "tx_pause_storm_error_events":
                                       storms if k > 40 else 0}})

    def test_storm_report(self):
        sc = scenario_of("topology = storm\nduration = 6\nstall_at = 3\nmodes = pfc prev wd\n"
                      "[mode prev]\npfc = on\nstall_watermark = 500\n"
                      "[mode wd]\npfc = on\nwatchdog = 200\n")
        with tempfile.TemporaryDirectory() as d:
            raw = os.path.join(d, "raw")
            self.storm_run(raw, "pfc", 0, 40)
            self.storm_run(raw, "prev", 250, 40, storms=2)
            self.storm_run(raw, "wd", 50, 40, wd=1)	# recovers to 20 %: not enough
            scj = os.path.join(d, "sc.json")
            with open(scj, "w", encoding="utf-8") as f:
                json.dump(sc, f)
            rep = quiet_report(raw, scj, os.path.join(d, "out"))
            by = {m["name"]: m for m in rep["modes"]}
            self.assertAlmostEqual(by["pfc"]["victims_before_mbps"], 20.0, places=2)
            self.assertEqual(by["pfc"]["victims_after_mbps"], 0.0)
            self.assertAlmostEqual(by["prev"]["victims_after_mbps"], 20.0, places=2)
            self.assertEqual(by["prev"]["stall_storm_events"], 2)
            self.assertEqual(by["pfc"]["stalled_host_pfc_sent"], 40)
            # swp1 received 30 (one per sample after the stall), the uplink 29
            self.assertEqual(by["pfc"]["totals"]["pfc_received"], 30 + 29)
            met = {c["check"].split(":")[0]: c["met"] for c in rep["checks"]}
            self.assertEqual(met, {"PFC only": True, "prev": True, "wd": False})
            for p in rep["plots"]:
                self.assertTrue(os.path.getsize(os.path.join(d, "out", p)) > 1000)
            with open(os.path.join(d, "out", "timeline-pfc.tsv"), encoding="utf-8") as f:
                rows = [r.split("\t") for r in f.read().splitlines()[1:]]
            self.assertEqual(len(rows), 60)
            with open(os.path.join(d, "out", "report.md"), encoding="utf-8") as f:
                self.assertIn("The operator's view, per second", f.read())
            text, every = spread.spread([rep, rep])
            self.assertIn("victim after stall Mbit/s", text)
            self.assertFalse(every)	# wd's check fails in both
            # a victim that had not got going before the stall is no baseline
            self.storm_run(raw, "late", 0, 40, victim_before=0)
            sc["modes"].append(dict(sc["modes"][0], name="late", label="late"))
            with open(scj, "w", encoding="utf-8") as f:
                json.dump(sc, f)
            rep = quiet_report(raw, scj, os.path.join(d, "out3"))
            late = [c for c in rep["checks"] if c["check"].startswith("late")]
            self.assertEqual(len(late), 1)
            self.assertFalse(late[0]["met"])

    def test_ring_report_finds_the_freeze(self):
        sc = scenario_of("topology = ring\nduration = 6\nmodes = pfc\n")
        ring = ["sw:to-sw2", "sw2:to-sw3", "sw3:to-sw4", "sw4:to-sw"]
        with tempfile.TemporaryDirectory() as d:
            raw = os.path.join(d, "raw")
            os.makedirs(os.path.join(raw, "pfc"))
            for name, v in (("load-start", 50.0), ("load-done", 56.0)):
                with open(os.path.join(raw, "pfc", name), "w", encoding="utf-8") as f:
                    f.write(f"{v}\n")
            # every ring port sends until 1.0 s, then holds 5 packets and sends nothing
            ports = {p: (lambda k: {"tx_packets": min(k, 10), "qlen": 5 if k >= 10 else 1,
                                    "tx_bytes": min(k, 10) * 1000}) for p in ring}
            ports["sw3:swp3"] = lambda k: {"tx_bytes": min(k, 10) * 1000}
            self.samples(os.path.join(raw, "pfc", "samples"), 50.0, 61, ports, {})
            scj = os.path.join(d, "sc.json")
            with open(scj, "w", encoding="utf-8") as f:
                json.dump(sc, f)
            rep = quiet_report(raw, scj, os.path.join(d, "out"))
            r = rep["modes"][0]
            self.assertAlmostEqual(r["longest_frozen_s"], 5.0, places=1)	# 1.0 s to the end
            self.assertEqual(rep["checks"][0]["met"], True)
            # a ring port without samples: the mode is an error and its check fails
            del ports["sw2:to-sw3"]
            self.samples(os.path.join(raw, "pfc", "samples"), 50.0, 61, ports, {})
            rep = quiet_report(raw, scj, os.path.join(d, "out2"))
            self.assertIn("sw2:to-sw3", rep["modes"][0]["error"])
            self.assertEqual([c["met"] for c in rep["checks"]], [False])


    def test_victim_checks_fail_under_their_mutations(self):
        sc = scenario_of("topology = victim\nrate = 20mbit\nmodes = pfc dcqcn+pfc\n")
        victim = pathology.GROUPS["victim"][1][0]

        def mode(name, pfc, dcqcn, v, received, drops=0):
            return {"name": name, "label": name, "pfc": pfc, "dcqcn": dcqcn, "watchdog": 0,
                    "stall_watermark": 8000, "goodput_mbps": {victim: v}, "uplink_pfc_received": received,
                    "totals": {"drops": drops}}

        def met(results):
            return {c.split(": ", 1)[1].split(" (")[0]: ok for c, ok, _ in pathology.checks(results, sc)}
        good = met([mode("pfc", True, False, 9.9, 480), mode("both", True, True, 18.0, 0)])
        self.assertEqual(good, {"the victim is held back by pauses on the uplink": True,
                                "the victim gets 1.4x its goodput with PFC alone or more": True})
        # DCQCN that cannot cut: the victim gets what PFC alone leaves it
        self.assertFalse(met([mode("pfc", True, False, 9.9, 480), mode("both", True, True, 11.0, 300)])[
            "the victim gets 1.4x its goodput with PFC alone or more"])
        # no PFC at the switch: no pause reaches the uplink, packets drop
        self.assertFalse(met([mode("pfc", True, False, 15.0, 0, drops=300), mode("both", True, True, 18.0, 0)])[
            "the victim is held back by pauses on the uplink"])
        # a victim that got nothing with PFC alone is no baseline: 0 vs 0 is not a gain
        self.assertFalse(met([mode("pfc", True, False, 0.0, 480), mode("both", True, True, 0.0, 0)])[
            "the victim gets 1.4x its goodput with PFC alone or more"])
        # PFC alone in the scenario but not recorded: the comparison fails, it is not ruled out
        got = pathology.checks([{"name": "pfc", "label": "pfc", "error": "no samples"},
                                mode("dcqcn+pfc", True, True, 18.0, 0)], sc)
        self.assertEqual([(ok, m) for c, ok, m in got if "1.4x" in c], [(False, "PFC only was not recorded")])
        # no PFC-alone mode: both are ruled out, and say so
        sc = scenario_of("topology = victim\nrate = 20mbit\nmodes = dcqcn+pfc\n")
        ck = pathology.checks([mode("both", True, True, 18.0, 0)], sc)
        self.assertEqual([ok for _, ok, _ in ck], [None, None])


class Ecmp(unittest.TestCase):
    """The leaf-spine ECMP scenario: its keys, and a report from synthetic
    perftest logs, spine counts and samples whose figures are known."""

    def test_the_scenario_reads_and_sources(self):
        here = os.path.dirname(os.path.abspath(__file__))
        sc = scenario.read_scenario(os.path.join(here, "ecmp.conf"), [])
        self.assertEqual(sc["topology"], "ecmp")
        self.assertEqual([(m["ecmp_hash"], m["udp_sport"], m["placement"]) for m in sc["modes"]],
                         [("l3", "flow_label", "hash"), ("l4", "qpn", "hash"), ("l4", "flow_label", "hash"),
                          ("l3", "flow_label", "arranged")])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "s.sh")
            scenario.write_shell(sc, path)
            out = subprocess.run(
                ["bash", "-c", f'source {path} && echo "$TOPOLOGY|$TRANSFER|$FLOWS_PER_PAIR|'
                 f'${{M_HASH[l3]}}|${{M_SPORT[l4-qpn]}}|${{M_PLACE[l3-arranged]}}|$MUTANT"'],
                capture_output=True, text=True, check=True).stdout.strip()
        self.assertEqual(out, "ecmp|4194304|2|l3|qpn|arranged|none")
        for text, want in (("modes = m\n[mode m]\necmp_hash = l2\n", "'l2' is not l3 or l4"),
                           ("modes = m\n[mode m]\nudp_sport = random\n", "not qpn or flow_label"),
                           ("transfer = 1MiB\n", "transfer and flows_per_pair are the ecmp"),
                           ("modes = m\n[mode m]\nudp_sport = qpn\n", "mode keys ecmp_hash, udp_sport and "
                            "placement"),
                           ("modes = m\n[mode m]\nplacement = arranged\n", "are the ecmp topology's"),
                           ("topology = ecmp\nmodes = m\n[mode m]\nplacement = arranged\n",
                            "placement = arranged needs ecmp_hash = l3"),
                           ("topology = ecmp\nflows_per_pair = 3\nmodes = m\n[mode m]\necmp_hash = l3\n"
                            "placement = arranged\n", "and flows_per_pair = 2"),
                           ("modes = m\n[mode m]\nplacement = spread\n", "not hash or arranged"),
                           ("mutant = one_uplink\n", "mutant one_uplink is the ecmp topology's"),
                           ("mutant = no_dcqcn\n", "'no_dcqcn' is not one of none, no_cut"),
                           ("topology = ecmp\ntransfer = 256KiB\n", "not 5 or more whole messages"),
                           ("topology = ecmp\ntransfer = 1000000\n", "not 5 or more whole messages")):
            with self.subTest(text=text), self.assertRaises(scenario.ScenarioError) as e:
                scenario_of(text)
            self.assertIn(want, str(e.exception))

    @staticmethod
    def mode_run(raw, mode, policy, spine_of, split=(), crossed=False, unfinished=(), hash_policy=None,
                 spine_of_flow=None, arranged=None, ends_of=None):
        """Pairs hI -> hI+4 with QPs 17 and 18 each; spine_of(pair) the
        spine of its flows; a flow in split has half its bytes on each.
        sp1's flows end 5.5 s after the first byte, sp2's 2 s after (or
        ends_of(spine)). arranged: {flow K: spine} the guest's arrangement."""
        sport_check = shared.sport_check
        d = os.path.join(raw, mode)
        os.makedirs(d)
        if hash_policy is None:
            hash_policy = 0 if mode.startswith("l3") or mode == "x" else 1
        for name, text in (("load-start", "100.0\n"), ("hash-policy", f"{hash_policy}\n"),
                           ("route-lf1", "10.0.5.0/24 proto static\n\tnexthop via 10.255.1.2 dev to-sp1 weight 1\n"
                                         "\tnexthop via 10.255.2.2 dev to-sp2 weight 1\n")):
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.write(text)
        mib = 1 << 20
        finals = {"sp1": {}, "sp2": {}}
        ends = {}
        k = 0
        for i in range(1, 5):
            for q in (17, 18):
                k += 1
                # crossed: the remote QP numbers swapped (17 <-> 18, 18 <-> 17)
                rq = 35 - q if crossed else q
                with open(os.path.join(d, f"c{i}-{i + 4}.{k}.log"), "w", encoding="utf-8") as f:
                    f.write(f" local address: LID 0000 QPN {q:#06x} PSN 0x1\n"
                            f" remote address: LID 0000 QPN {rq:#06x} PSN 0x2\n")
                    if k not in unfinished:
                        f.write(" 65536      16               0.53               0.53   \t\t   0.000008\n")
                port = (sport_check.qpn_sport(q) if policy == "qpn"
                        else sport_check.get_udp_sport(0, q, rq))
                key = (f"10.0.{i}.1", f"10.0.{i + 4}.1", port)
                sp = spine_of_flow(k) if spine_of_flow else spine_of(i)
                if k in split:
                    finals["sp1"][key] = finals["sp2"][key] = mib // 2
                else:	# (two QPs of one port: the spine counts both)
                    finals[sp][key] = finals[sp].get(key, 0) + mib
                ends[key] = ends_of(sp) if ends_of else 5.5 if sp == "sp1" else 2.0

        if arranged:
            with open(os.path.join(d, "arranged"), "w", encoding="utf-8") as f:
                f.writelines(f"{(k + 1) // 2}:{(k + 1) // 2 + 4} {arranged[k]}\n" for k in range(1, 9))

        def nft(counts):
            return {"nftables": [{"metainfo": {}}, {"set": {"name": "flows", "elem": [
                {"elem": {"val": {"concat": list(key)}, "counter": {"packets": 1, "bytes": b}}}
                for key, b in counts.items()]}}]}
        for sp in ("sp1", "sp2"):
            with open(os.path.join(d, f"flows-{sp}.json"), "w", encoding="utf-8") as f:
                json.dump(nft(finals[sp]), f)
            with open(os.path.join(d, f"flows-{sp}.log"), "w", encoding="utf-8") as f:
                for n in range(0, int(10 * (max(ends.values()) + 1.5)) + 1):	# 100.0 .. 107.0 s; data from 100.5
                    t = 100.0 + n * 0.1
                    el = max(0.0, t - 100.5)
                    c = {key: int(b * min(1.0, el / ends[key])) for key, b in finals[sp].items()}
                    f.write(f"{t:.2f} {json.dumps(nft(c))}\n")
        Pathology.samples(os.path.join(d, "samples"), 100.0, 70,
                          {"lf1:to-sp1": lambda k: {"tx_bytes": max(0, k - 5) * 12000},
                           "lf1:to-sp2": lambda k: {"tx_bytes": max(0, k - 5) * 6000}},
                          {"h1": lambda k: {"tx_prio3_pause": 0, "np_cnp_sent": 0}})

    def test_fair_times_with_staggered_starts(self):
        # two flows on one 2 Mbit/s uplink, 1 Mbit each; the second starts at
        # 0.25 s: alone at 2 until then (0.5 Mbit), then 1 each: the first
        # ends at 0.75 s, the second has 0.5 left at 2: ends at 1.0 s
        t = ecmp.fair_times([{"host": "h1", "spine": "sp1"}, {"host": "h2", "spine": "sp1"}],
                            {"h1": 10, "h2": 10, "sp1": 2}, 125000, release=[0.0, 0.25])
        self.assertEqual([round(x, 6) for x in t], [0.75, 1.0])

    def test_max_min_fair_times(self):
        # h1's two flows share its 5 Mbit/s link; h2's flow takes 5 of sp1's
        # 10 and ends first, which frees nothing h1 can use
        t = ecmp.fair_times([{"host": "h1", "spine": "sp1"}, {"host": "h2", "spine": "sp1"},
                             {"host": "h1", "spine": "sp2"}],
                            {"h1": 5, "h2": 5, "sp1": 10, "sp2": 10}, 125000)
        self.assertEqual([round(x, 6) for x in t], [0.4, 0.2, 0.4])
        # three flows on one 3 Mbit/s uplink from fast hosts: 1 Mbit/s each,
        # all ending at 1 s
        t = ecmp.fair_times([{"host": f"h{i}", "spine": "sp1"} for i in range(3)],
                            {"h0": 10, "h1": 10, "h2": 10, "sp1": 3}, 125000)
        self.assertEqual([round(x, 6) for x in t], [1.0, 1.0, 1.0])

    def test_report(self):
        sc = scenario_of("topology = ecmp\nrate = 10mbit\nlink = 5mbit\ntransfer = 1MiB\nmodes = l3 l4\n"
                      "[mode l3]\npfc = on\necmp_hash = l3\nudp_sport = flow_label\n"
                      "[mode l4]\npfc = on\necmp_hash = l4\nudp_sport = qpn\n")
        with tempfile.TemporaryDirectory() as d:
            raw = os.path.join(d, "raw")
            self.mode_run(raw, "l3", "flow_label", lambda i: "sp1" if i < 4 else "sp2")
            self.mode_run(raw, "l4", "qpn", lambda i: "sp1" if i % 2 else "sp2", split=(3,))
            scj = os.path.join(d, "sc.json")
            with open(scj, "w", encoding="utf-8") as f:
                json.dump(sc, f)
            rep = quiet_report(raw, scj, os.path.join(d, "out"))
            by = {m["name"]: m for m in rep["modes"]}
            l3 = by["l3"]
            self.assertEqual(l3["flows_per_spine"], {"sp1": 6, "sp2": 2})
            self.assertEqual(l3["pairs_split"], 0)
            self.assertEqual(l3["setup_s"], 0.6)	# the first bytes in the sample at 100.6
            self.assertEqual(l3["job_s"], 5.4)	# 99 % of 1 MiB at 106.0 (100.5 + 0.99 x 5.5), from 100.6
            self.assertEqual(l3["floor_s"], round(6 * (1 << 20) * 8 / 10e6, 2))
            self.assertEqual(l3["ideal_s"], round(2 * (1 << 20) * 8 / 5e6, 2))
            f1 = next(f for f in l3["flows"] if f["flow"] == "h1->h5.1")
            self.assertEqual((f1["qpn"], f1["spine"], f1["on_spine_share"]), (17, "sp1", 1.0))
            met = {c["check"]: c["met"] for c in rep["checks"]}
            l3_checks = {c: v for c, v in met.items() if c.startswith("l3:")}
            self.assertEqual(len(l3_checks), 7)
            # under L3 no host sends on both spines: "not held back" has nothing to test
            # placement = hash: the arranged checks are ruled out, and say so
            ruled = [c for c in l3_checks if "not held back" in c or "took the spines arranged" in c]
            self.assertEqual([l3_checks[c] for c in ruled], [None, None])
            self.assertTrue(all(v for c, v in l3_checks.items() if c not in ruled), l3_checks)
            self.assertTrue(all(c["measured"].startswith("does not apply: placement = hash")
                                for c in rep["checks"] if c["met"] is None))
            self.assertEqual(l3["fair_uplink_mbps"], {"sp1": 10.0, "sp2": 5.0})
            self.assertEqual(l3["fair_s"], round(1 * (1 << 20) * 8 / (10e6 / 6), 2))	# 6 flows share sp1
            self.assertTrue(met["l3: the QPs of each host pair share one spine (the hash sees only addresses)"])
            # l4: flow 3 (h2->h6, QP 17) has half its bytes on each spine
            self.assertFalse(met["l4: every flow's bytes are on one spine (99 % or more, counted under the "
                                 "source port its policy gives it)"])
            self.assertEqual(by["l4"]["pairs_split"], 1)
            self.assertEqual(rep["plots"], ["ecmp.png"])
            self.assertTrue(os.path.getsize(os.path.join(d, "out", "ecmp.png")) > 1000)
            with open(os.path.join(d, "out", "report.md"), encoding="utf-8") as f:
                self.assertIn("| h1->h5.1 | 17/17 |", f.read())
            text, _ = spread.spread([rep, rep])
            self.assertIn("busiest spine's flows", text)

    def arranged_report(self, **kw):
        """An arranged mode (6/2: h3 and h4 each with one QP on each
        spine): its checks {text: (met, measured)}."""
        sc = scenario_of("topology = ecmp\nrate = 10mbit\nlink = 5mbit\ntransfer = 1MiB\nmodes = l3a\n"
                      "[mode l3a]\npfc = on\necmp_hash = l3\nplacement = arranged\n")
        kw.setdefault("spine_of_flow", lambda k: "sp2" if k in (6, 8) else "sp1")
        with tempfile.TemporaryDirectory() as d:
            raw = os.path.join(d, "raw")
            self.mode_run(raw, "l3a", "flow_label", None, **kw)
            scj = os.path.join(d, "sc.json")
            with open(scj, "w", encoding="utf-8") as f:
                json.dump(sc, f)
            rep = quiet_report(raw, scj, os.path.join(d, "out"))
        return rep, {c["check"].split(": ", 1)[1].split(" (")[0]: (c["met"], c["measured"]) for c in rep["checks"]}

    ARRANGED = {k: "sp2" if k in (6, 8) else "sp1" for k in range(1, 9)}

    def test_a_host_on_both_spines_is_not_held_back(self):
        rep, ck = self.arranged_report(arranged=self.ARRANGED)
        self.assertEqual(rep["modes"][0]["fair_uplink_mbps"], {"sp1": 10.0, "sp2": 6.67})
        self.assertEqual(ck["the flows took the spines arranged from lf1's FIB"][0], True)
        self.assertEqual(ck["the free uplink's flows are not held back by their hosts' flows on the busy one"][0],
                         True)
        self.assertTrue(ck["the job within 2x its fair time"][0])

    def test_each_arranged_check_fails_under_its_mutation(self):
        free = "the free uplink's flows are not held back by their hosts' flows on the busy one"
        took = "the flows took the spines arranged from lf1's FIB"
        # PFC alone, or a DCQCN that cannot cut: the free uplink's flows end
        # with their hosts' busy ones
        _, ck = self.arranged_report(arranged=self.ARRANGED, ends_of=lambda sp: 5.5)
        self.assertFalse(ck[free][0], ck[free])
        # every flow on one uplink: not where arranged, and the job twice its fair time
        _, ck = self.arranged_report(arranged=self.ARRANGED, spine_of_flow=lambda k: "sp1",
                                     ends_of=lambda sp: 15.0)
        self.assertFalse(ck[took][0], ck[took])
        self.assertIn("h3->h7.6 on sp1, not sp2", ck[took][1])
        self.assertFalse(ck["the job within 2x its fair time"][0])
        # no arrangement recorded: not met, not ruled out
        _, ck = self.arranged_report()
        self.assertEqual(ck[took], (False, "no arrangement (the guest found none, or its flows are not these)"))
        self.assertFalse(ck[free][0])

    def test_the_arrangement(self):
        # every pair hashed to sp1 but those of h1 and h2 to h5: no choice
        # gives 2 free flows from two hosts to two destinations
        routes = {(s, d): "sp1" for s in range(1, 5) for d in range(5, 9)}
        routes[(1, 5)] = routes[(2, 5)] = "sp2"
        self.assertIsNone(ecmp.arrange(routes))
        routes[(2, 5)], routes[(2, 6)] = "sp1", "sp2"
        got = ecmp.arrange(routes)
        self.assertEqual(got[:2], [(1, 5), (2, 6)])
        self.assertEqual(sorted(s for s, _ in got), [1, 1, 2, 2, 3, 3, 4, 4])
        self.assertEqual(sum(1 for f in got if routes[f] == "sp1"), 6)
        self.assertLessEqual(max(sum(1 for _, d in got if d == x) for x in range(5, 9)), 2)
        # the guest's files: "SRC DST SPINE" in, "SRC:DST SPINE" out
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "routes")
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(f"{s} {t} {sp}\n" for (s, t), sp in routes.items())
            out = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                               "ecmp_arrange.py"), path],
                                 capture_output=True, text=True, check=True).stdout.split("\n")
            self.assertEqual(out[:2], ["1:5 sp2", "2:6 sp2"])

    def test_qps_of_one_port_and_an_unfinished_flow(self):
        sc = scenario_of("topology = ecmp\nrate = 10mbit\nlink = 5mbit\ntransfer = 1MiB\nmodes = x\n"
                      "[mode x]\npfc = on\necmp_hash = l3\nudp_sport = flow_label\n")
        with tempfile.TemporaryDirectory() as d:
            raw = os.path.join(d, "raw")
            # 17 -> 18 and 18 -> 17: one flow label, one port, one 5-tuple
            self.mode_run(raw, "x", "flow_label", lambda i: "sp1" if i < 4 else "sp2", crossed=True,
                          unfinished=(8,))
            scj = os.path.join(d, "sc.json")
            with open(scj, "w", encoding="utf-8") as f:
                json.dump(sc, f)
            rep = quiet_report(raw, scj, os.path.join(d, "out"))
            flows = {f["flow"]: f for f in rep["modes"][0]["flows"]}
            self.assertEqual(flows["h1->h5.1"]["same_port_as"], ["h1->h5.2"])
            self.assertEqual(flows["h1->h5.1"]["bytes"]["sp1"], 1 << 20)	# half of the pair's 2 MiB
            self.assertIsNone(flows["h4->h8.8"]["completion_s"])
            met = {c["check"]: c["met"] for c in rep["checks"]}
            self.assertFalse(met["x: all 8 flows finished their transfer"])
            # not ruled out: an unfinished flow fails the job's check
            self.assertEqual([v for c, v in met.items() if "the job within" in c], [False])

    def test_a_check_the_scenario_rules_out_is_neither_met_nor_unmet(self):
        reps = [{"modes": [], "checks": [{"check": "x", "met": None, "measured": "does not apply: ..."},
                                         {"check": "y", "met": True, "measured": ""}]} for _ in range(2)]
        text, every = spread.spread(reps)
        self.assertIn("| x | does not apply |", text)
        self.assertIn("| y | 2 of 2 |", text)
        self.assertTrue(every)
        # ruled out in one run only: the other did not meet it
        reps[1]["checks"][0]["met"] = True
        self.assertIn("| x | 1 of 2 |", spread.spread(reps)[0])
        self.assertFalse(spread.spread(reps)[1])
        # nothing applies: nothing was checked, not "every expectation met"
        none = [{"modes": [], "checks": [{"check": "x", "met": None, "measured": ""}]}]
        self.assertIn("nothing was checked", spread.spread(none)[0])
        self.assertFalse(spread.spread(none)[1])
        self.assertEqual([report.met_word(x) for x in (None, True, False)], ["does not apply", "yes", "no"])


class Collective(unittest.TestCase):
    """The collective scenarios: their keys, and a report from a synthetic
    rank 0 report and samples."""

    def test_the_scenarios_read(self):
        here = os.path.dirname(os.path.abspath(__file__))
        for name in ("alltoall", "allreduce"):
            sc = scenario.read_scenario(os.path.join(here, f"{name}.conf"), [])
            self.assertEqual((sc["topology"], sc["collective"]), ("collective", name))
            self.assertEqual([m["name"] for m in sc["modes"]], ["baseline", "pfc", "dcqcn", "dcqcn+pfc"])
        for text, want in (("topology = collective\ncollective = bcast\n", "'bcast' is not allreduce or alltoall"),
                           ("coll_iters = 3\n", "are the collective topology's"),
                           ("topology = collective\ncoll_bytes = 32MiB\n", "not a size from 4KiB to 16MiB")):
            with self.subTest(text=text), self.assertRaises(scenario.ScenarioError) as e:
                scenario_of(text)
            self.assertIn(want, str(e.exception))

    @staticmethod
    def mode_run(raw, mode, wrong=0, rc=0, pauses=0, drops=0):
        d = os.path.join(raw, mode)
        os.makedirs(d)
        for name, v in [("load-start", 100.0), ("load-done", 105.0)] + [
                (f"rank{r}.rc", rc if r == 5 else 0) for r in range(8)]:
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.write(f"{v}\n")
        with open(os.path.join(d, "coll.json"), "w", encoding="utf-8") as f:
            f.write(json.dumps({"op": "alltoall", "ranks": 8, "bytes": 1048576, "count": 262144,
                                "time_us": 2e6, "algbw": 0.0005, "busbw": 0.00044, "slowest_us": 2.5e6,
                                "worst_us": 3e6, "slow_rank": 3, "wrong": wrong, "iters": 8}) + "\n")
        ports = {f"lf1:swp{i}": (lambda k: {"tx_bytes": k * 12500, "drops": drops * k // 50,
                                            "pause_tx": pauses * k // 50}) for i in range(1, 5)}
        ports.update({p: (lambda k: {}) for p in [f"lf2:swp{i}" for i in range(5, 9)]
                      + [f"{lf}:to-{sp}" for lf in ("lf1", "lf2") for sp in ("sp1", "sp2")]})
        Pathology.samples(os.path.join(d, "samples"), 100.0, 51, ports,
                          {"h1": lambda k: {"tx_prio3_pause": 0, "np_cnp_sent": 0}})

    def test_report(self):
        sc = scenario_of("topology = collective\ncollective = alltoall\nrate = 10mbit\n")
        with tempfile.TemporaryDirectory() as d:
            raw = os.path.join(d, "raw")
            self.mode_run(raw, "baseline", drops=30)
            self.mode_run(raw, "pfc", pauses=100)
            self.mode_run(raw, "dcqcn", wrong=2)
            self.mode_run(raw, "dcqcn+pfc", pauses=10, rc=124)
            scj = os.path.join(d, "sc.json")
            with open(scj, "w", encoding="utf-8") as f:
                json.dump(sc, f)
            rep = quiet_report(raw, scj, os.path.join(d, "out"))
            by = {m["name"]: m for m in rep["modes"]}
            self.assertEqual(by["baseline"]["host_port_drops"], 4 * 30)
            self.assertEqual(by["pfc"]["totals"]["pfc_sent"], 4 * 100)
            self.assertEqual(by["pfc"]["time_us"], 2e6)
            met = {c["check"]: c["met"] for c in rep["checks"]}
            right = "every rank finished and every element of every iteration was right"
            self.assertTrue(met[f"PFC only: {right}"])
            self.assertFalse(met[f"DCQCN only: {right}"])	# 2 wrong elements
            self.assertFalse(met[f"DCQCN + PFC: {right}"])	# a rank failed
            killed = next(c for c in rep["checks"] if c["check"] == f"DCQCN + PFC: {right}")
            self.assertIn("rank 5 killed after", killed["measured"])
            self.assertTrue(met["rdma_rxe-like: no PFC, no DCQCN: the switches drop packets (the incast at the "
                                "hosts' ports, the 2:1 oversubscribed uplinks)"])
            self.assertTrue(met["rdma_rxe-like: no PFC, no DCQCN: every element that rank 0 reported was right "
                                "(no report: the ranks were stopped at the duration)"])
            self.assertTrue(met["PFC only: lossless: no switch port dropped a packet"])
            self.assertTrue(any(c.startswith("DCQCN + PFC: at most 1/2 of PFC only's PFC frames") and v
                                for c, v in met.items()))
            self.assertEqual(len(rep["plots"]), 4)
            text, _ = spread.spread([rep, rep])
            self.assertIn("busbw MB/s", text)
            # a mode the guest did not record: no figures, and the spread still reads
            import shutil  # pylint: disable=import-outside-toplevel
            shutil.rmtree(os.path.join(raw, "pfc"))
            rep2 = quiet_report(raw, scj, os.path.join(d, "out2"))
            self.assertIn("error", {m["name"]: m for m in rep2["modes"]}["pfc"])
            text, every = spread.spread([rep, rep2])
            self.assertFalse(every)

    def test_the_lossy_baseline_without_a_report(self):
        sc = scenario_of("topology = collective\nmodes = baseline\n")

        def met(status):
            r = {"name": "baseline", "label": "base", "pfc": False, "dcqcn": False, "watchdog": 0,
                 "totals": {"drops": 5, "pfc_sent": 0, "cnps": 0}, "rank_status": status,
                 "ranks_ok": all(v == 0 for v in status.values()), "host_port_drops": 5, "uplink_drops": 0}
            return next(ok for c, ok, _ in collective.checks([r], sc) if "rank 0 reported" in c)
        self.assertTrue(met({"0": 124, "1": 124}))   # stopped at the duration: no report is expected
        self.assertFalse(met({"0": 0, "1": 0}))      # every rank ended well and still no report
        self.assertFalse(met({"0": 124, "1": 2}))    # a rank crashed
        self.assertFalse(met({"0": None, "1": 124}))  # a rank without an exit status

    def test_a_declared_mode_not_recorded_fails_the_comparison(self):
        sc = scenario_of("topology = collective\nmodes = pfc dcqcn+pfc\n")
        ck = collective.checks([{"name": "pfc", "label": "PFC only", "error": "no samples"},
                                {"name": "dcqcn+pfc", "label": "DCQCN + PFC", "pfc": True, "dcqcn": True,
                                 "watchdog": 0, "totals": {"drops": 0, "pfc_sent": 1, "cnps": 9},
                                 "rank_status": {"0": 0}, "ranks_ok": True, "wrong": 0, "iters": 8}], sc)
        got = {c: (ok, m) for c, ok, m in ck}
        self.assertEqual(got["DCQCN + PFC: at most 1/2 of PFC alone's PFC frames"],
                         (False, "one of the two modes was not recorded"))
        self.assertEqual(got["without PFC or DCQCN: the switches drop packets"][0], None)

    def test_fabric_bound(self):
        sc = scenario_of("topology = collective\ncollective = alltoall\nrate = 10mbit\n")
        self.assertAlmostEqual(collective.fabric_bound_s(sc), 8 * (1 << 20) / 10e6)	# S per uplink
        sc = scenario_of("topology = collective\ncollective = allreduce\nrate = 10mbit\n")
        self.assertAlmostEqual(collective.fabric_bound_s(sc), 2 * 7 / 8 * 8 * (1 << 20) / 10e6)


class Series(unittest.TestCase):
    def test_queue_held_and_bins(self):
        q = [(1.0, 100), (2.0, 300), (4.0, 0)]
        # the time-weighted mean and the share at a level or above, over segments
        _, mean, at = analysis.queue_held(q, [(0.0, 4.0, ["h2"])], 300)
        self.assertAlmostEqual(mean, (0 + 100 + 300 * 2) / 4)
        self.assertAlmostEqual(at, 50.0)
        _, mean, at = analysis.queue_held(q, [(1.5, 3.0, ["h2"])], 100)
        self.assertAlmostEqual(mean, (100 * 0.5 + 300 * 1.0) / 1.5)
        self.assertAlmostEqual(at, 100.0)
        _, mean, _ = analysis.queue_held(q, [(0.0, 1.0, []), (2.0, 3.0, [])], 0)
        self.assertAlmostEqual(mean, 150.0)
        b = analysis.binned(q, 0.0, 4.0, 1.0)
        self.assertEqual([t for t, _ in b], [0.0, 1.0, 2.0, 3.0])
        self.assertEqual([v for _, v in b], [0.0, 100.0, 300.0, 300.0])
        b = analysis.binned(q, 0.5, 2.5, 1.0)   # a bin across a change: its time-weighted mean
        self.assertEqual([v for _, v in b], [50.0, 200.0])

    def test_step_spans_and_held_percentile(self):
        q = [(1.0, 100), (2.0, 300), (4.0, 0)]
        self.assertEqual(analysis.step_spans(q, 0.0, 5.0), [(0.0, 1.0), (100, 1.0), (300, 2.0), (0, 1.0)])
        self.assertEqual(analysis.step_spans(q, 1.5, 3.0), [(100, 0.5), (300, 1.0)])
        spans = analysis.step_spans(q, 0.0, 5.0)
        # 2 of 5 s at 0, 1 s at 100, 2 s at 300
        self.assertEqual(analysis.held_percentile(spans, 40), 0)
        self.assertEqual(analysis.held_percentile(spans, 60), 100)
        self.assertEqual(analysis.held_percentile(spans, 99), 300)

    def test_the_probe_calibration(self):
        with tempfile.TemporaryDirectory() as raw:
            self.assertIsNone(incast.calibration(raw))
            d = os.path.join(raw, "_calibration")
            os.makedirs(d)
            # 150 pings: 148 of 200 us round trip, 2 of 20 ms (half: 100 us, 10 ms)
            with open(os.path.join(d, "probe.tsv"), "w", encoding="utf-8") as f:
                f.writelines(f"{10**9 + k * 10**6} {200000 if k >= 2 else 20000000}\n" for k in range(150))
            self.assertEqual(incast.calibration(raw), {"pings": 150, "p99_us": 10000.0, "p50_us": 100.0})
            with open(os.path.join(d, "probe.tsv"), "w", encoding="utf-8") as f:
                f.writelines(f"{10**9 + k * 10**6} 200000\n" for k in range(99))
            self.assertEqual(incast.calibration(raw), {"pings": 99, "p99_us": None, "p50_us": 100.0})

    def test_an_overflowed_trace_is_flagged(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write("# tracer: nop\n#\n# entries-in-buffer/entries-written: 10/25   #P:2\n")
            self.assertFalse(capture.trace_complete(path))
            with open(path, "w", encoding="utf-8") as f:
                f.write("# tracer: nop\n#\n# entries-in-buffer/entries-written: 25/25   #P:2\n")
            self.assertTrue(capture.trace_complete(path))
            self.assertFalse(capture.trace_complete(os.path.join(d, "none.txt")))


class Report(unittest.TestCase):
    def make_mode(self, raw, name, drops, xoff, xon, pings):
        d = os.path.join(raw, name)
        os.makedirs(d)
        # h2 sends 2000 and h3 1000 distinct packets over the same 1 s; h2
        # sends 100 of them twice (retransmissions do not count), h5 (the
        # probe) is not a sender
        pkts = [(100 + i / 2000, roce_packet("10.0.2.1", "10.0.1.1", 17, i)) for i in range(2000)]
        pkts += [(100.5, roce_packet("10.0.2.1", "10.0.1.1", 17, i)) for i in range(100)]
        pkts += [(100 + i / 1000, roce_packet("10.0.3.1", "10.0.1.1", 18, i)) for i in range(1001)]
        pkts += [(100.2, roce_packet("10.0.5.1", "10.0.1.1", 19, 0))]
        pkts += [(100.3, roce_packet("10.0.2.1", "10.0.1.1", 17, 5000, opcode=0x11))]   # an ACK
        write_pcap(os.path.join(d, "swp1.pcap"), sorted(pkts, key=lambda p: p[0]))
        prio = [{"drops": 0, "ecn_marked": 0, "pause_tx": 0, "xon_tx": 0,
                 "pause_tx_duration_us": 0} for _ in range(8)]
        prio[3] = {"drops": drops, "ecn_marked": 7, "pause_tx": xoff, "xon_tx": xon,
                   "pause_tx_duration_us": 2500}
        with open(os.path.join(d, "qdisc.json"), "w", encoding="utf-8") as f:
            json.dump([{"prio": prio}], f)
        with open(os.path.join(d, "before.txt"), "w", encoding="utf-8") as f:
            f.write("h1 np_cnp_sent 10\nh2 rp_cnp_handled 1\nh3 rp_cnp_handled 2\n"
                    "h2 completer_retry_err 0\nh2 rx_prio3_pause_duration 1000\n"
                    "h2 rp_pace_late_us 5000\nh3 rp_pace_late_us 0\n"
                    "h2 rp_pace_idle_us 0\nh3 rp_pace_idle_us 0\n"
                    "h2 rp_tx_deferred 100\nh3 rp_tx_deferred 0\n")
        with open(os.path.join(d, "after.txt"), "w", encoding="utf-8") as f:
            f.write("h1 np_cnp_sent 30\nh2 rp_cnp_handled 11\nh3 rp_cnp_handled 12\n"
                    "h2 completer_retry_err 4\nh2 rx_prio3_pause_duration 5000\n"
                    "h2 rp_pace_late_us 155000\nh3 rp_pace_late_us 50000\n"
                    "h2 rp_pace_idle_us 20000\nh3 rp_pace_idle_us 0\n"
                    "h2 rp_tx_deferred 130\nh3 rp_tx_deferred 12\n")
        with open(os.path.join(d, "trace.txt"), "w", encoding="utf-8") as f:
            f.write("  kworker-1 [000] ..s1. 50.100000: rxecc_rate: dev=h2 qpn=17 event=cut "
                    "rc=500000 rt=1000000 alpha=1024 t_stage=0 bc_stage=0\n"
                    "  kworker-1 [000] ..s1. 50.300000: rxecc_rate: dev=h2 qpn=17 event=timer "
                    "rc=750000 rt=1000000 alpha=900 t_stage=1 bc_stage=0\n"
                    # swp1's queue of priority 3: 20 KB before the settled
                    # window (52-60 s), then 8000 B for 4 s and 4000 B for 4 s;
                    # another port and another priority do not count
                    "  <idle>-0 [001] ..s2. 51.000000: pfc_queue: dev=swp1 prio=3 backlog=20480\n"
                    "  <idle>-0 [001] ..s2. 52.000000: pfc_queue: dev=swp1 prio=3 backlog=8000\n"
                    "  <idle>-0 [001] ..s2. 53.000000: pfc_queue: dev=swp2 prio=3 backlog=90000\n"
                    "  <idle>-0 [001] ..s2. 54.000000: pfc_queue: dev=swp1 prio=6 backlog=90000\n"
                    "  <idle>-0 [001] ..s2. 56.000000: pfc_queue: dev=swp1 prio=3 backlog=4000\n")
        # one ping per line: sent at (ns, CLOCK_MONOTONIC), round trip (ns);
        # the report takes half the round trip. The load ran from 50 to 60 s:
        # the pings in it count, one before and the ones after (all 7 ms) do not
        with open(os.path.join(d, "probe.tsv"), "w", encoding="utf-8") as f:
            f.write(f"{49_000_000_000} 14000000\n")
            f.write("".join(f"{50_000_000_000 + i * 5_000_000} {int(2 * us * 1000)}\n"
                            for i, us in enumerate(pings)))
            f.write("".join(f"{61_000_000_000 + i} 14000000\n" for i in range(50)))
            f.write("garbage line\n")
        with open(os.path.join(d, "load-start"), "w", encoding="utf-8") as f:
            f.write("50.00\n")
        with open(os.path.join(d, "load-done"), "w", encoding="utf-8") as f:
            f.write("60.00\n")

    def test_numbers_checks_and_files(self):
        with tempfile.TemporaryDirectory() as raw, tempfile.TemporaryDirectory() as out:
            sc = scenario_of("senders = 2\nrate = 50mbit\nmodes = pfc dcqcn+pfc\nlink = 1gbit\nkmin = 5KB\n")
            sc_path = os.path.join(raw, "scenario.json")
            with open(sc_path, "w", encoding="utf-8") as f:
                json.dump(sc, f)
            # one-way latencies in us
            self.make_mode(raw, "pfc", 0, 30, 10, [1200.0] * 990 + [5000.0] * 10)
            self.make_mode(raw, "dcqcn+pfc", 0, 2, 2, [100.0] * 1000)
            rep = quiet_report(raw, sc_path, out)
            pfc, both = rep["modes"]
            # 2000 and 1000 packets of 1024 B in 1 s (the window both senders ran)
            self.assertAlmostEqual(pfc["flows_mbps"]["h2"], 2000 * 1024 * 8 / 1e6 / 0.999, delta=0.1)
            self.assertAlmostEqual(pfc["flows_mbps"]["h3"], 1000 * 1024 * 8 / 1e6, delta=0.1)
            self.assertEqual(list(pfc["flows_mbps"]), ["h2", "h3"])
            self.assertAlmostEqual(pfc["jain"], 0.9, delta=0.01)
            self.assertEqual((pfc["pfc_xoff"], pfc["pfc_xon"], pfc["ecn_marks"]), (30, 10, 7))
            self.assertEqual((pfc["cnp_sent"], pfc["cnp_handled"], pfc["retransmissions"]), (20, 20, 4))
            self.assertEqual(pfc["senders_paused_ms"], 4)
            # the packets the senders' rate limiters held back (the port counter's name)
            self.assertEqual(pfc["rp_tx_deferred"], 42)
            self.assertNotIn("limiter_deferred", pfc)
            # 200 ms late and 20 ms idle of the two senders' 2 s under load
            self.assertEqual((both["pace_late_pct"], both["pace_idle_pct"]), (10.0, 1.0))
            self.assertEqual(pfc["probe"]["samples"], 1000)
            self.assertAlmostEqual(pfc["probe"]["p50_us"], 1200.0)
            self.assertAlmostEqual(pfc["probe"]["p99_us"], 1200.0)
            self.assertAlmostEqual(pfc["probe"]["p999_us"], 5000.0)
            self.assertAlmostEqual(both["probe"]["p99_us"], 100.0)
            # h2's last rate event before the settled window (52-60 s): 750
            # Mbit/s throughout; h3 has none: line rate. Fair share 25.
            self.assertNotIn("rc", pfc)
            self.assertEqual(both["rc"]["senders"], {"h2": {"median_mbps": 750.0, "in_band_pct": 0.0},
                                                     "h3": {"median_mbps": 1000.0, "in_band_pct": 0.0}})
            self.assertEqual(both["rc"]["fair_mbps"], 25.0)
            self.assertEqual(both["queue_mean_kb"], 6.0)
            # 4 of the 8 s at 8000 B (Kmin 5 KB or above), p95 8000 B
            self.assertEqual((both["queue_at_kmin_pct"], both["queue_p95_kb"]), (50.0, 8.0))
            # no calibration in raw: no floor
            self.assertIsNone(rep["probe_calibration"])
            checks = {c["check"]: c["met"] for c in rep["checks"]}
            self.assertEqual(len(checks), 9)
            self.assertFalse(checks["DCQCN + PFC: kernel and simulation within ±25 % of the fair share of "
                                    "each other (each sender's Rc, mean of 1 s means)"])   # no dcqcn.json
            self.assertFalse(checks["DCQCN + PFC: every sender's DCQCN rate within ±30 % of its fair share "
                                    "(25 Mbit/s) 70 % of the time or more"])
            # the senders ran together for 1 s: nothing from 2 s on
            self.assertFalse(checks["DCQCN + PFC: goodput 90 % of the port or more from 2 s on"])
            self.assertIsNone(both["goodput_settled_pct"])
            self.assertTrue(checks[HELD])   # 50 % at 5 KB or above, p95 8 KB
            self.assertFalse(checks["DCQCN + PFC: Jain index 0.95 or more"])   # 0.900
            self.assertTrue(checks["DCQCN + PFC: lossless: no switch drop"])
            self.assertTrue(checks[FRAMES])   # 4 vs 40: inclusive
            self.assertFalse(checks[PROBE])   # 100 vs 1200 us, but no floor
            for png in ["pfc-rates.png", "pfc-queue.png", "pfc-latency.png", "queue.png", "latency.png"]:
                with open(os.path.join(out, png), "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", png)
            with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
                md = f.read()
            self.assertIn("| dcqcn+pfc |", md)
            self.assertIn("![latency.png](latency.png)", md)

    def test_goodput_from_the_settled_time_on(self):
        with tempfile.TemporaryDirectory() as d:
            # h2 from 100 s to 104 s, h3 from 100.5 s to 104.5 s: 100 packets/s
            # each for its first 2 s, 1000/s after
            pkts = []
            for src, qpn, t0 in (("10.0.2.1", 17, 100.0), ("10.0.3.1", 18, 100.5)):
                times = [t0 + i / 100 for i in range(200)] + [t0 + 2 + i / 1000 for i in range(2000)]
                pkts += [(t, roce_packet(src, "10.0.1.1", qpn, i)) for i, t in enumerate(times)]
            path = os.path.join(d, "swp1.pcap")
            write_pcap(path, sorted(pkts, key=lambda p: p[0]))
            senders = {"10.0.2.1": "h2", "10.0.3.1": "h3"}
            capture.packets.cache_clear()
            flows, window = capture.goodput(path, "10.0.1.1", senders)
            self.assertAlmostEqual(window, 3.5, places=2)   # 100.5 .. 103.999
            # the slow start counts: h2 150 + 2000 packets in the window, h3
            # 200 + 1500 (its last 500 come after h2's last)
            self.assertAlmostEqual(flows["h2"], 2150 * 8192 / 3.499 / 1e6, delta=0.05)
            self.assertAlmostEqual(flows["h3"], 1700 * 8192 / 3.499 / 1e6, delta=0.05)
            flows, window = capture.goodput(path, "10.0.1.1", senders, 2.0)
            self.assertAlmostEqual(window, 1.5, places=2)   # 102.5 .. 103.999
            # both at 1000 packets/s of 1024 B in that window: 8.19 Mbit/s
            self.assertAlmostEqual(flows["h2"], 8.19, delta=0.05)
            self.assertAlmostEqual(flows["h3"], 8.19, delta=0.05)
            self.assertEqual(capture.goodput(path, "10.0.1.1", senders, 10.0), ({"h2": 0.0, "h3": 0.0}, 0.0))

    def test_spread_over_runs(self):
        def rep(goodput, jain, met):
            return {"modes": [{"name": "dcqcn", "goodput_pct": goodput, "goodput_settled_pct": goodput + 3,
                               "jain": jain, "probe": None,
                               "rc": {"senders": {"h2": {"in_band_pct": goodput - 10},
                                                  "h3": {"in_band_pct": goodput}}}}],
                    "checks": [{"check": "a", "met": True}, {"check": "b", "met": met}]}
        text, every = spread.spread([rep(80, 0.9, True), rep(90, 1.0, False), rep(85, 0.95, True)])
        self.assertFalse(every)
        self.assertIn("Spread over 3 runs", text)
        # goodput, from 2 s on, Jain, queue and its time at Kmin (none), drops (none), PFC frames
        # (0), probe (none), simulation (none), worst sender
        self.assertIn("| dcqcn | 85 (80-90) | 88 (83-93) | 0.95 (0.9-1) | - | - | - | - | - | - | 75 (70-80) |",
                      text)
        self.assertIn("| a | 3 of 3 |", text)
        self.assertIn("| b | 2 of 3 |", text)
        self.assertTrue(spread.spread([rep(80, 0.9, True)])[1])

    def test_checks_count_missing_data_as_unmet(self):
        sc = scenario.read_scenario(None, [])
        both = {"name": "dcqcn+pfc", "label": "DCQCN + PFC", "pfc": True, "dcqcn": True, "rc": None,
                "goodput_pct": 85.0, "goodput_settled_pct": 95.0, "goodput_mbps": 21.3, "jain": 1.0,
                "queue_mean_kb": None,
                "switch_drops": 0, "pfc_xoff": 0, "pfc_xon": 0, "probe": None}
        pfc = {"name": "pfc", "label": "PFC only", "pfc": True, "dcqcn": False, "goodput_pct": 94.0, "jain": 1.0,
               "switch_drops": 0, "pfc_xoff": 0, "pfc_xon": 0, "probe": {"p99_us": 5000.0}}
        got = {c: (ok, m) for c, ok, m in incast.checks([pfc, both], sc)}
        band = ("DCQCN + PFC: every sender's DCQCN rate within ±30 % of its fair share (8.33 Mbit/s) "
                "70 % of the time or more")
        self.assertEqual(got[band], (False, "no rate statistics: no complete DCQCN rate trace"))
        self.assertEqual(got[HELD], (False, "no complete queue trace"))
        self.assertFalse(got[FRAMES][0])   # 0 vs 0
        self.assertEqual(got[PROBE], (False, "no probe p99 in one of the modes"))
        # judged from 2 s on
        self.assertEqual(got["DCQCN + PFC: goodput 90 % of the port or more from 2 s on"],
                         (True, "95 %; 85 % from the start"))
        self.assertNotIn("PFC only: goodput 90 % of the port or more from 2 s on", got)   # not a DCQCN mode
        both["goodput_settled_pct"] = 89.9
        got = {c: ok for c, ok, m in incast.checks([pfc, both], sc)}
        self.assertFalse(got["DCQCN + PFC: goodput 90 % of the port or more from 2 s on"])

    def test_every_expectation_fails_under_its_mutation(self):
        """The host half of make lab-mutants: a synthetic DCQCN + PFC and PFC
        alone that meet every incast expectation, then the mechanism broken
        one way at a time; each named expectation must turn unmet."""
        sc = scenario.read_scenario(None, [])
        calib = {"pings": 3000, "p99_us": 3000.0, "p50_us": 700.0}

        def good():
            pfc = {"name": "pfc", "label": "PFC only", "pfc": True, "dcqcn": False, "switch_drops": 0,
                   "pfc_xoff": 1500, "pfc_xon": 1500, "probe": {"p99_us": 22000.0},
                   "goodput_mbps": 23.6, "goodput_pct": 94.0, "jain": 1.0}
            both = {"name": "dcqcn+pfc", "label": "DCQCN + PFC", "pfc": True, "dcqcn": True, "switch_drops": 0,
                    "pfc_xoff": 3, "pfc_xon": 3, "probe": {"p99_us": 4800.0}, "goodput_mbps": 22.3,
                    "goodput_pct": 89.0, "goodput_settled_pct": 93.0, "jain": 1.0, "queue_mean_kb": 6.1,
                    "queue_at_kmin_pct": 45.0, "queue_p95_kb": 12.0,
                    "rc": {"senders": {h: {"in_band_pct": 99.0, "median_mbps": 8.3} for h in ("h2", "h3", "h4")},
                           "sum_mean_mbps": 24.7},
                    "sim": {"rc_diff_pct": 9.0, "queue_mean_kb": 5.4,
                            "senders": {h: {"kernel_mbps": 8.3, "sim_mbps": 8.1} for h in ("h2", "h3", "h4")}}}
            return pfc, both

        def unmet(pfc, both):
            got = incast.checks([pfc, both], sc, calib)
            self.assertTrue(all(ok is not None for _, ok, _ in got))
            return {c.split(": ", 1)[1].split(" (")[0].split(" 1/")[0] for c, ok, _ in got if not ok}
        self.assertEqual(unmet(*good()), set())
        pfc, both = good()
        # DCQCN that cannot cut: the rates stay at line rate, the queue at
        # XOFF, PFC does the work as it does alone
        for h in both["rc"]["senders"].values():
            h.update(in_band_pct=5.0, median_mbps=25.0)
        both.update(queue_at_kmin_pct=99.0, queue_p95_kb=90.0, pfc_xoff=1400, pfc_xon=1400,
                    probe={"p99_us": 21000.0})
        self.assertLessEqual({"every sender's DCQCN rate within ±30 % of its fair share",
                              "queue held in the marking band: at Kmin", "PFC frames",
                              "probe p99 above its floor"}, unmet(pfc, both))
        # no PFC at the switch: PFC alone drops and pauses nothing
        pfc, both = good()
        pfc.update(switch_drops=5013, pfc_xoff=0, pfc_xon=0)
        self.assertEqual(unmet(pfc, both), {"lossless: no switch drop", "PFC frames"})
        # a stuck queue: the port sends little, the queue sits above Kmax
        pfc, both = good()
        both.update(goodput_settled_pct=30.0, queue_p95_kb=200.0)
        self.assertEqual(unmet(pfc, both), {"goodput 90 % of the port or more from 2 s on",
                                            "queue held in the marking band: at Kmin"})
        # unfair rates; a kernel that left its simulation
        pfc, both = good()
        both.update(jain=0.8)
        both["sim"]["rc_diff_pct"] = 40.0
        self.assertEqual(unmet(pfc, both), {"Jain index 0.95 or more", "kernel and simulation within ±25 % of "
                                            "the fair share of each other"})

    def test_the_queue_held_in_the_marking_band(self):
        sc = scenario.read_scenario(None, [])
        mode = {"name": "dcqcn", "label": "DCQCN + PFC", "dcqcn": True, "rc": None, "goodput_pct": 90.0,
                "goodput_settled_pct": 93.0, "goodput_mbps": 22.5, "jain": 1.0, "queue_mean_kb": 4.4}
        for at, p95, met in ((41.9, 12.1, True), (25.0, 19.9, True), (24.9, 12.0, False),
                             (60.0, 20.0, False), (99.0, 110.0, False)):
            mode.update(queue_at_kmin_pct=at, queue_p95_kb=p95)
            got = {c: (ok, m) for c, ok, m in incast.checks([mode], sc)}
            self.assertEqual(got[HELD][0], met, (at, p95))
        self.assertEqual(got[HELD][1], "99 % of the time at Kmin or above, p95 110 KB, mean 4.4 KB")

    def test_the_probe_judged_above_its_floor(self):
        sc = scenario.read_scenario(None, [])
        pfc = {"name": "pfc", "label": "PFC only", "pfc": True, "dcqcn": False, "probe": {"p99_us": 21421.0}}
        both = {"name": "dcqcn+pfc", "label": "DCQCN + PFC", "pfc": True, "dcqcn": False,
                "probe": {"p99_us": 5094.0}, "goodput_mbps": 20.0, "goodput_pct": 80.0, "jain": 1.0}
        calib = {"pings": 4541, "p99_us": 3520.0, "p50_us": 900.0}

        def probe():
            return {c: (ok, m) for c, ok, m in incast.checks([pfc, both], sc, calib)}[PROBE]
        # (a mode with DCQCN off is not compared: "both" runs DCQCN here)
        both["dcqcn"] = True
        self.assertEqual(probe(), (True, "5094 vs 21421 us, floor 3520 us: 1574 vs 17901 us above it "
                                         "(9 %; 24 % in all)"))
        # a third of PFC's above the floor, inclusive; a little more is not met
        both["probe"]["p99_us"] = 3520.0 + 17901.0 / 3
        self.assertTrue(probe()[0])
        both["probe"]["p99_us"] += 10
        self.assertFalse(probe()[0])
        # PFC only's p99 at or under the floor: no comparison
        pfc["probe"]["p99_us"] = 3000.0
        both["probe"]["p99_us"] = 7110.0
        self.assertEqual(probe(), (False, "7110 vs 3000 us, floor 3520 us: 3590 vs -520 us above it"))
        # the floor is the calibration's, not the mode's: a DCQCN + PFC whose
        # pings all waited behind a queue no longer moves it
        pfc["probe"]["p99_us"] = 21421.0
        both["probe"]["p99_us"] = 21000.0
        self.assertFalse(probe()[0])
        # a calibration with too few pings, or none: not met
        calib = {"pings": 12, "p99_us": None, "p50_us": 800.0}
        both["probe"]["p99_us"] = 1000.0
        self.assertEqual(probe(), (False, "no floor: 12 pings in the probe's calibration (100 needed); "
                                          "1000 vs 21421 us"))
        calib = None
        self.assertEqual(probe()[1], "no floor: 0 pings in the probe's calibration (100 needed); 1000 vs 21421 us")

    def test_comparisons_follow_what_the_modes_do_not_their_names(self):
        sc = scenario.read_scenario(None, [])
        calib = {"pings": 4541, "p99_us": 3520.0, "p50_us": 900.0}

        def mode(name, pfc, dcqcn, frames, p99):
            return {"name": name, "label": name, "pfc": pfc, "dcqcn": dcqcn, "switch_drops": 0,
                    "pfc_xoff": frames, "pfc_xon": frames, "probe": {"p99_us": p99},
                    "goodput_mbps": 20.0, "goodput_pct": 80.0, "jain": 1.0}
        # docs/lab.md's mlx5/paper example: two modes with both, one PFC alone
        got = {c: ok for c, ok, m in incast.checks([mode("lossless", True, False, 1000, 21000.0),
                                                  mode("mlx5", True, True, 10, 4000.0),
                                                  mode("paper", True, True, 500, 4000.0)], sc, calib)}
        self.assertTrue(got["mlx5 against lossless: PFC frames 1/10 of PFC alone's or fewer"])
        self.assertFalse(got["paper against lossless: PFC frames 1/10 of PFC alone's or fewer"])
        self.assertIn("mlx5 against lossless: probe p99 above its floor 1/3 of PFC alone's or lower", got)
        self.assertTrue(got["lossless: lossless: no switch drop"])
        # no PFC-alone mode: the comparison is ruled out, on its own line
        ck = incast.checks([mode("mlx5", True, True, 10, 4000.0)], sc, calib)
        ruled = [(c, m) for c, ok, m in ck if ok is None]
        self.assertEqual(ruled, [("DCQCN + PFC against PFC alone (PFC frames, probe)",
                                  "does not apply: no mode of the scenario runs PFC without DCQCN or watchdog")])
        # no DCQCN mode: its checks are ruled out too, never silently gone
        ck = incast.checks([mode("a", False, False, 0, 1.0), mode("b", True, False, 5, 1.0)], sc, calib)
        self.assertEqual(sorted(m.split(":")[1].strip() for c, ok, m in ck if ok is None),
                         ["no mode of the scenario runs DCQCN", "no mode of the scenario runs PFC and DCQCN",
                          "the lab expects nothing of this mode; it is there to compare with"])
        # probe = off: the probe's comparison is ruled out by the scenario
        off = scenario.read_scenario(None, ["probe=off"])
        ck = {c: (ok, m) for c, ok, m in incast.checks([mode("p", True, False, 100, 1.0),
                                                     mode("b", True, True, 1, 1.0)], off)}
        self.assertEqual(ck["b against p: probe p99 above its floor 1/3 of PFC alone's or lower"],
                         (None, "does not apply: the scenario turns the probe off (probe = off)"))

    def test_a_mode_without_a_check_gets_a_line_and_labels_are_unique(self):
        sc = scenario.read_scenario(None, [])
        # "PFC" is a prefix of "PFC only": it is not covered by that mode's lines
        ck = checks.uncovered([{"label": "PFC"}, {"label": "PFC only"}], [("PFC only: lossless", True, "")])
        self.assertEqual([c for c, ok, _ in ck if ok is None], ["PFC: an expectation of its own"])
        self.assertEqual(sc["modes"][0]["label"], "rdma_rxe-like: no PFC, no DCQCN")
        with self.assertRaises(scenario.ScenarioError) as e:
            scenario_of("modes = a b\n[mode a]\nlabel = same\n[mode b]\nlabel = same\n")
        self.assertIn("two modes have the label 'same'", str(e.exception))

    def test_verdict_of_one_run(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "report.json")

            def verdict(checks):
                with open(path, "w", encoding="utf-8") as f:
                    json.dump({"checks": [{"check": c, "met": m, "measured": ""} for c, m in checks]}, f)
                err = io.StringIO()
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                    return report.verdict(path), err.getvalue()
            self.assertEqual(verdict([("a", True), ("b", None)])[0], 0)
            rc, err = verdict([("a", True), ("b", False)])
            self.assertEqual((rc, err.strip()), (3, "demo: expectations not met: b"))
            # nothing applies: not a success
            rc, err = verdict([("b", None)])
            self.assertEqual(rc, 3)
            self.assertIn("nothing was checked", err)
            self.assertEqual(verdict([])[0], 3)

    def test_spread_counts_a_check_missing_from_a_run_as_unmet(self):
        first = {"modes": [{"name": "pfc"}], "checks": [{"check": "a", "met": True}]}
        second = {"modes": [{"name": "pfc", "probe": {"p99_us": 123456.7}}, {"name": "x"}],
                  "checks": [{"check": "a", "met": True}, {"check": "b", "met": True}]}
        text, every = spread.spread([first, second])
        self.assertFalse(every)   # b met where it was checked, missing from the first run
        self.assertIn("| b | 1 of 2 |", text)
        self.assertIn("| x |", text)
        self.assertIn("| 123457 (123457-123457) |", text)   # large numbers printed whole

    def test_checks_without_probe_or_counters(self):
        sc = scenario.read_scenario(None, ["probe=off"])
        both = {"name": "dcqcn+pfc", "label": "DCQCN + PFC", "pfc": True, "dcqcn": False, "probe": None}
        pfc = {"name": "pfc", "label": "PFC only", "pfc": True, "dcqcn": False, "probe": None}
        both["dcqcn"] = True
        both.update(goodput_mbps=20.0, goodput_pct=80.0, jain=1.0)
        got = {c: (ok, m) for c, ok, m in incast.checks([pfc, both], sc)}
        self.assertEqual(got[FRAMES], (False, "no qdisc counters"))
        self.assertEqual(got["DCQCN + PFC: lossless: no switch drop"], (False, "no qdisc counters"))
        self.assertEqual(got["PFC only: lossless: no switch drop"], (False, "no qdisc counters"))
        self.assertEqual([v for c, v in got.items() if "probe" in c],
                         [(None, "does not apply: the scenario turns the probe off (probe = off)")])

    def test_rate_stats_against_the_fair_share(self):
        # h2 at 25 Mbit/s (the fair share) for 4 of the 8 settled seconds,
        # then 40; h3 never limited: at the line rate of 100
        st = analysis.rate_stats({("h2", 17): [(51.0, 25.0), (56.0, 40.0)], ("h1", 3): [(53.0, 25.0)]},
                            [(52.0, 60.0, ["h2", "h3"])], ["h2", "h3"], 100, 50.0)
        self.assertEqual(st["senders"]["h2"], {"median_mbps": 25.0, "in_band_pct": 50.0})
        self.assertEqual(st["senders"]["h3"], {"median_mbps": 100.0, "in_band_pct": 0.0})
        self.assertAlmostEqual(st["sum_mean_mbps"], 132.5)
        self.assertEqual(st["seconds"], 8.0)
        self.assertIsNone(analysis.rate_stats({}, [], ["h2"], 100, 25.0))   # nothing settled

    def test_kernel_against_simulation(self):
        # settled window 52-60 s, 1 s bins; fair share 12.5. h2: 10 against
        # the simulation's 12 (16 %); h3: 20 then 5 against 10 (60 %)
        # the simulation's h3 at 10, from its t = 6 s (56 s) on at 5: 40 %
        sim = {"base": 50.0, "rows": [(float(t), 2000.0, [12.0, 10.0 if t < 6 else 5.0]) for t in range(11)]}
        got = lab_sim.agreement({("h2", 17): [(51.0, 10.0)], ("h3", 18): [(51.0, 20.0), (56.0, 5.0)]},
                            sim, [(52.0, 60.0, ["h2", "h3"])], ["h2", "h3"], 25.0, 25.0)
        self.assertEqual(got["senders"]["h2"], {"diff_pct": 16.0, "kernel_mbps": 10.0, "sim_mbps": 12.0})
        self.assertEqual(got["senders"]["h3"], {"diff_pct": 40.0, "kernel_mbps": 12.5, "sim_mbps": 7.5})
        self.assertEqual((got["rc_diff_pct"], got["queue_mean_kb"]), (28.0, 2.0))
        # a sender without rate events is at the line rate, in both
        got = lab_sim.agreement({}, {"base": 50.0, "rows": []}, [(52.0, 60.0, ["h2"])], ["h2"], 25.0, 12.5)
        self.assertEqual(got["senders"]["h2"]["diff_pct"], 0.0)
        self.assertIsNone(lab_sim.agreement({}, sim, [(52.0, 52.5, ["h2"])], ["h2"], 25.0, 12.5))

    def test_the_queue_counts_where_the_port_is_oversubscribed(self):
        segs = [(0.0, 8.0, ["h2"]), (8.0, 16.0, ["h2", "h3"]), (16.0, 24.0, ["h2"])]
        # one sender at the port's rate: no queue to hold; two: oversubscribed
        self.assertEqual(analysis.congested(segs, 25.0, 25.0), [segs[1]])
        # one sender faster than the port oversubscribes it alone
        self.assertEqual(analysis.congested(segs, 100.0, 25.0), segs)
        # none oversubscribed: all of them
        self.assertEqual(analysis.congested(segs[:1], 25.0, 25.0), segs[:1])
        # the simulation's mean queue too: 4000 B while both ran, 0 alone
        sim = {"base": 0.0, "rows": [(0.0, 0.0, [25.0]), (8.0, 4000.0, [12.5]), (16.0, 0.0, [25.0]),
                                     (24.0, 0.0, [25.0])]}
        got = lab_sim.agreement({}, sim, segs, ["h2"], 25.0, 25.0)
        self.assertEqual(got["queue_mean_kb"], 4.0)
        self.assertNotIn("queue_at_kmin_pct", got)
        # and its share of that time at Kmin or above
        self.assertEqual(lab_sim.agreement({}, sim, segs, ["h2"], 25.0, 25.0, 4000)["queue_at_kmin_pct"], 100.0)
        self.assertEqual(lab_sim.agreement({}, sim, segs, ["h2"], 25.0, 25.0, 4001)["queue_at_kmin_pct"], 0.0)

    def test_simulation_output_is_parsed_strictly(self):
        text = "t_ms\tqueue_bytes\trc1_mbps\tgoodput1_mbps\n10.000\t1082\t25.000\t24.000\n# jain 1\n"
        self.assertEqual(lab_sim.parse_sim(text, 1), [(0.01, 1082.0, [25.0])])
        with self.assertRaises(ValueError):
            lab_sim.parse_sim(text, 2)

    def test_report_runs_the_simulation(self):
        # A DCQCN mode with the parameters rxecc-sim prints for the paper
        # profile scaled to 25 Mbit/s: the report runs the simulation from
        # the senders' first packets to the load's end and compares.
        exe = lab_sim.sim_binary()
        self.assertTrue(os.access(exe, os.X_OK), f"{exe}: build the userspace first")
        with tempfile.TemporaryDirectory() as raw, tempfile.TemporaryDirectory() as out:
            sc = scenario_of("senders = 2\nrate = 25mbit\nmodes = dcqcn\n")
            sc_path = os.path.join(raw, "scenario.json")
            with open(sc_path, "w", encoding="utf-8") as f:
                json.dump(sc, f)
            d = os.path.join(raw, "dcqcn")
            os.makedirs(d)
            with open(os.path.join(d, "dcqcn.json"), "w", encoding="utf-8") as f:
                subprocess.run([exe, "--profile", "paper", "--scale-kbps", "25000", "--speedup", "16",
                                "--print-params"], stdout=f, check=True)
            pkts = [(50 + i / 100, roce_packet("10.0.2.1", "10.0.1.1", 17, i)) for i in range(1000)]
            pkts += [(51 + i / 100, roce_packet("10.0.3.1", "10.0.1.1", 18, i)) for i in range(900)]
            write_pcap(os.path.join(d, "swp1.pcap"), sorted(pkts, key=lambda p: p[0]))
            with open(os.path.join(d, "trace.txt"), "w", encoding="utf-8") as f:
                f.write("# entries-in-buffer/entries-written: 2/2   #P:2\n"
                        "  k-1 [000] ..s1. 50.500000: rxecc_rate: dev=h2 qpn=17 event=cut rc=12500\n"
                        "  k-1 [000] ..s1. 51.500000: rxecc_rate: dev=h3 qpn=18 event=cut rc=12500\n")
            for name, t in (("load-start", "50.5"), ("load-done", "60.0")):
                with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                    f.write(t + "\n")
            rep = quiet_report(raw, sc_path, out)
            got = rep["modes"][0]["sim"]
            self.assertEqual(sorted(got["senders"]), ["h2", "h3"])
            for h in ("h2", "h3"):
                self.assertEqual(got["senders"][h]["kernel_mbps"], 12.5)
                self.assertGreater(got["senders"][h]["sim_mbps"], 0)
                self.assertLessEqual(got["senders"][h]["sim_mbps"], 25)
            check = next(c for c in rep["checks"] if "kernel and simulation" in c["check"])
            self.assertEqual(check["met"], got["rc_diff_pct"] <= 25)
            # the comparison figure's data: 9 bins of 1 s from the load's start
            # (50.5 s) and the end row; time, Rc of 2 senders in each, 2 queues
            with open(os.path.join(out, "data", "dcqcn-sim.tsv"), encoding="utf-8") as f:
                rows = [[float(x) for x in line.split("\t")] for line in f]
            self.assertEqual([len(r) for r in rows], [7] * 10)
            self.assertEqual([r[0] for r in rows], [float(t) for t in range(10)])
            self.assertEqual([r[1] for r in rows[1:]], [12.5] * 9)   # h2's kernel Rc
            self.assertIn("dcqcn-sim.png", rep["plots"])
            with open(os.path.join(out, "dcqcn-sim.png"), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            # no parameters recorded: said, and the check not met
            os.unlink(os.path.join(d, "dcqcn.json"))
            r, _ = incast.analyse(raw, sc, sc["modes"][0])
            self.assertEqual(r["sim"], {"note": "no DCQCN parameters recorded (dcqcn.json)"})

    def test_senders_that_join_and_leave(self):
        # stagger 5: h2 sends 50-70 s, h3 55-65 s on the trace's clock; the
        # capture's runs 1000 s ahead (clock-offset). The statistics skip 2 s
        # after each change: 52-55 and 67-70 with h2 alone (fair share the
        # port's 50), 57-65 with both (25 each)
        sc = scenario_of("senders = 2\nrate = 50mbit\nstagger = 5\nduration = 20\n")
        self.assertEqual(sc["stagger"], 5)
        with self.assertRaisesRegex(scenario.ScenarioError, "too short for 3 senders joining and leaving"):
            scenario_of("senders = 3\nstagger = 5\nduration = 23\n")
        with self.assertRaisesRegex(scenario.ScenarioError, "stagger 3 leaves no step to measure: 0 or at least 4 s"):
            scenario_of("stagger = 3\n")
        with tempfile.TemporaryDirectory() as d:
            pkts = [(1050 + i / 100, roce_packet("10.0.2.1", "10.0.1.1", 17, i)) for i in range(2001)]
            pkts += [(1055 + i / 100, roce_packet("10.0.3.1", "10.0.1.1", 18, i)) for i in range(1001)]
            write_pcap(os.path.join(d, "swp1.pcap"), sorted(pkts, key=lambda p: p[0]))
            with open(os.path.join(d, "clock-offset"), "w", encoding="utf-8") as f:
                f.write("1000.0\n")
            segs = analysis.settled_segments(sc, d, (50.0, 70.0), ["h2", "h3"])
            self.assertEqual(segs, [(52.0, 55.0, ["h2"]), (57.0, 65.0, ["h2", "h3"]), (67.0, 70.0, ["h2"])])
            self.assertEqual(incast.fair_steps(sc, d, 50.0, 20.0),
                             [(0.0, 50.0), (5.0, 25.0), (15.0, 50.0), (20.0, 50.0)])
            # a sender without packets: nothing to measure
            self.assertEqual(analysis.settled_segments(scenario_of("senders = 3\nstagger = 5\nduration = 30\n"), d, (50.0, 70.0),
                                                  ["h2", "h3", "h4"]), [])
            # the simulation starts and stops each sender at its first and
            # last packet, from the earliest start, and runs to the load's end
            fake = os.path.join(d, "fake-sim")
            with open(fake, "w", encoding="utf-8") as f:
                f.write(f"#!/bin/sh\necho \"$@\" >{d}/args\nprintf 't_ms\\tq\\n10\\t0\\t1\\t2\\t3\\t4\\n'\n")
            os.chmod(fake, 0o755)
            os.makedirs(os.path.join(d, "m"))
            for name in ("swp1.pcap", "clock-offset"):
                os.rename(os.path.join(d, name), os.path.join(d, "m", name))
            for name, text in (("dcqcn.json", "[]"), ("load-start", "50.5"), ("load-done", "70.0")):
                with open(os.path.join(d, "m", name), "w", encoding="utf-8") as f:
                    f.write(text + "\n")
            saved = os.environ.get("RXECC_SIM")
            os.environ["RXECC_SIM"] = fake
            try:
                got, why = lab_sim.simulate(d, sc, {"name": "m"})
            finally:
                if saved is None:
                    del os.environ["RXECC_SIM"]
                else:
                    os.environ["RXECC_SIM"] = saved
            self.assertIsNone(why)
            self.assertEqual((got["base"], got["rows"]), (50.0, [(0.01, 0.0, [1.0, 2.0])]))
            with open(os.path.join(d, "args"), encoding="utf-8") as f:
                args = f.read().split()
            opt = dict(zip(args[::2], args[1::2]))
            self.assertEqual((opt["--start-ms"], opt["--stop-ms"], opt["--duration"]),
                             ("0.0,5000.0", "20000.0,15000.0", "15.000"))
        # h2 at the port's rate alone, then at half, then alone again; h3 at
        # half, at 40 for its last 2 s: 6 of its 8 s in band
        st = analysis.rate_stats({("h2", 17): [(50.5, 50.0), (55.5, 25.0), (65.5, 50.0)],
                             ("h3", 18): [(55.5, 25.0), (63.0, 40.0)]}, segs, ["h2", "h3"], 50, 50.0)
        self.assertEqual(st["senders"]["h2"], {"median_mbps": 25.0, "in_band_pct": 100.0})
        self.assertEqual(st["senders"]["h3"]["in_band_pct"], 75.0)
        self.assertEqual(st["seconds"], 14.0)

    def test_plots_in_a_directory_with_a_quote_and_a_space(self):
        self.assertEqual(plots.gp_str("it's"), "'it''s'")
        with self.assertRaises(ValueError):
            plots.gp_str("a\nsystem 'touch x'")
        with tempfile.TemporaryDirectory() as raw, tempfile.TemporaryDirectory() as top:
            out = os.path.join(top, "it's a 'dir'")
            sc = scenario_of("senders = 2\nrate = 50mbit\nmodes = pfc\n")
            sc_path = os.path.join(raw, "scenario.json")
            with open(sc_path, "w", encoding="utf-8") as f:
                json.dump(sc, f)
            self.make_mode(raw, "pfc", 0, 30, 10, [100.0] * 10)
            rep = quiet_report(raw, sc_path, out)
            for name in rep["plots"]:
                self.assertGreater(os.path.getsize(os.path.join(out, name)), 0, name)
            self.assertEqual(sorted(os.listdir(top)), ["it's a 'dir'"])

    def test_percentile_is_nearest_rank(self):
        v = list(range(1, 101))
        self.assertEqual(shared.percentile(v, 50), 50)
        self.assertEqual(shared.percentile(v, 99), 99)
        self.assertEqual(shared.percentile(v, 99.9), 100)
        self.assertIsNone(shared.percentile([], 50))


class Cli(unittest.TestCase):
    def run_lab(self, *args):
        return subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                            "lab.py"), *args],
                              capture_output=True, text=True, check=False)

    def test_scenario_arguments(self):
        here = os.path.dirname(os.path.abspath(__file__))
        with tempfile.TemporaryDirectory() as d:
            sh, js = os.path.join(d, "s.sh"), os.path.join(d, "s.json")
            r = self.run_lab("scenario", os.path.join(here, "incast.conf"), sh, js, "senders=2", "probe=off")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(js, encoding="utf-8") as f:
                self.assertEqual(json.load(f)["senders"], 2)
            # '' is the defaults
            self.assertEqual(self.run_lab("scenario", "", sh, js).returncode, 0)
            # a missing argument is a usage error, and nothing is written
            os.unlink(sh)
            r = self.run_lab("scenario", os.path.join(here, "incast.conf"), sh)
            self.assertEqual(r.returncode, 2)
            self.assertIn("OUT.json", r.stderr)
            self.assertNotIn("Traceback", r.stderr)
            self.assertFalse(os.path.exists(sh))
            r = self.run_lab("scenario", "", sh, js, "senders=9")
            self.assertEqual(r.returncode, 2)
            self.assertIn("lab: override: '9' is not an integer in 1..8", r.stderr)

    def test_usage_errors(self):
        for args in ((), ("nope",), ("report", "raw", "sc.json"), ("spread", "out.md")):
            with self.subTest(args=args):
                r = self.run_lab(*args)
                self.assertEqual(r.returncode, 2)
                self.assertIn("usage: lab.py", r.stderr)
                self.assertNotIn("Traceback", r.stderr)
        self.assertEqual(self.run_lab("report", "/nonexistent", "/nonexistent.json", "/tmp").returncode, 1)


class Package(unittest.TestCase):
    """rxecc_lab's modules: each imports alone, and their imports of each
    other form no circle; every topology has its registered scenario."""
    HERE = os.path.dirname(os.path.abspath(__file__))

    def modules(self):
        top = os.path.join(self.HERE, "rxecc_lab")
        for d, _, files in os.walk(top):
            for f in sorted(files):
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(d, f), self.HERE)[:-3].replace(os.sep, ".")
                    yield rel.removesuffix(".__init__"), os.path.join(d, f)

    def graph(self):
        """{module: the package's modules it imports}."""
        import ast  # pylint: disable=import-outside-toplevel
        mods = dict(self.modules())
        edges = {}
        for name, path in mods.items():
            pkg = name if path.endswith("__init__.py") else name.rsplit(".", 1)[0]
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
            out = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    base = pkg.split(".")
                    base = base[:len(base) - node.level + 1] if node.level else []
                    target = ".".join(base + ([node.module] if node.module else []))
                    for a in node.names:
                        sub = f"{target}.{a.name}"
                        out.add(sub if sub in mods else target)
                elif isinstance(node, ast.Import):
                    out.update(a.name for a in node.names)
            edges[name] = {m for m in out if m in mods and m != name}
        return edges

    def test_each_module_imports_alone(self):
        for name, _ in self.modules():
            with self.subTest(module=name):
                r = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=self.HERE,
                                   capture_output=True, text=True, check=False)
                self.assertEqual(r.returncode, 0, r.stderr)

    def test_no_import_circle(self):
        edges = self.graph()
        self.assertIn("rxecc_lab.capture", edges["rxecc_lab.scenarios.incast"])
        state = {}

        def visit(m, path):
            if state.get(m) == "open":
                self.fail("import circle: " + " -> ".join(path[path.index(m):] + [m]))
            if state.get(m) == "done":
                return
            state[m] = "open"
            for n in sorted(edges[m]):
                visit(n, path + [m])
            state[m] = "done"
        for m in sorted(edges):
            visit(m, [])
        # the generic parts know no scenario: only the command line imports them
        for m, out in edges.items():
            if not m.startswith("rxecc_lab.scenarios") and m != "rxecc_lab.cli":
                self.assertFalse([n for n in out if n.startswith("rxecc_lab.scenarios")], m)

    def test_every_topology_has_its_scenario(self):
        self.assertEqual(sorted(registry.SCENARIOS), sorted(scenario.TOPOLOGIES))
        registry.require(scenario.TOPOLOGIES, scenarios.MODULES)
        self.assertIs(registry.lookup("victim"), pathology)
        with self.assertRaises(ValueError):
            registry.lookup("mesh")
        with self.assertRaises(RuntimeError):
            registry.require(("incast", "mesh"), scenarios.MODULES)


if __name__ == "__main__":
    unittest.main()
