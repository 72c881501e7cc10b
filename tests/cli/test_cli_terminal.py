"""The terminal habits, seen as a person sees them: through a pseudo-terminal.

Colour by the usual rules (a terminal only, NO_COLOR, FORCE_COLOR, TERM=dumb, --no-color) for
plan, drift, resolve and the plan apply shows; the status line (phases with counts, a bar that
moves per response) on a terminal only; -v's one line per phase, also in a pipe; -q's nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kquota.cli import waiting
from kquota.devbroker.launcher import BrokerInfo
from kquota.runtime import progress
from repo_root import ROOT
from terminal import on_terminal

EXAMPLE = ROOT / "examples" / "gitops-repo"
SNAPSHOT = EXAMPLE / "snapshot-staging.json"
STAGING = EXAMPLE / "quotas" / "staging"
GREEN, YELLOW, RED = "\x1b[32m", "\x1b[33m", "\x1b[31m"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["TERM"] = "xterm-256color"
    env.update(extra)
    return env


def _on_terminal(
    argv: list[str], *, env: dict[str, str], cwd: Path = ROOT, stderr_tty: bool = True
) -> tuple[int, str, str]:
    """kquota ARGV with standard output (and standard error, if ``stderr_tty``) on a
    pseudo-terminal; returns the exit code, the terminal's bytes and a piped stderr."""
    cmd = [sys.executable, "-m", "kquota", *argv]
    return on_terminal(cmd, cwd=cwd, env=env, stderr_tty=stderr_tty)


def _piped(argv: list[str], *, env: dict[str, str], cwd: Path = ROOT) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "kquota", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return proc.returncode, proc.stdout, proc.stderr


PLAN = ["plan", "--snapshot", str(SNAPSHOT), str(STAGING)]


def test_plan_is_coloured_on_a_terminal() -> None:
    code, text, _ = _on_terminal(PLAN, env=_env())
    assert code == 0
    assert f"{YELLOW}~ {{user=alice, client-id=<default>}}" in text
    assert f"{GREEN}    + request_percentage: 200" in text


@pytest.mark.parametrize(
    ("flags", "env"),
    [
        ([], {"NO_COLOR": "1"}),
        ([], {"TERM": "dumb"}),
        (["--no-color"], {}),
        (["--no-color"], {"FORCE_COLOR": "1"}),  # the flag wins
        ([], {"NO_COLOR": "1", "FORCE_COLOR": "1"}),  # NO_COLOR wins
    ],
    ids=["NO_COLOR", "TERM=dumb", "--no-color", "--no-color-over-FORCE_COLOR", "NO_COLOR-wins"],
)
def test_no_colour_on_a_terminal_when_asked(flags: list[str], env: dict[str, str]) -> None:
    code, text, _ = _on_terminal([*flags, *PLAN], env=_env(**env))
    assert code == 0 and "~ {user=alice" in text
    assert "\x1b[3" not in text


def test_no_colour_in_a_pipe_unless_forced() -> None:
    code, out, _ = _piped(PLAN, env=_env())
    assert code == 0 and "\x1b[" not in out
    code, out, _ = _piped(PLAN, env=_env(FORCE_COLOR="1"))
    assert code == 0 and f"{YELLOW}~ {{user=alice" in out
    code, out, _ = _piped(PLAN, env=_env(FORCE_COLOR="0"))
    assert code == 0 and "\x1b[" not in out


def test_drift_and_resolve_are_coloured_on_a_terminal() -> None:
    drift = ["drift", "--snapshot", str(SNAPSHOT), "--prune", str(STAGING)]
    code, text, _ = _on_terminal(drift, env=_env())
    assert code == 2
    assert "\x1b[33m\x1b[1mcluster: drift in 3 entities" in text
    assert f"{YELLOW}    value_changed: producer_byte_rate" in text
    assert f"{RED}    entity_undeclared:" in text
    code, out, _ = _piped(drift, env=_env())
    assert code == 2 and "\x1b[" not in out

    resolve = ["resolve", "--names", "user=alice,client-id=x", "--snapshot", str(SNAPSHOT)]
    code, text, _ = _on_terminal(resolve, env=_env())
    assert code == 0
    assert "\x1b[1mproducer_byte_rate=524288 " in text
    assert "\x1b[2mrequest_percentage=unlimited" in text


def test_phases_off_a_terminal_only_with_verbose_one_line_each() -> None:
    code, out, err = _piped(PLAN, env=_env())
    assert code == 0 and err == ""  # nothing of the status line in a pipe
    code, out, err = _piped(["-v", *PLAN], env=_env())
    assert code == 0 and "\r" not in err and "\x1b" not in err
    lines = err.splitlines()
    assert [line.split(":")[0] for line in lines] == ["load", "snapshot", "kquota"]
    assert lines[0].startswith("load: 3 entities in ") and lines[0].endswith(" s")
    assert lines[1].startswith("snapshot: 4 entities in ")
    assert lines[2].startswith("kquota: finished in ")
    code, _, err = _piped(["-q", *PLAN], env=_env())
    assert code == 0 and err == ""
    code, _, err = _piped(["-q", "-v", *PLAN], env=_env())
    assert code == 1 and "exclude each other" in err


def test_root_flags_are_taken_after_the_commands_name_too() -> None:
    """``kquota plan --no-color``, as Terraform users type it: the same as before the name."""
    code, text, _ = _on_terminal([*PLAN, "--no-color"], env=_env())
    assert code == 0 and "{user=alice, client-id=<default>}" in text and "\x1b[" not in text
    code, _, err = _piped([*PLAN, "-v"], env=_env())
    assert code == 0
    assert [line.split(":")[0] for line in err.splitlines()] == ["load", "snapshot", "kquota"]
    code, _, err = _piped(["plan", "-vv", "--snapshot", str(SNAPSHOT), str(STAGING)], env=_env())
    assert code == 0 and err.splitlines()[-1].startswith("kquota: finished in ")
    code, _, err = _piped(["-v", *PLAN, "-q"], env=_env())
    assert code == 1 and "exclude each other" in err
    code, out, err = _piped(["dev-broker", "status", "--dir", "nowhere", "-q"], env=_env())
    assert code == 3 and "not running" in out


def test_the_status_line_draws_a_bar_per_response() -> None:
    """A frame of the status line: the phase, its bar from the responses counted so far, and
    the wait once a request has gone unanswered for a second."""
    step = progress.Phase("commit", total=20_000, unit="entities")
    assert waiting.phase_line(step).startswith("commit [....................] 0/20000 entities")
    step.done = 5_000  # one response of 5,000 keys
    assert waiting.phase_line(step).startswith("commit [#####...............] 5000/20000")
    step.done = 25_000  # verification may count an entity twice: never past the end
    assert "[####################] 20000/20000" in waiting.phase_line(step)
    assert waiting.phase_line(progress.Phase("describe", None, "entities")).startswith(
        "describe... "
    )


def test_phases_are_reported_only_to_an_installed_reporter() -> None:
    seen: list[str] = []

    class Recorder:
        def started(self, phase: progress.Phase) -> None:
            seen.append(f"start {phase.name}")

        def ended(self, phase: progress.Phase) -> None:
            seen.append(phase.summary().split(" in ")[0])

    with progress.phase("load") as step:  # no reporter: nothing, no error
        progress.advance(3)
    assert step.done == 0 and seen == []
    with progress.reporting(Recorder()):
        with progress.phase("commit", total=10) as step:
            progress.advance(4)
            with progress.phase("describe"):  # inside another: counted there, not shown
                progress.advance(6)
        assert step.done == 10
    assert seen == ["start commit", "commit: 10 entities"]


@pytest.mark.integration
def test_apply_on_a_terminal_colours_its_plan_and_shows_its_phases(
    tmp_path: Path, kafka_broker: BrokerInfo
) -> None:
    quotas = tmp_path / "quotas"
    quotas.mkdir()
    prefix = f"term-{os.getpid()}-"

    def write(base: int) -> None:
        entries = "".join(
            f"  - match: {{user: {prefix}{i}}}\n    set: {{producer_byte_rate: {base + i}}}\n"
            for i in range(300)
        )
        (quotas / "q.yaml").write_text(
            f"apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n{entries}"
        )

    write(1024)
    argv = ["apply", "--bootstrap-server", kafka_broker.bootstrap_servers, "--auto-approve"]
    code, text, _ = _on_terminal(["-v", *argv, "--no-lease"], env=_env(), cwd=tmp_path)
    assert code == 0, text[-2000:]
    assert f"{GREEN}+ {{user={prefix}0}}" in text  # the plan apply shows, coloured as plan's
    for line in ("load: 300 entities in ", "connect: 1 brokers in ", "describe: ",
                 "validate-only: 300 entities in ", "commit: 300 entities in ",
                 "verify: 300 entities in "):  # fmt: skip
        assert line in text, (line, text[-2000:])
    # In a pipe: the plan and the report, no colour, no status line, no phase lines.
    write(4096)
    code, out, err = _piped([*argv, "--no-lease"], env=_env(), cwd=tmp_path)
    assert code == 0, err
    assert "\x1b[" not in out + err and "\r" not in err
    assert "commit: " not in err and "validate-only" not in err
    assert "committed 300 of 300 entities" in out


@pytest.mark.integration
def test_apply_asks_for_the_clusters_name_before_removing(
    kafka_broker: BrokerInfo, tmp_path: Path
) -> None:
    """A small plan that only sets is confirmed with y; one that removes a quota value (or
    alters more than 10 entities) wants the cluster's name typed, and y applies
    nothing."""
    from kquota.devbroker.tools import kafka_configs

    user = f"typed-{os.getpid()}"
    (tmp_path / "kquota.yaml").write_text(
        f"clusters:\n  dev:\n    kafka: {{bootstrap.servers: '{kafka_broker.bootstrap_servers}'}}\n"
    )
    quotas = tmp_path / "quotas"
    quotas.mkdir()

    def declare(keys: str) -> None:
        (quotas / "q.yaml").write_text(
            "apiVersion: kquota/v1\nkind: ClientQuotas\n"
            f"quotas: [{{match: {{user: {user}}}, set: {{{keys}}}}}]\n"
        )

    def on_tty(typed: str) -> tuple[int, str]:
        cmd = [sys.executable, "-m", "kquota", "apply", "--no-lease", "--no-color"]
        code, text, _ = on_terminal(cmd, cwd=tmp_path, env=_env(), typed=typed)
        return code, text

    def described() -> str:
        return kafka_configs(kafka_broker, "--describe", "--user", user).stdout

    declare("request_percentage: 5, producer_byte_rate: 1000")
    code, text = on_tty("y\n")
    assert code == 0, text
    assert "Apply these changes to 1 entities? [y/N]" in text
    declare("request_percentage: 5")
    code, text = on_tty("y\n")
    assert code == 1, text
    assert "Apply these changes to 1 entities, removing 1 quota values? Type dev to apply" in text
    assert "not applied: the answer was not dev" in text
    assert "producer_byte_rate=1000" in described()  # y removed nothing
    code, text = on_tty("dev\n")
    assert code == 0 and "committed 1 of 1 entities" in text, text
    assert "producer_byte_rate" not in described()


@pytest.mark.integration
def test_the_bar_moves_with_every_response(
    kafka_broker: BrokerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AlterClientQuotas requests are pipelined: each response advances the bar by what it
    answered, not the whole batch at the end."""
    from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
    from kquota.model import Entity

    counted: list[int] = []
    monkeypatch.setattr(progress, "advance", counted.append)
    alterations = [
        QuotaAlteration(
            Entity.of({"user": f"bar-{os.getpid()}-{i}"}), (QuotaOp.set("producer_byte_rate", 1e3),)
        )
        for i in range(50)
    ]
    with WireAdmin(kafka_broker.bootstrap_servers, chunk_keys=10) as admin:
        results = admin.alter(alterations, validate_only=True)
    assert all(r.ok for r in results)
    assert counted == [10, 10, 10, 10, 10]


@pytest.mark.integration
def test_verify_counts_each_entity_once_and_says_what_it_waits_for(
    kafka_broker: BrokerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large apply's verification first waits for the last entity written: the status
    line names that wait (its seconds move while the bar is still at 0), and the probe is not
    counted, so the bar ends at the number of entities, not one past it."""
    from kquota.apply import applier
    from kquota.kafka.admin import WireAdmin
    from kquota.model import Entity
    from kquota.plan.planner import plan as make_plan
    from kquota.policy import Policy
    from kquota.runtime import deadline

    counted: list[tuple[str, int]] = []
    waits: list[list[str]] = []

    real_advance = progress.advance

    def advance(n: int = 1) -> None:
        step = progress.current()
        counted.append((step.name if step is not None else "", n))
        real_advance(n)

    poll = applier._poll

    def recording_poll(*args: object, **kwargs: object) -> None:
        waits.append([what for _, what, _ in deadline.open_waits()])
        poll(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(progress, "advance", advance)
    monkeypatch.setattr(applier, "_poll", recording_poll)
    n = applier.EXACT_READ_MAX + 10
    desired = {
        Entity.of({"user": f"verify-{os.getpid()}-{i}"}): {"producer_byte_rate": 1e3 + i}
        for i in range(n)
    }
    ended: list[progress.Phase] = []

    class Reporter:
        def started(self, phase: progress.Phase) -> None:
            pass

        def ended(self, phase: progress.Phase) -> None:
            ended.append(phase)

    with WireAdmin(kafka_broker.bootstrap_servers) as admin, progress.reporting(Reporter()):
        report = applier.apply_plan(admin, make_plan(desired, {}, Policy()), poll_interval=0.05)
    assert report.ok and len(report.committed) == n
    assert sum(k for name, k in counted if name == "verify") == n
    assert [p.done for p in ended if p.name == "verify"] == [n]
    assert applier.LAST_WRITE_SHOWS in waits[0]  # the probe, under its named wait
    assert applier.LAST_WRITE_SHOWS not in waits[-1]  # the describe-all that counts


def test_verbose_shows_kquotas_log_lines_such_as_retries(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """-v routes kquota's own log lines (a retry, a broker skipped) to stderr; without it
    they stay silent, and -vv adds debug lines."""
    import logging

    from kquota.cli import console

    log = logging.getLogger("kquota.kafka.admin")
    try:
        console.configure(0, False, False)
        log.info("AlterClientQuotas failed (timeout); retrying in 0.10s")
        assert capsys.readouterr().err == ""
        console.configure(1, False, False)
        log.info("AlterClientQuotas failed (timeout); retrying in 0.10s")
        log.debug("authenticated: alice")
        assert capsys.readouterr().err == (
            "kquota: AlterClientQuotas failed (timeout); retrying in 0.10s\n"
        )
        console.configure(2, False, False)
        log.debug("authenticated: alice")
        assert capsys.readouterr().err == "kquota: authenticated: alice\n"
    finally:
        console.configure(0, False, False)
        logging.getLogger("kquota").setLevel(logging.NOTSET)


def test_the_verify_line_moves_before_anything_is_counted() -> None:
    """Verification counts an entity only once every broker's answer shows it: until then
    its bar is a block going to and fro, beside the entities the answers brought so far."""
    step = progress.Phase("verify", total=30, unit="entities", reads=True)
    frames = [waiting.phase_line(step, n) for n in range(40)]
    assert frames[0].startswith("verify [====................] 0/30 entities, 0 read ")
    assert frames[16].startswith("verify [................====] 0/30 entities, 0 read ")
    assert frames[17].startswith("verify [...............====.] 0/30 ")  # and back
    assert len({f.split("]")[0] for f in frames}) == 17
    step.read, step.done = 60, 15
    assert waiting.phase_line(step, 5).startswith("verify [##########..........] 15/30 entities, ")
    assert ", 60 read " in waiting.phase_line(step, 5)


@pytest.mark.integration
def test_the_verify_bar_moves_on_a_terminal_while_the_brokers_are_read(
    kafka_broker: BrokerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An apply's verification on a pseudo-terminal, the status line read back as drawn:
    before the first describe answer the bar moves (at least two places) with 0 read, and
    each answer's entities show up in the line. Each describe answer waits, bounded, until
    the drawing thread has shown the line as it stands: no timing is assumed."""
    import re
    import threading
    import time

    from kquota.apply import applier
    from kquota.kafka.admin import WireAdmin
    from kquota.model import Entity
    from kquota.plan.planner import plan as make_plan
    from kquota.policy import Policy

    master, slave = os.openpty()
    drawn: list[bytes] = []

    def pump() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            drawn.append(chunk)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()

    def screen() -> str:
        return b"".join(drawn).decode(errors="replace")

    def shown(pattern: str, at_least: int = 1) -> None:
        end = time.monotonic() + 60
        while len(set(re.findall(pattern, screen()))) < at_least:
            assert time.monotonic() < end, (pattern, screen()[-2000:])
            time.sleep(0.05)

    real_read = progress.read

    def read(n: int) -> None:
        step = progress.current()
        if step is not None and step.name == "verify":
            if step.read == 0:  # the first answer: the bar has moved while nothing was read
                shown(r"verify \[(\.*====\.*)\] 0/\d+ entities, 0 read", at_least=2)
            real_read(n)
            shown(rf"verify \[[^\]]*\] \d+/\d+ entities, ({step.read}) read")
        else:
            real_read(n)

    monkeypatch.setattr(progress, "read", read)
    n = applier.EXACT_READ_MAX + 10  # a probe, then a describe-all
    desired = {
        Entity.of({"user": f"vbar-{os.getpid()}-{i}"}): {"producer_byte_rate": 2e3 + i}
        for i in range(n)
    }
    with open(slave, "w", encoding="utf-8", closefd=False) as stream:
        assert stream.isatty()
        with WireAdmin(kafka_broker.bootstrap_servers) as admin, waiting.waiting_indicator(stream):
            report = applier.apply_plan(admin, make_plan(desired, {}, Policy()), poll_interval=0.05)
    os.close(slave)
    reader.join(10)
    os.close(master)
    assert report.ok and len(report.committed) == n
    reads = [
        int(r) for r in re.findall(r"verify \[[^\]]*\] \d+/\d+ entities, (\d+) read", screen())
    ]
    assert reads[0] == 0 and max(reads) >= n + 1, sorted(set(reads))  # probe + describe-all
