package io.iqstream.server.storage;

/**
 * When an acknowledged write is on the disk ({@code --fsync}). What each survives:
 * <ul>
 *   <li>{@link #BATCH} (the default): every write of one batch — what a writer's thread found queued when it woke,
 *       a few milliseconds' worth under load — is flushed with one {@code fdatasync} per file before any of them
 *       is acknowledged. Survives a crash of the process and of the machine.</li>
 *   <li>{@link #ALWAYS}: each write is flushed on its own before the next. Survives the same; costs one flush per
 *       write (for comparison).</li>
 *   <li>{@link #NEVER}: written to the kernel, never flushed. Survives a crash of the process (the page cache
 *       keeps it), not a crash or power loss of the machine.</li>
 * </ul>
 */
public enum FsyncPolicy {
    BATCH,
    ALWAYS,
    NEVER;

    /** The policy named by {@code --fsync} ({@code batch}, {@code always}, {@code never}), or null. */
    public static FsyncPolicy parse(String text) {
        for (FsyncPolicy p : values()) {
            if (p.name().equalsIgnoreCase(text)) {
                return p;
            }
        }
        return null;
    }
}
