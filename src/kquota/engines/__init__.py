"""Planning engines: the in-process LocalEngine (default) and, later, a Spark engine."""
