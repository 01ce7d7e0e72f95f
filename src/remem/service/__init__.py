"""Service layer: orchestration of domain and ports. No SQL, no prompt text."""
