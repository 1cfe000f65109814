package io.iqstream.micro;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A publish body's framing, for the splitter benchmark: the Content-Type and how each event of the workload run is
 * written in it (NDJSON lines, SSE {@code data:} frames as AG-UI agents emit them, a JSON array). Public only because
 * JMH's generated code names it.
 */
public enum BodyFormat {
    NDJSON("application/x-ndjson", "", "\n", ""),
    SSE("text/event-stream", "data: ", "\n\n", ""),
    JSON("application/json", "", ",", "[");

    private final String contentType;
    private final String before;
    private final String after;
    private final String open;

    BodyFormat(String contentType, String before, String after, String open) {
        this.contentType = contentType;
        this.before = before;
        this.after = after;
        this.open = open;
    }

    String contentType() {
        return contentType;
    }

    /** The whole run as one body of this format. */
    byte[] body() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(80 * 1024);
        out.writeBytes(open.getBytes(StandardCharsets.US_ASCII));
        for (int i = 0; i < WorkloadEvents.EVENTS; i++) {
            out.writeBytes(before.getBytes(StandardCharsets.US_ASCII));
            out.writeBytes(WorkloadEvents.event(i));
            if (this != JSON || i + 1 < WorkloadEvents.EVENTS) {
                out.writeBytes(after.getBytes(StandardCharsets.US_ASCII));
            }
        }
        if (this == JSON) {
            out.write(']');
        }
        return out.toByteArray();
    }
}
