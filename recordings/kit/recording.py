"""Recording: the capture server, real SDK tracer providers, root spans and ground truth."""

from __future__ import annotations

import importlib.metadata
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from kit import truth
from kit.capture import CaptureServer
from kit.finish import finish as write_results

ROOT_SPAN_NAME = "badge.run"
ROOT_SCOPE = "badge.acceptance"
# The kit's own dependencies: always listed in expected.json's packages.
KIT_PACKAGES = (
    "opentelemetry-api",
    "opentelemetry-sdk",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-exporter-otlp-proto-grpc",
    "opentelemetry-proto",
    "protobuf",
    "grpcio",
)


def package_versions(names: list[str] | tuple[str, ...]) -> dict[str, str]:
    """name -> installed version (importlib.metadata); 'not installed' when missing."""
    found = {}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


class Recording:
    """One scenario's recording. Use as a context manager around the runs, then `finish()`."""

    def __init__(self, scenario: str, out: Path | str, description: str = ""):
        self.scenario = scenario
        self.out = Path(out)
        self.description = description
        self.server: CaptureServer | None = None
        self.runs: list[truth.Run] = []
        self.exporters: dict[str, dict[str, Any]] = {}
        self.providers: list[TracerProvider] = []
        self.http_endpoint = ""
        self.http_base = ""  # http://127.0.0.1:P (the Langfuse SDK appends its own path)
        self.grpc_endpoint = ""

    # -- capture server ----------------------------------------------------------------------

    def __enter__(self) -> Recording:
        self.server = CaptureServer(self.out).start()
        self.http_endpoint = self.server.http_endpoint
        self.http_base = self.server.http_base
        self.grpc_endpoint = self.server.grpc_endpoint
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Flush and shut down every provider made (late spans get 0.5 s), stop the server."""
        self.flush()
        time.sleep(0.5)
        for provider in self.providers:
            provider.force_flush()
            provider.shutdown()
        if self.server is not None:
            self.server.stop()
            print(
                f"kit: {self.server.request_count} trace requests recorded in "
                f"{self.out / 'payloads'}",
                file=sys.stderr,
            )

    # -- providers -----------------------------------------------------------------------------

    def tracer_provider(
        self,
        service_name: str,
        transport: str = "http",
        batch_size: int = 6,
        schedule_delay_millis: int = 100,
        compression: str | None = None,
        resource_attributes: dict[str, Any] | None = None,
        exporter: SpanExporter | None = None,
        exporter_info: dict[str, Any] | None = None,
    ) -> TracerProvider:
        """A real SDK TracerProvider exporting to the capture server.

        transport: "http" (OTLP http/protobuf to `http_endpoint`) or "grpc" (to `grpc_endpoint`).
        compression: None / "none" or "gzip". `exporter` replaces the OTLP exporter (e.g. an
        http/json one); describe it in `exporter_info` for expected.json. The provider is NOT set
        global: the recorder decides (`trace.set_tracer_provider(provider)`).
        """
        if self.server is None:
            raise RuntimeError("Recording.tracer_provider() needs the capture server: `with rec:`")
        gzip = compression == "gzip"
        if exporter is None:
            if transport == "http":
                from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
                    OTLPSpanExporter as HttpExporter,
                )

                exporter = HttpExporter(
                    endpoint=self.http_endpoint,
                    compression=HttpCompression.Gzip if gzip else HttpCompression.NoCompression,
                    timeout=10,
                )
                protocol = "http/protobuf"
            elif transport == "grpc":
                from grpc import Compression as GrpcCompression
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                    OTLPSpanExporter as GrpcExporter,
                )

                exporter = GrpcExporter(
                    endpoint=self.grpc_endpoint,
                    insecure=True,
                    compression=GrpcCompression.Gzip if gzip else GrpcCompression.NoCompression,
                    timeout=10,
                )
                protocol = "grpc"
            else:
                raise ValueError(f"transport must be 'http' or 'grpc', not {transport!r}")
            info: dict[str, Any] = {
                "protocol": protocol,
                "compression": "gzip" if gzip else "none",
                "exporter": "OTLPSpanExporter",
            }
        else:
            info = {"exporter": f"{type(exporter).__module__}.{type(exporter).__qualname__}"}
        info.update(exporter_info or {})
        info["batch"] = {
            "max_export_batch_size": batch_size,
            "schedule_delay_millis": schedule_delay_millis,
        }
        resource = Resource.create({"service.name": service_name, **(resource_attributes or {})})
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(
            BatchSpanProcessor(
                exporter,
                max_export_batch_size=batch_size,
                schedule_delay_millis=schedule_delay_millis,
            )
        )
        self.providers.append(provider)
        self.exporters[service_name] = info
        return provider

    def flush(self) -> None:
        """force_flush() on every provider made."""
        for provider in self.providers:
            provider.force_flush()

    # -- runs ----------------------------------------------------------------------------------

    @contextmanager
    def run(
        self,
        provider: trace.TracerProvider | None,
        task_id: str,
        expected_output: Any = None,
        service_name: str | None = None,
    ) -> Iterator[truth.Run]:
        """Root span `badge.run` (made current) around one run; yields its ground truth.

        On exit sets `badge.run.success = run.success`. An exception escaping the block is
        recorded on the root (status ERROR + `exception` event), run.outcome = "exception",
        run.success = False, run.error = "Type: message", and swallowed.
        `provider=None` uses the global tracer provider.
        """
        if service_name is None:
            resource = getattr(provider or trace.get_tracer_provider(), "resource", None)
            service_name = resource.attributes.get("service.name", "") if resource else ""
        run = truth.Run(
            task_id=task_id,
            run_index=len(self.runs),
            service_name=str(service_name),
            expected_output=expected_output,
        )
        self.runs.append(run)
        tracer = trace.get_tracer(ROOT_SCOPE, tracer_provider=provider)
        root = tracer.start_span(
            ROOT_SPAN_NAME,
            kind=SpanKind.INTERNAL,
            attributes={"badge.task.id": task_id},
            context=otel_context.Context(),  # always a new trace
        )
        ctx = root.get_span_context()
        run.trace_id = f"{ctx.trace_id:032x}"
        run.root_span_id = f"{ctx.span_id:016x}"
        token = otel_context.attach(trace.set_span_in_context(root))
        truth._set_current(run)
        try:
            yield run
        except Exception as exc:  # noqa: BLE001 - recorded on the root, the recording goes on
            run.success = False
            run.outcome = "exception"
            run.error = f"{type(exc).__name__}: {exc}"
            root.record_exception(exc)
            root.set_status(Status(StatusCode.ERROR, run.error[:200]))
        else:
            run.success = bool(run.success)
            if not run.outcome:
                run.outcome = "ok" if run.success else "wrong_answer"
        finally:
            truth._set_current(None)
            otel_context.detach(token)
            root.set_attribute("badge.run.success", bool(run.success))
            root.end()
            label = run.outcome + (f" ({run.error})" if run.error else "")
            print(f"kit: run {run.run_index} {task_id}: {label}", file=sys.stderr)

    # -- results -------------------------------------------------------------------------------

    def finish(
        self,
        packages: list[str] | tuple[str, ...] = (),
        notes: list[str] | tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """Write expected.json and spans_summary.md (after the server stopped); returns expected.

        packages: distribution names whose versions go to expected.json (the kit's own
        OpenTelemetry / protobuf / grpcio pins are added); notes: bullet lines for the summary.
        """
        if self.server is not None and self.server._http is not None:
            self.close()
        names = list(dict.fromkeys(list(packages) + list(KIT_PACKAGES)))
        versions = package_versions(names)
        if truth.STRAY.tool_calls or truth.STRAY.llm_calls or truth.STRAY.handoffs:
            notes = list(notes) + [
                "Kit warning: counts made outside any run (not in any run's truth): "
                f"tools {truth.STRAY.tool_calls}, llm calls {truth.STRAY.llm_calls}, "
                f"handoffs {truth.STRAY.handoffs}."
            ]
        return write_results(
            out=self.out,
            scenario=self.scenario,
            description=self.description,
            truth_runs=[run.truth() for run in self.runs],
            packages=versions,
            framework_packages=[n for n in names if n not in KIT_PACKAGES],
            exporters=self.exporters,
            notes=list(notes),
        )
