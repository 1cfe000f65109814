package io.iqstream.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.iqstream.server.testing.ProjectVersion;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class BuildInfoTest {
    @Test
    void versionComesFromTheBuild() {
        // an unfiltered build.properties would read "${project.version}", which BuildInfo turns into "unknown"
        assertTrue(BuildInfo.VERSION.matches("\\d+\\.\\d+\\.\\d+([-.][0-9A-Za-z.-]+)?"), BuildInfo.VERSION);
        assertTrue(BuildInfo.describe().startsWith("iqstream " + BuildInfo.VERSION + " (commit "),
                BuildInfo.describe());
    }

    @Test
    void dashDashVersionPrintsThePomsVersion() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            Main.main(new String[] {"--version"});
        } finally {
            System.setOut(stdout);
        }
        String printed = out.toString(StandardCharsets.UTF_8);
        assertTrue(printed.startsWith("iqstream " + ProjectVersion.ofPom() + " (commit "), printed);
    }

    @Test
    void everyClientPackageCarriesThePomsVersion() throws Exception {
        String pom = ProjectVersion.ofPom();
        assertEquals(pom, BuildInfo.VERSION);
        Pattern npm = Pattern.compile("^  \"version\": \"([^\"]+)\"", Pattern.MULTILINE);
        for (String pkg : List.of("js", "resumable-stream", "copilotkit", "tanstack-ai")) {
            Path manifest = Path.of("..", "clients", pkg, "package.json");
            assertEquals(pom, first(npm, manifest), manifest.toString());
        }
        assertEquals(pom, first(Pattern.compile("^version = \"([^\"]+)\"", Pattern.MULTILINE),
                Path.of("..", "clients", "python", "pyproject.toml")));
        assertEquals(pom, first(Pattern.compile("^__version__ = \"([^\"]+)\"", Pattern.MULTILINE),
                Path.of("..", "clients", "python", "iqstream", "__init__.py")));
        // the Java client is a module of the build: its pom names the parent's version
        assertTrue(Files.readString(Path.of("..", "clients", "java", "pom.xml")).contains("<version>" + pom + "</version>"));
    }

    private static String first(Pattern p, Path file) throws Exception {
        Matcher m = p.matcher(Files.readString(file));
        assertTrue(m.find(), "no version in " + file);
        return m.group(1);
    }
}
