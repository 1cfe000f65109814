package io.iqstream.server;

import io.iqstream.server.config.Flag;
import io.iqstream.server.config.ServerConfig;
import java.nio.channels.UnresolvedAddressException;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What stopped the server at start, as the one line {@code iqstream serve} prints before it exits: the value, the
 * flag that set it and the flag's environment twin, and what to do. No stack trace: a newcomer whose port is taken
 * needs the port and the flag, not Netty's frames.
 *
 * <p>Thrown by {@code IqStreamServer.start} when a listener cannot bind; {@link #forConfigProblem} words the
 * {@link IllegalArgumentException}s the key sources throw at start. Immutable; any thread.
 */
public final class StartupFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private static final Pattern NAMES_A_FLAG = Pattern.compile("(^|\\s)--[a-z]");

    private StartupFailure(String line, Throwable cause) {
        super(line, cause);
    }

    /** The data directory ({@code --data-dir}) could not be opened, locked or recovered. */
    public static StartupFailure dataDir(Throwable cause, java.nio.file.Path dir) {
        return new StartupFailure("cannot use the data directory " + dir.toAbsolutePath() + " (" + Flag.DATA_DIR.flag()
                + ", or " + Flag.DURABILITY.flag() + " memory to keep durable streams in memory only): "
                + oneLine(cause), cause);
    }

    /** A listener ({@code --port} or {@code --admin-port}) could not bind {@code host:port}. */
    public static StartupFailure listen(Throwable cause, String host, int port, Flag portFlag) {
        String where = host + ":" + port;
        String portHint = portFlag.flag() + " (or " + portFlag.env() + ")";
        String hostHint = Flag.HOST.flag() + " (or " + Flag.HOST.env() + ")";
        String text = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
        String line;
        if (cause instanceof UnresolvedAddressException || text.contains("unresolved")) {
            line = "cannot listen on " + where + ": the host name '" + host + "' does not resolve to an address;"
                    + " set " + hostHint + " to an address of this machine, e.g. 0.0.0.0 or 127.0.0.1";
        } else if (text.contains("address already in use")) {
            line = "cannot listen on " + where + ": the port is already in use by another process;"
                    + " stop it or choose another port with " + portHint;
        } else if (text.contains("cannot assign requested address")) {
            line = "cannot listen on " + where + ": " + host + " is not an address of this machine;"
                    + " set " + hostHint + " to one of its addresses, or 0.0.0.0 for all";
        } else if (text.contains("permission denied") || text.contains("access denied")) {
            line = "cannot listen on " + where + ": no permission for port " + port
                    + (port < 1024 ? " (ports below 1024 need root or CAP_NET_BIND_SERVICE)" : "")
                    + "; choose a port of 1024 or more with " + portHint;
        } else {
            line = "cannot listen on " + where + " (" + portHint + ", " + hostHint + "): " + oneLine(cause);
        }
        return new StartupFailure(line, cause);
    }

    /**
     * The line for a key source or setting refused at start ({@code --jwt-public-key}, {@code --jwks}...): its own
     * message on one line, with the flag and its twin when the message does not name a flag already.
     */
    public static String forConfigProblem(IllegalArgumentException e, ServerConfig config) {
        String message = oneLine(e);
        if (NAMES_A_FLAG.matcher(message).find()) {
            return message;
        }
        Flag flag = null;
        String lower = message.toLowerCase(Locale.ROOT);
        if (config.jwks() != null && lower.contains("jwk")) {
            flag = Flag.JWKS;
        } else if (config.jwtPublicKey() != null && lower.contains("key")) {
            flag = Flag.JWT_PUBLIC_KEY;
        } else if (config.jwtSecret() != null && lower.contains("secret")) {
            flag = Flag.JWT_SECRET;
        }
        return flag == null ? message : message + " (" + flag.flag() + ", or " + flag.env() + ")";
    }

    /** An exception's message on one line (or its class name when it has none). */
    static String oneLine(Throwable t) {
        String m = t.getMessage();
        if (m == null || m.isBlank()) {
            return t.getClass().getSimpleName();
        }
        return m.replaceAll("\\s*\\R\\s*", " ").trim();
    }
}
