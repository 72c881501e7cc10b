"""Snapshots of a cluster's quotas: the JSON and JSON Lines files (:mod:`.files`), rows for the
fleet engines (:mod:`.rows`) and Parquet (:mod:`.parquet`)."""
