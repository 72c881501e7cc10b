"""Observed usage: what principals really send, read from brokers' quota metrics.

Sources (a Prometheus server's HTTP API, sample files) are normalised to :class:`Sample` rows;
everything after that (demand profiles, throttle replay, recommendations) is pure over rows, so
the same code runs in process and on Spark. Usage is read, never written.
"""
