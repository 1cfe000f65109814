package io.iqstream.server.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Plain request/response calls with the JDK's HTTP client. */
public final class Http {
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private Http() {}

    public static HttpResponse<String> get(String url, String... headers) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(URI.create(url)).GET(), headers);
    }

    public static HttpResponse<String> delete(String url, String... headers)
            throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(URI.create(url)).DELETE(), headers);
    }

    public static HttpResponse<String> post(String url, String contentType, String body, String... headers)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
                .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", contentType);
        return send(b, headers);
    }

    /** Publishes NDJSON lines with a token. */
    public static HttpResponse<String> publish(String base, String runId, String token, String... lines)
            throws IOException, InterruptedException {
        return post(base + "/v1/runs/" + runId + "/events", "application/x-ndjson", String.join("\n", lines) + "\n",
                "Authorization", "Bearer " + token);
    }

    private static HttpResponse<String> send(HttpRequest.Builder b, String... headers)
            throws IOException, InterruptedException {
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        b.timeout(Duration.ofSeconds(20));
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
