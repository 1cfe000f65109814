package io.iqstream.server.run;

/** Validates run ids: 1–128 characters of {@code [A-Za-z0-9._~:-]}. Stateless; any thread. */
public final class RunIds {
    public static final int MAX_LENGTH = 128;

    private RunIds() {}

    public static boolean isValid(CharSequence id) {
        int n = id.length();
        if (n == 0 || n > MAX_LENGTH) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = id.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '~' || c == ':' || c == '-';
            if (!ok) {
                return false;
            }
        }
        return true;
    }
}
