package io.iqstream.server.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.opentest4j.TestAbortedException;

/**
 * A skipped test is a test that never ran: under {@code CI=true} it fails unless it names the machine fact it needs
 * and {@code IQSTREAM_TEST_SKIPPABLE} declares that fact ({@link SkipCheckExtension}); and every skip in this suite
 * goes through {@link MachineFact}, never a bare assumption or {@code @Disabled}, which would pass CI unseen.
 */
class SkippedTestsTest {
    private static TestAbortedException skip(String fact) {
        try {
            MachineFact.assume(fact, false, "not on this machine");
        } catch (TestAbortedException e) {
            return e;
        }
        throw new AssertionError("MachineFact.assume did not skip");
    }

    @Test
    void underCiASkipFailsUnlessItsFactIsDeclared() {
        TestAbortedException epoll = skip("epoll");
        SkipCheckExtension ci = new SkipCheckExtension(Map.of("CI", "true"));
        Throwable judged = ci.judge(epoll);
        assertInstanceOf(AssertionError.class, judged, "an undeclared fact under CI fails");
        assertTrue(judged.getMessage().contains("IQSTREAM_TEST_SKIPPABLE does not declare 'epoll'"),
                judged.getMessage());
        assertSame(epoll, new SkipCheckExtension(Map.of("CI", "true", "IQSTREAM_TEST_SKIPPABLE", "dist, epoll"))
                .judge(epoll), "a declared fact stays a skip");
        assertInstanceOf(AssertionError.class, new SkipCheckExtension(Map.of("CI", "true",
                "IQSTREAM_TEST_SKIPPABLE", "epoll2,io_uring")).judge(epoll), "a fact is matched whole");
        TestAbortedException bare = new TestAbortedException("Assumption failed: no reason given");
        Throwable unnamed = new SkipCheckExtension(Map.of("CI", "true", "IQSTREAM_TEST_SKIPPABLE", "epoll"))
                .judge(bare);
        assertInstanceOf(AssertionError.class, unnamed, "a skip naming no fact fails under CI, whatever is declared");
        assertTrue(unnamed.getMessage().contains("must name the machine fact"), unnamed.getMessage());
        assertSame(epoll, new SkipCheckExtension(Map.of()).judge(epoll), "outside CI a skip is a skip");
        assertSame(bare, new SkipCheckExtension(Map.of("CI", "false")).judge(bare), "outside CI a skip is a skip");
        AssertionError failure = new AssertionError("a failure");
        assertSame(failure, ci.judge(failure), "a failure is left as it is");
    }

    @Test
    void theExtensionFailsAnAbortThrownThroughIt() {
        SkipCheckExtension ci = new SkipCheckExtension(Map.of("CI", "true"));
        AssertionError thrown = assertThrows(AssertionError.class,
                () -> ci.handleTestExecutionException(null, skip("io_uring")));
        assertEquals(TestAbortedException.class, thrown.getCause().getClass(), "the skip is kept as the cause");
        assertThrows(AssertionError.class, () -> ci.handleBeforeAllMethodExecutionException(null, skip("x")));
        assertThrows(AssertionError.class, () -> ci.handleBeforeEachMethodExecutionException(null, skip("x")));
    }

    /** Ways to skip that name no machine fact; each would pass the suite under CI. */
    private static final Pattern BARE_SKIP = Pattern.compile(
            "@Disabled|@Enabled(On|If)|@DisabledOn|@DisabledIf|Assumptions\\.|assumeTrue\\(|assumeFalse\\(|assumingThat\\(");

    @Test
    void everySkipInThisSuiteNamesItsMachineFact() throws IOException {
        List<String> bare = new ArrayList<>();
        Path root = Path.of("src/test/java");
        assertTrue(Files.isDirectory(root), "run from the server module: " + root.toAbsolutePath());
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                if (f.endsWith("SkippedTestsTest.java")) {
                    continue;
                }
                List<String> lines = Files.readAllLines(f);
                for (int i = 0; i < lines.size(); i++) {
                    if (BARE_SKIP.matcher(lines.get(i)).find()) {
                        bare.add(root.relativize(f) + ":" + (i + 1) + ": " + lines.get(i).trim());
                    }
                }
            }
        }
        assertEquals(List.of(), bare, "skip through MachineFact.assume, naming the fact");
    }
}
