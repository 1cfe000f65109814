package io.iqstream.server;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The version and git commit this server was built from, read once from {@code build.properties} (filled in by
 * Maven's resource filtering). The server, the distribution ({@code bin/iqstream --version}) and the image all print
 * this one value. Immutable; any thread.
 */
public final class BuildInfo {
    /** The project version, e.g. {@code 0.1.0}; "unknown" when the resource was not filtered. */
    public static final String VERSION;
    /** The git commit, abbreviated; "unknown" when the build was not given one. */
    public static final String COMMIT;

    static {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream("build.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            p.clear();
        }
        VERSION = filled(p.getProperty("version"));
        COMMIT = filled(p.getProperty("commit"));
    }

    private BuildInfo() {}

    private static String filled(String value) {
        return value == null || value.isBlank() || value.contains("${") ? "unknown" : value.trim();
    }

    /** What {@code iqstream --version} prints: {@code iqstream 0.1.0 (commit 1917714abcde)}. */
    public static String describe() {
        return "iqstream " + VERSION + " (commit " + COMMIT + ")";
    }
}
