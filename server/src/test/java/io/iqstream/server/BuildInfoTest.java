package io.iqstream.server;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BuildInfoTest {
    @Test
    void versionComesFromTheBuild() {
        // an unfiltered build.properties would read "${project.version}", which BuildInfo turns into "unknown"
        assertTrue(BuildInfo.VERSION.matches("\\d+\\.\\d+\\.\\d+([-.][0-9A-Za-z.-]+)?"), BuildInfo.VERSION);
        assertTrue(BuildInfo.describe().startsWith("iqstream " + BuildInfo.VERSION + " (commit "),
                BuildInfo.describe());
    }
}
