package io.iqstream.server.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.ByteArrayOutputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journal of {@code --fsync batch} on a real directory: what the page cache may lose at a crash of the machine
 * (a file's tail, a whole new file, a removal) is made again from the journal at start, and a torn last entry is
 * cut, not applied. The losses are made by hand here: a crash of the machine cannot be had in a test.
 */
class JournalTest {
    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void replayPutsBackEveryJournaledWriteAndRemoval(@TempDir Path root) throws Exception {
        Path a = root.resolve("streams").resolve("a.log");
        Path b = root.resolve("streams").resolve("b.log");
        Files.createDirectories(a.getParent());
        ByteArrayOutputStream aWhole = new ByteArrayOutputStream();
        try (Journal j = Journal.open(root, "w0")) {
            long at = 0;
            for (int i = 0; i < 20; i++) {
                byte[] frame = RecordFile.frame(bytes("a-" + i));
                j.written(a, at, frame);
                at += frame.length;
                aWhole.write(frame);
            }
            j.written(b, 0, RecordFile.frame(bytes("b-old")));
            j.removed(b);
            j.written(b, 0, RecordFile.frame(bytes("b-new")));
            j.force();
        }
        // what a crash of the machine may leave: a's tail lost, b as it was before its removal
        Files.write(a, java.util.Arrays.copyOf(aWhole.toByteArray(), aWhole.size() / 3));
        Files.write(b, RecordFile.frame(bytes("b-old")));

        assertEquals(23, Journal.replay(root));
        assertArrayEquals(aWhole.toByteArray(), Files.readAllBytes(a), "a whole again, in place");
        assertArrayEquals(RecordFile.frame(bytes("b-new")), Files.readAllBytes(b), "b as after its re-creation");
        assertEquals(0, Files.size(root.resolve("journal").resolve("w0.log")), "the journal emptied");
        assertEquals(0, Journal.replay(root), "a second start replays nothing");
    }

    @Test
    void aTornLastEntryIsCutAndTheRestReplayed(@TempDir Path root) throws Exception {
        Path a = root.resolve("streams").resolve("a.log");
        Files.createDirectories(a.getParent());
        byte[] first = RecordFile.frame(bytes("first"));
        try (Journal j = Journal.open(root, "w0")) {
            j.written(a, 0, first);
            j.written(a, first.length, RecordFile.frame(bytes("second, never acknowledged")));
            j.force();
        }
        Path journal = root.resolve("journal").resolve("w0.log");
        try (FileChannel ch = FileChannel.open(journal, StandardOpenOption.WRITE)) {
            ch.truncate(ch.size() - 3); // the last batch's flush never finished
        }
        assertEquals(1, Journal.replay(root));
        assertArrayEquals(first, Files.readAllBytes(a));
    }

    @Test
    void aRemovedFileIsNotWrittenAgain(@TempDir Path root) throws Exception {
        Path a = root.resolve("streams").resolve("a.log");
        Files.createDirectories(a.getParent());
        try (Journal j = Journal.open(root, "w0")) {
            j.written(a, 0, RecordFile.frame(bytes("gone")));
            j.removed(a);
            j.force();
        }
        Files.write(a, bytes("left over by the crash"));
        assertEquals(2, Journal.replay(root));
        assertFalse(Files.exists(a), "removed, and its bytes not written again first");
    }
}
