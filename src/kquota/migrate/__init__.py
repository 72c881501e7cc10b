"""Another tool's quota declarations as kquota desired state (``kquota import``).

One pure converter a source (:mod:`~kquota.migrate.strimzi`, :mod:`~kquota.migrate.terraform`,
:mod:`~kquota.migrate.jikkou`): files already read, as ``(name, bytes)``, to the entities they
declare, each with where it was declared. Every field that bears on a quota is mapped or
refused with a reason; what is not about quotas (another kind, another resource type) is
skipped with a note. :mod:`~kquota.migrate.common` holds what they share: the declaration
record, value checks, and the merge that refuses an entity declared twice.
"""
