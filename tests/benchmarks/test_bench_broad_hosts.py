"""bench_broad.py --etc-hosts: the helpers that add one hosts line per host and take
exactly those out again, tried on a temporary file (never on /etc/hosts)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_broad import add_hosts_lines, hosts_lines, remove_hosts_lines  # noqa: E402

ORIGINAL = ("127.0.0.1\tlocalhost\n"
            "::1\tlocalhost ip6-localhost ip6-loopback\n"
            "# a comment, and a line naming a bench host by hand:\n"
            "10.0.0.5 site1.r1.bench.test\n"
            "172.17.0.2\tabcdef123456")  # no newline at the end


def test_added_lines_are_removed_and_the_rest_kept_byte_for_byte(tmp_path):
    hosts, backup = tmp_path / "hosts", tmp_path / "hosts.bak"
    hosts.write_text(ORIGINAL)
    lines = hosts_lines([f"site{i}.r1.bench.test" for i in range(1000)], "r1")
    add_hosts_lines(hosts, lines, backup=backup)
    assert backup.read_text() == ORIGINAL
    text = hosts.read_text()
    assert text.startswith(ORIGINAL + "\n")  # a newline before the first added line
    assert text.splitlines()[-1000:] == lines
    assert lines[1] == "127.0.0.1 site1.r1.bench.test  # crawlfw-bench-broad r1"
    assert remove_hosts_lines(hosts, lines) == 1000
    # the hand-written line for the same name stays, and so does everything else
    assert hosts.read_text() == ORIGINAL + "\n"
    assert remove_hosts_lines(hosts, lines) == 0  # nothing left to remove: unchanged
    assert hosts.read_text() == ORIGINAL + "\n"


def test_removal_keeps_lines_written_meanwhile(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n")
    lines = hosts_lines(["a.r2.bench.test", "b.r2.bench.test"], "r2")
    add_hosts_lines(hosts, lines)
    with open(hosts, "a") as f:
        f.write("10.1.1.1 added-by-someone-else\n")
    assert remove_hosts_lines(hosts, lines) == 2
    assert hosts.read_text() == "127.0.0.1 localhost\n10.1.1.1 added-by-someone-else\n"


def test_a_line_already_present_is_refused_before_writing(tmp_path):
    hosts, backup = tmp_path / "hosts", tmp_path / "hosts.bak"
    lines = hosts_lines(["a.r3.bench.test"], "r3")
    hosts.write_text("127.0.0.1 localhost\n" + lines[0] + "\n")
    before = hosts.read_text()
    with pytest.raises(ValueError, match="already holds the line"):
        add_hosts_lines(hosts, lines, backup=backup)
    assert hosts.read_text() == before and not backup.exists()


def test_the_file_is_written_in_place(tmp_path):
    """/etc/hosts is often a bind mount: a rename over it fails, so the same inode is
    written."""
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n")
    inode = hosts.stat().st_ino
    lines = hosts_lines(["a.r4.bench.test"], "r4")
    add_hosts_lines(hosts, lines)
    remove_hosts_lines(hosts, lines)
    assert hosts.stat().st_ino == inode
