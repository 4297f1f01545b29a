import Logging
import OTel
import ServiceLifecycle
import Tracing

/// Traces, exported over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
/// names a receiver, and off otherwise: then the spans in the code are no-ops and no middleware records requests.
/// Every other `OTEL_*` setting of the specification applies (sampler, batch, headers, `OTEL_SERVICE_NAME`).
///
/// One sent message is one trace: the request's server span, the events it stored (their outbox rows keep its
/// `traceparent`), the relay's publish of each (a producer span, its `traceparent` in the message's headers) and each
/// consumer's handling (a consumer span continuing it, whose own events continue it further).
public enum Telemetry {
    /// Whether `environment` asks for traces.
    public static func isEnabled(_ environment: [String: String]) -> Bool {
        let endpoint =
            [environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"], environment["OTEL_EXPORTER_OTLP_ENDPOINT"]]
            .compactMap { $0 }.first { !$0.isEmpty }
        return endpoint != nil && environment["OTEL_TRACES_EXPORTER"] != "none"
    }

    /// Bootstraps the process's tracer when `environment` asks for traces, and returns the service that exports them,
    /// to run beside the application (started first, stopped last). Once per process.
    static func bootstrap(service: String, environment: [String: String], logger: Logger) throws -> (any Service)? {
        guard isEnabled(environment) else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = service
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.diagnosticLogger = .custom(logger)
        configuration.diagnosticLogLevel = .warning
        // NB: the environment's OTEL_* settings override these.
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(backend.factory)
        logger.info("exporting traces")
        return backend.service
    }
}
