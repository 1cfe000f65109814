package io.iqstream.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Imports point one way (docs/ARCHITECTURE.md, "Packages"): the request path ({@code http}) sits above what it
 * serves, so {@code ingest}, {@code sse}, {@code run} and {@code cluster} never import it; what they share with it
 * — the reply helpers, CORS, Last-Event-ID, the lingering close — lives below, in {@code wire}, which imports none
 * of them. Only the start-up ({@code IqStreamServer}, {@code warmup}) may build the pipeline. The run log layer
 * ({@code run}: the AG-UI run log and a durable stream's byte log and producer ledger) sits below the protocols
 * that use it: it names none of {@code stream}, {@code ingest}, {@code sse}, {@code cluster} or {@code http}, not
 * in an import and not by a qualified name. The telemetry layer ({@code telemetry}: spans of requests) sits below
 * {@code http} and above {@code run}: the run keeps only an OpenTelemetry span context, never a class of it.
 */
class PackageLayersTest {
    private static final Path MAIN = Path.of("src/main/java/io/iqstream/server");
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?io\\.iqstream\\.server\\.(\\w+)\\.",
            Pattern.MULTILINE);
    private static final Set<String> BELOW_HTTP = Set.of("ingest", "sse", "run", "cluster", "wire", "log", "metrics",
            "auth", "admission", "config", "worker", "stream", "telemetry");
    private static final Set<String> WIRE_MAY_IMPORT = Set.of("metrics");
    /** Anything of the server named by package, imported or fully qualified (in code or a javadoc link). */
    private static final Pattern QUALIFIED = Pattern.compile("\\bio\\.iqstream\\.server\\.(\\w+)\\.");
    private static final Set<String> ABOVE_RUN = Set.of("stream", "ingest", "sse", "cluster", "http", "telemetry");

    @Test
    void nothingBelowHttpImportsItAndWireImportsOnlyMetrics() throws IOException {
        List<String> wrong = new ArrayList<>();
        int files = 0;
        try (Stream<Path> all = Files.walk(MAIN)) {
            for (Path p : (Iterable<Path>) all.filter(f -> f.toString().endsWith(".java"))::iterator) {
                files++;
                String pkg = MAIN.relativize(p).getNameCount() > 1 ? MAIN.relativize(p).getName(0).toString() : "";
                Matcher m = IMPORT.matcher(Files.readString(p));
                while (m.find()) {
                    String imported = m.group(1);
                    if (imported.equals(pkg)) {
                        continue;
                    }
                    if (BELOW_HTTP.contains(pkg) && imported.equals("http")) {
                        wrong.add(MAIN.relativize(p) + " imports http");
                    }
                    if (pkg.equals("wire") && !WIRE_MAY_IMPORT.contains(imported)) {
                        wrong.add(MAIN.relativize(p) + " (wire) imports " + imported);
                    }
                }
            }
        }
        assertTrue(files > 50, "source files read: " + files);
        assertEquals(List.of(), wrong);
    }

    @Test
    void theRunLogLayerNamesNoProtocolAboveIt() throws IOException {
        assertEquals(List.of(), namesAbove(MAIN.resolve("run"), ABOVE_RUN));
        // the check sees what it must refuse: a run/ file that imported stream/ would be reported
        Path probe = Files.createTempDirectory("layers");
        try {
            Files.writeString(probe.resolve("Probe.java"), "package io.iqstream.server.run;\n"
                    + "import io.iqstream.server.stream.DurableStream;\n"
                    + "/** {@link io.iqstream.server.http.DurableStreamRoute} */\nclass Probe {}\n");
            assertEquals(List.of("Probe.java names stream", "Probe.java names http"), namesAbove(probe, ABOVE_RUN));
        } finally {
            Files.delete(probe.resolve("Probe.java"));
            Files.delete(probe);
        }
    }

    /**
     * The storage layer sits below the run log layer and the protocols: it keeps records in files and names none of
     * {@code run}, {@code stream}, {@code ingest}, {@code sse}, {@code cluster} or {@code http}.
     */
    @Test
    void theStorageLayerNamesNothingAboveIt() throws IOException {
        assertEquals(List.of(), namesAbove(MAIN.resolve("storage"), ABOVE_STORAGE));
    }

    /**
     * The ground floor names nothing of the server above it: {@code config} and {@code metrics} name no other
     * package, {@code wire} only {@code metrics}, {@code log} only {@code wire}; and the two protocols' read paths
     * are apart: {@code stream} (Durable Streams) and {@code sse} (AG-UI) name neither the other, what both write
     * and time live readers with lives in {@code wire}.
     */
    @Test
    void theGroundFloorNamesNothingAboveItAndTheProtocolsAreApart() throws IOException {
        Set<String> all = Set.of("admission", "auth", "cluster", "config", "demo", "http", "ingest", "log",
                "metrics", "run", "sse", "storage", "stream", "telemetry", "warmup", "wire", "worker");
        List<String> wrong = new ArrayList<>();
        wrong.addAll(namesAbove(MAIN.resolve("config"), without(all, "config")));
        wrong.addAll(namesAbove(MAIN.resolve("metrics"), without(all, "metrics")));
        wrong.addAll(namesAbove(MAIN.resolve("wire"), without(all, "wire", "metrics")));
        wrong.addAll(namesAbove(MAIN.resolve("log"), without(all, "log", "wire")));
        wrong.addAll(namesAbove(MAIN.resolve("stream"), Set.of("sse")));
        wrong.addAll(namesAbove(MAIN.resolve("sse"), Set.of("stream")));
        assertEquals(List.of(), wrong);
    }

    private static Set<String> without(Set<String> all, String... kept) {
        Set<String> out = new java.util.HashSet<>(all);
        out.removeAll(Set.of(kept));
        return out;
    }

    private static final Set<String> ABOVE_STORAGE = Set.of("run", "stream", "ingest", "sse", "cluster", "http",
            "worker", "admission");

    /** Each file under {@code dir} that names a package of {@code above}, as "file names package". */
    private static List<String> namesAbove(Path dir, Set<String> above) throws IOException {
        List<String> wrong = new ArrayList<>();
        int files = 0;
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) all.filter(f -> f.toString().endsWith(".java")).sorted()::iterator) {
                files++;
                Matcher m = QUALIFIED.matcher(Files.readString(p));
                while (m.find()) {
                    if (above.contains(m.group(1))) {
                        wrong.add(dir.relativize(p) + " names " + m.group(1));
                    }
                }
            }
        }
        assertTrue(files > 0, "no source files under " + dir);
        return wrong;
    }
}
