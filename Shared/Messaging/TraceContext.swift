import Tracing

/// A trace's context as the W3C `traceparent` that travels with an event: stored with its outbox row, put in the
/// message's headers by the relay, read by the consumer. Without a tracer bootstrapped (no
/// `OTEL_EXPORTER_OTLP_ENDPOINT`) there is none, and every span here is a no-op.
public enum TraceContext {
    /// The `traceparent` of the current task's span, if it has one.
    public static var current: String? {
        InstrumentationContext.current.flatMap(traceparent(of:))
    }

    /// The `traceparent` of `context`'s span.
    public static func traceparent(of context: InstrumentationContext) -> String? {
        var headers: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &headers, using: DictionaryInjector())
        return headers["traceparent"]
    }

    /// The context a span continuing `traceparent` starts from: the top level when there is none.
    public static func context(continuing traceparent: String?) -> InstrumentationContext {
        var context = InstrumentationContext.topLevel
        if let traceparent {
            InstrumentationSystem.instrument.extract(
                ["traceparent": traceparent], into: &context, using: DictionaryExtractor())
        }
        return context
    }

    /// A span of a message's journey (`kind` producer in the relay, consumer in a consumer), continuing the trace of
    /// the change that made it. A message without a `traceparent` starts none: nothing traced made it.
    static func startSpan(_ name: String, continuing traceparent: String?, ofKind kind: SpanKind) -> (any Span)? {
        guard traceparent != nil else { return nil }
        return Tracing.startSpan(name, context: context(continuing: traceparent), ofKind: kind)
    }
}

private struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}

private struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }
}
