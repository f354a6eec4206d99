"""The egress plan: the endpoints it serves, the forwarder it starts and the proxy
variables it sets, and the endpoints it refuses."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bugbout.sandbox import forward
from bugbout.sandbox.egress import EgressPlan, EgressProxy, plan


def test_plan_for_mixed_endpoints() -> None:
    endpoints = [
        "http://127.0.0.1:4321",
        "http://localhost:5000/v1",
        "http://10.1.2.3:8080",
        "https://api.anthropic.com",
        "https://generativelanguage.googleapis.com:443",
    ]
    egress = plan(endpoints)
    assert egress.urls["http://127.0.0.1:4321"] == "http://127.0.0.1:4321"
    assert egress.urls["http://localhost:5000/v1"] == "http://localhost:5000/v1"
    assert egress.urls["https://api.anthropic.com"] == "https://api.anthropic.com"
    rewritten = egress.urls["http://10.1.2.3:8080"]
    assert rewritten.startswith("http://127.0.0.1:")
    assert egress.direct[:2] == (("127.0.0.1:4321", "127.0.0.1:4321"),
                                 ("127.0.0.1:5000", "localhost:5000"))  # fmt: skip
    assert egress.direct[2] == (rewritten.removeprefix("http://"), "10.1.2.3:8080")
    assert egress.proxy is not None
    ports = {int(listen.rsplit(":", 1)[1]) for listen, _ in egress.direct}
    assert len(ports) == 3 and int(egress.proxy.rsplit(":", 1)[1]) not in ports
    assert egress.env == {
        "HTTPS_PROXY": f"http://{egress.proxy}",
        "https_proxy": f"http://{egress.proxy}",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    argv = egress.forwarder(Path("/s/egress.sock"))
    assert argv[:4] == [sys.executable, "-I", "-S", str(Path(forward.__file__).resolve())]
    assert argv[4:] == ["--socket", "/s/egress.sock", "--direct", "127.0.0.1:4321=127.0.0.1:4321",
                        "--direct", "127.0.0.1:5000=localhost:5000",
                        "--direct", f"{egress.direct[2][0]}=10.1.2.3:8080",
                        "--proxy", egress.proxy, "--"]  # fmt: skip


def test_plan_without_https_sets_no_proxy_variables() -> None:
    egress = plan(["http://127.0.0.1:4321"])
    assert (egress.proxy, egress.env) == (None, {})
    assert plan([]) == EgressPlan()


@pytest.mark.parametrize("bad", ["ftp://x", "api.anthropic.com", "https://", "http://h:99999"])
def test_bad_endpoints_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError):
        plan([bad])
    with pytest.raises(ValueError):
        EgressProxy([bad], Path("/nonexistent/s"))
