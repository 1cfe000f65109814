package io.iqstream.server.ingest;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Fuzzes the application/json splitter: an event is taken iff the body holds it whole and valid (compared with
 * {@link SplitterModel}'s reference), in any chunking the fuzzer chooses; no exception escapes; bytes held stay
 * under the cap; no buffer or budget charge leaks. Regression inputs: {@code JsonBodySplitterFuzzTestInputs/}.
 */
class JsonBodySplitterFuzzTest {
    @FuzzTest(maxDuration = "30s")
    void matchesTheReferenceInAnyChunking(FuzzedDataProvider data) {
        SplitterModel.check("application/json", data);
    }
}
