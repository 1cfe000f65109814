package io.iqstream.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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
 *
 * <p>In general: every package stands on a floor ({@link #FLOORS}, the ground floor first; each file of the root
 * package on its own), no file names a package on a higher floor, and no packages name each other in a circle, of any
 * length. A file names another package by an import, by a qualified name in its code, or by a javadoc {@code @link}
 * or {@code @see} (what the compiler or javadoc resolves); a root file names another root file by its simple name in
 * code or in a link. Prose, {@code {@code ...}} included, names nothing.
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

    /**
     * The floors of the house, the ground floor first (docs/ARCHITECTURE.md, "The tree"): a package, or a file of
     * the root package, may name what stands on its own floor or below, never above. A new package is placed here.
     */
    static final List<Set<String>> FLOORS = List.of(
            Set.of("config", "metrics", "json", "storage", "BuildInfo"),
            Set.of("wire", "admission", "StartupFailure"),
            Set.of("log", "run"),
            Set.of("auth", "telemetry", "worker"),
            Set.of("stream", "cluster", "demo"),
            Set.of("ServerContext"),
            Set.of("ingest", "sse"),
            Set.of("http"),
            Set.of("warmup"),
            Set.of("IqStreamServer"),
            Set.of("Main"));

    @Test
    void everyPackageStandsOnAFloorAndNoneNamesOneAbove() throws IOException {
        Sources tree = Sources.read(MAIN);
        assertTrue(tree.files.size() > 50, "source files read: " + tree.files.size());
        List<String> unplaced = new ArrayList<>();
        for (String room : tree.rooms()) {
            if (floorOf(room) < 0) {
                unplaced.add(room);
            }
        }
        assertEquals(List.of(), unplaced, "rooms with no floor in FLOORS");
        assertEquals(List.of(), upward(tree.arrows()));

        // the check sees what it must refuse: a run/ class that imports http, the request path above it
        Sources planted = Sources.read(MAIN);
        planted.add("run/Planted.java", "package io.iqstream.server.run;\n"
                + "import io.iqstream.server.http.HttpRequestHandler;\nclass Planted {}\n");
        assertEquals(List.of("run/Planted.java:2 import io.iqstream.server.http.HttpRequestHandler;"
                + " (run, floor 3, names http, floor 8)"), upward(planted.arrows()));
    }

    @Test
    void noPackagesNameEachOtherInACircle() throws IOException {
        assertEquals(List.of(), circles(Sources.read(MAIN).arrows()));

        // the check sees what it must refuse, a circle of any length, even one that never runs back up a floor:
        // config -> metrics -> json -> config, all on the ground floor
        Sources planted = Sources.read(MAIN);
        planted.add("config/PlantedA.java", "package io.iqstream.server.config;\n"
                + "import io.iqstream.server.metrics.Metrics;\nclass PlantedA {}\n");
        planted.add("metrics/PlantedB.java", "package io.iqstream.server.metrics;\n"
                + "/** {@link io.iqstream.server.json.JsonValues} */\nclass PlantedB {}\n");
        planted.add("json/PlantedC.java", "package io.iqstream.server.json;\n"
                + "class PlantedC { io.iqstream.server.config.Flag flag; }\n");
        List<Arrow> arrows = planted.arrows();
        assertEquals(List.of(), upward(arrows));
        assertEquals(List.of("config -> metrics (config/PlantedA.java:2 import io.iqstream.server.metrics.Metrics;)"
                + " -> json (metrics/PlantedB.java:2 /** {@link io.iqstream.server.json.JsonValues} */)"
                + " -> config (json/PlantedC.java:2 class PlantedC { io.iqstream.server.config.Flag flag; })"),
                circles(arrows));
        // and a circle of two files of the root package, named by their simple names: Main names BuildInfo
        Sources twoRoots = Sources.read(MAIN);
        twoRoots.add("BuildInfo.java", "package io.iqstream.server;\n/** {@link Main} */\n"
                + "final class BuildInfo {}\n");
        List<String> rootCircle = circles(twoRoots.arrows());
        assertEquals(1, rootCircle.size(), rootCircle::toString);
        assertTrue(rootCircle.get(0).startsWith("BuildInfo -> Main (BuildInfo.java:2 /** {@link Main} */) -> BuildInfo"
                + " (Main.java:"), rootCircle.get(0));
    }

    /** One arrow: a file of {@code from} names the room {@code to} at {@code line}. */
    record Arrow(String from, String to, String file, int lineNumber, String line) {
        String where() {
            return file + ":" + lineNumber + " " + line.strip();
        }
    }

    private static int floorOf(String room) {
        for (int i = 0; i < FLOORS.size(); i++) {
            if (FLOORS.get(i).contains(room)) {
                return i + 1;
            }
        }
        return -1;
    }

    /** Each arrow from a lower floor to a higher one, as "file:line text (from, floor f, names to, floor t)". */
    private static List<String> upward(List<Arrow> arrows) {
        List<String> wrong = new ArrayList<>();
        for (Arrow a : arrows) {
            int from = floorOf(a.from());
            int to = floorOf(a.to());
            if (from >= 0 && to > from) {
                wrong.add(a.where() + " (" + a.from() + ", floor " + from + ", names " + a.to() + ", floor " + to + ")");
            }
        }
        return wrong;
    }

    /**
     * Every circle of the room graph (Tarjan's strongly connected components), one line per component: a closed walk
     * through all its rooms, each step with the first place that makes it.
     */
    private static List<String> circles(List<Arrow> arrows) {
        Map<String, Map<String, Arrow>> out = new TreeMap<>();
        for (Arrow a : arrows) {
            out.computeIfAbsent(a.from(), k -> new TreeMap<>()).putIfAbsent(a.to(), a);
            out.computeIfAbsent(a.to(), k -> new TreeMap<>());
        }
        List<String> found = new ArrayList<>();
        for (Set<String> component : new Components(out).strong()) {
            if (component.size() < 2) {
                continue;
            }
            String start = component.iterator().next();
            StringBuilder walk = new StringBuilder(start);
            List<String> path = new ArrayList<>(List.of(start));
            closeWalk(out, component, start, path, walk, new java.util.HashSet<>(Set.of(start)));
            found.add(walk.toString());
        }
        return found;
    }

    /** Depth first from {@code path}'s last room back to its first, inside the component; appends the steps. */
    private static boolean closeWalk(Map<String, Map<String, Arrow>> out, Set<String> component, String start,
            List<String> path, StringBuilder walk, Set<String> seen) {
        String here = path.get(path.size() - 1);
        for (Map.Entry<String, Arrow> e : out.get(here).entrySet()) {
            String next = e.getKey();
            if (!component.contains(next)) {
                continue;
            }
            int mark = walk.length();
            walk.append(" -> ").append(next).append(" (").append(e.getValue().where()).append(")");
            if (next.equals(start)) {
                return true;
            }
            if (seen.add(next)) {
                path.add(next);
                if (closeWalk(out, component, start, path, walk, seen)) {
                    return true;
                }
                path.remove(path.size() - 1);
            }
            walk.setLength(mark);
        }
        return false;
    }

    /** Tarjan's algorithm over a small graph, recursive. */
    private static final class Components {
        private final Map<String, Map<String, Arrow>> out;
        private final Map<String, Integer> index = new java.util.HashMap<>();
        private final Map<String, Integer> low = new java.util.HashMap<>();
        private final java.util.ArrayDeque<String> stack = new java.util.ArrayDeque<>();
        private final Set<String> onStack = new java.util.HashSet<>();
        private final List<Set<String>> found = new ArrayList<>();

        Components(Map<String, Map<String, Arrow>> out) {
            this.out = out;
        }

        List<Set<String>> strong() {
            for (String v : out.keySet()) {
                if (!index.containsKey(v)) {
                    visit(v);
                }
            }
            return found;
        }

        private void visit(String v) {
            index.put(v, index.size());
            low.put(v, index.get(v));
            stack.push(v);
            onStack.add(v);
            for (String w : out.get(v).keySet()) {
                if (!index.containsKey(w)) {
                    visit(w);
                    low.put(v, Math.min(low.get(v), low.get(w)));
                } else if (onStack.contains(w)) {
                    low.put(v, Math.min(low.get(v), index.get(w)));
                }
            }
            if (low.get(v).equals(index.get(v))) {
                Set<String> component = new java.util.TreeSet<>();
                String w;
                do {
                    w = stack.pop();
                    onStack.remove(w);
                    component.add(w);
                } while (!w.equals(v));
                found.add(component);
            }
        }
    }

    /**
     * The server's main sources, each file in its room: the package under {@code io.iqstream.server} it is in, or,
     * for a file of the root package, its class name.
     */
    static final class Sources {
        private static final Pattern NAMED = Pattern.compile("\\bio\\.iqstream\\.server\\.(\\w+)");
        private static final Pattern LINK = Pattern.compile("(?:\\{@link(?:plain)?|@see)\\s+([\\w.]+)");
        private static final Pattern WORD = Pattern.compile("\\b[A-Z]\\w*\\b");
        /** Path relative to the source root, with '/', to its text. */
        final Map<String, String> files = new TreeMap<>();

        static Sources read(Path root) throws IOException {
            Sources s = new Sources();
            try (Stream<Path> all = Files.walk(root)) {
                for (Path p : (Iterable<Path>) all.filter(f -> f.toString().endsWith(".java"))::iterator) {
                    s.files.put(root.relativize(p).toString().replace('\\', '/'), Files.readString(p));
                }
            }
            return s;
        }

        void add(String path, String text) {
            files.put(path, text);
        }

        static String roomOf(String path) {
            int slash = path.indexOf('/');
            return slash < 0 ? path.substring(0, path.length() - ".java".length()) : path.substring(0, slash);
        }

        Set<String> rooms() {
            Set<String> rooms = new java.util.TreeSet<>();
            for (String path : files.keySet()) {
                rooms.add(roomOf(path));
            }
            return rooms;
        }

        /** Every arrow between two rooms, once per line that names the other room. */
        List<Arrow> arrows() {
            Set<String> rooms = rooms();
            Set<String> rootFiles = new java.util.TreeSet<>();
            for (String path : files.keySet()) {
                if (path.indexOf('/') < 0) {
                    rootFiles.add(roomOf(path));
                }
            }
            List<Arrow> arrows = new ArrayList<>();
            for (Map.Entry<String, String> f : files.entrySet()) {
                String from = roomOf(f.getKey());
                boolean atRoot = f.getKey().indexOf('/') < 0;
                String[] code = codeOf(f.getValue()).split("\n", -1);
                String[] text = f.getValue().split("\n", -1);
                for (int i = 0; i < text.length; i++) {
                    Set<String> named = new java.util.TreeSet<>();
                    Matcher m = NAMED.matcher(code[i]);
                    while (m.find()) {
                        named.add(m.group(1));
                    }
                    Matcher link = LINK.matcher(text[i]);
                    while (link.find()) {
                        Matcher q = NAMED.matcher(link.group(1));
                        if (q.find()) {
                            named.add(q.group(1));
                        } else if (atRoot) {
                            named.add(link.group(1).split("[.#]")[0]);
                        }
                    }
                    if (atRoot) {
                        Matcher w = WORD.matcher(code[i]);
                        while (w.find()) {
                            if (rootFiles.contains(w.group())) {
                                named.add(w.group());
                            }
                        }
                    }
                    for (String to : named) {
                        if (rooms.contains(to) && !to.equals(from)) {
                            arrows.add(new Arrow(from, to, f.getKey(), i + 1, text[i]));
                        }
                    }
                }
            }
            return arrows;
        }

        /** The source with comments and string and char literals blanked (line breaks kept): what the code says. */
        static String codeOf(String src) {
            StringBuilder b = new StringBuilder(src.length());
            int i = 0;
            int n = src.length();
            while (i < n) {
                char c = src.charAt(i);
                if (src.startsWith("//", i)) {
                    while (i < n && src.charAt(i) != '\n') {
                        b.append(' ');
                        i++;
                    }
                } else if (src.startsWith("/*", i)) {
                    int end = src.indexOf("*/", i + 2);
                    end = end < 0 ? n : end + 2;
                    blank(src, i, end, b);
                    i = end;
                } else if (src.startsWith("\"\"\"", i)) {
                    int end = src.indexOf("\"\"\"", i + 3);
                    end = end < 0 ? n : end + 3;
                    blank(src, i, end, b);
                    i = end;
                } else if (c == '"' || c == '\'') {
                    int end = i + 1;
                    while (end < n && src.charAt(end) != c && src.charAt(end) != '\n') {
                        end += src.charAt(end) == '\\' ? 2 : 1;
                    }
                    end = Math.min(n, end + 1);
                    blank(src, i, end, b);
                    i = end;
                } else {
                    b.append(c);
                    i++;
                }
            }
            return b.toString();
        }

        private static void blank(String src, int from, int to, StringBuilder b) {
            for (int j = from; j < to; j++) {
                b.append(src.charAt(j) == '\n' ? '\n' : ' ');
            }
        }
    }

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
