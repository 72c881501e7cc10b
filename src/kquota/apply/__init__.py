"""Applying plans: the only code that writes to a cluster (through WireAdmin)."""
