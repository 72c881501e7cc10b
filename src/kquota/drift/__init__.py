"""Drift: how a cluster differs from its desired state, classified for people and cron jobs."""
