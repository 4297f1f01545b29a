"""Traces: chat and notifications, restarted to export OTLP over HTTP to a receiver of the test's own on loopback,
make one trace of one chat message, from the POST through the broker to the recipient's feed.

The receiver decodes what it gets with the OpenTelemetry protocol's own messages (opentelemetry-proto). The two
services are restarted without tracing afterwards, as the rest of the tests run them."""

import gzip
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from conftest import Student, eventually, restart, taken_delivery

TRACED = ["chat", "notifications"]


class Receiver:
    """An OTLP/HTTP receiver: every span POSTed to /v1/traces, with the service.name of its resource."""

    def __init__(self):
        self.spans = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                    self.send_error(404 if self.path != "/v1/traces" else 415)
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.add(request)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *arguments):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def add(self, request):
        with self.lock:
            for resource_spans in request.resource_spans:
                service = next((attribute.value.string_value for attribute in resource_spans.resource.attributes
                                if attribute.key == "service.name"), None)
                for scope_spans in resource_spans.scope_spans:
                    self.spans += [(service, span) for span in scope_spans.spans]

    def trace(self, trace_id):
        with self.lock:
            return [(service, span) for service, span in self.spans if span.trace_id == trace_id]

    def close(self):
        self.server.shutdown()


@pytest.fixture
def receiver(system):
    receiver = Receiver()
    try:
        # NB: spans go out a tenth of a second after they end rather than the default five.
        restart(*TRACED, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY="100")
        yield receiver
    finally:
        restart(*TRACED)
        receiver.close()


def attribute(span, key):
    return next((a.value.string_value or a.value.int_value for a in span.attributes if a.key == key), None)


def test_one_chat_message_is_one_trace_through_chat_the_broker_and_notifications(system, receiver):
    aino, olli = Student("Aino", mode="delivering"), Student("Olli", mode="ordering")
    with taken_delivery(aino, olli, "A salad") as delivery:
        chat = f"/v1/conversations/{delivery.match_id}/messages"
        assert olli.when_known("GET", chat, expected=200)
        socket = aino.socket()
        try:
            message_id = str(uuid.uuid4())
            sent = olli.post(chat, {"id": message_id, "text": "Left door, please"})
            assert sent.status_code == 201, sent.text
            # NB: ids compared as ids: the services write them in capitals.
            assert socket.wait(lambda frame: frame.get("type") == "message.sent"
                               and frame["data"]["messageId"].lower() == message_id)
        finally:
            socket.close()

    # The POST's server span in chat is the root of the message's trace.
    def root():
        with receiver.lock:
            return next((span for service, span in receiver.spans if service == "chat" and span.kind ==
                         Span.SPAN_KIND_SERVER and attribute(span, "http.request.method") == "POST" and
                         attribute(span, "url.path") == chat), None)

    assert eventually(root, timeout=30), "chat exported no span of the POST"
    trace_id = root().trace_id
    assert root().parent_span_id == b"", "the POST's span has a parent: it is not the trace's root"

    def whole():
        spans = receiver.trace(trace_id)
        kinds = {(service, span.kind, span.name) for service, span in spans}
        return (("chat", Span.SPAN_KIND_PRODUCER, "publish message.sent") in kinds
                and ("notifications", Span.SPAN_KIND_CONSUMER, "process message.sent") in kinds) and spans

    assert eventually(whole, timeout=30), sorted({(s, p.name) for s, p in receiver.trace(trace_id)})
    spans = whole()
    by_id = {span.span_id: (service, span) for service, span in spans}
    # Every span's parent is in the trace, and there is one root: the POST.
    roots = [span for _, span in spans if not span.parent_span_id]
    assert [span.span_id for span in roots] == [root().span_id]
    for service, span in spans:
        assert not span.parent_span_id or span.parent_span_id in by_id, (service, span.name)
    # The chain: the POST (chat) → the relay's publish (chat) → notifications' handling, which wrote the feed.
    producer = next(span for service, span in spans if span.kind == Span.SPAN_KIND_PRODUCER
                    and span.name == "publish message.sent")
    consumer = next(span for service, span in spans if span.kind == Span.SPAN_KIND_CONSUMER
                    and span.name == "process message.sent" and service == "notifications")
    assert by_id[producer.parent_span_id][1].span_id == root().span_id
    assert consumer.parent_span_id == producer.span_id
    assert attribute(producer, "messaging.message.id")
    # The database's part of the POST is in it too.
    assert any(service == "chat" and span.kind == Span.SPAN_KIND_CLIENT and span.parent_span_id == root().span_id
               for service, span in spans)
    # Nothing of the message's text is in any span.
    assert all("Left door" not in str(span) for _, span in spans)
