package io.iqstream.server.metrics;

/**
 * What {@link Metrics#render} shows of the memory budget: its figures, read at render time. The budget
 * ({@code admission.MemoryBudget}) implements it, so metrics name nothing above them.
 */
public interface BudgetGauges {
    /** The event-log budget, bytes. */
    long budgetBytes();

    /** Bytes charged now. */
    long committedBytes();

    /** Bytes of shared unpacked copies charged now. */
    long copyBytes();

    /** The run size admission expects, bytes. */
    long expectedRunBytes();

    /** Heap bytes charged to the heap share now. */
    long heapBytes();

    /** The heap share, bytes. */
    long heapShareBytes();
}
