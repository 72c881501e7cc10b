"""An example or two for every command's ``--help`` (click epilogs), in one place so that
they are read side by side and kept true together (tests/cli/test_cli_help.py runs each
example's options through the command's parser)."""

from __future__ import annotations


def _epilog(*lines: str) -> str:
    # \b stops click from re-wrapping the lines.
    return "\b\nExamples:\n" + "".join(f"  {line}\n" for line in lines)


EXAMPLES: dict[str, str] = {
    "validate": _epilog(
        "kquota validate",
        "kquota validate quotas/ overlays/prod/",
    ),
    "plan": _epilog(
        "kquota plan --cluster prod",
        "kquota plan --snapshot prod.json --out plan.json quotas/",
        "kquota plan --cluster prod --format markdown --detailed-exitcode",
    ),
    "apply": _epilog(
        "kquota apply --cluster prod",
        "kquota apply plan.json --cluster prod --auto-approve --audit-topic kquota-audit",
    ),
    "drift": _epilog(
        "kquota drift --cluster prod",
        "kquota drift --all --format prometheus --out /var/lib/node_exporter/kquota.prom",
    ),
    "resolve": _epilog(
        "kquota resolve --names user=alice,client-id=app --cluster prod --explain",
        "kquota resolve --names user=alice --desired quotas/",
    ),
    "usage": _epilog(
        "kquota usage --cluster prod --samples samples/ --since 7d",
        "kquota usage --snapshot prod.json --samples prod.jsonl --format markdown",
    ),
    "recommend": _epilog(
        "kquota recommend --cluster prod --samples samples/ --out quotas/recommended.yaml",
        "kquota recommend --snapshot prod.json --samples prod.jsonl --percentile 95 --headroom 2",
    ),
    "export": _epilog(
        "kquota export --cluster prod --out quotas/exported.yaml",
        "kquota export --snapshot prod.json",
    ),
    "import": _epilog(
        "kquota import --from strimzi kafka-users/ --out quotas/users.yaml",
        "kquota import --from terraform terraform.tfstate",
    ),
    "snapshot": _epilog(
        "kquota snapshot --cluster prod --out prod.json",
        "kquota snapshot --all --out snapshots/ --format parquet",
    ),
    "describe": _epilog(
        "kquota describe --bootstrap-server localhost:9092 --names user=alice",
        "kquota describe --bootstrap-server localhost:9092 --format json > prod.json",
    ),
    "alter": _epilog(
        "kquota alter --bootstrap-server localhost:9092 --names user=alice "
        "--add producer_byte_rate=1048576",
        "kquota alter --bootstrap-server localhost:9092 --defaults user "
        "--delete request_percentage --validate-only",
    ),
    "fleet": _epilog(
        "kquota fleet plan --desired desired/ --snapshots snapshots/ --out out/",
        "kquota fleet drift --desired desired/ --snapshots snapshots/ --out out/ --engine spark",
    ),
    "fleet plan": _epilog(
        "kquota fleet plan --desired desired/ --snapshots snapshots/ --out out/",
        "kquota fleet plan --desired desired/ --snapshots snapshots/ --out out/ --engine spark",
    ),
    "fleet drift": _epilog(
        "kquota fleet drift --desired desired/ --snapshots snapshots/ --out out/",
    ),
    "fleet apply": _epilog(
        "kquota fleet apply out/ --desired desired/",
        "kquota fleet apply out/ --desired desired/ --wave 'stg-*' --wave 'prod-*:2:10m' "
        "--auto-approve",
        "kquota fleet apply out/ --desired desired/ --resume --auto-approve",
    ),
    "revert": _epilog(
        "kquota revert --cluster prod --last --out revert.json",
        "kquota revert --cluster prod --plan-id 3f2a9c1e0b7d4a55 --format markdown",
    ),
    "history": _epilog(
        "kquota history --cluster prod",
        "kquota history --cluster prod --entity user=alice --format json",
        "kquota history --cluster prod --format markdown > history.md",
    ),
    "fleet usage": _epilog(
        "kquota fleet usage --samples samples/ --snapshots snapshots/ --out out/",
        "kquota fleet usage --samples samples/ --snapshots snapshots/ --out out/ --engine spark",
    ),
    "fleet recommend": _epilog(
        "kquota fleet recommend --samples samples/ --snapshots snapshots/ --out out/ --since 30d",
        "kquota plan desired/prod/ out/prod.recommend.yaml --snapshot snapshots/prod.json",
    ),
    "fleet resolve": _epilog(
        "kquota fleet resolve --desired desired/ --snapshots snapshots/ "
        "--principals principals.csv --out out/",
    ),
    "dev-broker": _epilog(
        "kquota dev-broker start",
        'kquota plan --bootstrap-server "$(kquota dev-broker status --field bootstrap_servers)"',
    ),
    "dev-broker start": _epilog(
        "kquota dev-broker start",
        "kquota dev-broker start --nodes 3 --dir .cache/cluster",
        "kquota dev-broker start --metrics",
    ),
    "dev-broker status": _epilog(
        "kquota dev-broker status",
        'kquota plan --bootstrap-server "$(kquota dev-broker status --field bootstrap_servers)"',
        "kquota dev-broker status --field metrics_address",
    ),
    "dev-broker stop": _epilog(
        "kquota dev-broker stop",
    ),
    "show": _epilog(
        "kquota show plan.json",
        "kquota show plan.json --format markdown --cluster prod",
        "kquota show out/fleet-plan.json",
    ),
    "topics": _epilog(
        "kquota topics create --cluster prod",
        "kquota topics create --bootstrap-server localhost:9092 --audit-topic kquota-audit",
    ),
    "topics create": _epilog(
        "kquota topics create --cluster prod",
    ),
    "lease": _epilog(
        "kquota lease status --cluster prod",
        "kquota lease release --force 3f2a9c1e0b7d4a55 --cluster prod",
    ),
    "lease status": _epilog(
        "kquota lease status --cluster prod",
        "kquota lease status --bootstrap-server localhost:9092",
    ),
    "lease release": _epilog(
        "kquota lease release --cluster prod",
        "kquota lease release --force 3f2a9c1e0b7d4a55 --cluster prod --auto-approve",
    ),
    "kafka-client-quotas": _epilog(
        "kafka-client-quotas --bootstrap-server localhost:9092 --describe --names=user=alice",
        "kafka-client-quotas --bootstrap-server localhost:9092 --alter --names=user=alice "
        "--add=producer_byte_rate=1048576",
    ),
}
