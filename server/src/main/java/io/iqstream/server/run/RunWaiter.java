package io.iqstream.server.run;

/** A subscriber waiting for a run that does not exist yet (await-run). Called on the owning worker loop. */
public interface RunWaiter {
    void runCreated(Run run);

    /** The server began draining: no run will be created, so the wait ends now (503 {@code draining}). */
    void serverDraining();
}
