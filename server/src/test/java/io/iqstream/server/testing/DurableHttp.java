package io.iqstream.server.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Iterator;
import java.util.stream.Stream;

/** Durable Streams requests ({@code /v1/stream/...}) with the JDK's HTTP client, as a protocol client makes them. */
public final class DurableHttp {
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private DurableHttp() {}

    /** {@code method url} with a text body (null: none) and header name, value pairs. */
    public static HttpResponse<String> send(String method, String url, String body, String... headers)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * A stream's whole content, page after page from offset -1 until {@code Stream-Up-To-Date} (a catch-up answer
     * holds at most 256 KiB); each page must be 200.
     */
    public static String readAll(String url, String... headers) throws IOException, InterruptedException {
        StringBuilder all = new StringBuilder();
        String offset = "-1";
        while (true) {
            HttpResponse<String> r = send("GET", url + "?offset=" + offset, null, headers);
            if (r.statusCode() != 200) {
                throw new AssertionError("GET " + url + "?offset=" + offset + ": " + r.statusCode() + " " + r.body());
            }
            all.append(r.body());
            offset = r.headers().firstValue("Stream-Next-Offset").orElseThrow();
            if (r.headers().firstValue("Stream-Up-To-Date").isPresent()) {
                return all.toString();
            }
        }
    }

    /** A GET whose body is read line by line as it arrives (an SSE read). */
    public static HttpResponse<Stream<String>> lines(String url, String... headers)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).GET();
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofLines());
    }

    /**
     * Reads an SSE read's lines, appending the data events' {@code data:} lines to {@code data}, until a control
     * event naming {@code field} ({@code upToDate}, {@code streamClosed}); false when the lines end first.
     */
    public static boolean readUntil(Iterator<String> lines, String field, StringBuilder data) {
        String event = "";
        while (lines.hasNext()) {
            String line = lines.next();
            if (line.startsWith("event:")) {
                event = line.substring(6).trim();
            } else if (line.startsWith("data:") && event.equals("data")) {
                data.append(line);
            } else if (line.startsWith("data:") && event.equals("control") && line.contains(field)) {
                return true;
            }
        }
        return false;
    }

    /** The Authorization header pair for a token. */
    public static String[] bearer(String token, String... more) {
        String[] out = new String[more.length + 2];
        out[0] = "Authorization";
        out[1] = "Bearer " + token;
        System.arraycopy(more, 0, out, 2, more.length);
        return out;
    }
}
