package io.iqstream.server.log;

import io.iqstream.server.wire.Json;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code --log-format json}: the standard error stream the logger writes to, turned into one JSON object a line.
 * The logger (slf4j-simple) writes a record, its stack trace included, and then flushes once; each flush here is
 * one record: {@code time}, {@code level}, {@code logger}, {@code thread}, {@code message} (the stack trace in
 * {@code exception}), {@code run_id} and {@code stream_path} of the request being served on the thread
 * ({@link LogScope}), {@code node}, and {@code trace_id} / {@code span_id} of the current span when traces are on.
 * Text that is not a logger's record (a start-up message) becomes a record of level {@code INFO} with its text as
 * the message. Every message goes through {@link Redaction}, as the text lines' do at their call sites.
 *
 * <p>Any thread: a record is gathered and written under this stream's lock.
 */
public final class JsonLogStream extends OutputStream {
    /** slf4j-simple's line: date, [thread], level, logger, " - ", message. */
    private static final Pattern RECORD = Pattern.compile(
            "^(\\S+) \\[([^\\]]*)\\] (ERROR|WARN|INFO|DEBUG|TRACE) (\\S+) - (.*?)(?:\\R(.*))?$", Pattern.DOTALL);

    private final PrintStream out;
    private final String node;
    private final ByteArrayOutputStream record = new ByteArrayOutputStream(256);

    /**
     * @param out where the JSON lines go (the process's original standard error)
     * @param node this node's name ({@code --advertise}, or host:port), or null
     */
    public JsonLogStream(PrintStream out, String node) {
        this.out = out;
        this.node = node;
    }

    /** Makes the process's standard error this stream over what it was; returns the original. */
    public static PrintStream install(String node) {
        PrintStream original = System.err;
        System.setErr(new PrintStream(new JsonLogStream(original, node), false, StandardCharsets.UTF_8));
        // a message printed just before exit (no logger flush) still goes out, as a record
        Runtime.getRuntime().addShutdownHook(new Thread(System.err::flush, "iqstream-log-flush"));
        return original;
    }

    @Override
    public synchronized void write(int b) {
        record.write(b);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) {
        record.write(b, off, len);
    }

    @Override
    public synchronized void flush() {
        if (record.size() == 0) {
            return;
        }
        String text = record.toString(StandardCharsets.UTF_8);
        record.reset();
        String trimmed = text.strip();
        if (!trimmed.isEmpty()) {
            out.println(toJson(trimmed));
        }
        out.flush();
    }

    /** The JSON object of one record's text. */
    String toJson(String text) {
        StringBuilder sb = new StringBuilder(text.length() + 160).append('{');
        Matcher m = RECORD.matcher(text);
        if (m.matches()) {
            field(sb, "time", m.group(1));
            field(sb, "level", m.group(3));
            field(sb, "logger", m.group(4));
            field(sb, "thread", m.group(2));
            field(sb, "message", Redaction.of(m.group(5)));
            if (m.group(6) != null && !m.group(6).isBlank()) {
                field(sb, "exception", Redaction.of(m.group(6)));
            }
        } else {
            field(sb, "time", java.time.OffsetDateTime.now().toString());
            field(sb, "level", "INFO");
            field(sb, "message", Redaction.of(text));
        }
        LogScope scope = LogScope.current();
        if (scope != null) {
            field(sb, "run_id", scope.runId());
            field(sb, "stream_path", scope.streamPath());
        }
        field(sb, "node", node);
        SpanContext span = Span.current().getSpanContext();
        if (span.isValid()) {
            field(sb, "trace_id", span.getTraceId());
            field(sb, "span_id", span.getSpanId());
        }
        return sb.append('}').toString();
    }

    private static void field(StringBuilder sb, String name, String value) {
        if (value == null) {
            return;
        }
        if (sb.length() > 1) {
            sb.append(',');
        }
        Json.quote(sb, name);
        sb.append(':');
        Json.quote(sb, value);
    }

}
