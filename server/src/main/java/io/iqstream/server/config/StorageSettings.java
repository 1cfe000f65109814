package io.iqstream.server.config;

import java.nio.file.Path;

/**
 * Where and how durable streams are kept. Immutable, any thread.
 *
 * @param onDisk {@code --durability disk} (the default): each stream in a file of the data directory, every
 *     acknowledged change durable before its answer, recovered at start; {@code memory}: in memory only, lost when
 *     the process ends
 * @param dataDir {@code --data-dir}: the node's data directory (its own; locked while a server uses it)
 * @param fsync {@code --fsync}: {@code batch}, {@code always} or {@code never} (see
 *     {@code io.iqstream.server.storage.FsyncPolicy})
 */
public record StorageSettings(boolean onDisk, Path dataDir, String fsync) {
    /** Durable streams in memory only (tests of other things; {@code --durability memory}). */
    public static final StorageSettings MEMORY = new StorageSettings(false, Path.of("iqstream-data"), "batch");
}
