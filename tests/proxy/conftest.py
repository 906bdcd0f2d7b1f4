# The proxy tests' fixtures: no ambient SUTURE_* settings, and Suture's log lines as `logs`.
from tests._support.proxy_fixtures import _no_ambient_suture_env, logs

__all__ = ["_no_ambient_suture_env", "logs"]
