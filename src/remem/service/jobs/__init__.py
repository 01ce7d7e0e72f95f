"""Background jobs: derive (extraction + reconcile), consolidate, retention."""
