"""./nanotick doctor against made-up /sys and /proc trees (a tuned machine,
this kind of VM, broken and hostile files) and against this machine; the
configured pinning against the CPUs; and the demo's layout choice."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

from tools.doctor import layout, machine
from tools.doctor.roles import RolesUnavailable, parse_description, roles_of
from tools.doctor.__main__ import main
from tools.doctor.findings import machine_findings

ROOT = pathlib.Path(__file__).resolve().parents[2]


# The runner roles as the built binaries describe them (the doctor keeps no copy).
EX, TR = roles_of("exchange"), roles_of("trader")


def write_tree(root: pathlib.Path, files: dict) -> pathlib.Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def tuned(cpus: int = 8) -> dict:
    files = {
        "proc/cmdline": "isolcpus=2-7 nohz_full=2-7 rcu_nocbs=2-7 intel_idle.max_cstate=1",
        "sys/devices/system/cpu/online": f"0-{cpus - 1}\n",
        "sys/devices/system/cpu/isolated": "2-7\n",
        "sys/devices/system/cpu/nohz_full": "2-7\n",
        "sys/devices/system/cpu/smt/active": "0\n",
        "sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never\n",
        "sys/kernel/mm/transparent_hugepage/defrag": "always defer defer+madvise [madvise] never\n",
        "sys/devices/system/node/node0/cpulist": f"0-{cpus - 1}\n",
        "sys/devices/system/clocksource/clocksource0/current_clocksource": "tsc\n",
        "sys/devices/system/clocksource/clocksource0/available_clocksource": "tsc hpet acpi_pm\n",
        "proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc rdtscp\n",
        "proc/irq/default_smp_affinity": "03\n",
        "proc/irq/24/smp_affinity_list": "0-1\n",
        "proc/irq/25/smp_affinity_list": "1\n",
    }
    for c in range(cpus):
        files[f"sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list"] = f"{c}\n"
        files[f"sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"] = "performance\n"
        files[f"sys/devices/system/cpu/cpu{c}/cpuidle/state0/name"] = "POLL\n"
        files[f"sys/devices/system/cpu/cpu{c}/cpuidle/state0/latency"] = "0\n"
        files[f"sys/devices/system/cpu/cpu{c}/cpuidle/state1/name"] = "C6\n"
        files[f"sys/devices/system/cpu/cpu{c}/cpuidle/state1/latency"] = "133\n"
        files[f"sys/devices/system/cpu/cpu{c}/cpuidle/state1/disable"] = "1\n"
    return files


def statuses(root: pathlib.Path) -> dict:
    return {f.topic: f for f in machine_findings(machine.Machine(root).facts())}


def test_cpulists_and_masks_parse_and_garbage_does_not():
    assert machine.parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert machine.parse_cpulist("") == []
    for bad in ("0-", "a", "3-1", "0-99999", "1,,2", "-1"):
        assert machine.parse_cpulist(bad) is None, bad
    assert machine.parse_cpumask("00000000,00000005") == [0, 2]
    assert machine.parse_cpumask("ff") == list(range(8))
    for bad in ("", "xyz", "123456789", ",", "0x3"):
        assert machine.parse_cpumask(bad) is None, bad


def test_a_tuned_machine_is_ok_on_every_topic(tmp_path):
    got = statuses(write_tree(tmp_path, tuned()))
    assert {t: f.status for t, f in got.items()} == {
        "virtualisation": "ok", "cores": "ok", "SMT (hyper-threading)": "ok", "isolated cores": "ok",
        "tickless cores (nohz_full)": "ok", "IRQ affinity": "ok", "CPU frequency governor": "ok", "C-states": "ok",
        "transparent huge pages": "ok", "NUMA": "ok", "clock source and TSC": "ok"}


def test_each_untuned_setting_is_named_with_what_to_change(tmp_path):
    files = tuned()
    files["sys/devices/system/cpu/isolated"] = "2-7\n"
    files["sys/devices/system/cpu/nohz_full"] = "2-5\n"                   # isolated but ticking: 6-7
    files["sys/devices/system/cpu/smt/active"] = "1\n"
    files["sys/devices/system/cpu/cpu2/topology/thread_siblings_list"] = "2,6\n"
    files["sys/devices/system/cpu/cpu3/cpufreq/scaling_governor"] = "powersave\n"
    files["sys/devices/system/cpu/cpu1/cpuidle/state1/disable"] = "0\n"  # C6 on
    files["sys/kernel/mm/transparent_hugepage/enabled"] = "[always] madvise never\n"
    files["sys/devices/system/node/node1/cpulist"] = "4-7\n"
    files["sys/devices/system/clocksource/clocksource0/current_clocksource"] = "hpet\n"
    files["proc/irq/30/smp_affinity_list"] = "0-7\n"                      # may hit the isolated cores
    got = statuses(write_tree(tmp_path, files))
    for topic, words in {"SMT (hyper-threading)": "2,6", "tickless cores (nohz_full)": "6-7",
                         "CPU frequency governor": "powersave", "C-states": "C6", "transparent huge pages": "always",
                         "NUMA": "2 nodes", "clock source and TSC": "hpet", "IRQ affinity": "30"}.items():
        assert got[topic].status == "change", (topic, got[topic])
        assert words in got[topic].found, (topic, got[topic].found)
        assert got[topic].advice, topic


def test_a_bare_or_hostile_tree_gives_findings_not_exceptions(tmp_path):
    # Nothing at all.
    assert {f.status for f in statuses(tmp_path).values()} <= {"info", "change"}
    # Garbage in every file the doctor reads.
    files = {rel: "\x00\xff garbage [[[ -1-9999999\n" for rel in tuned()}
    files["sys/devices/system/cpu/cpu99999999/topology/thread_siblings_list"] = "0"
    files["proc/irq/notanumber/smp_affinity_list"] = "0"
    got = statuses(write_tree(tmp_path / "g", files))
    assert got["cores"].status == "info"
    assert got["clock source and TSC"].status == "change"  # no invariant-TSC flags read


def test_the_configured_pinning_must_fit_the_machine(tmp_path):
    facts = machine.Machine(write_tree(tmp_path, tuned(4))).facts()
    ok = layout.runners_of("exchange", EX, {"threads": {"mode": "dedicated", "idle": "spin",
                                                                 "cpus": [0, 1, 2, 3]}})
    assert [r.role for r in ok][:4] == ["gateway", "sequencer", "engine", "md"]
    assert [f.status for f in layout.pinning_findings(ok, facts)] == ["change"] * 2  # 0 and 1 are not isolated

    beyond = layout.runners_of("exchange", EX, {"threads": {"critical": {"cpu": 9, "idle": "spin"}}})
    shared = layout.runners_of("trader a", TR, {"threads": {"idle": "spin", "cpus": [2]}}) + \
        layout.runners_of("trader b", TR, {"threads": {"engine": {"cpu": 2, "idle": "spin"}}})
    crowd = sum((layout.runners_of(f"trader {i}", TR, {"threads": {"idle": "spin"}}) for i in range(5)), [])
    for runners, words in ((beyond, "CPU 9, which this machine does not have"),
                           (shared, "spinning runners share CPU 2"), (crowd, "5 spinning runners on 4 CPUs")):
        found = layout.pinning_findings(runners, facts)
        assert any(f.status == "problem" and words in f.found for f in found), found
    # An unknown mode or malformed tables: no runners, no crash (the binary refuses the config itself).
    assert layout.runners_of("x", EX, {"threads": {"mode": "sideways"}}) == []
    assert layout.runners_of("x", EX, {"threads": "spin"}) == []
    assert [r.cpu for r in layout.runners_of("x", TR, {"threads": {"cpus": "0", "engine": {"cpu": True}}})] \
        == [None]


def test_the_demo_layout_follows_the_cpus(tmp_path):
    two = machine.Machine(write_tree(tmp_path / "two", {"sys/devices/system/cpu/online": "0-1"})).facts()
    assert layout.choose_layout(two, 4, EX, TR).name == "compact"
    with pytest.raises(ValueError, match="pinned layout needs 5 CPUs"):
        layout.choose_layout(two, 4, EX, TR, "pinned")
    six = machine.Machine(write_tree(tmp_path / "six", {"sys/devices/system/cpu/online": "0-5"})).facts()
    pinned = layout.choose_layout(six, 4, EX, TR)
    assert pinned.name == "pinned"
    assert pinned.exchange == {"mode": "compact", "idle": "spin", "cpus": [1]}
    assert [t["cpus"] for t in pinned.traders] == [[2], [3], [4], [5]]
    big = machine.Machine(write_tree(tmp_path / "big", tuned(16) | {"sys/devices/system/cpu/isolated": "4-15"})).facts()
    dedicated = layout.choose_layout(big, 4, EX, TR)
    assert dedicated.name == "dedicated" and dedicated.exchange["cpus"] == [4, 5, 6, 7]
    cpus = dedicated.exchange["cpus"] + [c for t in dedicated.traders for c in t["cpus"]]
    assert len(set(cpus)) == len(cpus) and set(cpus) <= set(range(4, 16)), "each on an isolated CPU of its own"
    # The chosen layout's own runners fit the machine it was chosen for.
    runners = layout.runners_of("exchange", EX, {"threads": dedicated.exchange})
    for i, t in enumerate(dedicated.traders):
        runners += layout.runners_of(f"trader {i}", TR, {"threads": t})
    assert not [f for f in layout.pinning_findings(runners, big) if f.status != "ok"]


def test_on_this_machine_it_reports_every_topic_and_the_layout(capsys):
    assert main(["--json"]) == 0  # the repository's configs pin nothing: they fit any machine
    out = json.loads(capsys.readouterr().out)
    topics = [f["topic"] for f in out["findings"]]
    assert topics[:11] == ["virtualisation", "cores", "SMT (hyper-threading)", "isolated cores",
                           "tickless cores (nohz_full)", "IRQ affinity", "CPU frequency governor", "C-states",
                           "transparent huge pages", "NUMA", "clock source and TSC"]
    assert topics[11:] == ["configured pinning"]
    assert out["demo_layout"]["name"] in layout.LAYOUTS


def test_the_command_line_refuses_what_it_cannot_read(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[threads\nmode=")
    for args, words in ((["--config", str(tmp_path / "missing.toml")], "does not exist"),
                        (["--config", str(bad)], "cannot be read")):
        done = subprocess.run([sys.executable, "-m", "tools.doctor", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 2 and words in done.stderr, done.stderr
    pinned_away = tmp_path / "ex.toml"
    pinned_away.write_text('[threads]\nmode = "compact"\nidle = "spin"\ncpus = [4000]\n')
    done = subprocess.run([sys.executable, "-m", "tools.doctor", "--config", str(pinned_away)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "CPU 4000, which this machine does not have" in done.stdout, done.stdout


def test_roles_come_from_the_binaries_descriptions():
    assert EX.runners["dedicated"][:4] == ["gateway", "sequencer", "engine", "md"] and "aux" not in EX.critical
    assert TR.runners["compact"] == ["engine"]
    bad = ['no json', '{"runners": {}}', '{"runners": {"compact": "engine"}, "critical": []}',
           '{"runners": {"compact": ["engine"]}, "critical": [1]}']
    for text in bad:
        with pytest.raises(RolesUnavailable, match="nanotick-x --describe"):
            parse_description(text, "nanotick-x")
    with pytest.raises(RolesUnavailable, match="is missing"):
        roles_of("exchange", "/nonexistent-build")


def test_without_the_binaries_the_pinning_is_not_checked_and_it_says_so(capsys, tmp_path):
    assert main(["--json", "--build-dir", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    pinning = [f for f in out["findings"] if f["topic"] == "configured pinning"]
    assert [f["status"] for f in pinning] == ["info"] and "not checked" in pinning[0]["found"]
