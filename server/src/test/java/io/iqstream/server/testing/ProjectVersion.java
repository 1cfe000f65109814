package io.iqstream.server.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The project's one version, read from the root pom.xml (the parent every module and the clients follow). */
public final class ProjectVersion {
    /** The parent's own {@code <version>}, the first one after its {@code <artifactId>iqstream-parent}. */
    private static final Pattern POM_VERSION =
            Pattern.compile("<artifactId>iqstream-parent</artifactId>\\s*<version>([^<]+)</version>");

    private ProjectVersion() {}

    /** The root pom.xml's version, e.g. {@code 0.1.0}; tests run in server/, so the root is "..". */
    public static String ofPom() {
        try {
            Matcher m = POM_VERSION.matcher(Files.readString(Path.of("..", "pom.xml")));
            if (!m.find()) {
                throw new IllegalStateException("no <version> after iqstream-parent in pom.xml");
            }
            return m.group(1).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
