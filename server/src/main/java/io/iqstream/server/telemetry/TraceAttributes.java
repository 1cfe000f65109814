package io.iqstream.server.telemetry;

import io.opentelemetry.api.common.AttributeKey;

/**
 * The attribute names of the server's spans, named once: OpenTelemetry's semantic conventions (HTTP server,
 * messaging) where one fits, {@code iqstream.*} for the rest. docs/OPERATIONS.md ("Observability") lists them.
 */
final class TraceAttributes {
    static final AttributeKey<String> HTTP_METHOD = AttributeKey.stringKey("http.request.method");
    static final AttributeKey<String> HTTP_ROUTE = AttributeKey.stringKey("http.route");
    static final AttributeKey<Long> HTTP_STATUS = AttributeKey.longKey("http.response.status_code");
    static final AttributeKey<Long> HTTP_REQUEST_BODY_SIZE = AttributeKey.longKey("http.request.body.size");
    static final AttributeKey<String> URL_PATH = AttributeKey.stringKey("url.path");
    static final AttributeKey<String> URL_SCHEME = AttributeKey.stringKey("url.scheme");
    static final AttributeKey<String> CLIENT_ADDRESS = AttributeKey.stringKey("client.address");
    static final AttributeKey<String> PROTOCOL_VERSION = AttributeKey.stringKey("network.protocol.version");
    static final AttributeKey<String> USER_AGENT = AttributeKey.stringKey("user_agent.original");
    static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
    static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");

    static final AttributeKey<String> MESSAGING_SYSTEM = AttributeKey.stringKey("messaging.system");
    static final AttributeKey<String> MESSAGING_DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    static final AttributeKey<String> MESSAGING_OPERATION_TYPE = AttributeKey.stringKey(
            "messaging.operation.type");
    static final AttributeKey<String> MESSAGING_OPERATION_NAME = AttributeKey.stringKey(
            "messaging.operation.name");
    static final AttributeKey<Long> MESSAGING_BATCH_COUNT = AttributeKey.longKey(
            "messaging.batch.message_count");

    static final AttributeKey<String> NODE = AttributeKey.stringKey("iqstream.node");
    static final AttributeKey<String> RUN_ID = AttributeKey.stringKey("iqstream.run.id");
    static final AttributeKey<String> THREAD_ID = AttributeKey.stringKey("iqstream.thread.id");
    static final AttributeKey<Boolean> FROM_PEER = AttributeKey.booleanKey("iqstream.from_peer");
    static final AttributeKey<Long> PUBLISH_EVENTS = AttributeKey.longKey("iqstream.publish.events");
    static final AttributeKey<Long> PUBLISH_BYTES = AttributeKey.longKey("iqstream.publish.bytes");
    static final AttributeKey<String> PUBLISH_OUTCOME = AttributeKey.stringKey("iqstream.publish.outcome");
    static final AttributeKey<Long> PUBLISH_RESTORED_TO = AttributeKey.longKey("iqstream.publish.restored_to");
    static final AttributeKey<Long> RESUME_AFTER = AttributeKey.longKey("iqstream.read.resumed_after");
    static final AttributeKey<Long> READ_REPLAYED = AttributeKey.longKey("iqstream.read.events_replayed");
    static final AttributeKey<Long> READ_EVENTS = AttributeKey.longKey("iqstream.read.events");
    static final AttributeKey<String> READ_OUTCOME = AttributeKey.stringKey("iqstream.read.outcome");
    static final AttributeKey<String> STREAM_PATH = AttributeKey.stringKey("iqstream.stream.path");
    static final AttributeKey<String> STREAM_OPERATION = AttributeKey.stringKey("iqstream.stream.operation");
    static final AttributeKey<String> STREAM_READ_MODE = AttributeKey.stringKey("iqstream.stream.read_mode");
    static final AttributeKey<String> STREAM_OFFSET = AttributeKey.stringKey("iqstream.stream.offset");
    static final AttributeKey<String> STREAM_NEXT_OFFSET = AttributeKey.stringKey("iqstream.stream.next_offset");
    static final AttributeKey<String> RELAY_PEER = AttributeKey.stringKey("iqstream.relay.peer");
    static final AttributeKey<String> RELAY_OUTCOME = AttributeKey.stringKey("iqstream.relay.outcome");
    static final AttributeKey<String> CLOSED_BEFORE_END = AttributeKey.stringKey("iqstream.closed_before_end");

    private TraceAttributes() {}
}
