import os

import pytest

# litellm fetches a price map from the network at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# The shared helpers hold asserts (assert_repaired_and_accepted...): pytest explains their failures
# as it does a test's own, as it did when they lived in test modules.
pytest.register_assert_rewrite("tests._support")
