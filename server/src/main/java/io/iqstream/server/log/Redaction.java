package io.iqstream.server.log;

import java.util.regex.Pattern;

/**
 * What a log line may say of a request: its credentials replaced by {@code …}. A token in a query
 * ({@code access_token=}, {@code authorization=}, {@code token=}), a {@code Bearer} value, and anything shaped like a
 * JWT ({@code eyJ….….…}) wherever it appears — an exception's message quotes whole URIs and headers. Every log line
 * that can carry client input goes through here. Stateless; any thread.
 */
public final class Redaction {
    private static final Pattern QUERY = Pattern.compile(
            "(?i)((?:access_token|authorization|token|iqstream_token)=)[^&\\s\"'#]*");
    private static final Pattern BEARER = Pattern.compile("(?i)(bearer\\s+)[A-Za-z0-9._~+/=-]+");
    private static final Pattern JWT = Pattern.compile("eyJ[A-Za-z0-9_-]*\\.[A-Za-z0-9_-]*\\.[A-Za-z0-9_-]*");

    private Redaction() {}

    /** {@code text} with every credential in it replaced. */
    public static String of(String text) {
        if (text == null) {
            return null;
        }
        String t = QUERY.matcher(text).replaceAll("$1…");
        t = BEARER.matcher(t).replaceAll("$1…");
        return JWT.matcher(t).replaceAll("…");
    }

    /**
     * A stand-in for {@code cause} to log: its class and redacted message, with its stack trace (and its causes',
     * redacted the same way), so a bug is still found and no token is written.
     */
    public static Throwable of(Throwable cause) {
        Throwable copy = new RedactedThrowable(of(cause.toString()),
                cause.getCause() == null || cause.getCause() == cause ? null : of(cause.getCause()));
        copy.setStackTrace(cause.getStackTrace());
        return copy;
    }

    /** A throwable that is only a redacted description of another. */
    private static final class RedactedThrowable extends Exception {
        private static final long serialVersionUID = 1L;

        RedactedThrowable(String description, Throwable cause) {
            super(description, cause, false, true);
        }

        @Override
        public String toString() {
            return getMessage();
        }
    }
}
