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
 * of them. Only the start-up ({@code IqStreamServer}, {@code warmup}) may build the pipeline.
 */
class PackageLayersTest {
    private static final Path MAIN = Path.of("src/main/java/io/iqstream/server");
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?io\\.iqstream\\.server\\.(\\w+)\\.",
            Pattern.MULTILINE);
    private static final Set<String> BELOW_HTTP = Set.of("ingest", "sse", "run", "cluster", "wire", "log", "metrics",
            "auth", "admission", "config", "worker", "stream");
    private static final Set<String> WIRE_MAY_IMPORT = Set.of("metrics");

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
}
