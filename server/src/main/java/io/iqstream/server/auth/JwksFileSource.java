package io.iqstream.server.auth;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A JWKS file ({@code --jwks /path}) polled for changes every {@code --jwks-refresh-min}: it is read
 * each time (a JWK Set is a few KiB; at most {@link JwksEndpoint#MAX_BODY_BYTES}) and its SHA-256
 * is its validator, so an unchanged file is "not modified" and is not parsed again, while an edited
 * or replaced one (a Kubernetes Secret's symlink swap included) is, however quickly it changed.
 *
 * <p>Confined to the refresh thread of {@link JwksRefresher}.
 */
final class JwksFileSource implements JwksLocation {
    private final Path file;
    private final long pollMs;

    JwksFileSource(Path file, long pollMs) {
        this.file = file;
        this.pollMs = pollMs;
    }

    @Override
    public JwksFetch fetch(String etag) {
        byte[] bytes;
        try {
            if (Files.size(file) > JwksEndpoint.MAX_BODY_BYTES) {
                return JwksFetch.failed(JwksFailure.TOO_LARGE, file + " is larger than "
                        + JwksEndpoint.MAX_BODY_BYTES + " bytes");
            }
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            return JwksFetch.failed(JwksFailure.IO, "cannot read " + file + ": " + e);
        }
        String validator = sha256(bytes);
        if (validator.equals(etag)) {
            return JwksFetch.notModified(etag, pollMs);
        }
        return JwksFetch.fetched(new String(bytes, StandardCharsets.UTF_8), validator, pollMs);
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    @Override
    public String describe() {
        return file.toString();
    }

    @Override
    public void close() {
        // nothing held
    }
}
