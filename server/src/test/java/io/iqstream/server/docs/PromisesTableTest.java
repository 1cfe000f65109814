package io.iqstream.server.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/PROMISES.md names, for each promise, the test that checks it: every server test it names as
 * {@code package/Class#method} (or {@code #method} after one) exists as that method in that class, and every Python
 * test it names as {@code file.py::test_...} exists in that file, so a renamed or deleted test cannot leave a
 * promise pointing at nothing.
 */
class PromisesTableTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    /** A test named in a table: anything in backticks with a {@code #} or a {@code ::} in it. */
    private static final Pattern NAMED = Pattern.compile("`([^`]*(?:#|::)[^`]*)`");
    private static final Pattern JAVA = Pattern.compile("(?:([a-z]+(?:/[a-z]+)*)/)?([A-Z][A-Za-z0-9]+)?#([a-zA-Z0-9]+)");
    private static final Pattern PYTHON = Pattern.compile("([a-z_/]+\\.py)?::(test_[a-z0-9_]+)");

    @Test
    void everyTestThePromisesTableNamesExists() throws Exception {
        List<String> missing = new ArrayList<>();
        int checked = 0;
        for (String line : Files.readAllLines(ROOT.resolve("docs/PROMISES.md"))) {
            String pkg = null;
            String cls = null;
            String file = null;
            Matcher named = NAMED.matcher(line);
            while (named.find()) {
                String name = named.group(1);
                Matcher j = JAVA.matcher(name);
                Matcher p = PYTHON.matcher(name);
                Path source;
                String declaration;
                if (j.matches()) {
                    if (j.group(2) != null) {
                        pkg = j.group(1);
                        cls = j.group(2);
                    }
                    source = ROOT.resolve("server/src/test/java/io/iqstream/server/"
                            + (pkg == null ? "" : pkg + "/") + cls + ".java");
                    declaration = " " + j.group(3) + "(";
                } else if (p.matches()) {
                    if (p.group(1) != null) {
                        file = p.group(1);
                    }
                    source = ROOT.resolve("clients/python/tests/" + file);
                    declaration = "def " + p.group(2) + "(";
                } else {
                    missing.add(name + " (not a test's name)");
                    continue;
                }
                checked++;
                if (cls == null && file == null || !Files.exists(source)
                        || !Files.readString(source).contains(declaration)) {
                    missing.add(name);
                }
            }
        }
        assertTrue(checked > 30, "the table names its tests: " + checked);
        assertEquals(List.of(), missing, "tests docs/PROMISES.md names that do not exist");
    }
}
