"""The payload commands of ``suture``: check, fix, replay and captures. Each module has ``add(sub)``."""
