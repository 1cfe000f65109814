package io.iqstream.server.run;

/** A subscriber waiting for a run that does not exist yet (await-run). Called on the owning worker loop. */
public interface RunWaiter {
    void runCreated(Run run);
}
