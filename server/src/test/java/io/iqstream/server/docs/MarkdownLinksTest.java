package io.iqstream.server.docs;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The project's Markdown stands on its own: every relative link in every {@code .md} file of the repository (not
 * dependencies or build output) points to a file that exists and, with {@code #anchor}, to a heading of that file;
 * and every {@code NAME.md} a page mentions in plain text exists next to it, in docs/, at the root, or (a generated
 * report's name) as some Markdown file of the repository.
 */
class MarkdownLinksTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    /** {@code [text](target)} and {@code ![alt](target)}; the target up to a space or the closing parenthesis. */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    /** A page named in plain text: WORKLOAD.md, docs/API.md (upper-case names, as the docs are named). */
    private static final Pattern MENTION = Pattern.compile("(?<![\\w/.-])((?:[\\w.-]+/)*[A-Z][A-Z0-9_-]*\\.md)\\b");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");

    @Test
    void everyRelativeLinkAndMentionedPageResolves() throws IOException {
        List<Path> pages = markdownFiles();
        assertTrue(pages.size() >= 10, "Markdown files found: " + pages);
        List<String> broken = new ArrayList<>();
        Set<String> names = new HashSet<>();
        pages.forEach(p -> names.add(p.getFileName().toString()));
        for (Path page : pages) {
            String text = withoutCodeBlocks(Files.readString(page));
            Matcher m = LINK.matcher(text);
            while (m.find()) {
                String problem = checkLink(page, m.group(1));
                if (problem != null) {
                    broken.add(ROOT.relativize(page) + ": (" + m.group(1) + ") " + problem);
                }
            }
            Matcher mention = MENTION.matcher(text);
            while (mention.find()) {
                String name = mention.group(1);
                if (!exists(page.getParent().resolve(name)) && !exists(ROOT.resolve("docs").resolve(name))
                        && !exists(ROOT.resolve(name)) && !names.contains(Path.of(name).getFileName().toString())) {
                    broken.add(ROOT.relativize(page) + ": mentions " + name + ", which is not in the repository");
                }
            }
        }
        assertTrue(broken.isEmpty(), "broken links:\n" + String.join("\n", broken));
    }

    @Test
    void theCheckFindsABrokenLinkAndAMissingPage() {
        Path api = ROOT.resolve("docs/API.md");
        assertTrue(checkLink(api, "NOPE.md") != null);
        assertTrue(checkLink(api, "OPERATIONS.md#no-such-heading") != null);
        assertTrue(checkLink(api, "OPERATIONS.md") == null);
        assertTrue(checkLink(api, "#flags") == null);
        assertTrue(checkLink(api, "https://example.com/x.md") == null);
        Matcher mention = MENTION.matcher("see WORKLOAD.md for the workload");
        assertTrue(mention.find() && mention.group(1).equals("WORKLOAD.md"));
    }

    /** Null when {@code target} (as written in {@code page}) resolves, else what is wrong. */
    static String checkLink(Path page, String target) {
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*") || target.startsWith("//")) {
            return null; // https:, mailto:, ... : not a file of the repository
        }
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = file.isEmpty() ? page
                : (file.startsWith("/") ? ROOT.resolve(file.substring(1)) : page.getParent().resolve(file)).normalize();
        if (!exists(resolved)) {
            return "no such file " + ROOT.relativize(resolved);
        }
        if (anchor != null && !anchor.isEmpty() && resolved.toString().endsWith(".md")) {
            try {
                if (!anchors(Files.readString(resolved)).contains(anchor)) {
                    return "no heading #" + anchor + " in " + ROOT.relativize(resolved);
                }
            } catch (IOException e) {
                return "cannot read " + resolved + ": " + e.getMessage();
            }
        }
        return null;
    }

    /** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered -1, -2... */
    static Set<String> anchors(String markdown) {
        Set<String> anchors = new HashSet<>();
        for (String line : withoutCodeBlocks(markdown).split("\n")) {
            Matcher h = HEADING.matcher(line);
            if (!h.matches()) {
                continue;
            }
            String slug = h.group(1).toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}\\s_-]", "")
                    .replace(' ', '-');
            String unique = slug;
            for (int n = 1; anchors.contains(unique); n++) {
                unique = slug + "-" + n;
            }
            anchors.add(unique);
        }
        for (Matcher a = Pattern.compile("<a\\s+(?:name|id)=\"([^\"]+)\"").matcher(markdown); a.find(); ) {
            anchors.add(a.group(1));
        }
        return anchors;
    }

    private static String withoutCodeBlocks(String markdown) {
        StringBuilder out = new StringBuilder(markdown.length());
        boolean inCode = false;
        for (String line : markdown.split("\n", -1)) {
            if (line.trim().startsWith("```")) {
                inCode = !inCode;
                out.append('\n');
                continue;
            }
            out.append(inCode ? "" : Pattern.compile("`[^`]*`").matcher(line).replaceAll(m -> keepPageNames(m.group())))
                    .append('\n');
        }
        return out.toString();
    }

    /** Inline code keeps page names (`WORKLOAD.md` is a mention) but loses link syntax. */
    private static String keepPageNames(String code) {
        Matcher m = MENTION.matcher(code);
        StringBuilder names = new StringBuilder();
        while (m.find()) {
            names.append(' ').append(m.group(1));
        }
        return Matcher.quoteReplacement(names.toString());
    }

    private static boolean exists(Path p) {
        return Files.exists(p);
    }

    private static List<Path> markdownFiles() throws IOException {
        try (Stream<Path> files = Files.walk(ROOT)) {
            return files.filter(p -> p.toString().endsWith(".md") && Files.isRegularFile(p))
                    .filter(p -> {
                        String rel = ROOT.relativize(p).toString();
                        return !rel.contains("node_modules") && !rel.startsWith(".") && !rel.contains("/.")
                                && !rel.contains("target/") && !rel.startsWith("bench/results")
                                // vendored as published (its own links point into its own repository)
                                && !rel.startsWith("third_party/");
                    })
                    .sorted().toList();
        }
    }
}
