"""Fleet planning: one desired-state folder and one snapshot per cluster, many clusters."""
