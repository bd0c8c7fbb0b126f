"""``sci_etl_core.search`` must load nothing outside the standard library and ``sci_etl_core``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys
before = set(sys.modules)
import sci_etl_core.search as search
{body}
loaded = sorted(
    name for name in set(sys.modules) - before
    if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] != "sci_etl_core"
)
print(json.dumps(loaded))
"""

BODIES = {
    "import": "",
    "parse_query": "search.parse_query('title:galaxy AND NEAR(dwarf halo*, 5) -quasar')",
    "every public name": "[getattr(search, n) for n in search.__all__]",
}


@pytest.mark.parametrize("body", list(BODIES.values()), ids=list(BODIES))
def test_search_core_loads_only_the_standard_library(body: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=body)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(result.stdout) == []
