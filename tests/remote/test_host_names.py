"""One host check for --hosts, --nodes and the config file's [hosts]; HOST:PORT; nodes checked
over ssh before a job is queued (issue 28, cases 7 and 13)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench import hostnames
from zbench.cli import app
from zbench.contract.config import RunConfig
from zbench.contract.options import UsageError
from zbench.jobs import nodes, remote
from zbench.settings import SettingsError, load_config

EVIL = "-oProxyCommand=touch /tmp/zbench-pwned"


@pytest.mark.parametrize(
    "table",
    [
        f'[hosts]\ngpu1 = "{EVIL}"\n',
        f'[hosts]\ngpu1 = {{ ssh = "{EVIL}" }}\n',
        '[hosts]\n"-oProxyCommand=x" = {}\n',
        '[hosts]\ngpu1 = "a b"\n',
    ],
)
def test_a_hosts_table_entry_that_ssh_would_read_as_an_option_is_refused(
    tmp_path: Path, table: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(table)
    with pytest.raises(SettingsError, match=r"\[hosts\] .*is not a host name"):
        load_config(path)


def test_hosts_all_with_a_bad_table_exits_2_before_any_ssh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.toml").write_text(f'[hosts]\ngpu1 = "{EVIL}"\n')
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "no-ssh-here"))  # an ssh call would fail otherwise
    out = CliRunner().invoke(app, ["--hosts", "all"])
    assert out.exit_code == 2 and "is not a host name" in out.output


@pytest.mark.parametrize(
    "bad", [EVIL, "-p", "gpu1:0", "gpu1:99999", "a b", "", "'gpu1'", "gpu1/2", "gpu1;ls", "a\x00"]
)
def test_the_one_check_refuses_what_ssh_would_misread(bad: str) -> None:
    with pytest.raises(hostnames.HostError):
        hostnames.split_host(bad)


def test_a_port_without_a_host_is_said_as_such() -> None:
    with pytest.raises(hostnames.HostError, match="':22' has no host name before its port"):
        hostnames.split_host(":22")
    with pytest.raises(
        hostnames.HostError, match="'gpu1:x': HOST:PORT wants a port from 1 to 65535"
    ):
        hostnames.split_host("gpu1:x")


def test_host_port_becomes_ssh_p() -> None:
    argv = remote.ssh_base("me@gpu1:2222")
    assert argv[-3:] == ["-p", "2222", "me@gpu1"]
    assert remote.ssh_base("gpu1")[-1] == "gpu1" and "-p" not in remote.ssh_base("gpu1")
    assert hostnames.split_host("::1") == ("::1", None)  # an IPv6 address is not HOST:PORT


def test_nodes_take_host_port_gpus() -> None:
    cfg = nodes.parse_nodes("gpu1:2222:0+1,gpu2:2+3", RunConfig("resnet50", gpus=2))
    assert [(n.host, n.gpu_ids) for n in cfg.nodes] == [("gpu1:2222", (0, 1)), ("gpu2", (2, 3))]
    [first, _] = nodes.plan(cfg, "run-1", environ={"ZBENCH_RDZV_PORT": "29400"})
    assert first.via == "ssh" and first.argv[first.argv.index("-p") + 1] == "2222"
    cfg = nodes.parse_nodes("gpu1:2222:", RunConfig("resnet50"))
    assert cfg.nodes[0].host == "gpu1:2222" and cfg.nodes[0].gpu_ids is None
    with pytest.raises(UsageError, match="is not a host name"):
        nodes.parse_nodes(f"gpu1,{EVIL}", RunConfig("resnet50"))


def test_fleet_hosts_take_host_port(monkeypatch: pytest.MonkeyPatch) -> None:
    from zbench.fleet.gather import parse_hosts

    assert parse_hosts("gpu1:2222,gpu2") == ["gpu1:2222", "gpu2"]
