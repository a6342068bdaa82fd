"""The first start on an empty database prints a key and the lines that hand
it to an agent (docs/operations.md): lines a shell exports, so the agent the
shell starts next sees them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.support.otlp import agent_run
from bench.support.servers import OtlpClient, start_server


def child_environment(lines: list[str]) -> dict[str, str]:
    """What a program started after these lines (pasted into sh) finds in its environment."""
    script = "\n".join([*lines, "exec env"])
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True, env={})
    return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)


def test_the_first_start_prints_lines_a_shell_exports_to_the_agent(tmp_path: Path) -> None:
    server = start_server(tmp_path / "first.db")
    try:
        printed = [line.strip() for line in server.output]
        pasted = printed[printed.index("Paste these into the shell that starts your agent:") + 1 :]
        http = [line for line in pasted if line.startswith("export ")]
        assert len(http) == 2
        seen = child_environment(http)
        assert seen["OTEL_EXPORTER_OTLP_ENDPOINT"] == f"http://127.0.0.1:{server.http_port}"
        header = seen["OTEL_EXPORTER_OTLP_HEADERS"]
        assert header.startswith("authorization=Bearer bdg_")
        grpc = [line.removeprefix("#").strip() for line in pasted if line.startswith("#   export")]
        assert child_environment(http + grpc) == {
            **seen,
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.grpc_port}",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
        }
        # and the key the lines carry is one the collector takes
        client = OtlpClient(server, header.removeprefix("authorization=Bearer "))
        client.export(agent_run("t1").SerializeToString(), "http")
        client.close()
    finally:
        server.stop()
