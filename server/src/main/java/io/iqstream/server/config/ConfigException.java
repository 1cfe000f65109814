package io.iqstream.server.config;

/** A flag or environment variable has a value the server cannot use; the message says which and why. */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
        super(message);
    }
}
