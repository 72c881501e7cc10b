"""``kquota topics create``: kquota's own topics (the audit trail, the apply lease), made on
request with the settings their jobs need (:mod:`kquota.operations.topics`); a topic that
exists is reported, never changed."""

from __future__ import annotations

import click

from kquota.cli.examples import EXAMPLES
from kquota.cli.options import TargetingArgs, live_targeting_options
from kquota.cli.timeout_option import timeout_option
from kquota.errors import UsageError


@click.group("topics", epilog=EXAMPLES["topics"])
def command() -> None:
    """kquota's own topics: the audit trail and the apply lease."""


@command.command("create", epilog=EXAMPLES["topics create"])
@live_targeting_options
@click.option(
    "--audit-topic",
    metavar="TOPIC",
    help="The audit topic to create (default: the cluster's audit_topic in kquota.yaml).",
)
@timeout_option("topics")
def create(where: TargetingArgs, audit_topic: str | None) -> None:
    """Create the audit and lease topics that do not exist; report those that do.

    \b
    Replication factor min(3, brokers), min.insync.replicas one less (at least 1);
    audit: 1 partition, cleanup.policy=delete, retention 3 years;
    lease: 1 partition, cleanup.policy=delete, retention 7 days, LogAppendTime.
    An existing topic's settings are shown, never changed.
    """
    from kquota.operations.topics import audit_spec, create_topics, lease_spec
    from kquota.runtime.deadline import current

    target = where.resolve(require_source=False)
    if target.cluster is None and target.bootstrap_server is None:
        raise UsageError(
            "which cluster? give --cluster NAME (from kquota.yaml) or --bootstrap-server "
            "HOST:PORT (with --command-config FILE for credentials)"
        )
    topic = audit_topic or target.audit_topic
    specs = ([audit_spec(topic)] if topic else []) + [lease_spec()]
    limit = current()
    assert limit is not None  # timeout_option runs the command under its deadline
    for outcome in create_topics(target, specs, limit.remaining()):
        for line in _lines(outcome):
            click.echo(line)
    if not topic:
        click.echo(
            "no audit topic: set audit_topic for the cluster in kquota.yaml, or give "
            "--audit-topic TOPIC",
            err=True,
        )


def _lines(outcome: object) -> list[str]:
    from kquota.display import safe_text
    from kquota.operations.topics import TopicOutcome

    assert isinstance(outcome, TopicOutcome)
    facts = outcome.facts
    settings = [
        f"{facts.partitions} partition{'s' * (facts.partitions != 1)}",
        f"replication factor {facts.replication_factor}",
    ]
    keys = sorted({*outcome.spec.configs, "min.insync.replicas"})
    settings += [f"{k}={safe_text(facts.configs[k])}" for k in keys if k in facts.configs]
    what = "created" if outcome.created else "exists, left as it is"
    lines = [f"topic {facts.name} ({outcome.spec.job}): {what}: {', '.join(settings)}"]
    if outcome.differences:
        lines.append("  differs from what kquota would create (kquota changes no existing topic):")
        lines += [f"    {safe_text(d)}" for d in outcome.differences]
    return lines
