"""The audit trail read back: what each apply changed (history) and how to undo it (revert)."""
