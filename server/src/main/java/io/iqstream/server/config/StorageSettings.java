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
 *     {@code storage.FsyncPolicy})
 * @param diskBudgetBytes {@code --disk-budget}: what the streams' files may take; 0: from the file system at start
 *     (what they take then, plus its free space less a margin)
 * @param coldAfterMs {@code --cold-after}: on disk, a stream idle this long keeps its bytes in its file only, not in
 *     memory; 0: never
 */
public record StorageSettings(boolean onDisk, Path dataDir, String fsync, long diskBudgetBytes, long coldAfterMs) {
}
