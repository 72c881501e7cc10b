"""How a command's process lives: its deadline, its progress, its timings, the collector's
pause, its children's pids and their parent's death, closing connections, lazy exports.

Every module here is imported by its own name (``from kquota.runtime import deadline``):
this package's face imports nothing.
"""
